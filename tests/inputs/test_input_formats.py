"""Every input format holding the same texts gives the same model, byte for byte, through the API
and the CLI: the readers hand the engine exactly the texts a plain text file gives it."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest
import zstandard
from inputs_helpers import TEXTS, cli, write_all

import subwords
from subwords import inputs

NAMES = ["c.txt.gz", "c.txt.zst", "crlf.txt.gz", "c.jsonl", "c.jsonl.gz", "c.jsonl.zst", "c.parquet", "c.feather", "c.arrow"]
SETTINGS = [dict(model="bpe", vocab_size=90), dict(model="unigram", vocab_size=80, spelling="front"),
            dict(model="wordpiece", vocab_size=90),
            # two-stage BPE keeps each text whole, in order, for its second stage
            dict(model="bpe", spelling="front", superword_at=70, vocab_size=100),
            dict(model="bpe", spelling="bytes", pre_split="gpt2", vocab_size=300)]


@pytest.fixture(scope="module")
def files(tmp_path_factory) -> dict[str, Path]:
    return write_all(tmp_path_factory.mktemp("formats"))


@pytest.mark.parametrize("settings", SETTINGS, ids=["bpe", "unigram", "wordpiece", "superword", "bytes"])
def test_every_format_gives_the_plain_text_files_model(files, settings):
    # the plain .txt goes through the engine's own file reader, the texts list through
    # feed_texts: the two references the readers must both match
    want = subwords.train(files["c.txt"], **settings).to_json()
    assert subwords.train(list(TEXTS), **settings).to_json() == want
    for name in NAMES:
        assert subwords.train(files[name], **settings).to_json() == want, name  # a Path, detected
        assert subwords.train(inputs.texts(str(files[name])), **settings).to_json() == want, name


def test_the_readers_give_the_texts_in_order(files):
    nonblank = [t for t in TEXTS if t]
    for name in ["c.txt", *NAMES]:
        assert list(inputs.texts(files[name])) == nonblank, name


def test_the_cli_writes_the_same_model_file_from_every_format(files, tmp_path):
    cli("train", "--vocab-size", "90", "-o", str(tmp_path / "ref.json"), str(files["c.txt"]), cwd=tmp_path)
    want = (tmp_path / "ref.json").read_bytes()
    for name in NAMES:
        out = tmp_path / f"{name}.json"
        cli("train", "--vocab-size", "90", "-o", str(out), str(files[name]), cwd=tmp_path)
        assert out.read_bytes() == want, name


def test_a_dotted_field_reaches_into_nested_objects(tmp_path):
    files = write_all(tmp_path, field="meta.inner.text")
    want = subwords.train(list(TEXTS), vocab_size=90).to_json()
    for name in ("c.jsonl", "c.jsonl.zst"):
        got = subwords.train(inputs.texts(files[name], text_field="meta.inner.text"), vocab_size=90).to_json()
        assert got == want
        out = tmp_path / f"{name}.json"
        cli("train", "--vocab-size", "90", "--text-field", "meta.inner.text", "-o", str(out), str(files[name]), cwd=tmp_path)
        assert out.read_text(encoding="utf-8") == want


def test_a_text_with_line_ends_inside_is_one_text(tmp_path):
    # JSON lines can hold a multi-line text; it is one text (as in a list), not two lines
    texts = ["first line\nsecond line", "third"]
    (tmp_path / "m.jsonl").write_text("".join(json.dumps({"text": t}) + "\n" for t in texts), encoding="utf-8")
    assert list(inputs.texts(tmp_path / "m.jsonl")) == texts
    opts = dict(spelling="front", split_at_marks=False, vocab_size=40)  # one unit per text: the cut shows
    assert subwords.train(tmp_path / "m.jsonl", **opts).to_json() == subwords.train(texts, **opts).to_json()


def test_column_and_field_names(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    pq.write_table(pa.table({"content": ["low lower", "newest"], "text": [None, None]}), tmp_path / "t.parquet")
    assert list(inputs.texts(tmp_path / "t.parquet", text_column="content")) == ["low lower", "newest"]
    (tmp_path / "d.jsonl").write_text('{"body": "low lower"}\n\n   \n{"body": "newest"}\n', encoding="utf-8")
    assert list(inputs.texts(tmp_path / "d.jsonl", text_field="body")) == ["low lower", "newest"]  # blank lines: no record


def test_multi_frame_zst_and_multi_member_gzip_are_read_whole(tmp_path):
    a, b = b"low lower\nnewest\n", b"widest\nlow\n"
    c = zstandard.ZstdCompressor()
    (tmp_path / "two.txt.zst").write_bytes(c.compress(a) + c.compress(b))
    (tmp_path / "two.txt.gz").write_bytes(gzip.compress(a) + gzip.compress(b))
    want = ["low lower", "newest", "widest", "low"]
    assert list(inputs.texts(tmp_path / "two.txt.zst")) == want
    assert list(inputs.texts(tmp_path / "two.txt.gz")) == want


def test_a_line_longer_than_a_block_and_a_last_line_without_its_end(tmp_path):
    # the readers cut decompressed data into 1 MiB blocks at line ends; a 3 MiB line spans blocks
    long = "ab " * (1 << 20)
    data = f"first\n{long}\nlast".encode()
    (tmp_path / "l.txt.zst").write_bytes(zstandard.ZstdCompressor().compress(data))
    (tmp_path / "l.txt").write_bytes(data)
    got = list(inputs.texts(tmp_path / "l.txt.zst"))
    assert got == ["first", long, "last"]
    assert subwords.train(tmp_path / "l.txt.zst", vocab_size=30).to_json() == \
        subwords.train(tmp_path / "l.txt", vocab_size=30).to_json()


def test_invalid_utf8_is_replaced_alike_under_input_errors_replace(tmp_path):
    data = b"low lower\nnew\xffest wid\xe2\x82est\nlow\n"
    (tmp_path / "r.txt").write_bytes(data)
    (tmp_path / "r.txt.gz").write_bytes(gzip.compress(data))
    a = subwords.train(tmp_path / "r.txt", vocab_size=30, input_errors="replace").to_json()
    assert subwords.train(tmp_path / "r.txt.gz", vocab_size=30, input_errors="replace").to_json() == a


def test_any_other_name_is_plain_text_when_it_starts_as_text(tmp_path):
    # as before these formats existed: a corpus named without a suffix, or .py, .md ...
    for name in ("corpus", "notes.md", "code.py", "data.en.gz"):
        raw = b"low lower\nnewest\n"
        (tmp_path / name).write_bytes(gzip.compress(raw) if name.endswith(".gz") else raw)
        assert inputs.detect(tmp_path / name).format == "text"
        assert list(inputs.texts(tmp_path / name)) == ["low lower", "newest"]


def test_encode_reads_the_same_formats_one_line_per_record(files, tmp_path):
    tok = subwords.train(list(TEXTS), vocab_size=90)
    tok.save(tmp_path / "m.json")
    # stdin: every line, blank ones too, gives one output line
    want, _ = cli("encode", "-m", "m.json", "--ids", cwd=tmp_path, input=("\n".join(TEXTS) + "\n").encode())
    assert want.count("\n") == len(TEXTS)
    for name in ["c.txt", *NAMES]:
        out, _ = cli("encode", "-m", "m.json", "--ids", str(files[name]), cwd=tmp_path)
        assert out == want, name
    two, _ = cli("encode", "-m", "m.json", "--ids", str(files["c.txt"]), str(files["c.parquet"]), cwd=tmp_path)
    assert two == want + want


def test_the_help_names_the_formats_and_options(tmp_path):
    out, _ = cli("train", "--help", cwd=tmp_path)
    for word in (".jsonl", ".parquet", ".zst", "--text-field", "--text-column", "--sample", "--max-bytes",
                 "--skip-bad-records", "subwords[arrow]", "subwords[zstd]"):
        assert word in out, word
    out, _ = cli("encode", "--help", cwd=tmp_path)
    assert "--text-field" in out and "INPUT" in out


def test_encode_writes_no_line_for_a_blank_json_line(tmp_path):
    tok = subwords.train(["low lower", "newest"], vocab_size=30)
    tok.save(tmp_path / "m.json")
    (tmp_path / "c.jsonl").write_text('{"text": "low lower"}\n\n{"text": ""}\n{"text": "newest"}\n', encoding="utf-8")
    out, _ = cli("encode", "-m", "m.json", "--ids", "c.jsonl", cwd=tmp_path)
    # three records (the empty text is one), the blank line between them none
    assert out.split("\n") == [" ".join(map(str, tok.encode("low lower"))), "", " ".join(map(str, tok.encode("newest"))), ""]
