"""The fenced code blocks of a Markdown page, for the tests that run the docs' examples."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

NOT_RUN = re.compile(r"^<!-- not run: (.+\S) -->$")


@dataclass
class Fence:
    line: int  # of the opening fence, 1-based
    lang: str
    body: list[str]  # the lines inside, the fence's indent removed
    not_run: str | None  # the reason in a `<!-- not run: reason -->` line just above


def fences(page: Path) -> list[Fence]:
    lines = page.read_text(encoding="utf-8").splitlines()
    out: list[Fence] = []
    i = 0
    while i < len(lines):
        fence = re.match(r"^(\s*)(```+|~~~+)\s*(\w*)", lines[i])
        if not fence:
            i += 1
            continue
        indent, marker, lang = fence[1], fence[2], fence[3]
        j = i + 1
        while j < len(lines) and not lines[j].strip().startswith(marker):
            j += 1
        above = lines[i - 1].strip() if i else ""
        m = NOT_RUN.match(above)
        if above.startswith("<!-- not run") and not m:
            raise ValueError(f"{page.name}:{i}: a not-run mark says why: <!-- not run: the reason -->")
        body = [l[len(indent):] if l.startswith(indent) else l for l in lines[i + 1:j]]
        out.append(Fence(i + 1, lang, body, m[1] if m else None))
        i = j + 1
    return out
