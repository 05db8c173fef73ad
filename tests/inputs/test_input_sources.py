"""Folders, globs, Python iterables and 🤗 datasets; and reading as a stream."""

from __future__ import annotations

import gzip
import json
import random
import tracemalloc
from pathlib import Path

import pytest
import zstandard
from inputs_helpers import cli

import subwords
from subwords import InputError, inputs


def _lines(path: Path, *texts: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(t + "\n" for t in texts), encoding="utf-8")


def test_a_folder_is_its_files_sorted_and_hidden_ones_left_out(tmp_path):
    root = tmp_path / "data"
    _lines(root / "b.txt", "b1")
    _lines(root / "a" / "z.txt", "az1", "az2")
    _lines(root / "a" / "c.jsonl", '{"text": "ac1"}')
    _lines(root / ".hidden.txt", "hidden")
    _lines(root / ".git" / "x.txt", "in a hidden folder")
    # sorted paths: data/a/c.jsonl < data/a/z.txt < data/b.txt
    assert list(inputs.texts(root)) == ["ac1", "az1", "az2", "b1"]
    assert inputs.expand([str(root)]) == [str(root / "a" / "c.jsonl"), str(root / "a" / "z.txt"), str(root / "b.txt")]


def test_globs_match_in_sorted_order_and_cross_folders_with_two_stars(tmp_path):
    for name in ("p3.txt", "p1.txt", "p2.txt.gz", "x/p0.txt", "x/y/p9.txt"):
        p = tmp_path / name
        p.parent.mkdir(parents=True, exist_ok=True)
        data = f"{p.name.split('.')[0]}\n".encode()
        p.write_bytes(gzip.compress(data) if name.endswith(".gz") else data)
    g = str(tmp_path / "p*.txt*")
    assert list(inputs.texts(g)) == ["p1", "p2", "p3"]
    assert list(inputs.texts(str(tmp_path / "**" / "p*.txt"))) == ["p1", "p3", "p0", "p9"]  # sorted full paths
    # the CLI takes the same quoted pattern, and a folder
    cli("train", "--vocab-size", "10", "-o", "g.json", g, cwd=tmp_path)
    assert (tmp_path / "g.json").read_text(encoding="utf-8") == subwords.train(["p1", "p2", "p3"], vocab_size=10).to_json()
    cli("train", "--vocab-size", "10", "-o", "f.json", "x", cwd=tmp_path)
    assert (tmp_path / "f.json").read_text(encoding="utf-8") == subwords.train(["p0", "p9"], vocab_size=10).to_json()


def test_names_that_match_nothing_are_refused(tmp_path):
    (tmp_path / "empty").mkdir()
    # a pattern or folder with nothing in it is bad input; a missing file is a file error (an OSError)
    for name, says, error in ((tmp_path / "nope*.txt", "no file matches", InputError),
                              (tmp_path / "empty", "holds no files", InputError),
                              (tmp_path / "missing.txt", "no such file", subwords.FileError)):
        with pytest.raises(error, match=says):
            inputs.texts(str(name))
        _, err = cli("train", "--vocab-size", "10", "-o", "m.json", str(name), cwd=tmp_path, status=2)
        assert says in err
    assert not (tmp_path / "m.json").exists()


def test_iterables_of_strings_and_of_dicts(tmp_path):
    want = subwords.train(["low lower", "newest"], vocab_size=20).to_json()
    assert subwords.train(inputs.texts(iter(["low lower", "newest"])), vocab_size=20).to_json() == want
    rows = [{"meta": {"t": "low lower"}}, {"meta": {"t": "newest"}}]
    assert subwords.train(inputs.texts(rows, text_field="meta.t"), vocab_size=20).to_json() == want
    with pytest.raises(InputError, match="item 1: a int"):
        list(inputs.texts(iter(["low", 5])))
    with pytest.raises(InputError, match="paths and other things"):
        inputs.texts(["low.txt", 5])


class FakeDataset:
    """Shaped like a 🤗 datasets.Dataset: column_names, select_columns, iter(batch_size) giving
    a dict of columns, and iteration giving dict rows. (datasets itself is not installed for the
    tests: it pulls in pandas, aiohttp and more; subwords never imports it.)"""

    def __init__(self, columns: dict[str, list], known_names: bool = True) -> None:
        self.columns = columns
        self.column_names = list(columns) if known_names else None  # IterableDataset: may be None
        self.batch_sizes: list[int] = []

    def select_columns(self, names: list[str]) -> FakeDataset:
        picked = FakeDataset({n: self.columns[n] for n in names}, self.column_names is not None)
        picked.batch_sizes = self.batch_sizes
        return picked

    def iter(self, batch_size: int):
        n = len(next(iter(self.columns.values())))
        for start in range(0, n, batch_size):
            self.batch_sizes.append(min(batch_size, n - start))
            yield {k: v[start:start + batch_size] for k, v in self.columns.items()}

    def __iter__(self):
        n = len(next(iter(self.columns.values())))
        return ({k: v[i] for k, v in self.columns.items()} for i in range(n))


def test_a_dataset_is_read_in_batches_of_its_text_column():
    texts = [f"text number {i} low lower" for i in range(2500)]
    want = subwords.train(texts, vocab_size=60).to_json()
    ds = FakeDataset({"id": list(range(2500)), "text": texts})
    assert subwords.train(ds, vocab_size=60).to_json() == want  # train() takes it as it is: column "text"
    assert ds.batch_sizes == [1000, 1000, 500]  # a batch at a time, never all rows at once
    other = FakeDataset({"content": texts, "label": [0] * 2500}, known_names=False)
    assert subwords.train(inputs.texts(other, text_column="content"), vocab_size=60).to_json() == want
    with pytest.raises(InputError, match="no column 'text'.*'content', 'label'"):
        subwords.train(FakeDataset({"content": texts, "label": [0] * 2500}), vocab_size=60)
    with pytest.raises(InputError, match="dataset row 1: the column 'text' holds NoneType"):
        subwords.train(FakeDataset({"text": ["a b", None]}), vocab_size=60)


def test_the_first_batch_arrives_before_the_file_is_read_through(tmp_path):
    # a bad record at the very end: a reader that read the whole file first would raise before
    # handing on any batch
    good = "".join(json.dumps({"text": f"line {i} of the corpus"}) + "\n" for i in range(60_000))
    (tmp_path / "big.jsonl.gz").write_bytes(gzip.compress((good + "not json\n").encode()))
    batches = inputs.texts(tmp_path / "big.jsonl.gz").batches(batch_chars=10_000)
    first = next(batches)
    # records come a decompressed block (1 MiB) at a time: the batch is one block's texts
    assert first[0] == "line 0 of the corpus" and 10_000 <= sum(map(len, first)) < 1 << 20
    with pytest.raises(InputError, match=r"big.jsonl.gz: line 60001: not JSON"):
        for _ in batches:
            pass


def _peak_reading(path: Path) -> tuple[int, int]:
    tracemalloc.start()
    try:
        n = sum(len(b) for b in inputs.texts(path).batches(batch_chars=65_536))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return n, peak


def test_memory_follows_the_batch_not_the_file(tmp_path):
    # 8 MB and 32 MB of text (random words), read through in 64 KB batches: the peak (tracemalloc
    # counts every Python allocation: compressed pieces, decompressed blocks, lines, texts) is the
    # same few blocks for both, where reading whole would take four times as much for the second
    rng = random.Random(0)
    words = ["".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(rng.randint(2, 9))) for _ in range(5000)]
    lines = [" ".join(rng.choices(words, k=10)) for _ in range(2000)]
    peaks = []
    for n_lines in (125_000, 500_000):
        data = "\n".join(rng.choices(lines, k=n_lines)).encode() + b"\n"
        path = tmp_path / f"{n_lines}.txt.zst"
        path.write_bytes(zstandard.ZstdCompressor().compress(data))
        del data
        n, peak = _peak_reading(path)
        assert n == n_lines
        peaks.append(peak)
    small, big = peaks
    assert big < 1.5 * small and big < 32_000_000 / 3, peaks


def test_containers_whose_iteration_gives_names_are_refused():
    class DataFrameLike:  # pandas: iterating a DataFrame gives its column names
        columns = ["text"]

        def iterrows(self):
            return iter(())

        def __iter__(self):
            return iter(self.columns)

    splits = {"train": FakeDataset({"text": ["a"]})}  # a DatasetDict is a dict of splits
    for data in (splits, DataFrameLike()):
        with pytest.raises(InputError, match="pass one split"):
            inputs.texts(data)


def test_stdin_is_sampled_as_a_file_is(tmp_path):
    texts = [f"line {i} low lower" for i in range(500)]
    (tmp_path / "c.txt").write_text("\n".join(texts) + "\n", encoding="utf-8")
    cli("train", "--vocab-size", "40", "--sample", "0.3", "--seed", "9", "-o", "a.json", "c.txt", cwd=tmp_path)
    cli("train", "--vocab-size", "40", "--sample", "0.3", "--seed", "9", "-o", "b.json", "-", cwd=tmp_path,
        input=(tmp_path / "c.txt").read_bytes())
    assert (tmp_path / "a.json").read_bytes() == (tmp_path / "b.json").read_bytes()


def test_a_folder_of_mixed_formats_splits_between_the_engine_and_python(tmp_path):
    # the plain files go to the engine's reader and the JSON lines through Python, in path order;
    # together they give the model of all the texts (two-stage BPE: every text kept whole too)
    texts = [f"text {i} low lower newest widest" + " x" * (i % 5) for i in range(60)]
    parts = [texts[:20], texts[20:40], texts[40:]]
    root = tmp_path / "mixed"
    root.mkdir()
    (root / "1.txt").write_text("\n".join(parts[0]) + "\n", encoding="utf-8")
    (root / "2.jsonl").write_text("".join(json.dumps({"text": t}) + "\n" for t in parts[1]), encoding="utf-8")
    (root / "3.txt").write_text("\n".join(parts[2]) + "\n", encoding="utf-8")
    opts = dict(model="bpe", spelling="front", superword_at=40, vocab_size=80)
    data = inputs.texts(root)
    assert subwords.train(data, **opts).to_json() == subwords.train(texts, **opts).to_json()
    assert data.engine_read and data.kept == 20
    assert data.summary() == "read 20 records, kept 20 texts, besides 2 plain text files read whole by the engine"
