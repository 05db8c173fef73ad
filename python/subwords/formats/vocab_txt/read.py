"""Reading a BERT ``vocab.txt`` (one piece per line, its line number its id) as the WordPiece
tokenizer BERT readers make of it (``subwords.bert``); ``write.py`` is the other direction and
its docstring says what the two conventions (cased, uncased) are."""

from __future__ import annotations

import json
import os
import re
from typing import TYPE_CHECKING, Any, Optional, Union

from ... import _core
from ..._io import read_limited
from ...errors import InputError, ModelFileError, SubwordsError

if TYPE_CHECKING:
    from ..._api import SubwordsTokenizer

MAX_VOCAB_TXT_BYTES = 64 << 20  # bert-base-uncased's is 232 KB, multilingual BERT's under 1 MB
_SPECIAL = re.compile(r"\[[A-Za-z0-9_]+\]")


def bert(vocab: Union[str, os.PathLike[str]], *, lowercase: bool = True, strip_accents: Optional[bool] = None,
         clean_text: bool = True) -> "SubwordsTokenizer":
    """A BERT WordPiece tokenizer from an existing ``vocab.txt`` (one piece per line, its line
    number its id), used as it is: text cleaned, CJK ideographs and punctuation split off,
    lower-cased and stripped of accents when ``lowercase`` (as ``bert-base-uncased``; pass
    ``lowercase=False`` for cased vocabularies), longest match first with ``##`` continuations,
    words over 100 characters as ``[UNK]``, and ``[CLS]``/``[SEP]`` around every text.
    """
    from ..._api import _wrap, from_parts, spelling_object

    p = os.fspath(vocab)
    raw = read_limited(p, MAX_VOCAB_TXT_BYTES, "vocabulary (vocab.txt)")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise ModelFileError(f"{p}: not UTF-8 text; a BERT vocab.txt is one UTF-8 piece per line") from None
    text = text[:-1] if text.endswith("\n") else text
    strip = lowercase if strip_accents is None else strip_accents
    spelling = {"scheme": "continuation", "mark": "##", "pre_split": "bert", "clean_text": bool(clean_text),
                "strip_accents": bool(strip), "lowercase": bool(lowercase)}
    # a file with nothing wrong is read in the core; any other is checked below, line by line
    try:
        fast = _core.Model.from_vocab_txt(text, json.dumps(spelling_object(spelling)))
    except ModelFileError as e:
        raise ModelFileError(f"{p}: {e}") from None
    except SubwordsError as e:
        raise ModelFileError(f"{p}: the model file's settings are invalid: {e}") from None
    if fast is not None:
        return _wrap(fast)
    lines = text.split("\n") if raw else []
    pieces = [line.rstrip("\r") for line in lines] if "\r" in text else lines
    if not pieces:
        raise ModelFileError(f"{p}: empty vocabulary")
    # whitespace in a line or an empty line, in one pass over the whole text: ``str.split()`` cuts
    # at ``str.isspace`` characters and drops empty pieces, so it gives back the lines exactly when
    # neither occurs (a test of each character of each piece took a third of a 30k load, issue
    # 15); only then is each line looked at, to name the bad one, or when a line ends in \r
    if pieces is not lines or text.split() != lines:
        for n, piece in enumerate(pieces, 1):
            if not piece or any(c.isspace() for c in piece):
                raise ModelFileError(f"{p}: line {n}: {piece!r} is not a piece (empty or with whitespace)")
    for name in ("[UNK]", "[CLS]", "[SEP]"):
        if name not in pieces:
            raise ModelFileError(f"{p}: has no {name} row; a BERT vocabulary needs [UNK], [CLS] and [SEP]")
    rows = [(piece, "special" if piece[:1] == "[" and _SPECIAL.fullmatch(piece) else "piece") for piece in pieces]
    try:
        return from_parts("wordpiece", spelling, rows, template=("[CLS]", "[SEP]"))
    except ModelFileError as e:
        raise ModelFileError(f"{p}: {e}") from None


def load(path: Union[str, os.PathLike[str]], format: str = "vocab-txt", **options: Any) -> "SubwordsTokenizer":
    """``subwords.load`` for a vocab.txt (or a folder holding one); options are :func:`bert`'s."""
    if format != "vocab-txt":
        raise InputError(f"vocab_txt.load reads format='vocab-txt', not {format!r}")
    p = os.fspath(path)
    return bert(os.path.join(p, "vocab.txt") if os.path.isdir(p) else p, **options)
