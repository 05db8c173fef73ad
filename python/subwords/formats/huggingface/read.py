"""Hugging Face ``tokenizers`` files: ``tokenizer.json`` (version 1.0) and GPT-2 style
``vocab.json`` + ``merges.txt``, read and written token for token.

``load(path)`` reads the file, checks every component against what subwords reproduces exactly,
and refuses (``ModelFileError`` naming the component) anything else; the pipeline then runs in
the Rust core (``subwords_core::hf``). Supported:

* models ``BPE`` (``unk_token``, ``continuing_subword_prefix``, ``end_of_word_suffix``,
  ``fuse_unk``, ``byte_fallback``, ``ignore_merges``; ``dropout`` must be null) and
  ``WordPiece`` (``unk_token``, ``continuing_subword_prefix``, ``max_input_chars_per_word``)
  and ``Unigram`` (``unk_id`` required, ``byte_fallback``; tokenizers' double-precision Viterbi
  per pre-token, unknown runs fused, ``subwords_core::hf_unigram``); ``WordLevel`` is refused;
* normalizers ``BertNormalizer``, ``Lowercase``, ``NFC``/``NFD``/``NFKC``/``NFKD``, ``Strip``,
  ``StripAccents``, ``Prepend``, ``Replace`` (a literal string pattern, or the regexes ``\\s+``
  and `` {2,}``), ``Precompiled`` (SentencePiece's character map, by grapheme as tokenizers
  applies it), ``Sequence``;
* pre-tokenizers ``ByteLevel`` (last in a sequence), ``Metaspace``, ``BertPreTokenizer``,
  ``Whitespace``, ``WhitespaceSplit``, ``Digits``, ``Punctuation`` (``Isolated`` or
  ``Contiguous``), ``Split`` (``Regex`` run by fancy-regex, or ``String``; every behavior;
  ``invert``), ``Sequence``;
* post-processors ``RobertaProcessing``, ``BertProcessing``, ``TemplateProcessing``,
  ``ByteLevel``, ``Sequence`` (applied with ``add_special_tokens=True``);
* decoders ``ByteLevel``, ``Metaspace``, ``WordPiece``, ``BPEDecoder``, ``Replace``,
  ``ByteFallback``, ``Fuse``, ``Strip``, ``Sequence``;
* ``added_tokens`` with every flag (``single_word``, ``lstrip``, ``rstrip``, ``normalized``).

Special tokens: ``tokenizers`` always cuts added tokens out of the text. Here an added token
marked ``special`` is matched only when the call allows it (``allowed_special="all"`` or a set of
surfaces); by default its surface is encoded as ordinary text. Added tokens that are not special
(extra vocabulary, not control tokens) always match, as in ``tokenizers``.

``encode`` returns the model's ids; ``encode_pieces`` tokenizers' own tokens (an added token's
matched text, a Unigram model's unknown characters), which ``decode_pieces`` decodes;
``add_special_tokens=True`` applies the file's post-processor (``[CLS] … [SEP]``, ``<s> … </s>``,
a template), and ``pair=`` encodes a pair the same way. ``decode`` skips special tokens by default, as ``tokenizers`` does.

Reading (load time): the model's vocab (an object, or a Unigram model's list of
``[piece, score]``) and merges, nearly all of a file, are read from its bytes by the core
(``_core.HfTables.split``) and only the rest by ``json``; a file that is not plainly well formed
there is read whole by ``json``, and the checks below name what is wrong. ``vocab.json`` and
``merges.txt`` are read the same way (``_core.HfTables.vocab_merges``). The id <-> token dicts
are made on first use. A 30,522-token BERT file took 23 ms
to load before this, and 9-10 ms after, against ``tokenizers``' 17-21 ms in the same runs
(``benchmarks/README.md``).

``export(tok, path, "hf")`` writes a subwords model as ``tokenizer.json``; ``"vocab-merges"``
writes ``vocab.json`` and ``merges.txt`` into the folder ``path`` (created if needed). See
:func:`export` for what can be expressed.
"""

from __future__ import annotations

import base64
import functools
import json
import math
import os
from typing import Any, Callable, Iterable, Optional, Sequence, Union

from ... import _core
from ...errors import InputError, ModelFileError, UnknownPieceError
from ..._api import _first_unencodable, _surrogate_error, _threads, gc_paused
from ..._checks import batch_list, template_arg, text_arg
from ..._io import read_limited
from .._foreign import Foreign, allowed_set, native_call
from ..._specials import allowed_ids

PathLike = Union[str, "os.PathLike[str]"]
#: One JSON object of the file, or of the plan the core reads.
JsonObject = dict[str, Any]
#: A post-processor template: ids and the markers "A" and "B" (where the texts go).
Template = list[Union[int, str]]


def _slots(template: Template) -> list[int]:
    """A template in the core encoder's form: ids, -1 for the text ("A"), -2 for the pair's
    second text ("B")."""
    return [-1 if x == "A" else -2 if x == "B" else int(x) for x in template]


#: Ids at or above this are refused: the id -> token table is a list.
MAX_ID = 1 << 24
#: A tokenizer.json bigger than this is refused before it is parsed.
MAX_FILE_BYTES = 1 << 30
#: The byte each character of GPT-2's byte alphabet stands for (the core's table, inverted).
_GPT2_CHAR_TO_BYTE: dict[str, int] = {c: b for b, c in enumerate(_core.gpt2_byte_chars())}

# -- reading ------------------------------------------------------------------------------------

def _refuse(where: str, what: str) -> ModelFileError:
    return ModelFileError(f"{where}: {what}")


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    # dict() at C speed, and the slow walk only to name a key that is there twice (a 32k vocab
    # object took a fifth of the load in a Python loop)
    d: dict[str, Any] = dict(pairs)
    if len(d) != len(pairs):
        seen: set[str] = set()
        for k, _ in pairs:
            if k in seen:
                raise ModelFileError(f"JSON object has the key {k!r} twice (a duplicate token?); fix the file")
            seen.add(k)
    return d


def _parse_json(raw: Union[bytes, str], path: str) -> Any:
    try:
        return json.loads(raw.decode("utf-8") if isinstance(raw, bytes) else raw, object_pairs_hook=_no_duplicates)
    except UnicodeDecodeError as e:
        raise ModelFileError(f"{path}: not UTF-8 ({e.reason} at byte {e.start}); is it a tokenizer.json?") from None
    except RecursionError:
        raise ModelFileError(f"{path}: JSON nested too deeply to be a tokenizer.json") from None
    except json.JSONDecodeError as e:
        raise ModelFileError(f"{path}: not valid JSON ({e.msg} at line {e.lineno} column {e.colno}); "
                             f"the file may be truncated") from None
    except ModelFileError as e:
        raise ModelFileError(f"{path}: {e}") from None


class _Spec:
    """Typed access to one JSON object of the file, with errors that name where it is."""

    def __init__(self, obj: Any, where: str):
        if not isinstance(obj, dict):
            raise _refuse(where, f"expected a JSON object, got {type(obj).__name__}")
        self.obj = obj
        self.where = where

    def get(self, key: str, kinds: tuple[type, ...], default: Any = None, required: bool = False) -> Any:
        if key not in self.obj:
            if required:
                raise _refuse(self.where, f"missing {key!r}")
            return default
        v = self.obj[key]
        if v is None and type(None) in kinds:
            return None
        if isinstance(v, bool) and bool not in kinds:
            raise _refuse(self.where, f"{key!r} must be {'/'.join(k.__name__ for k in kinds)}, got {v!r}")
        if not isinstance(v, kinds):
            raise _refuse(self.where, f"{key!r} must be {'/'.join(k.__name__ for k in kinds)}, got {type(v).__name__}")
        return v

    def flag(self, key: str, default: bool) -> bool:
        return bool(self.get(key, (bool,), default))

    def only(self, allowed: Iterable[str]) -> None:
        extra = sorted(set(self.obj) - set(allowed) - {"type"})
        if extra:
            raise _refuse(self.where, f"unknown field {extra[0]!r}; subwords cannot tell what it would change")


def _lone_surrogate(where: str, e: UnicodeEncodeError) -> ModelFileError:
    """JSON's \\uD800-\\uDFFF escapes without their pair parse to a lone surrogate, which is no
    character: no token, normalizer or added token can hold one."""
    bad = e.object[e.start:e.start + 1] if isinstance(e.object, str) else ""
    code = f"U+{ord(bad):04X}" if bad else "a lone surrogate"
    return _refuse(where, f"a string holds {code}, a \\u escape of half a surrogate pair, which is not a "
                          "character; fix the escape in the file")


def _id(v: object, where: str) -> int:
    if isinstance(v, bool) or not isinstance(v, int) or not 0 <= v < MAX_ID:
        raise _refuse(where, f"id {v!r} is not a whole number from 0 to {MAX_ID - 1}")
    return v


def _one_char(v: Any, where: str) -> str:
    if not isinstance(v, str) or len(v) != 1:
        raise _refuse(where, f"replacement must be one character, got {v!r}")
    return v


#: The one regex pattern Replace may use: runs of White_Space (subwords' own export writes it).
WHITESPACE_RUNS = "\\s+"
#: and runs of two or more spaces (converted SentencePiece models: T5, ALBERT, XLM-R)
SPACE_RUNS = " {2,}"


def _string_pattern(spec: _Spec, allow_runs: bool = False) -> Optional[str]:
    """A Replace pattern: its literal string, or None for the regex ``\\s+`` when allowed."""
    pat = spec.get("pattern", (dict,), required=True)
    if set(pat) == {"String"} and isinstance(pat["String"], str):
        if not pat["String"]:
            raise _refuse(spec.where, "an empty String pattern is not supported")
        return pat["String"]
    if allow_runs and pat == {"Regex": WHITESPACE_RUNS}:
        return None
    if allow_runs and pat == {"Regex": SPACE_RUNS}:
        return SPACE_RUNS
    if "Regex" in pat:
        raise _refuse(spec.where, f"a Regex pattern ({pat['Regex']!r}) is not supported; only literal String patterns are")
    raise _refuse(spec.where, f"pattern {pat!r} is neither {{'String': ...}} nor {{'Regex': ...}}")


def _steps(obj: Any, where: str, seq_key: str, one: Callable[[_Spec, str, str], list[JsonObject]]) -> list[JsonObject]:
    """A component, or a ``Sequence`` of them (nested or not) flattened in order; ``one(spec,
    type, where)`` reads a single component."""
    if obj is None:
        return []
    s = _Spec(obj, where)
    kind = s.get("type", (str,), required=True)
    if kind == "Sequence":
        s.only([seq_key])
        out: list[JsonObject] = []
        for k, x in enumerate(s.get(seq_key, (list,), required=True)):
            out += _steps(x, f"{where}.{seq_key}[{k}]", seq_key, one)
        return out
    return one(s, kind, f"{where} {kind}")


def _normalizers(obj: Any, where: str) -> list[JsonObject]:
    return _steps(obj, where, "normalizers", _normalizer)


def _normalizer(s: "_Spec", kind: str, w: str) -> list[JsonObject]:
    if kind == "BertNormalizer":
        s.only(["clean_text", "handle_chinese_chars", "strip_accents", "lowercase"])
        lower = s.flag("lowercase", True)
        strip = s.get("strip_accents", (bool, type(None)))
        return [{"type": "Bert", "clean_text": s.flag("clean_text", True),
                 "handle_chinese_chars": s.flag("handle_chinese_chars", True),
                 "strip_accents": lower if strip is None else bool(strip), "lowercase": lower}]
    if kind in ("Lowercase", "NFC", "NFD", "NFKC", "NFKD", "StripAccents"):
        s.only([])
        return [{"type": {"NFC": "Nfc", "NFD": "Nfd", "NFKC": "Nfkc", "NFKD": "Nfkd"}.get(kind, kind)}]
    if kind == "Strip":
        s.only(["strip_left", "strip_right"])
        return [{"type": "Strip", "left": s.flag("strip_left", True), "right": s.flag("strip_right", True)}]
    if kind == "Prepend":
        s.only(["prepend"])
        return [{"type": "Prepend", "prepend": s.get("prepend", (str,), required=True)}]
    if kind == "Replace":
        s.only(["pattern", "content"])
        content = s.get("content", (str,), required=True)
        pattern = _string_pattern(s, allow_runs=True)
        if pattern is None:
            return [{"type": "ReplaceWhitespaceRuns", "content": content}]
        if pattern is SPACE_RUNS:
            return [{"type": "ReplaceSpaceRuns", "content": content}]
        return [{"type": "Replace", "pattern": pattern, "content": content}]
    if kind == "Precompiled":
        s.only(["precompiled_charsmap"])
        blob = s.get("precompiled_charsmap", (str, type(None)))
        if not blob:
            raise _refuse(w, "an empty precompiled_charsmap is not supported")
        try:
            raw = base64.b64decode(blob, validate=True)
        except (ValueError, TypeError):
            raise _refuse(w, "precompiled_charsmap is not base64") from None
        return [{"type": "Precompiled", "charsmap": list(raw)}]
    raise _refuse(w, "this normalizer is not supported")


def _pre_tokenizers(obj: Any, where: str) -> list[JsonObject]:
    return _steps(obj, where, "pretokenizers", _pre_tokenizer)


def _pre_tokenizer(s: "_Spec", kind: str, w: str) -> list[JsonObject]:
    if kind == "ByteLevel":
        s.only(["add_prefix_space", "trim_offsets", "use_regex"])
        s.flag("trim_offsets", True)  # offsets only
        return [{"type": "ByteLevel", "add_prefix_space": s.flag("add_prefix_space", True),
                 "use_regex": s.flag("use_regex", True)}]
    if kind == "Metaspace":
        s.only(["replacement", "prepend_scheme", "split", "add_prefix_space", "str_rep"])
        rep = _one_char(s.get("replacement", (str,), "\u2581"), w)
        scheme = s.get("prepend_scheme", (str,))
        if scheme is None:
            scheme = "always" if s.flag("add_prefix_space", True) else "never"
        if scheme not in ("always", "first", "never"):
            raise _refuse(w, f"prepend_scheme {scheme!r} is not always/first/never")
        return [{"type": "Metaspace", "replacement": rep, "prepend_scheme": scheme, "split": s.flag("split", True)}]
    if kind in ("BertPreTokenizer", "Whitespace", "WhitespaceSplit"):
        s.only([])
        return [{"type": {"BertPreTokenizer": "Bert"}.get(kind, kind)}]
    if kind == "Digits":
        s.only(["individual_digits"])
        return [{"type": "Digits", "individual_digits": s.flag("individual_digits", False)}]
    if kind == "Punctuation":
        s.only(["behavior"])
        behavior = s.get("behavior", (str,), "Isolated")
        if behavior not in ("Isolated", "Contiguous"):
            raise _refuse(w, f"behavior {behavior!r} is not supported (Isolated and Contiguous are)")
        return [{"type": "Punctuation", "contiguous": behavior == "Contiguous"}]
    if kind == "Split":
        s.only(["pattern", "behavior", "invert"])
        pattern = s.get("pattern", (dict,))
        if not isinstance(pattern, dict) or len(pattern) != 1 or next(iter(pattern)) not in ("Regex", "String") \
                or not isinstance(next(iter(pattern.values())), str):
            raise _refuse(w, 'Split needs a pattern {"Regex": "..."} or {"String": "..."}')
        (form, source), = pattern.items()
        behavior = s.get("behavior", (str,))
        if behavior not in ("Removed", "Isolated", "MergedWithPrevious", "MergedWithNext", "Contiguous"):
            raise _refuse(w, f"behavior {behavior!r} is not one of Removed, Isolated, MergedWithPrevious, "
                             "MergedWithNext, Contiguous")
        return [{"type": "Split", "pattern": source, "literal": form == "String", "behavior": behavior,
                 "invert": s.flag("invert", False)}]
    raise _refuse(w, "this pre_tokenizer is not supported")


def _vocab(obj: Any, where: str) -> dict[str, int]:
    """Light checks here; the core checks every id (range, each once) while it builds."""
    if not isinstance(obj, dict):
        raise _refuse(where, "vocab must be a JSON object token -> id")
    if not obj:
        raise _refuse(where, "vocab is empty")
    if len(obj) > MAX_ID:
        raise _refuse(where, f"{len(obj)} tokens is more than subwords accepts ({MAX_ID})")
    ids = obj.values()
    # at C speed (type, set, min and max); the Python walk only to name a bad entry
    if set(map(type, ids)) == {int} and 0 <= min(ids) and max(ids) < MAX_ID:
        return obj
    for tok, i in obj.items():
        if type(i) is not int or not 0 <= i < MAX_ID:
            raise _refuse(where, f"token {tok!r}: id {i!r} is not a whole number from 0 to {MAX_ID - 1}")
    return obj


class _Lifted:
    """The model's vocabulary as :class:`_core.HfTables` holds it (read from the file's bytes,
    never made into a dict), looked up as the dict would be."""

    def __init__(self, tables: _core.HfTables) -> None:
        self.tables = tables

    def get(self, token: object) -> Optional[int]:
        if not isinstance(token, str):
            return None
        try:
            return self.tables.get(token)
        except UnicodeEncodeError:  # a lone surrogate: no token of the file holds one
            return None

    def __contains__(self, token: object) -> bool:
        return self.get(token) is not None

    def __getitem__(self, token: str) -> int:
        i = self.get(token)
        if i is None:
            raise KeyError(token)
        return i

    def __len__(self) -> int:
        return len(self.tables)


#: The model's vocabulary: the file's dict, or the tables read from its bytes.
Vocab = Union[dict[str, int], _Lifted]


def _finite_score(entry: object) -> Optional[float]:
    """The score of a Unigram vocab entry ``[piece, score]`` (a non-empty piece, a number that is
    a finite float; not a bool, and not an integer too large for a float), or None."""
    if not isinstance(entry, list) or len(entry) != 2 or not isinstance(entry[0], str) or not entry[0] \
            or type(entry[1]) not in (int, float):
        return None
    try:
        score = float(entry[1])
    except OverflowError:
        return None
    return score if math.isfinite(score) else None


def _model(obj: Any, tables: Optional[_core.HfTables] = None) -> tuple[JsonObject, Vocab, list[Any]]:
    """The model's plan, vocabulary and merges. ``tables``: the vocab and merges read from the
    file's bytes (``_core.HfTables.split``), which the document then holds as ``{}`` and ``[]``."""
    s = _Spec(obj, "model")

    def vocab_of(where: str) -> Vocab:
        v = s.get("vocab", (dict,), required=True)
        return _Lifted(tables) if tables is not None else _vocab(v, where)

    kind = s.get("type", (str,))
    if kind is None:
        kind = "BPE" if "merges" in s.obj else "WordPiece" if "continuing_subword_prefix" in s.obj else None
    w = f"model {kind}"
    if kind == "BPE":
        s.only(["dropout", "unk_token", "continuing_subword_prefix", "end_of_word_suffix", "fuse_unk",
                "byte_fallback", "ignore_merges", "vocab", "merges"])
        if s.get("dropout", (float, int, type(None))) not in (None, 0, 0.0):
            raise _refuse(w, "dropout is not supported (it makes encoding random); set it to null")
        vocab = vocab_of(f"{w} vocab")
        merges = s.get("merges", (list,), required=True)
        prefix = s.get("continuing_subword_prefix", (str, type(None)))
        suffix = s.get("end_of_word_suffix", (str, type(None)))
        unk = s.get("unk_token", (str, type(None)))
        if unk is not None and unk not in vocab:
            raise _refuse(w, f"unk_token {unk!r} is not in the vocab")
        plan = {"type": "Bpe",
                "unk": None if unk is None else vocab[unk],
                "continuing_subword_prefix": prefix, "end_of_word_suffix": suffix,
                "fuse_unk": s.flag("fuse_unk", False), "byte_fallback": s.flag("byte_fallback", False),
                "ignore_merges": s.flag("ignore_merges", False)}
        return plan, vocab, merges
    if kind == "WordPiece":
        s.only(["unk_token", "continuing_subword_prefix", "max_input_chars_per_word", "vocab"])
        vocab = vocab_of(f"{w} vocab")
        unk = s.get("unk_token", (str,), "[UNK]")
        if unk not in vocab:
            raise _refuse(w, f"unk_token {unk!r} is not in the vocab")
        prefix = s.get("continuing_subword_prefix", (str,), "##")
        if not prefix:
            raise _refuse(w, "an empty continuing_subword_prefix is not supported")
        most = s.get("max_input_chars_per_word", (int,), 100)
        if most < 0:
            raise _refuse(w, f"max_input_chars_per_word {most} is negative")
        plan = {"type": "WordPiece", "unk": vocab[unk],
                "continuing_subword_prefix": prefix, "max_input_chars_per_word": min(most, 1 << 40)}
        return plan, vocab, []
    if kind == "Unigram":
        s.only(["unk_id", "vocab", "byte_fallback"])
        pieces = s.get("vocab", (list,), required=True)
        plan = {"type": "Unigram", "byte_fallback": s.flag("byte_fallback", False)}
        if tables is not None:
            # the [piece, score] pairs were read from the file's bytes with the checks below
            # (ids are the places); the core takes the pieces from the tables
            vocab = _Lifted(tables)
            size = len(tables)
        else:
            if not pieces:
                raise _refuse(w, "vocab is empty")
            if len(pieces) > MAX_ID:
                raise _refuse(w, f"{len(pieces)} pieces is more than subwords accepts ({MAX_ID})")
            vocab = {}
            clean = []
            for i, entry in enumerate(pieces):
                score = _finite_score(entry)
                if score is None:
                    raise _refuse(w, f"vocab[{i}] is not a [piece, finite score] pair")
                if entry[0] in vocab:
                    raise _refuse(w, f"vocab: piece {entry[0]!r} appears twice (ids {vocab[entry[0]]} and {i})")
                vocab[entry[0]] = i
                clean.append((entry[0], score))
            plan["pieces"] = clean
            size = len(pieces)
        unk = s.get("unk_id", (int, type(None)))
        if unk is None:
            raise _refuse(w, "a Unigram model without unk_id is not supported (tokenizers fails on unknown characters)")
        if not 0 <= unk < size:
            raise _refuse(w, f"unk_id {unk} is outside the vocab")
        plan["unk"] = unk
        return plan, vocab, []
    raise _refuse(w, "this model type is not supported (BPE and WordPiece are)")


def _added(obj: Any, vocab: Vocab) -> list[JsonObject]:
    if obj is None:
        return []
    if not isinstance(obj, list):
        raise _refuse("added_tokens", "must be a list")
    out = []
    contents: dict[str, int] = {}
    for k, t in enumerate(obj):
        s = _Spec(t, f"added_tokens[{k}]")
        s.only(["id", "content", "single_word", "lstrip", "rstrip", "normalized", "special"])
        content = s.get("content", (str,), required=True)
        i = _id(s.get("id", (int,), required=True), s.where)
        if not content:
            raise _refuse(s.where, "empty content")
        if content in contents and contents[content] != i:
            raise _refuse(s.where, f"{content!r} is listed twice with different ids")
        if content in vocab and vocab[content] != i:
            raise _refuse(s.where, f"{content!r} has id {i} here but {vocab[content]} in the vocab")
        contents[content] = i
        special = s.flag("special", False)
        out.append({"content": content, "normalized_content": None, "id": i, "special": special,
                    "single_word": s.flag("single_word", False), "lstrip": s.flag("lstrip", False),
                    "rstrip": s.flag("rstrip", False), "normalized": s.flag("normalized", not special)})
    return out


def _post_processor(obj: Any) -> Optional[tuple[Template, Template]]:
    """(single, pair) templates: lists of ids and the markers "A"/"B"; None = nothing added."""
    if obj is None:
        return None
    s = _Spec(obj, "post_processor")
    kind = s.get("type", (str,), required=True)
    w = f"post_processor {kind}"

    def pair_of(key: str) -> int:
        v = s.get(key, (list,), required=True)
        if len(v) != 2 or not isinstance(v[0], str):
            raise _refuse(w, f"{key} must be [token, id]")
        return _id(v[1], f"{w} {key}")

    if kind == "ByteLevel":
        s.only(["add_prefix_space", "trim_offsets", "use_regex"])
        return None
    if kind == "RobertaProcessing":
        s.only(["sep", "cls", "trim_offsets", "add_prefix_space"])
        cls, sep = pair_of("cls"), pair_of("sep")
        return [cls, "A", sep], [cls, "A", sep, sep, "B", sep]
    if kind == "BertProcessing":
        s.only(["sep", "cls"])
        cls, sep = pair_of("cls"), pair_of("sep")
        return [cls, "A", sep], [cls, "A", sep, "B", sep]
    if kind == "TemplateProcessing":
        s.only(["single", "pair", "special_tokens"])
        specials = s.get("special_tokens", (dict,), {})
        ids: dict[str, list[int]] = {}
        for name, st in specials.items():
            sp = _Spec(st, f"{w} special_tokens[{name!r}]")
            ids[name] = [_id(x, sp.where) for x in sp.get("ids", (list,), required=True)]

        def template(key: str) -> Template:
            out: Template = []
            for k, piece in enumerate(s.get(key, (list,), required=True)):
                p = _Spec(piece, f"{w} {key}[{k}]")
                if "SpecialToken" in p.obj:
                    name = _Spec(p.obj["SpecialToken"], p.where).get("id", (str,), required=True)
                    if name not in ids:
                        raise _refuse(p.where, f"special token {name!r} is not in special_tokens")
                    out += ids[name]
                elif "Sequence" in p.obj:
                    seq = _Spec(p.obj["Sequence"], p.where).get("id", (str,), required=True)
                    if seq not in ("A", "B"):
                        raise _refuse(p.where, f"sequence {seq!r} is not A or B")
                    out.append(seq)
                else:
                    raise _refuse(p.where, "neither SpecialToken nor Sequence")
            return out

        return template("single"), template("pair")
    if kind == "Sequence":
        s.only(["processors"])
        found = None
        for k, p in enumerate(s.get("processors", (list,), required=True)):
            t = _post_processor(p)
            if t is not None:
                if found is not None:
                    raise _refuse(w, "two processors that both add tokens are not supported")
                found = t
        return found
    raise _refuse(w, "this post_processor is not supported")


def _trim_offsets(obj: Any) -> Optional[bool]:
    """The post-processor's ``trim_offsets`` (ByteLevel, RobertaProcessing, or the first of
    them in a Sequence): None when it is off, else its ``add_prefix_space`` (both default to
    true in tokenizers). It changes offsets only."""
    if not isinstance(obj, dict):
        return None
    kind = obj.get("type")
    if kind in ("ByteLevel", "RobertaProcessing"):
        if not obj.get("trim_offsets", True):
            return None
        return bool(obj.get("add_prefix_space", True))
    if kind == "Sequence":
        for p in obj.get("processors") or ():
            if isinstance(p, dict) and p.get("type") in ("ByteLevel", "RobertaProcessing"):
                return _trim_offsets(p)
    return None


def _decoders(obj: Any, where: str) -> list[JsonObject]:
    return _steps(obj, where, "decoders", _decoder)


def _decoder(s: "_Spec", kind: str, w: str) -> list[JsonObject]:
    if kind == "ByteLevel":
        s.only(["add_prefix_space", "trim_offsets", "use_regex"])
        return [{"type": "ByteLevel"}]
    if kind == "Metaspace":
        s.only(["replacement", "prepend_scheme", "split", "add_prefix_space", "str_rep"])
        scheme = s.get("prepend_scheme", (str,))
        if scheme is None:
            scheme = "always" if s.flag("add_prefix_space", True) else "never"
        return [{"type": "Metaspace", "replacement": _one_char(s.get("replacement", (str,), "\u2581"), w),
                 "prepend": scheme != "never"}]
    if kind == "WordPiece":
        s.only(["prefix", "cleanup"])
        return [{"type": "WordPiece", "prefix": s.get("prefix", (str,), "##"), "cleanup": s.flag("cleanup", True)}]
    if kind == "BPEDecoder":
        s.only(["suffix"])
        return [{"type": "BPEDecoder", "suffix": s.get("suffix", (str,), "</w>")}]
    if kind == "Replace":
        s.only(["pattern", "content"])
        return [{"type": "Replace", "pattern": _string_pattern(s), "content": s.get("content", (str,), required=True)}]
    if kind in ("ByteFallback", "Fuse"):
        s.only([])
        return [{"type": kind}]
    if kind == "Strip":
        s.only(["content", "start", "stop"])
        return [{"type": "Strip", "content": _one_char(s.get("content", (str,), " "), w),
                 "start": s.get("start", (int,), 0), "stop": s.get("stop", (int,), 0)}]
    raise _refuse(w, "this decoder is not supported")


# -- decoding -----------------------------------------------------------------------------------

_CLEANUPS = ((" .", "."), (" ?", "?"), (" !", "!"), (" ,", ","), (" ' ", "'"), (" n't", "n't"),
             (" 'm", "'m"), (" do not", " don't"), (" 's", "'s"), (" 've", "'ve"), (" 're", "'re"))


def _byte_fallback(tokens: list[str]) -> list[str]:
    out: list[str] = []
    pending = bytearray()
    count = 0

    def flush() -> None:
        nonlocal count
        if count:
            try:
                out.append(pending.decode("utf-8"))
            except UnicodeDecodeError:
                out.extend("\ufffd" for _ in range(count))
            pending.clear()
            count = 0

    for t in tokens:
        if len(t) == 6 and t.startswith("<0x") and t.endswith(">"):
            try:
                b = int(t[3:5], 16)
            except ValueError:
                b = -1
            if b >= 0:
                pending.append(b)
                count += 1
                continue
        flush()
        out.append(t)
    flush()
    return out


def _decode_chain(decoders: list[JsonObject], tokens: list[str]) -> str:
    if not decoders:
        return " ".join(tokens)
    for d in decoders:
        kind = d["type"]
        if kind == "ByteLevel":
            table = _GPT2_CHAR_TO_BYTE
            raw = bytearray()
            for t in tokens:
                bs = [table.get(c) for c in t]
                raw += bytes(bs) if None not in bs else t.encode("utf-8")  # type: ignore[arg-type]  # no None in bs: all ints
            tokens = [raw.decode("utf-8", errors="replace")]
        elif kind == "Metaspace":
            rep, drop = d["replacement"], d["prepend"]
            tokens = ["".join(("" if (i == 0 and drop) else " ") if c == rep else c for c in t)
                      for i, t in enumerate(tokens)]
        elif kind == "WordPiece":
            out = []
            for i, t in enumerate(tokens):
                if i:
                    t = t[len(d["prefix"]):] if t.startswith(d["prefix"]) else " " + t
                if d["cleanup"]:
                    for old, new in _CLEANUPS:
                        t = t.replace(old, new)
                out.append(t)
            tokens = out
        elif kind == "BPEDecoder":
            n = len(tokens)
            tokens = [t.replace(d["suffix"], "" if i == n - 1 else " ") for i, t in enumerate(tokens)]
        elif kind == "Replace":
            tokens = [t.replace(d["pattern"], d["content"]) for t in tokens]
        elif kind == "ByteFallback":
            tokens = _byte_fallback(tokens)
        elif kind == "Fuse":
            tokens = ["".join(tokens)]
        elif kind == "Strip":
            c, start, stop = d["content"], d["start"], d["stop"]
            out = []
            for t in tokens:
                a = 0
                while a < min(start, len(t)) and t[a] == c:
                    a += 1
                z = len(t)
                k = 0
                while k < stop and z > a and t[z - 1] == c:
                    z -= 1
                    k += 1
                out.append(t[a:z])
            tokens = out
    return "".join(tokens)


# -- the tokenizer ------------------------------------------------------------------------------

class HuggingFace(Foreign):
    """A ``tokenizers`` pipeline read from ``tokenizer.json`` (or vocab.json + merges.txt).

    Ids are the file's ids. ``encode(text)`` gives the model's ids with special tokens treated as
    text; ``allowed_special`` lets them match; ``add_special_tokens=True`` (and ``pair=``) apply
    the post-processor."""

    format = "hf"
    _template_default = True  # tokenizers' and transformers' encode apply the post-processor

    def __init__(self, doc: Any, source: str, format: str = "hf", tables: Optional[_core.HfTables] = None) -> None:
        """``doc``: the file's JSON document; ``tables``: its model's vocab and merges when they
        were read from the file's bytes (``_core.HfTables.split``; the document then holds ``{}``
        and ``[]`` in their places)."""
        self.format = format
        # what a pickle holds: the document (with the tables' places empty when they were read
        # from the bytes) and whether the tables go beside it (__reduce__)
        self._made_from = (doc, source, tables is not None)
        s = _Spec(doc, source)
        s.only(["version", "truncation", "padding", "added_tokens", "normalizer", "pre_tokenizer",
                "post_processor", "decoder", "model"])
        version = s.get("version", (str,), required=True)
        if version != "1.0":
            raise _refuse(source, f"version {version!r}: subwords reads tokenizer.json version 1.0")
        for key in ("truncation", "padding"):
            if s.get(key, (dict, type(None))) is not None:
                raise _refuse(source, f"{key} is set; subwords does not truncate or pad (set it to null)")
        model, vocab, merges = _model(s.get("model", (dict,), required=True), tables)
        normalizers = _normalizers(s.get("normalizer", (dict, type(None))), "normalizer")
        pre = _pre_tokenizers(s.get("pre_tokenizer", (dict, type(None))), "pre_tokenizer")
        if any(p["type"] == "ByteLevel" for p in pre[:-1]):
            raise _refuse("pre_tokenizer", "a step after ByteLevel is not supported")
        if model["type"] == "WordPiece" and any(p["type"] == "ByteLevel" for p in pre):
            raise _refuse("pre_tokenizer", "ByteLevel with a WordPiece model is not supported")
        added = _added(s.get("added_tokens", (list, type(None))), vocab)
        if normalizers and any(t["normalized"] for t in added):
            for t in added:
                if t["normalized"]:
                    try:
                        t["normalized_content"] = _core.HfPipeline.normalize_with(normalizers, t["content"])
                    except UnicodeEncodeError as e:
                        raise _lone_surrogate(source, e) from None
        self._added_tokens = added
        # the token tokenizers prints for an added token's id: its normalized form for a
        # normalized one, the last such token's for an id listed twice
        added_form = {t["id"]: t["normalized_content"] or t["content"] for t in added}
        self._specials = {t["content"]: t["id"] for t in added if t["special"]}
        # tokenizers skips an id in decode when its token (normalized, for a normalized added
        # token) is a special token's content: a normalized special whose form changes is kept
        self._special_ids = frozenset(i for i in self._specials.values() if added_form[i] in self._specials)
        self._template = _post_processor(s.get("post_processor", (dict, type(None))))
        self._trim = _trim_offsets(s.get("post_processor", (dict, type(None))))
        self._decoders = _decoders(s.get("decoder", (dict, type(None))), "decoder")
        plan = {"normalizers": normalizers, "pre_tokenizers": pre, "model": model, "added": added}
        try:
            # the tables read from the file's bytes, or made of the document's dict and list
            self._tables = vocab.tables if isinstance(vocab, _Lifted) else _core.HfTables.from_objects(vocab, merges)
            top = self._tables.max_id()
            limit = max([-1 if top is None else top, *added_form]) + 1
            for tmpl in self._template or ():
                for x in tmpl:
                    if isinstance(x, int):
                        limit = max(limit, x + 1)
            self._pipe = _core.HfPipeline(plan, self._tables, limit)
        except UnicodeEncodeError as e:
            raise _lone_surrogate(source, e) from None
        except (TypeError, OverflowError) as e:
            raise _refuse("model merges", f"each merge is 'a b' or ['a', 'b'] ({e})") from None
        self._enc = self._pipe.encoder()
        # the post-processor, applied by the core's encoder: ids, -1 for the text, -2 for the pair's
        self._enc_t = self._enc if self._template is None else self._enc.with_template(
            *(_slots(t) for t in self._template))
        self._native_encode()

    def _native_encode(self) -> None:
        """``encode(text)``, the call users make most, as one native call with no Python frame
        (the post-processor applied, as the method below does by default); any other call (a
        keyword, a text that is not exactly a str or holds a lone surrogate) goes to the method
        with the same arguments. A subclass that overrides ``encode`` keeps its own."""
        if type(self).encode is HuggingFace.encode:
            self.__dict__["encode"] = native_call(self, HuggingFace.encode,
                                                  lambda general: _core.FaceCall.encoder(self._enc_t, general))

    def __copy__(self) -> HuggingFace:
        # a shallow copy shares the core's tables and pipeline (nothing in them changes); the
        # native call is this object's own (its general path holds this object): the copy
        # makes its own
        c = type(self).__new__(type(self))
        c.__dict__.update((k, v) for k, v in self.__dict__.items() if k != "encode")
        c._native_encode()
        return c

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        """A pickle (and a deep copy) holds the document and the model's vocab and merges; the
        copy is read from them again."""
        doc, source, lifted = self._made_from
        tables = (self._tables.pairs(), self._tables.merges()) if lifted else None
        return _rebuild, (type(self), doc, source, self.format, tables)

    # -- the id <-> token tables, made on first use (a load that only encodes never needs them)
    @functools.cached_property
    def _model_token(self) -> dict[int, str]:
        """The model's own token of each id: its pieces are these, not the added tokens' forms."""
        return {i: t for t, i in self._tables.pairs()}

    @functools.cached_property
    def _id_to_token(self) -> dict[int, str]:
        out = self._model_token.copy()
        for t in self._added_tokens:
            # tokenizers prints a normalized added token in its normalized form
            out[t["id"]] = t["normalized_content"] or t["content"]
        return out

    @functools.cached_property
    def _token_to_id(self) -> dict[str, int]:
        out = dict(self._tables.pairs())
        for t in self._added_tokens:
            out[t["content"]] = t["id"]
        for t in self._added_tokens:
            # ... and reads it back in that form too (piece_to_id(id_to_piece(i)) == i)
            if t["normalized_content"]:
                out.setdefault(t["normalized_content"], t["id"])
        return out

    # -- encoding ---------------------------------------------------------------------------
    def _allowed(self, allowed_special: Union[str, Iterable[str]]) -> list[int]:
        """The ids of the special added tokens a call allows (the others always match)."""
        return allowed_ids(allowed_special, self._specials)

    def encode(self, text: str, *, allowed_special: Union[str, Iterable[str]] = (),
               add_special_tokens: Optional[bool] = None, pair: Optional[str] = None) -> list[int]:
        """Ids of ``text`` (and ``pair``), the post-processor applied when ``add_special_tokens``
        (by default, as tokenizers' and transformers' ``encode``)."""
        if pair is None and not allowed_special and add_special_tokens is None and type(text) is str:
            # a plain call goes to the core directly (which refuses a lone surrogate itself): the
            # checks and the text's UTF-8 copy were a tenth of a call per line
            try:
                return self._enc_t.encode(text, None, [], True)
            except UnicodeEncodeError as e:
                raise _surrogate_error(e, "the text") from None
        add_special_tokens = template_arg(add_special_tokens, True)
        enc = self._enc_t if add_special_tokens else self._enc
        return enc.encode(_text(text), None if pair is None else _text(pair), self._allowed(allowed_special),
                          add_special_tokens)

    def _encode(self, text: str, allowed: frozenset[str]) -> list[int]:
        return self._enc.encode(_text(text), None, self._allowed(allowed))

    def _encode_batch(self, texts: Iterable[str], *, threads: Optional[int] = None,
                      allowed_special: Union[str, Iterable[str]] = (),
                      add_special_tokens: Optional[bool] = None) -> list[list[int]]:
        texts = _texts(texts)
        threads = _threads(threads)
        add_special_tokens = template_arg(add_special_tokens, True)
        enc = self._enc_t if add_special_tokens else self._enc
        try:
            with gc_paused():
                return enc.encode_batch(texts, threads, self._allowed(allowed_special), add_special_tokens)
        except UnicodeEncodeError as e:
            raise _surrogate_error(e, f"text {_first_unencodable(texts)} of the batch") from None

    def encode_buffers(self, batch: Sequence[str], *, threads: Optional[int], width: int, eos: Optional[int] = None,
                       allowed_special: Union[str, Iterable[str]] = (),
                       add_special_tokens: Optional[bool] = None) -> tuple[bytearray, bytearray]:
        """The ids as one flat buffer filled in the core (see ``Foreign.encode_buffers``)."""
        if eos is not None:
            self.id_to_piece(eos)
        texts = _texts(batch)
        add_special_tokens = template_arg(add_special_tokens, True)
        enc = self._enc_t if add_special_tokens else self._enc
        try:
            return enc.encode_batch_flat(texts, _threads(threads), width, self._allowed(allowed_special),
                                         add_special_tokens, [] if eos is None else [eos])
        except UnicodeEncodeError as e:
            raise _surrogate_error(e, f"text {_first_unencodable(texts)} of the batch") from None

    def encode_pieces(self, text: str, *, allowed_special: Union[str, Iterable[str]] = (),
                      add_special_tokens: Optional[bool] = None) -> list[str]:
        """tokenizers' tokens of ``text`` (``Encoding.tokens``): each id's vocabulary entry, except
        an added token, which is the text it matched (with the whitespace ``lstrip``/``rstrip``
        took, normalized for a ``normalized`` one), and under a Unigram model an unknown id, which
        is the characters it stands for. :meth:`decode_pieces` reads them back."""
        ids, surfaces = self._pipe.encode_surfaces(_text(text), self._allowed(allowed_special))
        model = self._model_token
        pieces = [model[i] if i in model else self.id_to_piece(i) for i in ids]
        for k, surface in surfaces:
            pieces[k] = surface
        if not template_arg(add_special_tokens, True) or self._template is None:
            return pieces
        # the template's ids around the text's pieces (no pair here, as encode_pieces has none)
        out: list[str] = []
        for x in self._template[0]:
            if x == "A":
                out += pieces
            elif isinstance(x, int):
                out.append(self.id_to_piece(x))
        return out

    def encode_with_offsets(self, text: str, *,
                            allowed_special: Union[str, Iterable[str]] = ()) -> list[tuple[int, int, int]]:
        """``(id, start, end)`` for each id of :meth:`encode` (``allowed_special`` as there; no
        template), in code points of ``text``: tokenizers' ``Encoding.offsets`` as its Python
        binding gives them. A token of normalized text spans the original characters it came
        from (``ﬁ`` under NFKC gives ``f`` and ``i`` both the ligature); an added token spans
        its match and the whitespace ``lstrip``/``rstrip`` took; the post-processor's
        ``trim_offsets`` takes a token's leading and trailing spaces off its span."""
        return self._pipe.encode_offsets(_text(text), self._allowed(allowed_special), self._trim)

    # -- decoding ---------------------------------------------------------------------------
    def decode_pieces(self, pieces: Iterable[str], *, skip_special_tokens: bool = True) -> str:
        """Text of tokens through the file's decoder, as tokenizers' ``decoder.decode(tokens)``:
        the tokens of :meth:`encode_pieces` need not be vocabulary entries (an unknown
        character's own text, an added token with its whitespace). Special tokens are skipped
        by default where :meth:`decode` skips their ids."""
        tokens = []
        for p in pieces:
            if not isinstance(p, str):
                raise InputError(f"pieces must be strings, got {type(p).__name__}")
            # a special token's piece is its content, or that with the whitespace it took; it
            # is skipped when decode skips its id (an unknown character's text is kept)
            if skip_special_tokens and self._specials.get(p.strip(), -1) in self._special_ids:
                continue
            tokens.append(p)
        return _decode_chain(self._decoders, tokens)

    def decode(self, ids: Iterable[int], *, skip_special_tokens: bool = True) -> str:
        """Text of ``ids`` through the file's decoder; special tokens are skipped by default,
        as ``tokenizers`` does. An id with no token is an error (``tokenizers`` drops it)."""
        tokens = []
        for i in ids:
            if skip_special_tokens and i in self._special_ids:
                continue
            tokens.append(self.id_to_piece(i))
        return _decode_chain(self._decoders, tokens)

    def id_to_piece(self, id: int) -> str:
        try:
            return self._id_to_token[id]
        except (KeyError, TypeError):
            raise UnknownPieceError(f"id {id!r} has no token in this vocabulary") from None

    def piece_to_id(self, piece: str) -> int:
        try:
            return self._token_to_id[piece]
        except (KeyError, TypeError):
            raise UnknownPieceError(f"{piece!r} is not a token of this vocabulary") from None

    @property
    def vocab_size(self) -> int:
        return len(self._id_to_token)

    @property
    def special_tokens(self) -> dict[str, int]:
        return dict(self._specials)

    def normalize(self, text: str) -> str:
        return self._pipe.normalize(_text(text))


def _texts(texts: Iterable[str]) -> list[str]:
    """A batch's texts, checked by the core as ``batch_arg`` does, as it reads them; a lone
    surrogate is found by the core (which refuses it) and then named (``_first_unencodable``),
    so no text is encoded twice."""
    return batch_list(texts)


def _text(t: object) -> str:
    t = text_arg(t)
    try:
        t.encode("utf-8")
    except UnicodeEncodeError as e:
        raise _surrogate_error(e, "the text") from None
    return t


# -- load -----------------------------------------------------------------------------------------

def _vocab_merges_paths(p: str) -> tuple[str, str]:
    if os.path.isdir(p):
        return os.path.join(p, "vocab.json"), os.path.join(p, "merges.txt")
    base = os.path.basename(p)
    d = os.path.dirname(p)
    if base.endswith("vocab.json"):
        return p, os.path.join(d, base[: -len("vocab.json")] + "merges.txt")
    if base.endswith("merges.txt"):
        return os.path.join(d, base[: -len("merges.txt")] + "vocab.json"), p
    return p + "vocab.json", p + "merges.txt"


def _parse_merges_txt(raw: bytes, path: str) -> list[str]:
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise ModelFileError(f"{path}: not UTF-8 ({e.reason} at byte {e.start})") from None
    lines = text.split("\n")
    # line numbers as an editor shows them: the #version line, when there is one, is line 1
    first = 1
    if lines and lines[0].startswith("#version"):
        lines = lines[1:]
        first = 2
    out = []
    for n, line in enumerate(lines, first):
        line = line.rstrip("\r")
        if not line:
            continue
        if len(line.split(" ")) != 2:
            raise ModelFileError(f"{path}: line {n}: {line!r} is not two tokens separated by one space")
        out.append(line)
    return out


def _rebuild(cls: type[HuggingFace], doc: Any, source: str, format: str,
             tables: Optional[tuple[list[tuple[str, int]], list[tuple[str, str]]]]) -> HuggingFace:
    """Unpickles a :class:`HuggingFace` (``tables``: the vocab's (token, id) in the file's order
    and the merges in rank order, when the document holds neither)."""
    with gc_paused():
        if tables is None:
            return cls(doc, source, format)
        pairs, merges = tables
        return cls(doc, source, format, _core.HfTables.from_objects(dict(pairs), [list(m) for m in merges]))


def load(path: PathLike, format: str = "hf", *, add_prefix_space: bool = False,
         special_tokens: Optional[Iterable[str]] = None, **options: Any) -> HuggingFace:
    """A tokenizer from a ``tokenizer.json`` (file or folder holding one), or with
    ``format="vocab-merges"`` from GPT-2 style ``vocab.json`` + ``merges.txt``: a folder holding
    both, either file (the other beside it, same prefix), or a prefix (``dir/name-`` for
    ``dir/name-vocab.json``). vocab-merges files are byte-level BPE as GPT-2 (``ByteLevel``
    pre-tokenizer and decoder; ``add_prefix_space`` as for RoBERTa); ``special_tokens`` lists
    the vocab entries that are special (default: ``<|endoftext|>`` when present)."""
    if options:
        raise InputError(f"unknown load options {sorted(options)} for format {format!r}")
    # no cyclic collections while the JSON's objects and the tables are made: tens of
    # thousands of small lists (the merges) set them off, and they cannot form cycles
    with gc_paused():
        return _load(path, format, add_prefix_space, special_tokens)


def _load(path: PathLike, format: str, add_prefix_space: bool, special_tokens: Optional[Iterable[str]]) -> HuggingFace:
    p = os.fspath(path)
    if format == "hf":
        if add_prefix_space or special_tokens is not None:
            raise InputError("add_prefix_space and special_tokens apply to format='vocab-merges'; "
                             "a tokenizer.json says them itself")
        if os.path.isdir(p):
            p = os.path.join(p, "tokenizer.json")
        raw = read_limited(p, MAX_FILE_BYTES, "tokenizer.json")
        # the model's vocab and merges read straight from the bytes, the rest here; a file that
        # is not plainly well formed there is read whole, for the checks to name what is wrong
        got = _core.HfTables.split(raw)
        if got is not None:
            rest, tables = got
            return HuggingFace(_parse_json(rest, p), os.path.basename(p), "hf", tables)
        doc = _parse_json(raw, p)
        if isinstance(doc, dict) and "model" not in doc and "version" not in doc:
            vpath, mpath = _vocab_merges_paths(p)
            if os.path.exists(mpath):
                # a vocab.json is JSON too: read it with the merges.txt beside it
                return _load(path, "vocab-merges", False, None)
            raise _refuse(os.path.basename(p), "no 'version' and no 'model': not a tokenizer.json (a vocab.json "
                                               "needs its merges.txt beside it; pass format='vocab-merges')")
        return HuggingFace(doc, os.path.basename(p), "hf")
    if format != "vocab-merges":
        raise InputError(f"format={format!r}: this module reads 'hf' and 'vocab-merges'")
    vpath, mpath = _vocab_merges_paths(p)
    vraw = read_limited(vpath, MAX_FILE_BYTES, "tokenizer.json")
    mraw = read_limited(mpath, MAX_FILE_BYTES, "merges.txt")
    # both read in the core when they are plainly well formed, else here, where the checks
    # name what is wrong
    lifted = _core.HfTables.vocab_merges(vraw, mraw)
    vocab: Any
    vocab_obj: Any
    merges: list[str]
    if lifted is not None:
        vocab, vocab_obj, merges = _Lifted(lifted), {}, []
    else:
        vocab_obj = vocab = _parse_json(vraw, vpath)
        merges = _parse_merges_txt(mraw, mpath)
        if not isinstance(vocab, dict):
            raise ModelFileError(f"{vpath}: a vocab.json is a JSON object token -> id")
    if special_tokens is None:
        specials = [t for t in ("<|endoftext|>",) if t in vocab]
    else:
        specials = list(special_tokens)
        for t in specials:
            if t not in vocab:
                raise InputError(f"special token {t!r} is not in {vpath}")
    doc = {
        "version": "1.0", "truncation": None, "padding": None,
        "added_tokens": [{"id": vocab[t], "content": t, "single_word": False, "lstrip": False, "rstrip": False,
                          "normalized": False, "special": True} for t in specials],
        "normalizer": None,
        "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": bool(add_prefix_space), "trim_offsets": True,
                          "use_regex": True},
        "post_processor": None,
        "decoder": {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True, "use_regex": True},
        "model": {"type": "BPE", "dropout": None, "unk_token": None, "continuing_subword_prefix": None,
                  "end_of_word_suffix": None, "fuse_unk": False, "byte_fallback": False, "vocab": vocab_obj,
                  "merges": merges},
    }
    try:
        return HuggingFace(doc, os.path.basename(vpath), "vocab-merges", lifted)
    except ModelFileError as e:
        raise ModelFileError(f"{vpath} + {os.path.basename(mpath)}: {e}") from None
