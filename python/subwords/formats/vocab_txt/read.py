"""Reading a BERT ``vocab.txt`` (one piece per line, its line number its id) as the WordPiece
tokenizer BERT readers make of it (``subwords.bert``); ``write.py`` is the other direction and
its docstring says what the two conventions (cased, uncased) are."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any, Optional, Union

from ... import _core
from ..._io import read_limited
from ...errors import InputError, ModelFileError, SubwordsError

if TYPE_CHECKING:
    from ..._api import SubwordsTokenizer

MAX_VOCAB_TXT_BYTES = 64 << 20  # bert-base-uncased's is 232 KB, multilingual BERT's under 1 MB


def bert(vocab: Union[str, os.PathLike[str]], *, lowercase: bool = True, strip_accents: Optional[bool] = None,
         clean_text: bool = True) -> "SubwordsTokenizer":
    """A BERT WordPiece tokenizer from an existing ``vocab.txt`` (one piece per line, its line
    number its id), used as it is: text cleaned, CJK ideographs and punctuation split off,
    lower-cased and stripped of accents when ``lowercase`` (as ``bert-base-uncased``; pass
    ``lowercase=False`` for cased vocabularies), longest match first with ``##`` continuations,
    words over 100 characters as ``[UNK]``, and ``[CLS]``/``[SEP]`` around every text. A line
    ``[NAME]`` (ASCII letters, digits and ``_``) is a special row, the rule ``write.py`` writes
    by; a line's trailing ``\r``s are dropped.
    """
    from ..._api import _wrap

    p = os.fspath(vocab)
    raw = read_limited(p, MAX_VOCAB_TXT_BYTES, "vocabulary (vocab.txt)")
    strip = lowercase if strip_accents is None else strip_accents
    spelling = {"scheme": "continuation", "mark": "##", "pre_split": "bert", "clean_text": bool(clean_text),
                "strip_accents": bool(strip), "lowercase": bool(lowercase)}
    # the bytes, their UTF-8, the lines, their checks and the special rows ([NAME]) are read in
    # the core, which hands back what is wrong with a file that is not a vocabulary
    try:
        got = _core.Tokenizer.from_vocab_txt(raw, spelling)
    except ModelFileError as e:
        raise ModelFileError(f"{p}: {e}") from None
    except SubwordsError as e:
        raise ModelFileError(f"{p}: the model file's settings are invalid: {e}") from None
    if isinstance(got, tuple):
        problem, line, what = got
        if problem == "utf-8":
            raise ModelFileError(f"{p}: line {line} is not UTF-8 text; a BERT vocab.txt is one UTF-8 piece per line")
        if problem == "line":
            raise ModelFileError(f"{p}: line {line}: {what!r} is not a piece (empty or with whitespace)")
        if problem == "missing":
            raise ModelFileError(f"{p}: has no {what} row; a BERT vocabulary needs [UNK], [CLS] and [SEP]")
        raise ModelFileError(f"{p}: empty vocabulary")
    return _wrap(got)


def load(path: Union[str, os.PathLike[str]], format: str = "vocab-txt", **options: Any) -> "SubwordsTokenizer":
    """``subwords.load`` for a vocab.txt (or a folder holding one); options are :func:`bert`'s."""
    if format != "vocab-txt":
        raise InputError(f"vocab_txt.load reads format='vocab-txt', not {format!r}")
    p = os.fspath(path)
    return bert(os.path.join(p, "vocab.txt") if os.path.isdir(p) else p, **options)
