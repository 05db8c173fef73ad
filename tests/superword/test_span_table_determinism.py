"""The count tables that carry spans (SuperBPE's spans, BoundlessBPE's span runs and pairs) are the
same bytes on 1 and 2 threads with the input order shuffled, from texts and from files; so are
the models trained on them."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

import subwords
from peers import multilingual_texts
from superword_cases import write_corpus


@pytest.mark.parametrize("options", [{"preset": "superbpe"}, {"preset": "boundless"},
                                     {"preset": "boundless", "count_on": "pairs", "superword_pieces": "any"}],
                         ids=["superbpe", "boundless", "boundless-pairs-any"])
def test_the_same_table_on_one_and_two_threads_shuffled(tmp_path: Path, options: dict) -> None:
    texts = list(multilingual_texts(80_000))
    shuffled = texts[:]
    random.Random(3).shuffle(shuffled)
    one = subwords.count(texts, threads=1, **options)
    assert one.spans > 0
    two = subwords.count(shuffled, threads=2, **options)
    assert two.to_bytes() == one.to_bytes()
    # a file is counted in blocks on the threads
    from_file = subwords.count([write_corpus(tmp_path, shuffled)], threads=2, **options)
    assert from_file.to_bytes() == one.to_bytes()
    train = {"vocab_size": 600, **{k: v for k, v in options.items()}}
    assert subwords.train(two, **train).to_json() == subwords.train(one, **train).to_json()
