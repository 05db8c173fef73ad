"""MkDocs hooks for the documentation site (mkdocs.yml: ``hooks``).

The guides are written to be read on the repository too, so their links are relative to the file
they sit in, and some point outside docs/ (to benchmarks/, to the sources). Here:

* a page whose Markdown is the one line ``<!-- site: include PATH -->`` (plus text for readers
  of the repository) becomes the file PATH (repository-relative): the home page is README.md,
  the benchmarks page is benchmarks/README.md;
* every relative link is resolved against the file the text came from. A link to a file that
  does not exist stops the build (mkdocs' own check cannot see links that leave docs/). A link
  into docs/ is rewritten relative to the page; a link to anything else in the repository becomes
  its path in code type, since the site is read without the repository beside it;
* after the build, the explorer's self-contained page (``subwords explore --html``: every
  widget's states precomputed, no server, no network) is written to ``explorer.html`` at the
  site's root, which the page docs/explorer.md shows in a frame. It takes the built package.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path, PurePosixPath

from mkdocs.exceptions import PluginError

ROOT = Path(__file__).resolve().parent.parent
INCLUDE = re.compile(r"^<!-- site: include (\S+) -->$", re.M)
LINK = re.compile(r"(?<!!)\[([^\]\n]+)\]\(([^)\s]+)\)")


def _rewrite(text: str, source: Path, page_dir: Path, docs: Path, where: str) -> str:
    def one(m: re.Match[str]) -> str:
        label, target = m[1], m[2]
        if re.match(r"^[a-z][a-z0-9+.-]*:", target) or target.startswith("#"):
            return m[0]
        path, _, anchor = target.partition("#")
        resolved = Path(os.path.normpath(source.parent / path))
        if not resolved.exists():
            raise PluginError(f"{where}: the link [{label}]({target}) points at {resolved.relative_to(ROOT) if resolved.is_relative_to(ROOT) else resolved}, which does not exist")
        if resolved.is_relative_to(docs):
            rel = PurePosixPath(os.path.relpath(resolved, page_dir).replace(os.sep, "/"))
            return f"[{label}]({rel}{'#' + anchor if anchor else ''})"
        shown = resolved.relative_to(ROOT).as_posix() + ("/" if resolved.is_dir() else "")
        return label if shown.rstrip("/") in label else f"{label} (`{shown}`)"

    out: list[str] = []
    inside = False
    # split keeps the fence markers: text, marker, text, marker, ...; link rewriting only outside fences
    chunks = re.split(r"(^(?:```|~~~).*$)", text, flags=re.M)
    for chunk in chunks:
        if re.match(r"^(```|~~~)", chunk):
            inside = not inside
            out.append(chunk)
        elif inside:
            out.append(chunk)
        else:
            # inline code spans keep their text as is
            pieces = re.split(r"(`[^`\n]*`)", chunk)
            out.append("".join(p if p.startswith("`") else LINK.sub(one, p) for p in pieces))
    return "".join(out)


def on_page_markdown(markdown, page, config, files):  # noqa: ANN001, ANN201 (mkdocs' hook signature)
    docs = Path(config["docs_dir"]).resolve()
    page_file = docs / page.file.src_path
    source = page_file
    m = INCLUDE.search(markdown)
    if m:
        source = (ROOT / m[1]).resolve()
        if not source.is_file():
            raise PluginError(f"{page.file.src_path}: the included file {m[1]} does not exist")
        markdown = source.read_text(encoding="utf-8")
    return _rewrite(markdown, source, page_file.parent, docs, page.file.src_path)


def on_post_build(config):  # noqa: ANN001, ANN201 (mkdocs' hook signature)
    out = Path(config["site_dir"]) / "explorer.html"
    r = subprocess.run([sys.executable, "-m", "subwords", "explore", "--html", str(out)], capture_output=True,
                       text=True, timeout=900)
    if r.returncode != 0 or not out.is_file():
        raise PluginError(f"subwords explore --html failed (exit {r.returncode}):\n{r.stderr[-3000:]}")
