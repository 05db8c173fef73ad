"""WordPiece: the Rust engine (``subwords``) against the pure-Python reference
(``subwords.reference``) on random small corpora, and properties of the reference itself.

Differential: same rows, kinds, merges, report, pieces, ids and decodings for both spellings
(``continuation``, ``end``), both ``min_count`` readings (``filter``, ``stop``), both unknown
modes (``word``, ``rest``), with and without byte fallback, alphabet limits and a small
``max_word_length``, at random sizes. Tiny alphabets make ties (the score ties far more often
than the count), overlapping pairs, interning and early stops common.

Reference only: the greedy longest-match cut equals an exhaustive search for a division into
rows whenever the alphabet is complete (the WordPiece page's argument), and a few more
properties of the cut.
"""

from __future__ import annotations

import importlib

import pytest

from differential import assert_same as shared_assert_same
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from subwords.analysis import can_divide
from subwords.reference import wordpiece
from subwords.reference.spelling import make_spelling



SPELLINGS = ["continuation", "end"]
REPORT_KEYS = ["alphabet_size", "merges_learned", "stop", "corpus_pieces_before",
               "corpus_pieces_after", "corpus_pieces_encoded", "winner_failed"]

SETTINGS = settings(
    max_examples=300,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

letters = st.sampled_from(["ab", "abc", "abcé", "xyz", "lowe"])


@st.composite
def count_tables(draw):
    alphabet = draw(letters)
    word = st.text(alphabet=alphabet, min_size=1, max_size=7)
    return draw(st.dictionaries(word, st.integers(1, 7), min_size=1, max_size=6))


@st.composite
def text_corpora(draw):
    alphabet = draw(letters)
    pieces = st.one_of(
        st.text(alphabet=alphabet, min_size=1, max_size=6),
        st.sampled_from([" ", "  ", "\t", "\n", "\u3000"]),
    )
    text = st.lists(pieces, min_size=1, max_size=8).map(" ".join)
    return draw(st.lists(text, min_size=1, max_size=5))


# Probe texts: the training letters plus letters training never saw (d, ü, a CJK character).
probes = st.lists(st.text(alphabet="abcéxyzlowdü研 ", min_size=0, max_size=12), min_size=1,
                  max_size=4)


def _options(draw, spelling):
    opts = {"spelling": spelling, "model": "wordpiece"}
    if draw(st.integers(0, 3)) == 0:
        opts["byte_fallback"] = True
    if draw(st.integers(0, 2)) == 0:
        opts["min_count"] = draw(st.integers(1, 4))
    if draw(st.booleans()):
        opts["min_count_rule"] = draw(st.sampled_from(["filter", "stop"]))
    if draw(st.booleans()):
        opts["unknown"] = draw(st.sampled_from(["word", "rest"]))
    if draw(st.integers(0, 3)) == 0:
        opts["max_word_length"] = draw(st.integers(1, 6))
    if draw(st.integers(0, 5)) == 0:
        opts["alphabet_size"] = draw(st.integers(1, 4))
    elif draw(st.integers(0, 5)) == 0:
        opts["character_coverage"] = draw(st.sampled_from([0.3, 0.5, 0.7, 0.9, 0.99, 1.0]))
    return opts


def _floor(reference, data, opts) -> int:
    return reference.train(data, **{**opts, "vocab_size": 10**6}).report["alphabet_size"] + 1


def assert_same(reference, rust, data, probe_texts, **opts):
    shared_assert_same(reference, rust, data, probe_texts, REPORT_KEYS, **opts)


@pytest.fixture(scope="module")
def reference():
    return importlib.import_module("subwords.reference")


@pytest.fixture(scope="module")
def rust():
    return importlib.import_module("subwords")


@SETTINGS
@given(data=st.data(), table=count_tables(), spelling=st.sampled_from(SPELLINGS), texts=probes)
def test_count_tables(reference, rust, data, table, spelling, texts):
    opts = _options(data.draw, spelling)
    opts["vocab_size"] = _floor(reference, table, opts) + data.draw(st.integers(0, 14))
    assert_same(reference, rust, table, texts + list(table), **opts)


@SETTINGS
@given(data=st.data(), corpus=text_corpora(), spelling=st.sampled_from(SPELLINGS), texts=probes)
def test_texts(reference, rust, data, corpus, spelling, texts):
    opts = _options(data.draw, spelling)
    try:
        floor = _floor(reference, corpus, opts)
    except Exception:
        assert_same(reference, rust, corpus, texts, vocab_size=10**6, **opts)
        return
    opts["vocab_size"] = floor + data.draw(st.integers(0, 14))
    assert_same(reference, rust, corpus, texts + corpus, **opts)


@SETTINGS
@given(table=count_tables(), spelling=st.sampled_from(SPELLINGS),
       rule=st.sampled_from(["filter", "stop"]), min_count=st.integers(1, 4))
def test_to_exhaustion(reference, rust, table, spelling, rule, min_count):
    # Every stop reason, and the winner test's report, at an unreachable size.
    assert_same(reference, rust, table, list(table), model="wordpiece", spelling=spelling,
                vocab_size=10**6, min_count=min_count, min_count_rule=rule)


# ------------------------------------------------------------------------------------------------
# Reference-only properties


def _unit(spelling: str, word: str):
    (unit,) = make_spelling(spelling).units(word)
    return unit


words = st.text(alphabet="abcéxyzlow", min_size=1, max_size=9)


@SETTINGS
@given(data=st.data(), table=count_tables(), spelling=st.sampled_from(SPELLINGS),
       probe=st.lists(words, min_size=1, max_size=6))
def test_greedy_equals_exhaustive_on_trained_vocabularies(reference, data, table, spelling, probe):
    # The WordPiece page: "The greedy rule therefore refuses nothing that a search would have
    # found." Every learned piece is made of alphabet rows, so whatever the size, the greedy cut
    # finishes a word exactly when some division into rows exists (exactly when every symbol of
    # it has a row).
    opts = {"model": "wordpiece", "spelling": spelling}
    if data.draw(st.booleans()):
        opts["alphabet_size"] = data.draw(st.integers(1, 4))  # dropped symbols are in no piece
    opts["vocab_size"] = _floor(reference, table, opts) + data.draw(st.integers(0, 14))
    tok = reference.train(table, **opts)
    sp = make_spelling(spelling)
    pieces = {p for p, k in zip(tok.rows, tok.kinds) if k in ("alphabet", "learned")}
    for word in probe + list(table):
        unit = _unit(spelling, word)
        got = tok.encode_pieces(word)
        finished = "[UNK]" not in got
        assert finished == can_divide(unit, pieces, sp.join), word
        assert finished == all(s in pieces for s in unit), word
        if finished:
            assert tok.decode(tok.encode(word)) == word


@st.composite
def raw_vocabularies(draw):
    """A set of pieces over a small alphabet (continuation spelling), any shape at all."""
    alphabet = draw(st.sampled_from(["ab", "abc", "xyz"]))
    first = st.text(alphabet=alphabet, min_size=1, max_size=4)
    inner = st.text(alphabet=alphabet, min_size=1, max_size=4).map(lambda s: "##" + s)
    pieces = draw(st.sets(st.one_of(first, inner), max_size=14))
    complete = draw(st.booleans())
    if complete:
        pieces |= set(alphabet) | {"##" + c for c in alphabet}
    word = draw(st.text(alphabet=alphabet, min_size=1, max_size=9))
    return pieces, word, complete, alphabet


@SETTINGS
@given(case=raw_vocabularies())
def test_greedy_against_exhaustive_on_any_vocabulary(case):
    # With a complete alphabet (every symbol, plain and ##, is a row) the greedy cut always
    # finishes, as the exhaustive search does. On any vocabulary, what the greedy cut finishes is
    # a division into rows; when it fails but a division exists, some symbol of the word has no
    # row of its own (the page: "the cut can only fail ... if some character has no continuation
    # form at all" -- here, or no plain form for the first).
    pieces, word, complete, alphabet = case
    sp = make_spelling("continuation")
    unit = _unit("continuation", word)
    got, at = wordpiece.longest_match(unit, pieces, sp.join)
    exists = can_divide(unit, pieces, sp.join)
    if complete:
        assert at == len(unit) and exists
    if at == len(unit):
        assert exists
        assert "".join(p[2:] if p.startswith("##") else p for p in got) == word
        assert all(p in pieces for p in got)
    elif exists:
        assert not all(s in pieces for s in unit)


@SETTINGS
@given(data=st.data(), table=count_tables(), spelling=st.sampled_from(SPELLINGS))
def test_table_order_does_not_matter(reference, data, table, spelling):
    # The page: taking the smaller text "at least makes the answer independent of the order the
    # corpus's texts arrived in".
    rule = data.draw(st.sampled_from(["filter", "stop"]))
    opts = {"model": "wordpiece", "spelling": spelling, "min_count_rule": rule}
    opts["vocab_size"] = _floor(reference, table, opts) + data.draw(st.integers(0, 14))
    a = reference.train(table, **opts)
    b = reference.train(dict(reversed(list(table.items()))), **opts)
    assert (a.rows, a.merges, a.report) == (b.rows, b.merges, b.report)


@SETTINGS
@given(data=st.data(), table=count_tables(), probe=st.lists(words, min_size=1, max_size=6))
def test_one_unmarked_piece_per_word(reference, data, table, probe):
    # The page: "Exactly one piece per word carries no mark, and it is always the first".
    opts = {"model": "wordpiece", "spelling": "continuation"}
    opts["vocab_size"] = _floor(reference, table, opts) + data.draw(st.integers(0, 14))
    tok = reference.train(table, **opts)
    for word in probe + list(table):
        pieces = tok.encode_pieces(word)
        if "[UNK]" in pieces:
            assert pieces == ["[UNK]"]  # unknown="word": the whole word
            continue
        assert not pieces[0].startswith("##")
        assert all(p.startswith("##") for p in pieces[1:])


@SETTINGS
@given(data=st.data(), table=count_tables(), spelling=st.sampled_from(SPELLINGS))
def test_filter_learns_at_least_what_the_winner_test_learns(reference, data, table, spelling):
    # The two readings agree until the winner test fails; from there filtering may go on.
    min_count = data.draw(st.integers(1, 4))
    base = {"model": "wordpiece", "spelling": spelling, "vocab_size": 10**6,
            "min_count": min_count}
    stop = reference.train(table, min_count_rule="stop", **base)
    filt = reference.train(table, min_count_rule="filter", **base)
    assert filt.merges[: len(stop.merges)] == stop.merges
    if "winner_failed" in stop.report:
        assert stop.report["stop"] == "min_count"
        assert stop.report["winner_failed"][2] < min_count
    else:
        assert filt.merges == stop.merges
    assert filt.report["corpus_pieces_encoded"] == filt.count_pieces(table)


# ------------------------------------------------------------------------------------------------
# Words that begin with (or hold) the continuation mark: `##word`, `##`, `a##b`. Whether a piece
# continues a word is a property of its row, so both engines must train, encode and decode them
# exactly, with the same rows and ids; a one-character mark (`#`) makes the word's first symbol
# itself begin with the mark.

marked_letters = st.sampled_from(["#a", "#ab", "a#b", "#"])


@st.composite
def marked_tables(draw):
    alphabet = draw(marked_letters)
    word = st.one_of(st.text(alphabet=alphabet, min_size=1, max_size=7),
                     st.sampled_from(["##", "##a", "a##b", "###", "##ab"]))
    return draw(st.dictionaries(word, st.integers(1, 7), min_size=1, max_size=6))


marked_probes = st.lists(st.text(alphabet="#ab ", min_size=0, max_size=12), min_size=1, max_size=4)


@SETTINGS
@given(data=st.data(), table=marked_tables(), mark=st.sampled_from([None, "#", "##"]),
       texts=marked_probes)
def test_words_holding_the_mark(reference, rust, data, table, mark, texts):
    opts = _options(data.draw, "continuation")
    if mark is not None:
        opts["mark"] = mark
    opts["vocab_size"] = _floor(reference, table, opts) + data.draw(st.integers(0, 14))
    assert_same(reference, rust, table, texts + list(table), **opts)
    # the model file keeps the property: the file's model encodes as the trained one
    tok = rust.train(table, **opts)
    again = type(tok).from_json(tok.to_json())
    assert again.to_json() == tok.to_json()
    for text in texts + list(table):
        assert again.encode(text) == tok.encode(text)
