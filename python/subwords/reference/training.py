"""``train``: validate the options, read the corpus, spell it, learn, assemble the rows.

Size accounting (DESIGN section 2): ``vocab_size`` bounds ``[UNK]`` + alphabet + learned rows.
The four words have 11 symbols, so ``vocab_size=22`` leaves room for 10 merges; asking for
less than 12 is refused. Byte fallback adds 256 byte rows (plus one bare marker row for ``end``
and ``continuation``) *outside* that budget -- on the BPE page's eighteen sentences, asking 54
gives 311 rows -- unless ``byte_fallback_in_budget=True``. The bytes spelling has exactly 256
alphabet rows and no ``[UNK]``.

Row order: ``[UNK]``, byte rows ``<0x00>``..``<0xFF>``, the bare marker row, the alphabet in
code-point order (raw byte order for bytes), then learned rows in merge order.

Two-stage (superword) BPE: stage one learns within units until ``superword_at`` rows; stage two
continues from the corpus stage one left, with each text's units concatenated into one stream
(boundaries lifted), until ``vocab_size`` rows. A count table is read, for both stages, as one
text: its words in table order, each repeated ``count`` times, separated by single spaces. On
the four words, stage one to 22 rows and stage two to 25 learns ``newest</w>newest</w>``, then
``low</w>low</w>``, then ``e`` + ``r</w>`` inside ``lower`` (the BPE page, section on
superwords).
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any, Optional, Union

from subwords._options import DEFAULT_MIN_COUNT
from subwords.errors import SubwordsError

from . import bpe, unigram, wordpiece
from .pipeline import Data, Unit, choose_alphabet, count_corpus, read_data, size_floor, validate
from .spelling import MARKER, UNK, ContinuationSpelling, Joints, Piece, RowKey, Spelling, Unknown, make_spelling
from .tokenizer import Reader, Tokenizer

# ------------------------------------------------------------------------------------------------
# train


def train(data: Data, *, model: str = "bpe", **options: Any) -> Tokenizer:
    """Learns a vocabulary; each model family has its own module (``bpe``/``word`` here,
    ``wordpiece`` and ``unigram`` beside it), all with the same calling convention."""
    if model == "wordpiece":
        return wordpiece.train_wordpiece(data, **options)
    if model == "unigram":
        return unigram.train_unigram(data, **options)
    return train_merges(data, model=model, **options)


def train_merges(
    data: Data,
    *,
    model: str = "bpe",
    spelling: str = "end",
    vocab_size: int,
    min_count: int | None = None,
    byte_fallback: bool = False,
    byte_fallback_in_budget: bool = False,
    mark: str | None = None,
    split_at_marks: bool = True,
    pre_split: str | None = None,
    joints: Joints = None,
    superword_at: int | None = None,
    max_piece_length: int | None = None,
    alphabet_size: int | None = None,
    character_coverage: float | None = None,
    counts: bool = False,
    threads: int | None = None,
    input_errors: str = "strict",
    **unknown: object,
) -> Tokenizer:
    """Learn a vocabulary (see docs/API.md); the pure-Python oracle for ``subwords.train``.

        >>> tok = train({"low": 5, "lower": 2, "newest": 6, "widest": 3}, vocab_size=22)
        >>> len(tok.rows), tok.report["corpus_pieces_before"], tok.report["corpus_pieces_after"]
        (22, 79, 22)
    """
    if unknown:
        raise SubwordsError(f"unknown option(s): {', '.join(sorted(unknown))}")
    if min_count is None:
        min_count = DEFAULT_MIN_COUNT[model]
    opts = validate(
        dict(
            model=model,
            spelling=spelling,
            vocab_size=vocab_size,
            min_count=min_count,
            byte_fallback=byte_fallback,
            byte_fallback_in_budget=byte_fallback_in_budget,
            mark=mark,
            split_at_marks=split_at_marks,
            pre_split=pre_split,
            joints=joints,
            superword_at=superword_at,
            max_piece_length=max_piece_length,
            alphabet_size=alphabet_size,
            character_coverage=character_coverage,
            counts=counts,
            threads=threads,
            input_errors=input_errors,
        )
    )
    sp = make_spelling(
        spelling,
        mark=opts["mark"],
        split_at_marks=split_at_marks,
        pre_split=pre_split,
        joints=opts["joints"],
    )
    two_stage = superword_at is not None

    def reader(d: Data) -> list[tuple[str, int]]:
        return read_data(
            d, input_errors, stream_table=two_stage, counts=counts and not isinstance(d, Mapping)
        )

    texts = reader(data)
    if model == "word" and isinstance(sp, ContinuationSpelling):
        for t, _ in texts:
            sp.refuse_word_start(t)
    text_units = [(sp.units(t), c) for t, c in texts]
    unit_counts, norms, symbol_counts = count_corpus(texts, sp, text_units)

    if model == "word":
        return _train_word(opts, sp, unit_counts, symbol_counts, norms, reader)

    alphabet = choose_alphabet(symbol_counts, sp, alphabet_size, character_coverage)
    kept = set(alphabet)
    byte_rows, specials, base_rows = size_floor(sp, alphabet, vocab_size, byte_fallback, byte_fallback_in_budget)
    if superword_at is not None and superword_at < base_rows:  # two-stage
        raise SubwordsError(
            f"superword_at={superword_at} is below the smallest vocabulary this corpus allows "
            f"({base_rows}); ask for at least {base_rows}"
        )

    def stand_in(s: Piece) -> Union[Piece, Unknown]:
        return s if s in kept else Unknown(s)

    distinct = list(unit_counts)
    stage_one = bpe.learn(
        [([stand_in(s) for s in u], unit_counts[u]) for u in distinct],
        superword_at if superword_at is not None else vocab_size,
        lengths={s: 1 for s in alphabet},
        rows_before=base_rows,
        join=sp.join,
        min_count=min_count,
        max_piece_length=max_piece_length,
    )
    merges = list(stage_one.merges)
    learned = list(stage_one.rows)
    final_units = stage_one.units
    if two_stage:
        # Stage two starts from each text encoded by the stage-one merges (merge replay on each
        # unit), its units concatenated into one stream: exactly what encoding does.
        ranks = bpe.ranks_of(stage_one.merges)
        encoded = {u: bpe.replay([stand_in(s) for s in u], ranks, sp.join) for u in distinct}
        streams = [([p for u in units for p in encoded[u]], c) for units, c in text_units if units]
        stage_two = bpe.learn(
            streams,
            vocab_size,
            lengths=stage_one.lengths,
            rows_before=base_rows + len(learned),
            join=sp.join,
            min_count=min_count,
            max_piece_length=max_piece_length,
        )
        merges += stage_two.merges
        learned += stage_two.rows
        final_units = stage_two.units
        stop = stage_two.stop
    else:
        stop = stage_one.stop

    def pieces_of(symbol: Union[Piece, Unknown]) -> int:
        if not isinstance(symbol, Unknown):
            return 1
        return len(sp.fallback(symbol.symbol, kept)) if byte_fallback else 1

    before = sum(c * sum(pieces_of(stand_in(s)) for s in u) for u, c in unit_counts.items())
    after = sum(c * sum(pieces_of(p) for p in seq) for seq, c in final_units)
    report: dict[str, Any] = {
        "alphabet_size": len(alphabet),
        "merges_learned": len(merges),
        "stop": stop,
        "corpus_pieces_before": before,
        "corpus_pieces_after": after,
    }
    if norms is not None:
        report["normalizations"] = norms
    if two_stage:
        report["stage_one_merges"] = len(stage_one.merges)

    rows = [(k, "special") for k in specials]
    rows += [(k, "marker" if k == MARKER else "byte") for k in byte_rows]
    rows += [(s, "alphabet") for s in alphabet]
    rows += [(p, "learned") for p in learned]
    return Tokenizer(
        model="bpe",
        spelling=sp,
        rows=rows,
        merges=merges,
        stage_one=len(stage_one.merges) if two_stage else None,
        byte_fallback=byte_fallback,
        report=report,
        options=opts,
        reader=reader,
    )


def _train_word(opts: dict[str, Any], sp: Spelling[Any], unit_counts: dict[Unit, int], symbol_counts: dict[Piece, int],
                norms: Optional[list[str]], reader: Reader) -> Tokenizer:
    """The word vocabulary: ``[UNK]`` + distinct units by count desc, then piece, capped.

    A unit's piece is the whole unit spelled and joined (``low</w>``, ``▁low``, ``low`` for
    continuation). Units seen fewer than ``min_count`` times (default 1 for this model) get no
    row; neither do units past the cap. Both read as ``[UNK]``.
    """
    pieces: dict[Piece, int] = {}
    for u, c in unit_counts.items():
        p = functools.reduce(sp.join, u)
        pieces[p] = pieces.get(p, 0) + c
    frequent = [p for p in pieces if pieces[p] >= opts["min_count"]]
    ranked = sorted(frequent, key=lambda p: (-pieces[p], p))
    room = opts["vocab_size"] - 1
    kept = ranked[:room]
    if len(ranked) > room:
        stop = "size"
    elif len(frequent) < len(pieces):
        stop = "min_count"
    else:
        stop = "all_units"
    report: dict[str, Any] = {
        "alphabet_size": len(symbol_counts),
        "merges_learned": 0,
        "stop": stop,
        "corpus_pieces_before": sum(len(u) * c for u, c in unit_counts.items()),
        "corpus_pieces_after": sum(unit_counts.values()),
    }
    if norms is not None:
        report["normalizations"] = norms
    rows = [(UNK, "special")] + [(p, "unit") for p in kept]
    return Tokenizer(
        model="word",
        spelling=sp,
        rows=rows,
        merges=[],
        stage_one=None,
        byte_fallback=False,
        report=report,
        options=opts,
        reader=reader,
    )
