"""Small tokenizer.json pipelines built and trained by ``tokenizers`` itself, for the interop
tests that compare subwords' reader with it (nothing committed). Each takes the training texts."""

from __future__ import annotations

from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers, trainers


def bytelevel_bpe(train: list[str], size: int, specials: list[str], add_prefix_space: bool) -> Tokenizer:
    """GPT-2's shape: byte-level BPE, ByteLevel pre-tokenizer and decoder."""
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=add_prefix_space)
    tok.decoder = decoders.ByteLevel()
    tok.train_from_iterator(train, trainers.BpeTrainer(vocab_size=size, special_tokens=specials, show_progress=False,
                                                       initial_alphabet=pre_tokenizers.ByteLevel.alphabet()))
    return tok


def llama_bpe(train: list[str], size: int, specials: list[str], byte_rows: int, limit_alphabet: int) -> Tokenizer:
    """Llama's shape: BPE with ``unk_token``, ``fuse_unk`` and byte fallback (rows ``<0x00>`` up
    to ``byte_rows``), "▁" for spaces by normalizers, the decoder chain that undoes them."""
    tok = Tokenizer(models.BPE(byte_fallback=True, fuse_unk=True, unk_token="<unk>"))
    tok.normalizer = normalizers.Sequence([normalizers.Prepend("▁"), normalizers.Replace(" ", "▁")])
    tok.decoder = decoders.Sequence([decoders.Replace("▁", " "), decoders.ByteFallback(), decoders.Fuse(),
                                     decoders.Strip(" ", 1, 0)])
    tok.train_from_iterator(train, trainers.BpeTrainer(
        vocab_size=size, show_progress=False, limit_alphabet=limit_alphabet,
        special_tokens=["<unk>"] + specials + [f"<0x{b:02X}>" for b in range(byte_rows)]))
    return tok


def metaspace_unigram(train: list[str], normalizer: normalizers.Normalizer, specials: list[str]) -> Tokenizer:
    """A Unigram trained by tokenizers behind Metaspace (1,500 pieces on 800 texts)."""
    tok = Tokenizer(models.Unigram())
    tok.normalizer = normalizer
    tok.pre_tokenizer = pre_tokenizers.Metaspace()
    tok.decoder = decoders.Metaspace()
    tok.train_from_iterator(train[:800], trainers.UnigramTrainer(vocab_size=1500, unk_token="<unk>", show_progress=False,
                                                                 special_tokens=["<unk>"] + specials))
    return tok
