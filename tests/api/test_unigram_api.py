"""The Unigram model through the API surface the page tests do not reach: the CLI, offsets,
batch encoding, and the model file (including a log-probability of -inf)."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import subwords

FOUR = {"low": 5, "lower": 2, "newest": 6, "widest": 3}


def run(*args, cwd, stdin=""):
    r = subprocess.run([sys.executable, "-m", "subwords", *args], cwd=cwd, input=stdin, capture_output=True,
                       text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert "Traceback" not in r.stderr
    return r.stdout


def test_cli_trains_encodes_samples_and_inspects(tmp_path: Path):
    (tmp_path / "four.tsv").write_text("".join(f"{w}\t{c}\n" for w, c in FOUR.items()), encoding="utf-8")
    run("train", "--model", "unigram", "--counts", "--vocab-size", "16", "-o", "u.json", "four.tsv", cwd=tmp_path)
    # the page: at 16 rows the table is the 11 symbols and the four words
    assert run("encode", "-m", "u.json", cwd=tmp_path, stdin="low newest\n").split() == ["low</w>", "newest</w>"]
    a = run("encode", "-m", "u.json", "--segmenter", "sample", "--seed", "5", "--alpha", "0.5", cwd=tmp_path, stdin="low\n")
    b = run("encode", "-m", "u.json", "--segmenter", "sample", "--seed", "5", "--alpha", "0.5", cwd=tmp_path, stdin="low\n")
    assert a == b  # a seed makes sampling repeatable
    assert run("encode", "-m", "u.json", "--segmenter", "fewest", cwd=tmp_path, stdin="widest\n").split() == ["widest</w>"]
    doc = json.loads(run("inspect", "u.json", "--json", cwd=tmp_path))
    assert doc["rows"][0] == "[UNK]" and doc["log_probs"][0] is None
    # the four words end at their shares of the corpus (page 002: low at exactly 5/16)
    lp = dict(zip(doc["rows"], doc["log_probs"]))
    assert math.isclose(math.exp(lp["low</w>"]), 5 / 16, rel_tol=1e-9)


def test_offsets_and_batches(tmp_path: Path):
    tok = subwords.train(["the low cost of the lower cost", "newest widest lowest"] * 5, model="unigram",
                         spelling="front", vocab_size=40)
    text = "  the lowest   cost"
    trip = tok.encode_with_offsets(text)
    assert [i for i, _, _ in trip] == tok.encode(text)
    assert "".join(text[s:e] for _, s, e in trip) == "thelowestcost"
    texts = ["the low cost", "newest", "", "lower cost of the lowest"]
    assert tok.encode_batch(texts, threads=2) == [tok.encode(t) for t in texts]


def test_model_file_round_trip_and_minus_infinity(tmp_path: Path):
    tok = subwords.train(FOUR, model="unigram", vocab_size=16)
    tok.save(tmp_path / "u.json")
    back = subwords.load(tmp_path / "u.json")
    assert back.to_json() == tok.to_json() and back.log_probs == tok.log_probs
    # a log-probability of -inf (reachable after very many EM rounds) survives the file
    doc = json.loads(tok.to_json())
    doc["log_probs"][1] = "-inf"
    again = subwords.Tokenizer.from_json(json.dumps(doc))
    assert again.log_probs[1] == -math.inf
    assert json.loads(again.to_json())["log_probs"][1] == "-inf"
