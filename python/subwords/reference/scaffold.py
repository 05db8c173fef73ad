"""Scaffold-BPE, written to be read: the differential oracle of the core's learner.

The paper: Lian, Xiong, Niu, Mo, Su, Lin, Chen, Liu, Han and Ding, "Scaffold-BPE: Enhancing Byte
Pair Encoding for Large Language Models with Simple and Effective Scaffold Token Removal",
arXiv 2404.17808.

The definition
--------------
BPE keeps every token it makes, including tokens that were mostly a step towards a longer one
and afterwards stand on their own only rarely: the paper's *scaffold tokens*. Scaffold-BPE keeps
plain BPE's merges, in plain BPE's order, and marks such tokens while it trains:

* ``f(t)`` is how often a learned token ``t`` stands as a token in the corpus as the merges so
  far left it (a merge that makes ``t`` adds its occurrences; a merge that joins ``t`` on takes
  them away).
* The paper's priority queue holds the pairs, by count, *and* the scaffold tokens, by ``f``.
  Each round takes its head. When the head is a pair ``(a, b)``, it is merged into ``ab``; then
  each of ``a`` and ``b`` that is a learned token and not scaffold is marked scaffold when
  ``f(x)`` is below the count of the queue's new head (``f(x) < f(head)``).
* When the head is a scaffold token (its ``f`` stayed while the pairs' counts fell below it), it
  is *unmarked*: an ordinary token again. That round merges nothing.
* The size counts the learned tokens that are not scaffold: training goes on until they reach
  the number asked (or the queue is empty, or its head is counted below ``min_count``).

Encoding applies every merge in order (scaffold tokens are made, and joined on, as in training),
then *demolishes* each scaffold token left in the result: it is replaced by the two tokens it was
made of, again while one of them is scaffold. The scaffold tokens are no rows.

Our choices on points the paper leaves open
-------------------------------------------
* Ties: pairs of equal count go to the smallest ``(left, right)`` in code-point order, as
  everywhere in this library; scaffold tokens of equal ``f`` to the smallest text; a scaffold
  token before a pair of the same count (the mark is strict, ``f(x) < f(head)``, so a token
  counted as much as the head is no scaffold token).
* A token is demolished into the parts of the merge that first made it (a text made again by
  another pair keeps its first parts).
* Alphabet symbols are never scaffold: they cannot be demolished.

A worked case (tests/methods/test_scaffold.py checks it): units ``a b c d`` x3, ``a b c e`` x2,
``a b`` x1, ``b x`` x1, ``min_count`` 1::

    pairs (a,b) 6, (b,c) 5, (c,d) 3, (c,e) 2, (b,x) 1   -> merge a + b = ab       f(ab) = 6
    pairs (ab,c) 5, ...                                  -> merge ab + c = abc     f(abc) = 5, f(ab) = 1
        head: (abc,d) 3; f(ab) = 1 < 3                   -> ab is scaffold          rows: abc
    head (abc,d) 3 (ab, 1, is below it)                  -> merge abc + d = abcd   f(abcd) = 3, f(abc) = 2
        head: (abc,e) 2; f(abc) = 2 is not below 2                                  rows: abc abcd
    head (abc,e) 2                                       -> merge abc + e = abce   f(abce) = 2, f(abc) = 0
        head: (b,x) 1 and ab 1; f(abc) = 0 < 1           -> abc is scaffold         rows: abcd abce
    head: ab (f 1, ties (b,x) 1, a token first)          -> ab unmarked             rows: ab abcd abce
    head (b,x) 1                                         -> merge b + x = bx        rows: ab abcd abce bx

    encoding "abc": a b c -> ab c -> abc -> (abc demolished) ab c;  plain BPE: abc
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Union

from .picky import merge_all, pair_counts, token_counts

Symbols = tuple[str, ...]


@dataclass(frozen=True)
class Merge:
    left: str
    right: str
    result: str


@dataclass(frozen=True)
class Mark:
    """``token`` became a scaffold token (after the merge before it)."""

    token: str


@dataclass(frozen=True)
class Unmark:
    """``token`` is an ordinary token again (a round that merges nothing)."""

    token: str


Event = Union[Merge, Mark, Unmark]


@dataclass
class Learned:
    """What one run produced."""

    events: list[Event] = field(default_factory=list)
    #: The learned tokens that are not scaffold at the end, in the order they were first made.
    vocabulary: list[str] = field(default_factory=list)
    #: The tokens scaffold at the end, in the order they were first made.
    scaffold: list[str] = field(default_factory=list)
    #: Each learned token's parts (the merge that first made it).
    made: dict[str, tuple[str, str]] = field(default_factory=dict)
    #: Why training stopped: "size", "min_count" or "no_pairs".
    stop: str = "size"

    @property
    def merges(self) -> list[Merge]:
        return [e for e in self.events if isinstance(e, Merge)]


def learn(units: Mapping[Symbols, int], new_rows: int, min_count: int = 2) -> Learned:
    """Scaffold-BPE on units already spelled in symbols (each a tuple of strings) with counts.

    ``new_rows``: how many learned tokens that are not scaffold there may be at the end.
    """
    counts = {tuple(u): c for u, c in units.items() if c > 0}
    seg: dict[Symbols, list[str]] = {u: list(u) for u in counts}
    symbols = {s for u in counts for s in u}
    out = Learned()
    learned: list[str] = []  # in the order first made
    scaffold: set[str] = set()
    while len(learned) - len(scaffold) < new_rows:
        pairs = pair_counts(seg, counts)
        f = token_counts(seg, counts)
        best_pair = None
        if pairs:
            top = max(pairs.values())
            best_pair = min(p for p, c in pairs.items() if c == top)
        waiting = [t for t in scaffold if f[t] > 0]
        if waiting:
            top_f = max(f[t] for t in waiting)
            token = min(t for t in waiting if f[t] == top_f)
            if top_f >= min_count and (best_pair is None or top_f >= pairs[best_pair]):
                scaffold.remove(token)
                out.events.append(Unmark(token))
                continue
        if best_pair is None:
            out.stop = "no_pairs"
            break
        if pairs[best_pair] < min_count:
            out.stop = "min_count"
            break
        left, right = best_pair
        result = left + right
        for u in seg:
            seg[u] = merge_all(seg[u], left, right, result)
        out.events.append(Merge(left, right, result))
        if result not in symbols and result not in out.made:
            out.made[result] = (left, right)
            learned.append(result)
        f = token_counts(seg, counts)
        pairs = pair_counts(seg, counts)
        head = max([*pairs.values(), *(f[t] for t in scaffold), 0])
        for x in dict.fromkeys((left, right)):
            if x in out.made and x not in scaffold and f[x] < head:
                scaffold.add(x)
                out.events.append(Mark(x))
    else:
        out.stop = "size"
    out.vocabulary = [t for t in learned if t not in scaffold]
    out.scaffold = [t for t in learned if t in scaffold]
    return out


def demolish(token: str, made: Mapping[str, tuple[str, str]], scaffold: Iterable[str]) -> list[str]:
    """A token's pieces: itself, or, when it is scaffold, its parts demolished in turn."""
    scaffold = set(scaffold)
    if token not in scaffold:
        return [token]
    left, right = made[token]
    return demolish(left, made, scaffold) + demolish(right, made, scaffold)


def encode(symbols: Iterable[str], learned: Learned) -> list[str]:
    """A unit's tokens: its symbols, every merge in order, then the scaffold tokens demolished."""
    toks = list(symbols)
    for m in learned.merges:
        toks = merge_all(toks, m.left, m.right, m.result)
    return [p for t in toks for p in demolish(t, learned.made, learned.scaffold)]
