"""Bad inputs: each gets one clear error (an InputError or OptionError from the API, exit status 2
and one line from the CLI) that names the file and the line or row, says what to do, and leaves
no model file."""

from __future__ import annotations

import gzip
import json
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.feather
import pyarrow.parquet
import pytest
import zstandard
from inputs_helpers import cli

import subwords
from subwords import InputError, OptionError, inputs


def _jsonl(path: Path, *lines: str) -> Path:
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path


def _refused(tmp_path: Path, name: str, says: list[str], flags: tuple[str, ...] = (), **kw) -> None:
    """Refused by train() with every piece of ``says`` in the message, and by the CLI, which
    writes nothing."""
    before = set(tmp_path.iterdir())
    with pytest.raises((InputError, OptionError)) as e:
        subwords.train(inputs.texts(str(tmp_path / name), **kw), vocab_size=20)
    for s in says:
        assert s in str(e.value), (s, str(e.value))
    _, err = cli("train", "--vocab-size", "20", *flags, "-o", "m.json", name, cwd=tmp_path, status=2)
    assert err.startswith("subwords: error: ") and err.count("\n") == 1, err
    for s in says:
        assert s in err, (s, err)
    assert set(tmp_path.iterdir()) == before  # no model, no temporary file


GOOD = '{"text": "low lower"}'


@pytest.mark.parametrize("line, says", [
    ("{not json", ["c.jsonl: line 3: not JSON"]),
    ('{"body": "low"}', ["c.jsonl: line 3: no field 'text'", "'body'", "--text-field"]),
    ('{"text": 5}', ["c.jsonl: line 3: the field 'text' holds a JSON number, not a string"]),
    ('{"text": null}', ["c.jsonl: line 3: the field 'text' holds a JSON null"]),
    ('{"text": ["a", "b"]}', ["c.jsonl: line 3", "JSON array, not a string"]),
    ('"just a string"', ["c.jsonl: line 3", "JSON string, not an object"]),
    ('{"text": "ab\\ud800cd"}', ["c.jsonl: line 3", "lone surrogate"]),
    ("[" * 100_000, ["c.jsonl: line 3"]),
], ids=["not-json", "missing", "number", "null", "array", "not-object", "surrogate", "deep"])
def test_a_bad_json_line_is_refused_naming_file_and_line(tmp_path, line, says):
    _jsonl(tmp_path / "c.jsonl", GOOD, "", line, GOOD)
    _refused(tmp_path, "c.jsonl", says + ["--skip-bad-records"])


def test_a_dotted_path_through_something_that_is_not_an_object(tmp_path):
    _jsonl(tmp_path / "c.jsonl", '{"meta": {"text": "low"}}', '{"meta": "flat"}')
    _refused(tmp_path, "c.jsonl", ["c.jsonl: line 2: meta is a JSON string, not an object with the field 'meta.text'"],
             ("--text-field", "meta.text"), text_field="meta.text")


def test_bad_records_are_skipped_and_counted_when_asked(tmp_path):
    _jsonl(tmp_path / "c.jsonl", GOOD, "{not json", '{"text": 5}', '{"other": "x"}', '{"text": "newest"}')
    data = inputs.texts(tmp_path / "c.jsonl", skip_bad_records=True)
    tok = subwords.train(data, vocab_size=20)
    assert tok.to_json() == subwords.train(["low lower", "newest"], vocab_size=20).to_json()
    assert data.skipped == 3 and data.kept == 2 and data.bad_examples[0].endswith("c.jsonl: line 2: not JSON "
                                                                                   "(Expecting property name enclosed in double quotes: line 1 column 2 (char 1))")
    _, err = cli("train", "--vocab-size", "20", "--skip-bad-records", "-o", "m.json", "c.jsonl", cwd=tmp_path)
    assert "skipped 3 bad records (first: c.jsonl: line 2: not JSON" in err
    assert (tmp_path / "m.json").read_text(encoding="utf-8") == tok.to_json()


def test_only_bad_records_leave_nothing_to_train_on(tmp_path):
    _jsonl(tmp_path / "c.jsonl", "{not json", '{"text": 5}')
    _refused(tmp_path, "c.jsonl", ["no text to train on", "2 bad records were skipped", "line 1: not JSON"],
             ("--skip-bad-records",), skip_bad_records=True)


def _table(tmp_path: Path, kind: str, table) -> str:
    if kind == "parquet":
        pyarrow.parquet.write_table(table, tmp_path / "t.parquet")
        return "t.parquet"
    pyarrow.feather.write_feather(table, tmp_path / "t.arrow")
    return "t.arrow"


@pytest.mark.parametrize("kind", ["parquet", "arrow"])
def test_a_missing_or_wrong_column_is_refused(tmp_path, kind):
    name = _table(tmp_path, kind, pa.table({"content": ["low lower"], "n": [3]}))
    _refused(tmp_path, name, [f"{name}: no column 'text' (the columns are 'content', 'n')", "--text-column"])
    _refused(tmp_path, name, [f"{name}: the column 'n' holds int64, not strings"], ("--text-column", "n"), text_column="n")


@pytest.mark.parametrize("kind", ["parquet", "arrow"])
def test_a_null_text_is_a_bad_record_named_by_row(tmp_path, kind):
    name = _table(tmp_path, kind, pa.table({"text": ["low lower", "newest", None, "widest"]}))
    _refused(tmp_path, name, [f"{name}: row 3: the text column holds null, not a string"])
    data = inputs.texts(tmp_path / name, skip_bad_records=True)
    assert list(data) == ["low lower", "newest", "widest"] and data.skipped == 1


@pytest.mark.parametrize("name, content, says", [
    ("c.csv", b"a,b\n", "CSV is not read"),
    ("c.json", b'{"text": "x"}', "name it .jsonl"),
    ("c.txt.bz2", b"BZh9", "bzip2 is not read"),
    ("c.xz", b"\xfd7zXZ\x00", "xz is not read"),
    ("c.zip", b"PK\x03\x04", "unpack them"),
    ("c.dat", gzip.compress(b"low\n"), "starts like gzip, not text"),
    ("c.bin", b"low\x00lower\n", "starts like binary"),
    ("corpus", b"PAR1....", "starts like Parquet"),
    ("c.parquet.gz", b"", "compress inside themselves"),
])
def test_a_file_of_no_format_subwords_reads_is_refused_with_a_hint(tmp_path, name, content, says):
    (tmp_path / name).write_bytes(content)
    _refused(tmp_path, name, [name, says])


def test_the_refusal_comes_before_anything_is_read(tmp_path):
    # a glob over a huge good file and an unreadable one: detected up front, not after training
    (tmp_path / "a.txt").write_text("low\n", encoding="utf-8")
    (tmp_path / "b.csv").write_text("x,y\n", encoding="utf-8")
    with pytest.raises(InputError, match="b.csv: CSV is not read"):
        inputs.texts(str(tmp_path / "*"))


DATA = b"low lower newest widest\n" * 2000


@pytest.mark.parametrize("name, blob, says", [
    ("t.txt.gz", gzip.compress(DATA)[:-40], "the gzip stream ends early (the file is truncated)"),
    ("t.txt.zst", zstandard.ZstdCompressor().compress(DATA)[:-40], "the zstd stream ends early (the file is truncated)"),
    ("t.jsonl.zst", zstandard.ZstdCompressor().compress(b'{"text": "low"}\n' * 500)[:-10], "the zstd stream ends early"),
    ("t.txt.gz", b"\x1f\x8b\x08" + b"\x00" * 40, "not a valid gzip file"),
    ("t.txt.gz", b"plain text, not gzip\n", "not a valid gzip file"),
    ("t.txt.zst", b"plain text, not zstd\n", "not a valid zstd file"),
    ("t.parquet", b"PAR1 and then nothing", "not a readable Parquet file"),
    ("t.arrow", b"ARROW1 and then nothing", "not a readable Arrow file"),
], ids=["gz-truncated", "zst-truncated", "jsonl-zst-truncated", "gz-corrupt", "gz-plain", "zst-plain",
        "parquet-corrupt", "arrow-corrupt"])
def test_a_truncated_or_corrupt_file_is_refused(tmp_path, name, blob, says):
    (tmp_path / name).write_bytes(blob)
    _refused(tmp_path, name, [name, says])


def test_a_truncated_parquet_file_is_refused(tmp_path):
    pyarrow.parquet.write_table(pa.table({"text": ["low lower"] * 1000}), tmp_path / "full.parquet")
    blob = (tmp_path / "full.parquet").read_bytes()
    (tmp_path / "full.parquet").unlink()
    (tmp_path / "t.parquet").write_bytes(blob[: len(blob) // 2])
    _refused(tmp_path, "t.parquet", ["t.parquet: not a readable Parquet file"])


def test_invalid_utf8_in_a_compressed_file_names_the_line(tmp_path):
    (tmp_path / "t.txt.zst").write_bytes(zstandard.ZstdCompressor().compress(b"low\nlower\nnew\xffest\n"))
    _refused(tmp_path, "t.txt.zst", ["t.txt.zst: line 3: invalid UTF-8 (byte 0xFF)", "--input-errors replace"])


@pytest.mark.parametrize("name, blob", [
    ("e.txt.gz", gzip.compress(b"")),
    ("e.jsonl.zst", b""),
    ("e.jsonl", b"\n  \n\n"),
])
def test_empty_inputs_are_refused(tmp_path, name, blob):
    (tmp_path / name).write_bytes(blob)
    _refused(tmp_path, name, ["no text to train on"])


@pytest.mark.parametrize("kind", ["parquet", "arrow"])
def test_an_empty_table_is_refused(tmp_path, kind):
    name = _table(tmp_path, kind, pa.table({"text": pa.array([], pa.string())}))
    _refused(tmp_path, name, ["no text to train on: the inputs hold no records"])


def test_an_empty_text_file_is_refused(tmp_path):
    # plain text files go to the engine's own reader, which says so itself
    (tmp_path / "e.txt").write_bytes(b"")
    _refused(tmp_path, "e.txt", ["the corpus is empty"])


def test_options_that_fit_no_input_are_refused(tmp_path):
    _jsonl(tmp_path / "c.jsonl", GOOD)
    (tmp_path / "c.txt").write_text("low\n", encoding="utf-8")
    _refused(tmp_path, "c.jsonl", ["text_column (--text-column) names the text in Parquet and Arrow"],
             ("--text-column", "body"), text_column="body")
    _refused(tmp_path, "c.txt", ["text_field (--text-field) names the text in JSON lines"],
             ("--text-field", "body"), text_field="body")
    _refused(tmp_path, "c.jsonl", ["text_field must be a non-empty name"], ("--text-field", "meta..text"), text_field="meta..text")
    _, err = cli("train", "--vocab-size", "20", "--text-field", "t", "-o", "m.json", "-", cwd=tmp_path, status=2, input=b"low\n")
    assert "stdin (-) is read as plain text" in err


def _without(monkeypatch, *modules: str) -> None:
    """Imports of ``modules`` fail as if they were not installed (None in sys.modules)."""
    for m in modules:
        monkeypatch.setitem(sys.modules, m, None)


def test_without_zstandard_the_error_names_the_extra(tmp_path, monkeypatch):
    (tmp_path / "c.txt.zst").write_bytes(zstandard.ZstdCompressor().compress(b"low\n"))
    _without(monkeypatch, "zstandard")
    _refused(tmp_path, "c.txt.zst", ["c.txt.zst: reading zstandard (.zst) files needs the zstandard package",
                                     "pip install 'subwords[zstd]'"])


@pytest.mark.parametrize("kind", ["parquet", "arrow"])
def test_without_pyarrow_the_error_names_the_extra(tmp_path, monkeypatch, kind):
    name = _table(tmp_path, kind, pa.table({"text": ["low"]}))
    _without(monkeypatch, "pyarrow", "pyarrow.parquet", "pyarrow.ipc")
    _refused(tmp_path, name, [f"{name}: reading", "needs the pyarrow package", "pip install 'subwords[arrow]'"])


def test_gzip_and_text_need_no_extra(tmp_path, monkeypatch):
    (tmp_path / "c.txt.gz").write_bytes(gzip.compress(b"low lower\n"))
    _jsonl(tmp_path / "c.jsonl", GOOD)
    _without(monkeypatch, "zstandard", "pyarrow", "pyarrow.parquet", "pyarrow.ipc")
    assert list(inputs.texts([str(tmp_path / "c.txt.gz"), str(tmp_path / "c.jsonl")])) == ["low lower", "low lower"]


def test_encode_refuses_a_bad_record_or_skips_it_when_asked(tmp_path):
    tok = subwords.train(["low lower newest"], vocab_size=20)
    tok.save(tmp_path / "m.json")
    _jsonl(tmp_path / "c.jsonl", GOOD, "{broken")
    out, err = cli("encode", "-m", "m.json", "c.jsonl", cwd=tmp_path, status=2)
    assert "c.jsonl: line 2: not JSON" in err
    out, err = cli("encode", "-m", "m.json", "--skip-bad-records", "c.jsonl", cwd=tmp_path)
    assert out == " ".join(tok.encode_pieces("low lower")) + "\n" and "skipped 1 bad records" in err
    _, err = cli("encode", "-m", "m.json", "--text-field", "x", cwd=tmp_path, status=2, input=b"low\n")
    assert "read INPUT files" in err
