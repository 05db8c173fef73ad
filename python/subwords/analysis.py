"""Small exact analyses of the merge loop: how far from optimal the greedy rule is.

BPE takes, at every step, the pair that shortens the corpus most *now*. That is not the
shortest corpus reachable in a given number of merges, and on a small enough count table the
question can be settled by trying every sequence of merges.

The BPE page's example: ``report`` 2, ``taste`` 8, ``state`` 10 (``end`` spelling), 102 pieces.
Three pairs tie for first place at 18 -- ``s t``, ``t a`` and ``t e</w>`` -- and any of them
leaves 84 pieces. The tie rule takes ``s t`` (``s`` sorts first), after which the best pair
left scores 10, so two greedy merges reach 74. Starting with ``t a`` instead, ``t e</w>`` still
scores 8 + 10 = 18, and two merges reach 66:

    >>> table = {"report": 2, "taste": 8, "state": 10}
    >>> corpus_lengths(table, [])
    [102]
    >>> optimal_merges(table, 2)
    (66, [(('t', 'a'), ('t', 'e</w>')), (('t', 'e</w>'), ('t', 'a'))])
    >>> optimal_merges(table, 1, after=[("s", "t")])[0]
    74
    >>> corpus_lengths(table, [("s", "t"), ("a", "t")])
    [102, 84, 74]

Which merges the search may take: by default every pair present at least once (``min_count=1``),
because a merge of a pair seen once is still a merge and still saves a piece -- "every sequence of
merges" means all of them. Pass ``min_count=2`` to search only the moves the learner itself could
make under its default stopping rule; the greedy sequence is then always one of the candidates.
On the pages' tables both give the same answers. A sequence ends early only when no pair
qualifies. Every merge replaces all occurrences, left to right, without overlap, exactly as in
training, and two paths to the same joined piece give the same symbol.

The search is exponential in ``merges``; it memoises on the corpus state, which is enough for the
tables the pages work by hand.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from functools import lru_cache

from .reference import bpe
from .reference.spelling import make_spelling
from .reference.training import read_data

__all__ = ["optimal_merges", "corpus_lengths", "spell_table"]

State = tuple  # ((symbols, count), ...) -- hashable corpus state


def spell_table(counts: Mapping[str, int], spelling: str = "end") -> list[tuple[tuple, int]]:
    """A count table spelled in symbols: ``{"low": 5}`` -> ``[(("l", "o", "w</w>"), 5)]``."""
    sp = make_spelling(spelling)
    units: dict = {}
    for text, count in read_data(counts):
        for u in sp.units(text):
            units[u] = units.get(u, 0) + count
    return list(units.items())


def _spelling_parts(spelling: str):
    sp = make_spelling(spelling)
    return sp.join, sp.show, sp.parse


def _apply(state: State, pair, join) -> State:
    left, right = pair
    joined = join(left, right)
    return tuple((tuple(bpe.apply_merge(list(s), left, right, joined)), c) for s, c in state)


def _parse_pair(pair, parse):
    left, right = (parse(p) for p in pair)
    if left is None or right is None:
        raise ValueError(f"{pair!r} is not a pair of pieces of this spelling")
    return left, right


def corpus_lengths(
    counts: Mapping[str, int], sequence: Iterable[tuple[str, str]], spelling: str = "end"
) -> list[int]:
    """Corpus length (pieces) before any merge and after each merge of ``sequence``.

    A merge whose pair does not occur changes nothing (its length repeats).
    """
    join, _, parse = _spelling_parts(spelling)
    state: State = tuple(spell_table(counts, spelling))
    out = [bpe.corpus_length(state)]
    for pair in sequence:
        state = _apply(state, _parse_pair(pair, parse), join)
        out.append(bpe.corpus_length(state))
    return out


def optimal_merges(
    counts: Mapping[str, int],
    merges: int,
    spelling: str = "end",
    *,
    after: Iterable[tuple[str, str]] = (),
    min_count: int = 1,
) -> tuple[int, list[tuple[tuple[str, str], ...]]]:
    """The shortest corpus reachable with ``merges`` merges, and every sequence reaching it.

    ``counts``: a small count table (``{"report": 2, "taste": 8, "state": 10}``). ``after``:
    merges applied first (the search continues from there; they are not part of the returned
    sequences). Returns ``(best_length, sequences)``, each sequence a tuple of ``(left, right)``
    pairs printed as the spelling prints pieces, the sequences sorted.
    """
    if isinstance(merges, bool) or not isinstance(merges, int) or merges < 0:
        raise ValueError(f"merges must be a whole number >= 0, got {merges!r}")
    if isinstance(min_count, bool) or not isinstance(min_count, int) or min_count < 1:
        raise ValueError(f"min_count must be a whole number >= 1, got {min_count!r}")
    join, show, parse = _spelling_parts(spelling)
    start: State = tuple(spell_table(counts, spelling))
    for pair in after:
        start = _apply(start, _parse_pair(pair, parse), join)

    @lru_cache(maxsize=None)
    def best(state: State, k: int) -> tuple[int, tuple]:
        pairs = {p: c for p, c in bpe.count_pairs(state).items() if c >= min_count}
        if k == 0 or not pairs:
            return bpe.corpus_length(state), ((),)
        results = []
        for pair in sorted(pairs):
            length, tails = best(_apply(state, pair, join), k - 1)
            results.append((length, pair, tails))
        shortest = min(r[0] for r in results)
        seqs = tuple(
            (pair,) + tail for length, pair, tails in results if length == shortest for tail in tails
        )
        return shortest, seqs

    length, seqs = best(start, merges)
    printed = sorted(tuple((show(a), show(b)) for a, b in seq) for seq in seqs)
    return length, printed
