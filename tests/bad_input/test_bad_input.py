"""Bad input, through the API and the CLI: every user mistake is refused with a message that says
what was wrong and where (file and line), as a ``SubwordsError`` from the API and as one line on
stderr with exit status 2 from the CLI, never a traceback, a crash, a hang or a partial file.
"""

from __future__ import annotations

import contextlib
import io
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

import subwords
from subwords import InputError, SubwordsError
from subwords.cli import main

FOUR = {"low": 5, "lower": 2, "newest": 6, "widest": 3}
FOUR_TABLE = "low\t5\nlower\t2\nnewest\t6\nwidest\t3\n"
SPELLINGS = ["end", "continuation", "front", "bytes"]


def cli(*args: str, input: bytes | str | None = None, cwd: Path, status: int | None = 2, process: bool = False,
        timeout: float = 120) -> tuple[str, str]:
    """Runs ``subwords ARGS`` in ``cwd`` and returns (stdout, stderr); checks the exit status and
    that no traceback was printed (in-process: that no exception escaped ``main``).

    In-process by default, to keep the many small cases fast; ``process=True`` runs
    ``python -m subwords`` as a child, as a user would (tests/cli/test_cli.py always does)."""
    data = input.encode("utf-8") if isinstance(input, str) else (input or b"")
    if process:
        p = subprocess.run([sys.executable, "-m", "subwords", *args], input=data, capture_output=True, cwd=cwd,
                           timeout=timeout)
        code, out, err = p.returncode, p.stdout.decode("utf-8", "replace"), p.stderr.decode("utf-8", "replace")
    else:
        out_buf, err_buf = io.TextIOWrapper(io.BytesIO(), encoding="utf-8"), io.StringIO()
        old = os.getcwd(), sys.stdin
        os.chdir(cwd)
        sys.stdin = io.TextIOWrapper(io.BytesIO(data), encoding="utf-8")
        try:
            with contextlib.redirect_stdout(out_buf), contextlib.redirect_stderr(err_buf):
                try:
                    code = main(list(args))
                except SystemExit as e:  # argparse's own refusals
                    code = e.code
        finally:
            os.chdir(old[0])
            sys.stdin = old[1]
        out_buf.flush()
        out, err = out_buf.buffer.getvalue().decode("utf-8", "replace"), err_buf.getvalue()
    assert "Traceback" not in err, err
    if status is not None:
        assert code == status, (code, err)
    if status == 2:
        assert "error" in err
    return out, err


def files_in(folder: Path) -> set[str]:
    return {p.name for p in folder.iterdir()}


# -- invalid UTF-8 ----------------------------------------------------------------------------------


def test_invalid_utf8_in_a_training_file_names_file_and_line(tmp_path: Path):
    f = tmp_path / "corpus.txt"
    f.write_bytes(b"low lower\nnewest\n  caf\xc3 widest\n")
    with pytest.raises(InputError) as e:
        subwords.train(f, vocab_size=20)
    assert "corpus.txt" in str(e.value) and "line 3" in str(e.value)
    assert "replace" in str(e.value)  # says what to do
    _, err = cli("train", "--vocab-size", "20", "-o", "m.json", "corpus.txt", cwd=tmp_path, process=True)
    assert "corpus.txt" in err and "line 3" in err and "--input-errors replace" in err
    assert not (tmp_path / "m.json").exists()


def test_invalid_utf8_is_read_as_replacement_when_asked(tmp_path: Path):
    f = tmp_path / "corpus.txt"
    f.write_bytes(b"low lower\ncaf\xc3 caf\xc3\n")
    tok = subwords.train(f, vocab_size=30, input_errors="replace")
    assert "\ufffd</w>" in tok.rows
    assert tok.options["input_errors"] == "replace"
    cli("train", "--vocab-size", "30", "--input-errors", "replace", "-o", "m.json", "corpus.txt", cwd=tmp_path, status=0)
    assert subwords.load(tmp_path / "m.json").rows == tok.rows
    # stdin too
    _, err = cli("train", "--vocab-size", "30", "-o", "s.json", "-", input=b"low\ncaf\xc3\n", cwd=tmp_path)
    assert "stdin" in err and "line 2" in err
    cli("train", "--vocab-size", "30", "--input-errors", "replace", "-o", "s.json", "-", input=b"low\ncaf\xc3\n",
        cwd=tmp_path, status=0)


def test_invalid_utf8_in_a_count_table(tmp_path: Path):
    (tmp_path / "t.tsv").write_bytes(b"low\t5\nl\xffw\t2\n")
    with pytest.raises(InputError, match=r"t\.tsv: line 2"):
        subwords.train(tmp_path / "t.tsv", counts=True, vocab_size=20)
    tok = subwords.train(tmp_path / "t.tsv", counts=True, vocab_size=20, input_errors="replace")
    assert "\ufffd" in tok.rows


def test_invalid_utf8_on_encode_and_decode_stdin(tmp_path: Path):
    subwords.train(FOUR, vocab_size=22).save(tmp_path / "m.json")
    for cmd in ("encode", "decode"):
        _, err = cli(cmd, "-m", "m.json", input=b"low</w>\nlo\xe9\n", cwd=tmp_path)
        assert "stdin: line 2" in err and "UTF-8" in err


# -- empty corpora ----------------------------------------------------------------------------------


@pytest.mark.parametrize("spelling", SPELLINGS)
@pytest.mark.parametrize("data", [[], {}, [""], ["", ""]], ids=["no-texts", "empty-table", "empty-text", "empty-texts"])
def test_an_empty_corpus_is_refused(spelling: str, data):
    size = 300 if spelling == "bytes" else 20
    with pytest.raises(InputError, match="empty"):
        subwords.train(data, spelling=spelling, vocab_size=size)


@pytest.mark.parametrize("spelling", ["end", "continuation", "front"])
@pytest.mark.parametrize("content", [b"", b"\n\n\n", b"   \n\t \r\n \xe3\x80\x80 \n"], ids=["empty", "newlines", "whitespace"])
def test_an_empty_or_blank_file_is_refused(tmp_path: Path, spelling: str, content: bytes):
    # (U+3000 IDEOGRAPHIC SPACE is whitespace too.) Under `bytes` blank text is not empty: spaces
    # are symbols there.
    (tmp_path / "c.txt").write_bytes(content)
    with pytest.raises(InputError, match="empty"):
        subwords.train(tmp_path / "c.txt", spelling=spelling, vocab_size=20)
    cli("train", "--spelling", spelling, "--vocab-size", "20", "-o", "m.json", "c.txt", cwd=tmp_path)
    assert not (tmp_path / "m.json").exists()


def test_an_empty_stdin_is_refused(tmp_path: Path):
    _, err = cli("train", "--vocab-size", "20", "-o", "m.json", "-", input=b"", cwd=tmp_path)
    assert "empty" in err
    _, err = cli("train", "--counts", "--vocab-size", "20", "-o", "m.json", "-", input=b"\n", cwd=tmp_path)
    assert "empty" in err
    assert not (tmp_path / "m.json").exists()


# -- count tables -----------------------------------------------------------------------------------

BAD_COUNT_LINES = {
    "zero": "lower\t0",
    "negative": "lower\t-2",
    "plus-sign": "lower\t+2",
    "missing-tab": "lower 2",
    "no-count": "lower",
    "empty-count": "lower\t",
    "extra-column": "lower\t2\t7",
    "not-a-number": "lower\ttwo",
    "fraction": "lower\t2.5",
    "superscript-digit": "lower\t²",  # str.isdigit() says yes, int() says no
    "arabic-indic-digit": "lower\t٣",  # int() would read 3: refuse, only ASCII digits are numbers here
    "empty-word": "\t2",
    "word-with-space": "low er\t2",
    "too-big": f"lower\t{2**64}",
    "file-separator-in-word": "low\x1cer\t2",  # str.isspace() says yes; Rust's is_whitespace says no
    "no-break-space-after-count": "lower\t2\xa0",  # only spaces may pad the count
}


@pytest.mark.parametrize("line", list(BAD_COUNT_LINES.values()), ids=list(BAD_COUNT_LINES))
def test_a_bad_count_line_names_file_and_line(tmp_path: Path, line: str):
    (tmp_path / "t.tsv").write_text(f"low\t5\n\n{line}\nnewest\t6\n", encoding="utf-8")
    with pytest.raises(InputError) as e:
        subwords.train(tmp_path / "t.tsv", counts=True, vocab_size=20)
    assert "t.tsv: line 3" in str(e.value)
    _, err = cli("train", "--counts", "--vocab-size", "20", "-o", "m.json", "t.tsv", cwd=tmp_path)
    assert "t.tsv: line 3" in err
    _, err = cli("train", "--counts", "--vocab-size", "20", "-o", "m.json", "-",
                 input=f"low\t5\n\n{line}\n", cwd=tmp_path)
    assert "stdin: line 3" in err
    assert not (tmp_path / "m.json").exists()


@pytest.mark.parametrize(
    "table",
    [{"low": 0}, {"low": -1}, {"low": 2.0}, {"low": True}, {"low": "5"}, {"": 3}, {"lo w": 3}, {5: 3}, {"low": 2**64}],
    ids=["zero", "negative", "float", "bool", "str", "empty-word", "space", "int-word", "too-big"],
)
def test_a_bad_count_mapping_is_refused(table):
    with pytest.raises(InputError):
        subwords.train(table, vocab_size=20)


def test_count_lines_tolerate_crlf_and_blank_lines(tmp_path: Path):
    (tmp_path / "t.tsv").write_bytes(FOUR_TABLE.replace("\n", "\r\n\r\n").encode())
    assert subwords.train(tmp_path / "t.tsv", counts=True, vocab_size=22) == subwords.train(FOUR, vocab_size=22)


def test_count_files_stdin_and_mappings_read_the_same_rows(tmp_path: Path):
    # The four words, written the untidy ways a table may come: CRLF, padded and zero-led counts,
    # blank and whitespace-only lines (U+3000, U+001C), a word given twice (5 = 3 + 2), no final
    # newline. By hand, these rows are FOUR exactly.
    text = "low\t 3\r\n\r\n \u3000\x1c\nlower\t002 \nnewest\t6\nlow\t2\n\t\nwidest\t3"
    (tmp_path / "t.tsv").write_text(text, encoding="utf-8")
    want = subwords.train(FOUR, vocab_size=22)
    assert subwords.train(tmp_path / "t.tsv", counts=True, vocab_size=22) == want
    assert list(subwords.count(tmp_path / "t.tsv", counts=True).items()) == list(subwords.count(FOUR).items())
    cli("train", "--counts", "--vocab-size", "22", "-o", "m.json", "-", input=text.encode(), cwd=tmp_path, status=0)
    assert subwords.load(tmp_path / "m.json") == want


@pytest.mark.parametrize("rows", [[("aaaa", 2**64 - 1)], [("ab", 2**63), ("ab", 2**63)]], ids=["pair-count", "repeated-word"])
def test_counts_that_overflow_are_refused_or_counted_exactly(tmp_path: Path, rows):
    # aaaa = a a a a</w>: the pair a+a occurs twice per word, so its count is 2·(2**64-1); the
    # repeated word's count adds up to 2**64. Neither fits in u64: refuse, or count exactly (an
    # engine that wrapped around learned nothing from the first and called the second empty).
    (tmp_path / "t.tsv").write_text("".join(f"{w}\t{c}\n" for w, c in rows), encoding="utf-8")
    try:
        tok = subwords.train(tmp_path / "t.tsv", counts=True, vocab_size=20)
    except SubwordsError as e:
        assert "empty" not in str(e)  # the wrapped total (0) must not pass for an empty table
        return
    word = rows[0][0]
    total = sum(c for _, c in rows)
    assert tok.report["corpus_pieces_before"] == len(word) * total
    assert tok.merges[0] == ("a", "a") if word == "aaaa" else ("a", "b</w>")


# -- sizes -----------------------------------------------------------------------------------------


@pytest.mark.parametrize("spelling", SPELLINGS)
def test_a_size_above_what_the_corpus_supports_is_a_ceiling(tmp_path: Path, spelling: str):
    tok = subwords.train(FOUR, spelling=spelling, vocab_size=5000)
    assert tok.vocab_size < 5000
    assert tok.report["size_not_reached"] is True
    assert tok.report["stop"] in ("min_count", "no_pairs")
    (tmp_path / "t.tsv").write_text(FOUR_TABLE, encoding="utf-8")
    out, err = cli("train", "--counts", "--spelling", spelling, "--vocab-size", "5000", "-o", "m.json", "t.tsv",
                   cwd=tmp_path, status=0)
    assert "ceiling" in err and f"{tok.vocab_size} rows" in err
    assert subwords.load(tmp_path / "m.json") == tok


@pytest.mark.parametrize(
    "spelling,floor", [("end", 12), ("continuation", 12), ("front", 12), ("bytes", 256)],
)
def test_a_size_below_the_floor_is_refused_with_the_floor(tmp_path: Path, spelling: str, floor: int):
    # end/continuation: 11 symbols + [UNK]. front: ▁ d e i l n o r s t w = 11 + [UNK].
    # bytes: the 256 byte rows (no [UNK]).
    with pytest.raises(SubwordsError) as e:
        subwords.train(FOUR, spelling=spelling, vocab_size=floor - 1)
    assert str(floor) in str(e.value)
    assert subwords.train(FOUR, spelling=spelling, vocab_size=floor).vocab_size <= floor
    (tmp_path / "t.tsv").write_text(FOUR_TABLE, encoding="utf-8")
    _, err = cli("train", "--counts", "--spelling", spelling, "--vocab-size", str(floor - 1), "-o", "m.json",
                 "t.tsv", cwd=tmp_path)
    assert str(floor) in err
    assert not (tmp_path / "m.json").exists()


def test_a_stage_one_size_below_the_floor_is_refused():
    # The engine once took this as "no stage-one merges" without a word.
    with pytest.raises(SubwordsError, match="12"):
        subwords.train(FOUR, vocab_size=25, superword_at=5)
    assert subwords.train(FOUR, vocab_size=25, superword_at=12).report["stage_one_merges"] == 0


# -- long texts, odd characters ------------------------------------------------------------------------

# Run in a child: a hang or a stack overflow in the engine cannot be interrupted from Python while
# the GIL is released, but a child can be killed by the timeout, and a crash shows as its status.
LONG_TEXT_SCRIPT = textwrap.dedent(
    """
    import random, sys, subwords
    rnd = random.Random(7)
    alphabet = "abcdefghij_(.=é"
    corpus = ["".join(rnd.choice(alphabet) for _ in range(500)) for _ in range(20)] + ["a" * 512] * 4
    no_space = "".join(rnd.choice(alphabet) for _ in range(1_000_000))
    runs = "a" * 1_000_000
    for spelling, fallback in [("end", False), ("continuation", False), ("front", False), ("bytes", False),
                               ("end", True)]:
        floor = 256 if spelling == "bytes" else len(set(alphabet)) + 6  # + [UNK] + marked symbols
        tok = subwords.train(corpus, spelling=spelling, vocab_size=floor + 60, byte_fallback=fallback)
        assert len(tok.merges) >= 40, (spelling, len(tok.merges))
        ids = tok.encode(no_space)
        assert 0 < len(ids) < len(no_space), spelling
        assert tok.decode(ids) == tok.normalize(no_space), spelling
        # "a" * 1_000_000 collapses: the corpus taught a, aa, aaaa, ... up to long runs of a.
        ids = tok.encode(runs)
        assert len(ids) < len(runs) // 8, (spelling, len(ids))
        assert tok.decode(ids) == runs, spelling
    triples = tok.encode_with_offsets(no_space)
    assert triples[0][1] == 0 and triples[-1][2] == len(no_space)
    tok.save(sys.argv[1])
    print("ok")
    """
)


def test_a_megabyte_without_whitespace_is_encoded_in_every_spelling(tmp_path: Path):
    p = subprocess.run([sys.executable, "-c", LONG_TEXT_SCRIPT, str(tmp_path / "m.json")],
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr[-3000:]
    assert p.stdout.strip() == "ok"
    # The CLI reads it as one line and writes one line back.
    line = "ab" * 500_000 + "\n"
    out, _ = cli("encode", "-m", "m.json", "--ids", input=line, cwd=tmp_path, status=0, process=True)
    assert out.count("\n") == 1
    back, _ = cli("decode", "-m", "m.json", "--ids", input=out, cwd=tmp_path, status=0, process=True)
    assert back == line


@pytest.mark.parametrize("spelling", SPELLINGS)
def test_nul_characters_are_ordinary_symbols(tmp_path: Path, spelling: str):
    texts = ["a\x00b a\x00b \x00", "low\x00 \x00\x00", "\x00"] * 3
    size = 300 if spelling == "bytes" else 30
    tok = subwords.train(texts, spelling=spelling, vocab_size=size)
    for t in ["a\x00b", "\x00 a\x00b", "\x00"]:
        assert tok.decode(tok.encode(t)) == tok.normalize(t) == (t if spelling == "bytes" else " ".join(t.split()))
    # And through files and the CLI (a NUL byte is valid UTF-8).
    (tmp_path / "c.txt").write_text("\n".join(texts) + "\n", encoding="utf-8")
    cli("train", "--spelling", spelling, "--vocab-size", str(size), "-o", "m.json", "c.txt", cwd=tmp_path, status=0)
    out, _ = cli("encode", "-m", "m.json", input="a\x00b \x00\n", cwd=tmp_path, status=0)
    back, _ = cli("decode", "-m", "m.json", input=out, cwd=tmp_path, status=0)
    assert back == "a\x00b \x00\n"


def test_lone_surrogates_are_refused_naming_the_position():
    tok = subwords.train(FOUR, vocab_size=22)
    bad = "low\ud800er"
    calls = {
        "train texts": lambda: subwords.train(["fine", bad], vocab_size=20),
        "train table": lambda: subwords.train({"fine": 2, bad: 3}, vocab_size=20),
        "encode": lambda: tok.encode(bad),
        "encode_pieces": lambda: tok.encode_pieces(bad),
        "encode dropout": lambda: tok.encode(bad, dropout=0.1, seed=1),
        "encode_with_offsets": lambda: tok.encode_with_offsets(bad),
        "encode_batch": lambda: tok.encode_batch(["fine", bad]),
        "normalize": lambda: tok.normalize(bad),
        "count_pieces": lambda: tok.count_pieces([bad]),
    }
    for name, call in calls.items():
        with pytest.raises(InputError, match="surrogate") as e:
            call()
        assert "3" in str(e.value), name  # the code point position
    # A lone low surrogate, and one at the very end.
    for s in ["\udfff", "abc\udc80"]:
        with pytest.raises(InputError):
            tok.encode(s)


def test_a_word_holding_the_mark_is_refused(tmp_path: Path):
    # x</w>y is spelled x < / w > y</w>; its learned piece "x</w>" would print, and be interned,
    # exactly like the word-final x</w> of the word x, so decode(encode("x</w>y")) gave "x y".
    with pytest.raises(InputError, match="mark"):
        subwords.train(["x</w>y x</w>y x x"], vocab_size=40)
    # under continuation a word may begin with ##: the word-start property is on the row
    tok = subwords.train(["##x y ##x"], spelling="continuation", vocab_size=30)
    assert tok.decode(tok.encode("##x y")) == "##x y"
    with pytest.raises(InputError, match="mark"):  # Unigram's seed has no such property
        subwords.train(["##x y"], model="unigram", spelling="continuation", vocab_size=30)
    subwords.train(["a##b a##b"], spelling="continuation", vocab_size=30)
    tok = subwords.train(FOUR, vocab_size=22)
    with pytest.raises(InputError, match="mark"):
        tok.encode("a</w>b")
    # Another mark makes such text trainable, and it round-trips.
    other = subwords.train(["x</w>y x</w>y x x"], vocab_size=40, mark="@@")
    assert other.decode(other.encode("x</w>y x")) == "x</w>y x"
    (tmp_path / "c.txt").write_text("x</w>y\n", encoding="utf-8")
    _, err = cli("train", "--vocab-size", "20", "-o", "m.json", "c.txt", cwd=tmp_path)
    assert "--mark" in err


def test_normalize_refuses_a_word_holding_the_mark():
    tok = subwords.train(FOUR, vocab_size=22)
    with pytest.raises(InputError):
        tok.normalize("a</w>b")


# -- options ----------------------------------------------------------------------------------------


def test_unknown_keyword_arguments_are_refused():
    # an option error naming the unknown one and listing the options there are
    with pytest.raises(subwords.OptionError, match=r"unknown option 'vocab'.*vocab_size, model, spelling"):
        subwords.train(FOUR, vocab_size=22, vocab=22)
    with pytest.raises(subwords.OptionError, match="unknown option 'min_frequency'"):
        subwords.train(FOUR, vocab_size=22, min_frequency=2)
    tok = subwords.train(FOUR, vocab_size=22)
    with pytest.raises(TypeError):
        tok.encode("low", drop=0.1)  # type: ignore[call-arg]


BAD_VALUES = {
    "vocab_size=None": dict(vocab_size=None),
    "vocab_size=0": dict(vocab_size=0),
    "vocab_size=22.0": dict(vocab_size=22.0),
    "vocab_size='22'": dict(vocab_size="22"),
    "vocab_size=True": dict(vocab_size=True),
    "vocab_size=2**70": dict(vocab_size=2**70),
    "min_count=0": dict(min_count=0),
    "min_count=-1": dict(min_count=-1),
    "min_count=2**64": dict(min_count=2**64),
    "model='BPE'": dict(model="BPE"),
    "spelling='END'": dict(spelling="END"),
    "threads=0": dict(threads=0),
    "threads='2'": dict(threads="2"),
    "threads=1.5": dict(threads=1.5),
    "input_errors='ignore'": dict(input_errors="ignore"),
    "byte_fallback=1": dict(byte_fallback=1),
    "byte_fallback='yes'": dict(byte_fallback="yes"),
    "character_coverage=1.5": dict(character_coverage=1.5),
    "character_coverage=0": dict(character_coverage=0.0),
    "character_coverage=nan": dict(character_coverage=float("nan")),
    "character_coverage=inf": dict(character_coverage=float("inf")),
    "character_coverage=True": dict(character_coverage=True),
    "character_coverage='0.9'": dict(character_coverage="0.9"),
    "mark=5": dict(mark=5),
    "mark=''": dict(mark=""),
    "mark=' '": dict(mark=" "),
    "front mark='ab'": dict(spelling="front", mark="ab"),
    "bytes mark": dict(spelling="bytes", mark="x", vocab_size=300),
    "bytes byte_fallback": dict(spelling="bytes", byte_fallback=True, vocab_size=300),
    "byte_fallback_in_budget alone": dict(byte_fallback_in_budget=True),
    "split_at_marks=False on end": dict(split_at_marks=False),
    "pre_split on end": dict(pre_split="gpt2"),
    "pre_split='gpt4'": dict(spelling="bytes", pre_split="gpt4", vocab_size=300),
    "superword_at >= vocab_size": dict(superword_at=30),
    "superword_at on continuation": dict(spelling="continuation", superword_at=20),
    "superword_at on word": dict(model="word", superword_at=20),
    "max_piece_length=0": dict(max_piece_length=0),
    "max_piece_length=2**40": dict(max_piece_length=2**40),
    "alphabet_size=0": dict(alphabet_size=0),
    "alphabet_size and coverage": dict(alphabet_size=5, character_coverage=0.9),
    "joints on front": dict(spelling="front", joints={"lower": ["low", "er"]}),
    "joints not spelling the word": dict(joints={"lower": ["lo", "er"]}),
    "joints with an empty part": dict(joints={"lower": ["lower", ""]}),
    "joints returning a number": dict(joints=lambda w: 5),
    "joints returning a str": dict(joints=lambda w: w),
    "joints=5": dict(joints=5),
    "counts=1": dict(counts=1),
}


@pytest.mark.parametrize("kw", list(BAD_VALUES.values()), ids=list(BAD_VALUES))
def test_bad_option_values_are_subwords_errors(kw):
    kw = {"vocab_size": 30, **kw}
    with pytest.raises(SubwordsError) as e:
        subwords.train(FOUR, **kw)
    msg = str(e.value)
    assert "line 1 column" not in msg, msg  # a serde message about JSON the user never wrote


@pytest.mark.parametrize("data", [None, 5, "low low lower", b"low", [1, 2], [Path("x.txt"), "y"], object()],
                         ids=["None", "int", "str", "bytes", "ints", "mixed", "object"])
def test_bad_data_is_a_subwords_error(data):
    with pytest.raises(SubwordsError):
        subwords.train(data, vocab_size=20)


def test_bad_encode_and_decode_arguments():
    tok = subwords.train(FOUR, vocab_size=22)
    for call in (
        lambda: tok.encode(b"low"),
        lambda: tok.encode(None),
        lambda: tok.encode("low", dropout=0.1),  # no seed
        lambda: tok.encode("low", dropout=1.5, seed=1),
        lambda: tok.encode("low", dropout=float("nan"), seed=1),
        lambda: tok.encode("low", seed=1),  # seed without dropout
        lambda: tok.encode("low", dropout=0.1, seed=-1),
        lambda: tok.encode_batch(["low", 5]),
        lambda: tok.encode_batch(["low"], threads=0),
        lambda: tok.decode([0, 22]),
        lambda: tok.decode([-1]),
        lambda: tok.decode(["1"]),
        lambda: tok.decode([1.0]),
        lambda: tok.decode_pieces(["lo", "nope"]),
        lambda: tok.piece_to_id("nope"),
        lambda: tok.piece_to_id(3),
        lambda: tok.id_to_piece(22),
        lambda: tok.id_to_piece(-1),
        lambda: tok.count_pieces("low"),
        lambda: tok.count_pieces({"low": 0}),
    ):
        with pytest.raises(SubwordsError):
            call()
    with pytest.raises(KeyError):  # UnknownPieceError is a KeyError too
        tok.piece_to_id("nope")


CLI_MISTAKES = [
    ["frobnicate"],
    [],
    ["train", "--vocab-size", "22", "-o", "m.json", "t.tsv", "--counts", "--bogus"],
    ["train", "--vocab-size", "22", "-o", "m.json", "t.tsv", "--spelling", "END"],
    ["train", "--vocab-size", "22", "-o", "m.json", "t.tsv", "--model", "sentencepiece"],
    ["train", "--vocab-size", "twenty", "-o", "m.json", "t.tsv"],
    ["train", "--vocab-size", "0", "-o", "m.json", "t.tsv"],
    ["train", "--vocab-size", "-5", "-o", "m.json", "t.tsv"],
    ["train", "-o", "m.json", "t.tsv"],  # no --vocab-size
    ["train", "--vocab-size", "22", "t.tsv"],  # no -o
    ["train", "--vocab-size", "22", "-o", "m.json"],  # no INPUT
    ["train", "--vocab-size", "22", "-o", "m.json", "missing.txt"],
    ["train", "--vocab-size", "22", "-o", "m.json", "folder"],
    ["train", "--vocab-size", "22", "-o", "folder", "t.tsv"],
    ["train", "--vocab-size", "22", "-o", "nowhere/m.json", "t.tsv"],
    ["train", "--vocab-size", "22", "-o", "m.json", "t.tsv", "-"],
    ["train", "--vocab-size", "22", "--seed", "3", "-o", "m.json", "t.tsv"],
    ["train", "--vocab-size", "22", "--character-coverage", "2", "-o", "m.json", "t.tsv"],
    ["train", "--vocab-size", "22", "--mark", " ", "-o", "m.json", "t.tsv"],
    ["train", "--vocab-size", "22", "--pre-split", "gpt2", "-o", "m.json", "t.tsv"],
    ["train", "--vocab-size", "22", "--superword-at", "30", "-o", "m.json", "t.tsv"],
    ["train", "--vocab-size", "22", "--input-errors", "ignore", "-o", "m.json", "t.tsv"],
    ["encode", "-m", "missing.json"],
    ["encode", "-m", "folder"],
    ["encode", "-m", "t.tsv"],
    ["encode", "-m", "good.json", "--ids", "--jsonl"],
    ["encode", "-m", "good.json", "--dropout", "0.1"],
    ["encode", "-m", "good.json", "--seed", "1"],
    ["encode", "-m", "good.json", "--dropout", "2", "--seed", "1"],
    ["encode", "-m", "good.json", "--dropout", "0.1", "--seed", "1", "--jsonl"],
    ["decode", "-m", "missing.json"],
    ["encode", "-m", "good.json", "--dropout", "0.1", "--seed", "-1"],
    ["inspect", "missing.json"],
    ["inspect", "good.json", "--rows", "-5"],
    ["inspect"],
]


@pytest.mark.parametrize("args", CLI_MISTAKES, ids=[" ".join(a) or "no-args" for a in CLI_MISTAKES])
def test_cli_mistakes_exit_2_with_one_clear_message(tmp_path: Path, args: list[str]):
    (tmp_path / "t.tsv").write_text(FOUR_TABLE, encoding="utf-8")
    (tmp_path / "folder").mkdir()
    subwords.train(FOUR, vocab_size=22).save(tmp_path / "good.json")
    before = files_in(tmp_path)
    _, err = cli(*args, input=b"low\n", cwd=tmp_path, process=True)
    assert err.strip()
    assert files_in(tmp_path) == before  # nothing written, nothing left behind


def test_cli_decode_mistakes(tmp_path: Path):
    subwords.train(FOUR, vocab_size=22).save(tmp_path / "m.json")
    for flags, line in [((), "lo w nope"), (("--ids",), "1 2 x"), (("--ids",), "1 -2"), (("--ids",), "1 22"),
                        (("--ids",), "1 99999999999999999999999")]:
        first = "1" if flags else "low</w>"
        _, err = cli("decode", "-m", "m.json", *flags, input=f"{first}\n{line}\n", cwd=tmp_path)
        assert "line 2" in err, (flags, line, err)


# -- no partial files -----------------------------------------------------------------------------------


def test_a_failed_training_leaves_no_file_and_keeps_the_old_one(tmp_path: Path):
    (tmp_path / "t.tsv").write_text(FOUR_TABLE, encoding="utf-8")
    # Below the floor: nothing is created.
    cli("train", "--counts", "--vocab-size", "5", "-o", "m.json", "t.tsv", cwd=tmp_path)
    assert files_in(tmp_path) == {"t.tsv"}
    # An existing model is not clobbered by a failed run, nor by bad input halfway through a file.
    cli("train", "--counts", "--vocab-size", "22", "-o", "m.json", "t.tsv", cwd=tmp_path, status=0)
    good = (tmp_path / "m.json").read_bytes()
    (tmp_path / "bad.tsv").write_text(FOUR_TABLE + "oops\n", encoding="utf-8")
    for args in (["--vocab-size", "5", "t.tsv"], ["--vocab-size", "22", "bad.tsv"], ["--vocab-size", "22", "missing.tsv"]):
        cli("train", "--counts", *args, "-o", "m.json", cwd=tmp_path)
        assert (tmp_path / "m.json").read_bytes() == good
    assert files_in(tmp_path) == {"t.tsv", "bad.tsv", "m.json"}


def test_an_interrupted_training_leaves_no_file(tmp_path: Path):
    p = subprocess.Popen([sys.executable, "-m", "subwords", "train", "--vocab-size", "50", "-o", "m.json", "-"],
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=tmp_path)
    try:
        p.stdin.write(b"low lower newest widest\n" * 1000)
        p.stdin.flush()
        time.sleep(1.5)  # let it start and block on reading stdin (stdin stays open)
        p.send_signal(signal.SIGINT)
        _, err = p.communicate(timeout=60)
    finally:
        if p.poll() is None:
            p.kill()
    assert p.returncode == 130, err
    assert b"Traceback" not in err and b"interrupted" in err
    assert files_in(tmp_path) == set()


def test_api_save_failures_leave_nothing_behind(tmp_path: Path):
    tok = subwords.train(FOUR, vocab_size=22)
    (tmp_path / "folder").mkdir()
    with pytest.raises(OSError):
        tok.save(tmp_path / "folder")
    with pytest.raises(OSError):
        tok.save(tmp_path / "nowhere" / "m.json")
    assert files_in(tmp_path) == {"folder"}
    assert files_in(tmp_path / "folder") == set()


# -- one class for one kind of mistake, whichever tokenizer gets it -------------------------------


@pytest.fixture(scope="module")
def every_family(tmp_path_factory) -> dict:
    """Our own model and one tokenizer loaded from each format subwords reads."""
    from subwords import formats

    d = tmp_path_factory.mktemp("families")
    text = ["low lower newest widest lowest"] * 5
    b = subwords.train(text, spelling="bytes", pre_split="gpt2", vocab_size=270)
    formats.export(b, d / "tokenizer.json", "hf")
    formats.export(b, d / "r.tiktoken", "tiktoken")
    formats.export(subwords.train(text, spelling="front", vocab_size=30), d / "m.model", "sentencepiece")
    formats.export(subwords.train(text, spelling="end", vocab_size=30), d / "codes.bpe", "subword-nmt")
    formats.export(subwords.train(text, preset="bert", vocab_size=40), d / "vocab.txt", "vocab-txt")
    return {"subwords": subwords.train(text, vocab_size=30), "hf": formats.load(d / "tokenizer.json"),
            "tiktoken": formats.load(d / "r.tiktoken", pattern="gpt2"), "sentencepiece": formats.load(d / "m.model"),
            "subword-nmt": formats.load(d / "codes.bpe"), "vocab-txt": formats.load(d / "vocab.txt")}


@pytest.mark.parametrize("bad", [5, b"low", None], ids=["int", "bytes", "None"])
def test_a_text_that_is_not_a_str_is_an_input_error_in_every_tokenizer(every_family, bad):
    # one class from every family: TextTypeError, an InputError and a TypeError both
    for name, tok in every_family.items():
        for call in (lambda: tok.encode(bad), lambda: tok.encode_batch(["low", bad]),
                     lambda: tok.encode_pieces(bad), lambda: tok.encode_with_offsets(bad)):
            with pytest.raises(subwords.TextTypeError, match="expected text|not str") as info:
                call()
            assert isinstance(info.value, InputError) and isinstance(info.value, TypeError), name


def test_a_batch_is_read_the_same_from_any_iterable_and_its_bad_text_is_named(every_family):
    # the core families read the batch in the binding, the others in Python: the
    # same ids for a list, a tuple and a generator, str subclasses accepted, the same errors
    class Text(str):
        pass

    texts = ["low lower", "", "newest widest"]
    for name, tok in every_family.items():
        want = [tok.encode(t) for t in texts]
        for batch in (texts, tuple(texts), (t for t in texts), [Text(t) for t in texts]):
            assert tok.encode_batch(batch, threads=2) == want, name
        assert tok.encode_array(iter(texts), threads=2).tolist() == want, name
        for call in (lambda b: tok.encode_batch(b, threads=2), lambda b: tok.encode_array(b, threads=2)):
            # the type is found before the lone surrogate that comes earlier
            with pytest.raises(subwords.TextTypeError, match="text 2 of the batch is int, not str"):
                call(["low", "a\ud800b", 7])
            with pytest.raises(InputError, match="not one str"):
                call("low lower")


def test_a_long_batch_lets_go_of_every_text_it_read_and_names_a_late_bad_one(every_family):
    # the binding reads a list's texts part by part while other threads encode, holding
    # a reference to each text it has read and letting go of a part's texts once the part is
    # done. Every text's reference count must come back to what it was, on success and when a
    # late text stops the batch (the parts read before it were being encoded).
    import gc

    texts = [f"low{i} lower{i % 7} newest" for i in range(3000)]  # made here: no other owner

    def run(tok, threads):  # its lists, and the frames the errors' tracebacks hold, go with it
        want = tok.encode_batch(texts, threads=1)
        assert tok.encode_batch(texts, threads=threads) == want
        assert tok.encode_array(texts, threads=threads).tolist() == want
        for bad in (texts[:2900] + [7] + texts[2900:], texts[:100] + ["a\ud800b"] + texts[101:2900] + [None]):
            for call in (tok.encode_batch, tok.encode_array):
                with pytest.raises(subwords.TextTypeError, match=r"text 2900 of the batch is (int|NoneType), not str"):
                    call(bad, threads=threads)
        # refused where the text must become UTF-8; tiktoken's family replaces it as tiktoken
        # does, and subword-nmt's works on Python strings, as subword-nmt does
        if name not in ("tiktoken", "subword-nmt"):
            with pytest.raises(InputError, match="lone surrogate"):
                tok.encode_batch(texts[:2500] + ["a\ud800b"] + texts[2500:], threads=threads)

    gc.collect()
    before = [sys.getrefcount(t) for t in texts]
    for name, tok in every_family.items():
        for threads in (1, 2):
            run(tok, threads)
            gc.collect()
            assert [sys.getrefcount(t) for t in texts] == before, f"{name}, {threads} threads"


def test_a_lone_surrogate_is_an_input_error_in_every_family_that_needs_utf8(every_family):
    # every family that needs UTF-8 (the .model and hf families included) names the text and a
    # way out, not Python's bare UnicodeEncodeError; tiktoken's family replaces a lone surrogate
    # as tiktoken does, and subword-nmt's works on Python strings as subword-nmt does
    bad = "a\ud800b"
    for name, tok in every_family.items():
        if name in ("tiktoken", "subword-nmt"):
            continue
        for call, where in ((lambda: tok.encode(bad), "the text"),
                            (lambda: tok.encode_batch(["low", "lower", bad], threads=2), "text 2 of the batch"),
                            (lambda: tok.encode_array(["low", bad]), "text 1 of the batch"),
                            (lambda: tok.encode_pieces(bad), "the text"),
                            (lambda: tok.encode_with_offsets(bad), "the text")):
            with pytest.raises(InputError, match=rf"^{where} contains a lone surrogate \(at code point 1\).*clean the string"):
                call()


@pytest.mark.parametrize("kw", [{"vocab_size": -1}, {"vocab_size": 22, "model": "gpt"}, {"vocab_size": 22, "em_rounds": 2},
                                {"vocab_size": 22, "threads": 0}])
def test_a_bad_option_is_an_option_error(kw):
    from subwords import OptionError

    with pytest.raises(OptionError) as info:
        subwords.train(FOUR, **kw)
    assert isinstance(info.value, ValueError) and isinstance(info.value, subwords.SubwordsError)


@pytest.mark.parametrize("version", [True, False])
def test_merges_txt_names_the_line_an_editor_shows(tmp_path: Path, version: bool):
    """A bad line of a GPT-2 merges.txt is named by its line number counted from 1, whether or
    not the file opens with a ``#version`` line (it was one too many without one)."""
    import json

    from subwords.formats import load

    (tmp_path / "vocab.json").write_text(json.dumps({"a": 0, "b": 1, "ab": 2, "c": 3, "abc": 4}), encoding="utf-8")
    head = "#version: 0.2\n" if version else ""
    # hand-counted: the bad line is the header (if any), then "a b", then this one
    (tmp_path / "merges.txt").write_text(head + "a b\nab c extra\n", encoding="utf-8")
    bad = 3 if version else 2
    with pytest.raises(SubwordsError, match=rf"merges\.txt: line {bad}: 'ab c extra' is not two tokens"):
        load(tmp_path, format="vocab-merges")
