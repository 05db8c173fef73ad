"""What every reader shares: lines cut from decompressed blocks (lines end at ``\\n`` only, as in
the engine's own file reader, a ``\\r`` before it dropped), and the tally of bad records."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Optional

from ..errors import InputError
from ._compressed import blocks

# Records a reader hands on: a text, or None for a bad record that was skipped (or a blank
# line of JSON lines, which is no record).
Records = list[Optional[str]]


class Tally:
    """Refuses a bad record, or (``skip``) counts it and keeps its first few messages."""

    KEEP = 5

    def __init__(self, skip: bool) -> None:
        self.skip = skip
        self.skipped = 0
        self.examples: list[str] = []

    def bad(self, where: str, why: str) -> None:
        if not self.skip:
            raise InputError(f"{where}: {why}; fix the record, or pass skip_bad_records=True "
                             "(CLI: --skip-bad-records) to skip such records and count them")
        self.skipped += 1
        if len(self.examples) < self.KEEP:
            self.examples.append(f"{where}: {why}")


def lines(path: str, compression: Optional[str], errors: str) -> Iterator[tuple[int, list[str]]]:
    """``(number of the first line, lines)`` for each block of whole lines of ``path``, decoded
    as UTF-8 (``errors``: ``strict`` refuses invalid bytes naming the line, ``replace`` reads
    them as U+FFFD)."""
    carry: list[bytes] = []  # the start of a line that has not ended yet, in pieces (joined once)
    line_no = 1
    source = blocks(path, compression)
    while True:
        block = next(source, None)
        if block is None:
            if not carry:
                break
            data, carry = b"".join(carry), []
        else:
            cut = block.rfind(b"\n")
            if cut < 0:
                carry.append(block)  # a line longer than a block: keep reading into it
                continue
            data = b"".join([*carry, block[: cut + 1]])
            carry = [block[cut + 1:]] if cut + 1 < len(block) else []
        try:
            text = data.decode("utf-8", errors)
        except UnicodeDecodeError as e:
            line = line_no + data.count(b"\n", 0, e.start)
            raise InputError(
                f"{path}: line {line}: invalid UTF-8 (byte 0x{data[e.start]:02X}); convert the file to UTF-8, "
                'or pass input_errors="replace" (CLI: --input-errors replace) to read it with U+FFFD'
            ) from None
        parts = text.split("\n")
        if text.endswith("\n"):
            parts.pop()  # the final line end ends a line; it does not start an empty one
        if "\r" in text:
            parts = [p[:-1] if p.endswith("\r") else p for p in parts]
        yield line_no, parts
        line_no += len(parts)
        if block is None:
            break
