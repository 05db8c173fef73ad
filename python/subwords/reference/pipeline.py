"""The learners' shared pipeline: options checked, the corpus read and counted, the alphabet
chosen, and the size floor (DESIGN section 2's size accounting). ``training``, ``wordpiece`` and
``unigram`` all build on it; it imports none of them.
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterable, Mapping, Sized
from typing import Any, Optional, Union

from subwords.errors import InputError, SubwordsError

from . import bpe
from .spelling import MARKER, UNK, WHITESPACE, Piece, RowKey, Spelling, byte_row, check_parts, check_text, key_order

#: What ``train`` learns from: a count table, a path, or texts (and paths) one by one.
Data = Union[Mapping[str, int], "os.PathLike[str]", Iterable[Union[str, "os.PathLike[str]"]]]
#: A unit spelled in symbols.
Unit = tuple[Piece, ...]

MODELS = ("bpe", "word", "wordpiece", "unigram")
SPELLINGS = ("end", "continuation", "front", "bytes")
NORMALIZATIONS = ("whitespace_runs", "stripped_ends", "mark_in_text")


# ------------------------------------------------------------------------------------------------
# options


def _is_int(x: object) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


def _need(cond: bool, message: str) -> None:
    if not cond:
        raise SubwordsError(message)


def _self_overlaps(mark: str) -> bool:
    return any(mark[k:] == mark[: len(mark) - k] for k in range(1, len(mark)))


def validate(opts: dict[str, Any]) -> dict[str, Any]:
    """Check every option; return them with defaults resolved (the ``options`` dict)."""
    model, spelling = opts["model"], opts["spelling"]
    _need(model in MODELS, f"model must be one of {MODELS}, got {model!r}")
    _need(spelling in SPELLINGS, f"spelling must be one of {SPELLINGS}, got {spelling!r}")
    vs = opts["vocab_size"]
    _need(_is_int(vs) and vs >= 1, f"vocab_size must be a positive int, got {vs!r}")
    mc = opts["min_count"]
    _need(_is_int(mc) and mc >= 1, f"min_count must be an int >= 1, got {mc!r}")
    for name in ("byte_fallback", "byte_fallback_in_budget", "split_at_marks", "counts"):
        _need(isinstance(opts[name], bool), f"{name} must be True or False, got {opts[name]!r}")
    if opts["byte_fallback_in_budget"]:
        _need(opts["byte_fallback"], "byte_fallback_in_budget=True needs byte_fallback=True")
    if opts["byte_fallback"]:
        _need(spelling != "bytes", "the bytes spelling already spells every byte; drop byte_fallback")

    mark = opts["mark"]
    if spelling == "bytes":
        _need(mark is None, "the bytes spelling has no mark; drop mark=")
    elif mark is not None:
        _need(isinstance(mark, str) and mark != "", f"mark must be a non-empty str, got {mark!r}")
        _need(not any(c in WHITESPACE for c in mark), f"mark {mark!r} must not hold whitespace")
        for c in mark:
            _need(not 0xD800 <= ord(c) <= 0xDFFF, "mark must not hold a lone surrogate")
        if spelling == "front":
            _need(len(mark) == 1, f"the front mark is one character, got {mark!r}")
        if spelling == "end":
            _need(
                not _self_overlaps(mark),
                f"the end mark {mark!r} overlaps itself, so decoding could not find it",
            )
    resolved_mark = {"end": "</w>", "continuation": "##", "front": "\u2581", "bytes": None}[
        spelling
    ] if mark is None else mark

    if not opts["split_at_marks"]:
        _need(spelling == "front", "split_at_marks applies to the front spelling only")
    ps = opts["pre_split"]
    _need(ps in (None, "gpt2"), f"pre_split must be None or 'gpt2', got {ps!r}")
    if ps is not None:
        _need(spelling == "bytes", "pre_split applies to the bytes spelling only")

    joints = opts["joints"]
    if joints is not None:
        _need(
            spelling in ("end", "continuation"),
            "joints apply to the end and continuation spellings only",
        )
        if isinstance(joints, Mapping):
            for w, parts in joints.items():
                _need(isinstance(w, str) and w != "", f"joints keys must be words, got {w!r}")
                if parts:
                    check_parts(w, parts)
            joints = {w: list(p) for w, p in joints.items() if p}
        else:
            _need(callable(joints), "joints must be a mapping word -> parts, or a callable")

    sw = opts["superword_at"]
    if sw is not None:
        _need(model == "bpe", "superword_at applies to model='bpe' only")
        _need(_is_int(sw) and sw >= 1, f"superword_at must be a positive int, got {sw!r}")
        _need(sw < vs, f"superword_at={sw} must be below vocab_size={vs}: stage two fills the rest")
        _need(
            spelling != "continuation",
            "two-stage BPE needs a spelling whose pieces can hold a space "
            "(end, front or bytes); continuation pieces cannot",
        )
    mpl = opts["max_piece_length"]
    if mpl is not None:
        _need(_is_int(mpl) and mpl >= 1, f"max_piece_length must be a positive int, got {mpl!r}")
    asz, cov = opts["alphabet_size"], opts["character_coverage"]
    _need(asz is None or cov is None, "give alphabet_size or character_coverage, not both")
    if asz is not None:
        _need(_is_int(asz) and asz >= 1, f"alphabet_size must be a positive int, got {asz!r}")
    if cov is not None:
        _need(
            isinstance(cov, (int, float)) and not isinstance(cov, bool) and 0 < cov <= 1,
            f"character_coverage must be a number in (0, 1], got {cov!r}",
        )
    if (asz is not None or cov is not None) and spelling == "bytes":
        raise SubwordsError("the bytes alphabet is always all 256 bytes; drop the alphabet limit")
    if model == "word":
        for name in ("superword_at", "max_piece_length", "alphabet_size", "character_coverage"):
            _need(opts[name] is None, f"{name} does not apply to model='word'")
        _need(not opts["byte_fallback"], "byte_fallback does not apply to model='word'")
        _need(spelling != "bytes", "model='word' needs a spelling with an [UNK] row, not bytes")
        _need(vs >= 2, "vocab_size must be at least 2 for a word model ([UNK] and one unit)")
    th = opts["threads"]
    _need(th is None or (_is_int(th) and th >= 1), f"threads must be None or an int >= 1, got {th!r}")
    ie = opts["input_errors"]
    _need(ie in ("strict", "replace"), f"input_errors must be 'strict' or 'replace', got {ie!r}")

    out = dict(opts)
    out["mark"] = resolved_mark
    out["joints"] = joints
    out["character_coverage"] = None if cov is None else float(cov)
    del out["threads"]  # never changes the result, so it is not part of the model
    del out["counts"]  # how the input was given, not what was learned
    return out


# ------------------------------------------------------------------------------------------------
# input


def _read_file(path: Union[str, os.PathLike[str]], input_errors: str) -> list[tuple[str, int]]:
    """One text per line of a UTF-8 file (the newline is not part of the text)."""
    try:
        with open(path, "rb") as f:
            raw = f.read()
    except OSError as e:
        raise InputError(f"cannot read {os.fspath(path)!r}: {e.strerror}") from None
    lines = raw.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    out: list[tuple[str, int]] = []
    for n, line in enumerate(lines, start=1):
        try:
            text = line.decode("utf-8", errors=input_errors)
        except UnicodeDecodeError as e:
            raise InputError(
                f"{os.fspath(path)!r} line {n}: invalid UTF-8 at byte {e.start}; fix the file or "
                "pass input_errors='replace'"
            ) from None
        out.append((text, 1))
    return out


def read_data(
    data: Data, input_errors: str = "strict", stream_table: bool = False, counts: bool = False
) -> list[tuple[str, int]]:
    """The corpus as ``(text, count)`` pairs, in order.

    ``data``: a mapping word -> count (the pages' count tables), a path (``os.PathLike``) or a
    list of paths (one text per line; with ``counts=True`` each line is ``word<TAB>count``), or
    an iterable of texts (``str``). A bare ``str`` is refused: it would be read as an iterable of
    one-character texts. With ``stream_table`` a count table becomes one text, its words in
    table order each repeated ``count`` times, separated by spaces (two-stage BPE).
    """
    if counts:
        paths = [data] if isinstance(data, os.PathLike) else data
        if isinstance(data, Mapping) or isinstance(data, (str, bytes)) or not all(
            isinstance(p, os.PathLike) for p in paths
        ):
            raise SubwordsError("counts=True needs paths to word<TAB>count files")
        table: dict[str, int] = {}
        for p in paths:
            for n, (line, _) in enumerate(_read_file(p, input_errors), start=1):
                if not line.strip():
                    continue
                fields = line.rstrip("\r").split("\t")
                if len(fields) != 2 or not fields[1].strip().isdigit():
                    raise InputError(
                        f"{os.fspath(p)!r} line {n}: expected 'word<TAB>count', got {line!r}"
                    )
                table[fields[0]] = table.get(fields[0], 0) + int(fields[1])
        data = table
    if isinstance(data, Mapping):
        items: list[tuple[str, int]] = []
        for word, count in data.items():
            if not isinstance(word, str) or word == "":
                raise InputError(f"count-table keys must be non-empty str, got {word!r}")
            check_text(word, f"count-table key {word!r}")
            if any(c in WHITESPACE for c in word):
                raise InputError(
                    f"count-table key {word!r} holds whitespace; each key is one word"
                )
            if not _is_int(count) or count < 1:
                raise InputError(f"the count of {word!r} must be an int >= 1, got {count!r}")
            items.append((word, count))
        if stream_table:
            return [(" ".join(w for w, c in items for _ in range(c)), 1)] if items else []
        return items
    if isinstance(data, os.PathLike):
        return _read_file(data, input_errors)
    if isinstance(data, (str, bytes)):
        raise SubwordsError(
            "data must be a mapping word -> count, a path (pathlib.Path), or a list of texts; "
            "a bare str is ambiguous: pass [text] for one text or pathlib.Path(name) for a file"
        )
    try:
        each = iter(data)
    except TypeError:
        raise SubwordsError(
            f"data must be a mapping, a path or an iterable of texts, got {type(data).__name__}"
        ) from None
    out: list[tuple[str, int]] = []
    for k, item in enumerate(each):
        if isinstance(item, os.PathLike):
            out.extend(_read_file(item, input_errors))
        elif isinstance(item, str):
            check_text(item, f"text {k}")
            out.append((item, 1))
        else:
            raise SubwordsError(f"text {k} is a {type(item).__name__}, not a str")
    return out


# ------------------------------------------------------------------------------------------------
# the alphabet


def choose_alphabet(
    symbol_counts: dict[Piece, int], spelling: Spelling[Any], alphabet_size: Optional[int],
    character_coverage: Optional[float],
) -> list[Piece]:
    """The kept symbols, in code-point (raw byte) order.

    Limits rank symbols by count descending, then by text; the front mark always ranks first
    (it is kept whatever its count). ``alphabet_size`` keeps the first N; ``character_coverage``
    keeps the shortest prefix whose counts reach ``ceil(coverage * total)`` (an IEEE double
    product), ``total`` being all symbol occurrences.
    """
    if spelling.name == "bytes":
        return [bytes([b]) for b in range(256)]
    symbols = list(symbol_counts)
    if alphabet_size is None and character_coverage is None:
        return sorted(symbols, key=key_order)
    mark = spelling.mark if spelling.name == "front" else None
    ranked = sorted(symbols, key=lambda s: (s != mark, -symbol_counts[s], key_order(s)))
    if alphabet_size is not None:
        kept = ranked[:alphabet_size]
    else:
        assert character_coverage is not None  # one limit is set, or we returned above
        total = sum(symbol_counts.values())
        need = math.ceil(float(character_coverage) * float(total))
        kept, covered = [], 0
        for s in ranked:
            if covered >= need:
                break
            kept.append(s)
            covered += symbol_counts[s]
    return sorted(kept, key=key_order)


# ------------------------------------------------------------------------------------------------
# counting


def count_corpus(
    texts: list[tuple[str, int]], sp: Spelling[Any], text_units: Optional[list[tuple[list[Unit], int]]] = None
) -> tuple[dict[Unit, int], Optional[list[str]], dict[Piece, int]]:
    """What every learner starts from: each unit with its count, the ``front`` normalizations
    the texts needed (None for other spellings), and each symbol's count."""
    if text_units is None:
        text_units = [(sp.units(t), c) for t, c in texts]
    unit_counts: dict[Unit, int] = {}
    for units, c in text_units:
        for u in units:
            unit_counts[u] = unit_counts.get(u, 0) + c
    if not unit_counts:
        raise InputError("the corpus is empty: it holds no units to learn from")
    norms = None
    if sp.name == "front":
        seen: set[str] = set()
        for t, _ in texts:
            seen.update(sp.normalizations(t))
        norms = [n for n in NORMALIZATIONS if n in seen]
    symbol_counts: dict[Piece, int] = {}
    for u, c in unit_counts.items():
        for s in u:
            symbol_counts[s] = symbol_counts.get(s, 0) + c
    return unit_counts, norms, symbol_counts


def size_floor(
    sp: Spelling[Any], alphabet: Sized, vocab_size: int, byte_fallback: bool, byte_fallback_in_budget: bool
) -> tuple[list[RowKey], list[RowKey], int]:
    """Size accounting (DESIGN section 2): the byte-fallback rows, the special rows, and the
    smallest vocabulary the corpus allows; asking below it is refused."""
    byte_rows: list[RowKey] = []
    if byte_fallback:
        byte_rows = [byte_row(b) for b in range(256)] + ([MARKER] if sp.has_marker_row else [])
    specials: list[RowKey] = [UNK] if sp.has_unk else []
    base_rows = len(specials) + len(alphabet) + (len(byte_rows) if byte_fallback_in_budget else 0)
    if vocab_size < base_rows:
        parts = f"{len(alphabet)} symbols" + (" + [UNK]" if specials else "")
        if byte_fallback_in_budget:
            parts += f" + {len(byte_rows)} byte-fallback rows"
        raise SubwordsError(
            f"vocab_size={vocab_size} is below the smallest vocabulary this corpus allows "
            f"({parts} = {base_rows}); ask for at least {base_rows}"
        )
    return byte_rows, specials, base_rows
