"""tokenizer.json offsets: explicit examples, each worked out by hand from tokenizers' alignment
rules (every byte of the normalized text points back to the original characters it came from)
and checked against ``tokenizers.Tokenizer.encode(text).offsets`` itself. Offsets are code
points of the text, as tokenizers' Python binding gives them. The random texts of
``test_interop_sweep.py`` compare the offsets of every tokenizer.json case there."""

from __future__ import annotations

from pathlib import Path

import pytest

import subwords.formats as formats

from tokenizers import AddedToken, Tokenizer, models, normalizers, pre_tokenizers, processors


def _bpe(chars: list[str], merges: list[tuple[str, str]] = (), **kw) -> Tokenizer:
    vocab = {"<unk>": 0}
    for c in chars:
        vocab.setdefault(c, len(vocab))
    for a, b in merges:
        vocab.setdefault(a + b, len(vocab))
    return Tokenizer(models.BPE(vocab=vocab, merges=list(merges), unk_token="<unk>", **kw))


def _both(tok: Tokenizer, tmp_path: Path, text: str) -> list[tuple[str, int, int]]:
    """(token, start, end) from our reader of the saved file, after checking that tokenizers
    gives the same ids and offsets."""
    path = tmp_path / "tokenizer.json"
    tok.save(str(path))
    ours = formats.load(path)
    e = tok.encode(text, add_special_tokens=False)
    got = ours.encode_with_offsets(text, allowed_special="all")
    assert got == [(i, s, t) for i, (s, t) in zip(e.ids, e.offsets)]
    return [(ours.id_to_piece(i), s, t) for i, s, t in got]


def test_nfkc_ligature_gives_both_letters_its_span(tmp_path):
    # "ﬁ" (one code point) becomes "fi": both letters span the ligature, 0..1
    tok = _bpe(["f", "i", "x"])
    tok.normalizer = normalizers.NFKC()
    assert _both(tok, tmp_path, "ﬁx") == [("f", 0, 1), ("i", 0, 1), ("x", 1, 2)]


def test_nfkc_fullwidth_letters_keep_their_own_spans(tmp_path):
    # each full-width letter (three bytes) becomes one ASCII letter spanning it
    tok = _bpe(list("Helo"), [("H", "e"), ("l", "l"), ("ll", "o")])
    tok.normalizer = normalizers.NFKC()
    assert _both(tok, tmp_path, "Ｈｅｌｌｏ") == [("He", 0, 2), ("llo", 2, 5)]


def test_bert_lowercase_and_accents_span_the_original(tmp_path):
    # "Crème" -> "creme": the "e" left of "è" (NFD, the grave dropped) spans "è"
    tok = Tokenizer(models.WordPiece({"[UNK]": 0, "cr": 1, "##eme": 2, "##e": 3}, unk_token="[UNK]"))
    tok.normalizer = normalizers.BertNormalizer(lowercase=True, strip_accents=True)
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    assert _both(tok, tmp_path, "Crème") == [("cr", 0, 2), ("##eme", 2, 5)]


def test_dotted_capital_i_lowercases_to_two_code_points_spanning_it(tmp_path):
    # "İ".lower() is "i" + U+0307: both span the one original character
    tok = _bpe(["x", "i", "\u0307"])
    tok.normalizer = normalizers.Lowercase()
    assert _both(tok, tmp_path, "xİ") == [("x", 0, 1), ("i", 1, 2), ("\u0307", 1, 2)]


def test_lstrip_token_spans_the_whitespace_run_it_took(tmp_path):
    # "a" + three spaces + "<mask>": the token takes the spaces, 1..10
    tok = _bpe(["a"])
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    tok.add_special_tokens([AddedToken("<mask>", lstrip=True, special=True)])
    assert _both(tok, tmp_path, "a   <mask>") == [("a", 0, 1), ("<mask>", 1, 10)]


def test_nfc_composition_spans_only_the_base_letter(tmp_path):
    # an odd one of tokenizers': "e" + U+0301 composes to "é", which spans only the "e" (0..1
    # of the two code points after "x"), so the combining accent belongs to no token
    tok = _bpe(["x", "é"])
    tok.normalizer = normalizers.NFC()
    assert _both(tok, tmp_path, "xe\u0301") == [("x", 0, 1), ("é", 1, 2)]


def test_byte_rows_of_one_character_each_span_it(tmp_path):
    # "€" is three bytes with no row of its own: each byte row spans the whole character
    tok = _bpe(["<0xE2>", "<0x82>", "<0xAC>", "a"], byte_fallback=True)
    assert _both(tok, tmp_path, "a€") == [("a", 0, 1), ("<0xE2>", 1, 2), ("<0x82>", 1, 2), ("<0xAC>", 1, 2)]


@pytest.mark.parametrize("trim, want", [
    # with trim_offsets the space before "b" leaves its token's span; the prefix space that
    # add_prefix_space put before "a" stays (it spans "a" itself)
    (True, [("Ġa", 0, 1), ("Ġb", 2, 3)]),
    (False, [("Ġa", 0, 1), ("Ġb", 1, 3)]),
])
def test_bytelevel_trim_offsets(tmp_path, trim, want):
    from tokenizers import decoders

    alphabet = pre_tokenizers.ByteLevel.alphabet()
    tok = _bpe(sorted(alphabet), [("Ġ", "a"), ("Ġ", "b")])
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=True)
    tok.decoder = decoders.ByteLevel()
    tok.post_processor = processors.ByteLevel(trim_offsets=trim)
    assert _both(tok, tmp_path, "a b") == want
