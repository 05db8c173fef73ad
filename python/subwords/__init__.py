"""subwords: learn subword vocabularies (BPE, WordPiece, Unigram) on any spelling of the text.

    >>> import subwords
    >>> tok = subwords.train({"low": 5, "lower": 2, "newest": 6, "widest": 3}, vocab_size=22)
    >>> tok.encode_pieces("lowest")
    ['lo', 'w', 'est</w>']

The Rust engine is loaded on first use, so ``import subwords`` stays cheap and the pure-Python
reference (``subwords.reference``) works without it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .errors import InputError, ModelFileError, OptionError, SubwordsError, UnknownPieceError

if TYPE_CHECKING:  # loaded lazily at run time, by __getattr__
    from ._api import Tokenizer as Tokenizer, bert as bert, count as count, load as load, train as train
    from .counts import CountTable as CountTable

__version__ = "0.1.0"

_API = ("train", "load", "bert", "Tokenizer", "count")

__all__ = [*_API, "CountTable", "SubwordsError", "OptionError", "InputError", "ModelFileError", "UnknownPieceError", "__version__"]


def __getattr__(name: str) -> object:
    if name in _API:
        from . import _api

        return getattr(_api, name)
    if name == "CountTable":
        from .counts import CountTable

        return CountTable
    raise AttributeError(f"module 'subwords' has no attribute {name!r}")
