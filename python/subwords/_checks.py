"""Argument checks every tokenizer shares, so each kind of bad argument gets one class and one
message whichever tokenizer it was given to."""

from __future__ import annotations

from collections.abc import Iterable

from .errors import InputError, TextTypeError


def text_arg(text: object) -> str:
    """``text`` if it is a ``str``; anything else is a :class:`TextTypeError` (an ``InputError``
    and a ``TypeError``), from every tokenizer family alike (bytes are named, with the fix)."""
    if isinstance(text, str):
        return text
    if isinstance(text, (bytes, bytearray, memoryview)):
        raise TextTypeError(f"expected text (str), got {type(text).__name__}; decode it first, e.g. b.decode('utf-8')")
    raise TextTypeError(f"expected text (str), got {type(text).__name__}")


def template_arg(add_special_tokens: object, default: bool) -> bool:
    """``add_special_tokens`` as the core reads it: None is ``default``, the family's own (its
    library's default, :class:`subwords.Tokenizer`); True, False (or 1, 0) as given; anything
    else an :class:`InputError`."""
    if add_special_tokens is None:
        return default
    if isinstance(add_special_tokens, int):  # bool is an int
        return bool(add_special_tokens)
    raise InputError(f"add_special_tokens must be True, False or None (the file's own library's default), "
                     f"got {add_special_tokens!r}")


def batch_list(texts: Iterable[str]) -> list[str]:
    """A batch as a list for a core batch call, which checks every text itself (with
    :func:`batch_arg`'s errors) while it reads them: the loop here over every text was serial
    work on the calling thread, a sixth of a 2-thread batch of short lines. One
    ``str`` is refused here, as by :func:`batch_arg`."""
    if isinstance(texts, str):
        raise InputError("encode_batch takes a list of texts, not one str; use encode() for one text")
    return texts if type(texts) is list else list(texts)


def batch_arg(texts: Iterable[str]) -> list[str]:
    """A batch as a list of ``str``: one ``str`` is an :class:`InputError` (``encode`` takes one
    text), a text that is not ``str`` a :class:`TextTypeError` naming its place."""
    if isinstance(texts, str):
        raise InputError("encode_batch takes a list of texts, not one str; use encode() for one text")
    batch = list(texts)
    for n, t in enumerate(batch):
        if not isinstance(t, str):
            raise TextTypeError(f"text {n} of the batch is {type(t).__name__}, not str (expected text)")
    return batch
