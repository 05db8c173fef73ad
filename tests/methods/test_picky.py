"""Picky BPE (arXiv 2409.04599): the paper's removal rule worked by hand, and the core's learner
against the pure-Python reference (python/subwords/reference/picky.py) on random small corpora.

The definition both implement: after merging ``x1 + x2``, a token ``x`` of the pair that is not an
alphabet symbol is removed when ``IoS(x) = f_p(x1, x2) / f_t(x) >= T``, ``f_p`` the pair's merged
count and ``f_t(x)`` x's count as a token just before the merge; its occurrences split back into
the tokens it was made of, and a later merge of its text restores it."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from subwords import _core
from subwords.reference import picky as ref

# units "abc" x5, "ab" x1, "bd" x2; two learned tokens; min_count 1 (the reference's docstring)
WORKED = {("a", "b", "c"): 5, ("a", "b"): 1, ("b", "d"): 2}


def core(units: dict[tuple[str, ...], int], new_rows: int, threshold: float, min_count: int):
    events, present, stop, segmented = _core.picky_learn(
        [(list(u), c) for u, c in units.items()], new_rows, threshold, min_count
    )
    ev = [ref.Merge(*a) if kind == "merge" else ref.Remove(a[0], tuple(a[1:])) for kind, a in events]
    return ev, present, stop, segmented


def test_worked_case_by_hand():
    # (a,b) 6 beats (b,c) 5: ab (f_p 6). Then (ab,c) 5: abc (f_p 5); ab stood 6 times before it,
    # IoS(ab) = 5/6 = 0.833 >= 0.8: ab is removed, the unit "ab" becomes a b. Then (b,d) 2 beats
    # (a,b) 1: bd, and two learned tokens are present.
    out = ref.learn(WORKED, new_rows=2, threshold=0.8, min_count=1)
    assert out.events == [
        ref.Merge("a", "b", "ab"),
        ref.Merge("ab", "c", "abc"),
        ref.Remove("ab", ("a", "b")),
        ref.Merge("b", "d", "bd"),
    ]
    assert out.vocabulary == ["abc", "bd"]
    assert out.stop == "size"
    assert out.segmented == {("a", "b", "c"): ["abc"], ("a", "b"): ["a", "b"], ("b", "d"): ["bd"]}
    # encoding replays the events: ab d -> (ab removed) a b d -> a bd; plain BPE keeps ab d
    assert ref.encode("abd", out.events) == ["a", "bd"]
    # IoS reaching the threshold removes (>=): T = 5/6 exactly
    assert ref.learn(WORKED, new_rows=2, threshold=5 / 6, min_count=1).vocabulary == ["abc", "bd"]
    # below it, plain BPE's two merges
    kept = ref.learn(WORKED, new_rows=2, threshold=0.9, min_count=1)
    assert kept.vocabulary == ["ab", "abc"] and all(isinstance(e, ref.Merge) for e in kept.events)
    assert ref.encode("abd", kept.events) == ["ab", "d"]


def test_restore_by_hand():
    # The same units with three learned tokens: after bd, (a,b) 1 is the only pair left; merging it
    # makes "ab" again, which is restored (present again, the same parts).
    out = ref.learn(WORKED, new_rows=3, threshold=0.8, min_count=1)
    assert [str(e) for e in out.events[4:]] == [str(ref.Merge("a", "b", "ab"))]
    assert out.vocabulary == ["abc", "bd", "ab"]
    assert out.segmented[("a", "b")] == ["ab"]


def test_core_worked_case():
    assert core(WORKED, 2, 0.8, 1) == (
        [ref.Merge("a", "b", "ab"), ref.Merge("ab", "c", "abc"), ref.Remove("ab", ("a", "b")),
         ref.Merge("b", "d", "bd")],
        ["abc", "bd"],
        "size",
        [["abc"], ["a", "b"], ["bd"]],
    )
    assert core(WORKED, 3, 0.8, 1)[1] == ["abc", "bd", "ab"]


def test_removed_part_splits_to_present_tokens():
    # "abcd" x4, "abc" x1: ab (5), abc (5: IoS(ab) = 5/5 -> ab removed, nothing left to split),
    # abcd (4: IoS(abc) = 4/5 = 0.8 -> abc removed; the unit "abc" splits through ab, itself
    # removed, to a b c).
    out = ref.learn({tuple("abcd"): 4, tuple("abc"): 1}, new_rows=5, threshold=0.8, min_count=1)
    assert out.events[:5] == [
        ref.Merge("a", "b", "ab"),
        ref.Merge("ab", "c", "abc"),
        ref.Remove("ab", ("a", "b")),
        ref.Merge("abc", "d", "abcd"),
        ref.Remove("abc", ("a", "b", "c")),
    ]
    # left: abcd x4 = abcd, abc x1 = a b c. (a,b) 1 ties (b,c) 1: ab restored; (ab,c) 1: abc
    # restored, and ab (a token once before, merged once: IoS 1) removed again; no pair is left.
    assert out.events[5:] == [
        ref.Merge("a", "b", "ab"),
        ref.Merge("ab", "c", "abc"),
        ref.Remove("ab", ("a", "b")),
    ]
    assert (out.vocabulary, out.stop) == (["abcd", "abc"], "no_pairs")
    assert out.segmented == {tuple("abcd"): ["abcd"], tuple("abc"): ["abc"]}
    assert core({tuple("abcd"): 4, tuple("abc"): 1}, 5, 0.8, 1)[:3] == (out.events, ["abcd", "abc"], "no_pairs")


corpora = st.dictionaries(
    st.lists(st.sampled_from("abcde"), min_size=1, max_size=7).map(tuple),
    st.integers(min_value=1, max_value=9),
    min_size=1,
    max_size=12,
)


@settings(max_examples=300, deadline=None)
@given(
    units=corpora,
    new_rows=st.integers(min_value=0, max_value=14),
    threshold=st.sampled_from([0.3, 0.5, 0.6, 0.75, 0.8, 0.9, 1.0]),
    min_count=st.integers(min_value=1, max_value=3),
)
def test_core_matches_reference(units, new_rows, threshold, min_count):
    want = ref.learn(units, new_rows=new_rows, threshold=threshold, min_count=min_count)
    events, present, stop, segmented = core(units, new_rows, threshold, min_count)
    assert events == want.events
    assert present == want.vocabulary
    assert stop == want.stop
    assert segmented == [want.segmented[u] for u in units]
    # training's segmentation is the replay of the events, unit by unit
    for u in units:
        assert ref.encode(u, events) == want.segmented[u]
    assert len(present) <= new_rows


def test_threshold_outside_range_is_refused():
    for bad in (0.0, -0.5, 1.5, float("nan")):
        try:
            _core.picky_learn([(["a", "b"], 2)], 1, bad, 1)
        except ValueError as e:
            assert "(0, 1]" in str(e)
        else:
            raise AssertionError(f"threshold {bad} was accepted")


# -- the option through subwords.train, the model file, the CLI ----------------------------------

import json  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402

import pytest  # noqa: E402

import subwords  # noqa: E402
from subwords.errors import InputError, OptionError, SubwordsError  # noqa: E402
from subwords.formats._dispatch import export  # noqa: E402


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "subwords", *args], capture_output=True, text=True, encoding="utf-8")


def byte_model(table: dict[str, int], learned: int, threshold: float, min_count: int = 1):
    """Byte-level BPE (no marks: a unit's symbols are its bytes) with Picky BPE: 256 byte rows."""
    return subwords.train(table, vocab_size=256 + learned, spelling="bytes", min_count=min_count, picky=threshold)


def test_train_worked_case():
    tok = byte_model({"abc": 5, "ab": 1, "bd": 2}, 2, 0.8)
    assert [tok.id_to_piece(i) for i in range(256, tok.vocab_size)] == ["abc", "bd"]
    assert tok.vocab_size == 258
    assert tok.encode_pieces("abd") == ["a", "bd"]
    assert tok.encode_pieces("abc") == ["abc"]
    assert tok.decode(tok.encode("abd abc")) == "abd abc"
    assert tok.options["picky"] == 0.8
    assert tok.report["merges_learned"] == 3
    # at 0.9, plain BPE's rows
    plain = byte_model({"abc": 5, "ab": 1, "bd": 2}, 2, 0.9)
    assert [plain.id_to_piece(i) for i in range(256, plain.vocab_size)] == ["ab", "abc"]
    assert plain.encode_pieces("abd") == ["ab", "d"]


def test_model_file_round_trip(tmp_path):
    tok = byte_model({"abcd": 4, "abc": 1, "ab": 3, "bd": 2}, 4, 0.7)
    path = tmp_path / "picky.json"
    tok.save(path)
    doc = json.loads(path.read_text(encoding="utf-8"))
    assert doc["merges"] == [] and doc["options"]["picky"] == 0.7
    assert any(e[0] == "-" for e in doc["picky_events"])
    back = subwords.load(path)
    texts = ["abcd ab bd abd dcba", "a b c d abcdabcd"]
    assert [back.encode(t) for t in texts] == [tok.encode(t) for t in texts]
    assert back.to_json() == tok.to_json()
    # offsets: a token split back by a removal gets the span of its own bytes
    offsets = back.encode_with_offsets("abd abc")
    assert [tok.decode([i]) for i, _, _ in offsets] == ["abd abc"[a:b] for _, a, b in offsets]
    assert [i for i, _, _ in offsets] == tok.encode("abd abc")


def test_model_file_events_checked(tmp_path):
    tok = byte_model({"abc": 5, "ab": 1, "bd": 2}, 2, 0.8)
    doc = json.loads(tok.to_json())
    bad = dict(doc, picky_events=[e for e in doc["picky_events"] if e[0] != "-"])
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(bad), encoding="utf-8")
    with pytest.raises(SubwordsError, match="picky events"):
        subwords.load(path)
    del bad["picky_events"]
    path.write_text(json.dumps(bad), encoding="utf-8")
    with pytest.raises(SubwordsError, match="picky_events go with the option picky"):
        subwords.load(path)


@settings(max_examples=60, deadline=None)
@given(
    units=st.dictionaries(st.text("abcde", min_size=1, max_size=7), st.integers(1, 9), min_size=1, max_size=10),
    learned=st.integers(min_value=1, max_value=12),
    threshold=st.sampled_from([0.5, 0.75, 0.9, 1.0]),
)
def test_trained_model_matches_reference(units, learned, threshold):
    tok = byte_model(units, learned, threshold)
    want = ref.learn({tuple(u): c for u, c in units.items()}, new_rows=learned, threshold=threshold, min_count=1)
    # rows: the tokens present at the end, in the order each was first made
    first = {}
    for e in want.events:
        if isinstance(e, ref.Merge):
            first.setdefault(e.result, len(first))
    assert [tok.id_to_piece(i) for i in range(256, tok.vocab_size)] == sorted(want.vocabulary, key=first.get)
    for u in units:
        assert tok.encode_pieces(u) == ref.encode(u, want.events)
        assert tok.encode_pieces(u + "e" + u) == ref.encode(u + "e" + u, want.events)


@pytest.mark.parametrize("options, why", [
    (dict(picky=0.0), r"\(0, 1\]"),
    (dict(picky=1.5), r"\(0, 1\]"),
    (dict(picky=float("nan")), "picky=nan: must be a finite number"),
    (dict(picky="0.9"), "picky must be a number"),
    (dict(picky=True), "picky must be a number"),
    (dict(picky=0.9, model="unigram"), "only to model='bpe'"),
    (dict(picky=0.9, model="wordpiece", spelling="end"), "only to model='bpe'"),
    (dict(picky=0.9, superword_at=300), "superword_at"),
    (dict(picky=0.9, spelling="continuation"), "continuation"),
    (dict(picky=0.9, max_piece_length=4), "max_piece_length"),
    (dict(picky=0.9, pad_to_multiple=64), "pad_to_multiple"),
])
def test_bad_options(options, why):
    with pytest.raises(OptionError, match=why):
        subwords.train({"abc": 5, "ab": 2}, vocab_size=400, **{"spelling": "bytes", **options})


def test_refused_uses(tmp_path):
    tok = byte_model({"abc": 5, "ab": 1, "bd": 2}, 2, 0.8)
    with pytest.raises(OptionError, match="dropout"):
        tok.encode("abd", dropout=0.1, seed=1)
    for fmt in ("hf", "tiktoken"):
        with pytest.raises(InputError, match="Picky BPE"):
            export(tok, tmp_path / f"out.{fmt}", fmt)
        assert not (tmp_path / f"out.{fmt}").exists()
    with pytest.raises(OptionError, match="Picky BPE"):
        subwords.trim(tok, ["abd"])
    with pytest.raises(OptionError, match="Picky BPE"):
        subwords.trim(tok, ["abd"], litetoken=True)
    with pytest.raises(OptionError, match="Picky BPE"):
        subwords.extend(tok, ["abd abd"], vocab_size=270)


def test_cli(tmp_path):
    corpus = tmp_path / "c.txt"
    corpus.write_text("abc abc abc abc abc ab bd bd\n", encoding="utf-8")
    out = tmp_path / "m.json"
    for bad in ("1.5", "0", "x"):
        r = run("train", str(corpus), "--spelling", "bytes", "--vocab-size", "300", "--min-count", "1",
                "--picky", bad, "-o", str(out))
        assert r.returncode != 0 and "picky" in r.stderr and not out.exists(), r.stderr
    r = run("train", str(corpus), "--spelling", "bytes", "--vocab-size", "258", "--min-count", "1",
            "--picky", "0.8", "-o", str(out))
    assert r.returncode == 0, r.stderr
    assert json.loads(out.read_text(encoding="utf-8"))["options"]["picky"] == 0.8
    r = run("export", str(out), str(tmp_path / "t.json"), "--format", "hf")
    assert r.returncode != 0 and "Picky BPE" in r.stderr and not (tmp_path / "t.json").exists()


def test_curve(tmp_path):
    # the worked case at 257 rows: one merge (ab) fills the one learned row; pieces ab c x5,
    # ab x1, b d x2 = 10 + 1 + 4 = 15. At 258: ab, abc (ab removed), bd; pieces abc x5, a b x1,
    # bd x2 = 5 + 2 + 2 = 9 (a one-run curve cut at 257 would say 15 too, but only by chance:
    # the rows would be ab, and the cut at 258 keeps abc, not bd)
    from subwords import measure

    points = measure.curve({"abc": 5, "ab": 1, "bd": 2}, [257, 258], spelling="bytes", min_count=1, picky=0.8)
    assert [(p.rows, p.rows_learned, p.merges, p.corpus_pieces) for p in points] == [(257, 1, 1, 15), (258, 2, 3, 9)]
    table = tmp_path / "c.tsv"
    table.write_text("abc\t5\nab\t1\nbd\t2\n", encoding="utf-8")
    r = run("curve", str(table), "--counts", "--spelling", "bytes", "--min-count", "1", "--picky", "0.8", "--sizes", "257,258", "--json")
    assert r.returncode == 0, r.stderr
    assert [p["corpus_pieces"] for p in json.loads(r.stdout)] == [15, 9]


def test_trace_refused():
    from subwords import measure

    with pytest.raises(OptionError, match="Picky BPE"):
        measure.trace({"abc": 5, "ab": 1}, vocab_size=258, spelling="bytes", picky=0.8)
