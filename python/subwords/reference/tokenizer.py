"""The reference Tokenizer: a spelling, ordered rows, merges, and merge replay.

Rows are kept as *keys*: a piece (``str``, or ``bytes`` under the bytes spelling) for alphabet,
learned and word rows, and small tuples for the rows that are not pieces (``[UNK]``, the byte
rows ``<0xNN>``, the bare marker row). :meth:`Tokenizer.rows` prints them as the pages do.

Encoding a text::

    spell it into units of symbols                    (the spelling)
    a symbol with no row becomes an Unknown stand-in  (it joins no pair)
    replay the merges on each unit                    (bpe.replay)
      two-stage: stage-one merges on each unit, then the stage-two merges on the text's
      units concatenated into one stream
    pieces -> ids; a stand-in -> [UNK], or its byte-fallback rows

Decoding runs the spelling backwards on the rows' keys (``Spelling.decode``), in bytes; ``decode``
reads those bytes as UTF-8 with U+FFFD for anything malformed.

    >>> from subwords.reference import train
    >>> tok = train({"low": 5, "lower": 2, "newest": 6, "widest": 3}, vocab_size=22)
    >>> tok.encode_pieces("lowest")
    ['lo', 'w', 'est</w>']
    >>> tok.decode(tok.encode("lowest newest"))
    'lowest newest'
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from subwords.errors import SubwordsError, UnknownPieceError

from . import bpe
from .pipeline import Data
from .spelling import MARKER, UNK, Piece, RowKey, Spelling, Unknown

#: ``read_data`` bound to a model's options: any form ``train`` accepts -> ``(text, count)`` pairs.
Reader = Callable[[Data], "list[tuple[str, int]]"]


class Tokenizer:
    """A trained vocabulary with its spelling; same methods as ``subwords.Tokenizer``."""

    def __init__(
        self,
        *,
        model: str,
        spelling: Spelling[Any],
        rows: Sequence[tuple[RowKey, str]],
        merges: list[bpe.Pair],
        stage_one: int | None,
        byte_fallback: bool,
        report: dict[str, Any],
        options: dict[str, Any],
        reader: Reader,
    ) -> None:
        self._model = model
        self._spelling = spelling
        self._keys = [k for k, _ in rows]
        self._kinds = [kind for _, kind in rows]
        self._id_of: dict[RowKey, int] = {}
        for i, k in enumerate(self._keys):
            self._id_of.setdefault(k, i)
        self._alphabet = {k for k, kind in rows if kind == "alphabet"}
        self._merges = list(merges)
        self._stage_one = stage_one
        self._byte_fallback = byte_fallback
        self._report = dict(report)
        self._options = dict(options)
        self._reader = reader  # training.read_data bound to the options (for count_pieces)
        split = len(merges) if stage_one is None else stage_one
        self._ranks_one = bpe.ranks_of(merges[:split])
        self._ranks_two = bpe.ranks_of(merges[split:])
        self._printed = [self._show(k) for k in self._keys]
        self._id_of_printed: dict[str, int] = {}
        for i, p in enumerate(self._printed):
            self._id_of_printed.setdefault(p, i)  # on a clash the lowest id (special, byte) wins

    # -- printing ----------------------------------------------------------------------------
    def _show(self, key: RowKey) -> str:
        if key == UNK:
            return "[UNK]"
        if key == MARKER:
            return self._spelling.mark  # type: ignore[return-value]  # only spellings with a mark have this row
        if isinstance(key, tuple) and key[0] == "byte":
            return f"<0x{key[1]:02X}>"
        return self._spelling.show(key)

    # -- encoding ----------------------------------------------------------------------------
    def _encode_keys(self, text: str) -> list[RowKey]:
        if not isinstance(text, str):
            raise SubwordsError(f"encode takes a str, got {type(text).__name__}")
        sp = self._spelling
        units = sp.units(text)
        if self._model == "word":
            out: list[RowKey] = []
            for unit in units:
                piece = functools.reduce(sp.join, unit)
                out.append(piece if piece in self._id_of else UNK)
            return out
        spelled = [[s if s in self._alphabet else Unknown(s) for s in unit] for unit in units]
        if self._stage_one is None:
            seq = [p for unit in spelled for p in bpe.replay(unit, self._ranks_one, sp.join)]
        else:
            stream = [p for unit in spelled for p in bpe.replay(unit, self._ranks_one, sp.join)]
            seq = bpe.replay(stream, self._ranks_two, sp.join)
        keys: list[RowKey] = []
        for p in seq:
            if isinstance(p, Unknown):
                keys.extend(self._unknown(p.symbol))
            else:
                keys.append(p)
        return keys

    def _unknown(self, symbol: Piece) -> list[RowKey]:
        if self._byte_fallback:
            return self._spelling.fallback(symbol, self._alphabet)
        return [UNK]

    def unknown_pieces(self, symbol: Piece) -> int:
        """How many pieces a symbol with no row becomes (1 as ``[UNK]``, more as bytes)."""
        return len(self._unknown(symbol))

    def encode(self, text: str) -> list[int]:
        return [self._id_of[k] for k in self._encode_keys(text)]

    def encode_pieces(self, text: str) -> list[str]:
        return [self._printed[self._id_of[k]] for k in self._encode_keys(text)]

    def count_pieces(self, data: Data) -> int:
        """Total pieces of a corpus given in any form ``train`` accepts."""
        return sum(len(self._encode_keys(t)) * c for t, c in self._reader(data))

    def normalize(self, text: str) -> str:
        return self._spelling.normalize(text)

    # -- decoding ----------------------------------------------------------------------------
    def _check_id(self, i: object) -> int:
        if isinstance(i, bool) or not isinstance(i, int) or not 0 <= i < len(self._keys):
            raise UnknownPieceError(
                f"{i!r} is not an id of this vocabulary (ids are 0..{len(self._keys) - 1})"
            )
        return i

    def decode_bytes(self, ids: Iterable[int]) -> bytes:
        return self._spelling.decode([self._keys[self._check_id(i)] for i in ids])

    def decode(self, ids: Iterable[int]) -> str:
        return self.decode_bytes(ids).decode("utf-8", errors="replace")

    def decode_pieces(self, pieces: Iterable[str]) -> str:
        return self.decode([self.piece_to_id(p) for p in pieces])

    # -- the table ---------------------------------------------------------------------------
    @property
    def vocab_size(self) -> int:
        return len(self._keys)

    @property
    def rows(self) -> list[str]:
        return list(self._printed)

    @property
    def kinds(self) -> list[str]:
        return list(self._kinds)

    @property
    def merges(self) -> list[tuple[str, str]]:
        show = self._spelling.show
        return [(show(a), show(b)) for a, b in self._merges]

    def piece_to_id(self, piece: str) -> int:
        try:
            return self._id_of_printed[piece]
        except (KeyError, TypeError):
            raise UnknownPieceError(f"{piece!r} is not a piece of this vocabulary") from None

    def id_to_piece(self, id: int) -> str:
        return self._printed[self._check_id(id)]

    @property
    def report(self) -> dict[str, Any]:
        return dict(self._report)

    @property
    def options(self) -> dict[str, Any]:
        return dict(self._options)

    def __repr__(self) -> str:
        o = self._options
        return (
            f"<subwords.reference.Tokenizer model={o['model']!r} spelling={o['spelling']!r} "
            f"rows={len(self._keys)}>"
        )
