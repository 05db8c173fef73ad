"""BPE: the merge learner and the merge-replay segmenter, written to be read.

The learner
-----------
Input: units already spelled in symbols, each with a count. Output: merges in rank order.
Two verbs carry the whole algorithm:

* :func:`count_pairs` -- a pair's count is the sum over units of ``count(unit) x (adjacent
  occurrences of the pair in the unit)``, overlapping positions included (``a a a`` holds
  ``(a, a)`` twice). Pairs never cross units. A symbol with no row (:class:`Unknown`) takes part
  in no pair.
* :func:`apply_merge` -- replace every occurrence of the chosen pair, scanning left to right,
  without overlap (``a a a`` becomes ``aa a``).

The loop, :func:`learn`::

    while rows < vocab_size:
        count every pair;  drop pairs whose joined piece would exceed max_piece_length symbols
        no pair left                -> stop "no_pairs"
        best count < min_count      -> stop "min_count"
        winner = largest count; ties -> smallest (left, right) in code-point order of the
                 pieces as spelled, marks included (raw bytes for the bytes spelling)
        record the merge (its rank is its position); replace every occurrence
        the joined piece is a new row unless a row already spells it (interning: the merge
        keeps its rank, the row count does not grow)
    -> stop "size"

Worked example (the BPE page's four words, ``end`` spelling: ``low`` 5, ``lower`` 2,
``newest`` 6, ``widest`` 3; 11 symbols, 79 pieces)::

    e + s        6 + 3 = 9      tie with (s, t</w>) at 9; "e" < "s", so e + s wins
    es + t</w>   6 + 3 = 9      -> est</w>
    l + o        5 + 2 = 7      -> lo
    e + w        6       = 6    three pairs tie at 6: (e, w) < (n, e) < (w, est</w>)
    ew + est</w> 6              -> ewest</w>
    n + ewest</w>  6            -> newest</w>
    lo + w</w>   5              -> low</w>        (the seventh merge: low is one piece)
    d + est</w>  3              three-way tie at 3 again; then i + dest</w>, w + idest</w>

Ten merges give 11 + 1 ([UNK]) + 10 = 22 rows and a corpus of 5 + 8 + 6 + 3 = 22 pieces:
``lower`` is still ``lo w e r</w>``. (The page says every word is a single piece after ten
merges; no tie rule makes that true -- the page's own 22-piece total disagrees with it.)

The segmenter (merge replay)
----------------------------
To encode a unit, spell it in symbols, then repeatedly apply the lowest-ranked merge present
anywhere in it, at every occurrence, left to right without overlap, until none applies::

    lowest -> l o w e s t</w> -> l o w es t</w> -> l o w est</w> -> lo w est</w>

``(w, est</w>)`` was never learned (the tie at 6 went to ``(e, w)``), so ``lowest`` is three
pieces. Had the tie gone to ``(w, est</w>)`` it would be ``lo west</w>``, two pieces.

This reference rescans the unit after every merge: quadratic, and fine for an oracle.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Union

from subwords.errors import SubwordsError

from .spelling import Piece, Unknown

Pair = tuple[Piece, Piece]
Sequence_ = list[Union[Piece, Unknown]]  # a unit's current symbols: pieces and Unknown stand-ins
#: Units with their counts: a mapping from symbols to count, or (symbols, count) pairs.
Units = Union[Mapping[tuple[Union[Piece, Unknown], ...], int], Iterable[tuple[Iterable[Union[Piece, Unknown]], int]]]
Chooser = Callable[[list[Pair], int], Pair]


@dataclass
class Learned:
    """What one run of the learner produced."""

    merges: list[Pair] = field(default_factory=list)
    #: Rows the merges added, in order (an interned merge adds none).
    rows: list[Piece] = field(default_factory=list)
    #: The input sequences respelled after the last merge, in input order, with their counts.
    units: list[tuple[Sequence_, int]] = field(default_factory=list)
    #: ``"size"``, ``"min_count"`` or ``"no_pairs"``.
    stop: str = ""
    #: Symbol length of every piece that is a row (alphabet pieces have length 1).
    lengths: dict[Piece, int] = field(default_factory=dict)


def count_pairs(units: Iterable[tuple[Sequence[Union[Piece, Unknown]], int]]) -> dict[Pair, int]:
    """Every adjacent pair, weighted by its unit's count, overlapping positions included."""
    counts: dict[Pair, int] = {}
    for symbols, count in units:
        for a, b in zip(symbols, symbols[1:]):
            if isinstance(a, Unknown) or isinstance(b, Unknown):
                continue
            counts[(a, b)] = counts.get((a, b), 0) + count
    return counts


def apply_merge(symbols: Sequence[Union[Piece, Unknown]], left: Piece, right: Piece, joined: Piece) -> Sequence_:
    """Replace every ``left right`` by ``joined``, left to right, without overlap."""
    out: Sequence_ = []
    i = 0
    n = len(symbols)
    while i < n:
        if i + 1 < n and symbols[i] == left and symbols[i + 1] == right:
            out.append(joined)
            i += 2
        else:
            out.append(symbols[i])
            i += 1
    return out


def corpus_length(units: Iterable[tuple[Sequence[Union[Piece, Unknown]], int]]) -> int:
    """Pieces in the corpus: each symbol (or stand-in) of each unit, times the unit's count."""
    return sum(len(symbols) * count for symbols, count in units)


def tie_order(tied: list[Pair], count: int) -> Pair:
    """The default choice among pairs tied for the largest count: the smallest pair."""
    return tied[0]


def _as_units(units: Units) -> list[tuple[Sequence_, int]]:
    items: Iterable[tuple[Iterable[Union[Piece, Unknown]], int]]
    if isinstance(units, Mapping):
        items = units.items()
    else:
        items = units
    out: list[tuple[Sequence_, int]] = []
    for symbols, count in items:
        out.append((list(symbols), count))
    return out


def learn(
    units: Units,
    vocab_size: int,
    *,
    lengths: dict[Piece, int] | None = None,
    rows_before: int | None = None,
    join: Callable[[Piece, Piece], Piece] = operator.add,
    min_count: int = 2,
    max_piece_length: int | None = None,
    choose: Chooser | None = None,
) -> Learned:
    """Learn merges until the vocabulary has ``vocab_size`` rows or no pair qualifies.

    ``units``: a mapping (or list of pairs) from a sequence of symbols to its count, e.g.
    ``{("l", "o", "w</w>"): 5, ...}``. ``lengths``: every piece that is already a row, mapped to
    its length in symbols (default: each symbol seen, length 1). ``rows_before``: rows already
    counted against ``vocab_size`` (default: ``len(lengths) + 1`` for the ``[UNK]`` row).
    ``join``: how two pieces join (the spelling's). ``choose``: called with the pairs tied for
    the largest count (sorted by the tie rule) and that count; it returns the pair to merge.
    The default takes the first; tests pass another to walk the branches the pages discuss.

        >>> four = {("l", "o", "w</w>"): 5, ("l", "o", "w", "e", "r</w>"): 2,
        ...         ("n", "e", "w", "e", "s", "t</w>"): 6, ("w", "i", "d", "e", "s", "t</w>"): 3}
        >>> learned = learn(four, 22)
        >>> learned.merges[:3]
        [('e', 's'), ('es', 't</w>'), ('l', 'o')]
        >>> corpus_length(learned.units), learned.stop
        (22, 'size')
    """
    seqs = _as_units(units)
    if lengths is None:
        lengths = {}
        for symbols, _ in seqs:
            for s in symbols:
                if not isinstance(s, Unknown):
                    lengths[s] = 1
    lengths = dict(lengths)
    rows = len(lengths) + 1 if rows_before is None else rows_before
    result = Learned(lengths=lengths)
    while True:
        if rows >= vocab_size:
            result.stop = "size"
            break
        pairs = count_pairs(seqs)
        if max_piece_length is not None:
            pairs = {
                p: c for p, c in pairs.items() if lengths[p[0]] + lengths[p[1]] <= max_piece_length
            }
        if not pairs:
            result.stop = "no_pairs"
            break
        best = max(pairs.values())
        if best < min_count:
            result.stop = "min_count"
            break
        tied = sorted(p for p, c in pairs.items() if c == best)
        pair = (choose or tie_order)(tied, best)
        if pair not in tied:
            raise SubwordsError(f"choose returned {pair!r}, which is not one of the tied pairs")
        left, right = pair
        joined = join(left, right)
        result.merges.append(pair)
        if joined not in lengths:
            lengths[joined] = lengths[left] + lengths[right]
            result.rows.append(joined)
            rows += 1
        seqs = [(apply_merge(symbols, left, right, joined), c) for symbols, c in seqs]
    result.units = seqs
    return result


def ranks_of(merges: Iterable[Pair]) -> dict[Pair, int]:
    """Each merged pair's rank: its first position in the learned order."""
    ranks: dict[Pair, int] = {}
    for r, pair in enumerate(merges):
        ranks.setdefault(pair, r)
    return ranks


def replay(
    symbols: Iterable[Piece | Unknown],
    ranks: Mapping[Pair, int],
    join: Callable[[Piece, Piece], Piece] = operator.add,
) -> Sequence_:
    """Merge replay: apply the lowest-ranked merge present, everywhere, until none applies.

        >>> ranks = ranks_of([("e", "s"), ("es", "t</w>"), ("l", "o")])
        >>> replay(["l", "o", "w", "e", "s", "t</w>"], ranks)
        ['lo', 'w', 'est</w>']
    """
    seq = list(symbols)
    while True:
        best = None
        for a, b in zip(seq, seq[1:]):
            if isinstance(a, Unknown) or isinstance(b, Unknown):
                continue
            r = ranks.get((a, b))
            if r is not None and (best is None or r < best[0]):
                best = (r, a, b)
        if best is None:
            return seq
        _, a, b = best
        seq = apply_merge(seq, a, b, join(a, b))
