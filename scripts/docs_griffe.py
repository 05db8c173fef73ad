"""A griffe extension for the site's API reference (mkdocs.yml: mkdocstrings' ``extensions``).

The docstrings are reStructuredText-flavoured plain text with doctest examples (``>>>`` lines and
their output), which ``tests/api/test_doctests.py`` runs. Markdown would read those lines as
prose (and ``[...]`` in an output as a link), so each run of doctest lines is fenced as a
``pycon`` code block, and Sphinx roles (``:class:`X```) are shown as the code they name.
"""

from __future__ import annotations

import re
from typing import Any

from griffe import Extension, Object

ROLE = re.compile(r":(?:class|func|meth|mod|attr|data|exc|obj):`~?([^`]+)`")


def fence_doctests(text: str) -> str:
    out: list[str] = []
    lines = text.split("\n")
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.lstrip().startswith(">>>"):
            indent = line[: len(line) - len(line.lstrip())]
            block = []
            while i < len(lines) and lines[i].strip() and lines[i].startswith(indent):
                block.append(lines[i][len(indent):])
                i += 1
            out += [f"{indent}```pycon", *(indent + b for b in block), f"{indent}```"]
            continue
        out.append(ROLE.sub(r"`\1`", line))
        i += 1
    return "\n".join(out)


class FenceDoctests(Extension):
    def on_instance(self, *, obj: Object, **kwargs: Any) -> None:
        if obj.docstring is not None:
            obj.docstring.value = fence_doctests(obj.docstring.value)
