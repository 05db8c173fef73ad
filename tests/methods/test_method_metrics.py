"""The metrics the tokenizer-method papers report (python/subwords/measure/metrics.py), each on
the BPE page's model worked by hand, and through ``subwords compare``."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

import subwords
from subwords import measure
from subwords.errors import OptionError
from subwords.measure.metrics import gini

# The BPE page's model: {low: 5, lower: 2, newest: 6, widest: 3}, 22 rows ([UNK], 11 alphabet
# rows, 10 learned), merges e+s, es+t</w>, l+o, e+w, ew+est</w>, n+ewest</w>, lo+w</w>,
# d+est</w>, i+dest</w>, w+idest</w> (python/subwords/reference/bpe.py works them).
# On the texts "low lower" and "lowest":
#   low    -> low</w>              (lo made by l+o, then lo+w</w>: lo is a step)
#   lower  -> lo w e r</w>
#   lowest -> lo w est</w>         (es made by e+s, then es+t</w>: es is a step)
# 8 pieces; 9 + 6 = 15 UTF-8 bytes. Uses: lo 2, w 2, low</w> 1, e 1, r</w> 1, est</w> 1.


@pytest.fixture(scope="module")
def page():
    tok = subwords.train({"low": 5, "lower": 2, "newest": 6, "widest": 3}, vocab_size=22)
    assert tok.vocab_size == 22 and tok.kinds.count("special") == 1 and tok.kinds.count("learned") == 10
    assert tok.merges[:3] == [("e", "s"), ("es", "t</w>"), ("l", "o")]
    return tok


def test_tokens_per_byte(page):
    m = measure.metrics(page, ["low lower", "lowest"])
    assert (m.pieces, m.bytes) == (8, 15)
    assert m.tokens_per_byte == pytest.approx(8 / 15)


def test_under_trained_rows(page):
    # 21 text rows (the special [UNK] left out). Used at least once: 6 rows; at least twice: lo, w.
    texts = ["low lower", "lowest"]
    assert measure.metrics(page, texts, rare_below=1).under_trained == pytest.approx(15 / 21)
    assert measure.metrics(page, texts, rare_below=2).under_trained == pytest.approx(19 / 21)
    assert measure.metrics(page, texts, rare_below=3).under_trained == pytest.approx(21 / 21)
    with pytest.raises(OptionError, match="rare_below"):
        measure.metrics(page, texts, rare_below=0)


def test_intermediate_share(page):
    # LiteToken's R(t) = F1 / (F1 + F2): es has F1 = 0, F2 = 1 (R = 0 < 0.1), a residue; lo has
    # F1 = 2, F2 = 1 (R = 2/3); est</w> F1 = 1, low</w> F1 = 1 (R = 1); the other six learned
    # rows are not seen (no R). 1 residue of 10 learned rows.
    m = measure.metrics(page, ["low lower", "lowest"])
    assert m.intermediate_share == pytest.approx(1 / 10)
    wp = subwords.train(["low lower lowest"] * 3, model="wordpiece", vocab_size=30)
    assert measure.metrics(wp, ["low lower"]).intermediate_share is None  # no merges


def test_gini_by_hand():
    # G = Σ_i Σ_j |x_i - x_j| / (2 n² mean)
    assert gini([2.0, 2.0]) == 0.0
    assert gini([0.0, 0.0, 3.0]) == pytest.approx(12 / 18)  # 4 ordered pairs differ by 3; 2 * 9 * 1
    assert gini([1.0, 3.0]) == pytest.approx(4 / 16)  # 2 pairs differ by 2; 2 * 4 * 2
    assert gini([]) is None


def test_languages(page):
    # en: "low lower" 5 pieces / 9 bytes; xx: "lowest" 3 pieces / 6 bytes.
    # parity ratio (5/9) / (1/2) = 10/9; Gini of [5/9, 1/2]: mean 19/36, Σ|d| = 2 * 1/18 = 1/9,
    # G = (1/9) / (2 * 4 * 19/36) = 1/38.
    m = measure.metrics(page, ["low lower", "lowest"], languages=["en", "xx"])
    assert m.languages["en"].tokens_per_byte == pytest.approx(5 / 9)
    assert m.languages["xx"].tokens_per_byte == pytest.approx(1 / 2)
    assert m.language_parity_ratio == pytest.approx(10 / 9)
    assert m.language_gini == pytest.approx(1 / 38)
    assert measure.metrics(page, ["low lower"]).language_gini is None


def test_compare_cli(tmp_path, page):
    model = tmp_path / "page.json"
    page.save(model)
    text = tmp_path / "t.txt"
    text.write_text("en\tlow lower\nxx\tlowest\n", encoding="utf-8")
    r = subprocess.run([sys.executable, "-m", "subwords", "compare", "-m", str(model), str(text), "--labelled",
                        "--json", "--rare-below", "2"], capture_output=True, text=True, encoding="utf-8")
    assert r.returncode == 0, r.stderr
    (d,) = json.loads(r.stdout)
    assert d["tokens_per_byte"] == pytest.approx(8 / 15)
    assert d["under_trained"] == pytest.approx(19 / 21) and d["rare_below"] == 2
    assert d["intermediate_share"] == pytest.approx(0.1)
    assert d["language_gini"] == pytest.approx(1 / 38)
    assert d["language_parity_ratio"] == pytest.approx(10 / 9)
    r = subprocess.run([sys.executable, "-m", "subwords", "compare", "-m", str(model), str(text), "--labelled"],
                       capture_output=True, text=True, encoding="utf-8")
    assert r.returncode == 0, r.stderr
    assert "tokens/byte" in r.stdout and "Gini 0.0263" in r.stdout and "intermediate" in r.stdout
    r = subprocess.run([sys.executable, "-m", "subwords", "compare", "-m", str(model), str(text), "--rare-below", "0"],
                       capture_output=True, text=True, encoding="utf-8")
    assert r.returncode != 0 and "--rare-below" in r.stderr


def test_intermediate_share_of_a_tokenizer_json(tmp_path):
    # the same byte-level model as our file and as a tokenizer.json: the same rows and merges,
    # so the same residues (R < 0.1) on the same text
    import peers
    from subwords.formats import export

    texts = list(peers.multilingual_texts())[:1500]
    tok = subwords.train(texts[:1000], vocab_size=800, spelling="bytes", pre_split="gpt2")
    held = texts[1000:]
    ours = measure.metrics(tok, held)
    export(tok, tmp_path / "tokenizer.json", "hf")
    hf = measure.metrics(subwords.load(tmp_path / "tokenizer.json"), held)
    assert ours.intermediate_share is not None and ours.intermediate_share > 0
    assert hf.intermediate_share == pytest.approx(ours.intermediate_share)
    assert hf.tokens_per_byte == pytest.approx(ours.tokens_per_byte)
