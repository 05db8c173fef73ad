"""subwords: learn subword vocabularies (BPE, WordPiece, Unigram) on any spelling of the text.

    >>> import subwords
    >>> tok = subwords.train({"low": 5, "lower": 2, "newest": 6, "widest": 3}, vocab_size=22)
    >>> tok.encode_pieces("lowest")
    ['lo', 'w', 'est</w>']

``subwords.Tokenizer`` is the protocol every tokenizer answers: the models ``train`` makes
(``SubwordsTokenizer``; ``UnigramTokenizer`` for Unigram, with its analysis) and every file
``load`` reads, ours or another library's. The Rust engine is loaded on first use, so
``import subwords`` stays cheap and the pure-Python reference (``subwords.reference``) works
without it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ._options import DEFAULT, TrainOptions
from ._protocol import Tokenizer
from .errors import (FileError, InputError, ModelFileError, OptionError, StateError, SubwordsError, TextTypeError,
                     UnknownPieceError)

if TYPE_CHECKING:  # loaded lazily at run time, by __getattr__
    from ._api import SubwordsTokenizer as SubwordsTokenizer, UnigramTokenizer as UnigramTokenizer, train as train
    from .formats._dispatch import load as load
    from .formats.vocab_txt import bert as bert
    from ._api import count as count
    from .counts import CountTable as CountTable
    from ._arrays import IdArray as IdArray
    from ._extend import extend as extend
    from ._trim import trim as trim

    __version__: str  # the installed distribution's version: Cargo's workspace version (Cargo.toml)

_API = ("train", "SubwordsTokenizer", "UnigramTokenizer", "count")

__all__ = [*_API, "load", "bert", "extend", "trim", "Tokenizer", "TrainOptions", "DEFAULT", "CountTable", "IdArray",
           "SubwordsError", "OptionError",
           "InputError", "TextTypeError", "ModelFileError", "FileError", "StateError", "UnknownPieceError",
           "__version__"]


def __getattr__(name: str) -> object:
    if name in _API:
        from . import _api

        return getattr(_api, name)
    if name == "IdArray":
        from ._arrays import IdArray

        return IdArray
    if name == "CountTable":
        from .counts import CountTable

        return CountTable
    if name == "load":
        from .formats import _dispatch

        return _dispatch.load
    if name == "bert":
        from .formats import vocab_txt

        return vocab_txt.bert
    if name == "extend":
        from ._extend import extend

        return extend
    if name == "trim":
        from ._trim import trim

        return trim
    if name == "__version__":  # one source: maturin writes Cargo's workspace version into the metadata
        from importlib.metadata import version

        return version("subwords")
    raise AttributeError(f"module 'subwords' has no attribute {name!r}")
