"""Scaffold-BPE (arXiv 2404.17808): the paper's marking rule worked by hand, and the core's learner
against the pure-Python reference (python/subwords/reference/scaffold.py) on random small corpora,
through subwords.train, the model file and encoding.

The definition both implement (the paper's training loop): the priority queue holds the pairs by
count and the scaffold tokens by ``f(t)``, their count as tokens. A pair at the head is merged;
then each of its two tokens that is learned and not scaffold is marked scaffold when ``f(x)`` is
below the count of the queue's new head. A scaffold token at the head is unmarked. The size counts
the learned tokens that are not scaffold. Encoding applies every merge, then demolishes each
scaffold token left into the parts it was made of, recursively."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import subwords
from subwords.errors import InputError, OptionError, SubwordsError
from subwords.formats._dispatch import export
from subwords.reference import scaffold as ref

# units "abcd" x3, "abce" x2, "ab" x1, "bx" x1; min_count 1 (the reference's docstring)
WORKED = {tuple("abcd"): 3, tuple("abce"): 2, tuple("ab"): 1, tuple("bx"): 1}


def test_worked_case_by_hand():
    # Pairs (a,b) 3+2+1 = 6, (b,c) 5, (c,d) 3, (c,e) 2, (b,x) 1: merge ab, f(ab) = 6.
    # (ab,c) 5: merge abc; f(abc) = 5, f(ab) = 6 - 5 = 1 (the unit "ab"). The new head is (abc,d)
    # at 3, and f(ab) = 1 < 3: ab is a scaffold token; one row (abc).
    # (abc,d) 3 beats the scaffold token ab (f 1): merge abcd; f(abc) = 5 - 3 = 2, the new head
    # (abc,e) 2: 2 is not below 2, abc stays a row; two rows (abc, abcd): the size asked.
    out = ref.learn(WORKED, new_rows=2, min_count=1)
    assert out.events == [
        ref.Merge("a", "b", "ab"),
        ref.Merge("ab", "c", "abc"),
        ref.Mark("ab"),
        ref.Merge("abc", "d", "abcd"),
    ]
    assert (out.vocabulary, out.scaffold, out.stop) == (["abc", "abcd"], ["ab"], "size")
    # encoding: the merges, then ab demolished into a b; plain BPE at two rows (ab, abc) gives ab
    assert ref.encode("ab", out) == ["a", "b"]
    assert ref.encode("abcd", out) == ["abcd"]


def test_mark_and_unmark_by_hand():
    # Four rows: after abcd, (abc,e) 2: merge abce; f(abc) = 2 - 2 = 0, the new head is 1 (the
    # pair (b,x) and the scaffold token ab, both 1): abc is scaffold; rows abcd, abce.
    # Then ab (f 1) and (b,x) (1) tie at the head: the token first, ab is unmarked (no merge);
    # rows ab, abcd, abce. Then (b,x) 1: merge bx; four rows.
    out = ref.learn(WORKED, new_rows=4, min_count=1)
    assert out.events[4:] == [
        ref.Merge("abc", "e", "abce"),
        ref.Mark("abc"),
        ref.Unmark("ab"),
        ref.Merge("b", "x", "bx"),
    ]
    assert (out.vocabulary, out.scaffold, out.stop) == (["ab", "abcd", "abce", "bx"], ["abc"], "size")
    # "abc" is made by the merges, then demolished into ab c; plain BPE's four rows give abc
    assert ref.encode("abc", out) == ["ab", "c"]


def byte_model(table: dict[str, int], learned: int, min_count: int = 1, **kw):
    """Byte-level BPE (no marks: a unit's symbols are its bytes) with Scaffold-BPE: 256 byte rows."""
    return subwords.train(table, vocab_size=256 + learned, spelling="bytes", min_count=min_count, scaffold=True, **kw)


def rows(tok) -> list[str]:
    return [tok.id_to_piece(i) for i in range(256, tok.vocab_size)]


def test_train_worked_case():
    table = {"abcd": 3, "abce": 2, "ab": 1, "bx": 1}
    tok = byte_model(table, 2)
    assert rows(tok) == ["abc", "abcd"]
    assert tok.encode_pieces("ab") == ["a", "b"]
    assert tok.encode_pieces("abcd abce") == ["abcd", "Ġ", "abc", "e"]  # Ġ: the byte-level display of a space
    assert tok.options["scaffold"] is True
    assert tok.report["merges_learned"] == 3
    four = byte_model(table, 4)
    assert rows(four) == ["ab", "abcd", "abce", "bx"]
    assert four.encode_pieces("abc") == ["ab", "c"]
    assert four.encode(" abc") == [ord(" "), four.piece_to_id("ab"), ord("c")]
    plain = subwords.train(table, vocab_size=260, spelling="bytes", min_count=1)
    assert plain.encode_pieces("abc") == ["abc"]
    assert "scaffold" not in (plain.options or {})


def test_model_file_round_trip(tmp_path):
    tok = byte_model({"abcd": 3, "abce": 2, "ab": 1, "bx": 1, "xabc": 2}, 5)
    path = tmp_path / "scaffold.json"
    tok.save(path)
    doc = json.loads(path.read_text(encoding="utf-8"))
    assert doc["merges"] == [] and doc["options"]["scaffold"] is True and "picky_events" not in doc
    kinds = [e[0] for e in doc["scaffold_events"]]
    assert "-" in kinds and kinds == sorted(kinds, key=lambda k: k == "-")  # the merges, then the removals
    back = subwords.load(path)
    texts = ["abcd ab bx abc xabcd", "a b c d abcabc"]
    assert [back.encode(t) for t in texts] == [tok.encode(t) for t in texts]
    assert back.to_json() == tok.to_json()
    for t in texts:
        assert back.decode(back.encode(t)) == t
    offsets = back.encode_with_offsets("abc xabcd")
    assert [tok.decode([i]) for i, _, _ in offsets] == ["abc xabcd"[a:b] for _, a, b in offsets]


def test_model_file_checked(tmp_path):
    tok = byte_model({"abcd": 3, "abce": 2, "ab": 1, "bx": 1}, 4)
    doc = json.loads(tok.to_json())
    path = tmp_path / "bad.json"
    # a merge after a removal is no Scaffold-BPE model
    ev = doc["scaffold_events"]
    bad = dict(doc, scaffold_events=[e for e in ev if e[0] == "-"] + [e for e in ev if e[0] == "+"])
    path.write_text(json.dumps(bad), encoding="utf-8")
    with pytest.raises(SubwordsError, match="a merge after a removal"):
        subwords.load(path)
    # the events without their option, and the option without its events
    bad = dict(doc, options={k: v for k, v in doc["options"].items() if k != "scaffold"})
    path.write_text(json.dumps(bad), encoding="utf-8")
    with pytest.raises(SubwordsError, match="scaffold_events go with the option scaffold"):
        subwords.load(path)
    bad = {k: v for k, v in doc.items() if k != "scaffold_events"}
    path.write_text(json.dumps(bad), encoding="utf-8")
    with pytest.raises(SubwordsError, match="scaffold_events go with the option scaffold"):
        subwords.load(path)


corpora = st.dictionaries(
    st.lists(st.sampled_from("abcde"), min_size=1, max_size=7).map(tuple),
    st.integers(min_value=1, max_value=9),
    min_size=1,
    max_size=12,
)


@settings(max_examples=200, deadline=None)
@given(units=corpora, learned=st.integers(min_value=1, max_value=14), min_count=st.integers(1, 3))
def test_trained_model_matches_reference(units, learned, min_count):
    table = {"".join(u): c for u, c in units.items()}
    tok = byte_model(table, learned, min_count=min_count)
    want = ref.learn(units, new_rows=learned, min_count=min_count)
    # the rows: the learned tokens that are not scaffold, in the order each was first made; ids
    # follow the 256 byte rows in that order
    assert rows(tok) == want.vocabulary
    assert tok.report["stop"] == want.stop
    assert tok.report["merges_learned"] == len(want.merges)
    for u in units:
        w = "".join(u)
        for text in (w, w + "e" + w, "a" + w + w):
            want_pieces = ref.encode(text, want)
            assert tok.encode_pieces(text) == want_pieces
            assert tok.encode(text) == [tok.piece_to_id(p) if len(p) > 1 else ord(p) for p in want_pieces]
            assert tok.decode(tok.encode(text)) == text
    # the merges are plain BPE's, in plain BPE's order (the paper changes which tokens are rows)
    made = [tuple(e[1:]) for e in json.loads(tok.to_json())["scaffold_events"] if e[0] == "+"]
    plain = subwords.train(table, vocab_size=256 + len(made), spelling="bytes", min_count=min_count)
    assert [tuple(m) for m in plain.merges[:len(made)]] == made


@pytest.mark.parametrize("options, why", [
    (dict(scaffold="yes"), "scaffold must be True or False"),
    (dict(scaffold=1), "scaffold must be True or False"),
    (dict(scaffold=True, model="unigram"), "only to model='bpe'"),
    (dict(scaffold=True, model="wordpiece", spelling="end"), "only to model='bpe'"),
    (dict(scaffold=True, picky=0.9), "scaffold and picky"),
    (dict(scaffold=True, length_max=True), "scaffold does not take length_max"),
    (dict(scaffold=True, superword_at=300), "superword_at"),
    (dict(scaffold=True, spelling="continuation"), "continuation"),
    (dict(scaffold=True, max_piece_length=4), "max_piece_length"),
    (dict(scaffold=True, pad_to_multiple=64), "pad_to_multiple"),
])
def test_bad_options(options, why):
    with pytest.raises(OptionError, match=why):
        subwords.train({"abc": 5, "ab": 2}, vocab_size=400, **{"spelling": "bytes", **options})


def test_refused_uses(tmp_path):
    tok = byte_model({"abcd": 3, "abce": 2, "ab": 1, "bx": 1}, 4)
    with pytest.raises(OptionError, match="dropout"):
        tok.encode("abc", dropout=0.1, seed=1)
    ids = tok.encode("abc abcd", stochastok=0.5, seed=3)
    assert tok.decode(ids) == "abc abcd"
    for fmt in ("hf", "tiktoken"):
        with pytest.raises(InputError, match="Scaffold-BPE"):
            export(tok, tmp_path / f"out.{fmt}", fmt)
        assert not (tmp_path / f"out.{fmt}").exists()
    with pytest.raises(OptionError, match="Scaffold-BPE"):
        subwords.trim(tok, ["abc"])
    with pytest.raises(OptionError, match="Scaffold-BPE"):
        subwords.trim(tok, ["abc"], litetoken=True)
    with pytest.raises(OptionError, match="Scaffold-BPE"):
        subwords.extend(tok, ["abc abc"], vocab_size=270)


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "subwords", *args], capture_output=True, text=True, encoding="utf-8")


def test_cli(tmp_path):
    corpus = tmp_path / "c.txt"
    corpus.write_text("abcd abcd abcd abce abce ab bx\n", encoding="utf-8")
    out = tmp_path / "m.json"
    for bad in (["--model", "wordpiece", "--spelling", "end"], ["--max-piece-length", "4"], ["--picky", "0.9"]):
        r = run("train", str(corpus), "--spelling", "bytes", "--vocab-size", "300", "--min-count", "1",
                "--scaffold", *bad, "-o", str(out))
        assert r.returncode != 0 and "scaffold" in r.stderr and not out.exists(), r.stderr
    r = run("train", str(corpus), "--spelling", "bytes", "--vocab-size", "260", "--min-count", "1",
            "--scaffold", "-o", str(out))
    assert r.returncode == 0, r.stderr
    doc = json.loads(out.read_text(encoding="utf-8"))
    assert doc["options"]["scaffold"] is True and "scaffold_events" in doc
    r = run("export", str(out), str(tmp_path / "t.json"), "--format", "hf")
    assert r.returncode != 0 and "Scaffold-BPE" in r.stderr and not (tmp_path / "t.json").exists()
    # compare reads the model as any other
    held = tmp_path / "h.txt"
    held.write_text("abc abcd\nbx ab\n", encoding="utf-8")
    r = run("compare", "-m", str(out), str(held), "--json")
    assert r.returncode == 0, r.stderr


def test_curve(tmp_path):
    # the worked case at 258 and 260 rows (one training per size): at 258 the rows are abc and
    # abcd, and the units cut as abcd x3, abc e x2, a b x1, b x x1 = 3 + 4 + 2 + 2 = 11 pieces;
    # at 260 (ab, abcd, abce, bx): abcd x3, abce x2, ab x1, bx x1 = 7 pieces
    from subwords import measure

    table = {"abcd": 3, "abce": 2, "ab": 1, "bx": 1}
    points = measure.curve(table, [258, 260], spelling="bytes", min_count=1, scaffold=True)
    assert [(p.rows, p.rows_learned, p.merges, p.corpus_pieces) for p in points] == [(258, 2, 3, 11), (260, 4, 5, 7)]
    path = tmp_path / "c.tsv"
    path.write_text("abcd\t3\nabce\t2\nab\t1\nbx\t1\n", encoding="utf-8")
    r = run("curve", str(path), "--counts", "--spelling", "bytes", "--min-count", "1", "--scaffold",
            "--sizes", "258,260", "--json")
    assert r.returncode == 0, r.stderr
    assert [p["corpus_pieces"] for p in json.loads(r.stdout)] == [11, 7]


def test_matched_comparison(tmp_path):
    # plain BPE at 258 rows keeps ab, abc: abc d x3, abc e x2, ab x1, b x x1 = 6 + 4 + 1 + 2 = 13
    # pieces; at 260 (ab, abc, abcd, abce): 3 + 2 + 1 + 2 = 8. Scaffold-BPE: 11 and 7 (above)
    from subwords.measure import matched

    table = {"abcd": 3, "abce": 2, "ab": 1, "bx": 1}
    points = matched(table, [258, 260], "scaffold", spelling="bytes", min_count=1)
    assert [(p.a.corpus_pieces, p.b.corpus_pieces) for p in points] == [(13, 11), (8, 7)]
    assert [(p.only_a_rows, p.only_b_rows) for p in points] == [(["ab"], ["abcd"]), (["abc"], ["bx"])]
    path = tmp_path / "c.tsv"
    path.write_text("abcd\t3\nabce\t2\nab\t1\nbx\t1\n", encoding="utf-8")
    r = run("curve", str(path), "--counts", "--spelling", "bytes", "--min-count", "1", "--matched", "scaffold",
            "--sizes", "258,260", "--json")
    assert r.returncode == 0, r.stderr
    got = json.loads(r.stdout)
    assert [(p["a"]["corpus_pieces"], p["b"]["corpus_pieces"]) for p in got] == [(13, 11), (8, 7)]


def test_trace_refused():
    from subwords import measure

    with pytest.raises(OptionError, match="Scaffold-BPE"):
        measure.trace({"abc": 5, "ab": 1}, vocab_size=258, spelling="bytes", scaffold=True)


def test_same_model_on_one_and_two_threads():
    # a merge that touches more than 4,096 units is rewritten on the threads: the marks read the
    # sites joined, which must not depend on how the units were shared out
    import random

    rng = random.Random(5)
    words = ["".join(rng.choice("abcdefgh") for _ in range(rng.randint(2, 9))) for _ in range(20000)]
    texts = [" ".join(rng.choice(words) for _ in range(12)) for _ in range(3000)]
    one = subwords.train(texts, vocab_size=1500, spelling="front", scaffold=True, threads=1)
    two = subwords.train(list(reversed(texts)), vocab_size=1500, spelling="front", scaffold=True, threads=2)
    assert one.to_json() == two.to_json()
    assert json.loads(one.to_json())["scaffold_events"][-1][0] == "-"  # some token was scaffold
