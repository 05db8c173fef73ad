"""``subwords extend`` and ``subwords trim`` on the command line."""

from __future__ import annotations

import json
import subprocess
import sys

import subwords


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "subwords", *args], capture_output=True, text=True, encoding="utf-8")


def test_extend_then_trim(tmp_path):
    base = tmp_path / "corpus.txt"
    # the BPE page's corpus, one word a line
    base.write_text("low\n" * 5 + "lower\n" * 2 + "newest\n" * 6 + "widest\n" * 3, encoding="utf-8")
    new = tmp_path / "new.txt"
    new.write_text("lowest lowest lowest lowest\nnewer newer newer\n", encoding="utf-8")
    model = tmp_path / "m.json"
    r = run("train", str(base), "--vocab-size", "16", "-o", str(model))
    assert r.returncode == 0, r.stderr
    out = tmp_path / "ext.json"
    r = run("extend", str(model), str(new), "--vocab-size", "40", "-o", str(out))
    assert r.returncode == 0, r.stderr
    # the five merges worked by hand in test_extend.py::test_extending_on_new_text_by_hand
    assert "16 -> 21 ids, 5 merges learned (stopped: no_pairs)" in r.stdout
    ext = subwords.load(out)
    assert ext.rows[:16] == subwords.load(model).rows
    small = tmp_path / "small.json"
    r = run("trim", str(out), str(new), "-o", str(small), "--keep", "est</w>")
    assert r.returncode == 0, r.stderr
    trimmed = subwords.load(small)
    ids = json.loads((tmp_path / "small.json.ids.json").read_text(encoding="utf-8"))
    assert ids["old_size"] == 21 and ids["new_size"] == trimmed.vocab_size
    assert "est</w>" in trimmed.rows  # kept by --keep, though "lowest" is one piece now
    for text in ("lowest newer", "newer lowest lowest"):
        assert trimmed.encode_pieces(text) == ext.encode_pieces(text)
        assert trimmed.encode(text) == [ids["old_to_new"][i] for i in ext.encode(text)]


def test_bad_input_is_one_line_and_nothing_written(tmp_path):
    base = tmp_path / "corpus.txt"
    base.write_text("hello world\n" * 5, encoding="utf-8")
    uni = tmp_path / "u.json"
    assert run("train", str(base), "--model", "unigram", "--vocab-size", "15", "-o", str(uni)).returncode == 0
    empty = tmp_path / "empty.txt"
    empty.write_text("\n\n", encoding="utf-8")
    out = tmp_path / "out.json"
    for args, message in [
        (("extend", str(uni), str(base), "--vocab-size", "40"), "continues BPE training"),
        (("extend", str(uni), str(base), "--vocab-size", "0"), "--vocab-size must be at least 1"),
        (("extend", str(uni), str(tmp_path / "missing.txt"), "--vocab-size", "40"), "no such file"),
        (("trim", str(uni), str(empty)), "the corpus is empty"),
    ]:
        r = run(*args, "-o", str(out))
        assert r.returncode == 2
        assert message in r.stderr
        assert "Traceback" not in r.stderr
        assert not out.exists()
