"""tiktoken ``.tiktoken`` rank files: ``read.py`` encodes with them token for token as tiktoken
does, ``write.py`` writes a subwords byte-level BPE model as one."""

from .read import (BYTE_TO_CHAR, CHAR_TO_BYTE, CL100K_PATTERN, ENCODINGS, ENDOFTEXT, GPT2_PATTERN, O200K_PATTERN,
                   PATTERNS, R50K_PATTERN, TiktokenTokenizer, load, piece_bytes, piece_text)
from .write import export

__all__ = ["BYTE_TO_CHAR", "CHAR_TO_BYTE", "CL100K_PATTERN", "ENCODINGS", "ENDOFTEXT", "GPT2_PATTERN", "O200K_PATTERN",
           "PATTERNS", "R50K_PATTERN", "TiktokenTokenizer", "export", "load", "piece_bytes", "piece_text"]
