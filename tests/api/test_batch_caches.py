"""The word caches only save time: ids do not depend on which calls came before.

Each engine with a cache of encoded words (our BPE and Unigram models, a Hugging Face
tokenizer.json, a SentencePiece BPE ``.model``, a tiktoken rank file) keeps one per worker, and a batch on two threads
shares the caller's words with the other thread (``WordCache::share`` in the core): the words
of one-thread calls move into a shared table, later ones are copied into it, and each thread
stores what it meets new in its own. This test walks one engine through every one of those
steps and checks each call's ids against a second engine of the same file that only ever saw
single calls. The texts are random words over the training letters, so most words are unseen
ones that take several pieces (a span of values, not a single id).
"""

from __future__ import annotations

import random

import pytest

import subwords
from subwords import formats

TEXT = ["low lower newest widest lowest", "the newest of the low", "widest newer lower"] * 4


def texts(seed: int, n: int) -> list[str]:
    g = random.Random(seed)
    words = lambda: " ".join("".join(g.choice("lowerntsidh") for _ in range(g.randint(1, 20)))
                             for _ in range(g.randint(1, 12)))
    return [words() for _ in range(n)]


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("caches")
    subwords.train(TEXT, vocab_size=30).save(d / "bpe.json")
    subwords.train(TEXT, model="unigram", vocab_size=30).save(d / "unigram.json")
    formats.export(subwords.train(TEXT, spelling="bytes", pre_split="gpt2", vocab_size=270), d / "tokenizer.json", "hf")
    formats.export(subwords.train(TEXT, spelling="front", vocab_size=30), d / "m.model", "sentencepiece")
    formats.export(subwords.train(TEXT, spelling="bytes", pre_split="gpt2", vocab_size=270), d / "t.tiktoken", "tiktoken")
    return {"bpe": d / "bpe.json", "unigram": d / "unigram.json", "hf": d / "tokenizer.json", "sentencepiece": d / "m.model",
            "tiktoken": d / "t.tiktoken"}


def load(path):
    return formats.load(path, pattern="gpt2") if path.suffix == ".tiktoken" else subwords.load(path)


@pytest.mark.parametrize("name", ["bpe", "unigram", "hf", "sentencepiece", "tiktoken"])
def test_ids_do_not_depend_on_the_calls_before(files, name):
    single = load(files[name])
    expect = lambda batch: [single.encode(t) for t in batch]
    a, b, c, d = texts(1, 300), texts(2, 300), texts(3, 50), texts(4, 300)
    m = load(files[name])
    assert m.encode_batch(a, threads=1) == expect(a)  # the caller's own words
    assert m.encode_batch(b, threads=2) == expect(b)  # shared as a whole; the worker stores b's new words
    assert [m.encode(t) for t in c] == expect(c)  # new own words beside the shared ones
    every = a + b + c + d
    assert m.encode_batch(every, threads=2) == expect(every)  # c's words copied into the shared table
    array = m.encode_array(every[::-1], threads=2)
    assert [array[i].tolist() for i in range(len(array))] == expect(every[::-1])
    assert m.encode_batch(every, threads=1) == expect(every)
    assert [m.encode(t) for t in d] == expect(d)


@pytest.mark.parametrize("name", ["bpe", "unigram", "hf", "sentencepiece", "tiktoken"])
def test_id_arrays_are_exact_whatever_the_first_part_says_about_the_rest(files, name):
    # the binding sizes an array's buffers from the first part of the batch (a
    # doubling late in a batch was a serial copy); a first part of empty texts says nothing,
    # one of long texts says too much, and neither may show in the ids or the array's length
    m = load(files[name])
    eos = m.vocab_size - 1
    long = texts(5, 300)
    for batch in ([""] * 300 + long, long + [""] * 300, ["low"] * 2 + long[:3] + [""] * 600):
        want = [m.encode(t) for t in batch]
        for threads in (1, 2):
            for dtype, end in (("uint32", None), ("uint16", eos)):
                array = m.encode_array(batch, threads=threads, dtype=dtype, eos=end)
                tail = [] if end is None else [end]
                assert array.tolist() == [w + tail for w in want], (threads, dtype)
                assert len(array.ids) == array.offsets[-1] == sum(len(w) + len(tail) for w in want)
