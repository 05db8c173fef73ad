"""Normalization (`normalize=`), digit splitting, presets and the special-token check.

The normalized forms used as expected values are the Unicode Character Database's
decomposition mappings (UAX #15), written out by hand:
U+FB01 LATIN SMALL LIGATURE FI is <compat> 0066 0069 ("fi"); U+FF28.. FULLWIDTH LATIN letters
are <wide> their ASCII letters ("Ｈｅｌｌｏ" -> "Hello"); U+00B2 SUPERSCRIPT TWO is <super> 0032
("2"); U+2460 CIRCLED DIGIT ONE is <circle> 0031 ("1").
"""

from __future__ import annotations

import json
import unicodedata

import pytest

import subwords
from subwords import TrainOptions
from subwords._api import check_specials_normalization, spelling_units
from subwords._options import PRESETS, resolved
from subwords.errors import OptionError

CORPUS = ["fine fish find five", "Hello hello world", "fine 2 1 12 21", "the file is fine", "office fifty"] * 3


def units(text: str, **options) -> list[str]:
    return [u for u, _, _ in spelling_units(TrainOptions(vocab_size=100, **options), text)]


@pytest.mark.parametrize(("compat", "plain"), [("ﬁne", "fine"), ("Ｈｅｌｌｏ", "Hello"), ("²", "2"), ("①", "1")])
def test_nfkc_encodes_compatibility_forms_as_their_plain_text(compat, plain):
    tok = subwords.train(CORPUS, vocab_size=60, normalize="nfkc")
    assert tok.encode(compat) == tok.encode(plain)
    assert tok.normalize(compat) == plain
    # and without normalization they are other text
    raw = subwords.train(CORPUS, vocab_size=60, byte_fallback=True)
    assert raw.encode(compat) != raw.encode(plain)


def test_the_four_forms_and_nmt_nfkc_on_units():
    text = "e\u0301cole ﬁ"  # e + COMBINING ACUTE ACCENT; NFC composes it to U+00E9
    assert units(text, normalize="nfc") == ["\u00e9cole", "ﬁ"]
    assert units(text, normalize="nfd") == ["e\u0301cole", "ﬁ"]
    assert units("\u00e9", normalize="nfd") == ["e\u0301"]
    assert units(text, normalize="nfkc") == ["\u00e9cole", "fi"]
    assert units(text, normalize="nfkd") == ["e\u0301cole", "fi"]
    # nmt_nfkc: NFKC, and a zero-width space (U+200B) becomes a space, so it cuts the word
    assert units("ﬁ\u200bx", normalize="nmt_nfkc") == ["fi", "x"]
    assert units("ﬁ\u200bx", normalize="nfkc") == ["fi\u200bx"]
    assert units(text, normalize="none") == units(text) == ["e\u0301cole", "ﬁ"]


def test_offsets_point_into_the_original_text():
    text = "Ｈｅｌｌｏ ﬁne ² e\u0301cole"
    tok = subwords.train(CORPUS + ["école"], vocab_size=60, normalize="nfkc", byte_fallback=True)
    got = tok.encode_with_offsets(text)
    assert [i for i, _, _ in got] == tok.encode(text)
    last_end = 0
    for id_, start, end in got:
        piece = tok.id_to_piece(id_).removesuffix("</w>")
        original = text[start:end]
        assert original and start >= 0 and end <= len(text)
        # each piece is (part of) the NFKC form of the original under its offsets
        assert piece in unicodedata.normalize("NFKC", original), (piece, original)
        assert start >= last_end or (start, end) == (prev_start, prev_end)  # a split ligature shares one span
        prev_start, prev_end, last_end = start, end, end
    # the pieces of "ﬁne" lie inside the 3 characters of "ﬁne" (6..9)
    fine = [(s, e) for _, s, e in got if 6 <= s < 9]
    assert fine and fine[0][0] == 6 and fine[-1][1] == 9


def test_normalize_is_saved_reported_and_applied_after_loading(tmp_path):
    tok = subwords.train(CORPUS, vocab_size=60, normalize="nfkc")
    assert tok.report["normalize"] == "nfkc"
    doc = json.loads(tok.to_json())
    assert doc["spelling"]["normalize"] == "nfkc"
    tok.save(tmp_path / "m.json")
    back = subwords.load(tmp_path / "m.json")
    assert back.encode("ﬁne") == back.encode("fine") == tok.encode("fine")
    assert back.train_options.normalize == "nfkc"


def test_a_model_without_the_new_options_has_none_of_their_keys():
    text = subwords.train(CORPUS, vocab_size=60).to_json()
    for key in ('"normalize"', '"pattern"', '"split_digits"'):
        assert key not in text


def test_digits_split_singly_or_in_threes():
    assert units("abc12345 x9", split_digits=3) == ["abc", "123", "45", "x", "9"]
    assert units("abc12345", split_digits=1) == ["abc", "1", "2", "3", "4", "5"]
    assert units(" a12", spelling="bytes", split_digits=1) == [" a", "1", "2"]
    # front: the mark stays with the word; a word that starts with a digit leaves the mark alone
    assert units("ab12 3", spelling="front", split_digits=1) == ["▁ab", "1", "2", "▁", "3"]
    tok = subwords.train(["ab12 3 123 45"] * 4, preset="llama", vocab_size=300)
    assert tok.decode(tok.encode("ab 12 345")) == "ab 12 345"
    assert all(not any(c.isdigit() for c in p) or len(p) == 1 for p in tok.encode_pieces("ab 12 345"))


def test_lowercase_applies_to_every_spelling():
    assert units("Hello WORLD", spelling="bytes", lowercase=True) == ["hello", " world"]
    assert units("Hello", spelling="front", lowercase=True) == ["▁hello"]


@pytest.mark.parametrize("name", list(PRESETS))
def test_every_preset_trains_and_sets_its_options(name):
    expected = PRESETS[name]
    o = resolved(TrainOptions(vocab_size=300, preset=name))
    for key, value in expected.items():
        core_key = "pattern" if key == "pre_split" and value not in ("gpt2", "bert") else key
        if key == "boundless":  # the core's value is BoundlessBPE's options, filled in
            assert o[key] == {"deletion_threshold": 0.9, "superword_pieces": "letters", "count_on": "runs"}
            continue
        assert o[core_key] == value, key
    tok = subwords.train(CORPUS * 2, vocab_size=300, preset=name)
    assert tok.decode(tok.encode("fine world")).strip().lower() == "fine world"


def test_an_explicit_option_overrides_the_preset():
    o = resolved(TrainOptions(vocab_size=300, preset="llama", split_digits=3))
    assert o["split_digits"] == 3 and o["byte_fallback"] is True
    o = resolved(TrainOptions(vocab_size=300, preset="sentencepiece", character_coverage=1.0, byte_fallback=True))
    assert o["character_coverage"] == 1.0 and o["byte_fallback"] is True and o["normalize"] == "nmt_nfkc"
    assert o["em"] == "sentencepiece"  # the sentencepiece preset uses sentencepiece's loop


@pytest.mark.parametrize(("options", "words"), [
    ({"preset": "gpt3"}, ["unknown preset 'gpt3'", "gpt2, cl100k, o200k, llama, sentencepiece, sennrich, bert"]),
    ({"normalize": "nfkx"}, ["normalize"]),
    ({"pre_split": "cl100"}, ["unknown pre-split pattern", "cl100k", "o200k", "llama3"]),
    ({"pre_split": "ab(c", "spelling": "bytes"}, ["not a valid regular expression", "at byte"]),
    ({"split_digits": 2}, ["split_digits must be 1", "got 2"]),
    ({"pre_split": r"\w+", "spelling": "front"}, ["front spelling"]),
])
def test_bad_options_are_refused_with_what_to_do(options, words):
    with pytest.raises(OptionError) as e:
        subwords.train(CORPUS, vocab_size=60, **options)
    for w in words:
        assert w in str(e.value)


def test_a_normalization_that_would_change_a_special_token_is_refused():
    check_specials_normalization(TrainOptions(vocab_size=10, normalize="nfkc"), ["<s>", "<|endoftext|>", "[MASK]"])
    check_specials_normalization(TrainOptions(vocab_size=10), ["<S>", "＜pad＞"])
    with pytest.raises(OptionError, match="'?\"＜pad＞\"'? would be normalized to \"<pad>\""):
        check_specials_normalization(TrainOptions(vocab_size=10, normalize="nfkc"), ["<s>", "＜pad＞"])
    with pytest.raises(OptionError, match="would be normalized to \"<mask>\""):
        check_specials_normalization(TrainOptions(vocab_size=10, preset="bert"), ["<MASK>"])


def test_nmt_nfkc_agrees_with_sentencepiece():
    """Our nmt_nfkc (NFKC plus sentencepiece's rules, written from the rules) against
    sentencepiece's own compiled nmt_nfkc map, word by word (whitespace handling apart)."""
    import sentencepiece as spm

    import peers

    sp = spm.SentencePieceNormalizer(rule_name="nmt_nfkc", add_dummy_prefix=False, escape_whitespaces=False,
                                     remove_extra_whitespaces=False)
    texts = list(peers.multilingual_texts(200_000)) + [
        "ﬁne Ｈｅｌｌｏ ² ① ㍿ ℌ ½ e\u0301 \u00a0x\u200by\u3000z", "ctrl\x01\x07\x7fend tab\there", "ǅ Ǆ ǆ ſt ﬀ ⅷ",
    ]
    bad = []
    for t in texts:
        want = sp.normalize(t).split()
        got = units(t, normalize="nmt_nfkc")
        if got != want:
            bad.append((t[:60], got[:8], want[:8]))
    assert not bad, f"{len(bad)} texts differ, first: {bad[0]}"


def _cli(*args: str, cwd):
    import os
    import subprocess
    import sys

    return subprocess.run([sys.executable, "-m", "subwords", *args], capture_output=True, cwd=cwd, timeout=300,
                          env={**os.environ, "PYTHONIOENCODING": "utf-8"}, text=True, encoding="utf-8")


def test_the_cli_takes_normalize_pre_split_split_digits_and_the_presets(tmp_path):
    (tmp_path / "c.txt").write_text("\n".join(CORPUS) + "\n", encoding="utf-8")
    p = _cli("train", "c.txt", "-o", "m.json", "--vocab-size", "300", "--normalize", "nfkc", "--spelling", "bytes",
             "--pre-split", "cl100k", "--split-digits", "1", "--quiet", cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    tok = subwords.load(tmp_path / "m.json")
    o = tok.train_options
    assert (o.normalize, o.pre_split, o.split_digits, o.spelling) == ("nfkc", "cl100k", 1, "bytes")
    assert tok.encode("ﬁne 12") == tok.encode("fine 12")
    p = _cli("train", "c.txt", "-o", "s.json", "--vocab-size", "80", "--preset", "sentencepiece", "--quiet", cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    o = subwords.load(tmp_path / "s.json").train_options
    assert (o.model, o.spelling, o.normalize, o.character_coverage) == ("unigram", "front", "nmt_nfkc", 0.9995)
    p = _cli("train", "c.txt", "-o", "x.json", "--vocab-size", "80", "--spelling", "bytes", "--pre-split", "a(b",
             cwd=tmp_path)
    assert p.returncode != 0 and "at byte" in p.stderr and "Traceback" not in p.stderr
    assert not (tmp_path / "x.json").exists()
