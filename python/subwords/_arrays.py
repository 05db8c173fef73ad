"""Ids as arrays, for training sets: ``encode_batch(..., as_numpy=True)`` and the dataset files
``subwords encode --output`` writes. No Python object is made per id: the core fills one
little-endian buffer (``_core.Encoder.encode_batch_flat``), which numpy wraps without a copy.

The dataset layout (docs/HANDOFF.md):

* ``NAME.npy`` (or ``NAME.bin``): every document's ids, one after another, as one 1-D array of
  ``uint16`` or ``uint32`` (the ``.bin`` file is the same ids with no header, little-endian, as
  nanoGPT's ``train.bin``); with ``eos``, that id follows every document.
* ``NAME.offsets.npy``: ``uint64``, one more entry than there are documents, starting at 0:
  document ``i`` is ``ids[offsets[i]:offsets[i + 1]]`` (its eos included).

Both ``.npy`` files are written without numpy (the format is a short header and the raw array),
so the CLI needs no extra; reading them back is ``numpy.load(path, mmap_mode="r")``.
"""

from __future__ import annotations

import os
import struct
import tempfile
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Any, Callable, Optional, Protocol, Sequence

from ._checks import batch_list
from ._io import PathLike
from ._specials import AllowedSpecial
from .errors import FileError, OptionError, SubwordsError

if TYPE_CHECKING:  # numpy is an optional dependency
    import numpy as np

DTYPES = {"uint16": 2, "uint32": 4}
_DESCR = {2: "<u2", 4: "<u4"}
# .npy version 1.0 with a header padded to a fixed size, so the length can be written last
_HEADER = 128


def width_of(dtype: str, vocab_size: int, extra_ids: Sequence[int] = ()) -> int:
    """Bytes per id for ``dtype``; refuses a dtype too small for every id of the vocabulary."""
    if dtype not in DTYPES:
        raise OptionError(f"dtype must be 'uint16' or 'uint32', got {dtype!r}")
    width = DTYPES[dtype]
    largest = max([vocab_size - 1, *extra_ids])
    if largest >= 1 << (8 * width):
        raise OptionError(f"dtype {dtype} holds ids up to {(1 << (8 * width)) - 1}, but this vocabulary has ids up to "
                          f"{largest}; use uint32")
    return width


def _numpy() -> Any:
    try:
        import numpy
    except ImportError:
        raise SubwordsError("ids as numpy arrays need numpy: pip install 'subwords[numpy]'") from None
    return numpy


class IdArray:
    """The ids of a batch as two numpy arrays: ``ids`` (every text's ids one after another) and
    ``offsets`` (``uint64``, ``len(texts) + 1`` entries from 0): text ``i``'s ids are
    ``ids[offsets[i]:offsets[i + 1]]``, which ``array[i]`` gives; ``len(array)`` is the number of
    texts and ``array.tolist()`` the lists ``encode_batch`` gives."""

    __slots__ = ("ids", "offsets")

    def __init__(self, ids: "np.ndarray", offsets: "np.ndarray") -> None:
        self.ids = ids
        self.offsets = offsets

    def __len__(self) -> int:
        return len(self.offsets) - 1

    def __getitem__(self, i: int) -> "np.ndarray":
        n = len(self)
        if not -n <= i < n:
            raise IndexError(f"text {i} of a batch of {n}")
        i %= n
        return self.ids[int(self.offsets[i]):int(self.offsets[i + 1])]

    def tolist(self) -> list[list[int]]:
        flat = self.ids.tolist()
        ends = self.offsets.tolist()
        return [flat[a:b] for a, b in zip(ends, ends[1:])]

    def __repr__(self) -> str:
        return f"IdArray({len(self)} texts, {len(self.ids)} ids, dtype={self.ids.dtype})"


class _Buffers(Protocol):
    """What :func:`encode_array` needs of a tokenizer: its size and its flat encoder."""

    @property
    def vocab_size(self) -> int: ...

    def encode_buffers(self, batch: Sequence[str], *, threads: Optional[int], width: int, eos: Optional[int] = None,
                       allowed_special: AllowedSpecial = (),
                       add_special_tokens: Optional[bool] = ...) -> tuple[bytearray, bytearray]: ...


def encode_array(tok: _Buffers, texts: Iterable[str], *, threads: Optional[int], dtype: str, eos: Optional[int],
                 allowed_special: AllowedSpecial, add_special_tokens: Optional[bool]) -> IdArray:
    """``encode_array`` of every tokenizer family: the dtype checked against the vocabulary (and
    ``eos``), the ids filled by the tokenizer's ``encode_buffers``, wrapped as an :class:`IdArray`."""
    batch = batch_list(texts)  # each tokenizer's encode_buffers checks the texts (in the core, or batch_arg)
    width = width_of(dtype, tok.vocab_size, () if eos is None else (eos,))
    ids, ends = tok.encode_buffers(batch, threads=threads, width=width, eos=eos, allowed_special=allowed_special,
                                   add_special_tokens=add_special_tokens)
    return from_buffers(ids, ends, width)


def from_buffers(ids: bytearray, ends: bytearray, width: int) -> IdArray:
    """The arrays over the core's buffers (ids little-endian, ``width`` bytes; ends u64)."""
    np = _numpy()
    offsets = np.zeros(len(ends) // 8 + 1, dtype="<u8")
    offsets[1:] = np.frombuffer(ends, dtype="<u8")
    return IdArray(np.frombuffer(ids, dtype=_DESCR[width]), offsets)


def flatten(lists: Iterable[list[int]], width: int) -> tuple[bytearray, bytearray]:
    """The core's buffer layout made in Python, for tokenizers without a flat encoder."""
    code = "H" if width == 2 else "I"
    ids = bytearray()
    ends = bytearray()
    end = 0
    for one in lists:
        ids += struct.pack(f"<{len(one)}{code}", *one)
        end += len(one)
        ends += struct.pack("<Q", end)
    return ids, ends


def _npy_header(descr: str, length: int) -> bytes:
    text = "{'descr': '%s', 'fortran_order': False, 'shape': (%d,), }" % (descr, length)
    pad = _HEADER - 10 - len(text) - 1
    return b"\x93NUMPY\x01\x00" + struct.pack("<H", _HEADER - 10) + text.encode("latin1") + b" " * pad + b"\n"


class _Part:
    """A temporary file beside ``path``, renamed over it by ``commit``, removed by ``discard``."""

    def __init__(self, path: str, what: str) -> None:
        self.path, self.what = path, what
        folder = os.path.dirname(os.path.abspath(path))
        try:
            fd, self.tmp = tempfile.mkstemp(dir=folder, prefix=".subwords-", suffix=".part")
        except OSError as e:
            raise FileError(e.errno, f"cannot write {what} {path!r}: {e.strerror or e}") from None
        self.f = os.fdopen(fd, "wb")

    def commit(self) -> None:
        self.f.flush()
        os.fsync(self.f.fileno())
        self.f.close()
        mask = os.umask(0)
        os.umask(mask)
        os.chmod(self.tmp, 0o666 & ~mask)
        os.replace(self.tmp, self.path)

    def discard(self) -> None:
        try:
            self.f.close()
        finally:
            try:
                os.unlink(self.tmp)
            except OSError:
                pass


def offsets_path(output: PathLike) -> str:
    """``data.npy`` / ``data.bin`` -> ``data.offsets.npy``."""
    p = os.fspath(output)
    root, _ext = os.path.splitext(p)
    return root + ".offsets.npy"


def write_dataset(output: PathLike, batches: Iterator[tuple[bytearray, bytearray]], width: int,
                  progress: Optional[Callable[[int], None]] = None) -> tuple[int, int]:
    """Writes the dataset files from ``(ids, ends)`` buffers, one pair per batch (``ends``
    relative to the batch); returns ``(documents, ids)``. Both files appear only once every
    batch is written: on any error neither is left behind (nor a temporary file)."""
    p = os.fspath(output)
    ext = os.path.splitext(p)[1]
    if ext not in (".npy", ".bin"):
        raise OptionError(f"--output {p!r}: the dataset file is NAME.npy (numpy) or NAME.bin (raw ids)")
    off_path = offsets_path(p)
    ids_part = _Part(p, "the id array")
    off_part: Optional[_Part] = None
    try:
        if ext == ".npy":
            ids_part.f.write(_npy_header(_DESCR[width], 0))
        ends: list[bytes] = [struct.pack("<Q", 0)]
        total = 0
        docs = 0
        for ids, batch_ends in batches:
            ids_part.f.write(ids)
            n = len(batch_ends) // 8
            rel = struct.unpack(f"<{n}Q", batch_ends)
            ends.append(struct.pack(f"<{n}Q", *(total + e for e in rel)))
            total += len(ids) // width
            docs += n
            if progress is not None:
                progress(docs)
        if ext == ".npy":
            ids_part.f.seek(0)
            ids_part.f.write(_npy_header(_DESCR[width], total))
        off_part = _Part(off_path, "the document offsets")
        off_part.f.write(_npy_header("<u8", docs + 1))
        for chunk in ends:
            off_part.f.write(chunk)
        off_part.commit()
        ids_part.commit()
    except BaseException as e:
        ids_part.discard()
        if off_part is not None:
            off_part.discard()
            if os.path.exists(off_path) and not os.path.exists(p):
                os.unlink(off_path)
        if isinstance(e, OSError) and not isinstance(e, SubwordsError):
            raise FileError(e.errno, f"cannot write the dataset {p!r}: {e.strerror or e}") from None
        raise
    return docs, total
