"""The common face of tokenizers loaded from other libraries' files, and format dispatch."""

from __future__ import annotations

import os
from typing import Any, Iterable, Optional, Union

from ..errors import InputError, ModelFileError

FORMATS = ("subwords", "hf", "vocab-merges", "sentencepiece", "tiktoken", "subword-nmt", "vocab-txt")

PathLike = Union[str, os.PathLike]


class Foreign:
    """A tokenizer read from another library's file. Subclasses implement the methods below with
    the original library's exact behaviour; ids are the file's own ids.

    Required: ``encode``, ``encode_batch``, ``decode``, ``id_to_piece``, ``piece_to_id``,
    ``vocab_size``, ``special_tokens`` (surface -> id) and ``format`` (one of :data:`FORMATS`).
    """

    format: str = ""

    def encode(self, text: str, *, allowed_special: Union[str, Iterable[str]] = ()) -> list[int]:
        raise NotImplementedError

    def encode_batch(self, texts: Iterable[str], *, threads: Optional[int] = None,
                     allowed_special: Union[str, Iterable[str]] = ()) -> list[list[int]]:
        raise NotImplementedError

    def encode_pieces(self, text: str, **kw: Any) -> list[str]:
        return [self.id_to_piece(i) for i in self.encode(text, **kw)]

    def decode(self, ids: Iterable[int]) -> str:
        raise NotImplementedError

    def id_to_piece(self, id: int) -> str:
        raise NotImplementedError

    def piece_to_id(self, piece: str) -> int:
        raise NotImplementedError

    @property
    def vocab_size(self) -> int:
        raise NotImplementedError

    @property
    def special_tokens(self) -> dict[str, int]:
        return {}

    def __repr__(self) -> str:
        return f"<subwords {self.format} tokenizer: {self.vocab_size} ids>"


def allowed_set(allowed: Union[str, Iterable[str]], specials: Iterable[str]) -> frozenset[str]:
    """The special surfaces a call allows: ``"all"``, or a collection of surfaces each of which
    must be one of ``specials`` (a typo is an error, not a silent no-op)."""
    specials = frozenset(specials)
    if isinstance(allowed, str):
        if allowed == "all":
            return specials
        if allowed == "":
            return frozenset()
        raise InputError(f"allowed_special={allowed!r}: pass 'all' or a collection of special tokens, e.g. {{'<|endoftext|>'}}")
    chosen = frozenset(allowed)
    unknown = sorted(chosen - specials)
    if unknown:
        raise InputError(f"allowed_special: {unknown[0]!r} is not a special token of this vocabulary "
                         f"(it has {len(specials)}: {sorted(specials)[:5]}...)")
    return chosen


def detect(path: PathLike) -> str:
    """The format of a file or folder, from its name and first bytes."""
    p = os.fspath(path)
    if os.path.isdir(p):
        names = set(os.listdir(p))
        for name, fmt in (("tokenizer.json", "hf"), ("tokenizer.model", "sentencepiece"), ("spiece.model", "sentencepiece")):
            if name in names:
                return fmt
        if {"vocab.json", "merges.txt"} <= names:
            return "vocab-merges"
        if "vocab.txt" in names:
            return "vocab-txt"
        raise ModelFileError(f"{p}: a folder with no tokenizer.json, tokenizer.model, vocab.json+merges.txt or vocab.txt")
    try:
        with open(p, "rb") as f:
            head = f.read(4096)
    except OSError as e:
        raise OSError(e.errno, f"cannot read model file {p!r}: {e.strerror or e}") from None
    name = os.path.basename(p).lower()
    text = head.lstrip()
    if text.startswith(b"{"):
        if b'"format"' in head and b'"subwords"' in head:
            return "subwords"
        return "hf"
    if name.endswith((".tiktoken", ".tiktoken.gz")):
        return "tiktoken"
    if name.endswith(".vocab") and b"\t" in head.split(b"\n", 1)[0]:
        raise ModelFileError(f"{p}: a SentencePiece .vocab side file lists pieces and scores but no "
                             "normalization or model type; load the .model beside it")
    if name.endswith(".model") or (head[:1] == b"\n" and b"\x12" in head[:64]):
        return "sentencepiece"
    if head.startswith(b"#version:") and name.startswith("merges"):
        return "vocab-merges"
    if head.startswith(b"#version:") or name.startswith("codes") or name.endswith(".bpe"):
        return "subword-nmt"
    if name.endswith(".txt") and b"[UNK]" in head:
        return "vocab-txt"
    first = head.split(b"\n", 1)[0]
    parts = first.split(b" ")
    if len(parts) == 2 and parts[1].isdigit():
        return "tiktoken"
    raise ModelFileError(f"{p}: cannot tell its format; pass format= one of {', '.join(FORMATS)}")


def load(path: PathLike, format: Optional[str] = None, **options: Any) -> Any:
    """A tokenizer from ``path`` in any supported format (detected unless ``format`` is given)."""
    fmt = format or detect(path)
    if fmt not in FORMATS:
        raise InputError(f"format={fmt!r} is not one of {', '.join(FORMATS)}")
    if fmt == "subwords":
        from .._api import load as load_own

        if options:
            raise InputError(f"a subwords model file takes no load options (got {sorted(options)})")
        return load_own(path)
    if fmt == "vocab-txt":
        from .._api import bert

        p = os.fspath(path)
        return bert(os.path.join(p, "vocab.txt") if os.path.isdir(p) else p, **options)
    if fmt in ("hf", "vocab-merges"):
        from . import huggingface as mod
    elif fmt == "sentencepiece":
        from . import sentencepiece as mod  # type: ignore[no-redef]
    elif fmt == "tiktoken":
        from . import tiktoken as mod  # type: ignore[no-redef]
    else:
        from . import subword_nmt as mod  # type: ignore[no-redef]
    return mod.load(path, format=fmt, **options)


def export(tokenizer: Any, path: PathLike, format: str) -> None:
    """Writes a subwords model in another library's format. Refuses (InputError naming the
    feature) when the model uses something that format cannot express."""
    if format not in FORMATS:
        raise InputError(f"format={format!r} is not one of {', '.join(FORMATS)}")
    if format == "subwords":
        tokenizer.save(path)
        return
    if format in ("hf", "vocab-merges"):
        from . import huggingface as mod
    elif format == "sentencepiece":
        from . import sentencepiece as mod  # type: ignore[no-redef]
    elif format == "tiktoken":
        from . import tiktoken as mod  # type: ignore[no-redef]
    elif format == "subword-nmt":
        from . import subword_nmt as mod  # type: ignore[no-redef]
    else:
        from . import vocab_txt as mod  # type: ignore[no-redef]
    mod.export(tokenizer, path, format=format)


def split_specials(text: str, allowed: frozenset[str]) -> list[tuple[str, bool]]:
    """``text`` cut at every allowed special surface, longest match first, left to right:
    [(part, is_special), ...]. Ordinary parts may be empty."""
    import re

    if not allowed:
        return [(text, False)]
    pattern = re.compile("|".join(re.escape(s) for s in sorted(allowed, key=lambda s: (-len(s), s))))
    out: list[tuple[str, bool]] = []
    pos = 0
    for m in pattern.finditer(text):
        out.append((text[pos:m.start()], False))
        out.append((m.group(), True))
        pos = m.end()
    out.append((text[pos:], False))
    return out


def read_limited(path: PathLike, limit: int, what: str) -> bytes:
    """The bytes of ``path``, refusing (``ModelFileError``) a file larger than ``limit`` before
    reading it; an unreadable file is an ``OSError`` of the same kind that names ``what``."""
    p = os.fspath(path)
    try:
        size = os.path.getsize(p)
        if size > limit:
            raise ModelFileError(f"{p}: {size} bytes is more than subwords reads as a {what} ({limit}); refusing it")
        with open(p, "rb") as f:
            return f.read()
    except OSError as e:
        raise OSError(e.errno, f"cannot read {what} {p!r}: {e.strerror or e}") from None
