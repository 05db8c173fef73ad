"""``subwords.TrainOptions``: a frozen value ``train`` accepts as well as keywords; the core
checks every value (one place), and an unknown option is named with the ones there are."""

from __future__ import annotations

import dataclasses
import typing

import pytest

import subwords
from subwords import TrainOptions

FOUR = {"low": 5, "lower": 2, "newest": 6, "widest": 3}


def test_options_and_keywords_train_the_same_model():
    opts = TrainOptions(vocab_size=22)
    assert subwords.train(FOUR, opts) == subwords.train(FOUR, vocab_size=22)
    uni = TrainOptions(vocab_size=20, model="unigram")
    assert subwords.train(FOUR, uni) == subwords.train(FOUR, model="unigram", vocab_size=20)
    # keywords after the options change them
    assert subwords.train(FOUR, opts, vocab_size=20) == subwords.train(FOUR, vocab_size=20)
    # data and options by name, as data could be before TrainOptions
    assert subwords.train(data=FOUR, options=opts) == subwords.train(data=FOUR, vocab_size=22)


def test_options_are_frozen_and_typed():
    opts = TrainOptions(vocab_size=22)
    with pytest.raises(dataclasses.FrozenInstanceError):
        opts.vocab_size = 30  # type: ignore[misc]
    hints = typing.get_type_hints(TrainOptions)
    assert typing.get_args(hints["model"]) == ("bpe", "word", "wordpiece", "unigram")
    assert set(typing.get_args(typing.get_args(hints["spelling"])[0])) == {"end", "continuation", "front", "bytes"}


def test_a_model_gives_back_options_that_train_it_again():
    for opts in (TrainOptions(vocab_size=22), TrainOptions(vocab_size=20, model="unigram"),
                 TrainOptions(vocab_size=30, model="wordpiece")):
        tok = subwords.train(FOUR, opts)
        saved = tok.train_options
        assert isinstance(saved, TrainOptions) and saved.model == opts.model
        assert subwords.train(FOUR, saved) == tok


def test_an_unknown_option_is_named_with_the_valid_ones():
    with pytest.raises(subwords.OptionError, match=r"unknown option 'vocab_sise'; the options are: vocab_size, "):
        subwords.train(FOUR, vocab_sise=22)
    with pytest.raises(subwords.OptionError, match="unknown option 'colour'"):
        TrainOptions(vocab_size=22).replace(colour="red")
    with pytest.raises(subwords.OptionError, match="vocab_size is required"):
        subwords.train(FOUR)


@pytest.mark.parametrize("kw, says", [
    ({"vocab_size": -1}, "vocab_size=-1"),               # a u64 in the core
    ({"vocab_size": True}, "vocab_size=True: expected a whole number"),  # a bool is no count
    ({"vocab_size": 22, "model": "gpt"}, "model"),        # not one of the models
    ({"vocab_size": 22, "spelling": "upside-down"}, "spelling"),
    ({"vocab_size": 22, "min_count_rule": "stop"}, "only to model='wordpiece'"),
    ({"vocab_size": 22, "em_rounds": 3}, "only to model='unigram'"),
    ({"vocab_size": 22, "character_coverage": float("nan")}, "character_coverage"),
    ({"vocab_size": 22, "max_piece_length": 2**40}, "max_piece_length"),  # a u32 in the core
    ({"vocab_size": 22, "model": "unigram", "min_count": 3}, "min_count does not apply"),
])
def test_the_core_checks_the_values(kw, says):
    with pytest.raises(subwords.OptionError, match=says.replace("(", r"\(").replace(")", r"\)")):
        subwords.train(FOUR, **kw)


def test_a_non_options_second_argument_is_refused():
    with pytest.raises(subwords.OptionError, match="TrainOptions"):
        subwords.train(FOUR, {"vocab_size": 22})  # type: ignore[arg-type]


def test_the_reference_reads_the_same_defaults():
    from subwords import _options
    from subwords.reference import training

    assert training.DEFAULT_MIN_COUNT is _options.DEFAULT_MIN_COUNT


def test_the_defaults_are_the_cores_one_table():
    from subwords import _core, _options

    table = _core.default_options()
    assert set(table) == {"bpe", "word", "wordpiece", "unigram"}
    # each model's own spelling: Sennrich's end mark; WordPiece's ## continuation
    assert _options.DEFAULT_SPELLING == {"bpe": "end", "word": "end", "wordpiece": "continuation", "unigram": "end"}
    assert _options.DEFAULT_MIN_COUNT == {"bpe": 2, "word": 1, "wordpiece": 2}
    # BERT's max_input_chars_per_word (100); sentencepiece's max_sentencepiece_length (16) and
    # seed_sentencepiece_size (1,000,000)
    assert _options.MODEL_DEFAULTS == {"max_piece_length": {"unigram": 16}, "seed_size": {"unigram": 1_000_000},
                                       "max_word_length": {"wordpiece": 100}, "min_count_rule": {"wordpiece": "filter"},
                                       "unknown": {"wordpiece": "word"}}
    # the dataclass's own defaults are the table's where it has one
    plain = TrainOptions(vocab_size=10)
    for name in ("byte_fallback", "split_at_marks", "input_errors", "lowercase", "split_by_number"):
        assert getattr(plain, name) == table["bpe"][name], name


@pytest.mark.parametrize("kw, says", [
    ({"byte_fallback": 1}, "byte_fallback=1: expected True or False"),        # an int is no bool
    ({"byte_fallback": "yes"}, "byte_fallback='yes': expected True or False"),
    ({"character_coverage": True}, "character_coverage=True: expected a number"),  # a bool is no number
    ({"split_digits": 300}, "split_digits=300: expected a whole number from 0 to 255"),
    ({"mark": 5}, "mark=5: expected a str"),
])
def test_values_are_read_strictly_and_named(kw, says):
    with pytest.raises(subwords.OptionError, match=says):
        subwords.train(FOUR, vocab_size=22, **kw)


def test_an_int_is_a_float_where_a_float_is_asked():
    assert subwords.train(FOUR, vocab_size=22, character_coverage=1) == subwords.train(FOUR, vocab_size=22,
                                                                                      character_coverage=1.0)


def test_the_saved_dicts_are_copies():
    tok = subwords.train(FOUR, vocab_size=22)
    tok.options["vocab_size"] = 5
    tok.spelling["scheme"] = "bytes"
    tok.report["alphabet_size"] = 0
    assert tok.options["vocab_size"] == 22 and tok.spelling["scheme"] == "end" and tok.report["alphabet_size"] > 0
    assert tok.train_options.vocab_size == 22
