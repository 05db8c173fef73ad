"""The old name of ``formats/huggingface/write.py`` (kept for scripts that import it)."""

from .huggingface.write import export, tokenizer_json

__all__ = ["export", "tokenizer_json"]
