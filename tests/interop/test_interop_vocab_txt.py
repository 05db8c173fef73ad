"""BERT vocab.txt written by subwords, checked against the readers that read it: subwords.bert and
tokenizers' BertWordPieceTokenizer give the ids the trained model gives; a BERT vocabulary read
and written again is the same file; what a reader would read otherwise is refused."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import subwords
from subwords import InputError, ModelFileError
from subwords.formats import export, load

import peers
from edge_texts import EDGE_TEXTS


@pytest.fixture(scope="module")
def texts() -> tuple[str, ...]:
    return peers.multilingual_texts()


@pytest.mark.parametrize("lowercase", [True, False], ids=["uncased", "cased"])
def test_vocab_txt_reads_back_with_the_same_ids(texts, tmp_path: Path, lowercase: bool):
    import tokenizers as hf
    train, held = texts[: len(texts) * 4 // 5], texts[len(texts) * 4 // 5:]
    if lowercase:
        tok = subwords.train(list(train), preset="bert", vocab_size=3000)
    else:
        tok = subwords.train(list(train), model="wordpiece", pre_split="bert", clean_text=True, vocab_size=3000)
    export(tok, tmp_path, "vocab-txt")
    vocab = tmp_path / "vocab.txt"
    lines = vocab.read_text(encoding="utf-8").split("\n")
    assert lines[: tok.vocab_size] == tok.rows and lines[tok.vocab_size:] == ["[CLS]", "[SEP]", ""]
    ours = subwords.bert(vocab, lowercase=lowercase)
    theirs = hf.BertWordPieceTokenizer(str(vocab), lowercase=lowercase)
    for t in [*held, *EDGE_TEXTS]:
        ids = tok.encode(t)
        assert ours.encode(t, add_special_tokens=False) == ids, t
        if not any(name in t for name in ("[UNK]", "[CLS]", "[SEP]")):
            # tokenizers matches special surfaces inside the text; subwords spells them as text
            assert theirs.encode(t, add_special_tokens=False).ids == ids, t
            assert ours.encode_pieces(t, add_special_tokens=False) == theirs.encode(t, add_special_tokens=False).tokens, t
        else:
            # ... unless allowed to: then both turn them into their ids
            assert ours.encode(t, allowed_special="all", add_special_tokens=False) == \
                theirs.encode(t, add_special_tokens=False).ids, t
    assert load(vocab, lowercase=lowercase).encode("Hola, señor") == ours.encode("Hola, señor")


def test_vocab_txt_of_a_bert_vocabulary_is_the_same_file(texts, tmp_path: Path):
    import tokenizers as hf
    trainer = hf.BertWordPieceTokenizer()
    trainer.train_from_iterator(list(texts[:5000]), vocab_size=2000, show_progress=False)
    trainer.save_model(str(tmp_path))
    tok = subwords.bert(tmp_path / "vocab.txt")
    (tmp_path / "out").mkdir()
    export(tok, tmp_path / "out" / "vocab.txt", "vocab-txt")
    assert (tmp_path / "out" / "vocab.txt").read_bytes() == (tmp_path / "vocab.txt").read_bytes()


@pytest.mark.parametrize("kw, feature", [
    ({"model": "bpe"}, "bpe model"),
    ({"model": "wordpiece"}, "pre_split=None"),
    ({"model": "wordpiece", "spelling": "end"}, "end spelling"),
    ({"preset": "bert", "byte_fallback": True}, "byte fallback"),
    ({"model": "wordpiece", "pre_split": "bert"}, "clean_text=False"),
    ({"model": "wordpiece", "pre_split": "bert", "clean_text": True, "lowercase": True}, "strip_accents=False"),
    ({"preset": "bert", "unknown": "rest"}, "unknown='rest'"),
    ({"preset": "bert", "max_word_length": 50}, "max_word_length=50"),
])
def test_vocab_txt_refuses_what_readers_would_read_otherwise(tmp_path: Path, kw: dict, feature: str):
    tok = subwords.train(["Hello world, héllo there! low lower newest widest"] * 3, vocab_size=60, **kw)
    with pytest.raises(InputError, match=re.escape(feature)):
        export(tok, tmp_path / "vocab.txt", "vocab-txt")
    assert not (tmp_path / "vocab.txt").exists()


def test_vocab_txt_refuses_a_row_that_starts_a_word_with_the_mark(tmp_path: Path):
    # Trained without the BERT pre-split, "##word" is a word of its own and its piece a
    # word-first row; a vocab.txt line "##word" would be read as the continuation of "word".
    tok = subwords.train(["##word a##b ## ##word", "x ## y ##word"] * 3, model="wordpiece", vocab_size=60)
    with pytest.raises(InputError, match=r"the row '##\w*' \(id \d+\) starts a word") as e:
        export(tok, tmp_path / "vocab.txt", "vocab-txt")
    # the row named is the word-first one: encoding its piece as a word gives exactly that id
    piece, wid = re.search(r"the row '(##\w*)' \(id (\d+)\)", str(e.value)).groups()
    assert tok.encode(piece) == [int(wid)]
    assert not (tmp_path / "vocab.txt").exists()
    # BERT's own pre-split cuts every "#" off, so the same corpus exports and reads back
    bert = subwords.train(["##word a##b ## ##word", "x ## y ##word"] * 3, preset="bert", vocab_size=60)
    export(bert, tmp_path / "vocab.txt", "vocab-txt")
    back = subwords.bert(tmp_path / "vocab.txt", lowercase=True)
    for text in ["##word a##b ## ##word", "x ## y ##word"]:
        assert back.encode(text, add_special_tokens=False) == bert.encode(text)


def _large_vocab_txt(path: Path, last: str = "w4946") -> None:
    """5,003 lines, enough for the trie to be built from the lines on a second thread while the
    rows are read (crates/subwords-py/src/lib.rs, ``from_vocab_txt``): [PAD] [UNK] [CLS] [SEP], a..z,
    ##a..##z, then w0000, w0001, ..., w4946, the last line replaced by ``last``."""
    lines = ["[PAD]", "[UNK]", "[CLS]", "[SEP]"] + [chr(c) for c in range(97, 123)] + ["##" + chr(c) for c in range(97, 123)]
    lines += [f"w{n:04}" for n in range(5003 - len(lines))]
    lines[-1] = last
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def test_a_large_vocab_txt_on_the_trie_thread(tmp_path: Path):
    path = tmp_path / "vocab.txt"
    _large_vocab_txt(path)
    tok = subwords.bert(path)
    # by construction: [PAD] 0, [UNK] 1, [CLS] 2, [SEP] 3, a 4 .. z 29, ##a 30 .. ##z 55, then
    # w0000 at 56, so w1234 is 1290 and the last line, w4946, 5002
    assert tok.encode("w1234 bad w4946") == [2, 1290, 5, 30, 33, 5002, 3]


@pytest.mark.parametrize("last, message", [
    ("w 1", "line 5003: 'w 1' is not a piece"),
    ("", "line 5003: '' is not a piece"),
])
def test_a_large_vocab_txt_refused_while_the_trie_builds(tmp_path: Path, last: str, message: str):
    path = tmp_path / "vocab.txt"
    _large_vocab_txt(path, last)
    with pytest.raises(ModelFileError, match=re.escape(message)):
        subwords.bert(path)


@pytest.mark.parametrize("lines, where", [(5003, 3), (5003, 5000), (10, 3)])
def test_a_vocab_txt_that_is_not_utf8_names_its_line(tmp_path: Path, lines: int, where: int):
    """The core reads the file's bytes (its trie starts on them at once, for 4,096 lines or
    more) and checks their UTF-8 beside it: a byte 0xE9 alone (Latin-1's é) on line ``where`` of
    the first ``lines`` lines of ``_large_vocab_txt`` is refused with that line's number."""
    path = tmp_path / "vocab.txt"
    _large_vocab_txt(path)
    rows = path.read_bytes().split(b"\n")[:lines]
    rows[where - 1] = b"caf\xe9"
    path.write_bytes(b"\n".join(rows) + b"\n")
    with pytest.raises(ModelFileError, match=re.escape(f"line {where} is not UTF-8 text")):
        subwords.bert(path)
