"""`subwords count` takes BoundlessBPE's options that change what is counted (`superword_pieces`,
`count_on`), as `subwords train` takes them, checked the same way before any input is read; a
table counted with one setting and trained with another is refused with the command that
counts it again."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

import subwords
from subwords import OptionError
from superword_cases import run_cli, write_corpus

#: "a 12" three times: o200k cuts a, " " (a space before digits is a piece of its own), 12.
#: Hand-counted spans: with superword_pieces="letters" (the default) only a is a word, so no run
#: of two eligible pretokens exists; with "any" the run (a, " ", 12) x3, as pairs (a, " ") x3 and
#: (" ", 12) x3. A span is its pretokens joined by a line break; the items sort by text.
A_12 = ["a 12"] * 3
SPANS = {
    ("letters", "runs"): [],
    ("any", "runs"): [("a\n \n12", 3)],
    ("any", "pairs"): [(" \n12", 3), ("a\n ", 3)],
}


@pytest.mark.parametrize(("pieces", "on"), list(SPANS))
def test_the_spans_of_each_setting_by_hand(tmp_path: Path, pieces: str, on: str) -> None:
    table = subwords.count(A_12, preset="boundless", superword_pieces=pieces, count_on=on)
    assert table.superword_pattern == f"boundless:{on}:{pieces}"
    assert table.span_items() == SPANS[(pieces, on)]
    # the command line counts the same table
    path = write_corpus(tmp_path, A_12)
    run_cli("count", str(path), "-o", str(tmp_path / "t.counts"), "--preset", "boundless",
            "--superword-pieces", pieces, "--count-on", on, "--quiet")
    assert (tmp_path / "t.counts").read_bytes() == table.to_bytes()


def _untouched() -> Iterator[str]:
    raise AssertionError("the input was read before the options were checked")
    yield ""  # pragma: no cover


@pytest.mark.parametrize(("options", "says"), [
    ({"preset": "boundless", "count_on": "words"}, "count_on must be 'runs' or 'pairs', got 'words'"),
    ({"preset": "boundless", "superword_pieces": 3}, "superword_pieces must be 'letters', 'any' or a regular expression"),
    ({"preset": "boundless", "superword_pieces": ""}, "superword_pieces must be 'letters', 'any' or a regular expression"),
    ({"preset": "boundless", "superword_pieces": "("}, "give 'letters', 'any' or an expression"),
    ({"spelling": "bytes", "pre_split": "o200k", "count_on": "pairs"},
     "count_on counts BoundlessBPE's spans: add preset='boundless'"),
    ({"preset": "superbpe", "superword_pieces": "any"},
     "superword_pieces counts BoundlessBPE's spans: add preset='boundless'"),
    # a spelling given explicitly overrides the preset's, and cannot carry a space inside a piece
    ({"preset": "boundless", "spelling": "end"}, "BoundlessBPE's spans are counted with spelling='bytes'"),
    ({"preset": "boundless", "spelling": "continuation"}, "BoundlessBPE's spans are counted with spelling='bytes'"),
    ({"preset": "superbpe", "spelling": "end"}, "superword_pattern needs spelling='bytes'"),
])
def test_bad_span_options_are_refused_before_reading(options: dict, says: str) -> None:
    with pytest.raises(OptionError) as e:
        subwords.count(_untouched(), **options)
    assert says in str(e.value)


def test_train_and_count_refuse_the_same_values_alike() -> None:
    # one check serves both: the same words for the same bad value
    for bad in ({"count_on": "words"}, {"superword_pieces": 3}):
        with pytest.raises(OptionError) as counted:
            subwords.count(_untouched(), preset="boundless", **bad)
        with pytest.raises(OptionError) as trained:
            subwords.train(_untouched(), vocab_size=300, preset="boundless", **bad)
        assert str(counted.value) == str(trained.value)


@pytest.mark.parametrize(("args", "says"), [
    (["--preset", "boundless", "--count-on", "words"], "--count-on: invalid choice: 'words'"),
    (["--preset", "boundless", "--superword-pieces", "("], "superword_pieces \"(\" is not a regular expression"),
    (["--spelling", "bytes", "--pre-split", "o200k", "--count-on", "pairs"],
     "count_on counts BoundlessBPE's spans: add preset='boundless' (CLI: --preset boundless)"),
    (["--preset", "boundless", "--spelling", "end"], "BoundlessBPE's spans are counted with spelling='bytes'"),
])
def test_the_cli_refuses_them_before_reading(tmp_path: Path, args: list[str], says: str) -> None:
    # the input is not UTF-8: had it been read first, the error would say so instead
    bad = tmp_path / "latin1.txt"
    bad.write_bytes("caf\xe9 caf\xe9\n".encode("latin-1"))
    r = subprocess.run([sys.executable, "-m", "subwords", "count", str(bad), "-o", str(tmp_path / "t.counts"), *args],
                       capture_output=True, text=True)
    assert r.returncode == 2
    assert says in r.stderr and "UTF-8" not in r.stderr
    assert not (tmp_path / "t.counts").exists()


def test_a_table_counted_for_other_options_says_how_to_recount(tmp_path: Path) -> None:
    texts = ["the cat sat on the mat, the cat sat"] * 3 + ["a 12 b 34"] * 2
    path = write_corpus(tmp_path, texts)
    runs = subwords.count([path], preset="boundless")
    asked = {"count_on": "pairs", "superword_pieces": "any"}
    with pytest.raises(OptionError) as e:
        subwords.train(runs, vocab_size=280, preset="boundless", **asked)
    message = str(e.value)
    assert '"boundless:runs:letters"' in message and '"boundless:pairs:any"' in message
    command = '`subwords count FILES -o TABLE --preset boundless --count-on pairs --superword-pieces "any"`'
    assert command in message
    assert "subwords.count(files, preset='boundless', count_on='pairs', superword_pieces=\"any\")" in message
    # the command it names counts a table that trains the model the text gives
    run_cli("count", str(path), "-o", str(tmp_path / "p.counts"), "--preset", "boundless", "--count-on", "pairs",
            "--superword-pieces", "any", "--quiet")
    again = subwords.train([tmp_path / "p.counts"], counts=True, vocab_size=280, preset="boundless", **asked)
    assert again.to_json() == subwords.train([path], vocab_size=280, preset="boundless", **asked).to_json()
    # the other way round: a table of pairs, a training with the preset's options
    with pytest.raises(OptionError) as e:
        subwords.train(subwords.count([path], preset="boundless", count_on="pairs"), vocab_size=280,
                       preset="boundless")
    assert "count again with the training's options: `subwords count FILES -o TABLE --preset boundless`" \
        in str(e.value)
