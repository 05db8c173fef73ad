"""Deterministic sampling of huge inputs.

``fraction`` keeps each record with that probability, decided by a seeded hash of its position.
Record ``i`` (counting from 0 over all inputs in reading order, blank lines and skipped records
included) draws the 8 bytes at offset ``8 * (i % 1024)`` of ``SHAKE-256(seed as 8 little-endian
bytes + (i // 1024) as 8 little-endian bytes)`` (8192 bytes of output, one call for 1024
positions), read as a little-endian integer, and is kept when that is below
``fraction * 2**64``. SHAKE-256 is the same on every machine, and a record's draw depends on
nothing but ``i`` and ``seed``, so the sample does not depend on batching, threads or the other
records. (One keyed blake2b per record would say the same and cost ten times as much here.)

Positions rather than contents: hashing the text would keep or drop every copy of a repeated
line together, so a line seen a thousand times would count a thousand times or not at all; by
position each copy is kept on its own, and every count shrinks by the fraction on average. The
price is that the sample follows the reading order, which is fixed (sorted paths).

``max_bytes`` then keeps the first texts (of those sampled) whose UTF-8 sizes add up to at most
that many bytes (line ends not counted), and stops at the first text that would pass it: no
later text is kept, and reading ends with the block (a megabyte of a file, a record batch of a
table) that holds it.
"""

from __future__ import annotations

import sys
from array import array
from typing import Optional

from ._records import Records

SPAN = 1 << 64
GROUP = 1024  # positions drawn by one SHAKE-256 call


def draws(group: int, seed: int) -> array[int]:
    """The 1024 draws of positions ``group * 1024 ...``, as unsigned 64-bit integers."""
    import hashlib  # on use: an unsampled run (every `subwords train` without --sample) needs none

    raw = hashlib.shake_256(seed.to_bytes(8, "little") + group.to_bytes(8, "little")).digest(8 * GROUP)
    values: array[int] = array("Q")
    assert values.itemsize == 8
    values.frombytes(raw)
    if sys.byteorder == "big":
        values.byteswap()
    return values


def keep(index: int, seed: int, fraction: float) -> bool:
    """Whether record ``index`` is in the ``fraction`` sample drawn with ``seed``."""
    return draws(index // GROUP, seed)[index % GROUP] < int(fraction * SPAN)


class Sampler:
    def __init__(self, fraction: Optional[float], seed: Optional[int], max_bytes: Optional[int]) -> None:
        self.seed = seed
        self.threshold = None if fraction is None else int(fraction * SPAN)
        self.max_bytes = max_bytes
        self.index = 0  # records seen
        self.kept = 0
        self.kept_bytes = 0
        self.full = False  # max_bytes reached: read no further
        self._group = -1
        self._draws: array[int] = array("Q")

    def take(self, records: Records, out: list[str], keep_empty: bool = False) -> None:
        """Appends the kept texts of ``records`` to ``out`` (blank ones too when ``keep_empty``,
        when nothing is sampled); sets ``full`` at ``max_bytes``."""
        if self.threshold is None and self.max_bytes is None:
            before = len(out)
            out.extend(t for t in records if t is not None) if keep_empty else out.extend(t for t in records if t)
            self.index += len(records)
            self.kept += len(out) - before
            return
        threshold, start = self.threshold, self.index
        for k, t in enumerate(records):
            if not t:
                continue
            if threshold is not None:
                i = start + k
                if i // GROUP != self._group:
                    assert self.seed is not None
                    self._group = i // GROUP
                    self._draws = draws(self._group, self.seed)
                if self._draws[i % GROUP] >= threshold:
                    continue
            if self.max_bytes is not None:
                size = len(t) if t.isascii() else len(t.encode("utf-8", "surrogatepass"))
                if self.kept_bytes + size > self.max_bytes:
                    self.full = True
                    self.index = start + k
                    return
                self.kept_bytes += size
            out.append(t)
            self.kept += 1
        self.index = start + len(records)
