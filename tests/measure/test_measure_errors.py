"""Bad input to the measuring functions and verbs: a clear error that says what to do, exit
status 2 on the command line, nothing written."""

from __future__ import annotations

import pytest

import subwords
from subwords import measure
from subwords.cli import main
from subwords.errors import InputError, OptionError, SubwordsError

FOUR = {"low": 5, "lower": 2, "newest": 6, "widest": 3}


@pytest.fixture
def four(tmp_path):
    p = tmp_path / "four.tsv"
    p.write_text("".join(f"{w}\t{c}\n" for w, c in FOUR.items()), encoding="utf-8")
    return str(p)


def fails(capsys, *argv: str) -> str:
    status = main(list(argv))
    out, err = capsys.readouterr()
    assert status == 2, (out, err)
    assert out == ""
    assert "Traceback" not in err
    return err


@pytest.mark.parametrize("sizes, says", [
    ("", "needs sizes"), ("12,,17", "is not a size"), ("a,b", "is not a size"), ("22-12", "is not a size"),
    ("12-22:0", "is not a size"), ("0", "from 1"), ("99999999999", "must be between 1 and"), ("1-100000000", "more than"),
])
def test_bad_sizes(capsys, four, sizes, says):
    err = fails(capsys, "curve", four, "--counts", "--sizes", sizes)
    assert says in err


def test_size_below_the_floor(capsys, four):
    # the four words' floor: 11 symbols + [UNK] = 12 (BPE page)
    err = fails(capsys, "curve", four, "--counts", "--sizes", "5,22")
    assert "below the smallest vocabulary" in err and "12" in err


def test_empty_heldout(capsys, four, tmp_path):
    empty = tmp_path / "empty.txt"
    empty.write_text("\n  \n", encoding="utf-8")
    err = fails(capsys, "curve", four, "--counts", "--sizes", "12", "--heldout", str(empty))
    assert "held-out text is empty" in err
    err = fails(capsys, "curve", four, "--counts", "--sizes", "12", "--heldout", str(tmp_path / "missing.txt"))
    assert "no such file" in err
    with pytest.raises(InputError, match="empty"):
        measure.curve(FOUR, [12], heldout=[])


def test_invalid_utf8_heldout(capsys, four, tmp_path):
    bad = tmp_path / "bad.txt"
    bad.write_bytes(b"low \xff\n")
    err = fails(capsys, "curve", four, "--counts", "--sizes", "12", "--heldout", str(bad))
    assert "not UTF-8" in err


def test_compare_unknown_model(capsys, tmp_path):
    text = tmp_path / "t.txt"
    text.write_text("lowest\n", encoding="utf-8")
    err = fails(capsys, "compare", "-m", str(tmp_path / "nope.json"), str(text))
    assert "no such model file" in err
    junk = tmp_path / "junk.bin"
    junk.write_bytes(b"\x00\x01 not a model")
    err = fails(capsys, "compare", "-m", str(junk), str(text))
    assert "junk.bin" in err


def test_compare_empty_text(capsys, tmp_path):
    model = tmp_path / "m.json"
    subwords.train(FOUR, vocab_size=22).save(model)
    empty = tmp_path / "t.txt"
    empty.write_text("", encoding="utf-8")
    assert "no text to measure" in fails(capsys, "compare", "-m", str(model), str(empty))
    labelled = tmp_path / "l.txt"
    labelled.write_text("no tab here\n", encoding="utf-8")
    assert "LANGUAGE<TAB>TEXT" in fails(capsys, "compare", "-m", str(model), str(labelled), "--labelled")


def test_bad_plot_path(capsys, four, tmp_path):
    assert "must end in .png or .svg" in fails(capsys, "curve", four, "--counts", "--sizes", "12", "--plot", str(tmp_path / "x.jpg"))
    assert "does not exist" in fails(capsys, "curve", four, "--counts", "--sizes", "12", "--plot", str(tmp_path / "no" / "x.png"))


def test_bad_forced_choices(capsys, four):
    assert "STEP:LEFT:RIGHT" in fails(capsys, "trace", four, "--counts", "--vocab-size", "22", "--force", "1:s")
    err = fails(capsys, "trace", four, "--counts", "--vocab-size", "22", "--force", "1:z:q")
    assert "not a candidate" in err and "step 1" in err
    with pytest.raises(OptionError, match="steps are whole numbers"):
        measure.trace(FOUR, vocab_size=22, forced={0: ("e", "s")})


def test_plot_with_branches_is_refused(capsys, four, tmp_path):
    err = fails(capsys, "trace", four, "--counts", "--vocab-size", "22", "--branches", "1", "--plot", str(tmp_path / "b.png"))
    assert "--branches" in err and not (tmp_path / "b.png").exists()


def test_branches_past_the_run(capsys, four):
    assert "only 10 merges" in fails(capsys, "trace", four, "--counts", "--vocab-size", "22", "--branches", "11")


def test_missing_inputs(capsys, tmp_path):
    assert "no such file" in fails(capsys, "curve", str(tmp_path / "none.txt"), "--sizes", "12")
    assert "not stdin" in fails(capsys, "curve", "-", "--sizes", "12")


def test_api_errors():
    with pytest.raises(OptionError, match="sizes="):
        measure.curve(FOUR, [12], vocab_size=22)
    with pytest.raises(OptionError, match="comparison must be one of"):
        measure.matched(FOUR, [22], "nonsense")
    with pytest.raises(OptionError, match="superword_at"):
        measure.matched(FOUR, [22], "stages")
    with pytest.raises(OptionError, match="curves are for"):
        measure.curve(FOUR, [12], model="word")
    with pytest.raises(OptionError, match="must be above 22"):
        measure.curve(FOUR, [22, 25], superword_at=22)
    with pytest.raises(OptionError, match="sizes is empty"):
        measure.curve(FOUR, [])
    with pytest.raises(OptionError, match="needs a tokenizer"):
        measure.metrics(object(), ["x"])
    tok = subwords.train(FOUR, vocab_size=22)
    with pytest.raises(InputError, match="one label per text"):
        measure.metrics(tok, ["low", "lower"], languages=["en"])
    with pytest.raises(InputError, match="not a single string"):
        measure.metrics(tok, "low lower")
    with pytest.raises(OptionError, match="em_steps=True"):
        measure.trace(FOUR, vocab_size=22, em_steps=True)
    with pytest.raises(OptionError, match="12"):
        measure.greedy_vs_optimal(FOUR, 40)
    with pytest.raises(SubwordsError):
        measure.trace({}, vocab_size=22)  # an empty corpus: train's own error
