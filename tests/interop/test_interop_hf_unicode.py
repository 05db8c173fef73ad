"""tokenizer.json on every code point: our reader and tokenizers must agree on each of the
1,112,064 scalar values, through every normalizer and pre-tokenizer whose behaviour depends on a
Unicode table (NFC, NFD, NFKC, NFKD, StripAccents, BertNormalizer, BertPreTokenizer,
Punctuation).

tokenizers is built on tables older than ours (unicode_categories and
unicode-normalization-alignments, both Unicode 9), and its BertNormalizer's CJK list has a
range that starts 256 code points late. Before the reader used those same tables, 854 code
points got other ids than tokenizers gives and 21-496 were normalized differently, per
normalizer. Each text is ``"a" + c + "a"``, so a code point that is punctuation, padded,
dropped or stripped shows up in the pieces of a vocabulary of ``a``, ``##a`` and ``[UNK]``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

import subwords

from tokenizers import Tokenizer, models, normalizers, pre_tokenizers

BLOCK = 16_384
VOCAB = {"[UNK]": 0, "a": 1, "##a": 2}


def _code_points():
    return [c for c in range(0x110000) if not 0xD800 <= c < 0xE000]


def _tokenizer(normalizer, pre_tokenizer) -> Tokenizer:
    tok = Tokenizer(models.WordPiece(VOCAB, unk_token="[UNK]"))
    tok.normalizer = normalizer
    tok.pre_tokenizer = pre_tokenizer
    return tok


def _ours(tok: Tokenizer, tmp_path: Path):
    path = tmp_path / "tokenizer.json"
    tok.save(str(path))
    return subwords.load(path)


NORMALIZERS = {
    "NFC": normalizers.NFC,
    "NFD": normalizers.NFD,
    "NFKC": normalizers.NFKC,
    "NFKD": normalizers.NFKD,
    "NFD+StripAccents": lambda: normalizers.Sequence([normalizers.NFD(), normalizers.StripAccents()]),
    "Bert": lambda: normalizers.BertNormalizer(clean_text=True, handle_chinese_chars=True, strip_accents=True,
                                               lowercase=True),
}


@pytest.mark.parametrize("name", sorted(NORMALIZERS))
def test_every_code_point_is_normalized_as_tokenizers_does(tmp_path: Path, name: str):
    norm = NORMALIZERS[name]()
    ours = _ours(_tokenizer(norm, pre_tokenizers.WhitespaceSplit()), tmp_path)
    points, differ = _code_points(), []
    for lo in range(0, len(points), BLOCK):
        block = points[lo: lo + BLOCK]
        # one string per block: "a" c "a" items joined by spaces (a space starts a new
        # composition and is not a mark, so no item's result leaks into the next)
        text = " ".join("a" + chr(c) + "a" for c in block)
        if norm.normalize_str(text) != ours.normalize(text):
            differ += [f"U+{c:04X}" for c in block
                       if norm.normalize_str("a" + chr(c) + "a") != ours.normalize("a" + chr(c) + "a")]
    assert differ == [], (len(differ), differ[:20])


PIPELINES = {
    "Bert": lambda: (normalizers.BertNormalizer(clean_text=True, handle_chinese_chars=True, strip_accents=True,
                                                lowercase=False), pre_tokenizers.BertPreTokenizer()),
    "Punctuation": lambda: (normalizers.Sequence([normalizers.NFD(), normalizers.StripAccents()]),
                            pre_tokenizers.Sequence([pre_tokenizers.WhitespaceSplit(), pre_tokenizers.Punctuation()])),
}


@pytest.mark.parametrize("name", sorted(PIPELINES))
def test_every_code_point_gets_tokenizers_ids_and_offsets(tmp_path: Path, name: str):
    theirs = _tokenizer(*PIPELINES[name]())
    ours = _ours(theirs, tmp_path)
    points, differ = _code_points(), []
    for lo in range(0, len(points), BLOCK):
        block = points[lo: lo + BLOCK]
        # one text per block, the items joined by spaces (both pipelines split at whitespace
        # first, so its pieces and offsets are the items' in order); a block that differs is
        # then compared item by item, to name the code points
        text = " ".join("a" + chr(c) + "a" for c in block)
        want = theirs.encode(text)
        if [(i, s, e) for i, (s, e) in zip(want.ids, want.offsets)] == ours.encode_with_offsets(text):
            continue
        for c in block:
            w = theirs.encode("a" + chr(c) + "a")
            if [(i, s, e) for i, (s, e) in zip(w.ids, w.offsets)] != ours.encode_with_offsets("a" + chr(c) + "a"):
                differ.append(f"U+{c:04X}")
    assert differ == [], (len(differ), differ[:20])


def test_the_tables_that_differ_from_current_unicode(tmp_path: Path):
    """Each of the reader's old-table cases, worked out by hand from tokenizers' sources and the
    Unicode 9 and 16 character databases (ids: [UNK] 0, a 1, ##a 2)."""
    ours = _ours(_tokenizer(*PIPELINES["Bert"]()), tmp_path)
    cases = {
        # U+2B820 is a CJK ideograph (extension E), but tokenizers' list starts that range at
        # U+2B920: not padded, so "a", U+2B820, "a" is one word with no piece for it
        "\U0002B820": [0],
        "\U0002B920": [1, 0, 1],  # inside tokenizers' range: padded, a word of its own
        # U+166D CANADIAN SYLLABICS CHI SIGN was Po until Unicode 12 (now So): still punctuation
        "\u166d": [1, 0, 1],
        # U+061D ARABIC END OF TEXT MARK (Po) is new in Unicode 14: not punctuation, one word
        "\u061d": [0],
        # U+1734 HANUNOO SIGN PAMUDPOD was Mn until Unicode 14 (now Mc): stripped, "a" "##a"
        "\u1734": [1, 2],
        # U+0898 (Mn) is new in Unicode 14: not stripped by the old tables, so no piece for it
        "\u0898": [0],
    }
    assert {c: ours.encode("a" + c + "a") for c in cases} == cases
