"""The docs name only what exists: every repository path and every ``subwords.X`` name that
README.md, the guides (docs/*.md) and the benchmarks page mention.

A path is a word that starts with one of the repository's top folders (``crates/…``,
``python/…``, ``tests/…``, ``benchmarks/…``, ``docs/…``, ``scripts/…``, ``fuzz/…``, ``.ci/…``,
``.github/…``) or a source file's name (``*.py``, ``*.rs``) in code type; globs (``*``), braces
(``{read,write}``) and placeholders (``<format>``) must match at least one file. A bare file name
or a partial path (``learners/merge.rs``) must be the end of some file's path in the repository.
Folders the repository ignores because programs make them (``/benchmarks/corpora/`` in
.gitignore: the corpora builder's output) may be named with what goes in them.
A name is ``subwords`` followed by dotted attributes: each must be importable
(``import subwords.X`` or an attribute of what came before).
"""

from __future__ import annotations

import importlib
import itertools
import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCS = [ROOT / "README.md", ROOT / "benchmarks" / "README.md", *sorted((ROOT / "docs").glob("*.md")),
        *sorted((ROOT / "docs").glob("*/*.md"))]
TOP = ("crates", "python", "tests", "benchmarks", "docs", "scripts", "fuzz", ".ci", ".github")
PATH = re.compile(r"(?<![\w./-])((?:" + "|".join(re.escape(t) for t in TOP) + r")/[\w.*{},<>/-]*)")
CODE = re.compile(r"`([^`\n]+)`")
SOURCE = re.compile(r"^[\w./{},<>*-]+\.(?:py|rs)$")
NAME = re.compile(r"(?<![\w./-])subwords((?:\.[A-Za-z_]\w*)+)")


def repo_files() -> list[str]:
    out = subprocess.run(["git", "ls-files", "-co", "--exclude-standard"], cwd=ROOT, capture_output=True, text=True,
                         check=True).stdout.splitlines()
    return [f for f in out if (ROOT / f).exists()]


FILES = repo_files()
FOLDERS = sorted({str(Path(f).parent.as_posix()) for f in FILES} | {p for f in FILES for p in
                 (str(Path(*Path(f).parts[:i]).as_posix()) for i in range(1, len(Path(f).parts)))})


# made by programs, ignored by git: .gitignore's "/folder/" lines other than build output
GENERATED = tuple(line.strip().lstrip("/") for line in (ROOT / ".gitignore").read_text(encoding="utf-8").splitlines()
                  if line.startswith("/") and line.strip().endswith("/") and line.strip() not in ("/dist/",))


def expand(path: str) -> list[str]:
    """Brace alternatives spelled out; placeholders and globs as regex wildcards."""
    m = re.search(r"\{([^{}]*)\}", path)
    if m:
        return list(itertools.chain.from_iterable(expand(path[:m.start()] + alt + path[m.end():])
                                                  for alt in m[1].split(",")))
    return [path]


def to_regex(path: str) -> re.Pattern[str]:
    out = ""
    for part in re.split(r"(\*\*/|\*\*|\*|<[^<>/]+>)", path):
        if part in ("**/", "**"):
            out += r"(?:.*/)?" if part == "**/" else r".*"
        elif part == "*" or (part.startswith("<") and part.endswith(">")):
            out += r"[^/]+"
        else:
            out += re.escape(part)
    return re.compile(out)


def exists(path: str, doc: Path, anywhere: bool) -> bool:
    path = path.rstrip(".,;:)")
    if path.startswith(GENERATED) or path + "/" in GENERATED:
        return True
    path = path.rstrip("/")
    for alt in expand(path):
        rx = to_regex(alt)
        candidates = FILES + FOLDERS
        if any(rx.fullmatch(c) for c in candidates):
            return True
        rel = (doc.parent / alt).resolve()
        if rel.is_relative_to(ROOT) and any(rx.fullmatch(c) for c in [rel.relative_to(ROOT).as_posix()]) and rel.exists():
            return True
        if anywhere and any(re.fullmatch(r"(?:.*/)?" + rx.pattern, c) for c in candidates):
            return True
    return False


def mentions(doc: Path) -> tuple[set[str], set[str], set[str]]:
    text = doc.read_text(encoding="utf-8")
    paths = set(PATH.findall(text))
    partial = {c for c in CODE.findall(text) for c in [c.strip()] if SOURCE.match(c) and not PATH.fullmatch(c)}
    names = {"subwords" + m for m in NAME.findall(text)}
    return paths, partial, names


def resolves(name: str) -> bool:
    parts = name.split(".")
    obj = importlib.import_module(parts[0])
    for i, attr in enumerate(parts[1:], start=1):
        if hasattr(obj, attr):
            obj = getattr(obj, attr)
            continue
        try:
            obj = importlib.import_module(".".join(parts[: i + 1]))
        except ModuleNotFoundError:
            return False
    return True


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_every_path_the_doc_names_exists(doc: Path):
    paths, partial, _ = mentions(doc)
    missing = sorted(p for p in paths if not exists(p, doc, anywhere=False))
    missing += sorted(p for p in partial if not exists(p, doc, anywhere=True))
    assert not missing, f"{doc.relative_to(ROOT)} names paths that do not exist: {missing}"


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_every_subwords_name_the_doc_mentions_is_importable(doc: Path):
    _, _, names = mentions(doc)
    missing = sorted(n for n in names if not resolves(n))
    assert not missing, f"{doc.relative_to(ROOT)} mentions names that do not exist: {missing}"


def test_the_checks_see_the_docs():
    """The patterns find what the docs are known to hold, so a pass is not a pass on nothing."""
    paths, partial, names = mentions(ROOT / "README.md")
    assert "benchmarks/README.md" in paths and "subwords.load" in names
    assert not exists("crates/subwords-core/src/no_such_file.rs", ROOT / "README.md", anywhere=False)
    assert not exists("no_such_module.rs", ROOT / "README.md", anywhere=True)
    assert exists("learners/merge/engine.rs", ROOT / "README.md", anywhere=True)
    assert exists("engine.rs", ROOT / "README.md", anywhere=True)
    assert exists("python/subwords/formats/<format>/{read,write}.py", ROOT / "README.md", anywhere=False)
    assert "benchmarks/corpora/" in GENERATED and exists("benchmarks/corpora/english.txt", ROOT, anywhere=False)
    assert not resolves("subwords.no_such_name") and resolves("subwords.formats.export")
