"""Argument types and model loading that the CLI's verbs share (``cli.py`` and the verbs of
``_cli_measure.py`` and ``_cli_scale.py``), kept apart so the verbs' modules need not import
``cli`` and ``cli`` need not import them back."""

from __future__ import annotations

import argparse
import os
from typing import Any, Callable, Optional, Sequence

from .errors import SubwordsError


def _whole(name: str, least: int, says: str) -> Callable[[str], int]:
    def parse(s: str) -> int:
        try:
            v = int(s)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{name} must be a whole number, got {s!r}") from None
        if v < least:
            raise argparse.ArgumentTypeError(f"{name} must be {says}, got {v}")
        return v

    return parse


def _positive(name: str) -> Callable[[str], int]:
    return _whole(name, 1, "at least 1")


def _count(name: str) -> Callable[[str], int]:
    return _whole(name, 0, "0 or more")


def _probability(s: str) -> float:
    try:
        v = float(s)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number in [0, 1], got {s!r}") from None
    if not 0.0 <= v <= 1.0:
        raise argparse.ArgumentTypeError(f"expected a number in [0, 1], got {v}")
    return v


def _coverage(s: str) -> float:
    v = _probability(s)
    if v == 0.0:
        raise argparse.ArgumentTypeError("character coverage must be above 0")
    return v


def load_model(path: str, fmt: Optional[str] = None, options: Sequence[str] = ()) -> Any:
    """A tokenizer from ``path`` in any format: a subwords Tokenizer, or a ``Foreign`` one."""
    from . import formats

    opts = _load_options(options)
    if fmt is None:
        fmt = formats.detect(path)
    try:
        return formats.load(path, format=fmt, **opts)
    except ImportError as e:
        raise _missing_format(fmt or "detected", e) from None
    except TypeError as e:
        # a format's load() given an option it does not take (-O); any other TypeError is a bug
        if "unexpected keyword argument" not in str(e):
            raise
        raise SubwordsError(f"-O: the {fmt} format does not take that option ({e})") from None


def _load_options(items: Sequence[str]) -> dict[str, object]:
    out: dict[str, object] = {}
    for item in items:
        key, eq, value = item.partition("=")
        if not eq or not key.isidentifier():
            raise SubwordsError(f"--load-option {item!r}: write KEY=VALUE, e.g. lowercase=false")
        out[key] = _option_value(value)
    return out


def _missing_format(fmt: str, e: ImportError) -> SubwordsError:
    return SubwordsError(f"the {fmt} format is not available in this installation of subwords ({e})")


def _option_value(text: str) -> object:
    """A --load-option value: true/false, a whole number, else the text itself."""
    low = text.lower()
    if low in ("true", "false"):
        return low == "true"
    if text.lstrip("-").isascii() and text.lstrip("-").isdigit():
        return int(text)
    return text
