"""BoundlessBPE in the Rust core (``preset="boundless"``) against hand calculation and against the
pure-Python reference ``subwords.reference.boundless`` (the rules: docs/METHODS.md, BoundlessBPE).

Byte-level: the 256 bytes are rows 0..255, so ``vocab_size=259`` leaves room for three more rows.
The pre-split is o200k: a word takes the space before it (``"abc abc"`` -> ``abc``, `` abc``).
Ties go to the smaller ``(left, right)`` by bytes, a merge before a supermerge.
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from typing import Any

import pytest

import subwords
import subwords.formats
from subwords import _core
from subwords.errors import OptionError
from subwords.reference import boundless
from superword_cases import (A_DELETION_THEN_A_SUPERMERGE, WITHOUT_DELETIONS, Case, count_then_train_cli, run_cli,
                             write_corpus)

_CHAR_TO_BYTE = {c: i for i, c in enumerate(_core.gpt2_byte_chars())}


def _bytes(piece: str) -> bytes:
    return bytes(_CHAR_TO_BYTE[c] for c in piece)


def core_model(texts: list[str], vocab_size: int, **options: Any) -> dict[str, Any]:
    """The Rust learner's model in the reference's terms: events, learned rows in order, stop."""
    tok = subwords.train(texts, vocab_size=vocab_size, preset="boundless", **options)
    doc = json.loads(tok.to_json())
    kinds = {"+": "merge", "-": "delete", "=": "super"}
    events = [(kinds[e[0]], _bytes(e[1]), _bytes(e[2]) if len(e) > 2 else b"") for e in doc["boundless_events"]]
    rows = [_bytes(r[0]) for r in doc["rows"]]
    return {"events": events, "rows": rows, "stop": doc["report"]["stop"], "tok": tok}


def pieces(tok: Any, text: str) -> list[bytes]:
    return [tok.decode_bytes([i]) for i in tok.encode(text)]


# ------------------------------------------------------------------ hand-worked cases


@pytest.mark.parametrize("case", [A_DELETION_THEN_A_SUPERMERGE, WITHOUT_DELETIONS], ids=["deletion", "no_deletion"])
def test_the_hand_worked_abc_cases(case: Case) -> None:
    # the hand calculation is written beside the cases, in tests/support/superword_cases.py
    m = core_model(case.texts, case.vocab_size, **case.options)
    assert m["events"] == case.events
    assert m["rows"][256:] == case.rows
    assert m["stop"] == case.stop
    for text, want in case.pieces.items():
        assert pieces(m["tok"], text) == want


def test_a_superword_joins_whole_pretokens_only() -> None:
    # A_DELETION_THEN_A_SUPERMERGE's model on "abc abc abc": o200k cuts abc, " abc", " abc"; the
    # superword joins the first two, and the third pretoken stays " abc"
    m = core_model(A_DELETION_THEN_A_SUPERMERGE.texts, A_DELETION_THEN_A_SUPERMERGE.vocab_size)
    assert pieces(m["tok"], "abc abc abc") == [b"abc abc", b" abc"]


def test_a_supermerge_wins_a_tie_by_its_pieces() -> None:
    # "a b" twice and "xy" twice.  Units: a x2, " b" x2, xy x2.  Spans: (a, " b") x2.
    # Step 1.  Merges: (" ",b) 2, (x,y) 2.  Supermerges: none (" b" is two tokens).
    #   Tie at 2: " " (0x20) < "x": merge " "+b.  IoS: both bytes.
    # Step 2.  Merges: (x,y) 2.  Supermerge (a, " b") 2: a is one byte, " b" one token now.
    #   Tie at 2: ("a", " b") < ("x", "y") since "a" < "x": the supermerge "a b" comes first.
    # Step 3.  Merge x+y (2).  Rows 256 + " b", "a b", xy = 259.
    m = core_model(["a b", "a b", "xy", "xy"], 259)
    assert m["events"] == [("merge", b" ", b"b"), ("super", b"a", b" b"), ("merge", b"x", b"y")]
    assert m["rows"][256:] == [b" b", b"a b", b"xy"]


def test_a_supermerge_between_two_merges() -> None:
    # "ab ab" three times, then "abc" three times.  Units: ab x3, " ab" x3, abc x3.
    # Spans: (ab, " ab") x3.
    # Step 1.  Merges (a,b) 3+3+3 = 9: merge a+b.  ab is whole now.
    # Step 2.  Merges (" ",ab) 3, (ab,c) 3.  Supermerge: " ab" is two tokens, none.  Tie at 3:
    #   " " < "ab": merge " "+ab.  IoS(ab) = 3 / 9: kept.
    # Step 3.  Merge (ab,c) 3; supermerge (ab, " ab") 3.  Tie: ("ab","c") < ("ab"," ab")?  "c"
    #   (0x63) > " " (0x20): the supermerge comes first.
    # Step 4.  Merge ab+c (3): IoS(ab) = 3 / f(ab) = 3 / 6 (ab is a token in unit ab x3 and in
    #   abc x3) = 0.5: kept.  Rows 256 + ab, " ab", "ab ab", abc = 260.
    m = core_model(["ab ab"] * 3 + ["abc"] * 3, 260)
    assert m["events"] == [
        ("merge", b"a", b"b"),
        ("merge", b" ", b"ab"),
        ("super", b"ab", b" ab"),
        ("merge", b"ab", b"c"),
    ]
    assert m["rows"][256:] == [b"ab", b" ab", b"ab ab", b"abc"]


# ------------------------------------------------------------------ the reference, on random corpora


def _corpus(rng: random.Random) -> list[str]:
    words = ["".join(rng.choice("abcd") for _ in range(rng.randint(1, 4))) for _ in range(rng.randint(2, 6))]
    texts = []
    for _ in range(rng.randint(1, 12)):
        parts = []
        for _ in range(rng.randint(1, 6)):
            w = rng.choice(words)
            parts.append(w if not parts else rng.choice([" ", " ", ", ", "  "]) + w)
        texts.append("".join(parts) + rng.choice(["", "", ".", " 12"]))
    return texts


@pytest.mark.parametrize("seed", range(300))
def test_the_core_learner_gives_the_reference_model(seed: int) -> None:
    rng = random.Random(seed)
    texts = _corpus(rng)
    size = 256 + rng.randint(1, 14)
    kw: dict[str, Any] = {}
    if seed % 3 == 1:
        kw["deletion_threshold"] = rng.choice([None, 0.5, 0.75, 1.0])
    if seed % 5 == 2:
        kw["count_on"] = "pairs"
    if seed % 7 == 3:
        kw["superword_pieces"] = "any"
    if seed % 4 == 0:
        kw["min_count"] = 1
    want = boundless.train(texts, size, **kw)
    got = core_model(texts, size, **kw)
    assert got["events"] == want["events"], texts
    assert got["rows"][256:] == want["rows"][256:]
    assert got["stop"] == want["stop"]
    # the encoder replays the reference's encoding, and decodes back to the text
    tok = got["tok"]
    for text in [*texts[:4], " ".join(texts[:3]), "dcba abcd, ab"]:
        assert pieces(tok, text) == boundless.encode(text, want)
        assert tok.decode(tok.encode(text)) == text


def test_a_saved_model_encodes_as_the_trained_one() -> None:
    rng = random.Random(7)
    texts = [t for seed in range(5) for t in _corpus(random.Random(seed))]
    tok = subwords.train(texts, vocab_size=280, preset="boundless", min_count=1)
    again = subwords.SubwordsTokenizer.from_json(tok.to_json()) if hasattr(subwords, "SubwordsTokenizer") \
        else type(tok).from_json(tok.to_json())
    assert again.to_json() == tok.to_json()
    for _ in range(50):
        text = " ".join(rng.choice(texts) for _ in range(3))
        assert again.encode(text) == tok.encode(text)
        assert [tuple(x[1:]) for x in again.encode_with_offsets(text)] == \
            [tuple(x[1:]) for x in tok.encode_with_offsets(text)]
    # the offsets of a superword cover both pretokens
    for i, a, b in tok.encode_with_offsets("abc abc"):
        assert tok.decode([i]) == "abc abc"[a:b]


# ------------------------------------------------------------------ determinism


def test_the_same_bytes_on_one_and_two_threads_with_shuffled_input(tmp_path: Any) -> None:
    rng = random.Random(11)
    texts = [t for seed in range(40) for t in _corpus(random.Random(seed))] * 3
    shuffled = texts[:]
    rng.shuffle(shuffled)
    one = subwords.train(texts, vocab_size=300, preset="boundless", threads=1)
    two = subwords.train(shuffled, vocab_size=300, preset="boundless", threads=2)
    assert one.to_json() == two.to_json()
    # and from a file, counted in blocks on two threads
    path = tmp_path / "corpus.txt"
    path.write_text("\n".join(shuffled) + "\n", encoding="utf-8")
    three = subwords.train(path, vocab_size=300, preset="boundless", threads=2)
    assert three.to_json() == one.to_json()


# ------------------------------------------------------------------ bad options and exports


def _untouched() -> Iterator[str]:
    raise AssertionError("the input was read before the options were checked")
    yield ""  # pragma: no cover


@pytest.mark.parametrize("options, words", [
    ({"deletion_threshold": 1.5}, ["deletion_threshold", "(0, 1]"]),
    ({"deletion_threshold": 0}, ["deletion_threshold", "(0, 1]"]),
    ({"deletion_threshold": "high"}, ["deletion_threshold", "(0, 1]"]),
    ({"deletion_threshold": True}, ["deletion_threshold", "(0, 1]"]),
    ({"count_on": "words"}, ["count_on", "'runs' or 'pairs'"]),
    ({"superword_pieces": "("}, ["superword_pieces", "'letters', 'any'"]),
    ({"superword_pieces": 3}, ["superword_pieces", "'letters', 'any'"]),
    ({"spelling": "end"}, ["spelling='bytes'"]),
    ({"pre_split": None, "preset": None, "boundless": True, "spelling": "bytes"}, ["pre-split"]),
    ({"superword_pattern": "superbpe", "superword_at": 300}, ["BoundlessBPE does not take", "superword_at"]),
    ({"picky": 0.9}, ["BoundlessBPE does not take picky"]),
])
def test_bad_options_are_refused_before_reading(options: dict[str, Any], words: list[str]) -> None:
    kw: dict[str, Any] = {"vocab_size": 300, "preset": "boundless", **options}
    with pytest.raises(OptionError) as e:
        subwords.train(_untouched(), **kw)
    for w in words:
        assert w in str(e.value)


@pytest.mark.parametrize("name, value", [("deletion_threshold", 0.5), ("superword_pieces", "any"),
                                         ("count_on", "pairs")])
def test_boundless_options_need_boundless(name: str, value: Any) -> None:
    with pytest.raises(OptionError, match=f"{name} applies to BoundlessBPE"):
        subwords.train(_untouched(), vocab_size=300, preset="o200k", **{name: value})


def test_explicit_options_override_the_preset_and_are_saved() -> None:
    tok = subwords.train(["abc abc"] * 3, vocab_size=259, preset="boundless", deletion_threshold=None,
                         count_on="pairs", superword_pieces="any")
    assert tok.options["boundless"] == {"deletion_threshold": None, "superword_pieces": "any", "count_on": "pairs"}
    opts = tok.train_options
    assert opts is not None and opts.boundless and opts.deletion_threshold is None and opts.count_on == "pairs"
    default = subwords.train(["abc abc"] * 3, vocab_size=259, preset="boundless")
    assert default.options["boundless"] == {"deletion_threshold": 0.9, "superword_pieces": "letters", "count_on": "runs"}


@pytest.mark.parametrize("fmt", ["hf", "tiktoken"])
def test_exports_are_refused_with_the_reason(tmp_path: Any, fmt: str) -> None:
    tok = subwords.train(["abc abc"] * 3, vocab_size=259, preset="boundless")
    out = tmp_path / "out"
    with pytest.raises(subwords.errors.InputError, match="cannot express a BoundlessBPE model"):
        subwords.formats.export(tok, out, fmt)
    assert not out.exists()


# ------------------------------------------------------------------ count tables


def test_the_spans_of_a_tiny_corpus_by_hand() -> None:
    # o200k cuts "the cat, the cat sat" into the, " cat", ",", " the", " cat", " sat": the comma
    # is no letter pretoken, so the runs are (the, " cat") and (" the", " cat", " sat"); a
    # span is its pretokens joined by a line break
    table = subwords.count(["the cat, the cat sat"], preset="boundless")
    assert table.superword_pattern == "boundless:runs:letters"
    assert table.span_items() == [(" the\n cat\n sat", 1), ("the\n cat", 1)]
    pairs = subwords.count(["the cat, the cat sat"], preset="boundless", count_on="pairs")
    assert pairs.span_items() == [(" cat\n sat", 1), (" the\n cat", 1), ("the\n cat", 1)]


def test_a_table_trains_the_model_the_text_gives(tmp_path: Any) -> None:
    texts = [t for seed in range(60) for t in _corpus(random.Random(seed))]
    path = tmp_path / "corpus.txt"
    path.write_text("\n".join(texts) + "\n", encoding="utf-8")
    direct = subwords.train(path, vocab_size=400, preset="boundless")
    assert "=" in [e[0] for e in json.loads(direct.to_json())["boundless_events"]]
    table = subwords.count(path, preset="boundless")
    assert subwords.train(table, vocab_size=400, preset="boundless").to_json() == direct.to_json()
    table.save(tmp_path / "t.counts")
    got = subwords.train([tmp_path / "t.counts"], counts=True, preset="boundless", vocab_size=400)
    assert got.to_json() == direct.to_json()
    # a table merged from partial ones
    parts = [subwords.count(texts[k::2], preset="boundless") for k in range(2)]
    assert parts[1].merge(parts[0]).to_bytes() == subwords.count(texts, preset="boundless").to_bytes()


def test_a_table_without_its_spans_says_how_to_recount() -> None:
    plain = subwords.count(["abc abc"] * 3, spelling="bytes", pre_split="o200k")
    with pytest.raises(OptionError, match="count again with `subwords count FILES -o TABLE --preset boundless`"):
        subwords.train(plain, vocab_size=259, preset="boundless")
    other = subwords.count(["abc abc"] * 3, preset="boundless", count_on="pairs")
    with pytest.raises(OptionError, match="boundless:pairs:letters"):
        subwords.train(other, vocab_size=259, preset="boundless")


def test_the_cli_trains_it_from_text_and_from_a_count_table(tmp_path: Any) -> None:
    import subprocess
    import sys

    texts = [t for seed in range(60) for t in _corpus(random.Random(seed))]
    path = write_corpus(tmp_path, texts)
    from_table, from_text = count_then_train_cli(tmp_path, path, "boundless", 400)
    assert from_table.read_bytes() == from_text.read_bytes()
    assert subwords.load(from_text).to_json() == \
        subwords.train(path, vocab_size=400, preset="boundless").to_json()
    # explicit options override the preset's
    run_cli("train", str(path), "--preset", "boundless", "--vocab-size", "400", "--deletion-threshold", "none",
            "--count-on", "pairs", "-o", str(tmp_path / "c.json"))
    assert json.loads((tmp_path / "c.json").read_text())["options"]["boundless"] == \
        {"deletion_threshold": None, "superword_pieces": "letters", "count_on": "pairs"}
    bad = subprocess.run([sys.executable, "-m", "subwords", "train", str(path), "--preset", "boundless",
                          "--vocab-size", "400", "--deletion-threshold", "2", "-o", str(tmp_path / "d.json")],
                         capture_output=True, text=True)
    assert bad.returncode != 0 and "deletion_threshold" in bad.stderr and "(0, 1]" in bad.stderr
    assert not (tmp_path / "d.json").exists()
