"""Special tokens under BPE-dropout and Unigram's other segmenters, and in offsets: the text is
cut at the allowed surfaces in the core by the encoder contract's rule (docs/SPECIALS.md), each
stretch between them encoded in the call's mode, its draws started from the seed afresh."""

from __future__ import annotations

import pytest

import subwords
from subwords.errors import InputError

EOT = "<|endoftext|>"
SENTENCES = [
    "the cat sat on the mat and the dog sat on the log",
    "hello world, hello there, the world is wide",
    "special tokens are rows of their own and never split",
]
DOCS = [s + " " + EOT for s in SENTENCES] * 4


@pytest.fixture(scope="module")
def bpe():
    return subwords.train(DOCS, vocab_size=90, special_tokens=[EOT], user_symbols=["<sep>"])


@pytest.fixture(scope="module")
def unigram():
    return subwords.train(DOCS, vocab_size=60, model="unigram", special_tokens=[EOT])


def test_dropout_one_drops_every_merge_but_keeps_the_allowed_special(bpe):
    # BPE-dropout with p=1 skips every merge (Provilkov et al.): each stretch is its symbols,
    # the end spelling's mark on a stretch's last one; the special between them is its row
    pieces = bpe.encode_pieces(f"hello{EOT}world", allowed_special="all", dropout=1.0, seed=7)
    assert pieces == ["h", "e", "l", "l", "o</w>", EOT, "w", "o", "r", "l", "d</w>"]
    # not allowed, the surface is text, cut into symbols like the rest
    text_pieces = bpe.encode_pieces(f"hello{EOT}", dropout=1.0, seed=7)
    assert EOT not in text_pieces and text_pieces[:4] == ["h", "e", "l", "l"]


def test_dropout_zero_is_the_plain_encoding_around_specials(bpe):
    text = f"the cat{EOT}sat on<sep>the mat {EOT}"
    assert bpe.encode(text, allowed_special="all", dropout=0.0, seed=1) == bpe.encode(text, allowed_special="all")
    # a user symbol matches whatever the call allows, in every mode
    assert bpe.piece_to_id("<sep>") in bpe.encode("a<sep>b", dropout=0.5, seed=3)


def test_each_stretch_is_drawn_from_the_seed_afresh(bpe, unigram):
    eot = bpe.piece_to_id(EOT)
    a, b = "the world is wide", "hello there"
    got = bpe.encode(f"{a}{EOT}{b}", allowed_special={EOT}, dropout=0.4, seed=11)
    assert got == bpe.encode(a, dropout=0.4, seed=11) + [eot] + bpe.encode(b, dropout=0.4, seed=11)
    eot = unigram.piece_to_id(EOT)
    for kw in ({"segmenter": "fewest"}, {"segmenter": "sample", "seed": 5, "alpha": 0.5}):
        got = unigram.encode(f"{a}{EOT}{b}", allowed_special="all", **kw)
        assert got == unigram.encode(a, **kw) + [eot] + unigram.encode(b, **kw), kw
        assert eot not in unigram.encode(f"{a}{EOT}{b}", **kw)


def test_a_pair_in_a_mode_follows_the_text(unigram):
    kw = {"segmenter": "sample", "seed": 2, "nbest": 3}
    assert unigram.encode("the cat", pair="the dog", **kw) == unigram.encode("the cat", **kw) + unigram.encode("the dog", **kw)


def test_a_special_not_in_the_vocabulary_is_refused_in_every_mode(bpe):
    with pytest.raises(InputError, match="not a special token"):
        bpe.encode("x", allowed_special={"<nope>"}, dropout=0.1, seed=1)


def test_offsets_of_an_allowed_special_are_its_characters(bpe):
    # "é " is two characters (three bytes): the special starts at character 2 and is 13 long
    triples = bpe.encode_with_offsets(f"é {EOT}ab", allowed_special="all")
    eot = bpe.piece_to_id(EOT)
    assert (eot, 2, 15) in triples
    assert [t for t in triples if t[0] == eot] == [(eot, 2, 15)]
    assert triples[-1][2] == 17
    # not allowed: no id of the special row, and the pieces cover the surface as text
    assert all(i != eot for i, _, _ in bpe.encode_with_offsets(f"é {EOT}ab"))
