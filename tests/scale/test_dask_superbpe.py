"""SuperBPE counted on a LocalCluster of two worker processes: the workers count the spans beside
the units, the merge sums them, and the table trains the model the text gives on one process."""

from __future__ import annotations

import random

import pytest

import subwords
import subwords.dask
from peers import multilingual_texts

pytest.importorskip("distributed")  # in the test extra: CI fails if it is missing

pytestmark = pytest.mark.filterwarnings(
    # distributed's own shutdown chatter, not ours
    "ignore::ResourceWarning", "ignore::DeprecationWarning:distributed", "ignore::UserWarning:distributed")


def test_spans_counted_on_dask_train_the_single_process_model(client, tmp_path):
    texts = list(multilingual_texts(120_000))
    random.Random(5).shuffle(texts)
    paths = []
    for k in range(3):
        p = tmp_path / f"part{k}.txt"
        p.write_text("\n".join(texts[k::3]) + "\n", encoding="utf-8")
        paths.append(p)
    table = subwords.dask.count([str(p) for p in paths], client=client, preset="superbpe", blocksize=1 << 14)
    assert table.superword_pattern == "superbpe" and table.spans > 0
    assert table.to_bytes() == subwords.count(paths, preset="superbpe").to_bytes()
    direct = subwords.train(paths, preset="superbpe", vocab_size=900, superword_at=600, threads=1)
    # stage two learned superwords (pieces with a space after their first byte), so the spans mattered
    assert any(b" " in direct.decode_bytes([i])[1:].rstrip(b" ") for i in range(direct.vocab_size))
    got = subwords.train(table, preset="superbpe", vocab_size=900, superword_at=600)
    assert got.to_json() == direct.to_json()
    # the explicit options count the same table as the preset
    explicit = subwords.dask.count([str(p) for p in paths], client=client, spelling="bytes", pre_split="o200k",
                                   superword_pattern="superbpe")
    assert explicit.to_bytes() == table.to_bytes()
