"""Length-MAX (Dong and Su, "Length-MAX Tokenizer for Language Models", arXiv 2511.20849): BPE
whose merges are chosen by frequency times length, written to be read.

The paper weighs a token by ``freq(t) * |t|`` and builds its vocabulary greedily on that score.
Here the greedy choice is made among BPE's candidates, the adjacent pairs:

* a pair's count is BPE's (the sum over units of ``count(unit) x`` its adjacent occurrences,
  overlapping ones included);
* its score is ``count(a, b) * (len(a) + len(b))``, the length in alphabet symbols;
* pairs counted below ``min_count`` are no candidates; with none left, training stops
  (``"min_count"`` if some pair was left out by it, else ``"no_pairs"``);
* the largest score wins; ties go to the smaller ``(left, right)`` by the pieces' UTF-8 bytes;
* every occurrence of the pair is joined, left to right without overlap; the joined piece is a
  new row unless a row already spells it (the merge still gets its rank).

The merges are an ordinary BPE merge list: :func:`encode` replays them in rank order.

Worked example (units ``abc`` x4, ``de`` x5, ``ab`` x2; two new rows)::

    (a, b)   count 4 + 2 = 6, length 2: 12    (d, e) 5 x 2 = 10, (b, c) 4 x 2 = 8  -> ab
    (ab, c)  count 4, length 3: 12            (d, e) 5 x 2 = 10                    -> abc

Plain BPE takes ``(d, e)`` second (count 5 against 4).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping, Sequence

Unit = tuple[str, ...]


@dataclass
class Learned:
    merges: list[tuple[str, str]] = field(default_factory=list)
    #: the new rows, in the order they were made
    rows: list[str] = field(default_factory=list)
    stop: str = "size"


def count_pairs(units: Mapping[Unit, int]) -> dict[tuple[str, str], int]:
    counts: dict[tuple[str, str], int] = {}
    for unit, n in units.items():
        for pair in zip(unit, unit[1:]):
            counts[pair] = counts.get(pair, 0) + n
    return counts


def apply_merge(unit: Sequence[str], left: str, right: str) -> Unit:
    out: list[str] = []
    i = 0
    while i < len(unit):
        if i + 1 < len(unit) and unit[i] == left and unit[i + 1] == right:
            out.append(left + right)
            i += 2
        else:
            out.append(unit[i])
            i += 1
    return tuple(out)


def learn(units: Mapping[Unit, int], new_rows: int, min_count: int = 1) -> Learned:
    """Length-MAX merges on units spelled as symbols (each symbol one alphabet symbol long)."""
    current: dict[Unit, int] = {}
    for u, n in units.items():
        current[tuple(u)] = current.get(tuple(u), 0) + n
    length = {s: 1 for u in current for s in u}
    out = Learned()
    while len(out.rows) < new_rows:
        counts = count_pairs(current)
        candidates = {p: n for p, n in counts.items() if n >= min_count}
        if not candidates:
            out.stop = "min_count" if counts else "no_pairs"
            return out
        left, right = min(
            candidates,
            key=lambda p: (-candidates[p] * (length[p[0]] + length[p[1]]), p[0].encode(), p[1].encode()),
        )
        joined = left + right
        out.merges.append((left, right))
        if joined not in length:
            length[joined] = length[left] + length[right]
            out.rows.append(joined)
        merged: dict[Unit, int] = {}
        for u, n in current.items():
            v = apply_merge(u, left, right)
            merged[v] = merged.get(v, 0) + n
        current = merged
    return out


def encode(text: str, merges: Sequence[tuple[str, str]]) -> list[str]:
    """One unit's pieces: its characters, then every merge in rank order."""
    unit: Unit = tuple(text)
    for left, right in merges:
        unit = apply_merge(unit, left, right)
    return list(unit)
