"""The verbs ``subwords trace``, ``subwords curve`` and ``subwords compare`` with ``--json``: the
pinned script contract (python/subwords/_cli_measure.py) and the pages' numbers through it.
Expected numbers are the pages' (quoted) or the hand calculations cited in tests/pages."""

from __future__ import annotations

import json

import pytest

import subwords
from subwords.cli import main

FOUR = {"low": 5, "lower": 2, "newest": 6, "widest": 3}


def run(capsys, *argv: str) -> tuple[int, str, str]:
    status = main(list(argv))
    out, err = capsys.readouterr()
    return status, out, err


def run_json(capsys, *argv: str):
    status, out, err = run(capsys, *argv, "--json")
    assert status == 0, err
    return json.loads(out)


@pytest.fixture
def four(tmp_path):
    p = tmp_path / "four.tsv"
    p.write_text("".join(f"{w}\t{c}\n" for w, c in FOUR.items()), encoding="utf-8")
    return str(p)


def test_curve_contract_and_the_four_word_walk(capsys, four, tmp_path):
    # BPE page: 79 pieces at 12 rows (alphabet + [UNK]); 22 pieces at 22 rows. By hand
    # (FOUR_LENGTHS in tests/pages/test_pages_bpe.py): 42 after five merges (17 rows).
    held = tmp_path / "held.txt"
    # by hand with the 22-row table: lowest = lo w est</w> (3), newest = newest</w> (1),
    # low = low</w> (1) -> 5; at 12 rows every character is a piece: 6 + 6 + 3 = 15
    held.write_text("lowest newest\nlow\n", encoding="utf-8")
    got = run_json(capsys, "curve", four, "--counts", "--model", "bpe", "--spelling", "end", "--sizes", "12,17,22",
                   "--heldout", str(held))
    assert isinstance(got, list) and len(got) == 3
    assert [(p["size"], p["rows"], p["corpus_pieces"]) for p in got] == [(12, 12, 79), (17, 17, 42), (22, 22, 22)]
    assert [got[0]["heldout_pieces"], got[2]["heldout_pieces"]] == [15, 5]
    # without --heldout no heldout_pieces
    got = run_json(capsys, "curve", four, "--counts", "--model", "bpe", "--spelling", "end", "--sizes", "12-22")
    assert [p["corpus_pieces"] for p in got] == [79, 70, 61, 54, 48, 42, 36, 31, 28, 25, 22]
    assert all("heldout_pieces" not in p for p in got)


def test_curve_sizes_keep_their_order_and_report_the_actual_rows(capsys, four):
    # Asked 30, the four words stop at 25 rows under min_count 2 (three merges past 22 by hand:
    # er</w>, low, lower</w>; test_measure_pages.test_two_stages_four_words).
    got = run_json(capsys, "curve", four, "--counts", "--sizes", "30,12")
    assert [(p["size"], p["rows"]) for p in got] == [(30, 25), (12, 12)]


def test_curve_unigram(capsys, four):
    # Unigram page: "The four words go 49, 36, 27, 20, 15 in four rounds": 16 rows, and
    # "the four words carry the corpus: one piece each" at 22 (test_asking_22_keeps_...).
    got = run_json(capsys, "curve", four, "--counts", "--model", "unigram", "--sizes", "16,22")
    assert [(p["size"], p["rows"], p["corpus_pieces"]) for p in got] == [(16, 16, 16), (22, 22, 16)]


def test_curve_matched_bpe_unigram_at_30(capsys, four):
    # SentencePiece page: "the merging learner stops at 27 ... the shrinking one lands on 30
    # exactly. They share 23 rows."
    (p,) = run_json(capsys, "curve", four, "--counts", "--spelling", "front", "--sizes", "30", "--matched", "bpe-unigram")
    assert (p["a"]["rows"], p["b"]["rows"], p["shared"]) == (27, 30, 23)


def test_curve_matched_marks(capsys, four):
    # SentencePiece page: "Both tables hold 27 rows and 18 of them agree once the mark is written
    # the same way".
    (p,) = run_json(capsys, "curve", four, "--counts", "--sizes", "30", "--matched", "marks")
    assert (p["a"]["rows"], p["b"]["rows"], p["shared"]) == (27, 27, 18)


def test_trace_json(capsys, four):
    # BPE page: "e + s: 6 + 3 = 9 / s + marked t: 6 + 3 = 9", the first step's tie.
    t = run_json(capsys, "trace", four, "--counts", "--vocab-size", "22")
    assert t["corpus_pieces_before"] == 79
    assert t["steps"][0]["ties"] == [["e", "s"], ["s", "t</w>"]]
    assert [s["corpus_pieces"] for s in t["steps"]][-1] == 22


def test_trace_branches_json(capsys, four):
    # BPE page: "both ... 22 pieces, and nine of the ten rows are identical".
    got = run_json(capsys, "trace", four, "--counts", "--vocab-size", "22", "--branches", "1", "--word", "lowest")
    assert [(b["corpus_pieces"], b["shared_learned"], b["rows_learned"]) for b in got] == [(22, 10, 10), (22, 9, 10)]
    assert got[0]["cut"] == got[1]["cut"] == ["lo", "w", "est</w>"]


def test_trace_forced_json(capsys, four):
    # the other branch by hand: st</w> then est</w> (test_first_tie_both_branches_...)
    t = run_json(capsys, "trace", four, "--counts", "--vocab-size", "22", "--force", "1:s:t</w>")
    assert [s["result"] for s in t["steps"][:2]] == ["st</w>", "est</w>"]
    assert t["steps"][0]["forced"] is True


def test_trace_unigram_json(capsys, four):
    # Unigram page: "49, 36, 27, 20, 15"; "34 of the 38 pieces ... cost exactly zero".
    t = run_json(capsys, "trace", four, "--counts", "--model", "unigram", "--vocab-size", "16")
    assert [r["size"] for r in t["rounds"]] == [49, 36, 27, 20, 15]
    assert (t["rounds"][0]["candidates"], t["rounds"][0]["zero_losses"]) == (38, 34)


def test_tables_print(capsys, four, tmp_path):
    status, out, _ = run(capsys, "curve", four, "--counts", "--sizes", "12,22")
    assert status == 0 and "corpus pieces" in out and "79" in out
    status, out, _ = run(capsys, "trace", four, "--counts", "--vocab-size", "22")
    assert status == 0 and "est</w>" in out
    model = tmp_path / "m.json"
    subwords.train(FOUR, vocab_size=22).save(model)
    text = tmp_path / "t.txt"
    text.write_text("lowest newest\n", encoding="utf-8")
    status, out, _ = run(capsys, "compare", "-m", str(model), str(text))
    assert status == 0 and "exact" in out


def test_compare_contract(capsys, tmp_path):
    # Two of our models on one file: by hand with the 22-row end-marked table, "lowest newest"
    # is lo w est</w> + newest</w> = 4 pieces over 2 words; at 12 rows (characters) 6 + 6 = 12.
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    subwords.train(FOUR, vocab_size=22).save(a)
    subwords.train(FOUR, vocab_size=12).save(b)
    text = tmp_path / "t.txt"
    text.write_text("lowest newest\n", encoding="utf-8")
    got = run_json(capsys, "compare", "-m", str(a), "-m", str(b), str(text))
    assert [m["model"] for m in got] == [str(a), str(b)]
    for m in got:
        for key in ("model", "pieces", "pieces_per_word", "bytes_per_piece", "unknown", "renyi_efficiency", "roundtrip_exact"):
            assert key in m, key
    assert [m["pieces"] for m in got] == [4, 12]
    assert [m["pieces_per_word"] for m in got] == [2.0, 6.0]
    # 13 bytes ("lowest newest"): 13 / 4 and 13 / 12
    assert [m["bytes_per_piece"] for m in got] == [13 / 4, 13 / 12]
    assert all(m["roundtrip_exact"] and m["unknown"] == 0 for m in got)


def test_compare_labelled_languages(capsys, tmp_path):
    a = tmp_path / "a.json"
    subwords.train(FOUR, vocab_size=22).save(a)
    text = tmp_path / "t.txt"
    # by hand with the 22-row table: "low low" = 2 pieces / 2 words; "lowest" = 3 pieces / 1 word
    text.write_text("x\tlow low\ny\tlowest\n", encoding="utf-8")
    (m,) = run_json(capsys, "compare", "-m", str(a), str(text), "--labelled")
    assert m["languages"]["x"]["pieces_per_word"] == 1.0
    assert m["languages"]["y"]["pieces_per_word"] == 3.0
    assert m["languages"]["y"]["parity"] == 3.0


def test_plots(capsys, four, tmp_path):
    for verb, extra in (("curve", ["--sizes", "12,17,22"]), ("trace", ["--vocab-size", "22"]),
                        ("curve", ["--sizes", "30", "--matched", "marks"])):
        for ext in ("png", "svg"):
            out = tmp_path / f"{verb}-{len(extra)}.{ext}"
            status, _, err = run(capsys, verb, four, "--counts", *extra, "--plot", str(out))
            assert status == 0, err
            head = out.read_bytes()[:200]
            assert head.startswith(b"\x89PNG") if ext == "png" else b"<svg" in out.read_bytes()[:2000] or b"<?xml" in head
    model = tmp_path / "m.json"
    subwords.train(FOUR, vocab_size=22).save(model)
    text = tmp_path / "t.txt"
    text.write_text("lowest newest\n", encoding="utf-8")
    status, _, err = run(capsys, "compare", "-m", str(model), str(text), "--plot", str(tmp_path / "c.png"))
    assert status == 0, err
    assert (tmp_path / "c.png").read_bytes().startswith(b"\x89PNG")


def test_plot_without_matplotlib_says_what_to_install(capsys, four, tmp_path, monkeypatch):
    import builtins

    real = builtins.__import__

    def no_matplotlib(name, *a, **k):
        if name == "matplotlib" or name.startswith("matplotlib."):
            raise ImportError("No module named 'matplotlib'")
        return real(name, *a, **k)

    monkeypatch.setattr(builtins, "__import__", no_matplotlib)
    out = tmp_path / "x.png"
    status, stdout, err = run(capsys, "curve", four, "--counts", "--sizes", "12", "--plot", str(out))
    assert status == 2
    assert 'pip install "subwords[plot]"' in err
    assert stdout == "" and not out.exists()  # refused before any work, nothing written
