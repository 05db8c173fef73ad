"""Hostile bytes under every reader's name: the answer is texts or a SubwordsError, never another
exception, a hang or a crash. And any texts written as JSON lines come back as they were."""

from __future__ import annotations

import gzip
import json
import tempfile
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet
import zstandard
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from subwords import SubwordsError, inputs

NAMES = ["f.txt", "f.jsonl", "f.txt.gz", "f.jsonl.zst", "f.parquet", "f.arrow", "f.feather", "f"]


def _read(path: Path) -> None:
    try:
        data = inputs.texts(path, skip_bad_records=False)
        for batch in data.batches(errors="strict"):
            assert all(isinstance(t, str) for t in batch)
    except SubwordsError:
        pass


def _seeds() -> list[bytes]:
    """Valid files of each compression and table format, to mutate."""
    texts = ["low lower", "newest", "é 日本"]
    with tempfile.TemporaryDirectory() as tmp:
        pyarrow.parquet.write_table(pa.table({"text": texts}), f"{tmp}/t.parquet")
        parquet = Path(f"{tmp}/t.parquet").read_bytes()
    plain = "\n".join(texts).encode()
    return [gzip.compress(plain), zstandard.ZstdCompressor().compress(plain), parquet,
            "".join(json.dumps({"text": t}) + "\n" for t in texts).encode()]


SEEDS = _seeds()


@st.composite
def mutated(draw) -> bytes:
    blob = bytearray(draw(st.sampled_from(SEEDS)))
    for _ in range(draw(st.integers(0, 4))):
        if not blob:
            break
        i = draw(st.integers(0, len(blob) - 1))
        kind = draw(st.sampled_from(["flip", "cut", "insert"]))
        if kind == "flip":
            blob[i] = draw(st.integers(0, 255))
        elif kind == "cut":
            del blob[i:]
        else:
            blob[i:i] = draw(st.binary(max_size=8))
    return bytes(blob)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(name=st.sampled_from(NAMES), blob=st.one_of(st.binary(max_size=200), mutated()))
def test_any_bytes_under_any_name_give_texts_or_a_clear_error(tmp_path, name, blob):
    path = tmp_path / name
    path.write_bytes(blob)
    _read(path)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(texts=st.lists(st.text(st.characters(blacklist_categories=["Cs"]), max_size=30), max_size=20))
def test_texts_written_as_json_lines_come_back_as_they_were(tmp_path, texts):
    (tmp_path / "t.jsonl.zst").write_bytes(zstandard.ZstdCompressor().compress(
        "".join(json.dumps({"a": {"text": t}}) + "\n" for t in texts).encode()))
    assert list(inputs.texts(tmp_path / "t.jsonl.zst", text_field="a.text")) == [t for t in texts if t]
