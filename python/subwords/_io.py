"""The one atomic writer and the one size-limited reader that every file subwords touches goes
through: model files, every export format, and every loader."""

from __future__ import annotations

import os
import tempfile
from typing import Union

from .errors import FileError, ModelFileError

PathLike = Union[str, "os.PathLike[str]"]


def write_atomic(path: PathLike, data: Union[bytes, str], what: str = "file") -> None:
    """Write ``data`` (text is written as UTF-8 with ``\\n`` line ends) to a temporary file beside
    ``path``, flush it to disk, give it an ordinary new file's mode (0666 less the umask, not the
    temporary file's 0600) and rename it over ``path``. A failure leaves no file behind and
    raises ``FileError`` (an ``OSError``) naming ``what`` and the path."""
    p = os.fspath(path)
    blob = data.encode("utf-8") if isinstance(data, str) else data
    folder = os.path.dirname(os.path.abspath(p))
    try:
        fd, tmp = tempfile.mkstemp(dir=folder, prefix=".subwords-", suffix=".part")
    except OSError as e:
        raise FileError(e.errno, f"cannot write {what} {p!r}: {e.strerror or e}") from None
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(blob)
            f.flush()
            os.fsync(f.fileno())
        mask = os.umask(0)
        os.umask(mask)
        os.chmod(tmp, 0o666 & ~mask)
        os.replace(tmp, p)
    except BaseException as e:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        if isinstance(e, OSError):
            raise FileError(e.errno, f"cannot write {what} {p!r}: {e.strerror or e}") from None
        raise


def read_limited(path: PathLike, limit: int, what: str) -> bytes:
    """The bytes of ``path``, refusing (``ModelFileError``) a file larger than ``limit`` before
    reading it; an unreadable file is a ``FileError`` (an ``OSError``) that names ``what``."""
    p = os.fspath(path)
    try:
        size = os.path.getsize(p)
        if size > limit:
            raise ModelFileError(f"{p}: {size} bytes is larger than any {what} subwords reads ({limit} bytes); refusing it")
        with open(p, "rb") as f:
            # the size read, and a byte more to see growth since it was taken: asking for the
            # limit made a buffer of the limit (64 MB for a vocab.txt) to shrink again
            data = f.read(size + 1)
            if len(data) > size:
                data += f.read(limit + 1 - len(data))
        if len(data) > limit:
            raise ModelFileError(f"{p}: larger than any {what} subwords reads ({limit} bytes); refusing it")
        return data
    except OSError as e:
        raise FileError(e.errno, f"cannot read {what} {p!r}: {e.strerror or e}") from None
