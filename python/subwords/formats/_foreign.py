"""The common face of tokenizers loaded from other libraries' files."""

from __future__ import annotations

import os
from typing import Any, Iterable, Optional, Union

from ..errors import InputError, ModelFileError

PathLike = Union[str, "os.PathLike[str]"]


class Foreign:
    """A tokenizer read from another library's file. Subclasses implement the methods below with
    the original library's exact behaviour; ids are the file's own ids.

    Required: ``encode``, ``encode_batch``, ``decode``, ``id_to_piece``, ``piece_to_id``,
    ``vocab_size``, ``special_tokens`` (surface -> id) and ``format`` (one of ``formats.FORMATS``).
    """

    format: str = ""

    def encode(self, text: str, *, allowed_special: Union[str, Iterable[str]] = ()) -> list[int]:
        raise NotImplementedError

    def encode_batch(self, texts: Iterable[str], *, threads: Optional[int] = None,
                     allowed_special: Union[str, Iterable[str]] = ()) -> list[list[int]]:
        raise NotImplementedError

    def encode_pieces(self, text: str, **kw: Any) -> list[str]:
        return [self.id_to_piece(i) for i in self.encode(text, **kw)]

    def decode(self, ids: Iterable[int]) -> str:
        raise NotImplementedError

    def id_to_piece(self, id: int) -> str:
        raise NotImplementedError

    def piece_to_id(self, piece: str) -> int:
        raise NotImplementedError

    @property
    def vocab_size(self) -> int:
        raise NotImplementedError

    @property
    def special_tokens(self) -> dict[str, int]:
        return {}

    def __repr__(self) -> str:
        return f"<subwords {self.format} tokenizer: {self.vocab_size} ids>"


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


def split_specials(text: str, allowed: frozenset[str]) -> list[tuple[str, bool]]:
    """``text`` cut at every allowed special surface, longest match first, left to right:
    [(part, is_special), ...]. Ordinary parts may be empty."""
    import re

    if not allowed:
        return [(text, False)]
    pattern = re.compile("|".join(re.escape(s) for s in sorted(allowed, key=lambda s: (-len(s), s))))
    out: list[tuple[str, bool]] = []
    pos = 0
    for m in pattern.finditer(text):
        out.append((text[pos:m.start()], False))
        out.append((m.group(), True))
        pos = m.end()
    out.append((text[pos:], False))
    return out
