"""BoundlessBPE counted on a LocalCluster of two worker processes: the workers count the span runs
(or pairs) beside the units, the merge sums them, and the table trains the model the text gives
on one process; ``subwords count --engine dask`` takes the same options."""

from __future__ import annotations

import json
import random

import pytest

import subwords
import subwords.dask
from peers import multilingual_texts
from superword_cases import run_cli, write_corpus

pytestmark = pytest.mark.filterwarnings(
    # distributed's own shutdown chatter, not ours
    "ignore::ResourceWarning", "ignore::DeprecationWarning:distributed", "ignore::UserWarning:distributed")


@pytest.fixture(scope="module")
def paths(tmp_path_factory):
    texts = list(multilingual_texts(120_000))
    random.Random(9).shuffle(texts)
    folder = tmp_path_factory.mktemp("boundless")
    return [write_corpus(folder, texts[k::3], f"part{k}.txt") for k in range(3)]


def supermerges(tok: subwords.Tokenizer) -> int:
    return [e[0] for e in json.loads(tok.to_json())["boundless_events"]].count("=")


@pytest.mark.parametrize("options, label", [
    ({}, "boundless:runs:letters"),
    ({"count_on": "pairs", "superword_pieces": "any"}, "boundless:pairs:any"),
])
def test_span_runs_counted_on_dask_train_the_single_process_model(client, paths, options, label):
    table = subwords.dask.count([str(p) for p in paths], client=client, preset="boundless", blocksize=1 << 14,
                                **options)
    assert table.superword_pattern == label and table.spans > 0
    assert table.to_bytes() == subwords.count(paths, preset="boundless", **options).to_bytes()
    direct = subwords.train(paths, preset="boundless", vocab_size=1500, threads=1, **options)
    # the model joined pretokens into superwords, so the spans mattered
    assert supermerges(direct) > 0
    assert subwords.train(table, preset="boundless", vocab_size=1500, **options).to_json() == direct.to_json()


def test_the_cli_dask_engine_counts_the_local_table(paths, tmp_path):
    run_cli("count", str(paths[0]), "-o", str(tmp_path / "dask.counts"), "--preset", "boundless",
            "--count-on", "pairs", "--engine", "dask", "--workers", "2", "--quiet")
    local = subwords.count([paths[0]], preset="boundless", count_on="pairs")
    assert local.superword_pattern == "boundless:pairs:letters"
    assert (tmp_path / "dask.counts").read_bytes() == local.to_bytes()


def test_bad_span_options_are_refused_before_a_worker_starts(tmp_path):
    # no cluster is given or started: the options fail first (a file that does not exist is
    # never looked for)
    missing = str(tmp_path / "none.txt")
    with pytest.raises(subwords.OptionError, match=r"count_on must be 'runs' or 'pairs', got 'words'"):
        subwords.dask.count([missing], preset="boundless", count_on="words")
    with pytest.raises(subwords.OptionError, match=r"superword_pieces .*'letters', 'any'"):
        subwords.dask.count([missing], preset="boundless", superword_pieces="(")
    with pytest.raises(subwords.OptionError, match=r"count_on counts BoundlessBPE's spans: add preset='boundless'"):
        subwords.dask.count([missing], spelling="bytes", pre_split="o200k", count_on="pairs")
