"""The package has no import cycle: every ``import`` of one subwords module by another, at the
top of a file or inside a function (a deferred import is still a dependency), read from the
source with ``ast``, forms a graph without cycles. Each format's folder holds its reader and its
writer side by side."""

from __future__ import annotations

import ast
from pathlib import Path

import subwords

PACKAGE = Path(subwords.__file__).resolve().parent


def module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imports_of(path: Path) -> set[str]:
    """The subwords modules ``path`` imports (``from . import x`` counts as importing ``x``)."""
    name = module_name(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names if a.name.startswith("subwords"))
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if not target.startswith("subwords"):
                continue
            for a in node.names:  # `from pkg import mod` imports the module pkg.mod when it is one
                sub = f"{target}.{a.name}"
                out.add(sub if sub in MODULES else target)
    out.discard(name)
    return out


MODULES = {module_name(p): p for p in PACKAGE.rglob("*.py")}
# the compiled engine imports nothing of ours; it is a module all the same (typed by _core.pyi)
MODULES["subwords._core"] = PACKAGE / "_core.pyi"


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                found.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def graph_without_packages() -> dict[str, set[str]]:
    # A package's __init__ only re-exports its modules; an edge into a package stands for the
    # modules it re-exports, so it is followed through the __init__ like any other module.
    return {name: ({t for t in imports_of(path) if t in MODULES} if path.suffix == ".py" else set())
            for name, path in MODULES.items()}


def test_the_checker_sees_a_cycle():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_no_import_cycles():
    graph = graph_without_packages()
    assert "subwords._api" in graph["subwords.formats.sentencepiece.read"]  # the graph is read
    assert cycles(graph) == []


def test_each_format_reads_and_writes_side_by_side():
    for fmt in ("huggingface", "sentencepiece", "tiktoken", "subword_nmt", "vocab_txt"):
        folder = PACKAGE / "formats" / fmt
        assert (folder / "read.py").is_file() and (folder / "write.py").is_file(), fmt
