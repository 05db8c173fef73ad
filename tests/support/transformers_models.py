"""Three tokenizers trained with ``tokenizers`` on the multilingual corpus, as transformers
loads them: a BERT-like WordPiece, a RoBERTa-like byte-level BPE and a T5-like Unigram (each a
``PreTrainedTokenizerFast`` with its special tokens named). Used by the transformers backend's
tests (tests/compat)."""

from __future__ import annotations

import tokenizers
from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers, processors, trainers
from transformers import PreTrainedTokenizerFast


def _wordpiece(train: list[str]) -> PreTrainedTokenizerFast:
    t = Tokenizer(models.WordPiece(unk_token="[UNK]"))
    t.normalizer = normalizers.BertNormalizer(lowercase=True)
    t.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    t.train_from_iterator(train, trainers.WordPieceTrainer(
        vocab_size=2000, special_tokens=["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]))
    cls, sep = t.token_to_id("[CLS]"), t.token_to_id("[SEP]")
    t.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]", pair="[CLS] $A [SEP] $B:1 [SEP]:1", special_tokens=[("[CLS]", cls), ("[SEP]", sep)])
    t.decoder = decoders.WordPiece()
    return PreTrainedTokenizerFast(tokenizer_object=t, unk_token="[UNK]", pad_token="[PAD]", cls_token="[CLS]",
                                   sep_token="[SEP]", mask_token="[MASK]")


def _byte_bpe(train: list[str]) -> PreTrainedTokenizerFast:
    t = Tokenizer(models.BPE())
    t.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    t.train_from_iterator(train, trainers.BpeTrainer(
        vocab_size=1500, special_tokens=["<s>", "<pad>", "</s>", "<mask>"],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet()))
    t.post_processor = processors.RobertaProcessing(("</s>", t.token_to_id("</s>")), ("<s>", t.token_to_id("<s>")))
    t.decoder = decoders.ByteLevel()
    return PreTrainedTokenizerFast(tokenizer_object=t, bos_token="<s>", eos_token="</s>", pad_token="<pad>",
                                   sep_token="</s>", cls_token="<s>", mask_token="<mask>")


def _unigram(train: list[str]) -> PreTrainedTokenizerFast:
    t = Tokenizer(models.Unigram())
    t.normalizer = normalizers.Sequence([normalizers.NFKC(), normalizers.Replace(tokenizers.Regex(" {2,}"), " ")])
    t.pre_tokenizer = pre_tokenizers.Metaspace()
    t.train_from_iterator(train, trainers.UnigramTrainer(
        vocab_size=6000, special_tokens=["<pad>", "</s>", "<unk>"], unk_token="<unk>"))
    eos = t.token_to_id("</s>")
    t.post_processor = processors.TemplateProcessing(single="$A </s>", pair="$A </s> $B:1 </s>:1",
                                                     special_tokens=[("</s>", eos)])
    t.decoder = decoders.Metaspace()
    return PreTrainedTokenizerFast(tokenizer_object=t, eos_token="</s>", pad_token="<pad>", unk_token="<unk>")


BUILDERS = {"wordpiece": _wordpiece, "byte_bpe": _byte_bpe, "unigram": _unigram}
