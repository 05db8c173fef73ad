"""SuperBPE's bad options: an OptionError naming the option and the range that works, raised
before any input is read; a count table without spans says how to train instead."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

import subwords
from subwords import OptionError


class Untouched:
    """An input that fails the test if training reads it."""

    def __iter__(self) -> Iterator[str]:
        raise AssertionError("the input was read before the options were checked")


@pytest.mark.parametrize("t", [0, 100, 256])
def test_transition_below_the_alphabet(t: int) -> None:
    with pytest.raises(OptionError, match=r"superword_at=%d is outside the range that works, 257\.\.=1000" % t):
        subwords.train(Untouched(), vocab_size=1000, preset="superbpe", superword_at=t)


def test_transition_above_the_size() -> None:
    with pytest.raises(OptionError, match=r"superword_at=1001 is outside the range that works, 257\.\.=1000"):
        subwords.train(Untouched(), vocab_size=1000, preset="superbpe", superword_at=1001)


def test_transition_range_counts_special_rows() -> None:
    with pytest.raises(OptionError, match=r"259\.\.=1000.*2 special rows"):
        subwords.train(Untouched(), vocab_size=1000, preset="superbpe", superword_at=258,
                       special_tokens=["<s>", "</s>"])


def test_transition_equal_to_the_size_is_plain_bpe() -> None:
    corpus = ["the cat sat on the mat"] * 4
    # stage one reaches the size (the corpus has more than six pairs counted twice): nothing is
    # left for stage two
    one = subwords.train(corpus, vocab_size=262, preset="superbpe", superword_at=262)
    assert one.report["stage_one_merges"] == len(one.merges) == 6


@pytest.mark.parametrize("words", [1, 65])
def test_span_limit_outside_its_range(words: int) -> None:
    with pytest.raises(OptionError, match=r"superword_words=%d is outside the range that works, 2\.\.=64" % words):
        subwords.train(Untouched(), vocab_size=1000, preset="superbpe", superword_words=words)


def test_span_expression_that_is_the_pre_split() -> None:
    with pytest.raises(OptionError, match=r"superword_pattern .* is the stage-one pre-split itself"):
        subwords.train(Untouched(), vocab_size=1000, preset="superbpe", pre_split=r"\s+|\w+",
                       superword_pattern=r"\s+|\w+")


def test_span_option_on_a_spelling_without_spaces_inside_pieces() -> None:
    for spelling in ("end", "continuation", "front"):
        with pytest.raises(OptionError, match=r"superword_pattern needs spelling='bytes'.*cannot carry a space"):
            subwords.train(Untouched(), vocab_size=1000, preset="superbpe", spelling=spelling)


def test_word_limit_without_spans() -> None:
    with pytest.raises(OptionError, match=r"superword_words limits SuperBPE's stage two: give it with superword_pattern"):
        subwords.train(Untouched(), vocab_size=1000, spelling="bytes", pre_split="o200k", superword_words=3)


def test_count_table_without_spans_says_how_to_recount() -> None:
    table = subwords.count(["the cat sat on the mat"] * 3, spelling="bytes", pre_split="o200k")
    with pytest.raises(OptionError, match=r"spans, which this count table does not carry; count again with the "
                                          r"superword options: `subwords count FILES -o TABLE --preset superbpe`"):
        subwords.train(table, vocab_size=300, preset="superbpe")
