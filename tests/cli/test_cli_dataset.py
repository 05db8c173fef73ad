"""Encoding a dataset for training: ``subwords encode --output FILE.npy|FILE.bin`` and
``encode_batch(..., as_numpy=True)`` / ``encode_array``. The arrays read back (with numpy) to
exactly ``encode_batch``'s ids; a dtype too small for the vocabulary is refused with nothing
written; the layout is docs/HANDOFF.md's."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import subwords
from subwords.formats import load

import peers

FOUR = {"low": 5, "lower": 2, "newest": 6, "widest": 3}


def run(*args: str, cwd: Path, input: str | None = None, ok: bool = True) -> subprocess.CompletedProcess:
    p = subprocess.run([sys.executable, "-m", "subwords", *args], input=None if input is None else input.encode("utf-8"),
                       capture_output=True, cwd=cwd, timeout=300, env={**os.environ, "PYTHONIOENCODING": "utf-8"})
    out = subprocess.CompletedProcess(p.args, p.returncode, p.stdout.decode("utf-8"), p.stderr.decode("utf-8"))
    assert "Traceback" not in out.stderr, out.stderr
    assert (out.returncode == 0) == ok, out.stderr
    return out


@pytest.fixture(scope="module")
def texts() -> list[str]:
    return list(peers.multilingual_texts())[:4000]


@pytest.fixture(scope="module")
def model(texts, tmp_path_factory) -> tuple[subwords.SubwordsTokenizer, Path]:
    tok = subwords.train(texts[::4], model="bpe", spelling="front", vocab_size=1200, alphabet_size=300)
    path = tmp_path_factory.mktemp("model") / "model.json"
    tok.save(path)
    return tok, path


def docs_of(ids: np.ndarray, offsets: np.ndarray) -> list[list[int]]:
    assert offsets[0] == 0 and offsets[-1] == len(ids) and np.all(np.diff(offsets.astype(np.int64)) >= 0)
    return [ids[a:b].tolist() for a, b in zip(offsets[:-1], offsets[1:])]


# -- the Python face ------------------------------------------------------------------------------

def test_as_numpy_gives_encode_batch_ids(model, texts):
    tok, _ = model
    want = tok.encode_batch(texts)
    arr = tok.encode_batch(texts, as_numpy=True)
    assert isinstance(arr, subwords.IdArray)
    assert arr.ids.dtype == np.dtype("<u4") and arr.offsets.dtype == np.dtype("<u8")
    assert len(arr) == len(texts) and arr.tolist() == want
    assert docs_of(arr.ids, arr.offsets) == want
    assert arr[7].tolist() == want[7] and arr[-1].tolist() == want[-1]
    with pytest.raises(IndexError):
        arr[len(texts)]


@pytest.mark.parametrize("threads", [1, 2])
def test_encode_array_dtype_and_eos(model, texts, threads):
    tok, _ = model
    eos = tok.piece_to_id("[UNK]")
    arr = tok.encode_array(texts, dtype="uint16", eos=eos, threads=threads)
    assert arr.ids.dtype == np.dtype("<u2")
    assert arr.tolist() == [ids + [eos] for ids in tok.encode_batch(texts)]


def test_encode_array_keeps_the_template(tmp_path):
    (tmp_path / "vocab.txt").write_text("[PAD]\n[UNK]\n[CLS]\n[SEP]\nhello\nworld\n##s\n", encoding="utf-8")
    tok = subwords.bert(tmp_path / "vocab.txt")
    arr = tok.encode_array(["hello worlds", "", "world"], eos=0)
    # [CLS]=2 hello=4 world=5 ##s=6 [SEP]=3, then the eos [PAD]=0
    assert arr.tolist() == [[2, 4, 5, 6, 3, 0], [2, 3, 0], [2, 5, 3, 0]]
    assert arr.tolist() == [ids + [0] for ids in tok.encode_batch(["hello worlds", "", "world"])]


def test_empty_batch(model):
    tok, _ = model
    arr = tok.encode_array([])
    assert len(arr) == 0 and arr.ids.size == 0 and arr.offsets.tolist() == [0]


def test_encode_array_refuses_bad_arguments(model):
    tok, _ = model
    with pytest.raises(subwords.OptionError, match="uint16"):
        tok.encode_array(["a"], dtype="int8")
    with pytest.raises(subwords.UnknownPieceError):
        tok.encode_array(["a"], eos=tok.vocab_size)


def big_bert(tmp_path: Path) -> Path:
    """A BERT vocab.txt of 70,005 rows: more ids than uint16 holds (65,536)."""
    words = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"] + [f"w{i}" for i in range(70_000)]
    path = tmp_path / "vocab.txt"
    path.write_text("\n".join(words) + "\n", encoding="utf-8")
    return path


def test_uint16_refused_for_a_large_vocabulary(tmp_path):
    tok = subwords.bert(big_bert(tmp_path))
    assert tok.vocab_size == 70_005
    with pytest.raises(subwords.OptionError, match="uint32"):
        tok.encode_array(["w1 w69999"], dtype="uint16")
    # uint32 holds them: [CLS] w1 w69999 [SEP] (rows 2, 5+1, 5+69999, 3)
    assert tok.encode_array(["w1 w69999"]).tolist() == [[2, 6, 70_004, 3]]


def test_loaded_families_fill_arrays_too(tmp_path, texts):
    tok = subwords.train(texts[::8], model="bpe", spelling="bytes", pre_split="gpt2", vocab_size=600)
    subwords.formats.export(tok, tmp_path / "tokenizer.json", "hf")
    hf = load(tmp_path / "tokenizer.json")
    want = hf.encode_batch(texts)
    assert want == tok.encode_batch(texts)
    assert hf.encode_array(texts, dtype="uint16").tolist() == want
    assert hf.encode_array(texts, eos=5).tolist() == [ids + [5] for ids in want]


@pytest.mark.parametrize("fmt, name", [("tiktoken", "t.tiktoken"), ("sentencepiece", "t.model")])
def test_other_loaded_families_fill_arrays(tmp_path, texts, fmt, name):
    """tiktoken files fill the buffer in the core; a SentencePiece .model goes through its lists."""
    kw = dict(spelling="bytes", pre_split="gpt2", vocab_size=600) if fmt == "tiktoken" else \
        dict(spelling="front", byte_fallback=True, vocab_size=600, alphabet_size=200)
    tok = subwords.train(texts[::8], model="bpe", **kw)
    subwords.formats.export(tok, tmp_path / name, fmt)
    back = load(tmp_path / name, pattern="gpt2") if fmt == "tiktoken" else load(tmp_path / name)
    want = back.encode_batch(texts)
    assert back.encode_array(texts, dtype="uint16").tolist() == want
    assert back.encode_array(texts, eos=3, threads=1).tolist() == [ids + [3] for ids in want]


# -- the command line -----------------------------------------------------------------------------

def test_npy_dataset_reads_back_to_encode_batch(model, texts, tmp_path):
    tok, path = model
    data = tmp_path / "corpus.jsonl"
    data.write_text("".join(json.dumps({"text": t}, ensure_ascii=False) + "\n" for t in texts), encoding="utf-8")
    out = run("encode", "-m", str(path), str(data), "--output", "train.npy", "--dtype", "uint16", "--eos", "[UNK]",
              "--threads", "2", cwd=tmp_path)
    assert "wrote" in out.stderr and out.stdout == ""
    ids = np.load(tmp_path / "train.npy", mmap_mode="r")
    offsets = np.load(tmp_path / "train.offsets.npy")
    assert ids.dtype == np.dtype("<u2") and offsets.dtype == np.dtype("<u8")
    eos = tok.piece_to_id("[UNK]")
    assert docs_of(ids, offsets) == [x + [eos] for x in tok.encode_batch(texts)]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["corpus.jsonl", "train.npy", "train.offsets.npy"]


def test_bin_dataset_and_more_batches_than_one(model, texts, tmp_path):
    tok, path = model
    many = texts * 3  # 12,000 records: two batches of 8192 and the rest
    (tmp_path / "c.txt").write_text("\n".join(many) + "\n", encoding="utf-8")
    run("encode", "-m", str(path), "c.txt", "--output", "train.bin", cwd=tmp_path)
    ids = np.fromfile(tmp_path / "train.bin", dtype="<u4")
    offsets = np.load(tmp_path / "train.offsets.npy")
    assert len(offsets) == len(many) + 1
    assert docs_of(ids, offsets) == tok.encode_batch(many)


def test_stdin_dataset(model, tmp_path):
    tok, path = model
    run("encode", "-m", str(path), "--output", "d.npy", cwd=tmp_path, input="hello world\n\nnewest\n")
    ids, offsets = np.load(tmp_path / "d.npy"), np.load(tmp_path / "d.offsets.npy")
    assert docs_of(ids, offsets) == tok.encode_batch(["hello world", "", "newest"])


def test_dtype_too_small_writes_nothing(tmp_path):
    vocab = big_bert(tmp_path)
    (tmp_path / "c.txt").write_text("w1 w2\nw69999\n", encoding="utf-8")
    out = run("encode", "-m", str(vocab), "c.txt", "--output", "d.npy", "--dtype", "uint16", cwd=tmp_path, ok=False)
    assert "uint16" in out.stderr and "uint32" in out.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["c.txt", "vocab.txt"]
    run("encode", "-m", str(vocab), "c.txt", "--output", "d.npy", "--dtype", "uint32", cwd=tmp_path)
    assert np.load(tmp_path / "d.npy").tolist() == [2, 6, 7, 3, 2, 70_004, 3]  # [CLS] w1 w2 [SEP] [CLS] w69999 [SEP]


def test_a_bad_record_midway_writes_nothing(model, tmp_path):
    _, path = model
    lines = [json.dumps({"text": f"text {i}"}) for i in range(9000)] + ["{not json"]
    (tmp_path / "c.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    out = run("encode", "-m", str(path), "c.jsonl", "--output", "d.npy", cwd=tmp_path, ok=False)
    assert "c.jsonl" in out.stderr and "9001" in out.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["c.jsonl"]


@pytest.mark.parametrize("args, message", [
    (["--output", "d.txt"], "NAME.npy"),
    (["--dtype", "uint16"], "--output"),
    (["--eos", "[UNK]"], "--output"),
    (["--output", "d.npy", "--ids"], "--ids"),
    (["--output", "d.npy", "--eos", "no-such-piece"], "no-such-piece"),
    (["--output", "d.npy", "--dtype", "int8"], "invalid choice"),
])
def test_bad_dataset_options(model, tmp_path, args, message):
    _, path = model
    (tmp_path / "c.txt").write_text("hello\n", encoding="utf-8")
    out = run("encode", "-m", str(path), "c.txt", *args, cwd=tmp_path, ok=False)
    assert message in out.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["c.txt"]


def test_encode_without_output_is_unchanged(model, tmp_path):
    tok, path = model
    out = run("encode", "-m", str(path), "--ids", cwd=tmp_path, input="hello world\n")
    assert out.stdout == " ".join(map(str, tok.encode("hello world"))) + "\n"
