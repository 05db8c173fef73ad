"""Plots of curves, matched comparisons, traces and metrics (matplotlib, the ``plot`` extra).

matplotlib is imported only when a plot is asked for; without it the error says what to
install. The figure is rendered in memory and written atomically (PNG or SVG, by the suffix).
"""

from __future__ import annotations

import io
import os
from typing import Any, Sequence

from .._io import write_atomic
from ..errors import OptionError

INSTALL = 'pip install "subwords[plot]"'


def _pyplot() -> Any:
    try:
        import matplotlib

        matplotlib.use("Agg")  # no display needed; files only
        import matplotlib.pyplot as plt
    except ImportError:
        raise OptionError(f"plots need matplotlib, which is not installed; install it with: {INSTALL}") from None
    return plt


def _format(path: str) -> str:
    ext = os.path.splitext(path)[1].lower()
    if ext not in (".png", ".svg"):
        raise OptionError(f"--plot {path}: the file must end in .png or .svg")
    return ext[1:]


def check_path(path: str) -> None:
    """Refuses a plot path before any work is done (bad suffix, missing folder, no matplotlib)."""
    _format(path)
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        raise OptionError(f"--plot {path}: the folder {folder} does not exist")
    _pyplot()


def _save(fig: Any, path: str) -> None:
    buf = io.BytesIO()
    fig.savefig(buf, format=_format(path), bbox_inches="tight")
    _pyplot().close(fig)
    write_atomic(path, buf.getvalue(), "plot")


def plot_curve(points: Sequence[Any], path: str, title: str = "") -> None:
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(6, 4))
    xs = [p.rows for p in points]
    ax.plot(xs, [p.corpus_pieces for p in points], marker="o", label="corpus pieces")
    if points and points[0].heldout_pieces is not None:
        ax.plot(xs, [p.heldout_pieces for p in points], marker="s", label="held-out pieces")
    ax.set_xlabel("rows")
    ax.set_ylabel("pieces")
    ax.set_title(title)
    ax.legend()
    _save(fig, path)


def plot_matched(points: Sequence[Any], path: str, labels: tuple[str, str] = ("a", "b"), title: str = "") -> None:
    plt = _pyplot()
    fig, (ax, bx) = plt.subplots(1, 2, figsize=(10, 4))
    xs = [p.size for p in points]
    ax.plot(xs, [p.a.corpus_pieces for p in points], marker="o", label=labels[0])
    ax.plot(xs, [p.b.corpus_pieces for p in points], marker="s", label=labels[1])
    ax.set_xlabel("size asked")
    ax.set_ylabel("corpus pieces")
    ax.legend()
    bx.plot(xs, [p.shared for p in points], marker="o", label="shared rows")
    bx.plot(xs, [p.only_a for p in points], marker="^", label=f"only {labels[0]}")
    bx.plot(xs, [p.only_b for p in points], marker="v", label=f"only {labels[1]}")
    bx.set_xlabel("size asked")
    bx.set_ylabel("rows")
    bx.legend()
    fig.suptitle(title)
    _save(fig, path)


def plot_trace(t: Any, path: str) -> None:
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(6, 4))
    if hasattr(t, "steps"):
        ax.plot(range(len(t.steps) + 1), t.corpus_lengths(), marker="o")
        ax.set_xlabel("merges")
        ax.set_ylabel("corpus pieces")
    else:
        ax.plot([r.size for r in t.rounds], [r.log_likelihood for r in t.rounds], marker="o")
        ax.invert_xaxis()
        ax.set_xlabel("table size")
        ax.set_ylabel("log-likelihood")
    _save(fig, path)


def plot_metrics(ms: Sequence[Any], path: str) -> None:
    plt = _pyplot()
    names = [m.model for m in ms]
    fig, axes = plt.subplots(1, 3, figsize=(12, 4))
    for ax, (attr, label) in zip(axes, (("pieces_per_word", "pieces per word"), ("bytes_per_piece", "bytes per piece"),
                                        ("renyi_efficiency", "Rényi efficiency (α = 2.5)"))):
        ax.bar(range(len(ms)), [getattr(m, attr) or 0 for m in ms])
        ax.set_xticks(range(len(ms)))
        ax.set_xticklabels(names, rotation=30, ha="right")
        ax.set_title(label)
    _save(fig, path)
