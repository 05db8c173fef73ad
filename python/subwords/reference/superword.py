"""SuperBPE (Liu et al. 2025, arXiv 2503.13423), written to be read: the oracle the Rust learner
(``crates/subwords-core/src/learners/superword``) is tested against.

Byte-level throughout. A text is cut by a pre-split expression into pieces: every match is a
piece and so is every stretch between two matches (nothing is dropped).

Stage one
    Ordinary BPE on the *units* (the pieces of the stage-one expression, ``o200k`` by
    default), up to ``superword_at`` rows (the transition size t; the 256 bytes are the first
    rows).

Stage two
    The *spans* are the pieces of the span expression (the paper's: digits, runs of two or
    more punctuation marks, and spaces not followed by text stand alone; every other stretch,
    spaces included, is one span). Each distinct span, with its count, is spelled in bytes and
    the stage-one merges are applied to the whole span, lowest rank first, as encoding does.
    Learning then goes on over the spans up to ``vocab_size`` rows, a pair allowed only when its
    joined piece spans at most ``superword_words`` words (runs of non-space bytes).

The rules shared with plain BPE: a pair's count is summed over the units (or spans) times their
counts, overlaps included; a merge joins every occurrence left to right without overlap; the
larger count wins, a tie goes to the smaller ``(left, right)`` by bytes; learning stops at the
size, when no pair is left, or when the best count is below ``min_count``. A joined piece that is
already a row keeps its rank and adds no row.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from typing import Optional

import regex

#: the stage-one expressions the reference knows (OpenAI's published o200k and cl100k)
STAGE_ONE = {
    "o200k": (
        r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?"
        r"|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?"
        r"|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+"
    ),
}
#: the paper's stage-two (span) expression
SPANS = r"\p{N}{1,3}| ?[^\s\p{L}\p{N}]{2,}[\r\n/]*| +(?!\S)"

Piece = bytes
Pair = tuple[bytes, bytes]


def pieces(text: str, expression: str) -> list[str]:
    """``text`` cut by ``expression``: each match and each stretch between matches."""
    out: list[str] = []
    at = 0
    for m in regex.finditer(expression, text):
        if m.start() > at:
            out.append(text[at:m.start()])
        if m.end() > m.start():
            out.append(m.group())
        at = m.end()
    if at < len(text):
        out.append(text[at:])
    return out


def words(piece: bytes) -> int:
    """Runs of bytes that are not ASCII whitespace."""
    return len(piece.split())


def _count_pairs(seqs: Sequence[tuple[list[bytes], int]], limit: Optional[int]) -> Counter[Pair]:
    c: Counter[Pair] = Counter()
    for seq, n in seqs:
        for a, b in zip(seq, seq[1:]):
            if limit is None or words(a + b) <= limit:
                c[(a, b)] += n
    return c


def _apply(seq: list[bytes], a: bytes, b: bytes) -> list[bytes]:
    out: list[bytes] = []
    i = 0
    while i < len(seq):
        if i + 1 < len(seq) and seq[i] == a and seq[i + 1] == b:
            out.append(a + b)
            i += 2
        else:
            out.append(seq[i])
            i += 1
    return out


def learn(seqs: list[tuple[list[bytes], int]], rows: set[bytes], size: int, min_count: int,
          limit: Optional[int]) -> tuple[list[Pair], str]:
    """Merges in rank order until ``rows`` reaches ``size``; ``seqs`` and ``rows`` are updated."""
    merges: list[Pair] = []
    while len(rows) < size:
        counts = _count_pairs(seqs, limit)
        if not counts:
            return merges, "no_pairs"
        best = max(counts.values())
        if best < min_count:
            return merges, "min_count"
        a, b = min(p for p, n in counts.items() if n == best)
        merges.append((a, b))
        rows.add(a + b)
        for k, (seq, n) in enumerate(seqs):
            seqs[k] = (_apply(seq, a, b), n)
    return merges, "size"


def replay(seq: list[bytes], ranks: dict[Pair, int]) -> list[bytes]:
    """Applies the lowest-ranked merge present, everywhere, until none applies."""
    while True:
        found = [ranks[p] for p in zip(seq, seq[1:]) if p in ranks]
        if not found:
            return seq
        r = min(found)
        a, b = next(p for p, k in ranks.items() if k == r)
        seq = _apply(seq, a, b)


def spans_of(texts: Iterable[str], expression: str = SPANS) -> Counter[str]:
    """The span table: each distinct span and how often it occurs."""
    c: Counter[str] = Counter()
    for t in texts:
        c.update(p for p in pieces(t, expression) if p)
    return c


def train(texts: Sequence[str], vocab_size: int, superword_at: Optional[int] = None, *, pre_split: str = "o200k",
          superword_pattern: str = SPANS, superword_words: int = 4, min_count: int = 2) -> dict[str, object]:
    """SuperBPE on ``texts``: ``{"merges": [(left, right) bytes], "stage_one": n, "stop": why}``."""
    t = vocab_size * 4 // 5 if superword_at is None else superword_at
    expression = STAGE_ONE.get(pre_split, pre_split)
    units: Counter[str] = Counter()
    for text in texts:
        units.update(p for p in pieces(text, expression) if p)
    rows = {bytes([i]) for i in range(256)}
    seqs = [([bytes([b]) for b in u.encode()], n) for u, n in sorted(units.items())]
    first, stop = learn(seqs, rows, t, min_count, None)
    ranks = {p: k for k, p in enumerate(first)}
    spans = [(replay([bytes([b]) for b in s.encode()], ranks), n)
             for s, n in sorted(spans_of(texts, superword_pattern).items())]
    second, stop2 = learn(spans, rows, vocab_size, min_count, superword_words)
    return {"merges": first + second, "stage_one": len(first), "stop": stop2 if len(rows) >= t else stop}


__all__ = ["SPANS", "STAGE_ONE", "learn", "pieces", "replay", "spans_of", "train", "words"]
