"""A file's bytes, decompressed, a block at a time: plain, gzip (the standard library) or
zstandard (the ``zstandard`` package, the ``zstd`` extra). A truncated or corrupt stream is an
:class:`InputError` naming the file; nothing is ever read whole."""

from __future__ import annotations

import zlib
from collections.abc import Iterator
from typing import IO, Any, Optional

from ..errors import InputError

BLOCK = 1 << 20


def missing_extra(path: str, what: str, package: str, extra: str) -> InputError:
    return InputError(f"{path}: reading {what} needs the {package} package, which is not installed; "
                      f"install it with: pip install 'subwords[{extra}]'")


# zstd input is fed this many bytes at a time, which bounds one call's output: a block of a few
# bytes can spell up to 128 KiB, so 1 KiB of a hostile (or extremely repetitive) file gives at
# most about 32 MiB, and 1 KiB of a text corpus a few KiB. (zstandard's stream reader bounds its
# output too, but cannot tell a truncated file from a complete one.)
ZSTD_PIECE = 1024


def _zstd_blocks(path: str, raw: IO[bytes]) -> Iterator[bytes]:
    """zstandard's decompression object, frame after frame: unlike its stream reader, it says
    (``eof``) whether the last frame was complete, so a truncated file is refused, not cut short."""
    try:
        import zstandard
    except ImportError:
        raise missing_extra(path, "zstandard (.zst) files", "zstandard", "zstd") from None
    maker = zstandard.ZstdDecompressor()
    obj = maker.decompressobj()
    pending: list[bytes] = []
    size = 0
    started = False
    try:
        while True:
            piece = raw.read(ZSTD_PIECE)
            if not piece:
                break
            while piece:
                started = True
                out = obj.decompress(piece)
                if out:
                    pending.append(out)
                    size += len(out)
                piece = b""
                if obj.eof:  # a frame ended; the rest of this piece starts the next one
                    piece = obj.unused_data
                    obj = maker.decompressobj()
                    started = False
            if size >= BLOCK:
                yield b"".join(pending)
                pending, size = [], 0
    except zstandard.ZstdError as e:
        raise InputError(f"{path}: not a valid zstd file ({e}); check how it was made") from None
    if started:
        raise InputError(f"{path}: the zstd stream ends early (the file is truncated); download or copy it again")
    if pending:
        yield b"".join(pending)


def blocks(path: str, compression: Optional[str]) -> Iterator[bytes]:
    """The decompressed bytes of ``path`` in blocks of about a megabyte."""
    try:
        raw = open(path, "rb")
    except OSError as e:
        raise OSError(e.errno, f"cannot open training file {path!r}: {e.strerror or e}") from None
    with raw:
        if compression == "zstd":
            yield from _zstd_blocks(path, raw)
            return
        stream: Any = raw
        if compression is not None:
            import gzip  # on use: plain text needs none of it

            stream = gzip.GzipFile(fileobj=raw, mode="rb")
        with stream:
            while True:
                try:
                    block = stream.read(BLOCK)
                except EOFError:
                    raise InputError(f"{path}: the {compression} stream ends early (the file is truncated); "
                                     "download or copy it again") from None
                except (OSError, zlib.error) as e:
                    if compression is None:
                        raise OSError(getattr(e, "errno", None), f"cannot read training file {path!r}: {e}") from None
                    raise InputError(f"{path}: not a valid {compression} file ({e}); check how it was made, or "
                                     "decompress it to see where it breaks") from None
                if not block:
                    break
                yield block
