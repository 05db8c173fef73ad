"""The explorer: the four pages' 30 widgets, live, on the pages' corpora and on yours.

``subwords explore [CORPUS... | MODEL...]`` serves it on 127.0.0.1; ``subwords explore --html
FILE`` writes it as one self-contained page for the built-in corpora. Every number comes from
``widgets.py`` (the library); the page's JavaScript only draws. See docs/EXPLORE.md.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any, Callable, Optional

from ..errors import InputError, OptionError

__all__ = ["register", "serve", "write_html", "load_inputs"]

MODEL_SUFFIXES = (".json", ".model", ".tiktoken")


def write_html(path: str, progress: Optional[Callable[[str, int], None]] = None) -> int:
    """Write the static page to ``path`` (atomically); returns its size in bytes."""
    from .._io import write_atomic
    from .page import render

    html = render(static=True, progress=progress)
    write_atomic(path, html, what="page")
    return len(html.encode("utf-8"))


def load_inputs(paths: list[str]) -> tuple[dict[str, list[str]], dict[str, Any]]:
    """Split the command line's files into models (``.json``, ``.model`` or ``.tiktoken``: anything
    ``subwords.formats.load`` reads) and corpora (any other file: UTF-8 text, one text per line),
    each named by its file name."""
    from .. import formats
    from .._io import read_limited
    from .server import MAX_UPLOAD, _NAME, split_lines

    corpora: dict[str, list[str]] = {}
    models: dict[str, Any] = {}
    for p in paths:
        path = Path(p)
        name = path.name if _NAME.match(path.name) else "corpus"
        while name in corpora or name in models:
            name = f"{name}-{len(corpora) + len(models) + 1}"
        if not path.is_file():
            raise InputError(f"{p}: no such file (give corpus files, one text per line, or model files)")
        if path.suffix in MODEL_SUFFIXES:  # a text corpus could pass for a vocab.txt: go by the name
            models[name] = formats.load(path)
            continue
        data = read_limited(path, MAX_UPLOAD, "corpus for the explorer")
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as e:
            raise InputError(f"{p}: not UTF-8 (byte {e.start}) and not a model file subwords reads; "
                             "save the corpus as UTF-8") from None
        lines = split_lines(text)
        if not lines:
            raise InputError(f"{p}: the corpus is empty (give one text per line)")
        corpora[name] = lines
    return corpora, models


def serve(host: str = "127.0.0.1", port: int = 0, *, open_browser: bool = True, verbose: bool = False,
          ready: Optional[Callable[[Any], None]] = None) -> None:
    from .server import ExplorerServer

    server = ExplorerServer(host, port, verbose=verbose)
    print(f"subwords explore: serving on {server.url} (Ctrl-C stops it)", flush=True)
    if ready:
        ready(server)
    if open_browser:
        import webbrowser  # on use: every other command (train first) needs none of it

        webbrowser.open(server.url)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        print("subwords explore: stopped", file=sys.stderr)
    finally:
        server.server_close()


def cmd_explore(a: argparse.Namespace) -> int:
    from . import widgets as W

    if a.html:
        if a.inputs:
            raise OptionError("--html writes the built-in corpora only; leave out CORPUS/MODEL (serve them instead)")
        size = write_html(a.html, progress=lambda wid, n: print(f"  {wid}: {n} states", file=sys.stderr))
        print(f"wrote {a.html} ({size:,} bytes): open it in a browser, no server needed")
        return 0
    if not 0 <= a.port <= 65535:
        raise OptionError(f"--port must be from 0 to 65535, got {a.port}")
    corpora, models = load_inputs(a.inputs)
    W.USER_CORPORA.update(corpora)
    W.USER_MODELS.update(models)
    W.OPENING_CORPUS = next(iter(corpora), None)  # the first corpus named opens every large-corpus widget
    W.OPENING_MODEL = next(iter(models), None)  # the first model named opens every fitted-vocabulary widget
    from .server import _loopback

    if not _loopback(a.host):
        print(f"subwords explore: warning: serving on {a.host}, not 127.0.0.1: anyone who can reach this "
              "address can use the explorer and upload corpora to it", file=sys.stderr)
    for name, lines in corpora.items():
        print(f"  corpus {name}: {len(lines):,} lines")
    for name in models:
        print(f"  model {name}")
    try:
        serve(a.host, a.port, open_browser=not a.no_browser, verbose=a.verbose)
    except OSError as e:
        raise OSError(e.errno, f"cannot serve on {a.host}:{a.port}: {e.strerror or e}") from None
    return 0


def register(sub: Any, commands: dict[str, Any]) -> None:
    """Add the ``explore`` verb to the CLI's sub-parsers and command table."""
    x = sub.add_parser("explore", help="the pages' widgets, live, in a browser (a local server), or --html FILE")
    x.add_argument("inputs", nargs="*", metavar="CORPUS|MODEL",
                   help="corpora (UTF-8, one text per line; the first opens every large-corpus widget) or model files "
                        "(.json, .model, .tiktoken: compared on the typed text)")
    x.add_argument("--port", type=int, default=8765, help="the port (default 8765; 0 picks a free one)")
    x.add_argument("--host", default="127.0.0.1",
                   help="the address to bind (default 127.0.0.1; any other prints a warning)")
    x.add_argument("--no-browser", action="store_true", help="do not open a browser")
    x.add_argument("--html", metavar="FILE", default=None,
                   help="write one self-contained page (built-in corpora, every state precomputed) and exit")
    x.add_argument("--verbose", action="store_true", help="log every request")
    commands["explore"] = cmd_explore
