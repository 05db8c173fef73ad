"""What the superword tests share: BoundlessBPE's hand-worked cases, asked of the pure-Python
reference (tests/superword/test_boundless.py) and of the Rust core (test_boundless_core.py)
alike, and the command-line round trip ``subwords count`` -> ``train --counts`` that the SuperBPE
and BoundlessBPE count-table tests both make.

Byte-level: the 256 bytes are rows 0..255, so ``vocab_size=259`` leaves room for three more rows.
The pre-split is o200k: a word takes the space before it (``"abc abc"`` -> ``abc``, `` abc``).
Ties go to the smaller ``(left, right)`` by bytes; the space 0x20 sorts before every letter.
"""

from __future__ import annotations

import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class Case:
    """A tiny corpus, the options, and what hand calculation says BoundlessBPE learns from it."""

    texts: list[str]
    vocab_size: int
    options: dict[str, Any]
    #: ("merge", left, right), ("delete", piece, b""), ("super", left, right), in the order learned
    events: list[tuple[str, bytes, bytes]]
    #: the learned rows (after the 256 bytes), in order
    rows: list[bytes]
    stop: str
    #: text -> the pieces encoding gives it
    pieces: dict[str, list[bytes]] = field(default_factory=dict)


# "abc abc" three times.  Units: abc x3, " abc" x3.  Spans: (abc, " abc") x3.
# Step 1.  Merges: (a,b) 3+3 = 6, (b,c) 6, (" ",a) 3.  Supermerges: none (no pretoken is one
#   token yet).  (a,b) and (b,c) tie at 6; a < b: merge a+b.  a and b are bytes: kept.
#   Rows 257.
# Step 2.  Units ab c, " " ab c.  Merges (ab,c) 6, (" ",ab) 3: merge ab+c.  Rows 258.
#   Deletion: f(ab) = 3 + 3 = 6 before the merge, f(ab, c) = 6, IoS = 6/6 = 1 >= 0.9:
#   ab is deleted (rows 257).  No unit is spelled with ab any more, so nothing splits.
# Step 3.  Units abc, " " abc.  Merges (" ",abc) 3.  Supermerges: (abc, " abc") needs
#   " abc" in one token, it is two: no candidate.  Merge " "+abc (3), rows 258.
#   IoS(abc) = f(" ",abc) / f(abc) = 3 / 6 = 0.5 < 0.9: abc stays; " " is a byte.
# Step 4.  No merge is left inside a unit.  Supermerge (abc, " abc"): both one token,
#   count 3 >= min_count 2: the superword "abc abc", rows 259 = vocab_size: stop "size".
# Encoding: the whole text is one superword; "ab" alone replays a+b, then the deletion of ab
# spells it a b again; " abc" stays a row.
A_DELETION_THEN_A_SUPERMERGE = Case(
    texts=["abc abc"] * 3, vocab_size=259, options={},
    events=[
        ("merge", b"a", b"b"),
        ("merge", b"ab", b"c"),
        ("delete", b"ab", b""),
        ("merge", b" ", b"abc"),
        ("super", b"abc", b" abc"),
    ],
    rows=[b"abc", b" abc", b"abc abc"], stop="size",
    pieces={"abc abc": [b"abc abc"], "ab abc": [b"a", b"b", b" abc"]},
)

# The same corpus with deletion_threshold=None: steps 1-3 as above but ab stays, so after step 3
# the rows are 256 + ab, abc, " abc" = 259 = vocab_size: no room is left for the superword.
WITHOUT_DELETIONS = Case(
    texts=["abc abc"] * 3, vocab_size=259, options={"deletion_threshold": None},
    events=[("merge", b"a", b"b"), ("merge", b"ab", b"c"), ("merge", b" ", b"abc")],
    rows=[b"ab", b"abc", b" abc"], stop="size",
    pieces={"abc abc": [b"abc", b" abc"]},
)


def write_corpus(folder: Path, texts: list[str], name: str = "corpus.txt") -> Path:
    """``texts`` written one a line to ``folder/name``, the way ``subwords train`` reads them."""
    path = folder / name
    path.write_text("\n".join(texts) + "\n", encoding="utf-8")
    return path


def run_cli(*args: str) -> subprocess.CompletedProcess[bytes]:
    """``subwords ARGS`` in a child process; a failure fails the test."""
    return subprocess.run([sys.executable, "-m", "subwords", *args], check=True, capture_output=True)


def count_then_train_cli(folder: Path, corpus: Path, preset: str, vocab_size: int) -> tuple[Path, Path]:
    """``subwords count CORPUS --preset PRESET``, then ``train --counts`` on the table, and ``train``
    on the text with the same options: the two model files (from the table, from the text)."""
    table, from_table, from_text = folder / "t.counts", folder / "a.json", folder / "b.json"
    size = ["--preset", preset, "--vocab-size", str(vocab_size)]
    run_cli("count", str(corpus), "-o", str(table), "--preset", preset, "--quiet")
    run_cli("train", str(table), "--counts", *size, "-o", str(from_table))
    run_cli("train", str(corpus), *size, "-o", str(from_text))
    return from_table, from_text
