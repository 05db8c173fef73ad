"""Count tables: the units of a corpus and their counts, as an object of their own.

Every learner of subwords reads distinct units and their counts, never the running text (DESIGN
§1), so counting and training can be separated: count here (or on many machines, see
:mod:`subwords.dask`), merge the tables, prune rare units, save, and train later.

    >>> import subwords
    >>> a = subwords.count(["low lower", "newest"])
    >>> b = subwords.count(["low", "widest newest"])
    >>> t = a.merge(b)
    >>> sorted(t.items())
    [('low', 2), ('lower', 1), ('newest', 2), ('widest', 1)]
    >>> t.texts
    4

Training on a table gives the same model file, byte for byte, as training on the texts it was
counted from; the table records the spelling options that made its units, and a training that
asks for others is refused, naming the difference. A table merges associatively and
commutatively down to the bytes, so it does not matter how the corpus was partitioned or in
which order the partial tables were merged. Counts are unsigned 64-bit and checked: a sum that
does not fit is an error, never a wrap-around.

A table counted with ``superword_pattern`` (``preset="superbpe"``) also carries SuperBPE's spans,
the pieces of its stage-two pre-split, counted in the same pass; SuperBPE trains from such a table
to the same model as from the text, and merging sums the spans too.

Two things a table cannot hold: the whole texts that the page's two-stage BPE (``superword_at``
without ``superword_pattern``) learns its second stage from, and the order of words inside a
text. That training therefore reads text only and refuses a table. ``front`` with ``split_at_marks=False`` keeps whole texts as units,
so its table is exact but holds one row per distinct text.

Files: the binary format (``.counts``; see ``crates/subwords-core/src/count_table.rs``) is sorted,
checksummed and refused whole when truncated or damaged. ``to_tsv`` writes ``unit<TAB>count``
for people; a ``front`` table's units carry the mark, so a TSV is not a table to train from again
unless the spelling is ``end``/``continuation``/``bytes``.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator, Mapping
from typing import Any, Literal, Optional, Union

from . import _core
from ._io import read_limited, write_atomic
from .errors import InputError, OptionError

__all__ = ["CountTable", "MAX_TABLE_BYTES", "table_paths"]

#: The largest count-table file ``CountTable.load`` reads (16 GiB).
MAX_TABLE_BYTES = 16 << 30
_MAGIC = b"SWCOUNT\0"
_SPELLINGS = ("end", "continuation", "front", "bytes")


class CountTable:
    """Units and their counts, sorted by the units' UTF-8 bytes, with the spelling that made them.

    Build one with :func:`count` (or ``subwords count``), load one with :meth:`load`.
    """

    __slots__ = ("_core",)

    def __init__(self, core: _core.CountTable) -> None:
        self._core = core

    # -- reading and writing -------------------------------------------------------------
    @classmethod
    def from_bytes(cls, data: bytes) -> "CountTable":
        if not isinstance(data, (bytes, bytearray, memoryview)):
            raise InputError(f"a count table is bytes, got {type(data).__name__}")
        return cls(_core.CountTable.from_bytes(bytes(data)))

    def to_bytes(self) -> bytes:
        return self._core.to_bytes()

    @classmethod
    def load(cls, path: Union[str, "os.PathLike[str]"]) -> "CountTable":
        data = read_limited(path, MAX_TABLE_BYTES, "count table")
        try:
            return cls.from_bytes(data)
        except InputError as e:
            raise InputError(f"{os.fspath(path)}: {e}") from None

    def save(self, path: Union[str, "os.PathLike[str]"]) -> None:
        """Writes the binary table atomically: a failure leaves no file behind."""
        write_atomic(path, self.to_bytes(), "count table")

    def to_tsv(self, path: Union[str, "os.PathLike[str]"]) -> None:
        """Writes ``unit<TAB>count`` lines, in the table's order, atomically."""
        lines = [f"{u}\t{c}\n" for u, c in self.items()]
        for u, _ in self.items():
            if "\t" in u or "\n" in u or "\r" in u:
                raise InputError(f"unit {u!r} holds a tab or a line break, which a TSV table cannot hold; keep the binary table")
        write_atomic(path, "".join(lines), "count table")

    @staticmethod
    def is_table_file(path: Union[str, "os.PathLike[str]"]) -> bool:
        """Whether ``path`` starts like a binary count table."""
        try:
            with open(path, "rb") as f:
                return f.read(len(_MAGIC)) == _MAGIC
        except OSError:
            return False

    # -- contents --------------------------------------------------------------------------
    def __len__(self) -> int:
        return len(self._core)

    @property
    def texts(self) -> int:
        """How many non-empty texts were counted."""
        return self._core.texts

    @property
    def total(self) -> int:
        """The sum of all counts: how many units the corpus held."""
        return self._core.total()

    @property
    def spelling(self) -> dict[str, Any]:
        """The spelling options that made the units (byte fallback does not change units)."""
        out: dict[str, Any] = self._core.spelling()
        return out

    @property
    def normalizations(self) -> list[str]:
        """Which ``front`` normalizations some counted text needed (as in a training report)."""
        return self._core.normalizations()

    @property
    def superword_pattern(self) -> Optional[str]:
        """The stage-two pre-split that cut the table's SuperBPE spans (None: it carries none)."""
        return self._core.superword_pattern

    @property
    def spans(self) -> int:
        """How many distinct SuperBPE spans the table carries (0 without spans)."""
        return self._core.span_count

    def span_items(self) -> list[tuple[str, int]]:
        """(span, count) of the table's SuperBPE spans, in byte order (empty without spans)."""
        return self._core.span_items()

    def items(self) -> Iterator[tuple[str, int]]:
        """(unit, count) in the table's order, fetched from the engine in chunks."""
        start, step = 0, 1 << 16
        while True:
            chunk = self._core.items(start, step)
            if not chunk:
                return
            yield from chunk
            start += len(chunk)

    # -- arithmetic ------------------------------------------------------------------------
    def merge(self, *others: "CountTable") -> "CountTable":
        """The sum of this table and ``others`` (same spelling, else ``OptionError``)."""
        out = self._core
        for o in others:
            if not isinstance(o, CountTable):
                raise OptionError(f"can only merge count tables, got {type(o).__name__}")
            out = out.merge(o._core)
        return CountTable(out)

    def __add__(self, other: "CountTable") -> "CountTable":
        return self.merge(other)

    def prune(self, min_count: int) -> tuple["CountTable", float]:
        """Drops units counted fewer than ``min_count`` times. Returns the smaller table and the
        share of all unit occurrences that were dropped (0.0 to 1.0)."""
        if isinstance(min_count, bool) or not isinstance(min_count, int) or not 1 <= min_count < 2**64:
            raise OptionError(f"min_unit_count must be a whole number from 1, got {min_count!r}")
        table, dropped = self._core.prune(min_count)
        total = self.total
        return CountTable(table), (dropped / total if total else 0.0)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, CountTable) and self.to_bytes() == other.to_bytes()

    def __hash__(self) -> int:
        return hash(self.to_bytes())

    def __reduce__(self) -> tuple[Any, tuple[bytes]]:
        return (CountTable.from_bytes, (self.to_bytes(),))

    def __repr__(self) -> str:
        return f"<CountTable {len(self)} units, {self.texts} texts, spelling {self.spelling['scheme']!r}>"


def table_paths(data: object, *, counts: bool) -> Optional[list["os.PathLike[str]"]]:
    """The paths in ``data`` when they are binary table files (``counts=True`` only)."""
    if not counts:
        return None
    paths = [data] if isinstance(data, os.PathLike) else data if isinstance(data, (list, tuple)) else None
    if not paths or not all(isinstance(p, os.PathLike) for p in paths):
        return None
    binary = [CountTable.is_table_file(p) for p in paths]
    if not any(binary):
        return None
    if not all(binary):
        raise InputError("give either binary count tables or word<TAB>count text files, not both")
    return list(paths)
