"""docs/MEASURE.md cannot go stale: its Python examples run as doctests, and each ``console``
block's ``$ subwords ...`` command is run and must print exactly what the page shows. The
measuring modules' docstring examples run too."""

from __future__ import annotations

import doctest
import importlib
import re
import shlex
from pathlib import Path

import pytest

from subwords.cli import main

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "MEASURE.md"
FOUR = {"low": 5, "lower": 2, "newest": 6, "widest": 3}


def test_page_python_examples():
    result = doctest.testfile(str(PAGE), module_relative=False, optionflags=doctest.ELLIPSIS)
    assert result.failed == 0
    assert result.attempted >= 20


def _console_blocks() -> list[tuple[str, str]]:
    out = []
    for block in re.findall(r"```console\n(.*?)```", PAGE.read_text(encoding="utf-8"), flags=re.S):
        lines = block.splitlines()
        assert lines[0].startswith("$ "), block
        out.append((lines[0][2:], "\n".join(lines[1:]) + "\n"))
    return out


def test_page_has_console_examples():
    assert len(_console_blocks()) >= 1


@pytest.mark.parametrize("command, shown", _console_blocks())
def test_page_console_examples(command, shown, tmp_path, monkeypatch, capsys):
    (tmp_path / "four.tsv").write_text("".join(f"{w}\t{c}\n" for w, c in FOUR.items()), encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    argv = shlex.split(command)
    assert argv[0] == "subwords"
    assert main(argv[1:]) == 0
    assert capsys.readouterr().out == shown


@pytest.mark.parametrize("name", ["subwords.measure.trace", "subwords.measure.curve", "subwords.measure.compare",
                                  "subwords.measure.metrics"])
def test_docstring_examples(name):
    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS)
    assert result.failed == 0
    assert result.attempted > 0
