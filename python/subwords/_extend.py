"""Extending an existing BPE tokenizer on new text: :func:`extend`.

The new corpus's units are spelled in the tokenizer's own alphabet, the tokenizer's merges are
replayed on them (so each unit starts from the pieces encoding gives it today), and the one merge
engine learns new merges from there (``crates/subwords-core/src/learners/extend.rs``). Every
existing row keeps its id and every existing merge its rank; new rows get the ids after the last
one, and the new merges follow the pinned BPE rule (largest count; ties by ``(left, right)`` in
code-point order of the symbols as spelled, bytes for byte-level files). See docs/EXTEND.md.
"""

from __future__ import annotations

import base64
import json
import os
from collections import Counter
from typing import Any, Iterable, NamedTuple, Optional, Union

from . import _core
from ._api import SubwordsTokenizer
from ._io import read_limited, write_atomic
from .errors import InputError, ModelFileError, OptionError

__all__ = ["extend", "Extension"]

NO_SYMBOL = 2**32 - 1
MAX_JSON_BYTES = 512 << 20
MAX_SIZE = 2**31 - 1  # ids are u32 in the core, ranks below 2**31 in tiktoken files
PathLike = Union[str, "os.PathLike[str]"]


class Extension(NamedTuple):
    """What :func:`extend` returns: the extended tokenizer, and what the engine did."""

    tokenizer: Any
    #: rows (ids) before and after
    old_size: int
    new_size: int
    #: merges learned (a merge can reuse an existing row, so this may exceed the new rows)
    merges_learned: int
    #: why learning stopped: "size", "min_count" or "no_pairs"
    stop: str
    #: the new corpus's pieces (count x pieces per unit) under the old merges and the new ones
    pieces_before: int
    pieces_after: int
    #: the format written (and read): "subwords", "hf" or "tiktoken"
    format: str


def _texts(data: object, who: str = "extend") -> list[str]:
    """The texts of ``data``: an iterable of str, or what ``subwords.train`` reads from files."""
    from . import inputs

    if isinstance(data, (str, bytes)):
        raise InputError(f"{who}() got a single string: pass a list of texts, or pathlib.Path(...) for a file")
    src = inputs.source(data)
    it: Iterable[object] = src if src is not None else data  # type: ignore[assignment]
    texts: list[str] = []
    try:
        for k, t in enumerate(it):
            if not isinstance(t, str):
                raise InputError(f"text {k} is a {type(t).__name__}, not a str")
            try:
                t.encode("utf-8")
            except UnicodeEncodeError as e:
                raise InputError(f"text {k} holds a lone surrogate at character {e.start}, which is no "
                                 "Unicode text; decode the input with errors='replace' first") from None
            texts.append(t)
    except TypeError:
        raise InputError(f"{who}() reads texts: an iterable of str or a path, got {type(data).__name__}") from None
    if not any(t.strip() for t in texts):
        raise InputError(f"the corpus is empty (no text, or nothing but whitespace): give {who}() some text")
    return texts


def _check_size(vocab_size: object, current: int) -> int:
    if isinstance(vocab_size, bool) or not isinstance(vocab_size, int):
        raise OptionError(f"vocab_size must be an int, got {vocab_size!r}")
    if vocab_size > MAX_SIZE:
        raise OptionError(f"vocab_size={vocab_size} is above the largest size ids can number ({MAX_SIZE})")
    if vocab_size <= current:
        raise OptionError(f"vocab_size={vocab_size} is not above the tokenizer's current size {current}: "
                          "extend() only adds rows (use subwords.trim to cut a vocabulary)")
    return vocab_size


def _check_min_count(min_count: object) -> int:
    if isinstance(min_count, bool) or not isinstance(min_count, int) or not 1 <= min_count < 2**63:
        raise OptionError(f"min_count must be an int from 1 to 2**63 - 1, got {min_count!r}")
    return min_count


def extend(model: Union[PathLike, SubwordsTokenizer, Any], data: object, *, vocab_size: int, min_count: int = 2,
           output: Optional[PathLike] = None, pattern: Optional[str] = None) -> Extension:
    """Continues BPE training of ``model`` on ``data`` up to ``vocab_size`` ids.

    ``model``: one of our BPE models (a :class:`SubwordsTokenizer`, or its file), a
    ``tokenizer.json`` BPE file with the ``ByteLevel`` pre-tokenizer (a path), or a ``.tiktoken``
    rank file (a path, or the tokenizer ``subwords.load`` made of it; ``pattern`` as
    ``subwords.load`` takes it). ``data``: texts (an iterable of str) or paths, as
    ``subwords.train`` reads them. Learning stops at ``vocab_size`` ids, or when the best pair
    occurs fewer than ``min_count`` times. With ``output``, the result is written there,
    atomically, in the input's format.

    >>> tok = __import__("subwords").train({"low": 5, "lower": 2, "newest": 6, "widest": 3}, vocab_size=16)
    >>> ext = extend(tok, ["lowest " * 3, "newest " * 3], vocab_size=18)
    >>> ext.tokenizer.merges[:4] == tok.merges
    True
    """
    min_count = _check_min_count(min_count)
    if isinstance(model, SubwordsTokenizer):
        return _extend_ours(model, data, vocab_size, min_count, output)
    from .formats.tiktoken import TiktokenTokenizer

    if isinstance(model, TiktokenTokenizer):
        return _extend_tiktoken(model, data, vocab_size, min_count, output)
    if not isinstance(model, (str, os.PathLike)):
        raise InputError(f"extend() takes a subwords BPE model, a tiktoken tokenizer or a path to a model file; "
                         f"got {type(model).__name__} (for a tokenizer.json, pass its path)")
    from .formats import _dispatch

    p = os.fspath(model)
    fmt = _dispatch.detect(p)
    if fmt == "subwords":
        from ._api import load_model_file

        return _extend_ours(load_model_file(p), data, vocab_size, min_count, output)
    if fmt == "hf":
        if os.path.isdir(p):
            p = os.path.join(p, "tokenizer.json")
        return _extend_hf(p, data, vocab_size, min_count, output)
    if fmt == "tiktoken":
        from .formats.tiktoken import load

        return _extend_tiktoken(load(p, pattern=pattern), data, vocab_size, min_count, output)
    raise InputError(f"{p}: extend() continues BPE in subwords model files, tokenizer.json and .tiktoken files; "
                     f"this is a {fmt} file")


# -- ours ------------------------------------------------------------------------------------

def _extend_ours(tok: SubwordsTokenizer, data: object, vocab_size: int, min_count: int,
                 output: Optional[PathLike]) -> Extension:
    if tok.model != "bpe":
        raise OptionError(f"extend() continues BPE training; this is a {tok.model} model, which has no merges "
                          "to continue (train a new one, or use subwords.trim to cut it)")
    if (tok.options or {}).get("picky") is not None:
        raise OptionError("extend() does not continue a Picky BPE model: its removals would have to be "
                          "judged again over the old merges; train a new one with picky=")
    if (tok.options or {}).get("boundless") is not None:
        raise OptionError(
            "extend() does not continue a BoundlessBPE model: the paper defines no way to continue one, and its rule "
            "run on would delete any row, old ones included, whose intersection over self a new merge brings to "
            "deletion_threshold, taking that id away; keeping every id would take a rule of our own. Train a new "
            "model with preset='boundless' on the old and the new text together")
    if (tok.options or {}).get("length_max"):
        raise OptionError("extend() does not continue a Length-MAX model yet: it would learn the new merges by "
                          "plain BPE's count; train a new one with length_max=True")
    if (tok.options or {}).get("scaffold"):
        raise OptionError("extend() does not continue a Scaffold-BPE model: its scaffold marks would have to be "
                          "judged again over the new merges; train a new one with scaffold=True")
    old = tok.vocab_size
    vocab_size = _check_size(vocab_size, old)
    texts = _texts(data)
    core, (stop, learned, before, after) = _core.model_extended(tok._model, texts, vocab_size - old, min_count)
    new = SubwordsTokenizer(core)
    if output is not None:
        write_atomic(output, new.to_json(), "model file")
    return Extension(new, old, new.vocab_size, learned, stop, before, after, "subwords")


# -- byte-level helpers ----------------------------------------------------------------------

def _byte_units(pieces: Iterable[bytes], byte_id: dict[int, int]) -> list[tuple[list[int], int]]:
    counts = Counter(p for p in pieces if p)
    return [([byte_id.get(b, NO_SYMBOL) for b in unit], c) for unit, c in sorted(counts.items())]


# -- tokenizer.json --------------------------------------------------------------------------

def _byte_level(doc: dict[str, Any], path: str) -> tuple[bool, bool]:
    """(add_prefix_space, use_regex) of the file's ByteLevel pre-tokenizer; refuses the rest."""
    if doc.get("normalizer") is not None:
        raise InputError(f"{path}: extend() reads tokenizer.json files with no normalizer (this one has "
                         f"{doc['normalizer'].get('type')!r})")
    pre = doc.get("pre_tokenizer")
    if isinstance(pre, dict) and pre.get("type") == "Sequence" and isinstance(pre.get("pretokenizers"), list) \
            and len(pre["pretokenizers"]) == 1:
        pre = pre["pretokenizers"][0]
    if not isinstance(pre, dict) or pre.get("type") != "ByteLevel":
        kind = pre.get("type") if isinstance(pre, dict) else None
        raise InputError(f"{path}: extend() continues byte-level BPE (pre_tokenizer ByteLevel); this file's "
                         f"pre_tokenizer is {kind!r}")
    return bool(pre.get("add_prefix_space", True)), bool(pre.get("use_regex", True))


def _extend_hf(path: str, data: object, vocab_size: int, min_count: int, output: Optional[PathLike]) -> Extension:
    from .formats.huggingface import read as hf_read
    from .formats.tiktoken import BYTE_TO_CHAR, CHAR_TO_BYTE

    try:
        doc = json.loads(read_limited(path, MAX_JSON_BYTES, "tokenizer.json").decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise ModelFileError(f"{path}: not a tokenizer.json file ({e})") from None
    hf_read.HuggingFace(doc, path)  # the reader's checks, so a file we cannot read is refused here
    m = doc.get("model") or {}
    if m.get("type") != "BPE":
        raise OptionError(f"{path}: extend() continues BPE training; this file's model is {m.get('type')!r}")
    for key in ("continuing_subword_prefix", "end_of_word_suffix", "dropout"):
        if m.get(key):
            raise InputError(f"{path}: extend() does not continue a BPE model with {key} set")
    if m.get("byte_fallback"):
        raise InputError(f"{path}: extend() does not continue a BPE model with byte_fallback (byte-level files "
                         "need none)")
    prefix_space, use_regex = _byte_level(doc, path)
    vocab: dict[str, int] = m["vocab"]
    added = doc.get("added_tokens") or []
    ids = list(vocab.values()) + [t["id"] for t in added if isinstance(t, dict) and isinstance(t.get("id"), int)]
    old = max(ids) + 1 if ids else 0
    vocab_size = _check_size(vocab_size, old)

    def raw(token: str) -> Optional[bytes]:
        try:
            return bytes(CHAR_TO_BYTE[c] for c in token)
        except KeyError:
            return None

    in_vocab = set(vocab.values())
    holes = [i for i in range(old) if i not in in_vocab and i not in {t.get("id") for t in added if isinstance(t, dict)}]
    if holes:
        raise ModelFileError(f"{path}: ids {holes[:5]} have neither a vocab entry nor an added token; tokenizers "
                             "would renumber the added tokens after them, so extend() cannot keep every id")
    texts = [b""] * old
    for token, i in vocab.items():
        text_bytes = raw(token)
        if text_bytes is None:
            raise InputError(f"{path}: vocab entry {token!r} is not written in the byte-level alphabet")
        texts[i] = text_bytes
    # a special token is no symbol a merge can make: a hole for the engine
    for t in added:
        if isinstance(t, dict) and t.get("special") and isinstance(t.get("id"), int) and 0 <= t["id"] < old:
            texts[t["id"]] = b""
    by_bytes = {t: i for i, t in enumerate(texts) if t}
    merges_in = m.get("merges") or []
    as_strings = bool(merges_in) and isinstance(merges_in[0], str)
    merges: list[list[int]] = []
    for rank, mg in enumerate(merges_in):
        left, right = mg.split(" ", 1) if isinstance(mg, str) else mg
        try:
            ia, ib = vocab[left], vocab[right]
            ic = vocab[left + right]
        except KeyError:
            raise ModelFileError(f"{path}: merge {rank} ({left!r}, {right!r}) names a token with no id") from None
        merges.append([ia, ib, ic])
    byte_id = {x: by_bytes[bytes([x])] for x in range(256) if bytes([x]) in by_bytes}
    pieces: list[bytes] = []
    for text in _texts(data):
        if prefix_space and not text.startswith(" "):
            text = " " + text
        parts = _core.split_pattern("r50k", text) if use_regex else [text]
        pieces.extend(p.encode("utf-8") for p in parts)
    units = _byte_units(pieces, byte_id)
    if m.get("ignore_merges"):
        # tokenizers takes a unit that is a token as that one token, whatever the merges say
        whole = [bytes(x for s in u for x in texts[s]) if NO_SYMBOL not in u else b"" for u, _ in units]
        units = [([by_bytes[w]] if w in by_bytes else u, c) for w, (u, c) in zip(whole, units)]
    new_merges, new_texts, (stop, learned, before, after) = _core.extend_merges(
        texts, merges, units, vocab_size - old, min_count, b"")
    new_vocab = dict(vocab)
    # tokenizers numbers an added token that has no vocab entry from the vocab's size, whatever
    # its id in the file: once the vocab grows, it would move. Writing it into the vocab at its id
    # keeps it where it is (the engine above saw it as a hole, so no merge makes it).
    for t in added:
        if isinstance(t, dict) and isinstance(t.get("content"), str) and t["content"] not in vocab:
            new_vocab[t["content"]] = t["id"]
    for k, t in enumerate(new_texts):
        new_vocab["".join(BYTE_TO_CHAR[b] for b in t)] = old + k
    rows_text = {i: "".join(BYTE_TO_CHAR[b] for b in t) for i, t in enumerate(texts) if t}
    rows_text.update({old + k: "".join(BYTE_TO_CHAR[b] for b in t) for k, t in enumerate(new_texts)})
    out_merges: list[Any] = list(merges_in)
    for ia, ib, _ic in new_merges:
        out_merges.append(f"{rows_text[ia]} {rows_text[ib]}" if as_strings else [rows_text[ia], rows_text[ib]])
    doc = dict(doc)
    doc["model"] = {**m, "vocab": new_vocab, "merges": out_merges}
    text = json.dumps(doc, ensure_ascii=False, indent=2)
    tok = hf_read.HuggingFace(json.loads(text), path)
    if output is not None:
        write_atomic(output, text, "tokenizer.json")
    return Extension(tok, old, old + len(new_texts), learned, stop, before, after, "hf")


# -- tiktoken --------------------------------------------------------------------------------

def _extend_tiktoken(tok: Any, data: object, vocab_size: int, min_count: int,
                     output: Optional[PathLike]) -> Extension:
    """tiktoken merges the adjacent pair whose concatenation has the lowest rank; the merges
    replayed here are every split of every token into two tokens, ranked by the token's rank,
    which is that rule. ``vocab_size`` counts ranks and special tokens; new tokens take the
    lowest ranks above the old ones that no special token holds."""
    from .formats.tiktoken.read import TiktokenTokenizer

    core = tok._core
    tokens: list[tuple[bytes, int]] = core.tokens()
    specials = dict(core.specials())
    old = len(tokens) + len(specials)
    vocab_size = _check_size(vocab_size, old)
    n = max(r for _, r in tokens) + 1
    texts = [b""] * n
    rank = {}
    for t, r in tokens:
        texts[r] = t
        rank[t] = r
    merges = []
    for t, r in sorted(tokens, key=lambda x: x[1]):
        for k in range(1, len(t)):
            a, b = rank.get(t[:k]), rank.get(t[k:])
            if a is not None and b is not None:
                merges.append([a, b, r])
    byte_id = {b: rank[bytes([b])] for b in range(256) if bytes([b]) in rank}
    pieces = [p.encode("utf-8") for text in _texts(data) for p in core.split(text)]
    units = _byte_units(pieces, byte_id)
    new_merges, new_texts, (stop, learned, before, after) = _core.extend_merges(
        texts, merges, units, vocab_size - old, min_count, b"")
    # the new tokens take the lowest ranks above the old ones that no special token holds
    taken = set(specials.values())
    free = (i for i in range(n, 2**31) if i not in taken)
    all_tokens = list(tokens) + [(t, next(free)) for t in new_texts]
    new_core = _core.RankBpe.from_ranks(all_tokens, core.pattern(), sorted(specials.items(), key=lambda kv: kv[1]))
    new = TiktokenTokenizer(new_core, tok.name, tok.pattern)
    if output is not None:
        lines = [base64.b64encode(t).decode("ascii") + f" {r}\n" for t, r in sorted(all_tokens, key=lambda x: x[1])]
        write_atomic(output, "".join(lines).encode("ascii"), "rank file")
    return Extension(new, old, old + len(new_texts), learned, stop, before, after, "tiktoken")
