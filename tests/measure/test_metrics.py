"""Metrics for any tokenizer: Rényi efficiency against the PyPI package ``tokenization-scorer`` on
real text, and ``compare`` on OpenAI's cl100k_base against a model we train, with the piece
counts checked against tiktoken itself."""

from __future__ import annotations

import gzip
import json
import math
import sys

import pytest

import subwords
from subwords import measure
from subwords.cli import main

import peers

needs_scorer = pytest.mark.may_skip("tokenization-scorer needs Python 3.11 or newer (a test-only dependency)")


def scorer():
    if sys.version_info < (3, 11):
        pytest.skip("tokenization-scorer needs Python 3.11+")
    import tokenization_scorer

    return tokenization_scorer


@pytest.fixture(scope="module")
def texts():
    # real text in a dozen languages (Debian's fortunes; tests/support/peers.py)
    return list(peers.multilingual_texts(300_000))


@pytest.fixture(scope="module")
def trained(texts):
    return subwords.train(texts, spelling="bytes", pre_split="gpt2", vocab_size=2000)


@pytest.fixture(scope="module")
def cl100k(tmp_path_factory):
    data = gzip.decompress(peers.crate_member("bpe-openai", "0.2.1", "data/cl100k_base.tiktoken.gz"))
    path = tmp_path_factory.mktemp("ranks") / "cl100k_base.tiktoken"
    path.write_bytes(data)
    return path, data


def test_renyi_by_hand():
    # uniform: H_a = log2(V) for every a, so the efficiency is 1
    assert measure.renyi_efficiency([3, 3, 3, 3], 2.5) == pytest.approx(1.0, abs=1e-15)
    # counts 2, 1, 1 at a = 2: p = 1/2, 1/4, 1/4; sum p^2 = 3/8; H_2 = log2(8/3); over log2(3)
    assert measure.renyi_efficiency([2, 1, 1], 2) == pytest.approx(math.log2(8 / 3) / math.log2(3), rel=1e-15)
    # one distinct piece: log2(V) = 0, undefined
    assert measure.renyi_efficiency([5], 2.5) is None


@needs_scorer
@pytest.mark.parametrize("alpha", [2.5, 3.0])
def test_renyi_equals_tokenization_scorer_on_real_text(texts, trained, cl100k, alpha, capsys):
    ts = scorer()
    from subwords import formats

    for tok in (trained, formats.load(cl100k[0])):
        m = measure.metrics(tok, texts)
        ours = m.renyi_efficiency if alpha == 2.5 else m.renyi_efficiency_3
        # tokenization-scorer reads whitespace-separated pieces: give it the ids as words
        encoded = [[str(i) for i in tok.encode(t)] for t in texts]
        theirs = ts.score(encoded, metric="renyi", power=alpha)
        assert ours == pytest.approx(theirs, abs=1e-9)
        assert 0.2 < ours < 1.0
    capsys.readouterr()  # the scorer's progress bars


def test_compare_cl100k_against_a_trained_model(texts, trained, cl100k, tmp_path, capsys):
    path, data = cl100k
    model = tmp_path / "ours.json"
    trained.save(model)
    text = tmp_path / "texts.txt"
    text.write_text("\n".join(texts) + "\n", encoding="utf-8")
    assert main(["compare", "-m", str(path), "-m", str(model), str(text), "--json"]) == 0
    got = json.loads(capsys.readouterr().out)
    assert [m["model"] for m in got] == [str(path), str(model)]
    cl, ours = got
    # pieces counted by tiktoken itself, and by our model's own encoder
    peer = peers.tiktoken_peer(data)
    assert cl["pieces"] == sum(len(peer.encode_ordinary(t)) for t in texts)
    assert ours["pieces"] == sum(len(trained.encode(t)) for t in texts)
    words = sum(len(t.split()) for t in texts)
    nbytes = sum(len(t.encode("utf-8")) for t in texts)
    for m in got:
        assert m["words"] == words and m["bytes"] == nbytes
        assert m["pieces_per_word"] == m["pieces"] / words
        assert m["bytes_per_piece"] == nbytes / m["pieces"]
    # cl100k is byte-level: every text round-trips and nothing is unknown
    assert cl["roundtrip_exact"] and cl["unknown"] == 0
    # so does a byte-level model of our own (256 byte rows spell anything)
    assert ours["roundtrip_exact"] and ours["unknown"] == 0
    # 100k rows against 2000: the small table needs more pieces per word
    assert cl["pieces_per_word"] < ours["pieces_per_word"]
    assert cl["vocab_size"] == peer.n_vocab
    assert 0 < cl["vocab_share"] < ours["vocab_share"] <= 1


def test_metrics_by_hand():
    tok = subwords.train({"low": 5, "lower": 2, "newest": 6, "widest": 3}, vocab_size=22)
    # by hand (BPE page table): "lowest" = lo w est</w>; "low lower" = low</w> + lo w e r</w> (4: no (w, e) merge);
    # "zz" = two [UNK] (z is outside the alphabet)
    m = measure.metrics(tok, ["lowest", "low lower", "zz"])
    assert (m.pieces, m.words, m.unknown) == (3 + 1 + 4 + 2, 4, 2)
    assert m.chars == 6 + 9 + 2 and m.bytes == 17
    # [UNK] decodes as [UNK], not as zz
    assert not m.roundtrip_exact and m.roundtrip_failures == 1 and m.examples == ["zz"]
    # distinct ids: lo w est</w> low</w> e r</w> [UNK] = 7 of 22
    assert m.vocab_used == 7 and m.vocab_share == 7 / 22
    assert m.encode_seconds >= 0


def test_unigram_heldout_log_likelihood():
    four = {"low": 5, "lower": 2, "newest": 6, "widest": 3}
    tok = subwords.train(four, model="unigram", vocab_size=16)
    m = measure.metrics(tok, ["low newest"])
    # Unigram page: at 16 rows each word is one piece with its share of the 16 occurrences
    assert m.heldout_log_likelihood == pytest.approx(math.log(5 / 16) + math.log(6 / 16), abs=1e-6)


def test_per_language_parity():
    tok = subwords.train({"low": 5, "lower": 2, "newest": 6, "widest": 3}, vocab_size=22)
    m = measure.metrics(tok, ["low low", "lowest", "newest"], languages=["a", "b", "a"])
    # by hand: a = low</w> low</w> newest</w> = 3 pieces / 3 words; b = 3 / 1
    assert (m.languages["a"].pieces_per_word, m.languages["b"].pieces_per_word) == (1.0, 3.0)
    assert m.languages["b"].parity == 3.0 and m.languages["a"].parity == 1.0


def test_words_are_python_split_words():
    # the core counts words for our models: the same as str.split(), whose whitespace includes
    # U+001C..U+001F and U+3000 but not U+200B (Python's own definition is the expectation)
    tok = subwords.train(["a b c \u3000 x\u200by"], spelling="front", vocab_size=40, min_count=1)
    texts = ["a\x1cb", "a\u3000b c", "x\u200by", " a  b\t\n", "\xa0a\x85b"]
    m = measure.metrics(tok, texts)
    assert m.words == sum(len(t.split()) for t in texts)
    assert m.bytes == sum(len(t.encode("utf-8")) for t in texts)
    assert m.chars == sum(len(t) for t in texts)
