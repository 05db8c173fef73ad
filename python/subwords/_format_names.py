"""The names of the model file formats (``--format``), kept apart from ``subwords.formats`` so the
CLI can list them without importing every reader and writer (``subwords train`` needs none)."""

FORMATS = ("subwords", "hf", "vocab-merges", "sentencepiece", "tiktoken", "subword-nmt", "vocab-txt")
