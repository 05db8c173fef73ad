"""Count tables (issue: beyond one machine): training on a table is training on the text, tables
merge associatively and commutatively down to the bytes, and a damaged table is refused."""

from __future__ import annotations

import pickle
import random

import pytest
from hypothesis import given, settings, strategies as st

import subwords
from subwords import CountTable, InputError, OptionError
from peers import multilingual_texts

FOUR = {"low": 5, "lower": 2, "newest": 6, "widest": 3}


def texts(n: int = 2000) -> list[str]:
    return list(multilingual_texts(400_000)[:n])


@pytest.mark.parametrize("model,spelling,extra", [
    ("bpe", "end", {}),
    ("bpe", "front", {"byte_fallback": True}),
    ("bpe", "bytes", {"pre_split": "gpt2"}),
    ("wordpiece", "continuation", {}),
    ("unigram", "front", {}),
    ("bpe", "front", {"split_at_marks": False}),
])
def test_training_on_the_table_gives_the_model_training_on_the_text_gives(model, spelling, extra):
    corpus = texts()
    size = 400 if model != "unigram" else 300
    direct = subwords.train(corpus, model=model, spelling=spelling, vocab_size=size, **extra)
    count_opts = {k: v for k, v in extra.items() if k != "byte_fallback"}
    table = subwords.count(corpus, spelling=spelling, **count_opts)
    via = subwords.train(table, model=model, spelling=spelling, vocab_size=size, **extra)
    assert via.to_json() == direct.to_json()
    assert via.report["texts"] == len([t for t in corpus if t]) == table.texts


def test_files_count_as_their_lines(tmp_path):
    corpus = texts(500)
    a, b = tmp_path / "a.txt", tmp_path / "b.txt"
    a.write_text("\n".join(corpus[:250]) + "\n", encoding="utf-8")
    b.write_text("\r\n".join(corpus[250:]), encoding="utf-8")
    from_files = subwords.count([a, b], spelling="front")
    assert from_files == subwords.count(corpus, spelling="front")
    assert subwords.train([a, b], spelling="front", vocab_size=300).to_json() == \
        subwords.train(from_files, spelling="front", vocab_size=300).to_json()


def test_the_four_words_by_hand():
    t = subwords.count(FOUR)
    assert list(t.items()) == [("low", 5), ("lower", 2), ("newest", 6), ("widest", 3)]
    assert (len(t), t.total, t.texts) == (4, 16, 16)
    # the pages' walk from the table: 22 rows, 79 -> 22 pieces (000_..., the four words)
    tok = subwords.train(t, vocab_size=22)
    assert tok.report["corpus_pieces_before"] == 79 and tok.report["corpus_pieces_after"] == 22


def test_prune_drops_rare_units_and_reports_the_share():
    t = subwords.count({"a": 5, "b": 1, "c": 2})
    small, share = t.prune(2)
    assert list(small.items()) == [("a", 5), ("c", 2)]
    assert share == 1 / 8  # one occurrence of b out of 5 + 1 + 2
    assert t.prune(1)[1] == 0.0
    with pytest.raises(OptionError, match="min_unit_count"):
        t.prune(0)


def partitions(draw_texts: list[str], cuts: list[int]) -> list[list[str]]:
    edges = sorted({min(c, len(draw_texts)) for c in cuts} | {0, len(draw_texts)})
    return [draw_texts[a:b] for a, b in zip(edges, edges[1:])]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.text(alphabet="ab c\u00e9\u4e00 ", max_size=12), min_size=1, max_size=30),
       st.lists(st.integers(0, 30), max_size=6), st.randoms(use_true_random=False),
       st.sampled_from(["end", "front", "bytes"]))
def test_merging_is_associative_and_commutative_down_to_the_bytes(corpus, cuts, rnd, spelling):
    parts = []
    for part in partitions(corpus, cuts):
        c = subwords._api._counter(spelling=spelling)
        c.feed_texts(part)
        parts.append(CountTable(c.finish()))
    c = subwords._api._counter(spelling=spelling)
    c.feed_texts(corpus)
    expected = CountTable(c.finish()).to_bytes()
    rnd.shuffle(parts)
    # a random tree of merges
    while len(parts) > 1:
        i = rnd.randrange(len(parts) - 1)
        parts[i:i + 2] = [parts[i].merge(parts[i + 1]) if rnd.random() < 0.5 else parts[i + 1].merge(parts[i])]
    assert parts[0].to_bytes() == expected


def test_save_load_pickle_and_tsv(tmp_path):
    t = subwords.count(texts(200), spelling="end")
    t.save(tmp_path / "t.counts")
    assert CountTable.load(tmp_path / "t.counts") == t
    assert pickle.loads(pickle.dumps(t)) == t
    t.to_tsv(tmp_path / "t.tsv")
    lines = (tmp_path / "t.tsv").read_text(encoding="utf-8").splitlines()
    assert lines[0].split("\t") == [next(t.items())[0], str(next(t.items())[1])]
    assert len(lines) == len(t)
    # the TSV trains like the table (end spelling: units are words), except that a word<TAB>count
    # file does not know how many texts there were: its report counts every word as a text
    from_tsv, from_table = subwords.train([tmp_path / "t.tsv"], counts=True, vocab_size=300), subwords.train(t, vocab_size=300)
    assert (from_tsv.rows, from_tsv.merges) == (from_table.rows, from_table.merges)
    assert from_tsv.report["texts"] == t.total and from_table.report["texts"] == t.texts == 200
    assert {**from_tsv.report, "texts": 0} == {**from_table.report, "texts": 0}
    # binary tables are read by counts=True too, and several are summed
    assert subwords.train([tmp_path / "t.counts", tmp_path / "t.counts"], counts=True, vocab_size=300).to_json() == \
        subwords.train(t.merge(t), vocab_size=300).to_json()


def test_a_damaged_table_is_refused(tmp_path):
    blob = subwords.count(FOUR).to_bytes()
    rnd = random.Random(7)
    for cut in sorted({0, 3, 8, 12, 19, len(blob) - 1, *rnd.sample(range(len(blob)), 20)}):
        with pytest.raises(InputError):
            CountTable.from_bytes(blob[:cut])
    for at in rnd.sample(range(8, len(blob)), 30):
        bad = bytearray(blob)
        bad[at] ^= 0x10
        with pytest.raises(InputError):
            CountTable.from_bytes(bytes(bad))
    with pytest.raises(InputError, match="not a count table"):
        CountTable.from_bytes(b"low\t5\n")
    (tmp_path / "bad.counts").write_bytes(blob[:-3])
    with pytest.raises(InputError, match="bad.counts"):
        CountTable.load(tmp_path / "bad.counts")
    # a header that promises more units than the bytes can hold is refused before allocating
    huge = bytearray(blob)
    start = huge.index(b'"units":') + len(b'"units":')
    huge[start:start + 1] = b"9"
    with pytest.raises(InputError):
        CountTable.from_bytes(bytes(huge))


def test_a_table_of_other_options_is_refused_naming_the_difference():
    t = subwords.count(FOUR, spelling="front")
    with pytest.raises(OptionError, match="scheme: table has \"front\", training asks for \"end\""):
        subwords.train(t, spelling="end", vocab_size=22)
    lower = subwords.count(FOUR, lowercase=True)
    with pytest.raises(OptionError, match="lowercase"):
        subwords.train(lower, vocab_size=22)
    with pytest.raises(OptionError, match="different spellings"):
        t.merge(subwords.count(FOUR))
    with pytest.raises(OptionError, match="two-stage"):
        subwords.train(t, spelling="front", vocab_size=30, superword_at=25)


def test_counts_cannot_overflow_silently():
    big = subwords.count({"a": 2**64 - 1})
    with pytest.raises(InputError, match="64 bits"):
        big.merge(subwords.count({"a": 1}))


def test_bad_counting_options_and_empty_input():
    with pytest.raises(OptionError, match="spelling"):
        subwords.count(FOUR, spelling="middle")
    with pytest.raises(OptionError):
        subwords.count(FOUR, spelling="bytes", mark="#")
    with pytest.raises(InputError, match="no units"):
        subwords.count(["", "   "])
    with pytest.raises(InputError, match="single string"):
        subwords.count("low lower")


# the spelling options: a table counted with them is the text as training reads it
NEWER = [
    ("bpe", "end", {"normalize": "nfkc", "pre_split": r"\p{L}+|\p{N}+|[^\s\p{L}\p{N}]+"}),
    ("bpe", "front", {"normalize": "nmt_nfkc", "split_digits": 1, "byte_fallback": True}),
    ("bpe", "bytes", {"pre_split": "cl100k", "split_digits": 3}),
    ("wordpiece", "continuation", {"normalize": "nfkd", "pre_split": "bert", "split_digits": 1}),
    ("unigram", "front", {"normalize": "nfkc", "split_digits": 3}),
]


@pytest.mark.parametrize("model,spelling,extra", NEWER)
def test_tables_take_normalize_patterns_and_digit_splitting(model, spelling, extra):
    # digits and compatibility characters (full-width, ligatures), so the options change units
    corpus = texts(1500) + ["Call ５５５-0199 or 2026 ﬁles", "ｆｕｌｌ width ﬀ 1234567"] * 20
    size = 400 if model != "unigram" else 300
    direct = subwords.train(corpus, model=model, spelling=spelling, vocab_size=size, **extra)
    count_opts = {k: v for k, v in extra.items() if k != "byte_fallback"}
    table = subwords.count(corpus, spelling=spelling, **count_opts)
    assert table.spelling.get("normalize") == extra.get("normalize")
    assert table.spelling.get("split_digits") == extra.get("split_digits")
    via = subwords.train(table, model=model, spelling=spelling, vocab_size=size, **extra)
    assert via.to_json() == direct.to_json()
    # the options do change the units here, so the check above is not vacuous
    assert table != subwords.count(corpus, spelling=spelling)


def test_a_table_of_other_newer_options_is_refused_naming_the_difference():
    corpus = ["ﬁle ５５ 2026"]
    nfkc = subwords.count(corpus, spelling="front", normalize="nfkc")
    with pytest.raises(OptionError, match='normalize: table has "nfkc", training asks for null'):
        subwords.train(nfkc, spelling="front", vocab_size=40)
    with pytest.raises(OptionError, match='normalize: table has "nfkc", training asks for "nfc"'):
        subwords.train(nfkc, spelling="front", vocab_size=40, normalize="nfc")
    plain = subwords.count(corpus, spelling="front")
    with pytest.raises(OptionError, match="split_digits: table has null, training asks for 1"):
        subwords.train(plain, spelling="front", vocab_size=40, split_digits=1)
    words = subwords.count(corpus, pre_split=r"\p{L}+")
    with pytest.raises(OptionError, match="pattern"):
        subwords.train(words, vocab_size=40)
    assert subwords.train(nfkc, spelling="front", vocab_size=40, normalize="nfkc").to_json() == \
        subwords.train(corpus, spelling="front", vocab_size=40, normalize="nfkc").to_json()
    with pytest.raises(OptionError):
        subwords.count(corpus, normalize="nfkx")
    with pytest.raises(OptionError):
        subwords.count(corpus, split_digits=2)
    with pytest.raises(OptionError, match="split_digits"):
        subwords.count(corpus, split_digits=True)
