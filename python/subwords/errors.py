"""One exception hierarchy for everything subwords refuses.

Every error says what was wrong and what to do about it. The classes also subclass the builtin
exception a caller would naturally catch (``ValueError``, ``KeyError``), so ``except ValueError``
keeps working.
"""

from __future__ import annotations


class SubwordsError(ValueError):
    """Base class: a bad option, bad input or a bad model file."""


class OptionError(SubwordsError):
    """An option that does not exist, is out of its range, or does not go with the others
    (``vocab_size=-1``, ``model="bpe"`` with ``em_rounds``, ``threads=0``)."""


class InputError(SubwordsError):
    """Training or encoding input that cannot be read as text (invalid UTF-8, lone surrogates,
    a malformed ``word<TAB>count`` line, an empty corpus)."""


class ModelFileError(SubwordsError):
    """A model file that is truncated, corrupt, of an unknown version, or hostile."""


class UnknownPieceError(SubwordsError, KeyError):
    """A piece or id that has no row in the vocabulary."""

    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0]) if self.args else ""


__all__ = ["SubwordsError", "OptionError", "InputError", "ModelFileError", "UnknownPieceError"]
