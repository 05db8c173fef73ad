"""A transformers backend: ``PreTrainedTokenizerFast`` and ``AutoTokenizer`` encoding through
subwords' ``tokenizer.json`` engine.

.. code-block:: python

    import subwords.compat.transformers as backend

    backend.install()             # every fast tokenizer, made before or after, encodes through subwords
    tok = AutoTokenizer.from_pretrained("path/to/model")
    tok(["a text", "another"], padding=True, truncation=True, return_offsets_mapping=True)
    backend.uninstall()           # transformers as it was

    with backend.installed():     # the same, for a block
        ...

transformers' fast tokenizers (``TokenizersBackend``, alias ``PreTrainedTokenizerFast``) keep a
``tokenizers.Tokenizer`` in ``self._tokenizer`` and call its ``encode_batch``, then read each
``Encoding``'s ``ids``, ``type_ids``, ``attention_mask``, ``special_tokens_mask``, ``offsets``
and ``overflowing``. :func:`install` puts a descriptor on that attribute: the instance still
stores the real ``tokenizers.Tokenizer``, and reading the attribute gives a :class:`Backend`
around it. ``Backend.encode_batch`` (and ``encode``, ``encode_batch_fast``) encodes with
subwords' engine, built from the tokenizer's own ``to_str()``, and applies in Python what
``tokenizers`` applies after the model: truncation (``longest_first``, ``only_first``,
``only_second``, either direction), the post-processor (``TemplateProcessing``,
``BertProcessing``, ``RobertaProcessing``, ``ByteLevel``, a ``Sequence`` of them), and padding
(to the longest, to a length, to a multiple, either side). Every other attribute and method is
the real tokenizer's, so reading and changing its state (``enable_truncation``, ``add_tokens``,
``post_processor = ...``) works as before; a change rebuilds the engine on the next call.

The real tokenizer answers, per call, where subwords does not: a tokenizer whose pipeline the
engine refuses (``Backend.subwords_refusal`` says why; ``WordLevel`` models, dropout, custom
components...), pre-tokenized input (``is_split_into_words=True``), truncation that ``tokenizers``
rejects (it raises its own error), and decoding (``decode``, ``decode_batch``). Of an
``Encoding`` the face fills ``ids``, ``type_ids``, ``attention_mask``, ``special_tokens_mask``,
``offsets``, ``sequence_ids`` and ``tokens`` itself; ``overflowing`` is ``[]`` when nothing was
cut, and the word-level views (``word_ids``, ``words``, ``char_to_token``, ``token_to_word``...)
and ``overflowing`` after a cut come from the real tokenizer, asked once per batch on first use.

Without :func:`install` transformers is untouched; :func:`uninstall` takes the descriptor away
and every tokenizer reads its real ``tokenizers.Tokenizer`` again.
"""

from __future__ import annotations

import contextlib
import copy
import functools
import json
import threading
from typing import Any, Iterator, Optional

from .._api import gc_paused
from ..errors import ModelFileError, SubwordsError

__all__ = ["install", "uninstall", "installed", "is_installed", "Backend", "Encoding"]

_lock = threading.Lock()
#: held while the real tokenizer's state is switched for a call it answers
_real_lock = threading.Lock()
#: (the class patched, its own ``_tokenizer`` and ``_encode_plus`` attributes before) while installed
_state: Optional[tuple[Any, Any, Any]] = None


def _backend_class() -> Any:
    try:
        from transformers.tokenization_utils_tokenizers import TokenizersBackend
    except ImportError:
        raise SubwordsError("subwords.compat.transformers needs transformers 5 (with tokenizers): "
                            "pip install 'subwords[transformers]' (no torch needed)") from None
    return TokenizersBackend


class _Slot:
    """The descriptor :func:`install` puts on ``TokenizersBackend._tokenizer``: the instance keeps
    the real ``tokenizers.Tokenizer`` in its ``__dict__``; reading gives its :class:`Backend`."""

    def __get__(self, obj: Any, owner: Any = None) -> Any:
        if obj is None:
            return None
        d = obj.__dict__
        raw = d.get("_tokenizer")
        if raw is None:
            return None
        face = d.get("_subwords_backend")
        if face is None or face._raw is not raw:
            face = Backend(raw)
            d["_subwords_backend"] = face
        return face

    def __set__(self, obj: Any, value: Any) -> None:
        if isinstance(value, Backend):
            value = value._raw
        obj.__dict__["_tokenizer"] = value
        obj.__dict__.pop("_subwords_backend", None)

    def __delete__(self, obj: Any) -> None:
        obj.__dict__.pop("_tokenizer", None)
        obj.__dict__.pop("_subwords_backend", None)


def install() -> None:
    """Make every transformers fast tokenizer (``PreTrainedTokenizerFast``, what ``AutoTokenizer``
    returns for a ``tokenizer.json``) encode through subwords. Tokenizers made before the call
    switch too. Calling it twice is harmless."""
    global _state
    cls = _backend_class()
    with _lock:
        if _state is not None:
            return
        plus = cls.__dict__.get("_encode_plus", None)
        _state = (cls, cls.__dict__.get("_tokenizer", None), plus)
        cls._tokenizer = _Slot()
        if plus is not None:
            cls._encode_plus = _paused(plus)


def uninstall() -> None:
    """Give transformers back its own encoding: every fast tokenizer reads its real
    ``tokenizers.Tokenizer`` again (also those made while installed). Harmless when not
    installed."""
    global _state
    with _lock:
        if _state is None:
            return
        cls, before, plus = _state
        cls._tokenizer = before
        if plus is not None:
            cls._encode_plus = plus
        _state = None


def _paused(encode_plus: Any) -> Any:
    """transformers' ``_encode_plus`` (what ``__call__``, ``encode`` and ``batch_encode_plus``
    come to) with no cyclic garbage collection inside: the lists it makes of every encoding hold
    only ints, tuples of ints and strs, yet each counts toward the collector's thresholds, and
    the collections they set off (which go over every result still held) were half of an
    installed call's CPU time on 5,120 English lines with offsets (0.395 -> 0.191 s)."""

    @functools.wraps(encode_plus)
    def _encode_plus(*args: Any, **kwargs: Any) -> Any:
        with gc_paused():
            return encode_plus(*args, **kwargs)

    return _encode_plus


def is_installed() -> bool:
    return _state is not None


@contextlib.contextmanager
def installed() -> Iterator[None]:
    """:func:`install` for a ``with`` block; on leaving it, :func:`uninstall` unless it was
    installed before the block."""
    was = is_installed()
    install()
    try:
        yield
    finally:
        if not was:
            uninstall()


# -- the post-processor ---------------------------------------------------------------------------

class _Refused(Exception):
    """A part of the tokenizer this face does not serve (the real tokenizer does)."""


_Dict = dict[str, Any]
#: one item of a template: ("A"|"B", type_id) for a sequence, (ids, tokens, type_id) for specials
_Item = tuple[Any, ...]


def _template_items(items: list[Any], specials: dict[str, Any]) -> list[_Item]:
    out: list[_Item] = []
    for it in items:
        if "Sequence" in it:
            out.append((it["Sequence"]["id"], int(it["Sequence"]["type_id"])))
        elif "SpecialToken" in it:
            name = it["SpecialToken"]["id"]
            sp = specials.get(name)
            if sp is None:
                raise _Refused(f"TemplateProcessing names the special token {name!r} it does not define")
            out.append((list(sp["ids"]), list(sp["tokens"]), int(it["SpecialToken"]["type_id"])))
        else:
            raise _Refused(f"TemplateProcessing item {it!r}")
    return out


def _post(obj: Optional[_Dict]) -> Optional[tuple[list[_Item], list[_Item]]]:
    """(single, pair) templates of the post-processor, None when it adds nothing."""
    if obj is None:
        return None
    kind = obj.get("type")
    if kind == "ByteLevel":
        return None
    if kind == "BertProcessing":
        (sep, sep_id), (cls, cls_id) = obj["sep"], obj["cls"]
        c, s = ([cls_id], [cls], 0), ([sep_id], [sep], 0)
        return [c, ("A", 0), s], [c, ("A", 0), s, ("B", 1), (s[0], s[1], 1)]
    if kind == "RobertaProcessing":
        (sep, sep_id), (cls, cls_id) = obj["sep"], obj["cls"]
        c, s = ([cls_id], [cls], 0), ([sep_id], [sep], 0)
        return [c, ("A", 0), s], [c, ("A", 0), s, s, ("B", 0), s]
    if kind == "TemplateProcessing":
        specials = obj.get("special_tokens") or {}
        return _template_items(obj["single"], specials), _template_items(obj["pair"], specials)
    if kind == "Sequence":
        found = None
        for p in obj.get("processors") or ():
            t = _post(p)
            if t is not None:
                if found is not None:
                    raise _Refused("a Sequence post-processor with two processors that add tokens")
                found = t
        return found
    raise _Refused(f"post_processor {kind}")


def _added_count(template: list[_Item]) -> int:
    return sum(len(it[0]) for it in template if len(it) == 3)


def _kept(na: int, nb: Optional[int], trunc: dict[str, Any]) -> tuple[int, Optional[int]]:
    """How many tokens of each sequence tokenizers' truncation keeps (its ``truncate_encodings``);
    ``trunc['max_length']`` is already less the tokens the template adds."""
    limit = trunc["max_length"]
    if limit == 0:
        return 0, (None if nb is None else 0)
    total = na + (nb or 0)
    if total <= limit:
        return na, nb
    remove = total - limit
    strategy = trunc["strategy"]
    if strategy == "longest_first":
        if nb is None:
            return total - remove, None
        n1, n2, swap = na, nb, na > nb
        if swap:
            n1, n2 = n2, n1
        n2 = n1 if n1 > limit else max(n1, limit - n1)
        if n1 + n2 > limit:
            n1 = limit // 2
            n2 = n1 + limit % 2
        if swap:
            n1, n2 = n2, n1
        return min(na, n1), min(nb, n2)
    if strategy == "only_first":
        if na > remove:
            return na - remove, nb
        raise _Refused("only_first truncation of a sequence too short")
    if strategy == "only_second":
        if nb is not None and nb > remove:
            return na, nb - remove
        raise _Refused("only_second truncation without a second sequence long enough")
    raise _Refused(f"truncation strategy {strategy!r}")


def _cut(xs: list[Any], k: int, left: bool) -> list[Any]:
    if k >= len(xs):
        return xs
    return xs[len(xs) - k:] if left else xs[:k]


# -- the engine -------------------------------------------------------------------------------

class _Engine:
    """subwords' pipeline for one state of a real tokenizer, with its post-processor."""

    def __init__(self, raw: Any) -> None:
        from ..formats.huggingface.read import HuggingFace

        doc = json.loads(raw.to_str())
        # truncation and padding are applied here, from the real tokenizer's state at each call
        doc["truncation"] = None
        doc["padding"] = None
        try:
            self.hf = HuggingFace(doc, "tokenizer.json")
        except ModelFileError as e:
            raise _Refused(str(e)) from None
        self.templates = _post(doc.get("post_processor"))
        self.added = (0, 0) if self.templates is None else tuple(_added_count(t) for t in self.templates)
        self.all_specials = sorted(set(self.hf._specials.values()))
        self.pipe = self.hf._pipe
        self.enc = self.hf._enc
        self.trim = self.hf._trim

    def tokens(self, text: str, allowed: list[int]) -> list[str]:
        ids, surfaces = self.pipe.encode_surfaces(text, allowed)
        model = self.hf._model_token
        out = [model[i] if i in model else self.hf.id_to_piece(i) for i in ids]
        for k, s in surfaces:
            out[k] = s
        return out


# -- encodings ------------------------------------------------------------------------------------

class _Batch:
    """What the encodings of one ``encode_batch`` call share: the texts, the state they were
    encoded under, and what is made on first use (offsets, tokens, the real encodings)."""

    __slots__ = ("backend", "engine", "inputs", "pairs", "allowed", "add_special", "trunc", "pad",
                 "split", "offsets", "real", "layouts", "_lock")

    def __init__(self, backend: "Backend", engine: _Engine, inputs: list[Any], pairs: list[Any], allowed: list[int],
                 add_special: bool, trunc: Optional[_Dict], pad: Optional[_Dict], split: bool) -> None:
        self.backend = backend
        self.engine = engine
        self.inputs = inputs
        self.pairs = pairs
        self.allowed = allowed
        self.add_special = add_special
        self.trunc = trunc
        self.pad = pad
        self.split = split
        self.offsets: Optional[list[Any]] = None
        self.real: Optional[list[Any]] = None
        self.layouts: list[Any] = []
        self._lock = threading.Lock()

    def offsets_of(self, i: int) -> tuple[Any, Any]:
        with self._lock:
            if self.offsets is None:
                # every text's offsets in one call of the engine, on its threads
                flat: list[str] = []
                for a, b in self.pairs:
                    flat.append(a)
                    if b is not None:
                        flat.append(b)
                with gc_paused():
                    got = self.engine.pipe.encode_offsets_batch(flat, self.allowed, self.engine.trim, _threads(flat))
                offs: list[tuple[Any, Any]] = []
                k = 0
                for _, b in self.pairs:
                    if b is None:
                        offs.append((got[k], None))
                        k += 1
                    else:
                        offs.append((got[k], got[k + 1]))
                        k += 2
                self.offsets = offs
        return self.offsets[i]

    def real_of(self, i: int) -> Any:
        """The real tokenizer's encoding of item ``i``, under the state of the call."""
        with self._lock:
            if self.real is None:
                self.real = self.backend._real_batch(self.inputs, self.add_special, self.trunc, self.pad, self.split)
        return self.real[i]


_NO_SPAN = [(0, 0)]


class Encoding:
    """One result of :meth:`Backend.encode_batch`, with the attributes of ``tokenizers.Encoding``
    that transformers reads. Anything else (``word_ids``, ``char_to_token``...) is the real
    tokenizer's encoding's, made on first use."""

    __slots__ = ("_batch", "_i", "_layout", "ids", "type_ids", "attention_mask", "_special_tokens_mask",
                 "_cut", "_offsets", "_tokens", "_sequence_ids")

    def __init__(self, batch: _Batch, i: int, layout: list[Any], ids: list[int], cut: bool) -> None:
        self._batch = batch
        self._i = i
        self._layout = layout
        self.ids = ids
        self._cut = cut
        self._offsets: Optional[list[tuple[int, int]]] = None
        self._tokens: Optional[list[str]] = None
        self._sequence_ids: Optional[list[Optional[int]]] = None
        self._special_tokens_mask: Optional[list[int]] = None
        types: list[int] = []
        attn: list[int] = []
        for kind, n, type_id in layout:
            types += [type_id] * n
            attn += [0 if kind == "P" else 1] * n
        self.type_ids = types
        self.attention_mask = attn

    @property
    def special_tokens_mask(self) -> list[int]:
        """Made on first use: transformers reads it only when asked to return it."""
        if self._special_tokens_mask is None:
            special: list[int] = []
            for kind, n, _ in self._layout:
                special += [0 if kind in ("A", "B") else 1] * n
            self._special_tokens_mask = special
        return self._special_tokens_mask

    def _fill(self, a: list[Any], b: Optional[list[Any]], special: Any, pad: Any) -> list[Any]:
        """A per-token list laid out as the ids are: the sequences' own values, ``special`` for
        the template's tokens (a callable of the special item), ``pad`` for padding."""
        out: list[Any] = []
        for kind, n, item in self._layout_items():
            if kind == "A":
                out += a[item[0]:item[1]]
            elif kind == "B":
                out += b[item[0]:item[1]]  # type: ignore[index]  # a "B" item only in a pair
            elif kind == "S":
                out += special(item)
            else:
                out += [pad] * n
        return out

    def _layout_items(self) -> list[Any]:
        items: list[Any] = self._batch.layouts[self._i]
        return items

    @property
    def offsets(self) -> list[tuple[int, int]]:
        if self._offsets is None:
            # `_fill` written out: a template's tokens and padding are `(0, 0)` each
            oa, ob = self._batch.offsets_of(self._i)
            out: list[tuple[int, int]] = []
            for kind, n, item in self._batch.layouts[self._i]:
                if kind == "A":
                    out += oa if item[0] == 0 and item[1] == len(oa) else oa[item[0]:item[1]]
                elif kind == "B":
                    out += ob if item[0] == 0 and item[1] == len(ob) else ob[item[0]:item[1]]
                else:
                    out += _NO_SPAN * n
            self._offsets = out
        return self._offsets

    @property
    def tokens(self) -> list[str]:
        if self._tokens is None:
            b = self._batch
            a, p = b.pairs[self._i]
            ta = b.engine.tokens(a, b.allowed)
            tb = None if p is None else b.engine.tokens(p, b.allowed)
            pad_token = b.pad["pad_token"] if b.pad else None
            self._tokens = self._fill(ta, tb, lambda item: list(item[1]), pad_token)
        return self._tokens

    @property
    def sequence_ids(self) -> list[Optional[int]]:
        if self._sequence_ids is None:
            out: list[Optional[int]] = []
            for kind, n, _ in self._layout:
                out += [0 if kind == "A" else 1 if kind == "B" else None] * n
            self._sequence_ids = out
        return self._sequence_ids

    @property
    def n_sequences(self) -> int:
        return 1 if self._batch.pairs[self._i][1] is None else 2

    @property
    def overflowing(self) -> list[Any]:
        if not self._cut:
            return []
        over: list[Any] = self._batch.real_of(self._i).overflowing
        return over

    def __len__(self) -> int:
        return len(self.ids)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        return getattr(self._batch.real_of(self._i), name)

    def __repr__(self) -> str:
        return f"Encoding(num_tokens={len(self.ids)}, served by subwords)"


# -- the backend ----------------------------------------------------------------------------------

#: attributes whose setting changes what the engine must be rebuilt from
_STATE_ONLY = frozenset({"encode_special_tokens"})


class Backend:
    """A ``tokenizers.Tokenizer`` whose encoding is subwords' (see the module). Every attribute
    it does not define is the real tokenizer's."""

    def __init__(self, raw: Any) -> None:
        object.__setattr__(self, "_raw", raw)
        object.__setattr__(self, "_engine_cache", None)  # (key, _Engine or refusal text)
        object.__setattr__(self, "_version", 0)

    # -- attribute forwarding
    def __getattr__(self, name: str) -> Any:
        return getattr(object.__getattribute__(self, "_raw"), name)

    def __setattr__(self, name: str, value: Any) -> None:
        setattr(self._raw, name, value)
        if name not in _STATE_ONLY:
            object.__setattr__(self, "_version", self._version + 1)

    def __delattr__(self, name: str) -> None:
        delattr(self._raw, name)
        object.__setattr__(self, "_version", self._version + 1)

    def __repr__(self) -> str:
        return f"Backend({self._raw!r})"

    def __reduce__(self) -> tuple[Any, ...]:
        return (Backend, (self._raw,))

    def __deepcopy__(self, memo: dict[int, Any]) -> "Backend":
        return Backend(copy.deepcopy(self._raw, memo))

    def __copy__(self) -> "Backend":
        return Backend(self._raw)

    # -- what changes the pipeline
    def add_tokens(self, tokens: Any) -> Any:
        n = self._raw.add_tokens(tokens)
        object.__setattr__(self, "_version", self._version + 1)
        return n

    def add_special_tokens(self, tokens: Any) -> Any:
        n = self._raw.add_special_tokens(tokens)
        object.__setattr__(self, "_version", self._version + 1)
        return n

    def _engine(self) -> Optional[_Engine]:
        key = (self._version, self._raw.get_vocab_size(True))
        cached = self._engine_cache
        if cached is None or cached[0] != key:
            try:
                got: Any = _Engine(self._raw)
            except _Refused as e:
                got = str(e)
            cached = (key, got)
            object.__setattr__(self, "_engine_cache", cached)
        return cached[1] if isinstance(cached[1], _Engine) else None

    @property
    def subwords_refusal(self) -> Optional[str]:
        """None when subwords encodes for this tokenizer, else why the real tokenizer does."""
        self._engine()
        got = self._engine_cache[1]
        return None if isinstance(got, _Engine) else got

    @property
    def backend_tokenizer(self) -> Any:
        """The real ``tokenizers.Tokenizer``."""
        return self._raw

    # -- encoding
    def encode(self, sequence: Any, pair: Any = None, is_pretokenized: bool = False,
               add_special_tokens: bool = True) -> Any:
        if pair is None:
            return self.encode_batch([sequence], is_pretokenized=is_pretokenized,
                                     add_special_tokens=add_special_tokens)[0]
        return self.encode_batch([(sequence, pair)], is_pretokenized=is_pretokenized,
                                 add_special_tokens=add_special_tokens)[0]

    def encode_batch_fast(self, input: Any, is_pretokenized: bool = False,
                          add_special_tokens: bool = True) -> list[Any]:
        return self.encode_batch(input, is_pretokenized=is_pretokenized, add_special_tokens=add_special_tokens)

    def encode_batch(self, input: Any, is_pretokenized: bool = False, add_special_tokens: bool = True) -> list[Any]:
        raw = self._raw
        engine = None if is_pretokenized else self._engine()
        pairs = None if engine is None else _pairs(input)
        if engine is None or pairs is None:
            got: list[Any] = raw.encode_batch(input, is_pretokenized=is_pretokenized,
                                              add_special_tokens=add_special_tokens)
            return got
        trunc, pad, split = raw.truncation, raw.padding, raw.encode_special_tokens
        try:
            with gc_paused():
                return self._serve(engine, list(input), pairs, bool(add_special_tokens), trunc, pad, split)
        except _Refused:
            real: list[Any] = raw.encode_batch(input, is_pretokenized=False, add_special_tokens=add_special_tokens)
            return real

    def _serve(self, engine: _Engine, inputs: list[Any], pairs: list[Any], add_special: bool, trunc: Optional[_Dict],
               pad: Optional[_Dict], split: bool) -> list[Any]:
        allowed = [] if split else engine.all_specials
        # the ids of every text, on the engine's threads (no template: it is applied below)
        flat: list[str] = []
        for a, b in pairs:
            flat.append(a)
            if b is not None:
                flat.append(b)
        try:
            got = engine.enc.encode_batch(flat, _threads(flat), allowed, False)
        except SubwordsError as e:
            raise _Refused(str(e)) from None
        templates = engine.templates if add_special else None
        if trunc is not None:
            trunc = dict(trunc)
            left_cut = trunc["direction"] == "left"
        batch = _Batch(self, engine, inputs, pairs, allowed, add_special, trunc, pad, split)
        rows = []
        k = 0
        for a, b in pairs:
            ia = got[k]
            k += 1
            ib = None
            if b is not None:
                ib = got[k]
                k += 1
            na, nb = len(ia), (None if ib is None else len(ib))
            ka, kb, cut = na, nb, False
            if trunc is not None:
                n_added = 0 if templates is None else engine.added[0 if b is None else 1]
                if n_added > trunc["max_length"]:
                    raise _Refused("max_length below the template's tokens")
                t = trunc if n_added == 0 else {**trunc, "max_length": trunc["max_length"] - n_added}
                ka, kb = _kept(na, nb, t)
                for whole, kept in ((na, ka), (nb, kb)):
                    if whole is not None and 0 < kept < whole and trunc["stride"] >= kept:  # type: ignore[operator]
                        # tokenizers panics here (a stride as long as what is kept): let it
                        raise _Refused("stride not below the kept length")
                cut = ka < na or (nb is not None and kb < nb)  # type: ignore[operator]  # kb set with nb
            # the layout: (kind, count, type_id) and, for the fills, (kind, count, item)
            # where item is (start, stop) of the sequence or the template's special item
            sa = (na - ka, na) if (trunc is not None and left_cut) else (0, ka)
            sb = None if nb is None or kb is None else ((nb - kb, nb) if (trunc is not None and left_cut) else (0, kb))
            layout: list[Any] = []
            items: list[Any] = []
            ids: list[int] = []
            if templates is None:
                layout.append(("A", ka, 0))
                items.append(("A", ka, sa))
                ids += ia[sa[0]:sa[1]] if ka < na else ia
                if ib is not None:
                    layout.append(("B", kb, 1))
                    items.append(("B", kb, sb))
                    ids += ib[sb[0]:sb[1]]  # type: ignore[index]  # sb set with ib
            else:
                for it in templates[0 if b is None else 1]:
                    if len(it) == 2:
                        if it[0] == "A":
                            layout.append(("A", ka, it[1]))
                            items.append(("A", ka, sa))
                            ids += ia[sa[0]:sa[1]] if ka < na else ia
                        elif ib is not None:
                            layout.append(("B", kb, it[1]))
                            items.append(("B", kb, sb))
                            ids += ib[sb[0]:sb[1]]  # type: ignore[index]  # sb set with ib
                    else:
                        n = len(it[0])
                        layout.append(("S", n, it[2]))
                        items.append(("S", n, it))
                        ids += it[0]
            rows.append((ids, layout, items, cut))
        if pad is not None:
            target = pad["length"] if pad["length"] is not None else max((len(r[0]) for r in rows), default=0)
            m = pad["pad_to_multiple_of"]
            if m and target % m:
                target += m - target % m
            left_pad = pad["direction"] == "left"
            for ids, layout, items, _ in rows:
                n = target - len(ids)
                if n > 0:
                    p = ("P", n, pad["pad_type_id"])
                    pi = ("P", n, None)
                    if left_pad:
                        ids[:0] = [pad["pad_id"]] * n
                        layout.insert(0, p)
                        items.insert(0, pi)
                    else:
                        ids += [pad["pad_id"]] * n
                        layout.append(p)
                        items.append(pi)
        batch.layouts = [r[2] for r in rows]
        return [Encoding(batch, i, layout, ids, cut) for i, (ids, layout, _, cut) in enumerate(rows)]

    def _real_batch(self, inputs: list[Any], add_special: bool, trunc: Optional[_Dict], pad: Optional[_Dict],
                    split: bool) -> list[Any]:
        """The real tokenizer's encodings of ``inputs`` under the given state (its own state is
        put back after)."""
        raw = self._raw
        with _real_lock:
            before = (raw.truncation, raw.padding, raw.encode_special_tokens)
            try:
                _set_state(raw, trunc, pad, split)
                out: list[Any] = raw.encode_batch(inputs, add_special_tokens=add_special)
                return out
            finally:
                _set_state(raw, *before)


def _set_state(raw: Any, trunc: Optional[_Dict], pad: Optional[_Dict], split: bool) -> None:
    if trunc is None:
        raw.no_truncation()
    else:
        raw.enable_truncation(**{k: trunc[k] for k in ("max_length", "stride", "strategy", "direction")})
    if pad is None:
        raw.no_padding()
    else:
        raw.enable_padding(**pad)
    raw.encode_special_tokens = split


def _pairs(input: Any) -> Optional[list[tuple[str, Optional[str]]]]:
    """Each input as (text, pair or None); None when one is not text or a pair of texts (the real
    tokenizer then takes the call and says what is wrong)."""
    if not isinstance(input, (list, tuple)):
        return None
    out: list[tuple[str, Optional[str]]] = []
    for x in input:
        if type(x) is str:
            out.append((x, None))
        elif isinstance(x, (list, tuple)) and len(x) == 2 and type(x[0]) is str and type(x[1]) is str:
            out.append((x[0], x[1]))
        else:
            return None
    return out


#: characters of text a batch needs per thread it is encoded on
_CHARS_PER_THREAD = 1 << 16


def _threads(texts: list[str]) -> int:
    """Threads for a batch: one more per 64k characters, at most one per core. A thread is
    started for each call and waited for at its end, which costs little on idle cores but a
    time slice of a busy machine's scheduler: 256 English lines (38k characters) with offsets,
    5,120 lines in all, took 0.89 s on two threads against 0.53 s on one at load average 14
    (the same CPU time)."""
    import os

    chars = sum(map(len, texts))
    return max(1, min(os.cpu_count() or 1, 1 + chars // _CHARS_PER_THREAD))
