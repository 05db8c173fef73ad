"""`subwords curve` with the SuperBPE options: each point is the model a direct SuperBPE training
at that size gives (corpus and held-out pieces), for each transition size t of a sweep."""

from __future__ import annotations

import json
import subprocess
import sys

import subwords
from peers import multilingual_texts


def test_a_t_sweep_through_curve_matches_direct_trainings(tmp_path) -> None:
    texts = list(multilingual_texts(80_000))
    corpus, heldout = tmp_path / "c.txt", tmp_path / "h.txt"
    corpus.write_text("\n".join(texts[:-60]) + "\n", encoding="utf-8")
    held = texts[-60:]
    heldout.write_text("\n".join(held) + "\n", encoding="utf-8")
    for t in (500, 650):
        out = subprocess.run([sys.executable, "-m", "subwords", "curve", str(corpus), "--preset", "superbpe",
                              "--superword-at", str(t), "--superword-words", "3", "--sizes", "700,800",
                              "--heldout", str(heldout), "--json", "--quiet"],
                             check=True, capture_output=True, text=True).stdout
        points = json.loads(out)
        assert [p["size"] for p in points] == [700, 800]
        for p in points:
            tok = subwords.train([corpus], preset="superbpe", vocab_size=p["size"], superword_at=t, superword_words=3)
            assert p["rows"] == tok.vocab_size
            assert p["corpus_pieces"] == tok.report["corpus_pieces_after"]
            assert p["heldout_pieces"] == sum(len(tok.encode(x)) for x in held)


def test_the_superbpe_comparison_trains_plain_bpe_against_superbpe(tmp_path) -> None:
    texts = list(multilingual_texts(60_000))
    corpus = tmp_path / "c.txt"
    corpus.write_text("\n".join(texts) + "\n", encoding="utf-8")
    out = subprocess.run([sys.executable, "-m", "subwords", "curve", str(corpus), "--matched", "superbpe",
                          "--superword-at", "500", "--sizes", "600,700", "--json", "--quiet"],
                         check=True, capture_output=True, text=True).stdout
    for p in json.loads(out):
        plain = subwords.train([corpus], model="bpe", spelling="bytes", pre_split="o200k", vocab_size=p["size"])
        superbpe = subwords.train([corpus], preset="superbpe", vocab_size=p["size"], superword_at=500)
        assert p["a"]["corpus_pieces"] == plain.report["corpus_pieces_after"]
        assert p["b"]["corpus_pieces"] == superbpe.report["corpus_pieces_after"]
        # stage two learned something, so the two sides differ
        assert p["b"]["corpus_pieces"] < p["a"]["corpus_pieces"]
