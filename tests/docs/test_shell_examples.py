"""The shell examples in README.md and the guides: every command parses, and the blocks run.

The convention (docs/about.md, "Docs that match the code"):

* every ``subwords ...`` command in a ```` ```sh ```` block is parsed by the command line's own
  parser, so a flag or subcommand the CLI lacks fails the suite. An optional part written
  ``[--flag VALUE]`` is parsed both left out and written in (unless VALUE is a placeholder in
  capitals); alternatives ``[A | B]`` and ``...`` placeholders are left out;
* every block runs, line by line, with optional parts left out, in one fresh folder per page that
  holds the files the guides name (``corpus.txt``, ``text.txt``, ``held.txt``, ``table.tsv``,
  ``tokenizer.model`` ...: the ``guide_files`` fixture in conftest.py), and each line must exit 0. Lines that install
  packages, run the test suite, or start the explorer's server are parsed and not run (``OWN_RUN``
  says where each is exercised). A block that needs what the folder cannot hold (a cluster, a
  bucket, OpenAI's rank files) has ``<!-- not run: the reason -->`` just above its fence, and is
  only parsed.
"""

from __future__ import annotations

import argparse
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from doc_fences import fences

from subwords.cli import build_parser

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")), *sorted((ROOT / "docs").glob("*/*.md"))]
SHELL = {"sh", "bash", "shell"}  # docs/MEASURE.md's ```console sessions: tests/measure/test_docs_measure.py
# Lines the folder cannot run, and where the suite runs them instead.
OWN_RUN = {
    "pip install": "tests/packaging/test_wheel.py installs the wheel into a new virtualenv",
    "python -m pip install": ".ci/run runs the README's install command",
    "python -m pytest": ".ci/run runs the README's test command",
    "subwords explore": "tests/explore/ serves the explorer and drives it in chromium (--html runs here)",
    "maturin build": "tests/packaging/test_wheel.py builds the wheel and the sdist",
    "mkdocs build": "tests/docs/test_site.py builds the site in strict mode",
}


def shell_blocks(page: Path) -> list[tuple[int, list[str], str | None]]:
    """(fence line, logical lines, not-run reason) for each shell block of a page."""
    out = []
    for f in fences(page):
        if f.lang in SHELL:
            joined = "\n".join(l.strip() for l in f.body).replace("\\\n", " ")
            out.append((f.line, [l for l in joined.splitlines() if l and not l.startswith("#")], f.not_run))
    return out


OPTIONAL = re.compile(r"(?<![\w'\"])\[([^\[\]]*)\](?!['\"])")  # not '[SEP]', a quoted token


def variants(line: str) -> list[str]:
    """The line with its optional parts left out, and (where they hold no placeholder) written in."""
    left_out = OPTIONAL.sub("", line)
    def keep(m: re.Match) -> str:
        inner = m[1]
        return "" if "|" in inner or "..." in inner or re.search(r"\b[A-Z][A-Z_]*\b", inner) else inner
    written = OPTIONAL.sub(keep, line)
    return [left_out] if written == left_out else [left_out, written]


def commands(line: str) -> list[list[str]]:
    """The argument lists of the `subwords` commands in a pipeline, redirections removed."""
    words = shlex.split(line, comments=True)
    out: list[list[str]] = []
    current: list[str] = []
    skip = False
    for w in [*words, "|"]:
        if skip:
            skip = False
            continue
        if w == "|":
            if current and current[0] == "subwords":
                out.append(current[1:])
            current = []
        elif w in {"<", ">", "2>"}:
            skip = True
        else:
            current.append(w)
    return out


def own_run(line: str) -> str | None:
    bare = line.strip()
    for head, where in OWN_RUN.items():
        if bare.startswith(head) and not (head == "subwords explore" and "--html" in bare):
            return where
    return None


def test_the_guides_have_shell_examples():
    found = sum(len(lines) for page in PAGES for _, lines, _ in shell_blocks(page))
    assert found >= 40, f"only {found} shell lines found: has the fence convention changed?"


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_every_command_parses(page: Path):
    parser = build_parser()
    for fence, lines, _ in shell_blocks(page):
        for line in lines:
            for variant in variants(line):
                for argv in commands(variant):
                    try:
                        parser.parse_args(argv)
                    except SystemExit as e:
                        pytest.fail(f"{page.name}:{fence}: `subwords {' '.join(argv)}` does not parse (exit {e.code})")


def test_the_parse_check_fails_a_wrong_flag():
    """A flag the CLI lacks fails, so the parse check can fail."""
    with pytest.raises(SystemExit):
        build_parser().parse_args(commands("subwords train --no-such-flag -o m.json corpus.txt")[0])
    assert variants("subwords count x [--tsv] [--workers N] [A | B] --eos '[SEP]'") == [
        "subwords count x    --eos '[SEP]'", "subwords count x --tsv   --eos '[SEP]'"]
    assert commands("echo hi | subwords encode -m m.json < t.txt > out # note") == [["encode", "-m", "m.json"]]


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_every_block_runs(page: Path, guide_files: Path, tmp_path: Path):
    work = tmp_path / "work"
    shutil.copytree(guide_files, work)
    run = parsed_only = 0
    for fence, lines, not_run in shell_blocks(page):
        for line in lines:
            if not_run or own_run(line):
                parsed_only += 1
                continue
            command = re.sub(r"(^|\|\s*)subwords ", rf"\1{shlex.quote(sys.executable)} -m subwords ",
                             variants(line)[0])
            done = subprocess.run(["bash", "-o", "pipefail", "-c", command], cwd=work, capture_output=True,
                                  text=True, timeout=600)
            assert done.returncode == 0, (
                f"{page.name}:{fence}: `{line}` exited {done.returncode}:\n{done.stderr[-2000:]}")
            run += 1
    print(f"{page.relative_to(ROOT)}: {run} shell lines run, {parsed_only} parsed only")
