"""LiteToken, written to be read (arXiv 2602.04706; the engine is python/subwords/_litetoken.py).

Count by replaying every unit of the corpus, one merge at a time::

    for each unit (its symbols, its count):
        replay the merges; each time a merge makes a row, made[row] += count
        each row left at the end:                       final[row] += count
    F1(t) = final[t]
    F2(t) = made[t] - final[t]        (made, then merged again)
    R(t)  = F1 / (F1 + F2)
    residues: learned rows with F1 + F2 > 0 and R(t) < threshold

Then remove the residues, except those a row needs (docs/METHODS.md)::

    removed = residues
    repeat:
        stranded = the rows that some split built before and no split into two
                   rows outside `removed` (or stranded) builds now, found shortest first
        none -> done
        put back the removed parts of one split of each stranded row (its derivation
        first), and call them protected

``splits(c)`` are the pairs that can build ``c``: for the rank rule every cut of ``c`` into two
rows; for a merge list, ``c``'s own merges and every cut into two rows (the re-rank).

Worked example (the golden test in tests/methods/test_litetoken.py): merges ``a+b -> ab``,
``ab+c -> abc`` on the corpus ``abc`` x 9 and ``ab`` x 1. Replaying ``abc`` makes ``ab`` (9 times) and
``abc`` (9 times, final); ``ab`` alone makes ``ab`` once, final. ``F1(ab) = 1``, ``F2(ab) = 9``,
``R(ab) = 0.1``; ``F1(abc) = 9``, ``F2(abc) = 0``, ``R(abc) = 1``. With threshold 0.2, ``ab`` is a
residue; ``abc`` has the cuts ``a+bc`` (no row ``bc``) and ``ab+c`` (``ab`` removed), so it would be
stranded: ``ab`` is protected and nothing is removed. Add the row ``bc`` (merge ``b+c`` after the
others) and ``abc`` is built as ``a+bc``: ``ab`` is removed.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from typing import Optional


def replay_counts(units: Sequence[tuple[list[Hashable], int]], pick: Callable[[Hashable, Hashable], Optional[tuple[int, Hashable]]],
                  whole: Optional[Callable[[list[Hashable]], Optional[Hashable]]] = None
                  ) -> tuple[dict[Hashable, int], dict[Hashable, int]]:
    """``(made, final)`` over ``units``. ``pick(a, b)`` is ``(rank, joined)`` when the adjacent
    pair ``a b`` merges, else None; the lowest rank merges first, the leftmost on a tie.
    ``whole(symbols)``: the row a unit is when the encoder takes a unit that is a row as that row
    (tiktoken does): if the merges alone do not make it, it is final and nothing is made."""
    made: dict[Hashable, int] = {}
    final: dict[Hashable, int] = {}
    for symbols, count in units:
        seq = list(symbols)
        row = whole(seq) if whole is not None else None
        if row is not None:
            alone, _ = replay_counts([(seq, 1)], pick)
            if alone.get(row, 0) == 0 and len(seq) > 1:
                final[row] = final.get(row, 0) + count
                continue
        while True:
            best = None
            for k in range(len(seq) - 1):
                p = pick(seq[k], seq[k + 1])
                if p is not None and (best is None or p[0] < best[0]):
                    best = (p[0], k, p[1])
            if best is None:
                break
            _, k, joined = best
            seq[k:k + 2] = [joined]
            made[joined] = made.get(joined, 0) + count
        for t in seq:
            final[t] = final.get(t, 0) + count
    return made, final


def residues(learned: Sequence[Hashable], made: dict[Hashable, int], final: dict[Hashable, int],
             threshold: float) -> dict[Hashable, tuple[int, int]]:
    """Residue -> (F1, F2)."""
    out = {}
    for t in learned:
        f1 = final.get(t, 0)
        f2 = made.get(t, 0) - f1
        if f1 + f2 > 0 and f1 / (f1 + f2) < threshold:
            out[t] = (f1, f2)
    return out


def cut(learned_by_size: Sequence[Hashable], found: Sequence[Hashable],
        splits: Callable[[Hashable], Sequence[tuple[Hashable, Hashable]]],
        derivation: Callable[[Hashable], Optional[tuple[Hashable, Hashable]]]) -> tuple[set[Hashable], set[Hashable]]:
    """(removed, protected) from the residues ``found``."""
    def stranded(removed: set[Hashable]) -> list[Hashable]:
        gone = set(removed)
        out = []
        for c in learned_by_size:
            if c in gone:
                continue
            if all(a in gone or b in gone for a, b in splits(c)):
                gone.add(c)
                out.append(c)
        return out

    never = set(stranded(set()))
    removed = set(found) - never
    protected: set[Hashable] = set()
    while True:
        lost = stranded(removed)
        lost = [c for c in lost if c not in never]
        if not lost:
            return removed, protected
        back: set[Hashable] = set()
        for c in lost:
            d = derivation(c)
            for a, b in ([d] if d is not None else []) + list(splits(c)):
                hit = {x for x in (a, b) if x in removed}
                if hit or not ({a, b} & set(lost)):
                    back |= hit
                    break
        if not back:
            back = {x for c in lost for a, b in splits(c) for x in (a, b) if x in removed}
        removed -= back
        protected |= back
