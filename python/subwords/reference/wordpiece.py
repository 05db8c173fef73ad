"""WordPiece: the merge loop with a different score, and longest-match encoding.

The learner
-----------
The loop is BPE's (:mod:`.bpe`): spell every unit in symbols, count adjacent pairs (weighted by
the unit's count, overlapping positions included, never across units), take the best pair,
replace every occurrence, go round again. Only *best* changes. WordPiece scores a pair by how
much more often its halves are adjacent than their own counts would lead you to expect::

    score(a, b) = count(a, b) / (count(a) * count(b))

``count(a)`` is how often the piece ``a`` occurs anywhere in the corpus as it stands, *including*
the occurrences inside the pair being scored, so the denominator is never zero. Scores are
compared exactly (here as :class:`fractions.Fraction`; never as floats).

The default spelling is ``continuation``: a word's first symbol is plain, every other carries
``##`` (``low`` -> ``l ##o ##w``); joining strips the right piece's mark (``##i`` + ``##d`` =
``##id``, ``w`` + ``##id`` = ``wid``). The ``end`` spelling (``l o w</w>``) is the other option.

Worked example, the four words of the WordPiece page (``low`` 5, ``lower`` 2, ``newest`` 6,
``widest`` 3): 11 symbols, 11 adjacent pairs, 79 symbols in all. ``##e`` occurs 17 times and
``##s`` 9 times, adjacent 9 times; ``##i`` and ``##d`` occur 3 times each, always together:

    >>> table = {"low": 5, "lower": 2, "newest": 6, "widest": 3}
    >>> units = spell(table)
    >>> symbol_counts(units)["##e"], bpe.count_pairs(units)[("##e", "##s")]
    (17, 9)
    >>> score_of(9, 17, 9), score_of(3, 3, 3)
    (Fraction(1, 17), Fraction(1, 3))

Counting would merge ``##e ##s`` first (9 is the largest count); the score takes a pair at 1/3.
Two pairs are there -- ``##i ##d`` and ``w ##i`` (``w`` opens ``widest``, 3 times) -- and the
method itself has no answer to a tie. The rule here: compare the joined pieces as text in the
spelling where a word-first piece carries the front mark ``▁`` (U+2581, 9601) and a continuation
is bare, so ``id`` against ``▁wi``. ``i`` is 105, so ``##id`` wins, and ``wi`` is never learned
(the next turn joins ``w`` + ``##id``):

    >>> learned = learn(units, 100, rows_before=12)
    >>> learned.merges[:3]
    [('##i', '##d'), ('w', '##id'), ('l', '##o')]
    >>> learned.stop, len(learned.merges), bpe.corpus_length(learned.units)
    ('no_pairs', 12, 16)

``min_count`` (default 2) keeps pairs seen fewer times out of the running. By default it
*filters the candidates* before the best is chosen. The other reading, ``min_count_rule="stop"``,
tests the winner and ends the run when it fails; under this score the two differ, because the
winner can be a rare pair while common pairs are still unmerged. With a minimum of 3 on the four
words, after five merges the best pair is ``##e ##r`` (1/17, seen twice, first of six pairs
tied at 1/17), so the winner test stops there, while filtering goes on to learn ten merges:

    >>> stop = learn(units, 100, rows_before=12, min_count=3, min_count_rule="stop")
    >>> stop.merges
    [('##i', '##d'), ('w', '##id'), ('l', '##o'), ('##s', '##t'), ('lo', '##w')]
    >>> stop.stop, stop.winner_failed
    ('min_count', ('##e', '##r', 2))
    >>> len(learn(units, 100, rows_before=12, min_count=3).merges)
    10

The segmenter (longest match first)
-----------------------------------
Encoding does not replay the merges; it looks only at the rows. At each position of the unit
take the longest run of symbols whose joined piece is a row, and go on after it. Under
``continuation`` a run starting after the first position is a ``##`` piece; under ``end`` a run
that finishes the unit ends in the marked symbol, so only a marked piece can finish a word.

    >>> pieces = {"l", "##o", "##w", "##e", "##r", "lo", "low", "##er"}
    >>> join = make_spelling("continuation").join
    >>> longest_match(("l", "##o", "##w", "##e", "##r"), pieces, join)
    (['low', '##er'], 5)
    >>> longest_match(("l", "##o", "##l"), pieces, join)   # no ##l: the cut fails after "lo"
    (['lo'], 2)

A unit that cannot be finished is one ``[UNK]`` (``unknown="word"``, the default), or keeps
the pieces matched so far and puts one ``[UNK]`` for the rest (``unknown="rest"``); a unit
longer than ``max_word_length`` characters (default 100, as in BERT) is one ``[UNK]``. With
byte fallback a symbol with no row becomes its byte-fallback rows and the cut goes on.

Whenever every symbol of a unit has a row (the alphabet is complete), the greedy cut never
fails: every learned piece is made of alphabet symbols, so a one-symbol piece is always there
to fall back on. So it refuses exactly what an exhaustive search over divisions refuses
(:func:`subwords.analysis.greedy_vs_exhaustive`).

This reference tries every run length at every position: quadratic in the unit's length, and
fine for an oracle. (The Rust engine uses a trie with failure links, linear in the length.)
"""

from __future__ import annotations

from collections.abc import Callable, Container, Iterable, Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Union, cast

from subwords.errors import InputError, SubwordsError

from . import bpe
from .spelling import MARKER, UNK, WORD_START, Piece, RowKey, Unknown, byte_row, make_spelling
from .tokenizer import Tokenizer
from .pipeline import Data, Unit, _is_int, _need, choose_alphabet, read_data, validate

#: The mark a word-first piece carries in the tie-break spelling (U+2581).
FRONT_MARK = "\u2581"

SPELLINGS = ("continuation", "end")
MIN_COUNT_RULES = ("filter", "stop")
UNKNOWN_MODES = ("word", "rest")

# Options of subwords.train that mean nothing for WordPiece, with their defaults: a value other
# than the default is refused, not ignored.
_NOT_FOR_WORDPIECE = {
    "byte_fallback_in_budget": False,
    "split_at_marks": True,
    "pre_split": None,
    "joints": None,
    "superword_at": None,
    "max_piece_length": None,
}


# ------------------------------------------------------------------------------------------------
# the learner


@dataclass
class Learned(bpe.Learned):
    """What one run of the WordPiece learner produced (see :class:`bpe.Learned`), plus the
    failed winner when the winner test (``min_count_rule="stop"``) ended the run."""

    winner_failed: tuple[Piece, Piece, int] | None = None


def spell(table: Mapping[str, int], spelling: str = "continuation") -> list[tuple[Unit, int]]:
    """A count table spelled in symbols: ``{"low": 5}`` -> ``[(("l", "##o", "##w"), 5)]``."""
    sp = make_spelling(spelling)
    units: dict[Unit, int] = {}
    for text, count in read_data(table):
        for u in sp.units(text):
            units[u] = units.get(u, 0) + count
    return list(units.items())


def symbol_counts(units: Iterable[tuple[Sequence[Union[Piece, Unknown]], int]]) -> dict[Piece, int]:
    """How often each piece occurs anywhere in the corpus as it stands (inside pairs too).
    Stand-ins for symbols with no row are not counted: they take part in no pair."""
    out: dict[Piece, int] = {}
    for symbols, count in units:
        for s in symbols:
            if not isinstance(s, Unknown):
                out[s] = out.get(s, 0) + count
    return out


def score_of(pair_count: int, left_count: int, right_count: int) -> Fraction:
    """``count(a, b) / (count(a) * count(b))``, exactly."""
    return Fraction(pair_count, left_count * right_count)


def front_text(piece: str, continuation_mark: str | None) -> str:
    """A piece in the tie-break spelling: under ``continuation`` a ``##`` piece loses its mark
    and a word-first piece gains ``▁`` in front (``##id`` -> ``id``, ``wi`` -> ``▁wi``). Under
    ``end`` (``continuation_mark`` None) pieces already carry their own boundary mark and are
    compared as spelled."""
    if continuation_mark is None:
        return piece
    if piece.startswith(WORD_START):  # a word-first piece that begins with the mark
        return FRONT_MARK + piece[1:]
    if piece.startswith(continuation_mark):
        return piece[len(continuation_mark):]
    return FRONT_MARK + piece


def tie_key(pair: tuple[str, str], join: Callable[[str, str], str], continuation_mark: str | None) -> tuple[str, str, str]:
    """Among pairs of equal score: the smaller joined text in the tie-break spelling, then the
    smaller ``(left, right)`` in that spelling (code-point order)."""
    left, right = pair
    return (
        front_text(join(left, right), continuation_mark),
        front_text(left, continuation_mark),
        front_text(right, continuation_mark),
    )


def ranked_candidates(
    units: Iterable[tuple[Sequence[Union[Piece, Unknown]], int]], join: Callable[[str, str], str],
    continuation_mark: str | None,
) -> list[tuple[tuple[str, str], int, Fraction]]:
    """Every adjacent pair as ``(pair, count, score)``, best first: score descending, then
    the tie rule (:func:`tie_key`)."""
    units = list(units)
    pairs = cast("dict[tuple[str, str], int]", bpe.count_pairs(units))  # WordPiece spells text: pieces are str
    counts = symbol_counts(units)
    rows = [((a, b), c, score_of(c, counts[a], counts[b])) for (a, b), c in pairs.items()]
    rows.sort(key=lambda r: (-r[2], tie_key(r[0], join, continuation_mark)))
    return rows


def learn(
    units: bpe.Units,
    vocab_size: int,
    *,
    rows_before: int,
    lengths: dict[Piece, int] | None = None,
    join: Callable[[str, str], str] | None = None,
    continuation_mark: str | None = "##",
    min_count: int = 2,
    min_count_rule: str = "filter",
) -> Learned:
    """Learn merges by score until the vocabulary has ``vocab_size`` rows or no pair qualifies.

    ``units``: spelled units with counts (``{("l", "##o", "##w"): 5, ...}``). ``rows_before``:
    rows already counted against ``vocab_size`` (``[UNK]`` + alphabet). ``join``: the spelling's
    (default: the ``continuation`` join for ``continuation_mark``). ``continuation_mark``: the
    mark when the units are spelled ``continuation``, None for ``end`` (it selects the tie-break
    spelling, :func:`front_text`).

    Before each merge, in this order: rows at ``vocab_size`` -> stop ``"size"``; no pair at all
    -> ``"no_pairs"``; then ``min_count``: under ``"filter"`` pairs seen fewer times are dropped
    and none left -> ``"min_count"``; under ``"stop"`` the best of all pairs is taken and if it
    was seen fewer times the run stops with ``"min_count"`` and ``winner_failed`` records it.
    """
    if join is None:
        join = make_spelling("continuation", mark=continuation_mark).join
    seqs = bpe._as_units(units)
    if lengths is None:
        lengths = {s: 1 for s in symbol_counts(seqs)}
    lengths = dict(lengths)
    rows = rows_before
    result = Learned(lengths=lengths)
    while True:
        if rows >= vocab_size:
            result.stop = "size"
            break
        ranked = ranked_candidates(seqs, join, continuation_mark)
        if not ranked:
            result.stop = "no_pairs"
            break
        if min_count_rule == "filter":
            ranked = [r for r in ranked if r[1] >= min_count]
            if not ranked:
                result.stop = "min_count"
                break
        pair, count, _ = ranked[0]
        if count < min_count:  # only reachable under the winner test
            result.stop = "min_count"
            result.winner_failed = (pair[0], pair[1], count)
            break
        left, right = pair
        joined = join(left, right)
        result.merges.append(pair)
        if joined not in lengths:  # interning: a merge that rebuilds a row adds none
            lengths[joined] = lengths[left] + lengths[right]
            result.rows.append(joined)
            rows += 1
        seqs = [(bpe.apply_merge(symbols, left, right, joined), c) for symbols, c in seqs]
    result.units = seqs
    return result


# ------------------------------------------------------------------------------------------------
# the segmenter


def longest_match(
    symbols: Sequence[Union[Piece, Unknown]], pieces: Container[RowKey], join: Callable[[Piece, Piece], Piece]
) -> tuple[list[Piece], int]:
    """Longest match first over one unit's symbols.

    Returns the pieces matched and the position where matching stopped: ``len(symbols)`` when
    the unit is finished, else the first position at which no row matched.
    """
    out: list[Piece] = []
    i, n = 0, len(symbols)
    while i < n:
        found: tuple[int, Piece] | None = None
        piece: Piece | None = None
        for j in range(i + 1, n + 1):
            s = symbols[j - 1]
            if isinstance(s, Unknown):
                break  # a symbol with no row is in no piece
            piece = s if piece is None else join(piece, s)  # the first symbol starts the piece
            if piece in pieces:
                found = (j, piece)
        if found is None:
            return out, i
        i, p = found
        out.append(p)
    return out, n


class WordPieceTokenizer(Tokenizer):
    """The reference Tokenizer with longest-match encoding instead of merge replay."""

    def __init__(self, *, unknown: str, max_word_length: int | None, **kw: Any) -> None:
        super().__init__(model="wordpiece", stage_one=None, **kw)
        self._unknown_mode = unknown
        self._max_word_length = max_word_length
        rows = zip(self._keys, self._kinds)
        self._pieces = {k for k, kind in rows if kind in ("alphabet", "learned")}

    def encode_unit(self, unit: Unit) -> list[RowKey]:
        """One unit's rows: longest match; ``[UNK]`` (or byte rows) where it cannot go on."""
        if self._max_word_length is not None and len(unit) > self._max_word_length:
            return [UNK]
        sp = self._spelling
        symbols = [s if s in self._alphabet else Unknown(s) for s in unit]
        out: list[RowKey] = []
        start = 0
        while True:
            done, at = longest_match(symbols[start:], self._pieces, sp.join)
            out += done
            if start + at == len(symbols):
                return out
            if not self._byte_fallback:
                return [UNK] if self._unknown_mode == "word" else out + [UNK]
            # With every kept symbol a row, the cut stops only at a symbol with no row: it
            # becomes its fallback rows, and the cut goes on after it (the next symbol keeps
            # its own spelling, so a ``##`` symbol is still a continuation).
            out += sp.fallback(unit[start + at], self._alphabet)
            start += at + 1

    def _encode_keys(self, text: str) -> list[RowKey]:
        if not isinstance(text, str):
            raise SubwordsError(f"encode takes a str, got {type(text).__name__}")
        keys: list[RowKey] = []
        for unit in self._spelling.units(text):
            keys.extend(self.encode_unit(unit))
        return keys


# ------------------------------------------------------------------------------------------------
# train


def _check_options(spelling: str, min_count: int, min_count_rule: str, unknown: str, max_word_length: int | None,
                   unknown_opts: dict[str, object]) -> None:
    for name in list(unknown_opts):
        if name in _NOT_FOR_WORDPIECE:
            default = _NOT_FOR_WORDPIECE[name]
            value = unknown_opts.pop(name)
            _need(
                value is default or (isinstance(value, bool) and value == default),
                f"{name} does not apply to model='wordpiece'; drop it",
            )
    if unknown_opts:
        raise SubwordsError(f"unknown option(s): {', '.join(sorted(unknown_opts))}")
    _need(
        spelling in SPELLINGS,
        f"model='wordpiece' takes spelling 'continuation' or 'end', got {spelling!r}",
    )
    _need(
        _is_int(min_count) and min_count >= 1, f"min_count must be an int >= 1, got {min_count!r}"
    )
    _need(
        min_count_rule in MIN_COUNT_RULES,
        f"min_count_rule must be 'filter' or 'stop', got {min_count_rule!r}",
    )
    _need(unknown in UNKNOWN_MODES, f"unknown must be 'word' or 'rest', got {unknown!r}")
    _need(
        max_word_length is None or (_is_int(max_word_length) and max_word_length >= 1),
        f"max_word_length must be None or an int >= 1, got {max_word_length!r}",
    )


def train_wordpiece(
    data: Data,
    *,
    spelling: str | None = "continuation",
    vocab_size: int,
    min_count: int | None = 2,
    min_count_rule: str = "filter",
    byte_fallback: bool = False,
    max_word_length: int | None = 100,
    unknown: str = "word",
    mark: str | None = None,
    alphabet_size: int | None = None,
    character_coverage: float | None = None,
    counts: bool = False,
    threads: int | None = None,
    input_errors: str = "strict",
    **unknown_opts: object,
) -> WordPieceTokenizer:
    """Learn a WordPiece vocabulary (see docs/API.md, "WordPiece"); the oracle for
    ``subwords.train(model="wordpiece")``.

        >>> tok = train_wordpiece({"low": 5, "lower": 2, "newest": 6, "widest": 3}, vocab_size=22,
        ...                       min_count=3)
        >>> tok.rows[12:]
        ['##id', 'wid', 'lo', '##st', 'low', '##est', '##ew', 'new', 'newest', 'widest']
        >>> tok.encode_pieces("lowest newer lol")
        ['low', '##est', 'new', '##e', '##r', '[UNK]']
        >>> train_wordpiece({"low": 5, "lower": 2, "newest": 6, "widest": 3}, vocab_size=22,
        ...                 unknown="rest").encode_pieces("lol")
        ['lo', '[UNK]']
    """
    if min_count is None:
        min_count = 2
    if spelling is None:  # the model's own spelling, as in subwords.train
        spelling = "continuation"
    _check_options(spelling, min_count, min_count_rule, unknown, max_word_length, unknown_opts)
    base = validate(
        dict(
            model="wordpiece",
            spelling=spelling,
            vocab_size=vocab_size,
            min_count=min_count,
            byte_fallback=byte_fallback,
            byte_fallback_in_budget=False,
            mark=mark,
            split_at_marks=True,
            pre_split=None,
            joints=None,
            superword_at=None,
            max_piece_length=None,
            alphabet_size=alphabet_size,
            character_coverage=character_coverage,
            counts=counts,
            threads=threads,
            input_errors=input_errors,
        )
    )
    opts = {
        "model": "wordpiece",
        "spelling": spelling,
        "vocab_size": vocab_size,
        "min_count": min_count,
        "min_count_rule": min_count_rule,
        "byte_fallback": byte_fallback,
        "max_word_length": max_word_length,
        "unknown": unknown,
        "mark": base["mark"],
        "alphabet_size": alphabet_size,
        "character_coverage": base["character_coverage"],
        "input_errors": input_errors,
    }
    sp = make_spelling(spelling, mark=opts["mark"])

    def reader(d: Data) -> list[tuple[str, int]]:
        return read_data(d, input_errors, counts=counts and not isinstance(d, Mapping))

    unit_counts: dict[Unit, int] = {}
    for text, c in reader(data):
        for u in sp.units(text):
            unit_counts[u] = unit_counts.get(u, 0) + c
    if not unit_counts:
        raise InputError("the corpus is empty: it holds no units to learn from")
    all_symbols: dict[Piece, int] = {}
    for u, c in unit_counts.items():
        for s in u:
            all_symbols[s] = all_symbols.get(s, 0) + c

    alphabet = choose_alphabet(all_symbols, sp, alphabet_size, character_coverage)
    kept = set(alphabet)
    byte_rows: list[RowKey] = ([byte_row(b) for b in range(256)] + [MARKER]) if byte_fallback else []
    base_rows = 1 + len(alphabet)  # [UNK] + alphabet; byte rows are outside the budget
    if vocab_size < base_rows:
        raise SubwordsError(
            f"vocab_size={vocab_size} is below the smallest vocabulary this corpus allows "
            f"({len(alphabet)} symbols + [UNK] = {base_rows}); ask for at least {base_rows}"
        )

    def stand_in(s: Piece) -> Union[Piece, Unknown]:
        return s if s in kept else Unknown(s)

    learned = learn(
        [([stand_in(s) for s in u], c) for u, c in unit_counts.items()],
        vocab_size,
        rows_before=base_rows,
        lengths={s: 1 for s in alphabet},
        join=sp.join,
        continuation_mark=sp.mark if spelling == "continuation" else None,
        min_count=min_count,
        min_count_rule=min_count_rule,
    )

    def pieces_of(symbol: Union[Piece, Unknown]) -> int:
        if not isinstance(symbol, Unknown):
            return 1
        return len(sp.fallback(symbol.symbol, kept)) if byte_fallback else 1

    rows: list[tuple[RowKey, str]] = [(UNK, "special")]
    rows += [(k, "marker" if k == MARKER else "byte") for k in byte_rows]
    rows += [(s, "alphabet") for s in alphabet]
    rows += [(p, "learned") for p in learned.rows]
    report: dict[str, Any] = {
        "alphabet_size": len(alphabet),
        "merges_learned": len(learned.merges),
        "stop": learned.stop,
        "corpus_pieces_before": sum(
            c * sum(pieces_of(stand_in(s)) for s in u) for u, c in unit_counts.items()
        ),
        "corpus_pieces_after": sum(c * sum(pieces_of(p) for p in seq) for seq, c in learned.units),
    }
    if learned.winner_failed is not None:
        left, right, count = learned.winner_failed
        report["winner_failed"] = [sp.show(left), sp.show(right), count]
    tok = WordPieceTokenizer(
        unknown=unknown,
        max_word_length=max_word_length,
        spelling=sp,
        rows=rows,
        merges=learned.merges,
        byte_fallback=byte_fallback,
        report=report,
        options=opts,
        reader=reader,
    )
    # The training corpus as encoding reads it (longest match, not the learner's last state).
    tok._report["corpus_pieces_encoded"] = sum(
        c * len(tok.encode_unit(u)) for u, c in unit_counts.items()
    )
    return tok


__all__ = [
    "train_wordpiece",
    "learn",
    "longest_match",
    "ranked_candidates",
    "score_of",
    "symbol_counts",
    "spell",
    "tie_key",
    "front_text",
    "WordPieceTokenizer",
]
