"""The command line with other libraries' formats: ``export``, ``train --format``, and
``encode``/``decode``/``inspect`` on foreign files, checked against the libraries themselves
(subword-nmt's own ``apply-bpe`` command, tokenizers' ``BertWordPieceTokenizer``).

Formats written by other modules (hf, sentencepiece, tiktoken) go through the same code; these
tests use the formats built alongside the CLI: subwords' own, subword-nmt and vocab-txt.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import subwords
from subwords.formats import load

import peers

from subword_nmt import apply_bpe as apply_bpe

FOUR_TEXT = " ".join(["low"] * 5 + ["lower"] * 2 + ["newest"] * 6 + ["widest"] * 3) + "\n"


def run(*args: str, input: str | bytes | None = None, cwd: Path, status: int = 0) -> subprocess.CompletedProcess:
    """``python -m subwords ARGS``; a user mistake is exit 2 and one line on stderr, no traceback."""
    data = input.encode("utf-8") if isinstance(input, str) else input
    p = subprocess.run([sys.executable, "-m", "subwords", *args], input=data, capture_output=True, cwd=cwd,
                       timeout=300, env={**os.environ, "PYTHONIOENCODING": "utf-8"})
    out = subprocess.CompletedProcess(p.args, p.returncode, p.stdout.decode("utf-8"), p.stderr.decode("utf-8"))
    assert "Traceback" not in out.stderr, out.stderr
    assert out.returncode == status, out.stderr
    if status == 2:
        # one line (after argparse's usage line, for mistakes argparse catches)
        last = out.stderr.strip().splitlines()[-1]
        assert "error: " in last and (out.stderr.startswith("subwords: error: ") or out.stderr.startswith("usage:")), out.stderr
        if out.stderr.startswith("subwords: error: "):
            assert len(out.stderr.strip().splitlines()) == 1, out.stderr
    return out


def files_in(folder: Path) -> set[str]:
    return {p.name for p in folder.iterdir()}


@pytest.fixture(scope="module")
def sample(tmp_path_factory) -> Path:
    """3000 lines of the multilingual sample (lines holding a carriage return left out: Python's
    text reader, which apply-bpe uses, ends lines there)."""
    lines = [t for t in peers.multilingual_texts() if "\r" not in t][::10][:3000]
    path = tmp_path_factory.mktemp("sample") / "sample.txt"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


# -- subword-nmt ---------------------------------------------------------------------------------

def test_train_writes_codes_that_apply_bpe_reads(sample: Path, tmp_path: Path):
    run("train", "--vocab-size", "1500", "-o", "codes.bpe", "--format", "subword-nmt", str(sample), cwd=tmp_path)
    run("train", "--vocab-size", "1500", "-o", "m.json", str(sample), cwd=tmp_path)
    run("export", "m.json", "again.bpe", "--format", "subword-nmt", cwd=tmp_path)
    codes = (tmp_path / "codes.bpe").read_bytes()
    assert codes.startswith(b"#version: 0.2\n") and codes == (tmp_path / "again.bpe").read_bytes()
    merges = subwords.load(tmp_path / "m.json").merges
    assert codes.decode("utf-8").splitlines()[1:] == [f"{a} {b}" for a, b in merges]
    assert files_in(tmp_path) == {"codes.bpe", "m.json", "again.bpe"}  # no temporary left


def test_encode_with_codes_is_apply_bpe_output_byte_for_byte(sample: Path, tmp_path: Path):
    run("train", "--vocab-size", "1500", "-o", "codes.bpe", "--format", "subword-nmt", str(sample), cwd=tmp_path)
    ours = run("encode", "-m", "codes.bpe", input=sample.read_bytes(), cwd=tmp_path).stdout
    # apply_bpe's own command line (the module run as a script)
    theirs = subprocess.run([sys.executable, "-m", "subword_nmt.apply_bpe", "-c", "codes.bpe"],
                            input=sample.read_bytes(), capture_output=True, cwd=tmp_path, timeout=300, check=True)
    assert theirs.stdout
    assert ours == theirs.stdout.decode("utf-8")
    # the ids are the API's, and decoding the printed pieces gives the words back
    ids = run("encode", "-m", "codes.bpe", "--ids", input=sample.read_bytes(), cwd=tmp_path).stdout.splitlines()
    lines = sample.read_text(encoding="utf-8").split("\n")[:-1]
    tok = load(tmp_path / "codes.bpe")
    assert ids == [" ".join(map(str, tok.encode(t))) for t in lines]
    back = run("decode", "-m", "codes.bpe", input=ours, cwd=tmp_path).stdout.split("\n")[:-1]
    assert back == [" ".join(w for w in t.split(" ") if w) for t in lines]


def test_jsonl_of_a_foreign_model_has_pieces_and_ids_without_offsets(tmp_path: Path):
    (tmp_path / "codes").write_text("#version: 0.2\ne s\nes t</w>\nl o\nlo w</w>\n", encoding="utf-8")
    out = run("encode", "-m", "codes", "--jsonl", input="lowest low\n", cwd=tmp_path).stdout
    # rows: [UNK], then e e</w> l l</w> o o</w> s s</w> t t</w> w w</w> (1-12), es est</w> lo low</w>
    assert json.loads(out) == {"pieces": ["lo", "w", "est</w>", "low</w>"], "ids": [15, 11, 14, 16]}
    assert run("decode", "-m", "codes", "--ids", input="15 11 14 16\n", cwd=tmp_path).stdout == "lowest low\n"
    assert run("encode", "-m", "codes", "-O", "merges=2", input="lowest low\n", cwd=tmp_path).stdout == "l@@ o@@ w@@ est l@@ o@@ w\n"
    assert run("encode", "-m", "codes", "-O", "separator=~", input="lowest\n", cwd=tmp_path).stdout == "lo~ w~ est\n"
    assert run("encode", "-m", "codes", "--allow-special", "all", input="lowest\n", cwd=tmp_path).stdout == "lo@@ w@@ est\n"


def test_inspect_codes(tmp_path: Path):
    (tmp_path / "codes").write_text("#version: 0.2\ne s\nes t</w>\nl o\nlo w</w>\n", encoding="utf-8")
    info = json.loads(run("inspect", "--json", "codes", cwd=tmp_path).stdout)
    assert info["format"] == "subword-nmt" and info["vocab_size"] == 17 and info["special_tokens"] == {}
    assert info["merges"] == [["e", "s"], ["es", "t</w>"], ["l", "o"], ["lo", "w</w>"]]
    assert info["rows"][:3] == ["[UNK]", "e", "e</w>"] and info["rows"][-1] == "low</w>"
    text = run("inspect", "codes", "--rows", "2", cwd=tmp_path).stdout
    assert "subword-nmt" in text and "merges     4" in text


def test_codes_become_a_subwords_model(tmp_path: Path):
    (tmp_path / "codes").write_text("#version: 0.2\ne s\nes t</w>\nl o\nlo w</w>\n", encoding="utf-8")
    run("export", "codes", "m.json", "--format", "subwords", cwd=tmp_path)
    assert run("encode", "-m", "m.json", input="lowest low\n", cwd=tmp_path).stdout == "lo w est</w> low</w>\n"
    run("export", "m.json", "back.codes", "--format", "subword-nmt", cwd=tmp_path)
    assert (tmp_path / "back.codes").read_text(encoding="utf-8") == (tmp_path / "codes").read_text(encoding="utf-8")


# -- vocab.txt -----------------------------------------------------------------------------------

def test_train_bert_vocab_txt_read_by_tokenizers(sample: Path, tmp_path: Path):
    import tokenizers as hf
    run("train", "--preset", "bert", "--vocab-size", "1200", "-o", "vocab.txt", "--format", "vocab-txt", str(sample),
        cwd=tmp_path)
    lines = sample.read_text(encoding="utf-8").split("\n")[:-1]
    ids = run("encode", "-m", "vocab.txt", "--ids", input=sample.read_bytes(), cwd=tmp_path).stdout.splitlines()
    theirs = hf.BertWordPieceTokenizer(str(tmp_path / "vocab.txt"))
    assert ids == [" ".join(map(str, theirs.encode(t).ids)) for t in lines]
    # folder detection, and the same file written again from the loaded vocabulary
    (tmp_path / "folder").mkdir()
    run("export", "vocab.txt", "folder", "--format", "vocab-txt", cwd=tmp_path)
    assert (tmp_path / "folder" / "vocab.txt").read_bytes() == (tmp_path / "vocab.txt").read_bytes()
    assert run("encode", "-m", "folder", "--ids", input=lines[0] + "\n", cwd=tmp_path).stdout.split() == ids[0].split()


def test_cased_vocab_needs_the_load_option(tmp_path: Path):
    (tmp_path / "vocab.txt").write_text("\n".join(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "cafe", "Cafe", "##s"]) + "\n",
                                        encoding="utf-8")
    assert run("encode", "-m", "vocab.txt", input="Cafes\n", cwd=tmp_path).stdout == "[CLS] cafe ##s [SEP]\n"
    out = run("encode", "-m", "vocab.txt", "-O", "lowercase=false", input="Cafes\n", cwd=tmp_path).stdout
    assert out == "[CLS] Cafe ##s [SEP]\n"


def test_allow_special_matches_an_own_models_special_tokens_on_every_encode_path(tmp_path: Path):
    # docs/SPECIALS.md: special tokens take ids 0..k-1 in the order given and are text unless a
    # call allows them; the CLI's --allow-special is encode(..., allowed_special=...) for every
    # model, ours included.
    tok = subwords.train({"low": 5, "lower": 2, "newest": 6, "widest": 3}, vocab_size=30,
                         special_tokens=["<|end|>"])
    tok.save(tmp_path / "m.json")
    text = "low<|end|>newest\n"
    plain = run("encode", "-m", "m.json", "--ids", input=text, cwd=tmp_path).stdout.split()
    assert "0" not in plain                       # not allowed: the surface is spelled as text
    allowed = run("encode", "-m", "m.json", "--ids", "--allow-special", "all", input=text, cwd=tmp_path).stdout
    assert allowed.split() == [str(i) for i in tok.encode("low<|end|>newest", allowed_special="all")]
    assert "0" in allowed.split()
    pieces = run("encode", "-m", "m.json", "--allow-special", "<|end|>", input=text, cwd=tmp_path).stdout.split()
    assert pieces[pieces.index("<|end|>") - 1:pieces.index("<|end|>") + 1] == ["low</w>", "<|end|>"]
    line = json.loads(run("encode", "-m", "m.json", "--jsonl", "--allow-special", "all", input=text, cwd=tmp_path).stdout)
    at = line["ids"].index(0)
    assert line["pieces"][at] == "<|end|>" and line["offsets"][at] == [3, 10]   # "<|end|>" is text[3:10]
    run("encode", "-m", "m.json", "--allow-special", "all", "--output", "d.npy", input=text, cwd=tmp_path)
    import numpy
    assert numpy.load(tmp_path / "d.npy").tolist() == [int(i) for i in allowed.split()]


# -- mistakes ------------------------------------------------------------------------------------

MISTAKES = [
    ["export", "m.json", "out", "--format", "nope"],
    ["export", "m.json", "out.txt", "--format", "vocab-txt"],        # a BPE model is no vocab.txt
    ["export", "wp.json", "out.bpe", "--format", "subword-nmt"],     # a WordPiece model is no codes file
    ["export", "missing.json", "out.bpe", "--format", "subword-nmt"],
    ["export", "m.json", "nowhere/out.bpe", "--format", "subword-nmt"],
    ["export", "m.json", "m.json", "--format", "subwords"],
    ["export", "codes", "out.json", "--from", "subwords", "--format", "subword-nmt"],
    ["encode", "-m", "m.json", "--allow-special", "<|nope|>"],        # not a special token of the model
    ["encode", "-m", "codes", "--allow-special", "<s>"],
    ["encode", "-m", "codes", "--allow-special", ","],
    ["encode", "-m", "codes", "--dropout", "0.1", "--seed", "1"],
    ["encode", "-m", "codes", "--segmenter", "fewest"],
    ["encode", "-m", "codes", "-O", "glossaries=x"],
    ["encode", "-m", "codes", "-O", "nonsense"],
    ["encode", "-m", "m.json", "--format", "subword-nmt"],
    ["encode", "-m", "m.json", "-O", "lowercase=false"],
    ["encode", "-m", "bad.codes"],
    ["decode", "-m", "codes", "--ids"],
    ["inspect", "codes", "--format", "vocab-txt"],
    ["train", "--vocab-size", "30", "-o", "out.txt", "--format", "vocab-txt", "four.txt"],
    ["train", "--vocab-size", "30", "--model", "wordpiece", "-o", "old.bpe", "--format", "subword-nmt", "four.txt"],
]


@pytest.mark.parametrize("args", MISTAKES, ids=[" ".join(a) for a in MISTAKES])
def test_mistakes_exit_2_with_one_line_and_write_nothing(tmp_path: Path, args: list[str]):
    (tmp_path / "four.txt").write_text(FOUR_TEXT, encoding="utf-8")
    subwords.train({"low": 5, "lower": 2, "newest": 6, "widest": 3}, vocab_size=22).save(tmp_path / "m.json")
    subwords.train({"low": 5, "lower": 2, "newest": 6, "widest": 3}, model="wordpiece", vocab_size=22).save(tmp_path / "wp.json")
    (tmp_path / "codes").write_text("#version: 0.2\ne s\nes t</w>\n", encoding="utf-8")
    (tmp_path / "bad.codes").write_text("#version: 0.2\ne s\nes t</w> x\n", encoding="utf-8")
    (tmp_path / "old.bpe").write_text("#version: 0.2\nl o\n", encoding="utf-8")
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir() if p.is_file()}
    out = run(*args, input="lowest\n1 99\n", cwd=tmp_path, status=2)
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir() if p.is_file()} == before
    assert files_in(tmp_path) == set(before)
    if args[-1] == "bad.codes":
        assert "line 3" in out.stderr
