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

import itertools
import math
from collections.abc import Callable, Container, Iterable, Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache
from typing import Any, Optional, Union

from .reference import bpe
from .reference.spelling import Piece, Spelling, Unknown, make_spelling
from .reference.pipeline import Unit, read_data

__all__ = [
    "optimal_merges",
    "corpus_lengths",
    "spell_table",
    "wordpiece_candidates",
    "WordPieceCandidate",
    "can_divide",
    "greedy_vs_exhaustive",
    "GreedyCheck",
]

State = tuple[tuple[tuple[Union[Piece, Unknown], ...], int], ...]  # ((symbols, count), ...) -- hashable corpus state
Join = Callable[[Piece, Piece], Piece]
Sequences = tuple[tuple[tuple[Piece, Piece], ...], ...]  # merge sequences, each a tuple of pairs


def spell_table(counts: Mapping[str, int], spelling: str = "end") -> list[tuple[Unit, int]]:
    """A count table spelled in symbols: ``{"low": 5}`` -> ``[(("l", "o", "w</w>"), 5)]``."""
    sp = make_spelling(spelling)
    units: dict[Unit, int] = {}
    for text, count in read_data(counts):
        for u in sp.units(text):
            units[u] = units.get(u, 0) + count
    return list(units.items())


def _spelling_parts(spelling: str) -> tuple[Join, Callable[[Piece], str], Callable[[str], Optional[Piece]]]:
    sp = make_spelling(spelling)
    return sp.join, sp.show, sp.parse


def _apply(state: State, pair: tuple[Piece, Piece], join: Join) -> State:
    left, right = pair
    joined = join(left, right)
    return tuple((tuple(bpe.apply_merge(list(s), left, right, joined)), c) for s, c in state)


def _parse_pair(pair: tuple[str, str], parse: Callable[[str], Optional[Piece]]) -> tuple[Piece, Piece]:
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
    def best(state: State, k: int) -> tuple[int, Sequences]:
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


# ------------------------------------------------------------------------------------------------
# WordPiece


@dataclass(frozen=True)
class WordPieceCandidate:
    """One adjacent pair of a spelled corpus, with both figures the WordPiece page orders by.

    ``score`` is ``count / (count(left) * count(right))``, exact; ``gain`` is the total
    likelihood gain of merging it everywhere, ``count * log(N * score)`` (natural log, ``N`` the
    corpus length in symbols), a float for reading only.
    """

    left: str
    right: str
    count: int
    score: Fraction
    gain: float


def wordpiece_candidates(
    counts: Mapping[str, int], spelling: str = "continuation"
) -> list[WordPieceCandidate]:
    """Every adjacent pair of the count table as spelled, in the order the WordPiece learner
    ranks them (score descending, then its tie rule), each with its count, score and total gain.

    The WordPiece page's four words: 11 pairs in a corpus of 79 symbols. The score ranks ``##i
    ##d`` first (1/3, ahead of ``w ##i`` at 1/3 on the tie rule); the total gain is largest for
    ``##s ##t`` (19.55), which the score ranks fourth:

        >>> rows = wordpiece_candidates({"low": 5, "lower": 2, "newest": 6, "widest": 3})
        >>> len(rows), rows[0].left, rows[0].right, rows[0].score
        (11, '##i', '##d', Fraction(1, 3))
        >>> best = max(rows, key=lambda r: r.gain)
        >>> best.left, best.right, round(best.gain, 2), rows.index(best) + 1
        ('##s', '##t', 19.55, 4)
    """
    from .reference import wordpiece

    sp = make_spelling(spelling)
    units = spell_table(counts, spelling)
    total = bpe.corpus_length(units)
    mark = sp.mark if spelling == "continuation" else None
    out = []
    for (a, b), count, score in wordpiece.ranked_candidates(units, sp.join, mark):
        gain = count * math.log(total * score)
        out.append(WordPieceCandidate(sp.show(a), sp.show(b), count, score, gain))
    return out


def _wordpiece_parts(tokenizer: Any) -> tuple[Spelling[Any], set[str]]:
    """The spelling and the set of pieces a WordPiece tokenizer (either engine) cuts with."""
    options = tokenizer.options
    if options.get("model") != "wordpiece":
        raise ValueError("this check needs a WordPiece tokenizer (model='wordpiece')")
    if options.get("byte_fallback"):
        raise ValueError("with byte fallback the greedy cut never refuses; train without it")
    sp = make_spelling(options["spelling"], mark=options.get("mark"))
    rows = zip(tokenizer.rows, tokenizer.kinds)
    pieces = {p for p, kind in rows if kind in ("alphabet", "learned")}
    return sp, pieces


def can_divide(symbols: Sequence[Piece], pieces: Container[Piece], join: Join) -> bool:
    """Whether some division of the unit's symbols into consecutive runs has every run's joined
    piece in ``pieces`` (an exhaustive search, by dynamic programming over end positions)."""
    n = len(symbols)
    reachable = [True] + [False] * n
    for i in range(n):
        if not reachable[i]:
            continue
        piece: Optional[Piece] = None
        for j in range(i + 1, n + 1):
            piece = symbols[i] if piece is None else join(piece, symbols[j - 1])  # the first symbol starts the piece
            if piece in pieces:
                reachable[j] = True
    return reachable[n]


@dataclass(frozen=True)
class GreedyCheck:
    """What :func:`greedy_vs_exhaustive` found."""

    #: Strings tried (each one word).
    strings: int
    #: Strings the greedy cut spelled.
    spelled: int
    #: Greedy refusals at the first character (no row starts the word).
    refused_first: int
    #: Greedy refusals after the first character.
    refused_later: int
    #: Strings where the greedy cut and the exhaustive search disagree on whether a division
    #: exists (or where the greedy pieces are not a division of the word).
    disagreements: tuple[str, ...]


def greedy_vs_exhaustive(tokenizer: Any, letters: str, max_len: int) -> GreedyCheck:
    """Encode every string of length 1..``max_len`` on ``letters`` (as one word) and compare the
    greedy longest-match cut with an exhaustive search for any division into rows.

    The WordPiece page's argument: with a complete alphabet every position after the first has a
    one-character continuation piece, so the greedy cut refuses only where no division exists.
    On the four words (continuation spelling) the ten letters give 11,110 strings; ``l`` and
    ``n`` never appear inside a word (no ``##l``, ``##n``), so 3 x ((10 - 8) + (100 - 64) +
    (1000 - 512)) = 1,578 strings fail after their first character:

        >>> from subwords.reference import train
        >>> tok = train({"low": 5, "lower": 2, "newest": 6, "widest": 3}, model="wordpiece",
        ...             vocab_size=100)
        >>> check = greedy_vs_exhaustive(tok, "delnorstwi", 3)
        >>> check.refused_later, check.disagreements
        (114, ())
    """
    sp, pieces = _wordpiece_parts(tokenizer)
    unk = "[UNK]"
    strings = spelled = refused_first = refused_later = 0
    disagreements: list[str] = []
    for length in range(1, max_len + 1):
        for chars in itertools.product(letters, repeat=length):
            word = "".join(chars)
            strings += 1
            (symbols,) = sp.units(word)
            got = tokenizer.encode_pieces(word)
            exists = can_divide(symbols, pieces, sp.join)
            if unk in got:
                if _opens(symbols, pieces, sp.join):
                    refused_later += 1
                else:
                    refused_first += 1
                if exists:
                    disagreements.append(word)
            else:
                spelled += 1
                is_division = all(p in pieces for p in got) and sp.decode(got) == word.encode()
                if not exists or not is_division:
                    disagreements.append(word)
    return GreedyCheck(strings, spelled, refused_first, refused_later, tuple(disagreements))


def _opens(symbols: Sequence[Piece], pieces: Container[Piece], join: Join) -> bool:
    """Whether some row matches at the unit's first position."""
    piece: Optional[Piece] = None
    for j in range(1, len(symbols) + 1):
        piece = symbols[0] if piece is None else join(piece, symbols[j - 1])  # the first symbol starts the piece
        if piece in pieces:
            return True
    return False
