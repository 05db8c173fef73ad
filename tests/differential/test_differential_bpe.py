"""Differential tests: the Rust engine (``subwords``) against the pure-Python reference
(``subwords.reference``) on random small corpora. Same rows, kinds, merges, report, pieces, ids
and decodings, for every spelling, with and without byte fallback, at random sizes.

The alphabets are tiny on purpose: with two or three letters ties, overlapping pairs
(``a a a``), interning (two merge paths to one piece) and early stops happen constantly.
"""

from __future__ import annotations

from differential import assert_same as shared_assert_same
from differential import count_tables, letters
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st



SPELLINGS = ["end", "continuation", "front", "bytes"]
# Report keys both engines must agree on. (The front `normalizations` entry is pinned by the golden
# tests; its shape is part of the API, compared there.)
REPORT_KEYS = ["alphabet_size", "merges_learned", "stop", "corpus_pieces_before",
               "corpus_pieces_after", "stage_one_merges"]

SETTINGS = settings(
    max_examples=200,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

# the two main properties run on thousands of corpora together
MANY = settings(SETTINGS, max_examples=1000)


@st.composite
def text_corpora(draw):
    alphabet = draw(letters)
    pieces = st.one_of(
        st.text(alphabet=alphabet, min_size=1, max_size=6),
        st.sampled_from([" ", "  ", "\t", "\n", " \u2581 ", "\u3000"]),
    )
    text = st.lists(pieces, min_size=1, max_size=8).map(" ".join)
    return draw(st.lists(text, min_size=1, max_size=5))


# Probe texts: the training letters plus ones training never saw (d, ü, a CJK character), and
# the apostrophe and digits the GPT-2 pre-split cares about.
probes = st.lists(
    st.text(alphabet="abcéxyzdü研 '1", min_size=0, max_size=12), min_size=1, max_size=4
)


def _options(draw, spelling):
    opts = {"spelling": spelling}
    if spelling != "bytes" and draw(st.booleans()):
        opts["byte_fallback"] = True
    if draw(st.integers(0, 4)) == 0:
        opts["min_count"] = draw(st.integers(1, 3))
    if draw(st.integers(0, 4)) == 0:
        opts["max_piece_length"] = draw(st.integers(1, 4))
    if spelling != "bytes" and draw(st.integers(0, 5)) == 0:
        opts["alphabet_size"] = draw(st.integers(1, 4))
    elif spelling != "bytes" and draw(st.integers(0, 5)) == 0:
        opts["character_coverage"] = draw(st.sampled_from([0.3, 0.5, 0.7, 0.9, 0.99, 1.0]))
    if spelling == "bytes" and draw(st.booleans()):
        opts["pre_split"] = "gpt2"
    return opts


def _floor(reference, data, opts) -> int:
    probe = reference.train(data, vocab_size=10**6, **opts)
    if opts["spelling"] == "bytes":
        return 256
    return probe.report["alphabet_size"] + 1


def assert_same(reference, rust, data, probe_texts, **opts):
    shared_assert_same(reference, rust, data, probe_texts, REPORT_KEYS, **opts)


@MANY
@given(data=st.data(), table=count_tables(), spelling=st.sampled_from(SPELLINGS), texts=probes)
def test_count_tables(reference, rust, data, table, spelling, texts):
    opts = _options(data.draw, spelling)
    floor = _floor(reference, table, opts)
    opts["vocab_size"] = floor + data.draw(st.integers(0, 14))
    assert_same(reference, rust, table, texts + list(table), **opts)


@MANY
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
@given(data=st.data(), table=count_tables(), spelling=st.sampled_from(["end", "front", "bytes"]),
       texts=probes)
def test_two_stage(reference, rust, data, table, spelling, texts):
    opts = {"spelling": spelling}
    if spelling != "bytes" and data.draw(st.booleans()):
        opts["byte_fallback"] = True
    floor = _floor(reference, table, opts)
    opts["superword_at"] = floor + data.draw(st.integers(0, 6))
    opts["vocab_size"] = opts["superword_at"] + data.draw(st.integers(1, 8))
    stream = " ".join(w for w, c in table.items() for _ in range(c))
    assert_same(reference, rust, table, texts + [stream], **opts)


@SETTINGS
@given(data=st.data(), table=count_tables(), spelling=st.sampled_from(["end", "continuation"]),
       texts=probes)
def test_joints(reference, rust, data, table, spelling, texts):
    # Cut every word after its first character (words of one character stay whole).
    joints = {w: [w[:1], w[1:]] for w in table if len(w) > 1}
    opts = {"spelling": spelling, "joints": joints}
    floor = _floor(reference, table, opts)
    opts["vocab_size"] = floor + data.draw(st.integers(0, 10))
    assert_same(reference, rust, table, texts + list(table), **opts)


@SETTINGS
@given(data=st.data(), table=count_tables(), spelling=st.sampled_from(["end", "continuation"]),
       texts=probes)
def test_two_stage_joints(reference, rust, data, table, spelling, texts):
    # Two-stage BPE on texts whose words are cut at joints: stage two must start from each text's
    # joint-cut parts, merges replayed part by part, as encoding does. (It learned no stream
    # merges at all before: the joints path dropped the texts.)
    words = [w for w, c in table.items() for _ in range(c)]
    lines = [" ".join(words[i:i + 3]) for i in range(0, len(words), 3)]
    joints = {w: [w[:1], w[1:]] for w in table if len(w) > 1}
    opts = {"spelling": spelling, "joints": joints}
    floor = _floor(reference, lines, opts)
    opts["superword_at"] = floor + data.draw(st.integers(0, 6))
    opts["vocab_size"] = opts["superword_at"] + data.draw(st.integers(1, 8))
    assert_same(reference, rust, lines, texts + lines, **opts)


def test_two_stage_joints_learns_stream_merges(rust):
    # By hand: three texts "ab ab", the word cut a|b at its joints, end spelling. The symbols are
    # a and b</w> (the end mark goes on the word's last part). Within the units "a" and "b" there
    # is no pair, so stage one learns nothing. Stage two sees each text as a b</w> a b</w>:
    # (a, b</w>) occurs 2 x 3 = 6 times and (b</w>, a) 3 times, so the first merge is a + b</w>;
    # the texts are then ab</w> ab</w>, and the only pair (ab</w>, ab</w>) occurs 3 times.
    lines = ["ab ab"] * 3
    joints = {"ab": ["a", "b"]}
    floor = rust.train(lines, vocab_size=10**6, spelling="end", joints=joints).report["alphabet_size"] + 1
    tok = rust.train(lines, vocab_size=floor + 2, superword_at=floor, spelling="end", joints=joints)
    assert tok.merges == [("a", "b</w>"), ("ab</w>", "ab</w>")]
    assert tok.encode_pieces("ab ab") == ["ab</w>ab</w>"]


@SETTINGS
@given(data=st.data(), table=count_tables(),
       spelling=st.sampled_from(["end", "continuation", "front"]), texts=probes)
def test_word_model(reference, rust, data, table, spelling, texts):
    opts = {"model": "word", "spelling": spelling, "vocab_size": data.draw(st.integers(1, 8))}
    if data.draw(st.booleans()):
        opts["min_count"] = data.draw(st.integers(1, 3))
    assert_same(reference, rust, table, texts + list(table), **opts)


# Words that begin with the continuation mark (`##word`, `##`) beside `a##b`: under continuation
# whether a piece continues a word is a property of its row (the word-first `##` that `#` + `###`
# makes is not the bare mark), in both engines; a one-character mark makes the first symbol
# itself begin with it.
@st.composite
def marked_tables(draw):
    alphabet = draw(st.sampled_from(["#a", "#ab", "a#b", "#"]))
    word = st.one_of(st.text(alphabet=alphabet, min_size=1, max_size=7),
                     st.sampled_from(["##", "##a", "a##b", "###", "##ab"]))
    return draw(st.dictionaries(word, st.integers(1, 7), min_size=1, max_size=6))


@SETTINGS
@given(data=st.data(), table=marked_tables(), mark=st.sampled_from([None, "#", "##"]),
       texts=st.lists(st.text(alphabet="#ab ", min_size=0, max_size=12), min_size=1, max_size=4))
def test_words_holding_the_continuation_mark(reference, rust, data, table, mark, texts):
    opts = _options(data.draw, "continuation")
    if mark is not None:
        opts["mark"] = mark
    opts["vocab_size"] = _floor(reference, table, opts) + data.draw(st.integers(0, 14))
    assert_same(reference, rust, table, texts + list(table), **opts)
