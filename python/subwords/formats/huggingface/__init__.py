"""Hugging Face ``tokenizer.json`` (and GPT-2 style vocab.json + merges.txt): ``read.py`` runs
the file's pipeline as ``tokenizers`` does, ``write.py`` writes a subwords model as one."""

from .read import HuggingFace, load
from .write import export, tokenizer_json

__all__ = ["HuggingFace", "export", "load", "tokenizer_json"]
