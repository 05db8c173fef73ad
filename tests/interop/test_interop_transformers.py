"""The hand-off to transformers: subwords models exported to tokenizer.json load in
``transformers.PreTrainedTokenizerFast`` (and through ``tok.to_transformers()``) and give
subwords' ids on the multilingual corpus, for every family the export takes; Unigram exports
give our ids in ``tokenizers`` itself. The models are trained here on a fifteenth of the corpus and
compared on all of it, so unknown characters occur."""

from __future__ import annotations

import pytest

import subwords
from subwords.formats import export

import peers
from unigram_ties import assert_same_ids, fused_unknowns

import tokenizers
from transformers import PreTrainedTokenizerFast

FAMILIES = {
    "bpe_end": dict(model="bpe", spelling="end", vocab_size=1500, alphabet_size=300),
    "bpe_front": dict(model="bpe", spelling="front", vocab_size=1500, alphabet_size=300),
    "bpe_front_byte_fallback": dict(model="bpe", spelling="front", byte_fallback=True, vocab_size=1500,
                                    alphabet_size=300),
    "byte_level": dict(model="bpe", spelling="bytes", pre_split="gpt2", vocab_size=800),
    "wordpiece": dict(model="wordpiece", vocab_size=1500, alphabet_size=300),
    "unigram": dict(model="unigram", spelling="front", vocab_size=1500, alphabet_size=300),
    "unigram_byte_fallback": dict(model="unigram", spelling="front", byte_fallback=True, vocab_size=1500,
                                  alphabet_size=300),
}


@pytest.fixture(scope="module")
def texts() -> list[str]:
    return list(peers.multilingual_texts())


@pytest.fixture(scope="module")
def trained(texts: list[str]) -> dict[str, subwords.SubwordsTokenizer]:
    return {name: subwords.train(texts[::15], **kw) for name, kw in FAMILIES.items()}


def encodable(tok: subwords.SubwordsTokenizer, texts: list[str]) -> list[str]:
    """The texts subwords encodes: on the ``end`` and ``continuation`` spellings a word that
    holds the mark (``##`` in the corpus) is refused (InputError), so those few are left out."""
    sp = tok.spelling
    if sp["scheme"] not in ("end", "continuation"):
        return texts
    kept = [t for t in texts if sp["mark"] not in t]
    assert len(texts) - len(kept) < 20
    return kept


def expected(name: str, tok: subwords.SubwordsTokenizer, ours: list[list[int]]) -> list[list[int]]:
    if name == "unigram":
        unk = tok.piece_to_id("[UNK]")
        return [fused_unknowns(ids, unk) for ids in ours]
    return ours


@pytest.mark.parametrize("name", sorted(FAMILIES))
def test_exported_file_loads_in_transformers_with_our_ids(name, trained, texts, tmp_path):
    tok = trained[name]
    texts = encodable(tok, texts)
    export(tok, tmp_path / "tokenizer.json", "hf")
    fast = PreTrainedTokenizerFast(tokenizer_file=str(tmp_path / "tokenizer.json"))
    ours = tok.encode_batch(texts)
    got = fast(texts, add_special_tokens=True)["input_ids"]
    ties = assert_same_ids(name, tok, expected(name, tok, ours), got)
    assert ties < len(texts) // 100  # measured: 255 of 39,373 texts (0.65%) for both Unigram models
    # to_transformers() is the same tokenizer, with the roles set
    handed = tok.to_transformers()
    assert handed(texts[::5], add_special_tokens=True)["input_ids"] == got[::5]
    if "[UNK]" in tok.special_tokens:
        assert handed.unk_token == "[UNK]" and handed.unk_token_id == tok.piece_to_id("[UNK]")


def test_unknown_runs_really_occur_in_the_unigram_comparison(trained, texts):
    """The fused-unknown allowance above is exercised: some texts of the corpus have a run of
    two or more unknown characters, and in all the others the ids are compared unchanged."""
    tok = trained["unigram"]
    unk = tok.piece_to_id("[UNK]")
    runs = sum(1 for ids in tok.encode_batch(texts) if fused_unknowns(ids, unk) != ids)
    assert 0 < runs < len(texts) // 10


@pytest.mark.parametrize("name", ["unigram", "unigram_byte_fallback"])
def test_unigram_export_gives_our_ids_in_tokenizers(name, trained, texts, tmp_path):
    tok = trained[name]
    export(tok, tmp_path / "tokenizer.json", "hf")
    ref = tokenizers.Tokenizer.from_file(str(tmp_path / "tokenizer.json"))
    ours = tok.encode_batch(texts)
    got = [e.ids for e in ref.encode_batch(texts, add_special_tokens=False)]
    ties = assert_same_ids(name, tok, expected(name, tok, ours), got)
    assert 0 < ties < len(texts) // 100  # the tie rules do differ on real text (255 of 39,373 texts here)
    for ids in ours[::50]:
        assert ref.decode(ids, skip_special_tokens=False) == tok.decode(ids)  # [UNK] is a special added token


def test_unigram_export_byte_fallback_has_no_unknown(trained, texts):
    tok = trained["unigram_byte_fallback"]
    unk = tok.piece_to_id("[UNK]")
    assert all(unk not in ids for ids in tok.encode_batch(texts))
    assert any(tok.kinds[i] == "byte" for ids in tok.encode_batch(texts) for i in ids)


def test_unigram_export_refuses_what_tokenizers_cannot_express(texts, tmp_path):
    tok = subwords.train(texts[::40], model="unigram", spelling="end", vocab_size=400, alphabet_size=150)
    with pytest.raises(subwords.InputError, match="Unigram model on the end spelling"):
        export(tok, tmp_path / "t.json", "hf")
    assert not (tmp_path / "t.json").exists()


def test_wordpiece_template_and_roles_reach_transformers(tmp_path):
    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "hello", "world", "##s", "un", "##aff", "##able", "!"]
    (tmp_path / "vocab.txt").write_text("\n".join(vocab) + "\n", encoding="utf-8")
    tok = subwords.bert(tmp_path / "vocab.txt")
    fast = tok.to_transformers()
    for text in ["Hello worlds!", "unaffable", "", "zzz hello"]:
        assert fast(text)["input_ids"] == tok.encode(text)
    assert fast("hello")["input_ids"] == [2, 5, 3]  # [CLS] hello [SEP]: ids 2, 5, 3 of the list above
    roles = {r: getattr(fast, r) for r in ("unk_token", "cls_token", "sep_token", "pad_token", "mask_token")}
    assert roles == {"unk_token": "[UNK]", "cls_token": "[CLS]", "sep_token": "[SEP]", "pad_token": "[PAD]",
                     "mask_token": "[MASK]"}
    assert fast.pad_token_id == 0 and fast.mask_token_id == 4
    padded = fast(["hello", "hello worlds"], padding=True)["input_ids"]
    assert padded == [[2, 5, 3, 0, 0], [2, 5, 6, 7, 3]]


def test_to_transformers_without_transformers_names_the_extra(monkeypatch, trained):
    import builtins

    real = builtins.__import__

    def no_transformers(name, *args, **kw):
        if name == "transformers" or name.startswith("transformers."):
            raise ImportError("no transformers here")
        return real(name, *args, **kw)

    monkeypatch.setattr(builtins, "__import__", no_transformers)
    with pytest.raises(subwords.SubwordsError, match=r"subwords\[transformers\]"):
        trained["bpe_front"].to_transformers()


SPECIALS = dict(special_tokens=["<s>", "</s>", "<pad>", "[UNK]"], bos_token="<s>", eos_token="</s>",
                pad_token="<pad>")


@pytest.mark.parametrize("name", ["bpe_front", "byte_level", "wordpiece", "unigram"])
def test_specials_reach_transformers_with_their_ids_and_roles(name, texts, tmp_path):
    # the goal: "ids identical to ours on the multilingual corpus, for BPE, byte-level, WordPiece
    # and Unigram exports, with specials". The specials are rows 0..3 in the order given; in
    # transformers a special token always matches, so ours are compared with every special allowed.
    specials = dict(SPECIALS)
    if name == "byte_level":  # every text is spelled in bytes: no unknown row to place
        specials["special_tokens"] = ["<s>", "</s>", "<pad>", "<|endoftext|>"]
    tok = subwords.train(texts[::15], **FAMILIES[name], **specials)
    assert [tok.id_to_piece(i) for i in range(4)] == specials["special_tokens"]
    sample = encodable(tok, texts[::7])
    marked = [f"<s>{t}</s>" if k % 2 else f"{t} <pad><pad>" for k, t in enumerate(sample)]
    ours = tok.encode_batch(marked, allowed_special="all")
    assert all(ids[0] == 0 and ids[-1] == 1 for ids in ours[1::2])  # <s> ... </s> kept whole
    export(tok, tmp_path / "tokenizer.json", "hf")
    fast = PreTrainedTokenizerFast(tokenizer_file=str(tmp_path / "tokenizer.json"))
    got = fast(marked, add_special_tokens=True)["input_ids"]
    ties = assert_same_ids(name, tok, expected(name, tok, ours), got)
    assert ties < len(marked) // 100
    handed = tok.to_transformers()
    assert (handed.bos_token, handed.eos_token, handed.pad_token) == ("<s>", "</s>", "<pad>")
    assert (handed.bos_token_id, handed.eos_token_id, handed.pad_token_id) == (0, 1, 2)
    if name != "byte_level":
        assert (handed.unk_token, handed.unk_token_id) == ("[UNK]", 3)
    assert handed(marked[:50], add_special_tokens=True)["input_ids"] == got[:50]
    padded = handed(["<s>", "<s></s>"], padding=True)["input_ids"]
    assert padded == [[0, 2], [0, 1]]  # padded with <pad>, id 2
