"""Added tokens with each flag (``lstrip``, ``rstrip``, ``single_word``, ``normalized``, ``special``)
in tokenizer.json files built here by ``tokenizers`` itself, against ``tokenizers``: the same
ids, the same tokens (tokenizers' ``Encoding.tokens``: the matched text, whitespace it swallowed
included, normalized for a normalized token), and the same decoded text, from the ids and from
the tokens.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from subwords.formats import load

import hf_files
import peers

from tokenizers import AddedToken, Tokenizer, decoders, models, normalizers, pre_tokenizers, trainers  # noqa: E402

#: Texts that put the token "ing" (and "<mask>") at the start, the end, between spaces, tabs,
#: newlines and ideographic spaces, inside words, next to punctuation, in capitals (for the
#: normalized flag: the Lowercase normalizer makes "ING" the content) and twice in a row.
TEXTS = [
    "ing", " ing", "ing ", "  ing  ", "a ing b", "aing b", "a ingb", "xingx", "sing along",
    "\ting\n", "\u3000ing\u3000", "ing,ing", "(ing)", "ING", " ING ", "IngING ing", "inging",
    "ing  ing", "walking running", "<mask>", " <mask> ", "a<mask>b", "a  <mask>  b", "<MASK>",
    "ing<mask>ing", " \n ing \n ", "é ing é", "中ing中", "😀 ing 😀", "", " ", "ingé", "_ing_",
]

#: The flags each case sets (the others off): each alone, and mixed.
FLAGS = ["plain", "lstrip", "rstrip", "lstrip rstrip", "single_word", "lstrip rstrip single_word", "normalized",
         "lstrip rstrip normalized", "single_word normalized", "lstrip special", "rstrip normalized special",
         "lstrip rstrip single_word special"]


def _train() -> list[str]:
    return list(peers.multilingual_texts(limit_bytes=200_000))


def _bytelevel() -> Tokenizer:
    return hf_files.bytelevel_bpe(_train(), 800, [], add_prefix_space=False)


def _wordpiece() -> Tokenizer:
    tok = Tokenizer(models.WordPiece(unk_token="[UNK]"))
    tok.normalizer = normalizers.Lowercase()
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tok.decoder = decoders.WordPiece()
    tok.train_from_iterator(_train(), trainers.WordPieceTrainer(vocab_size=800, show_progress=False,
                                                                special_tokens=["[UNK]"], limit_alphabet=200))
    return tok


def _unigram() -> Tokenizer:
    return hf_files.metaspace_unigram(_train(), normalizers.Lowercase(), [])


def _llama() -> Tokenizer:
    return hf_files.llama_bpe(_train(), 700, [], byte_rows=256, limit_alphabet=100)


BASES = {"bytelevel": _bytelevel, "wordpiece": _wordpiece, "unigram": _unigram, "llama": _llama}


@pytest.fixture(scope="module", params=sorted(BASES))
def base(request, tmp_path_factory) -> tuple[str, Path]:
    path = tmp_path_factory.mktemp("added") / f"{request.param}.json"
    BASES[request.param]().save(str(path))
    return request.param, path


def _tokens_decoded(ref: Tokenizer, tokens: list[str]) -> str:
    return ref.decoder.decode(tokens)


@pytest.mark.parametrize("flags", FLAGS)
def test_added_token_flags_match_tokenizers(base, flags, tmp_path):
    name, path = base
    lstrip, rstrip, single_word, normalized, special = (f in flags.split() for f in
                                                        ("lstrip", "rstrip", "single_word", "normalized", "special"))
    ref = Tokenizer.from_file(str(path))
    token = AddedToken("ing", lstrip=lstrip, rstrip=rstrip, single_word=single_word, normalized=normalized,
                       special=special)
    # a second token with the opposite strip flags, always special (RoBERTa's "<mask>" shape)
    mask = AddedToken("<mask>", lstrip=not lstrip, rstrip=not rstrip, normalized=False, special=True)
    if special:
        ref.add_special_tokens([token, mask])
    else:
        ref.add_tokens([token])
        ref.add_special_tokens([mask])
    file = tmp_path / "tokenizer.json"
    ref.save(str(file))
    ref = Tokenizer.from_file(str(file))
    ours = load(file)
    # tokenizers' decode skips an id whose token is a special token's content
    specials = {t.content for t in ref.get_added_tokens_decoder().values() if t.special}
    for text in TEXTS:
        e = ref.encode(text, add_special_tokens=False)
        where = f"{name} {flags} {text!r}"
        assert ours.encode(text, allowed_special="all") == e.ids, where
        pieces = ours.encode_pieces(text, allowed_special="all")
        assert pieces == e.tokens, where
        assert ours.decode(e.ids) == ref.decode(e.ids), where
        assert ours.decode(e.ids, skip_special_tokens=False) == ref.decode(e.ids, skip_special_tokens=False), where
        # the tokens through the decoder, as tokenizers' decoder reads them
        assert ours.decode_pieces(pieces, skip_special_tokens=False) == _tokens_decoded(ref, e.tokens), where
        # and with the special tokens left out: a token that is a special's text (the whitespace
        # it took aside) where tokenizers' decode skips that id
        kept = [t for t, i in zip(e.tokens, e.ids) if not (ref.id_to_token(i) in specials
                                                          and t.strip() == ref.id_to_token(i))]
        assert ours.decode_pieces(pieces) == _tokens_decoded(ref, kept), where


def test_unknown_characters_are_unigram_tokens_own_text(tmp_path):
    """tokenizers' Unigram gives an unknown id the characters it covers as its token (with and
    without byte_fallback, where the bytes lack a row); BPE and WordPiece give the unk token."""
    vocab = [("<unk>", 0.0), ("▁", -1.0), ("a", -2.0), ("b", -2.0), ("▁ab", -1.5), ("<0x41>", -9.0)]
    for byte_fallback in (False, True):
        ref = Tokenizer(models.Unigram(vocab, unk_id=0, byte_fallback=byte_fallback))
        ref.pre_tokenizer = pre_tokenizers.Metaspace()
        ref.decoder = decoders.Metaspace()
        file = tmp_path / f"u{byte_fallback}.json"
        ref.save(str(file))
        ours = load(file)
        for text in ["ab ï ab", "a中文b", "ïï", "A", "AA a", "😀b"]:
            e = ref.encode(text, add_special_tokens=False)
            assert ours.encode(text) == e.ids, (byte_fallback, text)
            assert ours.encode_pieces(text) == e.tokens, (byte_fallback, text)
            assert ours.decode_pieces(e.tokens) == ref.decoder.decode(e.tokens), (byte_fallback, text)
    # by hand: "ab ï ab" is "▁ab" "▁" "ï" "▁ab" (the unknown ï keeps its own text, id 0); "A"
    # with byte fallback is its byte row <0x41> (id 5), without it the unknown "A"
    ref_plain = load(tmp_path / "uFalse.json")
    assert ref_plain.encode_pieces("ab ï ab") == ["▁ab", "▁", "ï", "▁ab"]
    assert ref_plain.encode("ab ï ab") == [4, 1, 0, 4]
    assert ref_plain.encode_pieces("A") == ["▁", "A"]
    assert load(tmp_path / "uTrue.json").encode_pieces("A") == ["▁", "<0x41>"]
