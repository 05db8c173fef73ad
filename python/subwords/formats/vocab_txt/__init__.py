"""BERT ``vocab.txt``: ``read.py`` (``bert``: the WordPiece tokenizer BERT readers make of one),
``write.py`` (a subwords WordPiece model written as one)."""

from .read import MAX_VOCAB_TXT_BYTES, bert, load
from .write import export

__all__ = ["MAX_VOCAB_TXT_BYTES", "bert", "export", "load"]
