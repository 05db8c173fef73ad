"""Vocabulary-size curves: one learner, one spelling, many sizes.

BPE and WordPiece take **one** training for every size: the engine never looks at the size
while it picks a merge (the size is only the stopping test at the top of each step), so the run
to the largest size passes through every smaller run's state, and a smaller run is exactly its
first ``k`` merges. The traced run gives each prefix's rows and corpus length; the model at a
size (for held-out text) is the full model cut to its first ``k`` merges and the rows they made.

Unigram takes one training per size. Its pruning keeps ``max(size, floor(shrink · current))``
pieces, so runs to different sizes share their rounds only until the size first bites, and the
EM rounds after that last pruning depend on the size: nothing short of the training itself gives
the exact table. The cost is one training per size asked (each about as long as the run to that
size alone; smaller sizes prune more rounds).
"""

from __future__ import annotations

import dataclasses
import functools
import json
import sys
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Iterator, Optional, Sequence

from .. import _api
from ..errors import InputError, OptionError
from .trace import lengths

MAX_SIZES = 10_000


@dataclass
class CurvePoint:
    """One size of a curve."""

    size: int
    """The size asked for (``vocab_size``)."""
    rows: int
    """The rows actually learned up to (the whole vocabulary: [UNK], byte rows, alphabet, learned)."""
    rows_learned: int
    merges: Optional[int]
    """Merges in the model (BPE, WordPiece); None for Unigram."""
    corpus_pieces: int
    """The training corpus's length (``report["corpus_pieces_after"]``)."""
    heldout_pieces: Optional[int] = None
    heldout_unknown: Optional[int] = None
    """[UNK] pieces in the held-out encoding."""
    heldout_byte_pieces: Optional[int] = None
    """Byte-fallback pieces in the held-out encoding."""
    byte_rows_used: Optional[int] = None
    """Distinct byte-fallback rows the held-out encoding uses."""

    def to_dict(self) -> dict[str, Any]:
        d = dataclasses.asdict(self)
        return {k: v for k, v in d.items() if v is not None or k in ("merges",)}


def parse_sizes(text: str) -> list[int]:
    """``"12,17,22"`` or ranges ``"12-22"`` / ``"100-1000:100"`` (start-stop:step, inclusive)."""
    if not isinstance(text, str) or not text.strip():
        raise OptionError("--sizes needs sizes, e.g. 12,17,22 or 1000-8000:1000")
    out: list[int] = []
    for part in text.split(","):
        part = part.strip()
        try:
            if "-" in part:
                span, _, step = part.partition(":")
                lo, hi = span.split("-")
                a, b, s = int(lo), int(hi), int(step) if step else 1
                if s < 1 or b < a:
                    raise ValueError
                sizes: Sequence[int] = range(a, b + 1, s)
            else:
                sizes = [int(part)]
        except ValueError:
            raise OptionError(f"--sizes: {part!r} is not a size or a range (write 12,17,22 or 12-22 or 100-1000:100)") from None
        if len(out) + len(sizes) > MAX_SIZES:
            raise OptionError(f"--sizes {part}: more than {MAX_SIZES} sizes in all; use a range with a larger step")
        out.extend(sizes)
    return check_sizes(out)


def check_sizes(sizes: Iterable[Any]) -> list[int]:
    sizes = list(sizes)
    if not sizes:
        raise OptionError("sizes is empty: ask for at least one vocabulary size")
    if len(sizes) > MAX_SIZES:
        raise OptionError(f"{len(sizes)} sizes is more than {MAX_SIZES}; ask for fewer (a range with a step)")
    for s in sizes:
        if isinstance(s, bool) or not isinstance(s, int) or not 1 <= s <= _api.MAX_COUNT:
            raise OptionError(f"sizes must be whole numbers from 1 to {_api.MAX_COUNT}, got {s!r}")
    return sizes


def _same(tok: Any) -> Any:
    return tok


def _prefix_model(tok: Any, merges: int, rows: int, parsed: Optional[dict[str, Any]] = None) -> Any:
    """``tok`` cut to its first ``merges`` merges and ``rows`` rows (the rows those merges made
    come in merge order after the alphabet). ``parsed``: a dict shared by the cuts of one model,
    holding its parsed JSON after the first cut (parsing a large model's JSON is most of a cut's
    cost, and the full document is only read, never changed)."""
    if merges == len(tok.merges):
        return tok
    if parsed is None:
        parsed = {}
    if "doc" not in parsed:
        parsed["doc"] = json.loads(tok.to_json())
    full = parsed["doc"]
    doc = dict(full)
    doc["merges"] = full["merges"][:merges]
    doc["rows"] = full["rows"][:rows]
    stream_from = doc.get("stream_merges_from")
    if stream_from is not None and merges <= stream_from:
        doc["stream_merges_from"] = None
    doc["report"] = None
    return _api.SubwordsTokenizer.from_json(json.dumps(doc))


def heldout_texts(heldout: Any) -> list[str]:
    """Held-out text: a list of texts, or a path to a UTF-8 file (one text per line)."""
    import os

    if heldout is None:
        return []
    if isinstance(heldout, (str, bytes)):
        raise InputError("heldout: pass a list of texts or a pathlib.Path to a file, not a single string")
    if isinstance(heldout, os.PathLike):
        from .._io import read_limited

        raw = read_limited(os.fspath(heldout), 1 << 31, "held-out file")
        try:
            texts = raw.decode("utf-8").splitlines()
        except UnicodeDecodeError as e:
            raise InputError(f"{os.fspath(heldout)}: not UTF-8 (byte {e.start}); held-out text must be UTF-8") from None
    else:
        texts = list(heldout)
        for n, t in enumerate(texts):
            if not isinstance(t, str):
                raise InputError(f"held-out text {n} is {type(t).__name__}, not str")
    if not any(t.strip() for t in texts):
        raise InputError("the held-out text is empty (no non-blank line): give text to measure on, or leave heldout out")
    return texts


def _measure_heldout(tok: Any, texts: list[str], point: CurvePoint) -> None:
    from .metrics import _encode_decode

    run = _encode_decode(tok, texts, None)
    freq = run.freq
    kinds = tok.kinds
    unk = [i for i, (r, k) in enumerate(zip(tok.rows, kinds)) if k == "special" and r == "[UNK]"]
    byte = [i for i, k in enumerate(kinds) if k == "byte"]
    point.heldout_pieces = sum(run.pieces)
    point.heldout_unknown = sum(freq[i] for i in unk)
    point.heldout_byte_pieces = sum(freq[i] for i in byte)
    point.byte_rows_used = sum(1 for i in byte if freq[i])


Progress = Optional[Callable[[int, int], None]]


def models_at(data: Any, sizes: Sequence[int], *, progress: Progress = None, **options: Any) -> Iterator[tuple[int, Any, CurvePoint]]:
    """``(size, tokenizer at that size, its curve point)`` for each size, in the order asked;
    one training for BPE and WordPiece, one per size for Unigram."""
    for size, make, point in _points(data, sizes, progress=progress, **options):
        yield size, make(), point


def _points(data: Any, sizes: Sequence[int], *, progress: Progress = None,
            **options: Any) -> Iterator[tuple[int, Callable[[], Any], CurvePoint]]:
    """As :func:`models_at`, with the tokenizer made only when asked for (a BPE or WordPiece
    model at a size is a copy of the full one cut short: not free on big vocabularies)."""
    sizes = check_sizes(sizes)
    model = options.get("model", "bpe")
    if model not in ("bpe", "wordpiece", "unigram"):
        raise OptionError(f"curves are for model='bpe', 'wordpiece' or 'unigram', got {model!r}")
    if model == "unigram" or options.get("picky") is not None or options.get("scaffold") or options.get("parity"):
        # one training per size: Unigram prunes from the top, and Picky BPE's removals and
        # Scaffold-BPE's marks make a smaller model no prefix of a larger one; parity-aware
        # BPE's trace is not kept
        for n, s in enumerate(sizes):
            tok = _api.train(data, vocab_size=s, **options)
            r = tok.report
            merges = None if model == "unigram" else r["merges_learned"]
            yield s, functools.partial(_same, tok), CurvePoint(size=s, rows=tok.vocab_size, rows_learned=r["rows_learned"],
                                                               merges=merges, corpus_pieces=r["corpus_pieces_after"])
            if progress:
                progress(n + 1, len(sizes))
        return
    superword = options.get("superword_at")
    if superword is not None and min(sizes) <= superword:
        raise OptionError(f"with superword_at={superword}, every size must be above {superword} "
                          "(stage one always runs to superword_at; stage two fills the rest)")
    t = lengths(data, vocab_size=max(sizes), **options)
    if progress:
        progress(1, len(sizes) + 1)
    if min(sizes) < t.floor:
        raise OptionError(f"size {min(sizes)} is below the smallest vocabulary this corpus allows, {t.floor}; "
                          f"ask for sizes from {t.floor}")
    full = t.tokenizer
    parsed: dict[str, Any] = {}  # the full model's JSON, parsed once for every cut
    new_rows = [r - t.rows_before for r in t.rows]
    for n, s in enumerate(sizes):
        # the run to size s stops at the top of the first step whose rows reach its room
        room = s - t.floor
        k = 0 if room <= 0 else next((j + 1 for j, r in enumerate(new_rows) if r >= room), len(new_rows))
        rows = t.rows[k - 1] if k else t.rows_before
        pieces = t.corpus_pieces[k - 1] if k else t.corpus_pieces_before
        yield s, functools.partial(_prefix_model, full, k, rows, parsed), CurvePoint(
            size=s, rows=rows, rows_learned=rows - t.rows_before, merges=k, corpus_pieces=pieces)
        if progress:
            progress(n + 2, len(sizes) + 1)


def curve(data: Any, sizes: Sequence[int], *, heldout: Any = None, progress: Progress = None, **options: Any) -> list[CurvePoint]:
    """The curve of ``data`` trained with ``options`` (those of :func:`subwords.train`, without
    ``vocab_size``) at each of ``sizes``: rows actually learned, corpus pieces, and with
    ``heldout`` (texts or a path) held-out pieces, unknowns and byte-fallback use.

    >>> four = {"low": 5, "lower": 2, "newest": 6, "widest": 3}
    >>> [(p.size, p.rows, p.corpus_pieces) for p in curve(four, [12, 17, 22])]
    [(12, 12, 79), (17, 17, 42), (22, 22, 22)]
    """
    if "vocab_size" in options:
        raise OptionError("curve takes sizes=, not vocab_size")
    texts = heldout_texts(heldout)
    out = []
    for _, make, point in _points(data, sizes, progress=progress, **options):
        if texts:
            _measure_heldout(make(), texts, point)
        out.append(point)
    return out


def stderr_progress(label: str) -> Callable[[int, int], None]:
    """A progress callback that redraws one line on stderr."""

    def show(done: int, total: int) -> None:
        sys.stderr.write(f"\r{label}: {done}/{total}")
        if done >= total:
            sys.stderr.write("\n")
        sys.stderr.flush()

    return show
