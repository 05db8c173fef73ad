"""The common base of tokenizers loaded from other libraries' files: the defaults of
:class:`subwords.Tokenizer` they share (pieces, special tokens, the pair argument)."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any, Callable, Iterable, Literal, Optional, Sequence, Union, overload

from .. import _core
from .._checks import batch_arg, template_arg, text_arg
from .._specials import AllowedSpecial
from .._specials import allowed_set
from .._native_call import native_call
from ..errors import OptionError

if TYPE_CHECKING:
    from .._arrays import IdArray

PathLike = Union[str, "os.PathLike[str]"]


class Foreign:
    """A tokenizer read from another library's file; it answers :class:`subwords.Tokenizer`.
    Subclasses give the original library's exact behaviour; ids are the file's own ids.

    A subclass implements ``_encode(text, allowed)`` (ids of one text, ``allowed`` the special
    surfaces it may match), ``decode``, ``id_to_piece``, ``piece_to_id``, ``vocab_size`` and
    ``encode_with_offsets``, and may override the rest: ``_around`` (what
    ``add_special_tokens`` puts around the ids; nothing here), ``_encode_batch`` (the lists
    of ``encode_batch``; ``as_numpy`` is handled here, for every family),
    ``encode_pieces``, ``decode_pieces`` and ``special_tokens``.
    """

    format: str = ""
    #: ``add_special_tokens=None``: the file's own library's default (:class:`subwords.Tokenizer`)
    _template_default: bool = False
    #: the family's own keyword arguments of ``encode_batch`` (SentencePiece's add_bos/add_eos)
    _family_options: frozenset[str] = frozenset()

    def _encode(self, text: str, allowed: frozenset[str]) -> list[int]:
        raise NotImplementedError

    def _around(self, ids: list[int], pair: Optional[list[int]]) -> list[int]:
        return ids if pair is None else ids + pair

    def encode(self, text: str, *, allowed_special: AllowedSpecial = (), add_special_tokens: Optional[bool] = None,
               pair: Optional[str] = None) -> list[int]:
        """Ids of ``text`` (then ``pair``'s), the template around them when
        ``add_special_tokens`` (see :class:`subwords.Tokenizer`)."""
        text = text_arg(text)
        allowed = allowed_set(allowed_special, self.special_tokens) if allowed_special else frozenset()
        ids = self._encode(text, allowed)
        second = None if pair is None else self._encode(text_arg(pair), allowed)
        if template_arg(add_special_tokens, self._template_default):
            return self._around(ids, second)
        return ids if second is None else ids + second

    @overload
    def encode_batch(self, texts: Iterable[str], *, threads: Optional[int] = ..., allowed_special: AllowedSpecial = ...,
                     add_special_tokens: Optional[bool] = ..., as_numpy: Literal[False] = ..., **family: Any) -> list[list[int]]: ...

    @overload
    def encode_batch(self, texts: Iterable[str], *, threads: Optional[int] = ..., allowed_special: AllowedSpecial = ...,
                     add_special_tokens: Optional[bool] = ..., as_numpy: Literal[True], **family: Any) -> "IdArray": ...

    def encode_batch(self, texts: Iterable[str], *, threads: Optional[int] = None,
                     allowed_special: AllowedSpecial = (), add_special_tokens: Optional[bool] = None, as_numpy: bool = False,
                     **family: Any) -> Union[list[list[int]], "IdArray"]:
        """The ids of every text (``threads``: None for every core), the same as ``encode`` on
        each whatever the thread count. ``as_numpy=True``: an :class:`subwords.IdArray` instead,
        as :meth:`encode_array` makes it. ``family``: a family's own switches (SentencePiece's
        ``add_bos``/``add_eos``), with lists only."""
        unknown = sorted(set(family) - self._family_options)
        if unknown:
            raise OptionError(f"encode_batch: unknown argument {unknown[0]!r} for a {self.format} tokenizer")
        if as_numpy:
            if family:
                raise OptionError(f"as_numpy=True takes threads, allowed_special and add_special_tokens; "
                                  f"{sorted(family)[0]} works with lists only (leave as_numpy out)")
            return self.encode_array(texts, threads=threads, allowed_special=allowed_special,
                                     add_special_tokens=add_special_tokens)
        return self._encode_batch(texts, threads=threads, allowed_special=allowed_special,
                                  add_special_tokens=add_special_tokens, **family)

    def _encode_batch(self, texts: Iterable[str], *, threads: Optional[int] = None,
                      allowed_special: AllowedSpecial = (), add_special_tokens: Optional[bool] = None) -> list[list[int]]:
        """``encode_batch``'s lists: here one ``encode`` per text; a family with a batch encoder
        in the core overrides it."""
        batch = batch_arg(texts)
        if threads is not None and (isinstance(threads, bool) or not isinstance(threads, int) or threads < 1):
            raise OptionError(f"threads must be a whole number from 1 (or None for every core), got {threads!r}")
        return [self.encode(t, allowed_special=allowed_special, add_special_tokens=add_special_tokens) for t in batch]

    def encode_array(self, texts: Iterable[str], *, threads: Optional[int] = None, dtype: str = "uint32",
                     eos: Optional[int] = None, allowed_special: AllowedSpecial = (),
                     add_special_tokens: Optional[bool] = None) -> "IdArray":
        """The ids of every text as an :class:`subwords.IdArray` (see
        :meth:`subwords.SubwordsTokenizer.encode_array`): ``ids`` of ``dtype`` and the texts'
        ``offsets``, ``eos`` (an id) after every text."""
        from .. import _arrays

        return _arrays.encode_array(self, texts, threads=threads, dtype=dtype, eos=eos, allowed_special=allowed_special,
                                    add_special_tokens=add_special_tokens)

    def encode_buffers(self, batch: Sequence[str], *, threads: Optional[int], width: int, eos: Optional[int] = None,
                       allowed_special: AllowedSpecial = (),
                       add_special_tokens: Optional[bool] = None) -> tuple[bytearray, bytearray]:
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
                      add_special_tokens: Optional[bool] = None) -> list[str]:
        return [self.id_to_piece(i) for i in self.encode(text, allowed_special=allowed_special,
                                                          add_special_tokens=add_special_tokens)]

    def decode(self, ids: Iterable[int]) -> str:
        raise NotImplementedError

    def decode_pieces(self, pieces: Iterable[str]) -> str:
        return self.decode([self.piece_to_id(p) for p in pieces])

    def encode_with_offsets(self, text: str) -> list[tuple[int, int, int]]:
        """``(id, start, end)`` for each id of ``encode(text)``, in code points of ``text``, as the
        original library reports where each token came from. Every loaded family implements
        it."""
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


__all__ = ["Foreign", "PathLike", "allowed_set", "native_call"]
