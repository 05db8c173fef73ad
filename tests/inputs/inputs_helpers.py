"""What the input tests share: one small corpus written in every format, and a CLI runner."""

from __future__ import annotations

import contextlib
import gzip
import io
import json
import os
import sys
from pathlib import Path
from typing import Optional

import pyarrow as pa
import pyarrow.feather
import pyarrow.ipc
import pyarrow.parquet
import zstandard

from subwords.cli import main

# Texts with no line end inside (so that one text per line holds them all), blank ones among them
# (no record of training: every reader drops them alike), several scripts, repeats.
TEXTS = [
    "low lower lowest newest widest",
    "the quick brown fox jumps over the lazy dog",
    "",
    "Grüße aus Köln, schöne Straße",
    "日本語のテキストと English mixed",
    "  leading and trailing spaces  ",
    "tabs\tbetween\twords",
    "emoji 🙂 and punctuation: (a), [b]!",
    "",
    "low lower lowest newest widest",
] * 7


def write_all(folder: Path, texts: list[str] = TEXTS, field: str = "text") -> dict[str, Path]:
    """The same texts as every format subwords reads; JSON lines keep the text at ``field``
    (a dotted path), tables in the column ``text``."""
    folder.mkdir(parents=True, exist_ok=True)
    plain = ("\n".join(texts) + "\n").encode("utf-8")
    out: dict[str, Path] = {}

    def put(name: str, data: bytes) -> None:
        (folder / name).write_bytes(data)
        out[name] = folder / name

    put("c.txt", plain)
    put("c.txt.gz", gzip.compress(plain))
    put("c.txt.zst", zstandard.ZstdCompressor().compress(plain))
    put("crlf.txt.gz", gzip.compress(plain.replace(b"\n", b"\r\n")))
    keys = field.split(".")

    def record(t: str) -> dict:
        obj: dict = {"id": 1, keys[-1]: t}
        for k in reversed(keys[:-1]):
            obj = {k: obj, "other": [1, 2]}
        return obj

    jsonl = "".join(json.dumps(record(t), ensure_ascii=False) + "\n" for t in texts).encode("utf-8")
    put("c.jsonl", jsonl)
    put("c.jsonl.gz", gzip.compress(jsonl))
    put("c.jsonl.zst", zstandard.ZstdCompressor().compress(jsonl))
    table = pa.table({"id": list(range(len(texts))), "text": texts})
    pyarrow.parquet.write_table(table, folder / "c.parquet", row_group_size=9)  # several row groups
    out["c.parquet"] = folder / "c.parquet"
    pyarrow.feather.write_feather(table, folder / "c.feather", chunksize=11)  # several record batches
    out["c.feather"] = folder / "c.feather"
    with pa.OSFile(str(folder / "c.arrow"), "wb") as sink, pyarrow.ipc.new_stream(sink, table.schema) as w:
        for batch in table.to_batches(max_chunksize=13):  # the IPC stream format, in batches
            w.write_batch(batch)
    out["c.arrow"] = folder / "c.arrow"
    return out


def cli(*args: str, cwd: Path, status: Optional[int] = 0, input: bytes = b"") -> tuple[str, str]:
    """``subwords ARGS`` in-process in ``cwd``: (stdout, stderr), the exit status checked, and no
    traceback."""
    out_buf, err_buf = io.TextIOWrapper(io.BytesIO(), encoding="utf-8"), io.StringIO()
    old = os.getcwd(), sys.stdin
    os.chdir(cwd)
    sys.stdin = io.TextIOWrapper(io.BytesIO(input), encoding="utf-8")
    try:
        with contextlib.redirect_stdout(out_buf), contextlib.redirect_stderr(err_buf):
            try:
                code = main(list(args))
            except SystemExit as e:
                code = e.code
    finally:
        os.chdir(old[0])
        sys.stdin = old[1]
    out_buf.flush()
    out, err = out_buf.buffer.getvalue().decode("utf-8"), err_buf.getvalue()
    assert "Traceback" not in err, err
    if status is not None:
        assert code == status, (code, err)
    return out, err
