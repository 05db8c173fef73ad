"""Which files an input names, in which order, and what format each one is.

A folder stands for every file under it that is not hidden, and a glob for every path it matches;
both are read in sorted order, so the same inputs give the same model on any machine (and the
same ``sample`` draws, which count records in that order). The format comes from the name: a
compression suffix (``.gz``, ``.zst``) and then the format's own (``.txt``, ``.jsonl``,
``.parquet``, ``.arrow``). A name with any other suffix (or none) is read as plain text when its
start is text, as every path was before these formats existed, and refused with a hint otherwise.
"""

from __future__ import annotations

import errno
import glob
import os
from typing import NamedTuple, Optional, Union

from ..errors import FileError, InputError

PathLike = Union[str, "os.PathLike[str]"]

COMPRESSIONS = {".gz": "gzip", ".gzip": "gzip", ".zst": "zstd", ".zstd": "zstd"}
FORMATS = {".txt": "text", ".text": "text", ".jsonl": "jsonl", ".ndjson": "jsonl",
           ".parquet": "parquet", ".pq": "parquet", ".arrow": "arrow", ".feather": "arrow", ".ipc": "arrow"}
# suffixes that are surely not one text per line, each with what to do instead
REFUSED = {
    ".json": "a .json file is one JSON document; if it holds one JSON object per line, name it .jsonl",
    ".csv": "CSV is not read (its quoting makes lines and records differ); convert it to Parquet or JSON lines",
    ".bz2": "bzip2 is not read; decompress it, or recompress with gzip or zstd (.gz, .zst)",
    ".xz": "xz is not read; decompress it, or recompress with gzip or zstd (.gz, .zst)",
    ".lz4": "lz4 is not read; decompress it, or recompress with gzip or zstd (.gz, .zst)",
    ".zip": "zip archives are not read; unpack them and pass the folder",
    ".tar": "tar archives are not read; unpack them and pass the folder",
    ".tgz": "tar archives are not read; unpack them and pass the folder",
    ".7z": "7z archives are not read; unpack them and pass the folder",
    ".pdf": "PDF is not text; extract its text first",
    ".docx": "a .docx file is a zip archive, not text; extract its text first",
}
KNOWN = "plain text (.txt), JSON lines (.jsonl), Parquet (.parquet) or Arrow (.arrow, .feather), the text ones optionally compressed (.gz, .zst)"
# the first bytes of formats that are not text: a misnamed file is refused, not trained on
MAGIC = {b"\x1f\x8b": "gzip", b"\x28\xb5\x2f\xfd": "zstd", b"PAR1": "Parquet", b"ARROW1": "Arrow", b"BZh": "bzip2",
         b"\xfd7zXZ\x00": "xz", b"PK\x03\x04": "zip", b"%PDF": "PDF"}
SNIFF = 4096


class Kind(NamedTuple):
    """A file's format (``text``, ``jsonl``, ``parquet``, ``arrow``) and compression (or None)."""

    format: str
    compression: Optional[str]


def _suffixes(name: str) -> tuple[str, str]:
    base, last = os.path.splitext(name.lower())
    if last in COMPRESSIONS:
        return os.path.splitext(base)[1], last
    return last, ""


def _sniff(path: str) -> Optional[str]:
    """What the file's first bytes say it is when that is not text, else None."""
    try:
        with open(path, "rb") as f:
            head = f.read(SNIFF)
    except OSError as e:
        raise OSError(e.errno, f"cannot read training file {path!r}: {e.strerror or e}") from None
    for magic, what in MAGIC.items():
        if head.startswith(magic):
            return what
    if b"\x00" in head:
        return "binary (it holds NUL bytes)"
    return None


def detect(path: PathLike) -> Kind:
    """The :class:`Kind` of one file, from its name (and, for a name no format claims, its first
    bytes). Raises :class:`InputError` with a hint for a file subwords cannot read."""
    p = os.fspath(path)
    fmt_suffix, comp_suffix = _suffixes(os.path.basename(p))
    compression = COMPRESSIONS.get(comp_suffix)
    if fmt_suffix in REFUSED:
        raise InputError(f"{p}: {REFUSED[fmt_suffix]}. subwords reads {KNOWN}")
    fmt = FORMATS.get(fmt_suffix)
    if fmt in ("parquet", "arrow") and compression:
        raise InputError(f"{p}: {fmt} files compress inside themselves; pass the {fmt} file uncompressed")
    if fmt is None:
        if compression is None:
            found = _sniff(p)
            if found is not None:
                raise InputError(
                    f"{p}: the name has no suffix subwords knows ({fmt_suffix or 'none'}) and the file starts like "
                    f"{found}, not text. subwords reads {KNOWN}; name the file by its format"
                )
        # foo.gz, foo.log, foo: one text per line, as before
        fmt = "text"
    return Kind(fmt, compression)


def _has_magic(s: str) -> bool:
    return glob.has_magic(s)


def _walk(folder: str) -> list[str]:
    found: list[str] = []
    for root, dirs, files in os.walk(folder):
        dirs[:] = [d for d in dirs if not d.startswith(".")]
        found.extend(os.path.join(root, f) for f in files if not f.startswith("."))
    return sorted(found)


def expand(inputs: list[PathLike]) -> list[str]:
    """The files ``inputs`` name, in reading order: each file as given; each folder's files,
    sorted (hidden ones left out); each glob's matches, sorted (``**`` crosses folders).
    A name that matches nothing is refused."""
    out: list[str] = []
    for item in inputs:
        p = os.fspath(item)
        if not isinstance(p, str):
            raise InputError(f"an input path must be text, got {p!r}")
        if os.path.isdir(p):
            files = _walk(p)
            if not files:
                raise InputError(f"{p}: the folder holds no files to train on")
            out.extend(files)
        elif os.path.exists(p):
            out.append(p)
        elif _has_magic(p):
            matches = sorted(glob.glob(p, recursive=True))
            files = []
            for m in matches:
                files.extend(_walk(m) if os.path.isdir(m) else [m])
            if not files:
                raise InputError(f"{p}: no file matches this pattern")
            out.extend(files)
        else:
            raise FileError(errno.ENOENT, "no such file or folder", p)
    return out
