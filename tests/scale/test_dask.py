"""subwords.dask on a LocalCluster of two worker processes: the same table as counting in one
process, the same model bytes as training on the text, the same ids as encoding locally."""

from __future__ import annotations

import random

import numpy as np
import pytest

import subwords
import subwords.dask
from subwords import InputError, OptionError
from peers import multilingual_texts

pytest.importorskip("distributed")  # in the test extra: CI fails if it is missing

pytestmark = pytest.mark.filterwarnings(
    # distributed's own shutdown chatter, not ours
    "ignore::ResourceWarning", "ignore::DeprecationWarning:distributed", "ignore::UserWarning:distributed")


def write_files(folder, texts, n_files, rnd, gz=False):
    paths = []
    edges = sorted(rnd.sample(range(1, len(texts)), n_files - 1)) if n_files > 1 else []
    for k, (a, b) in enumerate(zip([0, *edges], [*edges, len(texts)])):
        name = folder / f"part{k:02d}.txt{'.gz' if gz else ''}"
        data = "\n".join(texts[a:b]) + ("\n" if rnd.random() < 0.5 else "")
        if gz:
            import gzip
            name.write_bytes(gzip.compress(data.encode("utf-8")))
        else:
            name.write_text(data, encoding="utf-8")
        paths.append(name)
    return paths


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_random_corpora_give_the_single_process_table(client, tmp_path, seed):
    rnd = random.Random(seed)
    alphabet = "ab c\u00e9 \u4e00\u4e01 \u0645\u0646  \t"
    texts = ["".join(rnd.choice(alphabet) for _ in range(rnd.randrange(0, 40))) for _ in range(rnd.randrange(50, 400))]
    paths = write_files(tmp_path, texts, rnd.randrange(1, 6), rnd)
    spelling = rnd.choice(["end", "front", "bytes"])
    local = subwords.count(paths, spelling=spelling)
    on_dask = subwords.dask.count([str(p) for p in paths], client=client, spelling=spelling, blocksize=4096)
    assert on_dask.to_bytes() == local.to_bytes()


def test_a_real_corpus_gives_the_same_table_and_model_bytes(client, tmp_path):
    rnd = random.Random(0)
    texts = list(multilingual_texts(1_000_000))
    paths = write_files(tmp_path, texts, 4, rnd)
    (tmp_path / "gz").mkdir()
    gz = write_files(tmp_path / "gz", texts, 3, rnd, gz=True)
    local = subwords.count(paths, spelling="front")
    for inputs, blocksize in (([str(p) for p in paths], 1 << 16), ([str(p) for p in gz], 1 << 16)):
        table = subwords.dask.count(inputs, client=client, spelling="front", blocksize=blocksize)
        assert table.to_bytes() == local.to_bytes()
    # a glob reads the same files
    assert subwords.dask.count(str(tmp_path / "part*.txt"), client=client, spelling="front").to_bytes() == local.to_bytes()
    direct = subwords.train(paths, model="bpe", spelling="front", vocab_size=4000)
    assert subwords.train(table, model="bpe", spelling="front", vocab_size=4000).to_json() == direct.to_json()


@pytest.mark.parametrize("spelling,extra", [
    ("front", {"normalize": "nfkc", "split_digits": 1}),
    ("end", {"normalize": "nmt_nfkc", "pre_split": r"\p{L}+|\p{N}+|[^\s\p{L}\p{N}]+"}),
    ("bytes", {"pre_split": "cl100k", "split_digits": 3}),
])
def test_newer_spelling_options_give_the_single_process_table_and_model(client, tmp_path, spelling, extra):
    rnd = random.Random(7)
    texts = list(multilingual_texts(300_000)) + ["Call ５５５-0199 or 2026 ﬁles", "ｆｕｌｌ width ﬀ 1234567"] * 30
    rnd.shuffle(texts)
    paths = write_files(tmp_path, texts, 3, rnd)
    local = subwords.count(paths, spelling=spelling, **extra)
    table = subwords.dask.count([str(p) for p in paths], client=client, spelling=spelling, blocksize=1 << 14, **extra)
    assert table.to_bytes() == local.to_bytes()
    assert table.spelling.get("normalize") == extra.get("normalize")
    direct = subwords.train(paths, model="bpe", spelling=spelling, vocab_size=3000, **extra)
    assert subwords.train(table, model="bpe", spelling=spelling, vocab_size=3000, **extra).to_json() == direct.to_json()


def test_a_bag_of_texts(client):
    import dask.bag as db

    texts = list(multilingual_texts(200_000))
    bag = db.from_sequence(texts, npartitions=7)
    assert subwords.dask.count(bag, client=client).to_bytes() == subwords.count(texts).to_bytes()


def test_dask_encoding_gives_local_ids(client, tmp_path):
    texts = list(multilingual_texts(300_000))
    paths = write_files(tmp_path, texts, 3, random.Random(5))
    tok = subwords.train(paths, spelling="front", vocab_size=4000)
    shards = subwords.dask.encode([str(p) for p in paths], tok, tmp_path / "out", client=client, blocksize=1 << 14)
    got: list[list[int]] = []
    for ids_file in shards:
        ids = np.load(ids_file)
        offsets = np.load(ids_file.replace(".ids.npy", ".offsets.npy"))
        assert ids.dtype == np.uint16 and offsets.dtype == np.uint64
        got.extend(ids[offsets[k]:offsets[k + 1]].tolist() for k in range(len(offsets) - 1))
    # every line of every file, in order, empty ones included (they encode to no ids)
    want = tok.encode_batch([l for p in paths for l in _file_lines(p)])
    assert got == want


def _file_lines(p):
    data = p.read_text(encoding="utf-8")
    lines = data.split("\n")
    return lines[:-1] if data.endswith("\n") else lines


def test_bad_requests_are_refused_before_any_work(client, tmp_path):
    with pytest.raises(OptionError, match="spelling"):
        subwords.dask.count([str(tmp_path / "x.txt")], client=client, spelling="sideways")
    with pytest.raises(OptionError, match="workers"):
        subwords.dask.count([str(tmp_path / "x.txt")], workers=0)
    with pytest.raises(InputError):
        subwords.dask.count([str(tmp_path / "missing-*.txt")], client=client)
    bad = tmp_path / "bad.txt"
    bad.write_bytes(b"fine\n\xff\xfe broken\n")
    with pytest.raises(InputError, match="UTF-8"):
        subwords.dask.count([str(bad)], client=client)


def test_json_lines_and_parquet_give_the_local_table(client, tmp_path):
    # the formats `train` reads besides text: one partition per file, read on the workers by
    # subwords' own readers; the table must be the one local counting makes of the same files,
    # and training on it must give the model training on the files gives
    import json

    import pyarrow as pa
    import pyarrow.parquet as pq

    texts = list(multilingual_texts(300_000))
    third = len(texts) // 3
    j1, j2, pqf = tmp_path / "a.jsonl", tmp_path / "b.jsonl", tmp_path / "c.parquet"
    j1.write_text("".join(json.dumps({"text": t, "n": k}) + "\n" for k, t in enumerate(texts[:third])), encoding="utf-8")
    j2.write_text("".join(json.dumps({"meta": {"body": t}}) + "\n" for t in texts[third:2 * third]), encoding="utf-8")
    pq.write_table(pa.table({"text": texts[2 * third:]}), pqf)
    paths = [j1, pqf]
    local = subwords.count(paths, spelling="front")
    on_dask = subwords.dask.count([str(p) for p in paths], client=client, spelling="front")
    assert on_dask.to_bytes() == local.to_bytes()
    direct = subwords.train(paths, model="bpe", spelling="front", vocab_size=3000)
    assert subwords.train(on_dask, model="bpe", spelling="front", vocab_size=3000).to_json() == direct.to_json()
    # a nested field, named as train names it
    nested = subwords.dask.count([str(j2)], client=client, spelling="front", text_field="meta.body")
    assert nested.to_bytes() == subwords.count(texts[third:2 * third], spelling="front").to_bytes()


def test_record_options_are_checked_before_the_cluster_starts(tmp_path):
    (tmp_path / "a.txt").write_text("hello\n", encoding="utf-8")
    with pytest.raises(OptionError, match="text_field"):
        subwords.dask.count([str(tmp_path / "a.txt")], spelling="front", text_field="body")
    (tmp_path / "b.jsonl").write_text('{"text": "hi"}\n', encoding="utf-8")
    with pytest.raises(OptionError, match="text_column"):
        subwords.dask.count([str(tmp_path / "b.jsonl")], spelling="front", text_column="body")
