"""``subwords count`` and ``train --min-unit-count``, run as a user runs them (a child process).

The four words are the BPE page's (``seeds/000_…``): "The word low occurs five times, lower twice,
newest six times and widest three." Their 22-row walk goes from 79 to 22 pieces (the same page).
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

FOUR_TEXT = " ".join(["low"] * 5 + ["lower"] * 2 + ["newest"] * 6 + ["widest"] * 3) + "\n"


def run(*args: str, ok: bool = True) -> subprocess.CompletedProcess[str]:
    r = subprocess.run([sys.executable, "-m", "subwords", *args], capture_output=True, text=True, encoding="utf-8")
    assert (r.returncode == 0) == ok, r.stderr
    return r


def test_count_then_train_writes_the_model_training_on_the_text_writes(tmp_path):
    (tmp_path / "four.txt").write_text(FOUR_TEXT, encoding="utf-8")
    r = run("count", str(tmp_path / "four.txt"), "-o", str(tmp_path / "four.counts"))
    assert "4 distinct units, 16 occurrences, 1 texts" in r.stderr
    run("train", str(tmp_path / "four.counts"), "--counts", "--vocab-size", "22", "-o", str(tmp_path / "a.json"))
    r = run("train", str(tmp_path / "four.txt"), "--vocab-size", "22", "-o", str(tmp_path / "b.json"))
    assert "79 -> 22 pieces" in r.stderr
    assert (tmp_path / "a.json").read_bytes() == (tmp_path / "b.json").read_bytes()


def test_tsv_and_globs(tmp_path):
    (tmp_path / "a.txt").write_text("low lower\n", encoding="utf-8")
    (tmp_path / "b.txt").write_text("low\n", encoding="utf-8")
    run("count", str(tmp_path / "*.txt"), "-o", str(tmp_path / "t.tsv"), "--tsv")
    assert (tmp_path / "t.tsv").read_text(encoding="utf-8") == "low\t2\nlower\t1\n"


def test_min_unit_count_reports_the_share_dropped(tmp_path):
    (tmp_path / "four.txt").write_text(FOUR_TEXT, encoding="utf-8")
    # lower (2 of 16 occurrences) is the only unit below 3: 12.50%
    r = run("count", str(tmp_path / "four.txt"), "-o", str(tmp_path / "t.tsv"), "--tsv", "--min-unit-count", "3")
    assert "12.50% of occurrences" in r.stderr
    assert (tmp_path / "t.tsv").read_text(encoding="utf-8") == "low\t5\nnewest\t6\nwidest\t3\n"
    r = run("train", str(tmp_path / "four.txt"), "--vocab-size", "22", "-o", str(tmp_path / "m.json"),
            "--min-unit-count", "3")
    assert "12.50% of occurrences" in r.stderr


def test_min_unit_count_prunes_a_binary_table(tmp_path):
    # a table file is pruned as it is (it used to be read as word<TAB>count text and refused)
    (tmp_path / "four.txt").write_text(FOUR_TEXT, encoding="utf-8")
    run("count", str(tmp_path / "four.txt"), "-o", str(tmp_path / "t.counts"))
    run("count", str(tmp_path / "four.txt"), "-o", str(tmp_path / "kept.tsv"), "--tsv", "--min-unit-count", "3")
    r = run("train", str(tmp_path / "t.counts"), "--counts", "--vocab-size", "20", "-o", str(tmp_path / "a.json"),
            "--min-unit-count", "3")
    # lower: 2 of the 16 occurrences
    assert "12.50% of occurrences" in r.stderr
    # the same model as training on the three units left (but for the report's number of texts,
    # which a word<TAB>count file does not record)
    run("train", str(tmp_path / "kept.tsv"), "--counts", "--vocab-size", "20", "-o", str(tmp_path / "b.json"))
    a, b = (json.loads((tmp_path / f).read_text(encoding="utf-8")) for f in ("a.json", "b.json"))
    assert a["report"].pop("texts") == 1
    b["report"].pop("texts")
    assert a == b and a["report"]["distinct_units"] == 3


def test_dask_engine_writes_the_local_table(tmp_path):
    (tmp_path / "four.txt").write_text(FOUR_TEXT * 3, encoding="utf-8")
    run("count", str(tmp_path / "four.txt"), "-o", str(tmp_path / "local.counts"), "--spelling", "front")
    run("count", str(tmp_path / "four.txt"), "-o", str(tmp_path / "dask.counts"), "--spelling", "front",
        "--engine", "dask", "--workers", "2")
    assert (tmp_path / "local.counts").read_bytes() == (tmp_path / "dask.counts").read_bytes()


def test_count_takes_normalize_patterns_and_digit_splitting(tmp_path):
    (tmp_path / "c.txt").write_text("ﬁle ５５５ 2026 ｆｕｌｌ\nlow lower 12345 newest\n" * 4, encoding="utf-8")
    opts = ["--normalize", "nfkc", "--split-digits", "1", "--pre-split", r"\p{L}+|\p{N}+|[^\s\p{L}\p{N}]+"]
    run("count", str(tmp_path / "c.txt"), "-o", str(tmp_path / "c.counts"), *opts)
    run("train", str(tmp_path / "c.counts"), "--counts", "--vocab-size", "40", "-o", str(tmp_path / "a.json"), *opts)
    run("train", str(tmp_path / "c.txt"), "--vocab-size", "40", "-o", str(tmp_path / "b.json"), *opts)
    assert (tmp_path / "a.json").read_bytes() == (tmp_path / "b.json").read_bytes()
    # the table remembers them: training without them is refused, naming the difference
    r = run("train", str(tmp_path / "c.counts"), "--counts", "--vocab-size", "40", "-o", str(tmp_path / "x.json"),
            ok=False)
    assert "normalize" in r.stderr and "split_digits" in r.stderr and "pattern" in r.stderr
    assert not (tmp_path / "x.json").exists()


@pytest.mark.parametrize("args,message", [
    (["--engine", "local", "--workers", "2"], "apply to --engine dask"),
    (["--engine", "dask", "--counts"], "apply to --engine local"),
    (["--spelling", "middle"], "invalid choice"),
    (["--min-unit-count", "0"], "--min-unit-count"),
    (["--split-digits", "2"], "invalid choice"),
    (["--normalize", "nfkx"], "invalid choice"),
])
def test_bad_requests_write_nothing(tmp_path, args, message):
    (tmp_path / "four.txt").write_text(FOUR_TEXT, encoding="utf-8")
    r = run("count", str(tmp_path / "four.txt"), "-o", str(tmp_path / "t.counts"), *args, ok=False)
    assert message in r.stderr
    assert not (tmp_path / "t.counts").exists()


def test_a_table_of_another_spelling_is_refused_and_nothing_is_written(tmp_path):
    (tmp_path / "four.txt").write_text(FOUR_TEXT, encoding="utf-8")
    run("count", str(tmp_path / "four.txt"), "-o", str(tmp_path / "t.counts"), "--spelling", "front")
    r = run("train", str(tmp_path / "t.counts"), "--counts", "--vocab-size", "22", "-o", str(tmp_path / "m.json"),
            ok=False)
    assert 'scheme: table has "front", training asks for "end"' in r.stderr
    assert not (tmp_path / "m.json").exists()
    (tmp_path / "broken.counts").write_bytes((tmp_path / "t.counts").read_bytes()[:-5])
    r = run("train", str(tmp_path / "broken.counts"), "--counts", "--vocab-size", "22", "-o", str(tmp_path / "m.json"),
            ok=False)
    assert "broken.counts" in r.stderr and "not a valid count table" in r.stderr
    assert not (tmp_path / "m.json").exists()
