"""Byte-level model files written by hand in tests: GPT-2's byte characters (as our files and
tokenizer.json write byte-level rows) and the spelling block of a `bytes` model cut by o200k."""

from __future__ import annotations

import json

import subwords

# GPT-2's printable bytes stand for themselves; the others take the characters from U+0100 on
_PRINTABLE = [*range(0x21, 0x7F), *range(0xA1, 0xAD), *range(0xAE, 0x100)]


def _byte_chars() -> list[str]:
    extra = iter(range(256, 512))
    return [chr(b) if b in _PRINTABLE else chr(next(extra)) for b in range(256)]


CHARS = _byte_chars()


def show(text: str) -> str:
    """``text``'s UTF-8 bytes as a byte-level row spells them."""
    return "".join(CHARS[b] for b in text.encode("utf-8"))


def o200k_spelling() -> dict:
    """The ``spelling`` block a ``bytes`` model with the o200k pre-split saves."""
    doc = json.loads(subwords.train(["a b"], vocab_size=256, spelling="bytes", pre_split="o200k").to_json())
    return doc["spelling"]
