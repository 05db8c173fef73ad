"""The explorer's one page, for the server (code and style fetched from it) or as one
self-contained file (``subwords explore --html``: code, style and every widget's precomputed
results inline; no network, opens from disk)."""

from __future__ import annotations

import json
from importlib import resources
from typing import Any, Callable, Optional

from . import corpora as C
from . import widgets as W


def static_text(name: str) -> str:
    """One of the page's own files (``static/``), shipped as package data."""
    return resources.files("subwords.explore").joinpath("static").joinpath(name).read_text(encoding="utf-8")


def catalogue() -> dict[str, Any]:
    """What the page lists: the widgets, the pages they belong to, and the user corpora."""
    return {"widgets": W.specs(), "pages": W.PAGES, "corpora": sorted(W.USER_CORPORA),
            "models": sorted(W.USER_MODELS), "sentence": C.SENTENCE, "max_text": W.MAX_TEXT}


def state_key(state: dict[str, Any]) -> str:
    """The one spelling of a state both sides agree on (the page's ``stateKey`` in app.js)."""
    return json.dumps(state, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def _script_json(value: Any) -> str:
    # inside <script type="application/json">: no "</" may appear, nor U+2028/9 surprises
    text = json.dumps(value, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
    return text.replace("</", "<\\/").replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")


def precompute(progress: Optional[Callable[[str, int], None]] = None) -> dict[str, dict[str, Any]]:
    """Every state of every widget on the built-in corpora: ``{widget: {state key: result}}``;
    a state the widget refuses is stored as ``{"error": message}``, as the server would answer."""
    out: dict[str, dict[str, Any]] = {}
    for w in W.WIDGETS.values():
        results: dict[str, Any] = {}
        for state in W.all_states(w):
            try:
                results[state_key(state)] = W.compute(w.id, state)
            except W.ExploreError as e:
                results[state_key(state)] = {"error": str(e)}
        out[w.id] = results
        if progress:
            progress(w.id, len(results))
    return out


def render(static: bool, progress: Optional[Callable[[str, int], None]] = None) -> str:

    html = static_text("index.html")
    if static:
        data = {"mode": "static", **catalogue(), "results": precompute(progress)}
        html = html.replace('<link rel="stylesheet" href="app.css">', "<style>\n" + static_text("app.css") + "\n</style>")
        html = html.replace('<script src="app.js"></script>',
                            "<script>\n" + static_text("app.js").replace("</script", "<\\/script") + "\n</script>")
    else:
        data = {"mode": "server"}
    return html.replace("{{DATA}}", _script_json(data))
