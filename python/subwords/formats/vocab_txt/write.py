"""BERT ``vocab.txt``: a WordPiece model written as one piece per line, its line number its id.

A vocab.txt holds only the pieces; everything else is fixed by the reader (``subwords.bert``,
tokenizers' ``BertWordPieceTokenizer``, transformers' ``BertTokenizer``): the ``continuation``
spelling with ``##``, BERT's pre-split (punctuation and CJK ideographs stand alone), text
cleaning, ``[UNK]`` for a word that cannot be finished or is longer than 100 characters. So a
model is written only when it already is that tokenizer; what a reader takes as an argument --
``lowercase`` (accents stripped with it) -- must be one of the two conventions readers agree on:

* uncased (``lowercase``, ``strip_accents`` and ``clean_text`` all on, as ``preset="bert"``):
  ``subwords.bert(path)`` and ``BertWordPieceTokenizer(path)`` with their defaults;
* cased (``lowercase`` and ``strip_accents`` off, ``clean_text`` on): pass ``lowercase=False``
  to either reader.

Readers need ``[CLS]`` and ``[SEP]`` rows and put them around every text; a trained model has
neither, so they are appended after the last row when missing (every existing id is kept):
``subwords.bert(path).encode(text, add_special_tokens=False) == tok.encode(text)``, and the same
for ``BertWordPieceTokenizer`` except on text that holds a special token's surface (``[UNK]``,
``[CLS]``...), which tokenizers turns into that token and subwords spells as text.
"""

from __future__ import annotations

import json
import os
import re
from typing import Any

from ...errors import InputError
from .._foreign import PathLike
from ..._io import write_atomic

_SPECIAL = re.compile(r"\[[A-Za-z0-9_]+\]")


def export(tokenizer: Any, path: PathLike, format: str = "vocab-txt") -> None:
    """Writes ``tokenizer`` (a WordPiece model on the continuation spelling with BERT's
    pre-split, or a model from ``subwords.bert``) as a BERT vocab.txt, atomically. A folder
    ``path`` gets ``path/vocab.txt``. Refuses (InputError naming the feature) what a vocab.txt
    cannot carry."""
    if format != "vocab-txt":
        raise InputError(f"vocab_txt.export writes format='vocab-txt', not {format!r}")
    from ..._api import SubwordsTokenizer

    if not isinstance(tokenizer, SubwordsTokenizer):
        raise InputError(f"export to vocab-txt takes a subwords Tokenizer (WordPiece), got {type(tokenizer).__name__}")
    rows = _rows(tokenizer)
    p = os.fspath(path)
    if os.path.isdir(p):
        p = os.path.join(p, "vocab.txt")
    write_atomic(p, "".join(r + "\n" for r in rows), "vocab.txt")


def _rows(tok: Any) -> list[str]:
    def refuse(feature: str) -> None:
        raise InputError(f"cannot write this model as a BERT vocab.txt: {feature}")

    if tok.model != "wordpiece":
        refuse(f"it is a {tok.model} model; a vocab.txt is read by longest match (WordPiece); "
               "train with model='wordpiece' (or preset='bert')")
    # A line is only its piece: every line that begins with ## is read as a continuation, so a
    # row that starts a word with ## (the word "##word"; docs/FORMAT.md) has no line of its own.
    for i, row in enumerate(json.loads(tok.to_json())["rows"]):
        if len(row) == 3:
            refuse(f"the row {row[0]!r} (id {i}) starts a word although it begins with '##'; a vocab.txt line "
                   "that begins with ## is read as a continuation. Train with pre_split='bert' (punctuation "
                   "stands alone, so no word begins with ##)")
    s = tok.spelling
    if s.get("scheme") != "continuation" or s.get("mark") != "##":
        refuse(f"it uses the {s.get('scheme')} spelling with mark {s.get('mark')!r}; BERT readers use continuation '##'")
    if s.get("byte_fallback"):
        refuse("byte fallback; BERT readers have no byte rows")
    if s.get("pre_split") != "bert":
        refuse(f"pre_split={s.get('pre_split')!r}; BERT readers split off punctuation and CJK ideographs "
               "(train with pre_split='bert' or preset='bert')")
    if not s.get("clean_text"):
        refuse("clean_text=False; BERT readers clean the text (drop control characters, whitespace to spaces)")
    if bool(s.get("lowercase")) != bool(s.get("strip_accents")):
        refuse(f"lowercase={s.get('lowercase')} with strip_accents={s.get('strip_accents')}; readers pair them "
               "(uncased: both on; cased: both off)")
    opts = tok.options
    if opts:
        if opts.get("unknown", "word") != "word":
            refuse(f"unknown={opts.get('unknown')!r}; BERT readers make an unfinishable word one [UNK] ('word')")
        if opts.get("max_word_length", 100) != 100:
            refuse(f"max_word_length={opts.get('max_word_length')!r}; BERT readers use 100 characters")
    rows = list(tok.rows)
    kinds = list(tok.kinds)
    seen: dict[str, int] = {}
    for i, (piece, kind) in enumerate(zip(rows, kinds)):
        if kind == "special" and piece != "[UNK]" and not _SPECIAL.fullmatch(piece):
            refuse(f"the special row {piece!r} (id {i}) would read back as a plain piece")
        if kind != "special" and _SPECIAL.fullmatch(piece):
            refuse(f"the piece {piece!r} (id {i}) would read back as a special token")
        if not piece or any(c.isspace() for c in piece):
            refuse(f"the row {piece!r} (id {i}) is empty or holds whitespace, which a line cannot")
        if piece in seen:
            refuse(f"the piece {piece!r} is rows {seen[piece]} and {i}; a vocab.txt gives each piece one id")
        seen[piece] = i
    if "[UNK]" not in seen:
        refuse("it has no [UNK] row")
    for name in ("[CLS]", "[SEP]"):
        if name not in seen:
            rows.append(name)
    return rows
