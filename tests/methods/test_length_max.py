"""Length-MAX (arXiv 2511.20849): the paper's score worked by hand, and the core's learner against
the pure-Python reference (python/subwords/reference/length_max.py) on random small corpora.

The definition both implement: the paper weighs a token by ``freq(t) * |t|`` and chooses tokens
greedily on it; here each merge takes the adjacent pair with the largest
``count(a, b) * (len(a) + len(b))`` (BPE's pair count times the joined piece's length in alphabet
symbols), pairs counted below min_count are no candidates, ties go to the smaller (left, right),
and the merges are an ordinary BPE merge list."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import subwords
from subwords.errors import OptionError
from subwords.formats._dispatch import export
from subwords.reference import length_max as ref

# units "abc" x4, "de" x5, "ab" x2 (the reference's docstring)
WORKED = {"abc": 4, "de": 5, "ab": 2}


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "subwords", *args], capture_output=True, text=True, encoding="utf-8")


def byte_model(table: dict[str, int], learned: int, min_count: int = 1, **kw):
    """Byte-level BPE (a unit's symbols are its bytes) with Length-MAX: 256 byte rows first."""
    return subwords.train(table, vocab_size=256 + learned, spelling="bytes", min_count=min_count, length_max=True, **kw)


def test_worked_case_by_hand():
    # Round one: (a, b) is counted 4 + 2 = 6 times and joins 2 symbols: 6 x 2 = 12; (d, e) 5 x 2 = 10;
    # (b, c) 4 x 2 = 8 -> ab. Round two: (ab, c) 4 x 3 = 12 beats (d, e) 5 x 2 = 10 -> abc.
    out = ref.learn({tuple(u): c for u, c in WORKED.items()}, new_rows=2)
    assert out.merges == [("a", "b"), ("ab", "c")]
    assert out.rows == ["ab", "abc"] and out.stop == "size"
    assert ref.encode("abcde", out.merges) == ["abc", "d", "e"]
    # the core, through training, gives the same; plain BPE takes (d, e) second (5 > 4)
    tok = byte_model(WORKED, 2)
    assert tok.merges == [("a", "b"), ("ab", "c")]
    assert tok.encode_pieces("abcde") == ["abc", "d", "e"]
    assert tok.options["length_max"] is True
    plain = subwords.train(WORKED, vocab_size=258, spelling="bytes", min_count=1)
    assert plain.merges == [("a", "b"), ("d", "e")]
    assert plain.encode_pieces("abcde") == ["ab", "c", "de"]


def test_min_count_filters():
    # abcdef x1, xy x2 at min_count 2: each pair of abcdef is counted once (5 x 2 = 10 would beat
    # (x, y)'s 2 x 2 = 4 if it were a candidate); (x, y) is the only one, then none is left
    out = ref.learn({tuple("abcdef"): 1, tuple("xy"): 2}, new_rows=10, min_count=2)
    assert out.merges == [("x", "y")] and out.stop == "min_count"
    tok = byte_model({"abcdef": 1, "xy": 2}, 10, min_count=2)
    assert tok.merges == [("x", "y")] and tok.report["stop"] == "min_count"


@settings(max_examples=80, deadline=None)
@given(
    units=st.dictionaries(st.text("abcde", min_size=1, max_size=8), st.integers(1, 9), min_size=1, max_size=10),
    learned=st.integers(min_value=1, max_value=14),
    min_count=st.integers(min_value=1, max_value=3),
)
def test_core_matches_reference(units, learned, min_count):
    want = ref.learn({tuple(u): c for u, c in units.items()}, new_rows=learned, min_count=min_count)
    tok = byte_model(units, learned, min_count=min_count)
    assert tok.merges == want.merges
    assert [tok.id_to_piece(i) for i in range(256, tok.vocab_size)] == want.rows
    for u in units:
        assert tok.encode_pieces(u) == ref.encode(u, want.merges)
        assert tok.encode_pieces(u + "e" + u) == ref.encode(u + "e" + u, want.merges)


def test_model_file_and_exports(tmp_path):
    texts = ["the theme of the thesis", "then there, the other", "ab ab abc"]
    tok = subwords.train(texts * 5, vocab_size=300, spelling="bytes", pre_split="gpt2", min_count=1, length_max=True)
    path = tmp_path / "lm.json"
    tok.save(path)
    doc = json.loads(path.read_text(encoding="utf-8"))
    assert doc["options"]["length_max"] is True and doc["merges"]
    back = subwords.load(path)
    assert [back.encode(t) for t in texts] == [tok.encode(t) for t in texts]
    for t in texts + ["unseen words, 12 ünï"]:
        assert tok.decode(tok.encode(t)) == t
    # an ordinary merge list: the exports hold it
    for fmt, name in (("hf", "tokenizer.json"), ("tiktoken", "gpt2.tiktoken")):
        out = tmp_path / name
        export(tok, out, fmt)
        other = subwords.load(out)
        assert [other.encode(t) for t in texts] == [tok.encode(t) for t in texts]


@pytest.mark.parametrize("options, why", [
    (dict(length_max="yes"), "length_max must be True or False"),
    (dict(length_max=1), "length_max must be True or False"),
    (dict(length_max=True, model="unigram", spelling="front"), "only to model='bpe'"),
    (dict(length_max=True, model="wordpiece", spelling="end"), "only to model='bpe'"),
    (dict(length_max=True, picky=0.9), "picky"),
    (dict(length_max=True, superword_at=300), "superword_at"),
])
def test_bad_options(options, why):
    with pytest.raises(OptionError, match=why):
        subwords.train({"abc": 5, "ab": 2}, vocab_size=400, **{"spelling": "bytes", **options})


def test_same_model_on_one_and_two_threads():
    texts = [f"line {i} of the thesis, the theme {i % 7} then there" for i in range(400)]
    one = subwords.train(texts, vocab_size=400, spelling="front", length_max=True, threads=1)
    two = subwords.train(list(reversed(texts)), vocab_size=400, spelling="front", length_max=True, threads=2)
    assert one.merges and one.to_json() == two.to_json()


def test_other_operations(tmp_path):
    texts = ["the theme of the thesis", "then there, the other", "ab ab abc"] * 5
    tok = subwords.train(texts, vocab_size=60, spelling="front", min_count=1, length_max=True)
    # the usage trim and LiteToken read it as the BPE merge list it is
    cut = subwords.trim(tok, texts[:2])
    assert cut.new_size < cut.old_size and cut.tokenizer.encode(texts[0]) == [cut.id_map[i] for i in tok.encode(texts[0])]
    lite = subwords.trim(tok, texts, litetoken=True)
    assert [lite.tokenizer.decode(ids) for ids in lite.tokenizer.encode_batch(texts)] == texts
    # StochasTok and BPE-dropout change the pieces, never the text
    assert tok.decode(tok.encode(texts[0], stochastok=0.5, seed=1)) == texts[0]
    assert tok.decode(tok.encode(texts[0], dropout=0.5, seed=1)) == texts[0]
    # extend would continue by plain BPE's count: refused, nothing written
    out = tmp_path / "more.json"
    with pytest.raises(OptionError, match="Length-MAX"):
        subwords.extend(tok, texts, vocab_size=70, output=out)
    assert not out.exists()


def test_cli(tmp_path):
    corpus = tmp_path / "c.txt"
    corpus.write_text("abc abc abc abc de de de de de ab ab\n", encoding="utf-8")
    out = tmp_path / "m.json"
    r = run("train", str(corpus), "--model", "unigram", "--vocab-size", "40", "--length-max", "-o", str(out))
    assert r.returncode != 0 and "length_max" in r.stderr and not out.exists(), r.stderr
    r = run("train", str(corpus), "--spelling", "bytes", "--vocab-size", "300", "--length-max", "--picky", "0.9",
            "-o", str(out))
    assert r.returncode != 0 and "length_max" in r.stderr and not out.exists(), r.stderr
    r = run("train", str(corpus), "--spelling", "bytes", "--vocab-size", "258", "--min-count", "1",
            "--length-max", "-o", str(out))
    assert r.returncode == 0, r.stderr
    doc = json.loads(out.read_text(encoding="utf-8"))
    assert doc["options"]["length_max"] is True


def test_curve(tmp_path):
    # the worked case at 257 and 258 rows: ab, then abc. Pieces at 257: ab c x4, d e x5, ab x2 =
    # 8 + 10 + 2 = 20; at 258: abc x4, d e x5, ab x2 = 4 + 10 + 2 = 16
    from subwords import measure

    points = measure.curve(WORKED, [257, 258], spelling="bytes", min_count=1, length_max=True)
    assert [(p.rows, p.corpus_pieces) for p in points] == [(257, 20), (258, 16)]
    table = tmp_path / "c.tsv"
    table.write_text("abc\t4\nde\t5\nab\t2\n", encoding="utf-8")
    r = run("curve", str(table), "--counts", "--spelling", "bytes", "--min-count", "1", "--length-max",
            "--sizes", "257,258", "--json")
    assert r.returncode == 0, r.stderr
    assert [p["corpus_pieces"] for p in json.loads(r.stdout)] == [20, 16]
