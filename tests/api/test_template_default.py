"""``add_special_tokens``'s default, ``None``: what the file's own library does when not told
(docs/SPECIALS.md). Each expectation is the original library's own call with its defaults."""

from __future__ import annotations

import io
import subprocess
import sys

import pytest
import sentencepiece as spm
from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers, processors, trainers

import subwords
from subwords.errors import InputError

TEXTS = ["the cat sat on the mat", "hello world, hello there", "a lower newest widest lowest newer wider"] * 30


@pytest.fixture(scope="module")
def hf_path(tmp_path_factory):
    tok = Tokenizer(models.WordPiece(unk_token="[UNK]"))
    tok.normalizer = normalizers.BertNormalizer(lowercase=True)
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tok.decoder = decoders.WordPiece()
    tok.post_processor = processors.BertProcessing(("[SEP]", 3), ("[CLS]", 2))
    tok.train_from_iterator(TEXTS, trainers.WordPieceTrainer(vocab_size=200, show_progress=False,
                                                             special_tokens=["[PAD]", "[UNK]", "[CLS]", "[SEP]"]))
    path = tmp_path_factory.mktemp("hf") / "tokenizer.json"
    tok.save(str(path))
    return path


def test_a_tokenizer_json_applies_its_post_processor_as_tokenizers_does(hf_path):
    ref = Tokenizer.from_file(str(hf_path))
    ours = subwords.load(hf_path)
    for t in ("the cat sat", "hello there", ""):
        assert ours.encode(t) == ref.encode(t).ids  # tokenizers' default: add_special_tokens=True
        assert ours.encode(t)[0] == 2 and ours.encode(t)[-1] == 3  # [CLS] ... [SEP]
        assert ours.encode(t, add_special_tokens=False) == ref.encode(t, add_special_tokens=False).ids
        assert ours.encode(t, pair="the mat") == ref.encode(t, "the mat").ids
    assert ours.encode_batch(["the cat", "hello"]) == [e.ids for e in ref.encode_batch(["the cat", "hello"])]
    assert ours.encode_array(["the cat"]).ids.tolist() == ref.encode("the cat").ids
    assert ours.encode_pieces("the cat") == ref.encode("the cat").tokens


def test_a_sentencepiece_model_adds_nothing_as_sentencepiece_does(tmp_path):
    buf = io.BytesIO()
    spm.SentencePieceTrainer.train(sentence_iterator=iter(TEXTS), model_writer=buf, vocab_size=25,
                                   minloglevel=2)
    (tmp_path / "m.model").write_bytes(buf.getvalue())
    ref = spm.SentencePieceProcessor(model_file=str(tmp_path / "m.model"))
    ours = subwords.load(tmp_path / "m.model")
    for t in ("the cat sat", "hello there"):
        assert ours.encode(t) == ref.encode(t)  # sentencepiece's default: no <s>, no </s>
        assert ours.encode(t, add_special_tokens=True) == ref.encode(t, add_bos=True, add_eos=True)
    assert ours.encode_batch(["the cat"]) == [ref.encode("the cat")]


def test_our_bert_vocabulary_puts_its_template_on_by_default(tmp_path):
    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "the", "cat", "##s"]
    (tmp_path / "vocab.txt").write_text("\n".join(vocab) + "\n", encoding="utf-8")
    tok = subwords.bert(tmp_path / "vocab.txt")
    # transformers' BertTokenizer default: [CLS] the cat ##s [SEP]
    assert tok.encode("the cats") == [2, 4, 5, 6, 3]
    assert tok.encode("the cats", add_special_tokens=None) == [2, 4, 5, 6, 3]
    assert tok.encode("the cats", add_special_tokens=False) == [4, 5, 6]
    assert tok.encode_batch(["the cats"]) == [[2, 4, 5, 6, 3]]
    assert tok.encode("the cats", segmenter=None, dropout=None) == [2, 4, 5, 6, 3]


def test_anything_but_a_truth_value_or_none_is_refused(hf_path):
    for tok in (subwords.load(hf_path), subwords.train(TEXTS, vocab_size=40)):
        with pytest.raises(InputError, match="add_special_tokens must be True, False or None"):
            tok.encode("the cat", add_special_tokens="yes")


def test_the_command_line_follows_the_rule(hf_path):
    ref = Tokenizer.from_file(str(hf_path))
    out = subprocess.run([sys.executable, "-m", "subwords", "encode", "-m", str(hf_path), "--ids"],
                         input="the cat sat\n", capture_output=True, text=True, check=True).stdout
    assert [int(x) for x in out.split()] == ref.encode("the cat sat").ids
