"""One error hierarchy: every class under SubwordsError, each also the builtin a caller would
catch, and a file error that is a real OSError (errno, strerror and filename kept)."""

from __future__ import annotations

import errno
import pickle

import pytest

import subwords
from subwords import errors

FOUR = {"low": 5, "lower": 2, "newest": 6, "widest": 3}


@pytest.mark.parametrize("cls, builtin", [
    (errors.OptionError, ValueError), (errors.InputError, ValueError), (errors.TextTypeError, TypeError),
    (errors.TextTypeError, errors.InputError), (errors.ModelFileError, ValueError), (errors.FileError, OSError),
    (errors.StateError, RuntimeError), (errors.UnknownPieceError, KeyError),
])
def test_every_class_is_a_subwords_error_and_its_builtin(cls, builtin):
    assert issubclass(cls, errors.SubwordsError) and issubclass(cls, builtin)


def test_only_the_file_error_is_an_os_error():
    for cls in (errors.OptionError, errors.InputError, errors.ModelFileError, errors.StateError):
        assert not issubclass(cls, OSError), cls
    assert not issubclass(errors.SubwordsError, ValueError)  # see errors.py: the OSError layout


def test_a_file_error_keeps_what_an_os_error_carries():
    e = errors.FileError(errno.ENOENT, "cannot read model file 'x'", "x")
    assert (e.errno, e.strerror, e.filename) == (errno.ENOENT, "cannot read model file 'x'", "x")
    # as OSError(ENOENT, ...) is a FileNotFoundError, so is FileError(ENOENT, ...)
    assert isinstance(e, FileNotFoundError) and isinstance(e, errors.MissingFileError)
    assert isinstance(errors.FileError(errno.EACCES, "no"), PermissionError)
    assert type(errors.FileError(errno.ENOSPC, "full")) is errors.FileError
    again = pickle.loads(pickle.dumps(e))
    assert type(again) is type(e) and again.errno == errno.ENOENT


def test_a_missing_file_is_a_file_error_from_every_loader(tmp_path):
    for name in ("model.json", "m.model", "x.tiktoken", "codes.bpe", "vocab.txt"):
        with pytest.raises(subwords.FileError) as info:
            subwords.load(tmp_path / name, format={"model.json": "subwords", "m.model": "sentencepiece",
                                                    "x.tiktoken": "tiktoken", "codes.bpe": "subword-nmt",
                                                    "vocab.txt": "vocab-txt"}[name],
                          **({"pattern": "gpt2"} if name == "x.tiktoken" else {}))
        assert info.value.errno == errno.ENOENT and isinstance(info.value, OSError), name
    with pytest.raises(subwords.FileError):
        subwords.load(tmp_path / "nothing-here")  # detection reads the file first


def test_a_missing_training_file_is_a_file_error(tmp_path):
    from pathlib import Path

    with pytest.raises(subwords.FileError) as info:
        subwords.train([Path(tmp_path / "absent.txt")], vocab_size=22)
    assert isinstance(info.value, OSError) and "absent.txt" in str(info.value)


def test_a_save_into_a_missing_folder_is_a_file_error(tmp_path):
    tok = subwords.train(FOUR, vocab_size=22)
    with pytest.raises(subwords.FileError) as info:
        tok.save(tmp_path / "no" / "such" / "model.json")
    assert info.value.errno == errno.ENOENT


def test_a_spent_trainer_is_a_state_error_not_an_os_error():
    from subwords import _core

    trainer = _core.Trainer({"model": "bpe", "spelling": "end", "vocab_size": 22}, 1)
    trainer.add_counts(list(FOUR.items()))
    trainer.train()
    with pytest.raises(subwords.StateError, match="already trained") as info:
        trainer.train()
    assert not isinstance(info.value, OSError)


def test_a_corrupt_model_file_is_a_model_file_error(tmp_path):
    path = tmp_path / "model.json"
    path.write_text('{"format": "subwords", "version": 1, "rows": 5}', encoding="utf-8")
    with pytest.raises(subwords.ModelFileError) as info:
        subwords.load(path)
    assert isinstance(info.value, ValueError) and not isinstance(info.value, OSError)
