"""Training inputs: files of every format people train on, folders, globs, Python iterables and
🤗 ``datasets``, read as a stream of texts, optionally sampled.

>>> import subwords
>>> from subwords import inputs
>>> data = inputs.texts(iter(["low lower", "newest widest", "", "lowest"]), max_bytes=22)
>>> list(data)
['low lower', 'newest widest']
>>> data.summary()
'read 3 records, kept 2 texts (22 bytes); stopped at max_bytes=22'
>>> inputs.detect("shards/part-0001.jsonl.zst")
Kind(format='jsonl', compression='zstd')
>>> [i for i in range(6) if inputs.keep(i, seed=1, fraction=0.5)]  # the positions sample=0.5, seed=1 keeps
[0, 1, 2, 3, 5]

Formats, by file name (see ``_detect``): plain text, one text per line (``.txt``, and any name
no format claims whose start is text); JSON lines (``.jsonl``, ``.ndjson``), the text at
``text_field`` (a dotted path, default ``text``); both optionally compressed (``.gz``; ``.zst``
with the ``zstd`` extra); Parquet (``.parquet``) and Arrow IPC / Feather (``.arrow``,
``.feather``), the text in ``text_column`` (default ``text``), with the ``arrow`` extra. Every
reader streams: memory grows with one batch, never with the file. ``subwords.train`` takes a
``Texts`` (and reads a ``pathlib.Path`` through one), so the options here are the training
options for inputs; after training, ``skipped`` and ``kept`` say what was read.
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterable, Iterator, Mapping
from typing import Any, Callable, Optional, Union

from ..errors import InputError, OptionError
from ._detect import KNOWN, Kind, detect, expand
from ._records import Records, Tally
from ._sample import Sampler, keep

__all__ = ["Texts", "texts", "detect", "expand", "keep", "Kind", "KNOWN"]

PathLike = Union[str, "os.PathLike[str]"]
BATCH_CHARS = 4 << 20  # texts handed to the engine at a time (as train() does for a list)
DATASET_ROWS = 1000


def _is_path(x: object) -> bool:
    return isinstance(x, (str, os.PathLike))


def _is_dataset(x: object) -> bool:
    """A 🤗 ``datasets`` Dataset or IterableDataset, by its shape (``datasets`` is not imported)."""
    return hasattr(x, "column_names") and callable(getattr(x, "iter", None)) and not isinstance(x, (str, bytes, dict))


class Texts:
    """The texts of ``data``, read lazily; iterate it, or pass it to :func:`subwords.train`.

    ``data``: a path, folder or glob (str or ``os.PathLike``), a list of them, a 🤗 ``datasets``
    Dataset or IterableDataset, or any other iterable of strings (or of dicts, read at
    ``text_field``). A str is always a name here: a list of str is a list of paths, so pass
    texts held in a list as ``iter(the_list)`` (``subwords.train`` takes the list itself).
    ``text_field``: JSON lines' (and dict rows') dotted path to the text, default ``"text"``.
    ``text_column``: Parquet/Arrow (and dataset) column, default ``"text"``.
    ``sample`` (with ``seed``): keep each record with this probability, by a seeded hash of its
    position (see ``_sample``). ``max_bytes``: stop after this many bytes of (sampled) texts.
    ``skip_bad_records``: skip and count a record that is not JSON, lacks the field or column
    value, or is not a string, instead of refusing it naming its file and line.

    After a read: ``records`` (records seen), ``kept`` (texts kept), ``kept_bytes`` (with
    ``max_bytes``), ``skipped`` and ``bad_examples`` (the first few messages),
    ``stopped_at_max_bytes``; :meth:`summary` says it in one line. Plain text files with no
    sampling go to the engine's own parallel reader, which counts nothing here
    (``engine_read``).
    """

    def __init__(self, data: Any, *, text_field: Optional[str] = None, text_column: Optional[str] = None,
                 sample: Optional[float] = None, seed: Optional[int] = None, max_bytes: Optional[int] = None,
                 skip_bad_records: bool = False) -> None:
        if isinstance(data, bytes):
            raise InputError("texts() got bytes: decode them to str, or pass a path")
        for name, value in (("text_field", text_field), ("text_column", text_column)):
            if value is not None and (not isinstance(value, str) or not value or any(not p for p in value.split("."))):
                raise OptionError(f"{name} must be a non-empty name (a dotted path like meta.text for text_field), got {value!r}")
        if sample is not None:
            if isinstance(sample, bool) or not isinstance(sample, (int, float)) or not math.isfinite(sample) or not 0 < sample <= 1:
                raise OptionError(f"sample must be a fraction in (0, 1], got {sample!r}")
            if seed is None:
                raise OptionError("sample needs a seed (CLI: --seed), so that the same inputs give the same sample")
        if seed is not None:
            if sample is None:
                raise OptionError("seed is only used with sample")
            if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < 2**64:
                raise OptionError(f"seed must be a whole number from 0 to 2**64-1, got {seed!r}")
        if max_bytes is not None and (isinstance(max_bytes, bool) or not isinstance(max_bytes, int) or max_bytes < 1):
            raise OptionError(f"max_bytes must be a whole number of bytes from 1, got {max_bytes!r}")
        if not isinstance(skip_bad_records, bool):
            raise OptionError(f"skip_bad_records must be True or False, got {skip_bad_records!r}")
        self.text_field, self.text_column = text_field, text_column
        self.sample, self.seed, self.max_bytes = sample, seed, max_bytes
        self.skip_bad_records = skip_bad_records
        self.files: Optional[list[tuple[str, Kind]]] = None
        self.data: Any = None
        if _is_path(data) or (isinstance(data, (list, tuple)) and data and all(_is_path(p) for p in data)):
            names = [os.fspath(p) for p in ([data] if _is_path(data) else data)]
            self.files = [(p, detect(p)) for p in expand(names)]
            kinds = {k.format for _, k in self.files}
            if text_field is not None and "jsonl" not in kinds:
                raise OptionError("text_field (--text-field) names the text in JSON lines; these inputs hold none "
                                  "(Parquet and Arrow name it with text_column, --text-column)")
            if text_column is not None and not kinds & {"parquet", "arrow"}:
                raise OptionError("text_column (--text-column) names the text in Parquet and Arrow files; these inputs "
                                  "hold none (JSON lines name it with text_field, --text-field)")
        elif isinstance(data, Mapping) or hasattr(data, "iterrows"):
            # a DatasetDict, a dict, a pandas DataFrame: iterating them gives names, not texts
            raise InputError(f"cannot read texts from a {type(data).__name__}: its iteration gives keys or column "
                             "names, not texts; pass one split (ds['train']) or one column (df['text'])")
        elif _is_dataset(data) or isinstance(data, Iterable):
            if isinstance(data, (list, tuple)) and data and any(_is_path(p) for p in data):
                raise InputError("a list of inputs holds paths and other things: pass only paths, or only texts")
            if text_column is not None and not _is_dataset(data):
                raise OptionError("text_column applies to files and 🤗 datasets; rows of dicts name the text with text_field")
            self.data = data
        else:
            raise InputError(f"cannot read texts from {type(data).__name__}: pass paths, texts, or a dataset")
        self.skipped = 0
        self.bad_examples: list[str] = []
        self.records = 0
        self.kept = 0
        self.kept_bytes = 0
        self.stopped_at_max_bytes = False
        self.engine_read = False  # plain text files went to the engine's own reader, uncounted here

    # -- reading --------------------------------------------------------------------------------
    def _records(self, errors: str, tally: Tally, engine_files: bool) -> Iterator[Union[Records, _EngineFile]]:
        if self.files is not None:
            field = (self.text_field or "text").split(".")
            column = self.text_column or "text"
            for path, kind in self.files:
                if engine_files and kind == Kind("text", None):
                    yield _EngineFile(path)
                else:
                    yield from _file_records(path, kind, errors, field, column, tally)
        elif _is_dataset(self.data):
            yield from _dataset_records(self.data, self.text_column or self.text_field or "text", tally)
        else:
            yield from _iter_records(self.data, (self.text_field or "text").split("."), tally)

    def _items(self, errors: str, batch_chars: int, keep_empty: bool, engine_files: bool) -> Iterator[Union[list[str], _EngineFile]]:
        tally = Tally(self.skip_bad_records)
        sampler = Sampler(self.sample, self.seed, self.max_bytes)
        batch: list[str] = []
        size = 0
        try:
            for records in self._records(errors, tally, engine_files):
                if isinstance(records, _EngineFile):
                    if batch:  # the texts before it go first: the engine sees the inputs' order
                        yield batch
                        batch, size = [], 0
                    self.engine_read = True
                    yield records
                    continue
                start = len(batch)
                sampler.take(records, batch, keep_empty)
                size += sum(map(len, batch[start:]))
                if size >= batch_chars:
                    yield batch
                    batch, size = [], 0
                if sampler.full:
                    break
            if batch:
                yield batch
        finally:
            self.skipped, self.bad_examples = tally.skipped, tally.examples
            self.records, self.kept, self.kept_bytes = sampler.index, sampler.kept, sampler.kept_bytes
            self.stopped_at_max_bytes = sampler.full

    def batches(self, errors: str = "strict", batch_chars: int = BATCH_CHARS, keep_empty: bool = False) -> Iterator[list[str]]:
        """The kept texts, in lists of about ``batch_chars`` characters (``keep_empty``: blank
        texts too, as encoding wants one output per record; training skips them)."""
        self.engine_read = False
        for item in self._items(errors, batch_chars, keep_empty, engine_files=False):
            assert not isinstance(item, _EngineFile)
            yield item

    def __iter__(self) -> Iterator[str]:
        for batch in self.batches():
            yield from batch

    def feed(self, trainer: Any, errors: str, feed_batch: Callable[[Any, list[str], int], None]) -> None:
        """Hands every kept text to ``trainer`` (train()'s engine), a batch at a time, in the
        inputs' order; plain text files, when nothing is sampled, go to the engine's own
        parallel reader (which counts nothing here, and refuses an empty corpus itself)."""
        self.engine_read = False
        first = 0
        plain = self.sample is None and self.max_bytes is None
        for item in self._items(errors, BATCH_CHARS, False, engine_files=plain):
            if isinstance(item, _EngineFile):
                trainer.feed_file(item.path)
            else:
                feed_batch(trainer, item, first)
                first += len(item)
        if self.kept == 0 and not self.engine_read:
            if self.records == 0:
                raise InputError("no text to train on: the inputs hold no records (are the files empty?)")
            why = []
            if self.sample is not None:
                why.append(f"sample={self.sample} kept none of them; raise the fraction, or try another seed")
            if self.skipped:
                why.append(f"{self.skipped} bad records were skipped (the first: {self.bad_examples[0]})")
            raise InputError(f"no text to train on: of the {self.records} records read none is a text to learn from"
                             + (": " + "; ".join(why) if why else " (they are blank)"))

    def summary(self) -> str:
        """One line on what the last read kept and skipped (for the CLI and logs)."""
        plain = sum(k == Kind("text", None) for _, k in self.files or ())
        if self.engine_read and not self.records:
            return f"{plain} plain text files, read whole by the engine (no bad records in plain text)"
        parts = [f"read {self.records:,} records, kept {self.kept:,} texts ({self.kept_bytes:,} bytes)"
                 if self.max_bytes is not None else f"read {self.records:,} records, kept {self.kept:,} texts"]
        if self.engine_read:
            parts[0] += f", besides {plain} plain text files read whole by the engine"
        if self.stopped_at_max_bytes:
            parts.append(f"stopped at max_bytes={self.max_bytes:,}")
        if self.skipped:
            parts.append(f"skipped {self.skipped:,} bad records (first: {self.bad_examples[0]})")
        return "; ".join(parts)


def texts(data: Any, **options: Any) -> Texts:
    """``Texts(data, **options)``: the one entry point (see :class:`Texts`)."""
    return Texts(data, **options)


def source(data: Any) -> Optional[Texts]:
    """What ``subwords.train`` reads through this package: a ``Texts``, a path or list of paths
    (``os.PathLike``), or a 🤗 dataset. None for anything else (texts, mappings)."""
    if isinstance(data, Texts):
        return data
    if isinstance(data, os.PathLike) or (isinstance(data, (list, tuple)) and data and all(isinstance(p, os.PathLike) for p in data)):
        return Texts(data)
    if _is_dataset(data):
        return Texts(data)
    return None


class _EngineFile:
    """A plain text file in the stream, for the engine to read itself."""

    __slots__ = ("path",)

    def __init__(self, path: str) -> None:
        self.path = path


def _file_records(path: str, kind: Kind, errors: str, field: list[str], column: str, tally: Tally) -> Iterator[Records]:
    if kind.format == "text":
        from ._records import lines

        for _, chunk in lines(path, kind.compression, errors):
            yield chunk  # type: ignore[misc]  # list[str] is a Records
    elif kind.format == "jsonl":
        from ._jsonl import records

        yield from records(path, kind.compression, errors, field, tally)
    elif kind.format == "parquet":
        from ._arrow import parquet_records

        yield from parquet_records(path, column, tally)
    else:
        from ._arrow import arrow_records

        yield from arrow_records(path, column, tally)


def _iter_records(data: Iterable[Any], field: list[str], tally: Tally) -> Iterator[Records]:
    from ._jsonl import lookup

    out: Records = []
    for n, item in enumerate(data):
        if isinstance(item, str):
            out.append(item)
        elif isinstance(item, dict):
            text, why = lookup(item, field)
            if text is None:
                tally.bad(f"item {n}", why.replace("JSON ", ""))
            out.append(text)
        else:
            tally.bad(f"item {n}", f"a {type(item).__name__}, not a string (or a dict holding one)")
            out.append(None)
        if len(out) >= 8192:
            yield out
            out = []
    if out:
        yield out


def _dataset_records(ds: Any, column: str, tally: Tally) -> Iterator[Records]:
    names = ds.column_names
    if names is not None and column not in names:
        shown = ", ".join(map(repr, names)) or "none"
        raise InputError(f"the dataset has no column {column!r} (its columns are {shown}); name the text's column "
                         "with text_column=")
    if callable(getattr(ds, "select_columns", None)):
        ds = ds.select_columns([column])  # decode only the text
    row = 0
    for batch in ds.iter(batch_size=DATASET_ROWS):
        if column not in batch:
            raise InputError(f"the dataset has no column {column!r} (a batch has {', '.join(map(repr, batch))}); "
                             "name the text's column with text_column=")
        values = list(batch[column])
        out: Records = []
        for k, v in enumerate(values):
            if isinstance(v, str):
                out.append(v)
            else:
                tally.bad(f"dataset row {row + k}", f"the column {column!r} holds {type(v).__name__}, not a string")
                out.append(None)
        row += len(values)
        yield out
