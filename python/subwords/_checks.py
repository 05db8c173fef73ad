"""Argument checks every tokenizer shares, so each kind of bad argument gets one class and one
message whichever tokenizer it was given to."""

from __future__ import annotations

from .errors import InputError


def text_arg(text: object) -> str:
    """``text`` if it is a ``str``; anything else is an :class:`InputError` (bytes are named, with
    the fix)."""
    if isinstance(text, str):
        return text
    if isinstance(text, (bytes, bytearray, memoryview)):
        raise InputError(f"expected text (str), got {type(text).__name__}; decode it first, e.g. b.decode('utf-8')")
    raise InputError(f"expected text (str), got {type(text).__name__}")
