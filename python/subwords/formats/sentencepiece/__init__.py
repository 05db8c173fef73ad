"""SentencePiece ``.model`` files: ``read.py`` encodes and decodes as ``sentencepiece`` does
(pieces included), ``write.py`` writes a subwords Unigram or BPE model as one."""

from .read import TYPES, SentencePieceTokenizer, from_bytes, load, read_vocab, write_vocab
from .write import WHITESPACE, export, model_bytes

__all__ = ["TYPES", "WHITESPACE", "SentencePieceTokenizer", "export", "from_bytes", "load", "model_bytes",
           "read_vocab", "write_vocab"]
