"""subword-nmt codes files: ``read.py`` reads and segments them as ``apply_bpe``, ``write.py``
writes a subwords BPE model as one."""

from .read import SubwordNmt, load
from .write import END, codes_text, export

__all__ = ["END", "SubwordNmt", "codes_text", "export", "load"]
