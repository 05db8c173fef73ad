"""The ``subwords`` command line, run the way a user runs it: a child process, files under
``tmp_path``, text on stdin, pieces on stdout.

Expected pieces and merges are derived by hand from the rules in DESIGN §2 (the derivations are
written next to them), never copied from a run. "BPE page" is ``seeds/000_…``; "SentencePiece
page" is ``seeds/004_…``.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

# BPE page: "The word low occurs five times, lower twice, newest six times and widest three."
FOUR_TABLE = "low\t5\nlower\t2\nnewest\t6\nwidest\t3\n"
# The same corpus as running text, one stream in table order (how two-stage BPE reads a table).
FOUR_TEXT = " ".join(["low"] * 5 + ["lower"] * 2 + ["newest"] * 6 + ["widest"] * 3) + "\n"

# `end` spelling: l o w</w> / l o w e r</w> / n e w e s t</w> / w i d e s t</w>.
# Alphabet in code-point order (11 symbols; "w" < "w</w>" as a prefix, "r</w>" < "s"):
FOUR_ALPHABET = ["d", "e", "i", "l", "n", "o", "r</w>", "s", "t</w>", "w", "w</w>"]

# The ten merges at --vocab-size 22 (22 = 11 alphabet + [UNK] + 10 learned), by hand. A pair's count
# is the sum of the counts of the words it occurs in; ties go to the smallest (left, right) in
# code-point order of the pieces as spelled (DESIGN §2).
#
#  start  l+o 7, o+w</w> 5, o+w 2, w+e 8 (lower 2 + newest 6), e+r</w> 2, n+e 6, e+w 6,
#         e+s 9 (newest 6 + widest 3), s+t</w> 9, w+i 3, i+d 3, d+e 3
#   1  e+s 9          tie with s+t</w> 9: "e" < "s"               page: "The first merge joins e and s at 9"
#         newest = n e w es t</w>, so w+e drops to 2 (lower only); w+es 6, d+es 3
#   2  es+t</w> 9     page: "the second joins that new es to the marked t, also at 9"
#         now: l+o 7, n+e 6, e+w 6, w+est</w> 6, lo.. , w+i 3, i+d 3, d+est</w> 3
#   3  l+o 7          low = lo w</w>, lower = lo w e r</w>
#   4  e+w 6          three pairs at 6: (e,w) < (n,e) < (w,est</w>)
#   5  ew+est</w> 6   tie with n+ew 6: "ew" < "n"
#   6  n+ewest</w> 6
#   7  lo+w</w> 5     page: "By the seventh merge the whole word low with its marker is one piece"
#         left: lo+w 2, w+e 2, e+r</w> 2, w+i 3, i+d 3, d+est</w> 3
#   8  d+est</w> 3    three pairs at 3: (d,est</w>) < (i,d) < (w,i)
#   9  i+dest</w> 3   tie with w+i 3: "i" < "w"
#  10  w+idest</w> 3  -> 22 rows, stop "size"; corpus 5·1 + 2·4 (lo w e r</w>) + 6·1 + 3·1 = 22 pieces
FOUR_MERGES = [
    ["e", "s"],
    ["es", "t</w>"],
    ["l", "o"],
    ["e", "w"],
    ["ew", "est</w>"],
    ["n", "ewest</w>"],
    ["lo", "w</w>"],
    ["d", "est</w>"],
    ["i", "dest</w>"],
    ["w", "idest</w>"],
]
# Learned rows follow the alphabet in merge order (docs/API.md "Row order"); each merge here makes
# a new row (no joined piece already existed).
FOUR_ROWS = ["[UNK]", *FOUR_ALPHABET, *("".join(m) for m in FOUR_MERGES)]


def run(*args: str, input: str | bytes | None = None, cwd: Path, ok: bool = True) -> subprocess.CompletedProcess:
    """``python -m subwords ARGS`` in ``cwd``. stdout is text (UTF-8); stderr never holds a traceback."""
    data = input.encode("utf-8") if isinstance(input, str) else input
    p = subprocess.run(
        [sys.executable, "-m", "subwords", *args], input=data, capture_output=True, cwd=cwd, timeout=120,
        env={**os.environ, "PYTHONIOENCODING": "utf-8"},
    )
    out = subprocess.CompletedProcess(p.args, p.returncode, p.stdout.decode("utf-8"), p.stderr.decode("utf-8"))
    assert "Traceback" not in out.stderr, out.stderr
    if ok:
        assert out.returncode == 0, out.stderr
    return out


@pytest.fixture
def four(tmp_path: Path) -> Path:
    """The four-word model at 22 rows, trained from a count table by the CLI."""
    (tmp_path / "four.tsv").write_text(FOUR_TABLE, encoding="utf-8")
    run("train", "--counts", "--vocab-size", "22", "-o", "four.json", "four.tsv", cwd=tmp_path)
    return tmp_path / "four.json"


def inspect_json(model: Path) -> dict:
    return json.loads(run("inspect", "--json", str(model), cwd=model.parent).stdout)


def encode(model: Path, text: str, *flags: str) -> str:
    return run("encode", "-m", str(model), *flags, input=text, cwd=model.parent).stdout


def decode(model: Path, text: str, *flags: str) -> str:
    return run("decode", "-m", str(model), *flags, input=text, cwd=model.parent).stdout


# -- train ----------------------------------------------------------------------------------------


def test_train_counts_gives_the_pages_22_row_table(four: Path):
    info = inspect_json(four)
    assert info["rows"] == FOUR_ROWS
    assert len(info["rows"]) == 22
    assert info["merges"] == FOUR_MERGES
    assert info["kinds"] == ["special"] + ["alphabet"] * 11 + ["learned"] * 10
    # BPE page: 11 symbols, 79 pieces before; 22 pieces after the ten merges.
    r = info["report"]
    assert (r["alphabet_size"], r["corpus_pieces_before"], r["corpus_pieces_after"], r["stop"]) == (11, 79, 22, "size")
    assert r["size_not_reached"] is False


def test_train_says_what_it_wrote(tmp_path: Path):
    (tmp_path / "four.tsv").write_text(FOUR_TABLE, encoding="utf-8")
    p = run("train", "--counts", "--vocab-size", "22", "-o", "m.json", "four.tsv", cwd=tmp_path)
    assert p.stdout == ""  # stdout stays free for pipelines; the summary goes to stderr
    assert "22 rows" in p.stderr and "10 merges" in p.stderr and "79 -> 22 pieces" in p.stderr
    q = run("train", "--counts", "--vocab-size", "22", "--quiet", "-o", "m2.json", "four.tsv", cwd=tmp_path)
    assert q.stderr == ""
    assert (tmp_path / "m.json").read_bytes() == (tmp_path / "m2.json").read_bytes()


def test_train_from_file_and_from_stdin_agree(tmp_path: Path):
    # One word per line: the same sixteen texts as the table.
    words = [w for line in FOUR_TABLE.splitlines() for w in [line.split("\t")[0]] * int(line.split("\t")[1])]
    (tmp_path / "four.txt").write_text("\n".join(words) + "\n", encoding="utf-8")
    run("train", "--vocab-size", "22", "-o", "file.json", "four.txt", cwd=tmp_path)
    run("train", "--vocab-size", "22", "-o", "stdin.json", "-", input="\n".join(words) + "\n", cwd=tmp_path)
    assert (tmp_path / "file.json").read_bytes() == (tmp_path / "stdin.json").read_bytes()
    info = inspect_json(tmp_path / "file.json")
    assert info["rows"] == FOUR_ROWS and info["merges"] == FOUR_MERGES


def test_train_from_several_files_and_a_counts_table_on_stdin(tmp_path: Path):
    lines = FOUR_TABLE.splitlines()
    (tmp_path / "a.tsv").write_text("\n".join(lines[:2]) + "\n", encoding="utf-8")
    (tmp_path / "b.tsv").write_text("\n".join(lines[2:]) + "\n", encoding="utf-8")
    run("train", "--counts", "--vocab-size", "22", "-o", "two.json", "a.tsv", "b.tsv", cwd=tmp_path)
    # A repeated word on stdin adds up: low 2 + low 3 = low 5.
    table = FOUR_TABLE.replace("low\t5\n", "low\t2\nlow\t3\n")
    run("train", "--counts", "--vocab-size", "22", "-o", "stdin.json", "-", input=table, cwd=tmp_path)
    for name in ("two.json", "stdin.json"):
        info = inspect_json(tmp_path / name)
        assert info["rows"] == FOUR_ROWS and info["merges"] == FOUR_MERGES, name


# -- encode / decode ------------------------------------------------------------------------------


def test_encode_pieces_ids_and_decode(four: Path):
    # lowest = l o w e s t</w>; replay by rank: e+s (1), es+t</w> (2), l+o (3); nothing else applies
    # (BPE page: "lowest" -> lo w est</w>). newer = n e w e r</w>: e+w (4) joins the first e w.
    assert encode(four, "lowest newer\n") == "lo w est</w> n ew e r</w>\n"
    ids = [FOUR_ROWS.index(p) for p in "lo w est</w> n ew e r</w>".split()]
    assert encode(four, "lowest newer\n", "--ids") == " ".join(map(str, ids)) + "\n"
    assert decode(four, "lo w est</w> n ew e r</w>\n") == "lowest newer\n"
    assert decode(four, " ".join(map(str, ids)) + "\n", "--ids") == "lowest newer\n"


def test_no_progress_output_when_not_on_a_terminal(four: Path):
    # Progress bars go to stderr only on a terminal; in a pipeline stderr stays empty.
    lines = "lowest newer\n" * 20_000
    for cmd, flags in (("encode", ()), ("encode", ("--ids",)), ("decode", ())):
        p = run(cmd, "-m", str(four), *flags, input=lines if cmd == "encode" else "lo w est</w>\n" * 20_000,
                cwd=four.parent)
        assert p.stderr == ""
        assert p.stdout.count("\n") == 20_000


def test_encode_writes_one_line_per_input_line(four: Path):
    text = "low\n\n   \nwidest  newest\r\nlower\n"
    out = encode(four, text)
    assert out == "low</w>\n\n\nwidest</w> newest</w>\n" + "lo w e r</w>\n"
    # decode gives back the normalized text: words joined by one space, blank lines blank.
    assert decode(four, out) == "low\n\n\nwidest newest\nlower\n"


def test_encode_jsonl_offsets_slice_back_to_the_text(four: Path):
    text = "  lowest newer"
    (obj,) = [json.loads(line) for line in encode(four, text + "\n", "--jsonl").splitlines()]
    assert set(obj) >= {"pieces", "ids", "offsets"}
    assert obj["pieces"] == ["lo", "w", "est</w>", "n", "ew", "e", "r</w>"]
    assert obj["ids"] == [FOUR_ROWS.index(p) for p in obj["pieces"]]
    assert [text[s:e] for s, e in obj["offsets"]] == ["lo", "w", "est", "n", "ew", "e", "r"]


SPELLING_CASES = {
    # spelling: (extra train flags, the mark removed when comparing a piece with its span)
    "end": ((), lambda p: p.removesuffix("</w>")),
    "continuation": ((), lambda p: p.removeprefix("##")),
    "front": ((), lambda p: p.replace("▁", "")),
    "end+bf": (("--byte-fallback",), lambda p: p.removesuffix("</w>")),
    "continuation+bf": (("--byte-fallback",), lambda p: p.removeprefix("##")),
    "front+bf": (("--byte-fallback",), lambda p: p.replace("▁", "")),
}


@pytest.mark.parametrize("case", list(SPELLING_CASES) + ["bytes"])
def test_every_spelling_round_trips_through_the_cli(tmp_path: Path, case: str):
    spelling = case.split("+")[0]
    flags = SPELLING_CASES[case][0] if case in SPELLING_CASES else ()
    corpus = "the lowest low-cost café\nnewer and wider, déjà vu\n" * 3 + FOUR_TEXT
    (tmp_path / "c.txt").write_text(corpus, encoding="utf-8")
    size = "300" if spelling == "bytes" else "40"
    run("train", "--spelling", spelling, *flags, "--vocab-size", size, "-o", "m.json", "c.txt", cwd=tmp_path)
    model = tmp_path / "m.json"
    # Every symbol here is in the corpus (or byte fallback / bytes covers it), so decoding gives
    # back the normalized text: bytes keep it exactly, the others collapse whitespace.
    text = "the  lowest\tcafé, déjà vu\nwider newer  "
    norm = text if spelling == "bytes" else "\n".join(" ".join(line.split()) for line in text.split("\n"))
    pieces = encode(model, text)
    assert decode(model, pieces) == norm + "\n"
    ids = encode(model, text, "--ids")
    assert decode(model, ids, "--ids") == norm + "\n"
    # jsonl: the same pieces and ids; every span is inside its line and they never go backwards.
    objs = [json.loads(x) for x in encode(model, text, "--jsonl").splitlines()]
    assert [" ".join(o["pieces"]) for o in objs] == pieces.splitlines()
    assert [" ".join(map(str, o["ids"])) for o in objs] == ids.splitlines()
    info = inspect_json(model)
    for line, o in zip(text.split("\n"), objs):
        starts = [s for s, _ in o["offsets"]]
        assert starts == sorted(starts)
        for piece, i, (s, e) in zip(o["pieces"], o["ids"], o["offsets"]):
            assert 0 <= s <= e <= len(line)
            if case in SPELLING_CASES and info["kinds"][i] in ("alphabet", "learned"):
                assert line[s:e] == SPELLING_CASES[case][1](piece), (piece, s, e)


def test_pieces_print_as_the_pages_write_them(tmp_path: Path):
    (tmp_path / "four.tsv").write_text(FOUR_TABLE, encoding="utf-8")
    (tmp_path / "four.txt").write_text(FOUR_TEXT, encoding="utf-8")

    def train_encode(text: str, *flags: str, data: str = "four.tsv") -> str:
        counts = ("--counts",) if data.endswith(".tsv") else ()
        run("train", *counts, *flags, "-o", "m.json", data, cwd=tmp_path)
        return encode(tmp_path / "m.json", text + "\n").rstrip("\n")

    # BPE page: café without byte fallback is 4 pieces, all stand-ins (c, a, f, é</w> have no row).
    assert train_encode("café", "--vocab-size", "22") == "[UNK] [UNK] [UNK] [UNK]"
    # With byte fallback (6 pieces on the page, plus the bare marker row here): the inner unknown
    # symbols c a f become their byte rows; the final é</w> has no row and é has none either, so
    # its bytes C3 A9 and then the bare </w> row.
    assert train_encode("café", "--vocab-size", "22", "--byte-fallback") == "<0x63> <0x61> <0x66> <0xC3> <0xA9> </w>"
    # continuation at 22 rows, by hand: ##e+##s 9 (tie with ##s+##t: "##e" < "##s"), ##es+##t 9,
    # then l+##o 7 and lo+##w 7 (low 5 + lower 2) -> lowest = low ##est.
    assert train_encode("lowest", "--vocab-size", "22", "--spelling", "continuation") == "low ##est"
    # SentencePiece page: the ▁-marked four words at 27 rows learn est, then low, then ▁low.
    assert train_encode("lowest", "--vocab-size", "27", "--spelling", "front") == "▁low est"
    # bytes: a space travels with the word after it and prints as Ġ (GPT-2's byte alphabet).
    assert "Ġlow" in train_encode("a low", "--vocab-size", "270", "--spelling", "bytes", data="four.txt").split()


def test_decode_splits_pieces_at_spaces_only(tmp_path: Path):
    # U+001F is not White_Space (docs/API.md), so it is a symbol inside a word: a piece can hold it,
    # while Python's str.split() would cut there.
    (tmp_path / "c.txt").write_text("a\x1fb a\x1fb a\x1fb low\n", encoding="utf-8")
    run("train", "--vocab-size", "20", "-o", "m.json", "c.txt", cwd=tmp_path)
    model = tmp_path / "m.json"
    pieces = encode(model, "a\x1fb low\n")
    assert "a\x1fb</w>" in pieces.split(" ")
    assert decode(model, pieces) == "a\x1fb low\n"


def test_encode_to_a_closed_pipe_is_quiet(four: Path):
    # `subwords encode ... | head -1`: the reader goes away; no traceback, no error status.
    r, w = os.pipe()
    p = subprocess.Popen([sys.executable, "-m", "subwords", "encode", "-m", str(four)],
                         stdin=subprocess.PIPE, stdout=w, stderr=subprocess.PIPE)
    os.close(w)
    os.close(r)
    _, err = p.communicate(("lowest\n" * 50_000).encode(), timeout=120)
    assert p.returncode == 0, err
    assert b"Traceback" not in err


# -- inspect --------------------------------------------------------------------------------------


def test_inspect_text(four: Path):
    out = run("inspect", str(four), cwd=four.parent).stdout
    assert "bpe" in out and "end" in out
    assert "22" in out and "1 special, 11 alphabet, 10 learned" in out
    assert "est</w>" in out and "es + t</w>" in out


def test_inspect_json_keys(four: Path):
    info = inspect_json(four)
    assert {"rows", "merges", "kinds", "report", "options"} <= set(info)
    assert info["options"]["vocab_size"] == 22 and info["options"]["spelling"] == "end"


# -- variants -------------------------------------------------------------------------------------


def test_superword_at(tmp_path: Path):
    (tmp_path / "four.txt").write_text(FOUR_TEXT, encoding="utf-8")
    run("train", "--superword-at", "22", "--vocab-size", "25", "-o", "m.json", "four.txt", cwd=tmp_path)
    info = inspect_json(tmp_path / "m.json")
    # Stage one is the 22-row table. Stage two reads the line as one stream:
    #   low</w> x5, lo w e r</w> x2, newest</w> x6, widest</w> x3.
    # Pairs across words: newest</w>+newest</w> 5, low</w>+low</w> 4, widest</w>+widest</w> 2, ...
    #   11 newest</w>+newest</w> 5 (six in a row join in three pairs, left to right)
    #   12 low</w>+low</w> 4
    #   13 at 2: (e,r</w>) < (lo,w) < (newest</w>newest</w>, ...) < (w,e) < (widest</w>, widest</w>)
    # BPE page: "three merges and only two of them produced a row that spans a space, since the
    # third joined an e to a marked r inside lower".
    assert info["merges"][:10] == FOUR_MERGES
    assert info["merges"][10:] == [["newest</w>", "newest</w>"], ["low</w>", "low</w>"], ["e", "r</w>"]]
    assert info["rows"][22:] == ["newest</w>newest</w>", "low</w>low</w>", "er</w>"]
    assert info["report"]["stage_one_merges"] == 10
    model = tmp_path / "m.json"
    out = encode(model, "newest newest low\n")
    assert out == "newest</w>newest</w> low</w>\n"
    assert decode(model, out) == "newest newest low\n"


def test_model_word(tmp_path: Path):
    (tmp_path / "four.txt").write_text(FOUR_TEXT, encoding="utf-8")
    run("train", "--model", "word", "--vocab-size", "4", "-o", "w.json", "four.txt", cwd=tmp_path)
    info = inspect_json(tmp_path / "w.json")
    # One row per unit, most frequent first: newest 6, low 5, widest 3 (lower 2 does not fit).
    assert info["rows"] == ["[UNK]", "newest</w>", "low</w>", "widest</w>"]
    assert info["merges"] == []
    assert encode(tmp_path / "w.json", "low lower\n") == "low</w> [UNK]\n"


@pytest.mark.parametrize("spelling", ["front", "continuation"])
def test_quickstart_runs_on_the_standard_library(tmp_path: Path, spelling: str):
    # continuation: Python sources hold words beginning with ## ("####" comment rules); they train
    # under the usual ## mark (the continuation is a property of the row).
    p = run("quickstart", "--vocab-size", "500", "--spelling", spelling, "-o", "q.json", cwd=tmp_path)
    lines = p.stdout.splitlines()
    sentence = "Dr. Alvarez didn't expect the low-cost re-analysis."
    assert sentence in lines
    (pieces_line,) = [x for x in lines if "pieces:" in x]
    assert ("▁" if spelling == "front" else "##") in pieces_line  # pieces print with the mark
    assert any(x.strip() == f"-> decoded: {sentence}" for x in lines)
    assert (tmp_path / "q.json").is_file()
    assert encode(tmp_path / "q.json", "hello\n").strip()


def test_module_and_entry_point_are_the_same_program(four: Path):
    exe = shutil.which("subwords")
    if exe is None:
        pytest.skip("the subwords entry point is not on PATH (package not installed)")
    for args in (["--help"], ["inspect", "--json", str(four)], ["train", "--help"]):
        a = subprocess.run([exe, *args], capture_output=True, timeout=60)
        b = subprocess.run([sys.executable, "-m", "subwords", *args], capture_output=True, timeout=60)
        assert a.returncode == b.returncode == 0
        assert a.stdout == b.stdout
    p = subprocess.run([exe, "encode", "-m", str(four)], input=b"lowest\n", capture_output=True, timeout=60)
    assert p.stdout == "lo w est</w>\n".encode()
    v = subprocess.run([exe, "--version"], capture_output=True, text=True, timeout=60)
    assert v.returncode == 0 and v.stdout.startswith("subwords ")


def test_train_reports_front_normalizations_and_writes_ordinary_files(tmp_path: Path):
    # A whitespace run and a tab are normalized by the front spelling; the report names it
    # (the report lists names, not a mapping). Files get the umask's
    # permissions, not a temporary file's 0600.
    (tmp_path / "ws.txt").write_text("a  b\tc\nab c\n", encoding="utf-8")
    r = run("train", "ws.txt", "--spelling", "front", "--vocab-size", "12", "-o", "m.json", cwd=tmp_path)
    assert "normalized the text: whitespace_runs" in r.stderr
    umask = os.umask(0)
    os.umask(umask)
    assert (tmp_path / "m.json").stat().st_mode & 0o777 == 0o666 & ~umask
