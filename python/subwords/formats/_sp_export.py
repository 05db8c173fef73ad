"""The old name of ``formats/sentencepiece/write.py`` (kept for scripts that import it)."""

from .sentencepiece.write import WHITESPACE, export, model_bytes

__all__ = ["WHITESPACE", "export", "model_bytes"]
