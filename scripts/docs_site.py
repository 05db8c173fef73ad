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
* on the benchmarks page, every table with two or more columns of ratios (``2.52× (65 / 111)``)
  gets a bar chart beneath it, drawn from the table's own cells as inline SVG;
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


RATIO = re.compile(r"^(\d+(?:\.\d+)?)×")
COLOURS = ["#3f51b5", "#e67e22", "#2e7d32", "#8e24aa", "#c62828", "#00838f"]


def _cells(line: str) -> list[str]:
    return [c.strip() for c in line.strip().strip("|").split("|")]


def _esc(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("`", "")


def ratio_plot(header: list[str], rows: list[list[str]]) -> str | None:
    """Horizontal grouped bars of a table's ratio columns: one group per row, one bar per column,
    and a line at 1× (level with the peer). None when fewer than two columns hold ratios."""
    columns = [j for j in range(1, len(header))
               if all(j < len(r) and RATIO.match(r[j]) for r in rows)]
    if len(columns) < 2 or not rows:
        return None
    shown = [[RATIO.match(r[j])[1] for j in columns] for r in rows]  # the table's own digits
    values = [[float(t) for t in r] for r in shown]
    top = max(max(v) for v in values)
    label_w, plot_w, bar_h, gap = 150, 430, 11, 10
    group_h = bar_h * len(columns) + gap
    legend_h = 18 * len(columns)
    height = 20 + group_h * len(rows) + legend_h + 10
    x = lambda v: label_w + plot_w * v / top  # noqa: E731
    parts = [f'<svg class="bench-plot" role="img" viewBox="0 0 640 {height}" width="640" height="{height}" '
             'xmlns="http://www.w3.org/2000/svg" style="max-width: 100%; font: 12px sans-serif">']
    for i, (row, vals, texts) in enumerate(zip(rows, values, shown)):
        y0 = 10 + i * group_h
        parts.append(f'<text x="{label_w - 6}" y="{y0 + group_h / 2}" text-anchor="end">{_esc(row[0])}</text>')
        for k, (v, t) in enumerate(zip(vals, texts)):
            y = y0 + k * bar_h
            parts.append(f'<rect class="bar" x="{label_w}" y="{y}" width="{x(v) - label_w:.1f}" height="{bar_h - 2}" '
                         f'fill="{COLOURS[k % len(COLOURS)]}"><title>{_esc(header[columns[k]])}: {t}×</title></rect>')
            parts.append(f'<text x="{x(v) + 3:.1f}" y="{y + bar_h - 3}">{t}×</text>')
    one = x(1.0)
    bottom = 10 + group_h * len(rows)
    parts.append(f'<line x1="{one:.1f}" x2="{one:.1f}" y1="6" y2="{bottom}" stroke="#000" stroke-dasharray="3 3"/>')
    parts.append(f'<text x="{one + 3:.1f}" y="{bottom + 2}">1× (level)</text>')
    for k, j in enumerate(columns):
        y = bottom + 12 + 18 * k
        parts.append(f'<rect x="{label_w}" y="{y}" width="12" height="12" fill="{COLOURS[k % len(COLOURS)]}"/>')
        parts.append(f'<text x="{label_w + 18}" y="{y + 10}">{_esc(header[j])}</text>')
    parts.append("</svg>")
    return "".join(parts)


def add_plots(markdown: str) -> str:
    """A chart under every table of ratios (see ratio_plot)."""
    lines = markdown.split("\n")
    out: list[str] = []
    i = 0
    while i < len(lines):
        if lines[i].startswith("|") and i + 1 < len(lines) and re.match(r"^\|[\s:|-]+\|$", lines[i + 1]):
            j = i + 2
            while j < len(lines) and lines[j].startswith("|"):
                j += 1
            out += lines[i:j]
            svg = ratio_plot(_cells(lines[i]), [_cells(line) for line in lines[i + 2:j]])
            if svg:
                out += ["", f'<figure class="bench-plot">{svg}<figcaption>The ratios of the table above as bars: '
                        "beyond 1×, subwords is ahead.</figcaption></figure>"]
            i = j
            continue
        out.append(lines[i])
        i += 1
    return "\n".join(out)


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
        if m[1] == "benchmarks/README.md":
            markdown = add_plots(markdown)
    return _rewrite(markdown, source, page_file.parent, docs, page.file.src_path)


def on_post_build(config):  # noqa: ANN001, ANN201 (mkdocs' hook signature)
    out = Path(config["site_dir"]) / "explorer.html"
    r = subprocess.run([sys.executable, "-m", "subwords", "explore", "--html", str(out)], capture_output=True,
                       text=True, timeout=900)
    if r.returncode != 0 or not out.is_file():
        raise PluginError(f"subwords explore --html failed (exit {r.returncode}):\n{r.stderr[-3000:]}")
