"""``split_by_script`` and ``split_by_number``: sentencepiece's rule for which substrings may be
Unigram seed pieces (``IsValidSentencePiece``; docs/API.md, "Unigram"). The seed sizes below are
counted by hand; the check against sentencepiece is in tests/interop/test_interop_sentencepiece.py
and the two engines are compared in tests/differential/test_differential_unigram.py."""

from __future__ import annotations

import json

import pytest

import subwords
from subwords import reference
from subwords.errors import OptionError, SubwordsError

ENGINES = {"rust": subwords.train, "reference": reference.train}


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize(("options", "seed_size"), [
    # Front spelling: the runs ▁abc1, ▁foo( and ▁1.5, an alphabet of ten (▁ a b c 1 f o ( . 5).
    # Without the rule every substring of 2+ symbols is a candidate: 10 each for the two runs of
    # five symbols, 6 for the run of four; none repeats. 10 + 26 = 36.
    ({}, 36),
    # With it: ▁abc1 keeps ▁a ▁ab ▁abc ab abc bc (6; each piece with the 1 mixes Latin and
    # Common), ▁foo( keeps ▁f ▁fo ▁foo fo foo oo (6; "(" is Common), ▁1.5 keeps all 6 (all
    # Common; ▁ is never compared). 10 + 18 = 28.
    ({"split_by_script": True}, 28),
    # split_by_number=False: a digit goes with anything, so ▁abc1 keeps all 10 again; foo( is
    # still cut. 10 + 10 + 6 + 6 = 32.
    ({"split_by_script": True, "split_by_number": False}, 32),
])
def test_seed_sizes_by_hand(engine, options, seed_size):
    tok = ENGINES[engine](["abc1 foo( 1.5"], model="unigram", spelling="front", vocab_size=100,
                          em_rounds=0, **options)
    assert tok.report["alphabet_size"] == 10
    assert tok.report["seed_size"] == seed_size


@pytest.mark.parametrize("engine", ENGINES)
def test_the_rule_holds_on_every_spelling(engine):
    # ab1 and a(: Latin then Common; the combining acute takes the script before it (Latin),
    # and Katakana with the prolonged sound mark is one script (counted as Han).
    text = ["ab1 ab1 a( a( e\u0301a e\u0301a ラーメン ラーメン"] * 3
    for spelling, mark in (("end", "</w>"), ("continuation", "##"), ("front", "\u2581")):
        tok = ENGINES[engine](text, model="unigram", spelling=spelling, vocab_size=200, em_rounds=0,
                              split_by_script=True)
        pieces = {tok.id_to_piece(i).replace(mark, "") for i in range(tok.vocab_size)}
        assert {"ab", "e\u0301a", "ラーメン"} <= pieces, spelling
        assert not {p for p in pieces if "1" in p and len(p) > 1}, spelling
        assert not {p for p in pieces if "(" in p and len(p) > 1}, spelling


def test_saved_only_when_set():
    # off: the file's options hold neither name, so models trained before keep their bytes
    plain = subwords.train(["abc1 foo("], model="unigram", vocab_size=40)
    saved = json.loads(plain.to_json())["options"]
    assert "split_by_script" not in saved and "split_by_number" not in saved
    on = subwords.train(["abc1 foo("], model="unigram", vocab_size=40, split_by_script=True,
                        split_by_number=False)
    saved = json.loads(on.to_json())["options"]
    assert saved["split_by_script"] is True and saved["split_by_number"] is False
    again = subwords.Tokenizer.from_json(on.to_json())
    assert again.train_options.split_by_script and not again.train_options.split_by_number


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize(("options", "message"), [
    ({"model": "bpe", "split_by_script": True}, "applies only to model='unigram'|unknown option"),  # the reference's BPE has no such option
    ({"model": "unigram", "spelling": "bytes", "split_by_script": True}, "spelling='front'"),
    ({"model": "unigram", "split_by_number": False}, "add split_by_script=True"),
])
def test_refused_where_it_means_nothing(engine, options, message):
    error = OptionError if engine == "rust" else SubwordsError
    with pytest.raises(error, match=message):
        ENGINES[engine](["abc1 foo("], vocab_size=40, **options)


def test_cli_flags(tmp_path):
    from subwords.cli import main

    corpus = tmp_path / "c.txt"
    corpus.write_text("abc1 foo( 1.5\n", encoding="utf-8")
    out = tmp_path / "m.json"
    main(["train", str(corpus), "--model", "unigram", "--spelling", "front", "--vocab-size", "100",
          "--em-rounds", "0", "--split-by-script", "--quiet", "-o", str(out)])
    assert subwords.load(out).report["seed_size"] == 28  # as counted in test_seed_sizes_by_hand
