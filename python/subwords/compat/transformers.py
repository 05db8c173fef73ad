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
subwords' engine, built from the tokenizer's own ``to_str()``, which also applies what
``tokenizers`` applies after the model: truncation (``longest_first``, ``only_first``,
``only_second``, either direction), the post-processor (``TemplateProcessing``,
``BertProcessing``, ``RobertaProcessing``, ``ByteLevel``, a ``Sequence`` of them), and padding
(to the longest, to a length, to a multiple, either side). :func:`install` also wraps
``_encode_plus`` (what ``__call__`` comes to): where subwords serves the call, the output's
lists are the engine's, made for the whole batch at once. Every other attribute and method is
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

Tried and not kept: ``Encoding`` as a ``tuple`` subclass made by ``map`` (256 of them in 116 us
against 151 us, a tenth of a call's Python) would make every encoding a tuple to the code that
reads it.
"""

from __future__ import annotations

import contextlib
import copy
import functools
import inspect
import json
import os
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
            cls._encode_plus = _served(plus)


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


def _served(encode_plus: Any) -> Any:
    """transformers' ``_encode_plus`` (what ``__call__``, ``encode`` and ``batch_encode_plus``
    come to), served by subwords where it can: the output dict's lists are the ones the engine
    made for the whole batch (``_core.HfPipeline.encode_rows``), instead of an encoding object
    per text that transformers then reads list by list (that reading, the face's per-text
    Python and the offsets' tuples were most of an installed call with offsets). The call goes to
    transformers' own ``_encode_plus`` (and on to :meth:`Backend.encode_batch`) for
    pre-tokenized input, overflowing tokens, chat-template control tokens, input that is not
    texts or pairs of texts, and whatever the engine does not serve.

    Either way no cyclic garbage collection runs inside: the lists made hold only ints, tuples of
    ints and strs, yet each counts toward the collector's thresholds, and the collections they
    set off (which go over every result still held) were half of an installed call's CPU time on
    5,120 English lines with offsets (0.395 -> 0.191 s)."""
    sig = inspect.signature(encode_plus)
    named, defaults, extra = _keywords(sig)

    @functools.wraps(encode_plus)
    def _encode_plus(self: Any, *args: Any, **kwargs: Any) -> Any:
        with gc_paused():
            a: Optional[dict[str, Any]] = None
            if not args and extra is not None and "text" in kwargs and "self" not in kwargs:
                # what ``sig.bind(self, **kwargs).apply_defaults()`` gives for keywords alone
                # (``__call__`` passes every argument so): 72 us of a call's Python in
                # ``inspect``, 9 ms of a round of 120 calls that took 150 ms
                a = dict(defaults)
                rest = {}
                for k, v in kwargs.items():
                    if k in named:
                        a[k] = v
                    else:
                        rest[k] = v
                a[extra] = rest
            else:
                try:
                    bound = sig.bind(self, *args, **kwargs)
                except TypeError:
                    bound = None
                if bound is not None:
                    bound.apply_defaults()
                    a = bound.arguments
            if a is not None:
                got = _serve_call(self, a)
                if got is not None:
                    return got
            return encode_plus(self, *args, **kwargs)

    return _encode_plus


def _keywords(sig: inspect.Signature) -> tuple[frozenset[str], dict[str, Any], Optional[str]]:
    """Of ``_encode_plus``'s signature: the parameters a keyword can name, the defaults of
    those that have one, and the name of its ``**kwargs`` (None when it has none, a parameter a
    keyword cannot name or one besides ``text`` without a default: then every call is bound by
    ``inspect``)."""
    named: set[str] = set()
    defaults: dict[str, Any] = {}
    extra = None
    params = list(sig.parameters.values())
    for p in params[1:]:
        if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY):
            named.add(p.name)
            if p.default is not p.empty:
                defaults[p.name] = p.default
            elif p.name != "text":
                return frozenset(), {}, None
        elif p.kind == p.VAR_KEYWORD:
            extra = p.name
        else:
            return frozenset(), {}, None
    return frozenset(named), defaults, extra


def _serve_call(tok: Any, a: dict[str, Any]) -> Any:
    """``_encode_plus`` with the arguments ``a``, as transformers computes it, when subwords
    serves the call; None when it does not (nothing is changed then)."""
    text, pair = a["text"], a.get("text_pair")
    if (a.get("is_split_into_words") or a.get("return_overflowing_tokens")
            or (a.get("kwargs") or {}).get("sanitize_control_tokens")):
        return None
    if isinstance(text, str):
        batched = False
        if pair is not None and not isinstance(pair, str):
            return None
        items: Any = [(text, pair)] if pair else [text]
    elif isinstance(text, (list, tuple)) and text:
        batched = True
        if pair is None:
            items = text
        elif isinstance(pair, (list, tuple)) and len(pair) == len(text):
            items = list(zip(text, pair))
        else:
            return None
    else:
        return None
    backend = tok._tokenizer
    if not isinstance(backend, Backend) or backend._engine() is None:
        return None
    tok.set_truncation_and_padding(
        padding_strategy=a["padding_strategy"], truncation_strategy=a["truncation_strategy"],
        max_length=a["max_length"], stride=a["stride"], pad_to_multiple_of=a["pad_to_multiple_of"],
        padding_side=a["padding_side"])
    split = a.get("split_special_tokens")
    if split is None:
        split = tok.split_special_tokens
    if backend.encode_special_tokens != split:
        backend.encode_special_tokens = split
    want_types = a.get("return_token_type_ids")
    if want_types is None:
        want_types = "token_type_ids" in tok.model_input_names
    want_attn = a.get("return_attention_mask")
    if want_attn is None:
        want_attn = "attention_mask" in tok.model_input_names
    want_special = bool(a.get("return_special_tokens_mask"))
    want_offsets = bool(a.get("return_offsets_mapping"))
    batch = backend._batch(items, bool(a["add_special_tokens"]),
                           (bool(want_types), bool(want_attn), want_special, want_offsets))
    if batch is None:
        return None
    ids = batch.ids
    data: dict[str, Any] = {"input_ids": ids}
    if want_types:
        data["token_type_ids"] = batch.types
    if want_attn:
        data["attention_mask"] = batch.attn
    if want_special:
        data["special_tokens_mask"] = batch.special
    if want_offsets:
        data["offset_mapping"] = batch.offs
    if a.get("return_length"):
        data["length"] = [len(x) for x in ids]
    max_length, verbose = a["max_length"], a["verbose"]
    if max_length is None and verbose:
        # transformers warns (once) of a row longer than the model takes
        limit = tok.model_max_length
        for x in ids:
            if len(x) > limit:
                tok._eventual_warn_about_too_long_sequence(x, max_length, verbose)
    out = _batch_encoding()(data, [Encoding(batch, i) for i in range(len(ids))], tensor_type=a["return_tensors"])
    if not batched and a["return_tensors"] is None:
        out = _batch_encoding()(
            {k: (v[0] if len(v) > 0 and isinstance(v[0], list) else v) for k, v in out.items()}, out.encodings)
    return out


@functools.lru_cache(maxsize=None)
def _batch_encoding() -> Any:
    from transformers.tokenization_utils_base import BatchEncoding

    return BatchEncoding


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
        # the templates as the engine's rows take them: (0 | 1, [], type id) for the first or
        # second sequence, (2, ids, type id) for special tokens
        self.rows_templates = None if self.templates is None else tuple(
            [(2, it[0], it[2]) if len(it) == 3 else (0 if it[0] == "A" else 1, [], it[1]) for it in t]
            for t in self.templates)
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
    """What the encodings of one ``encode_batch`` call share: the call's state and the lists the
    engine made for every row (``_core.HfPipeline.encode_rows``); a list not asked for is made
    for the whole batch on first use, as are the real tokenizer's encodings."""

    __slots__ = ("backend", "engine", "inputs", "allowed", "add_special", "trunc", "pad", "split", "ids",
                 "types", "attn", "special", "offs", "shapes", "real", "_lock")

    def __init__(self, backend: "Backend", engine: _Engine, inputs: list[Any], allowed: list[int], add_special: bool,
                 trunc: Optional[_Dict], pad: Optional[_Dict], split: bool) -> None:
        self.backend = backend
        self.engine = engine
        self.inputs = inputs
        self.allowed = allowed
        self.add_special = add_special
        self.trunc = trunc
        self.pad = pad
        self.split = split
        self.real: Optional[list[Any]] = None
        self._lock = threading.Lock()

    def run(self, types: bool, attn: bool, special: bool, offsets: bool) -> bool:
        """Every row through the engine, keeping the lists asked for; False when the batch is not
        texts or pairs of texts. Raises :class:`_Refused` where ``tokenizers`` refuses the
        call's truncation."""
        e = self.engine
        trunc, pad = self.trunc, self.pad
        try:
            got = e.pipe.encode_rows(
                self.inputs, self.allowed, _CORES, (types, attn, special, offsets), e.trim,
                e.rows_templates if self.add_special else None,
                None if trunc is None else (trunc["max_length"], trunc["stride"], trunc["strategy"],
                                            trunc["direction"] == "left"),
                None if pad is None else (pad["length"], pad["pad_to_multiple_of"], pad["direction"] == "left",
                                          pad["pad_id"], pad["pad_type_id"]))
        except SubwordsError as err:
            raise _Refused(str(err)) from None
        if got is None:
            return False
        if isinstance(got, str):
            raise _Refused(got)
        self.ids, types_, attn_, special_, offs_, self.shapes = got
        self.types = types_ if types else getattr(self, "types", None)
        self.attn = attn_ if attn else getattr(self, "attn", None)
        self.special = special_ if special else getattr(self, "special", None)
        self.offs = offs_ if offsets else getattr(self, "offs", None)
        return True

    def lists(self, name: str) -> list[Any]:
        """The rows' ``types``, ``attn``, ``special`` or ``offs``, made on first use."""
        got: Optional[list[Any]] = getattr(self, name)
        if got is None:
            with self._lock:
                got = getattr(self, name)
                if got is None:
                    with gc_paused():
                        self.run(True, True, True, name == "offs" or self.offs is not None)
                    got = getattr(self, name)
        assert got is not None
        return got

    def layout(self, i: int) -> list[tuple[str, int, Any]]:
        """Row ``i`` as runs ``(kind, count, item)``: kind ``A``/``B`` (item: the kept range of
        the sequence), ``S`` (item: the template's special item), ``P`` (padding)."""
        a0, a1, b0, b1, npad, _ = self.shapes[i]
        pair = b0 is not None
        left = self.pad is not None and self.pad["direction"] == "left"
        runs: list[tuple[str, int, Any]] = []
        if npad and left:
            runs.append(("P", npad, None))
        templates = self.engine.templates if self.add_special else None
        for it in [("A", 0), ("B", 1)] if templates is None else templates[1 if pair else 0]:
            if len(it) == 3:
                runs.append(("S", len(it[0]), it))
            elif it[0] == "A":
                runs.append(("A", a1 - a0, (a0, a1)))
            elif pair:
                runs.append(("B", b1 - b0, (b0, b1)))
        if npad and not left:
            runs.append(("P", npad, None))
        return runs

    def real_of(self, i: int) -> Any:
        """The real tokenizer's encoding of item ``i``, under the state of the call."""
        with self._lock:
            if self.real is None:
                self.real = self.backend._real_batch(self.inputs, self.add_special, self.trunc, self.pad, self.split)
        return self.real[i]


class Encoding:
    """One result of :meth:`Backend.encode_batch`, with the attributes of ``tokenizers.Encoding``
    that transformers reads. Anything else (``word_ids``, ``char_to_token``...) is the real
    tokenizer's encoding's, made on first use."""

    __slots__ = ("_batch", "_i", "_tokens")

    def __init__(self, batch: _Batch, i: int) -> None:
        self._batch = batch
        self._i = i
        self._tokens: Optional[list[str]] = None

    @property
    def ids(self) -> list[int]:
        ids: list[int] = self._batch.ids[self._i]
        return ids

    @property
    def type_ids(self) -> list[int]:
        got: list[int] = self._batch.lists("types")[self._i]
        return got

    @property
    def attention_mask(self) -> list[int]:
        got: list[int] = self._batch.lists("attn")[self._i]
        return got

    @property
    def special_tokens_mask(self) -> list[int]:
        got: list[int] = self._batch.lists("special")[self._i]
        return got

    @property
    def offsets(self) -> list[tuple[int, int]]:
        got: list[tuple[int, int]] = self._batch.lists("offs")[self._i]
        return got

    @property
    def tokens(self) -> list[str]:
        if self._tokens is None:
            b = self._batch
            item = b.inputs[self._i]
            a, p = (item, None) if isinstance(item, str) else item
            ta = b.engine.tokens(a, b.allowed)
            tb = None if p is None else b.engine.tokens(p, b.allowed)
            out: list[str] = []
            for kind, n, it in b.layout(self._i):
                if kind == "A":
                    out += ta[it[0]:it[1]]
                elif kind == "B":
                    out += tb[it[0]:it[1]]  # type: ignore[index]  # a "B" run only in a pair
                elif kind == "S":
                    out += it[1]
                else:
                    assert b.pad is not None  # a pad run only where padding is set
                    out += [str(b.pad["pad_token"])] * n
            self._tokens = out
        return self._tokens

    @property
    def sequence_ids(self) -> list[Optional[int]]:
        out: list[Optional[int]] = []
        for kind, n, _ in self._batch.layout(self._i):
            out += [0 if kind == "A" else 1 if kind == "B" else None] * n
        return out

    @property
    def n_sequences(self) -> int:
        return 1 if self._batch.shapes[self._i][2] is None else 2

    @property
    def overflowing(self) -> list[Any]:
        if not self._batch.shapes[self._i][5]:
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
        batch = None if is_pretokenized else self._batch(input, bool(add_special_tokens), (True, True, False, False))
        if batch is None:
            got: list[Any] = self._raw.encode_batch(input, is_pretokenized=is_pretokenized,
                                                    add_special_tokens=add_special_tokens)
            return got
        return [Encoding(batch, i) for i in range(len(batch.ids))]

    def _batch(self, input: Any, add_special: bool, want: tuple[bool, bool, bool, bool]) -> Optional[_Batch]:
        """``input`` (texts or pairs of texts) through subwords under the real tokenizer's
        truncation, padding and ``encode_special_tokens``, the lists ``want`` says made (type
        ids, attention mask, special-tokens mask, offsets); None where the real tokenizer is to
        answer."""
        if not isinstance(input, (list, tuple)):
            return None
        engine = self._engine()
        if engine is None:
            return None
        raw = self._raw
        trunc, pad, split = raw.truncation, raw.padding, raw.encode_special_tokens
        allowed = [] if split else engine.all_specials
        batch = _Batch(self, engine, input if type(input) is list else list(input), allowed, add_special, trunc, pad,
                       split)
        try:
            with gc_paused():
                if not batch.run(*want):
                    return None
        except _Refused:
            return None
        return batch

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


#: the most threads a batch is encoded on (the engine starts one more per 64k characters of text
#: only: a thread is started for each call and waited for at its end, which costs little on idle
#: cores but a time slice of a busy machine's scheduler: 256 English lines (38k characters) with
#: offsets, 5,120 lines in all, took 0.89 s on two threads against 0.53 s on one at load average
#: 14, the same CPU time)
_CORES = os.cpu_count() or 1
