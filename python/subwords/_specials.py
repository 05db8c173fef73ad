"""Which special tokens a call allows (``subwords.Tokenizer``'s ``allowed_special``), for every
tokenizer family. The text is cut at them in the core, by the encoder contract's one rule
(``crates/subwords-core/src/encoder.rs``, ``Allowed``), for every call and mode."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Union

from .errors import InputError

#: which special tokens a call lets the text spell: ``"all"``, or a collection of surfaces
AllowedSpecial = Union[str, Iterable[str]]


def allowed_set(allowed: Union[str, Iterable[str]], specials: Iterable[str]) -> frozenset[str]:
    """The special surfaces a call allows: ``"all"``, or a collection of surfaces each of which
    must be one of ``specials`` (a typo is an error, not a silent no-op)."""
    specials = frozenset(specials)
    if isinstance(allowed, str):
        if allowed == "all":
            return specials
        if allowed == "":
            return frozenset()
        raise InputError(f"allowed_special={allowed!r}: pass 'all' or a collection of special tokens, e.g. {{'<|endoftext|>'}}")
    chosen = frozenset(allowed)
    unknown = sorted(chosen - specials)
    if unknown:
        raise InputError(f"allowed_special: {unknown[0]!r} is not a special token of this vocabulary "
                         f"(it has {len(specials)}: {sorted(specials)[:5]}...)")
    return chosen


def allowed_ids(allowed: Union[str, Iterable[str]], specials: dict[str, int]) -> list[int]:
    """The ids of the special surfaces a call allows (see :func:`allowed_set`), for the core's
    encoder, which matches them in the text."""
    if not allowed:
        return []
    return sorted({specials[s] for s in allowed_set(allowed, specials)})


__all__ = ["AllowedSpecial", "allowed_ids", "allowed_set"]
