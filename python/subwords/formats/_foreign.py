"""The common base of tokenizers loaded from other libraries' files: the defaults of
:class:`subwords.Tokenizer` they share (pieces, special tokens, the pair argument)."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Iterable, Optional, Sequence, Union

from .._checks import batch_arg, text_arg
from .._specials import AllowedSpecial
from .._specials import allowed_set, split_specials
from ..errors import InputError, OptionError

if TYPE_CHECKING:
    from .._arrays import IdArray

PathLike = Union[str, "os.PathLike[str]"]


class Foreign:
    """A tokenizer read from another library's file; it answers :class:`subwords.Tokenizer`.
    Subclasses give the original library's exact behaviour; ids are the file's own ids.

    A subclass implements ``_encode(text, allowed)`` (ids of one text, ``allowed`` the special
    surfaces it may match), ``decode``, ``id_to_piece``, ``piece_to_id`` and ``vocab_size``, and
    may override the rest: ``_around`` (what ``add_special_tokens`` puts around the ids;
    nothing here), ``encode_batch``, ``encode_pieces``, ``decode_pieces``,
    ``encode_with_offsets`` and ``special_tokens``.
    """

    format: str = ""

    def _encode(self, text: str, allowed: frozenset[str]) -> list[int]:
        raise NotImplementedError

    def _around(self, ids: list[int], pair: Optional[list[int]]) -> list[int]:
        return ids if pair is None else ids + pair

    def encode(self, text: str, *, allowed_special: AllowedSpecial = (), add_special_tokens: bool = False,
               pair: Optional[str] = None) -> list[int]:
        """Ids of ``text`` (then ``pair``'s), the template around them when
        ``add_special_tokens`` (see :class:`subwords.Tokenizer`)."""
        text = text_arg(text)
        allowed = allowed_set(allowed_special, self.special_tokens) if allowed_special else frozenset()
        ids = self._encode(text, allowed)
        second = None if pair is None else self._encode(text_arg(pair), allowed)
        if add_special_tokens:
            return self._around(ids, second)
        return ids if second is None else ids + second

    def encode_batch(self, texts: Iterable[str], *, threads: Optional[int] = None,
                     allowed_special: AllowedSpecial = (), add_special_tokens: bool = False) -> list[list[int]]:
        batch = batch_arg(texts)
        if threads is not None and (isinstance(threads, bool) or not isinstance(threads, int) or threads < 1):
            raise OptionError(f"threads must be a whole number from 1 (or None for every core), got {threads!r}")
        return [self.encode(t, allowed_special=allowed_special, add_special_tokens=add_special_tokens) for t in batch]

    def encode_array(self, texts: Iterable[str], *, threads: Optional[int] = None, dtype: str = "uint32",
                     eos: Optional[int] = None, allowed_special: AllowedSpecial = (),
                     add_special_tokens: bool = False) -> "IdArray":
        """The ids of every text as an :class:`subwords.IdArray` (see
        :meth:`subwords.SubwordsTokenizer.encode_array`): ``ids`` of ``dtype`` and the texts'
        ``offsets``, ``eos`` (an id) after every text."""
        from .. import _arrays

        return _arrays.encode_array(self, texts, threads=threads, dtype=dtype, eos=eos, allowed_special=allowed_special,
                                    add_special_tokens=add_special_tokens)

    def encode_buffers(self, batch: Sequence[str], *, threads: Optional[int], width: int, eos: Optional[int] = None,
                       allowed_special: AllowedSpecial = (), add_special_tokens: bool = False) -> tuple[bytes, bytes]:
        """``encode_array``'s buffers (little-endian ids, ``width`` bytes; each text's end as
        u64). Here from ``encode_batch``'s lists; a family with a flat encoder in the core
        overrides it."""
        from .. import _arrays

        if eos is not None:
            self.id_to_piece(eos)  # an id of this vocabulary, or UnknownPieceError
        suffix = [] if eos is None else [eos]
        lists = self.encode_batch(batch, threads=threads, allowed_special=allowed_special,
                                  add_special_tokens=add_special_tokens)
        return _arrays.flatten((ids + suffix for ids in lists), width)

    def encode_pieces(self, text: str, *, allowed_special: AllowedSpecial = (),
                      add_special_tokens: bool = False) -> list[str]:
        return [self.id_to_piece(i) for i in self.encode(text, allowed_special=allowed_special,
                                                          add_special_tokens=add_special_tokens)]

    def decode(self, ids: Iterable[int]) -> str:
        raise NotImplementedError

    def decode_pieces(self, pieces: Iterable[str]) -> str:
        return self.decode([self.piece_to_id(p) for p in pieces])

    def encode_with_offsets(self, text: str) -> list[tuple[int, int, int]]:
        """``(id, start, end)`` in code points of ``text``, found by decoding: the ``k``-th id's
        end is the length of ``decode(ids[:k+1])``. Exact when decoding gives the text back
        (the file's normalizer and decoder lose nothing on it); otherwise an InputError says so
        (``decode`` would not say where each id came from)."""
        text = text_arg(text)
        ids = self._encode(text, frozenset())
        if self.decode(ids) != text:
            raise InputError(f"this {self.format} file's pipeline changes the text (its decoded ids are not the "
                             "text), so the ids have no offsets in it; encode_with_offsets needs text that "
                             "decodes back unchanged")
        out: list[tuple[int, int, int]] = []
        start = 0
        for k, i in enumerate(ids):
            end = len(self.decode(ids[:k + 1]))
            if not text.startswith(self.decode(ids[:k + 1])):
                end = start  # a prefix that decodes differently (a joined byte sequence): no span yet
            out.append((i, min(start, end), end))
            start = max(start, end)
        return out

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


__all__ = ["Foreign", "PathLike", "allowed_set", "split_specials"]
