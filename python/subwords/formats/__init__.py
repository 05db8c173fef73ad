"""Vocabularies made by other libraries, read and written token for token.

``load(path)`` (the same function as ``subwords.load``) finds the format from the file itself (or
takes ``format=``) and returns a :class:`subwords.Tokenizer` that encodes exactly as the library
that made the file; ``export(tok, path, format)`` writes a subwords model in another library's
format, or refuses with the feature it cannot express. Each format has a folder with its reader
(``read.py``) and its writer (``write.py``) side by side:

==================  ===============================================  ====================
format              files                                            folder
==================  ===============================================  ====================
``subwords``        subwords' own JSON model                         (``subwords._api``)
``hf``              Hugging Face ``tokenizer.json``                  ``huggingface/``
``vocab-merges``    ``vocab.json`` + ``merges.txt`` (GPT-2 style)    ``huggingface/``
``sentencepiece``   SentencePiece ``.model`` (protobuf ModelProto)   ``sentencepiece/``
``tiktoken``        tiktoken ``.tiktoken`` rank files                ``tiktoken/``
``subword-nmt``     subword-nmt codes files                          ``subword_nmt/``
``vocab-txt``       BERT ``vocab.txt``                               ``vocab_txt/``
==================  ===============================================  ====================

Special tokens are never recognised in text unless the caller allows them: ``encode(text)``
spells ``"<|endoftext|>"`` as ordinary text; ``encode(text, allowed_special="all")`` (or a set
of surfaces) turns the allowed surfaces into their ids. That is tiktoken's safe default, applied
to every format (see :class:`subwords.Tokenizer` for the other arguments).
"""

from __future__ import annotations

from ._dispatch import FORMATS, detect, export, load
from ._foreign import Foreign, allowed_set

__all__ = ["FORMATS", "Foreign", "allowed_set", "detect", "export", "load"]
