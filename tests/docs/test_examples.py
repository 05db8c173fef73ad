"""The Python examples in README.md and the guides run, and state what they print.

The convention (docs/about.md, "Docs that match the code"):

* every ```` ```python ```` block runs, in order with the other blocks of its page, in one
  namespace per page, in a fresh folder that holds the files the guides name (``corpus.txt``,
  ``tokenizer.json``, ``cl100k_base.tiktoken`` ...: the ``guide_files`` fixture in conftest.py);
* a top-level expression whose line ends with a comment that begins with a Python value
  (``tok.merges[:3]    # [('e', 's'), ('es', 't</w>'), ('l', 'o')]: the first three``) must
  equal that value; ``0.4681...`` matches any number whose text begins ``0.4681``; a comment
  that begins with words states nothing and is not checked;
* a block whose lines start with ``>>>`` runs as a doctest (ELLIPSIS);
* a block that needs what that folder cannot hold (a cluster, a bucket), or that is not a
  program (a list of signatures), has the line ``<!-- not run: the reason -->`` just above its fence, and is not run.

docs/MEASURE.md's doctests are run by tests/measure/test_docs_measure.py, with its console
examples, so they are not run twice here.
"""

from __future__ import annotations

import ast
import doctest
import io
import re
import shutil
import tokenize
from dataclasses import dataclass
from pathlib import Path

import pytest
from doc_fences import fences

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")), *sorted((ROOT / "docs").glob("*/*.md"))]
RUN_ELSEWHERE = {"docs/MEASURE.md": "tests/measure/test_docs_measure.py"}


@dataclass
class Block:
    page: str
    line: int  # of the fence, 1-based
    code: str
    not_run: str | None


def blocks(page: Path) -> list[Block]:
    rel = page.relative_to(ROOT).as_posix()
    return [Block(rel, f.line, "\n".join(f.body), f.not_run) for f in fences(page) if f.lang == "python"]


class Prefix:
    """A stated number written with a trailing ``...``: equal to a number whose text starts so."""

    def __init__(self, digits: str) -> None:
        self.digits = digits

    def __eq__(self, other: object) -> bool:
        return isinstance(other, (int, float)) and not isinstance(other, bool) and repr(other).startswith(self.digits)

    def __repr__(self) -> str:
        return self.digits + "..."


ALLOWED = (ast.Expression, ast.Constant, ast.Tuple, ast.List, ast.Dict, ast.Set, ast.UnaryOp, ast.USub, ast.Load)


def stated(comment: str) -> tuple[bool, object]:
    """The value a comment begins with, if it begins with one: (True, value), else (False, None)."""
    text = re.sub(r"(-?\d+\.\d+)\.\.\.", r"Prefix('\1')", comment.lstrip("#").strip())
    for end in range(len(text), 0, -1):
        head = text[:end].rstrip()
        try:
            tree = ast.parse(head, mode="eval")
        except SyntaxError:
            continue
        ok = all(isinstance(n, ALLOWED) or (isinstance(n, ast.Call) and isinstance(n.func, ast.Name)
                                            and n.func.id == "Prefix")
                 or (isinstance(n, ast.Name) and n.id == "Prefix") for n in ast.walk(tree))
        if ok:
            return True, eval(compile(tree, "<stated>", "eval"), {"Prefix": Prefix, "__builtins__": {}})
    return False, None


def comments(code: str) -> dict[int, str]:
    out = {}
    for tok in tokenize.generate_tokens(io.StringIO(code).readline):
        if tok.type == tokenize.COMMENT:
            out[tok.start[0]] = tok.string
    return out


def run_script(block: Block, namespace: dict) -> int:
    """Runs the block; returns how many stated results it checked."""
    tree = ast.parse(block.code, filename=f"{block.page}:{block.line}")
    notes = comments(block.code)
    checked = 0
    for stmt in tree.body:
        where = f"{block.page}, line {block.line + stmt.lineno}"
        if isinstance(stmt, ast.Expr):
            value = eval(compile(ast.Expression(stmt.value), where, "eval"), namespace)
            note = notes.get(stmt.end_lineno or stmt.lineno)
            if note:
                has, want = stated(note)
                if has:
                    assert want == value, f"{where}: the page says {note!r}, the code gives {value!r}"
                    checked += 1
        else:
            exec(compile(ast.Module([stmt], type_ignores=[]), where, "exec"), namespace)
    return checked


def run_doctest(block: Block, namespace: dict) -> int:
    test = doctest.DocTestParser().get_doctest(block.code, namespace, f"{block.page}:{block.line}", block.page,
                                               block.line)
    out = io.StringIO()
    result = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS).run(test, out=out.write, clear_globs=False)
    assert result.failed == 0, out.getvalue()
    return result.attempted


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_page_examples_run_and_print_what_they_say(page: Path, guide_files: Path, tmp_path, monkeypatch):
    work = tmp_path / "work"
    shutil.copytree(guide_files, work)
    monkeypatch.chdir(work)
    namespace: dict = {"__name__": "__docs__"}
    ran = checked = 0
    for block in blocks(page):
        if block.not_run:
            continue
        if block.code.lstrip().startswith(">>>"):
            if block.page in RUN_ELSEWHERE:
                continue
            checked += run_doctest(block, namespace)
        else:
            checked += run_script(block, namespace)
        ran += 1
    print(f"{page.relative_to(ROOT)}: {ran} blocks run, {checked} results checked")


def test_the_readme_tour_states_results_that_are_checked(guide_files: Path, tmp_path, monkeypatch):
    """The README's examples are run with their results checked (not only run)."""
    shutil.copytree(guide_files, tmp_path / "work")
    monkeypatch.chdir(tmp_path / "work")
    namespace: dict = {"__name__": "__docs__"}
    readme = [b for b in blocks(ROOT / "README.md") if not b.not_run]
    assert readme, "README.md has no runnable Python example"
    assert sum(run_script(b, namespace) for b in readme) >= 5


def test_the_checker_fails_a_wrong_statement():
    """A stated result that differs from the code's fails; a comment in words is not a statement."""
    ns: dict = {}
    with pytest.raises(AssertionError, match="the page says"):
        run_script(Block("x.md", 1, "1 + 1    # 3", None), ns)
    assert run_script(Block("x.md", 1, "1 + 1    # 2: two", None), ns) == 1
    assert run_script(Block("x.md", 1, "0.46810289    # 0.4681...", None), ns) == 1
    assert run_script(Block("x.md", 1, "[1, 2]    # the list", None), ns) == 0
    assert stated("# 22 (from 79)") == (True, 22)
    assert stated("# GIL released") == (False, None)
