"""Parquet and Arrow (IPC file or stream; Feather v2 is the IPC file) through pyarrow (the
``arrow`` extra), one record batch at a time: a Parquet file by its row groups, an Arrow file
memory-mapped, so only the text column of one batch is ever in memory. The text column must
hold strings; a null in it is a bad record, named by file and row (counted from 1)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from ..errors import InputError
from ._compressed import missing_extra
from ._records import Records, Tally

BATCH_ROWS = 8192


def _pyarrow(path: str, what: str) -> Any:
    try:
        import pyarrow
        import pyarrow.ipc  # noqa: F401
        import pyarrow.parquet  # noqa: F401
    except ImportError:
        raise missing_extra(path, what, "pyarrow", "arrow") from None
    return pyarrow


def _column_index(pa: Any, path: str, schema: Any, column: str) -> int:
    names = list(schema.names)
    if column not in names:
        shown = ", ".join(map(repr, names[:20])) or "none"
        raise InputError(f"{path}: no column {column!r} (the columns are {shown}); name the text's column with "
                         "text_column= (CLI: --text-column)")
    t = schema.field(column).type
    if pa.types.is_dictionary(t):
        t = t.value_type
    textual = pa.types.is_string(t) or pa.types.is_large_string(t) or getattr(pa.types, "is_string_view", lambda _: False)(t)
    if not textual:
        raise InputError(f"{path}: the column {column!r} holds {t}, not strings; name the text's column with "
                         "text_column= (CLI: --text-column)")
    return names.index(column)


def _texts(batch_column: Any, path: str, first_row: int, tally: Tally) -> Records:
    try:
        values: Records = batch_column.to_pylist()
    except UnicodeDecodeError as e:
        raise InputError(f"{path}: rows {first_row}-{first_row + len(batch_column) - 1}: a string that is not valid "
                         f"UTF-8 ({e}); the file is corrupt") from None
    if batch_column.null_count:
        for k, v in enumerate(values):
            if v is None:
                tally.bad(f"{path}: row {first_row + k}", "the text column holds null, not a string")
    return values


def _broken(path: str, fmt: str, e: Exception) -> InputError:
    return InputError(f"{path}: not a readable {fmt} file ({e}); check that it was written completely")


def parquet_records(path: str, column: str, tally: Tally) -> Iterator[Records]:
    pa = _pyarrow(path, "Parquet files")
    try:
        f = pa.parquet.ParquetFile(path)
    except (pa.ArrowException, OSError) as e:
        raise _broken(path, "Parquet", e) from None
    with f:
        _column_index(pa, path, f.schema_arrow, column)
        row = 1
        batches = f.iter_batches(batch_size=BATCH_ROWS, columns=[column], use_threads=False)
        while True:
            try:
                batch = next(batches, None)
            except (pa.ArrowException, OSError) as e:
                raise _broken(path, "Parquet", e) from None
            if batch is None:
                return
            yield _texts(batch.column(0), path, row, tally)
            row += batch.num_rows


def arrow_records(path: str, column: str, tally: Tally) -> Iterator[Records]:
    pa = _pyarrow(path, "Arrow files")
    try:
        source = pa.memory_map(path, "r")
    except (pa.ArrowException, OSError) as e:
        raise _broken(path, "Arrow", e) from None
    with source:
        try:
            reader: Any = pa.ipc.open_file(source)
            batches: Iterator[Any] = (reader.get_batch(i) for i in range(reader.num_record_batches))
        except pa.ArrowInvalid:
            source.seek(0)
            try:
                reader = pa.ipc.open_stream(source)  # the IPC stream format has no footer
            except (pa.ArrowException, OSError) as e:
                raise _broken(path, "Arrow", e) from None
            batches = iter(reader)
        index = _column_index(pa, path, reader.schema, column)
        row = 1
        while True:
            try:
                batch = next(batches, None)
            except (pa.ArrowException, OSError) as e:
                raise _broken(path, "Arrow", e) from None
            if batch is None:
                return
            col = batch.column(index)
            # an IPC batch may be the whole file: hand it on in slices (zero-copy on the map)
            for off in range(0, len(col), BATCH_ROWS):
                yield _texts(col.slice(off, BATCH_ROWS), path, row + off, tally)
            row += batch.num_rows
