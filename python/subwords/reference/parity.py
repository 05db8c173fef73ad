"""Parity-aware BPE, written to be read: the differential oracle of the core's learner
(``crates/subwords-core/src/learners/merge/parity.rs``).

The paper: Foroutan, Meister, Paul, Niklaus, Ahmadi, Bosselut and Sennrich, "Parity-aware Byte
Pair Encoding: Improving Cross-lingual Fairness in Tokenization" (arXiv 2508.04796).

The definition
--------------
The corpus is given per language. BPE merges, one pair at a time, as usual, but the pair is not
the most frequent one of the whole corpus: at each step the language *compressed worst so far*
is found, and the merge is the pair counted most often in that language's units. The merge is
then applied to every language's units (left to right, without overlap), so the result is an
ordinary BPE merge list.

* A language's cost is ``tokens(l) / d(l)``, its current pieces (each unit's length times its
  count) over ``d(l)``: its bytes of text (``"tokens_per_byte"``, our default: comparable on
  text that is not parallel), 1 (``"tokens"``: the paper's rule on a parallel development set,
  where every language says the same), or its pieces before the first merge
  (``"tokens_per_symbol"``: the inverse of the paper's compression rate). The worst language
  has the largest cost, compared exactly as fractions; ties go to the language given first.
* Within the language, the largest count wins; ties go to the smaller ``(left, right)`` by the
  pieces' UTF-8 bytes (the library's rule).
* A language whose best pair is counted below ``min_count`` (or that has none) is *exhausted*
  and skipped from then on; every language exhausted ends the run.
* ``global_merges``: the first merges take the largest count over all languages (plain BPE; the
  paper's hybrid).
* ``window`` (with ``alpha``, default 2): over the last ``window`` parity steps, a language that
  took more than ``alpha / L`` of them is passed over for the next worse one (all passed over:
  the worst). Global merges do not enter the window.

The size is the number of new rows (a merge whose text is already a row adds none).

A worked case (tests/methods/test_parity.py checks it): ``en`` holds ``a b`` x6 and ``x y`` x3
(18 bytes), ``de`` holds ``ç d`` x2 (``ç`` is two bytes: 6 bytes) and a one-symbol unit ``e`` x1
(1 byte); two merges, ``min_count`` 1, tokens per byte::

    before:  en 18/18 = 1      de 5/7 = 0.714   -> en: (a,b) 6      -> ab
    then:    en 12/18 = 0.667  de 5/7 = 0.714   -> de: (ç,d) 2      -> çd
    after:   en 12/18 = 0.667  de 3/7 = 0.429

    plain BPE: (a,b) 6, then (x,y) 3 -- the parity rule gives the second merge to de.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Optional

Unit = tuple[tuple[str, ...], int, int]  # (symbols, count, language)


@dataclass
class Learned:
    merges: list[tuple[str, str]]
    #: the language that chose each merge (None: a global merge)
    chosen_by: list[Optional[int]]
    stop: str
    #: each language's pieces after the last merge
    tokens_after: list[int]


def _pairs(units: list[list[str]], counts: list[int], langs: list[int], lang: Optional[int]) -> Counter[tuple[str, str]]:
    """Pair counts over the units of ``lang`` (None: every language), overlaps included."""
    c: Counter[tuple[str, str]] = Counter()
    for u, n, l in zip(units, counts, langs):
        if lang is None or l == lang:
            for a, b in zip(u, u[1:]):
                c[(a, b)] += n
    return c


def _best(c: Counter[tuple[str, str]]) -> Optional[tuple[tuple[str, str], int]]:
    """The largest count; ties to the smaller (left, right) by UTF-8 bytes."""
    if not c:
        return None
    pair = min(c, key=lambda p: (-c[p], p[0].encode(), p[1].encode()))
    return pair, c[pair]


def _merge(u: list[str], a: str, b: str) -> list[str]:
    out, i = [], 0
    while i < len(u):
        if i + 1 < len(u) and u[i] == a and u[i + 1] == b:
            out.append(a + b)
            i += 2
        else:
            out.append(u[i])
            i += 1
    return out


def learn(units: Sequence[Unit], bytes_: Sequence[int], new_rows: int, min_count: int = 1,
          measure: str = "tokens_per_byte", global_merges: int = 0, window: Optional[int] = None,
          alpha: float = 2.0, fixed: Optional[Sequence[int]] = None) -> Learned:
    """Parity-aware BPE on ``units`` for ``len(bytes_)`` languages; ``fixed``: pieces per
    language outside the units (they count in its tokens; no merge changes them)."""
    n_lang = len(bytes_)
    toks = [list(s) for s, _, _ in units]
    counts = [n for _, n, _ in units]
    langs = [l for _, _, l in units]
    extra = list(fixed) if fixed is not None else [0] * n_lang

    def tokens(l: int) -> int:
        return extra[l] + sum(len(u) * n for u, n, x in zip(toks, counts, langs) if x == l)

    before = [tokens(l) for l in range(n_lang)]
    denom = {"tokens_per_byte": list(bytes_), "tokens": [1] * n_lang,
             "tokens_per_symbol": [max(t, 1) for t in before]}[measure]
    rows = {s for u in toks for s in u}
    merges: list[tuple[str, str]] = []
    chosen: list[Optional[int]] = []
    exhausted: set[int] = set()
    recent: list[int] = []
    stop = "size"
    made = 0
    while made < new_rows:
        pick: Optional[tuple[tuple[str, str], Optional[int]]] = None
        if len(merges) < global_merges:
            best = _best(_pairs(toks, counts, langs, None))
            if best is not None and best[1] >= min_count:
                pick = (best[0], None)
        else:
            while True:
                live = [l for l in range(n_lang) if l not in exhausted]
                if not live:
                    break
                # worst first: the largest tokens / denom; ties to the language given first
                order = sorted(live, key=lambda l: (-Fraction(tokens(l), denom[l]), l))
                chosen_lang = order[0]
                if window is not None:
                    limit = alpha / n_lang
                    for l in order:
                        if recent.count(l) / window <= limit:
                            chosen_lang = l
                            break
                best = _best(_pairs(toks, counts, langs, chosen_lang))
                if best is not None and best[1] >= min_count:
                    pick = (best[0], chosen_lang)
                    break
                exhausted.add(chosen_lang)
        if pick is None:
            left = _pairs(toks, counts, langs, None)
            stop = "min_count" if any(v > 0 for v in left.values()) else "no_pairs"
            break
        (a, b), lang = pick
        if lang is not None and window is not None:
            recent = (recent + [lang])[-window:]
        if a + b not in rows:
            rows.add(a + b)
            made += 1
        toks = [_merge(u, a, b) for u in toks]
        merges.append((a, b))
        chosen.append(lang)
    return Learned(merges=merges, chosen_by=chosen, stop=stop, tokens_after=[tokens(l) for l in range(n_lang)])
