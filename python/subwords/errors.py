"""One exception hierarchy for everything subwords refuses.

Every error says what was wrong and what to do about it. ``SubwordsError`` is the base of them
all; each class also subclasses the builtin exception a caller would naturally catch, so
``except ValueError`` (a bad option, bad input, a bad model file), ``except OSError`` (a file that
cannot be read or written), ``except TypeError`` (a text that is not ``str``) and ``except
KeyError`` (an unknown piece) keep working:

===================  =====================================  ======================
class                raised for                             also a
===================  =====================================  ======================
``OptionError``      an unknown or out-of-range option      ``ValueError``
``InputError``       text or a corpus that cannot be used   ``ValueError``
``TextTypeError``    a text that is not ``str``             ``InputError``, ``TypeError``
``ModelFileError``   a corrupt, truncated or hostile file   ``ValueError``
``FileError``        a file that cannot be read or written  ``OSError`` (by errno:
                                                            ``FileNotFoundError``...)
``StateError``       an object used twice (a spent trainer) ``RuntimeError``
``UnknownPieceError``  a piece or id with no row            ``KeyError``
===================  =====================================  ======================

``SubwordsError`` itself derives from ``Exception`` only. It cannot derive from ``ValueError``
and still have an ``OSError`` below it: Python would build such a class (both share
``BaseException``'s layout as far as ``ValueError`` goes), but its constructor would be
``ValueError``'s, so ``FileError(errno, message, filename)`` would lose ``errno``, ``strerror``
and ``filename`` (``tests/api/test_errors.py`` checks they survive).
"""

from __future__ import annotations

import errno


class SubwordsError(Exception):
    """Base class of every error subwords raises on purpose."""


class OptionError(SubwordsError, ValueError):
    """An option that does not exist, is out of its range, or does not go with the others
    (``vocab_size=-1``, ``model="bpe"`` with ``em_rounds``, ``threads=0``)."""


class InputError(SubwordsError, ValueError):
    """Training or encoding input that cannot be read as text (invalid UTF-8, lone surrogates,
    a malformed ``word<TAB>count`` line, an empty corpus)."""


class TextTypeError(InputError, TypeError):
    """A text that is not a ``str`` (bytes, a number, None), given to any tokenizer."""


class ModelFileError(SubwordsError, ValueError):
    """A model file that is truncated, corrupt, of an unknown version, or hostile."""


class FileError(SubwordsError, OSError):
    """A file or folder that cannot be read or written (missing, no permission, a full disk).
    ``errno``, ``strerror`` and ``filename`` are set as on any ``OSError``, and, as ``OSError``
    does, ``FileError(errno.ENOENT, ...)`` is a :class:`MissingFileError` (a
    ``FileNotFoundError``), so ``except FileNotFoundError`` keeps working."""

    def __new__(cls, *args: object) -> FileError:
        if cls is FileError and len(args) >= 2 and isinstance(args[0], int):
            cls = _BY_ERRNO.get(args[0], FileError)
        self: FileError = super().__new__(cls, *args)
        return self


class MissingFileError(FileError, FileNotFoundError):
    """A file or folder that does not exist."""


class FilePermissionError(FileError, PermissionError):
    """A file or folder this process may not read or write."""


class IsAFolderError(FileError, IsADirectoryError):
    """A folder where a file was expected."""


class NotAFolderError(FileError, NotADirectoryError):
    """A file where a folder was expected."""


_BY_ERRNO: dict[int, type[FileError]] = {
    errno.ENOENT: MissingFileError, errno.EACCES: FilePermissionError, errno.EPERM: FilePermissionError,
    errno.EISDIR: IsAFolderError, errno.ENOTDIR: NotAFolderError,
}


class StateError(SubwordsError, RuntimeError):
    """An object used in a way its state no longer allows (a trainer that has already trained)."""


class UnknownPieceError(SubwordsError, KeyError):
    """A piece or id that has no row in the vocabulary."""

    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0]) if self.args else ""


__all__ = ["SubwordsError", "OptionError", "InputError", "TextTypeError", "ModelFileError", "FileError",
           "MissingFileError", "FilePermissionError", "IsAFolderError", "NotAFolderError", "StateError",
           "UnknownPieceError"]
