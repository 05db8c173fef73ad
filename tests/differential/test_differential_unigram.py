"""Differential tests for Unigram: the Rust engine (``subwords``) against the pure-Python reference
(``subwords.reference``) on random small corpora, every spelling. Same rows, kinds,
log-probabilities (to 1e-9 relative), reports, Viterbi / fewest / sampled encodings, n-best lists,
lattices, unit probabilities and pruning losses.

The alphabets are tiny on purpose: with two or three letters, substrings repeat, exact ties in
the losses (zero and otherwise) are everywhere, and the text order of pieces decides which survive.
"""

from __future__ import annotations

import math

import pytest

from differential import count_tables, letters, train_both
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from subwords.errors import SubwordsError


SPELLINGS = ["end", "continuation", "front", "bytes"]
REL = 1e-9

SETTINGS = settings(
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


@st.composite
def text_corpora(draw):
    alphabet = draw(letters)
    pieces = st.one_of(
        st.text(alphabet=alphabet, min_size=1, max_size=6),
        st.sampled_from([" ", "  ", "\t", " \u2581 ", "\u3000"]),
    )
    text = st.lists(pieces, min_size=1, max_size=8).map(" ".join)
    return draw(st.lists(text, min_size=1, max_size=4))


# Probe texts: the training letters plus ones training never saw (d, ü, a CJK character).
probes = st.lists(st.text(alphabet="abcéxyzdü研 ", min_size=0, max_size=12), min_size=1, max_size=3)


def _options(draw, spelling):
    opts = {"model": "unigram", "spelling": spelling}
    if spelling != "bytes" and draw(st.booleans()):
        opts["byte_fallback"] = True
    if draw(st.integers(0, 3)) == 0:
        opts["max_piece_length"] = draw(st.integers(1, 4))
    if spelling != "bytes" and draw(st.integers(0, 5)) == 0:
        opts["alphabet_size"] = draw(st.integers(1, 4))
    elif spelling != "bytes" and draw(st.integers(0, 5)) == 0:
        opts["character_coverage"] = draw(st.sampled_from([0.3, 0.5, 0.9, 1.0]))
    if draw(st.integers(0, 3)) == 0:
        opts["shrink"] = draw(st.sampled_from([0.3, 0.5, 0.9]))
    if draw(st.integers(0, 3)) == 0:
        opts["em_rounds"] = draw(st.integers(0, 4))
    return opts


def _floor_and_seed(reference, data, opts) -> tuple[int, int]:
    probe = reference.train(data, vocab_size=10**6, **{**opts, "em_rounds": 0})
    floor = probe.report["alphabet_size"] + (0 if opts["spelling"] == "bytes" else 1)
    return floor, probe.report["seed_size"]


def _close(a, b) -> bool:
    if a is None or b is None:
        return a is b
    return a == b or math.isclose(a, b, rel_tol=REL, abs_tol=0.0)


def _same_scored(got, want):
    assert [p for p, _ in got] == [p for p, _ in want]
    assert all(_close(g, w) for (_, g), (_, w) in zip(got, want))


def _units(texts):
    """Single-unit texts to analyse: the words of the probes and of the corpus."""
    out = []
    for text in texts:
        for word in text.split():
            if word not in out:
                out.append(word)
    return out[:6]


def assert_same(reference, rust, data, probe_texts, **opts):
    both = train_both(reference, rust, data, **opts)
    if both is None:
        return
    ref, got = both
    assert got.rows == ref.rows
    assert got.kinds == ref.kinds
    assert all(_close(g, w) for g, w in zip(got.log_probs, ref.log_probs))
    assert len(got.log_probs) == len(ref.log_probs)
    for key, want in ref.report.items():
        if key == "log_likelihood":
            assert _close(got.report[key], want), key
        else:
            assert got.report.get(key) == want, key
    assert got.count_pieces(data) == ref.count_pieces(data)
    for text in probe_texts:
        ids = ref.encode(text)
        assert got.encode(text) == ids, text
        assert got.encode_pieces(text) == ref.encode_pieces(text), text
        assert got.encode(text, segmenter="fewest") == ref.encode(text, segmenter="fewest"), text
        for seed, alpha, nbest in ((0, None, None), (7, 0.5, None), (2**64 - 1, 0.0, None),
                                   (3, 1.0, 3)):
            kw = {"segmenter": "sample", "seed": seed, "alpha": alpha, "nbest": nbest}
            assert got.encode(text, **kw) == ref.encode(text, **kw), (text, kw)
        assert got.decode(ids) == ref.decode(ids), text
    want_loss = ref.losses(data)
    got_loss = got.losses(data)
    assert list(got_loss) == list(want_loss)
    assert all((g == 0.0) == (w == 0.0) and _close(g, w)
               for g, w in zip(got_loss.values(), want_loss.values()))
    for unit in _units(probe_texts + list(data)):
        try:
            want_lattice = ref.lattice(unit)
        except SubwordsError:
            with pytest.raises(SubwordsError):
                got.lattice(unit)
            continue
        got_lattice = got.lattice(unit)
        assert [a[:3] for a in got_lattice] == [a[:3] for a in want_lattice], unit
        assert all(_close(g[3], w[3]) for g, w in zip(got_lattice, want_lattice))
        assert _close(got.unit_log_probability(unit), ref.unit_log_probability(unit)), unit
        for k in (1, 2, 5):
            _same_scored(got.nbest(unit, k), ref.nbest(unit, k))
        assert got.fewest(unit) == ref.fewest(unit), unit
        for seed in (1, 99):
            assert got.sample(unit, seed=seed) == ref.sample(unit, seed=seed), unit
            assert got.sample(unit, seed=seed, alpha=0.3, nbest=2) == ref.sample(
                unit, seed=seed, alpha=0.3, nbest=2), unit
        if len(want_lattice) <= 40:
            _same_scored(got.spellings(unit), ref.spellings(unit))


@SETTINGS
@given(data=st.data(), table=count_tables(), spelling=st.sampled_from(SPELLINGS), texts=probes)
def test_count_tables(reference, rust, data, table, spelling, texts):
    opts = _options(data.draw, spelling)
    floor, seed = _floor_and_seed(reference, table, opts)
    if data.draw(st.integers(0, 3)) == 0:
        opts["seed_size"] = data.draw(st.integers(max(1, floor - 2), seed + 1))
    opts["vocab_size"] = floor + data.draw(st.integers(0, max(0, seed - floor + 3)))
    assert_same(reference, rust, table, texts, **opts)


@SETTINGS
@given(data=st.data(), corpus=text_corpora(), spelling=st.sampled_from(SPELLINGS), texts=probes)
def test_texts(reference, rust, data, corpus, spelling, texts):
    opts = _options(data.draw, spelling)
    try:
        floor, seed = _floor_and_seed(reference, corpus, opts)
    except SubwordsError:
        assert_same(reference, rust, corpus, texts, vocab_size=10**6, **opts)
        return
    opts["vocab_size"] = floor + data.draw(st.integers(0, max(0, seed - floor + 3)))
    assert_same(reference, rust, corpus, texts + corpus, **opts)


short_texts = st.lists(
    st.lists(st.text(alphabet="ab", min_size=1, max_size=4), min_size=1, max_size=5).map(" ".join),
    min_size=1, max_size=3)


@settings(SETTINGS, max_examples=60)
@given(data=st.data(), corpus=short_texts, texts=probes)
def test_front_streams(reference, rust, data, corpus, texts):
    # split_at_marks=False: each text is one unit, so pieces may hold marks inside.
    opts = {"model": "unigram", "spelling": "front", "split_at_marks": False,
            "max_piece_length": data.draw(st.sampled_from([None, 3, 6]))}
    floor, seed = _floor_and_seed(reference, corpus, opts)
    opts["vocab_size"] = floor + data.draw(st.integers(0, max(0, seed - floor + 3)))
    assert_same(reference, rust, corpus, texts, **opts)


@SETTINGS
@given(table=count_tables(), spelling=st.sampled_from(["end", "front"]))
def test_threads_do_not_change_the_model(rust, table, spelling):
    seed = rust.train(table, model="unigram", spelling=spelling, vocab_size=10**6, em_rounds=0)
    size = seed.report["alphabet_size"] + 1 + (seed.report["seed_size"] - seed.report["alphabet_size"]) // 3
    one = rust.train(table, model="unigram", spelling=spelling, vocab_size=size, threads=1)
    two = rust.train(table, model="unigram", spelling=spelling, vocab_size=size, threads=2)
    assert one.rows == two.rows and one.log_probs == two.log_probs
    assert one.report == two.report


# The quality methods, each in both engines bit for bit:
# * em="bayes": sentencepiece's digamma M-step. Its sparse prior drives unused pieces to -inf
#   within a few rounds, so these corpora also exercise runs whose every spelling holds a -inf
#   piece (the E-step skips them in both engines).
# * em="sentencepiece": sentencepiece's whole loop -- the digamma step that drops pieces under an
#   expected count of 0.5, its pruning criterion (replacement by the piece's own second-best
#   spelling, Viterbi frequencies, drops of unused and split pieces), the stop at 1.1 x the
#   target and the final pick by score.
QUALITY_EM = ["bayes", "sentencepiece"]


@pytest.mark.parametrize("em", QUALITY_EM)
@settings(SETTINGS, max_examples=60)
@given(data=st.data(), table=count_tables(), spelling=st.sampled_from(SPELLINGS), texts=probes)
def test_quality_em_count_tables(reference, rust, em, data, table, spelling, texts):
    opts = {**_options(data.draw, spelling), "em": em}
    floor, seed = _floor_and_seed(reference, table, opts)
    opts["vocab_size"] = floor + data.draw(st.integers(0, max(0, seed - floor + 3)))
    assert_same(reference, rust, table, texts, **opts)


@pytest.mark.parametrize("em", QUALITY_EM)
@settings(SETTINGS, max_examples=60)
@given(data=st.data(), corpus=text_corpora(), spelling=st.sampled_from(SPELLINGS), texts=probes)
def test_quality_em_texts(reference, rust, em, data, corpus, spelling, texts):
    opts = {**_options(data.draw, spelling), "em": em}
    try:
        floor, seed = _floor_and_seed(reference, corpus, opts)
    except SubwordsError:
        assert_same(reference, rust, corpus, texts, vocab_size=10**6, **opts)
        return
    opts["vocab_size"] = floor + data.draw(st.integers(0, max(0, seed - floor + 3)))
    assert_same(reference, rust, corpus, texts + corpus, **opts)


@settings(SETTINGS, max_examples=40)
@given(table=count_tables(), spelling=st.sampled_from(["end", "front"]))
def test_sentencepiece_threads_do_not_change_the_model(rust, table, spelling):
    seed = rust.train(table, model="unigram", spelling=spelling, vocab_size=10**6, em_rounds=0)
    size = seed.report["alphabet_size"] + 1 + (seed.report["seed_size"] - seed.report["alphabet_size"]) // 3
    kw = dict(model="unigram", spelling=spelling, vocab_size=size, em="sentencepiece")
    one = rust.train(table, threads=1, **kw)
    two = rust.train(table, threads=2, **kw)
    assert one.rows == two.rows and one.log_probs == two.log_probs
    assert one.report == two.report


# split_by_script (sentencepiece's script rule for seed pieces): mixed scripts, digits,
# punctuation, a combining accent, Katakana with its prolonged sound mark and a Han character,
# so that pieces are refused at every kind of boundary the rule has.
mixed_corpora = st.lists(
    st.lists(st.text(alphabet="ab1(αβe\u0301カー研5", min_size=1, max_size=6), min_size=1, max_size=6).map(" ".join),
    min_size=1, max_size=4)


@pytest.mark.parametrize("em", ["plain", "sentencepiece"])
@settings(SETTINGS, max_examples=60)
@given(data=st.data(), corpus=mixed_corpora, spelling=st.sampled_from(["end", "continuation", "front"]),
       texts=probes)
def test_split_by_script(reference, rust, em, data, corpus, spelling, texts):
    opts = {**_options(data.draw, spelling), "em": em, "split_by_script": True,
            "split_by_number": data.draw(st.booleans())}
    floor, seed = _floor_and_seed(reference, corpus, opts)
    opts["vocab_size"] = floor + data.draw(st.integers(0, max(0, seed - floor + 3)))
    assert_same(reference, rust, corpus, texts + corpus, **opts)
