"""Format dispatch: which module reads and writes which format, and detection from a file."""

from __future__ import annotations

import os
from types import ModuleType
from typing import TYPE_CHECKING, Any, Optional

from ..errors import FileError, InputError, ModelFileError, OptionError
from . import huggingface, sentencepiece, subword_nmt, tiktoken, vocab_txt
from ._foreign import PathLike

if TYPE_CHECKING:
    from .._protocol import Tokenizer

from .._format_names import FORMATS as FORMATS  # noqa: E402  (one list for the CLI and the dispatcher)

# The package that reads (``load``) and writes (``export``) each format other than ours.
_MODULES: dict[str, ModuleType] = {"hf": huggingface, "vocab-merges": huggingface, "sentencepiece": sentencepiece,
                                   "tiktoken": tiktoken, "subword-nmt": subword_nmt, "vocab-txt": vocab_txt}


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
        raise FileError(e.errno, f"cannot read model file {p!r}: {e.strerror or e}") from None
    name = os.path.basename(p).lower()
    text = head.lstrip()
    if text.startswith(b"{"):
        if b'"format"' in head and b'"subwords"' in head:
            return "subwords"
        return "hf"
    if name.endswith(".json") and name != "tokenizer.json":
        return "subwords"  # not JSON at all: subwords' reader says what is wrong with it
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


def load(path: PathLike, format: Optional[str] = None, **options: Any) -> Tokenizer:
    """A tokenizer from ``path`` in any supported format (detected from the file unless
    ``format`` is given: one of ``FORMATS``). subwords' own model files give a
    :class:`~subwords.SubwordsTokenizer` (a :class:`~subwords.UnigramTokenizer` for Unigram);
    every format answers :class:`subwords.Tokenizer`. ``options`` are the format's own load
    options (``pattern=`` for tiktoken, ``lowercase=`` for vocab.txt, ...)."""
    fmt = format or detect(path)
    if fmt not in FORMATS:
        raise OptionError(f"format={fmt!r} is not one of {', '.join(FORMATS)}")
    if fmt == "subwords":
        from .._api import load_model_file

        if options:
            raise OptionError(f"a subwords model file takes no load options (got {sorted(options)})")
        return load_model_file(path)
    tokenizer: Tokenizer = _MODULES[fmt].load(path, format=fmt, **options)
    return tokenizer


def export(tokenizer: Any, path: PathLike, format: str) -> None:
    """Writes a subwords model in another library's format. Refuses (InputError naming the
    feature) when the model uses something that format cannot express."""
    if format not in FORMATS:
        raise OptionError(f"format={format!r} is not one of {', '.join(FORMATS)}")
    if format == "subwords":
        tokenizer.save(path)
        return
    if (getattr(tokenizer, "options", None) or {}).get("picky") is not None:
        raise InputError(f"a {format!r} file cannot express a Picky BPE model: its encoding replays removals "
                         "between the merges, which no merge list holds. Keep subwords' own file")
    if (getattr(tokenizer, "options", None) or {}).get("boundless") is not None:
        raise InputError(f"a {format!r} file cannot express a BoundlessBPE model: its encoding deletes tokens "
                         "between the merges (a deleted token would still be made by its merge and emitted though "
                         "it is no row), and joins a superword only where both sides are whole pretokens, a "
                         "condition no merge list or rank file can state. Keep subwords' own file")
    if (getattr(tokenizer, "options", None) or {}).get("scaffold"):
        raise InputError(f"a {format!r} file cannot express a Scaffold-BPE model: its encoding splits the scaffold "
                         "tokens the merges make, which are no rows, and no merge list or rank file undoes a merge. "
                         "Keep subwords' own file")
    if format != "hf":
        _refuse_new_spelling_options(tokenizer, format)
    _MODULES[format].export(tokenizer, path, format=format)


def _refuse_new_spelling_options(tokenizer: Any, format: str) -> None:
    """The formats other than tokenizer.json have no place for ``normalize=``, a pattern
    pre-split or digit splitting: a file without them would cut text differently, so it is
    refused (nothing written)."""
    sp = getattr(tokenizer, "spelling", None) or {}
    used = [f"{k}={sp[k]!r}" for k in ("normalize", "pattern", "split_digits") if sp.get(k) not in (None, "none")]
    if used:
        raise InputError(f"a {format!r} file cannot express {', '.join(used)}: it would cut text differently "
                         "from this model. Export to 'hf' (tokenizer.json) or keep subwords' own file")
