"""Deterministic sampling of huge inputs.

``fraction`` keeps each record with that probability, decided by a keyed hash of its position:
record ``i`` (counting from 0 over all inputs in reading order, blank lines and skipped records
included) is kept when the first 8 bytes of ``blake2b(i as 8 little-endian bytes, key = seed as
8 little-endian bytes, digest_size=8)``, read as a little-endian integer, are below
``fraction * 2**64``. blake2b is the same on every machine, and the decision for one record
depends on nothing but ``i`` and ``seed``, so the sample does not depend on batching, threads or
the other records. Positions rather than contents: hashing the text would keep or drop every
copy of a repeated line together, so a line seen a thousand times would count a thousand times
or not at all; by position each copy is kept on its own, and every count shrinks by the
fraction on average.

``max_bytes`` then keeps the first texts (of those sampled) whose UTF-8 sizes add up to at most
that many bytes (line ends not counted), and stops at the first text that would pass it: no
later text is kept, and reading ends with the block (a megabyte of a file, a record batch of a
table) that holds it.
"""

from __future__ import annotations

import hashlib
from typing import Optional

from ._records import Records

SPAN = 1 << 64


def keep(index: int, seed: int, fraction: float) -> bool:
    """Whether record ``index`` is in the ``fraction`` sample drawn with ``seed``."""
    digest = hashlib.blake2b(index.to_bytes(8, "little"), digest_size=8, key=seed.to_bytes(8, "little")).digest()
    return int.from_bytes(digest, "little") < int(fraction * SPAN)


class Sampler:
    def __init__(self, fraction: Optional[float], seed: Optional[int], max_bytes: Optional[int]) -> None:
        self.fraction = fraction
        self.key = None if seed is None else seed.to_bytes(8, "little")
        self.threshold = None if fraction is None else int(fraction * SPAN)
        self.max_bytes = max_bytes
        self.index = 0  # records seen
        self.kept = 0
        self.kept_bytes = 0
        self.full = False  # max_bytes reached: read no further

    def take(self, records: Records, out: list[str], keep_empty: bool = False) -> None:
        """Appends the kept texts of ``records`` to ``out`` (blank ones too when ``keep_empty``,
        when nothing is sampled); sets ``full`` at ``max_bytes``."""
        if self.threshold is None and self.max_bytes is None:
            before = len(out)
            out.extend(t for t in records if t is not None) if keep_empty else out.extend(t for t in records if t)
            self.index += len(records)
            self.kept += len(out) - before
            return
        blake, key, threshold, start = hashlib.blake2b, self.key, self.threshold, self.index
        for k, t in enumerate(records):
            if not t:
                continue
            if threshold is not None:
                h = blake((start + k).to_bytes(8, "little"), digest_size=8, key=key).digest()  # type: ignore[arg-type]
                if int.from_bytes(h, "little") >= threshold:
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
