"""One exception hierarchy for everything subwords refuses.

Every error says what was wrong and what to do about it. The classes also subclass the builtin
exception a caller would naturally catch (``ValueError``, ``KeyError``), so ``except ValueError``
keeps working.
"""

from __future__ import annotations


class SubwordsError(ValueError):
    """Base class: a bad option, bad input or a bad model file."""


class InputError(SubwordsError):
    """Training or encoding input that cannot be read as text (invalid UTF-8, lone surrogates,
    a malformed ``word<TAB>count`` line, an empty corpus)."""


class ModelFileError(SubwordsError):
    """A model file that is truncated, corrupt, of an unknown version, or hostile."""


class UnknownPieceError(SubwordsError, KeyError):
    """A piece or id that has no row in the vocabulary."""

    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0]) if self.args else ""


__all__ = ["SubwordsError", "InputError", "ModelFileError", "UnknownPieceError"]
