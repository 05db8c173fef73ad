"""Picky BPE, written to be read: the differential oracle of the core's learner.

The paper: Chizhov, Arnett, Korotkova and Yamshchikov, "BPE Gets Picky: Efficient Vocabulary
Refinement During Tokenizer Training", EMNLP 2024 (arXiv 2409.04599).

The definition
--------------
Plain BPE, with one step added after every merge. When ``x1 + x2`` is merged, the paper measures
for each of the two tokens its *intersection over self*::

    IoS(x | x1, x2) = f_p(x1, x2) / f_t(x)

where ``f_p`` is how often the pair was merged (the pair's frequency) and ``f_t(x)`` how often
``x`` stood as a token just before the merge. A token that is not a single symbol and whose IoS
reaches the threshold ``T`` (``IoS >= T``) is *removed*: every occurrence of it left in the
corpus is split back into the tokens it was made of (its two parts, and a part that is itself
removed into its own parts, down to tokens that are present or single symbols), and it leaves
the vocabulary. The left token is checked first, then the right one (once when both are the same
token); a removal may raise the frequency of a token checked after it, and ``f_t`` is read at
the time of the check. A later merge that makes a removed token's text again *restores* it, with
the parts it was first made of.

The size counts the tokens present: training goes on until the learned tokens present reach the
number asked (or no pair is left, or the best pair is counted below ``min_count``).

Our choices on points the paper leaves to its code
--------------------------------------------------
* Ties are broken as everywhere in this library: the smallest ``(left, right)`` in code-point
  order. ``IoS`` is compared in floating point (``f_p / f_t >= T``); a division is correctly
  rounded, so the core computes the same quotient.
* The paper's own code compares with ``>`` and, for a pair of one token with itself, divides by
  the frequency left after the merge; this module follows the paper's formula (``>=``, and
  ``f_t`` before the merge, so ``a + a`` divides by ``a``'s count including both halves).

Encoding replays the *events* in order: each merge joins every occurrence of its pair, left to
right without overlap; each removal splits every occurrence of its token into the parts recorded
when it was removed.

A worked case (tests/methods/test_picky.py checks it): units ``a b c`` x5, ``a b`` x1,
``b d`` x2, two learned tokens, ``min_count`` 1, ``T`` = 0.8::

    pairs: (a,b) 6, (b,c) 5, (b,d) 2         -> merge a + b = ab   (f_p 6; a, b are symbols)
    pairs: (ab,c) 5, (b,d) 2                 -> merge ab + c = abc (f_p 5)
        IoS(ab) = 5 / 6 = 0.833 >= 0.8       -> remove ab: the unit ab x1 becomes a b
    pairs: (a,b) 1, (b,d) 2                  -> merge b + d = bd   (two learned tokens: stop)

    the vocabulary: a b c d abc bd;  events: +ab +abc -ab +bd
    encoding "abd": ab d -> (remove ab) a b d -> a bd        plain BPE: ab d

At ``T`` = 0.9 nothing is removed and the result is plain BPE's (ab, abc).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Union

Symbols = tuple[str, ...]


@dataclass(frozen=True)
class Merge:
    left: str
    right: str
    result: str


@dataclass(frozen=True)
class Remove:
    token: str
    parts: tuple[str, ...]


Event = Union[Merge, Remove]


@dataclass
class Learned:
    """What one run produced."""

    events: list[Event] = field(default_factory=list)
    #: The learned tokens present at the end, in the order they were (last) made.
    vocabulary: list[str] = field(default_factory=list)
    #: Why training stopped: "size", "min_count" or "no_pairs".
    stop: str = "size"
    #: The units' final segmentations (each unit's symbols as training left them).
    segmented: dict[Symbols, list[str]] = field(default_factory=dict)


def pair_counts(units: Mapping[Symbols, list[str]], counts: Mapping[Symbols, int]) -> Counter[tuple[str, str]]:
    """Each adjacent pair of the units' segmentations, counted with overlaps, times the unit's count."""
    pairs: Counter[tuple[str, str]] = Counter()
    for u, toks in units.items():
        for a, b in zip(toks, toks[1:]):
            pairs[(a, b)] += counts[u]
    return pairs


def token_counts(units: Mapping[Symbols, list[str]], counts: Mapping[Symbols, int]) -> Counter[str]:
    """Each token of the units' segmentations, times the unit's count."""
    f: Counter[str] = Counter()
    for u, toks in units.items():
        for t in toks:
            f[t] += counts[u]
    return f


def merge_all(toks: list[str], left: str, right: str, result: str) -> list[str]:
    """Every occurrence of ``left right``, left to right, without overlap."""
    out: list[str] = []
    i = 0
    while i < len(toks):
        if i + 1 < len(toks) and toks[i] == left and toks[i + 1] == right:
            out.append(result)
            i += 2
        else:
            out.append(toks[i])
            i += 1
    return out


def split_all(toks: list[str], token: str, parts: Iterable[str]) -> list[str]:
    out: list[str] = []
    parts = list(parts)
    for t in toks:
        out.extend(parts if t == token else [t])
    return out


def learn(units: Mapping[Symbols, int], new_rows: int, threshold: float, min_count: int = 2) -> Learned:
    """Picky BPE on units already spelled in symbols (each a tuple of strings) with counts.

    ``new_rows``: how many learned tokens may be present at the end. ``threshold`` in (0, 1].
    """
    counts = {tuple(u): c for u, c in units.items() if c > 0}
    seg: dict[Symbols, list[str]] = {u: list(u) for u in counts}
    symbols = {s for u in counts for s in u}
    made: dict[str, tuple[str, str]] = {}  # a learned token's text -> the parts it was first made of
    present: list[str] = []  # learned tokens present, in order
    out = Learned()
    while len(present) < new_rows:
        pairs = pair_counts(seg, counts)
        if not pairs:
            out.stop = "no_pairs"
            break
        best = max(pairs.values())
        if best < min_count:
            out.stop = "min_count"
            break
        left, right = min(p for p, c in pairs.items() if c == best)
        result = left + right
        before = token_counts(seg, counts)
        for u in seg:
            seg[u] = merge_all(seg[u], left, right, result)
        out.events.append(Merge(left, right, result))
        if result not in symbols:
            if result not in made:
                made[result] = (left, right)
            if result not in present:
                present.append(result)  # new, or a removed token restored
        after = token_counts(seg, counts)
        f_p = after[result] - before[result]
        for x in dict.fromkeys((left, right)):
            if x in symbols or x not in present:
                continue
            # f_t(x): x's count just before the merge (a removal checked first may have raised it)
            f_t = after[x] + f_p * (left == x) + f_p * (right == x)
            if f_t > 0 and f_p / f_t >= threshold:
                present.remove(x)
                parts = tuple(_walk(x, made, symbols, present))
                for u in seg:
                    seg[u] = split_all(seg[u], x, parts)
                out.events.append(Remove(x, parts))
                after = token_counts(seg, counts)
    else:
        out.stop = "size"
    out.vocabulary = present
    out.segmented = seg
    return out


def _walk(x: str, made: Mapping[str, tuple[str, str]], symbols: set[str], present: list[str]) -> list[str]:
    """The tokens a removed ``x`` splits into: its parts, a removed part split in turn."""
    out: list[str] = []
    for p in made[x]:
        if p in symbols or p in present:
            out.append(p)
        else:
            out.extend(_walk(p, made, symbols, present))
    return out


def encode(symbols: Iterable[str], events: Iterable[Event]) -> list[str]:
    """A unit's tokens: its symbols, then every event in order."""
    toks = list(symbols)
    for e in events:
        if isinstance(e, Merge):
            toks = merge_all(toks, e.left, e.right, e.result)
        else:
            toks = split_all(toks, e.token, e.parts)
    return toks
