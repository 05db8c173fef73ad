"""``subwords.compat.transformers``: with the backend installed, transformers' fast tokenizers give
what stock transformers gives (ids, offsets, masks, type ids, overflow, tokens, word ids), for a
BERT-like WordPiece, a GPT-2-like byte-level BPE and a T5-like Unigram ``tokenizer.json``, each
trained here with ``tokenizers`` on the multilingual corpus and compared on 2,000 of its lines,
one text at a time and in batches, single texts and pairs, padded and truncated.

The expected values are stock transformers' own answers on the same tokenizer object before
the backend is installed; a spy proves the compared ids and offsets come from subwords' engine
(the real tokenizer is not asked to encode while the backend serves)."""

from __future__ import annotations

import copy
import pickle
from typing import Any

import pytest

import tokenizers
from tokenizers import Tokenizer, models, pre_tokenizers
from transformers import AutoTokenizer, PreTrainedTokenizerFast

import peers
from transformers_models import BUILDERS, _wordpiece

import subwords.compat.transformers as backend

N = 2000


@pytest.fixture(scope="module")
def lines() -> list[str]:
    texts = list(peers.multilingual_texts())
    step = max(1, len(texts) // N)
    got = texts[::step][:N]
    assert len(got) == N
    return got




@pytest.fixture(scope="module")
def made(lines: list[str]) -> dict[str, PreTrainedTokenizerFast]:
    train = list(peers.multilingual_texts())[1::7]
    return {name: build(train) for name, build in BUILDERS.items()}


@pytest.fixture(autouse=True)
def _not_installed():
    backend.uninstall()
    yield
    backend.uninstall()


CALLS: dict[str, dict[str, Any]] = {
    "plain": {},
    "no_specials": dict(add_special_tokens=False, return_offsets_mapping=True),
    "offsets_masks": dict(return_offsets_mapping=True, return_special_tokens_mask=True, return_length=True),
    "pad_longest": dict(padding=True, return_offsets_mapping=True, return_special_tokens_mask=True),
    "pad_max_length_left": dict(padding="max_length", max_length=64, padding_side="left", truncation=True,
                                return_offsets_mapping=True),
    "pad_multiple": dict(padding=True, pad_to_multiple_of=8, return_special_tokens_mask=True),
    "truncate": dict(truncation=True, max_length=12, return_offsets_mapping=True, return_special_tokens_mask=True),
    "truncate_left": dict(truncation=True, max_length=10, return_offsets_mapping=True),
    "overflow": dict(truncation=True, max_length=16, stride=3, return_overflowing_tokens=True,
                     return_offsets_mapping=True, padding=True),
}
PAIR_CALLS = {
    "pair_plain": dict(return_offsets_mapping=True, return_special_tokens_mask=True),
    "pair_longest_first": dict(truncation="longest_first", max_length=20, padding=True, return_offsets_mapping=True),
    "pair_only_second": dict(truncation="only_second", max_length=40, return_offsets_mapping=True),
    "pair_overflow": dict(truncation="only_second", max_length=36, stride=2, return_overflowing_tokens=True,
                          return_offsets_mapping=True),
}


def _plain(enc: Any) -> dict:
    return {k: v for k, v in enc.items()}


class _Spy:
    """The real tokenizer with its encoding calls refused: what is compared must come from
    subwords' engine."""

    def __init__(self, raw: Any) -> None:
        object.__setattr__(self, "raw", raw)

    def __getattr__(self, name: str) -> Any:
        if name in ("encode", "encode_batch", "encode_batch_fast"):
            raise AssertionError(f"the real tokenizer was asked to {name}")
        return getattr(self.raw, name)

    def __setattr__(self, name: str, value: Any) -> None:
        setattr(self.raw, name, value)


def _spied(tok: PreTrainedTokenizerFast) -> None:
    tok.__dict__["_tokenizer"] = _Spy(tok.__dict__["_tokenizer"])
    face = tok._tokenizer
    assert isinstance(face, backend.Backend) and isinstance(face._raw, _Spy), type(face)
    assert face.subwords_refusal is None


def _unspied(tok: PreTrainedTokenizerFast) -> None:
    tok.__dict__["_tokenizer"] = tok.__dict__["_tokenizer"].raw


@pytest.mark.parametrize("name", sorted(BUILDERS))
def test_batches_match_stock_transformers(name, made, lines):
    tok = made[name]
    batches = [lines[i:i + 100] for i in range(0, N, 100)]
    stock = {c: [_plain(tok(b, **kw)) for b in batches] for c, kw in CALLS.items()}
    # pairs of a short first text and a long second one, so only_second truncation has room
    longer = [" ".join(lines[j:j + 3]) for j in range(N)]
    pairs = [([t[:6] for t in lines[i:i + 100]], longer[N - i - 100:N - i][::-1]) for i in range(0, N, 100)]
    stock_pairs = {c: [_plain(tok(a, b, **kw)) for a, b in pairs] for c, kw in PAIR_CALLS.items()}
    backend.install()
    _spied(tok)
    try:
        for c, kw in CALLS.items():
            if "overflow" in c:
                continue  # the overflow itself is the real tokenizer's (checked below, unspied)
            for b, want in zip(batches, stock[c]):
                assert _plain(tok(b, **kw)) == want, (name, c)
        for c, kw in PAIR_CALLS.items():
            if "overflow" in c:
                continue
            for (a, b), want in zip(pairs, stock_pairs[c]):
                assert _plain(tok(a, b, **kw)) == want, (name, c)
    finally:
        _unspied(tok)
    for c in ("overflow",):
        for b, want in zip(batches, stock[c]):
            assert _plain(tok(b, **CALLS[c])) == want, (name, c)
    for (a, b), want in zip(pairs, stock_pairs["pair_overflow"]):
        assert _plain(tok(a, b, **PAIR_CALLS["pair_overflow"])) == want, name


@pytest.mark.parametrize("name", sorted(BUILDERS))
def test_single_texts_tokens_and_word_ids_match(name, made, lines):
    tok = made[name]
    some = lines[::10]
    stock_one = [_plain(tok(t, return_offsets_mapping=True, return_special_tokens_mask=True)) for t in some]
    stock_tokens = [tok.tokenize(t) for t in some]
    stock_pair_tokens = [tok(a, b).tokens() for a, b in zip(some, some[::-1])]
    stock_words = [tok(t, truncation=True, max_length=24).word_ids() for t in some]
    stock_encode = [tok.encode(t) for t in some]
    with backend.installed():
        _spied(tok)
        try:
            assert [_plain(tok(t, return_offsets_mapping=True, return_special_tokens_mask=True)) for t in some] \
                == stock_one
            assert [tok.tokenize(t) for t in some] == stock_tokens
            assert [tok(a, b).tokens() for a, b in zip(some, some[::-1])] == stock_pair_tokens
            assert [tok.encode(t) for t in some] == stock_encode
        finally:
            _unspied(tok)
        # word ids are the real tokenizer's (asked once per batch)
        assert [tok(t, truncation=True, max_length=24).word_ids() for t in some] == stock_words
    assert type(tok._tokenizer) is tokenizers.Tokenizer


def test_truncation_tokenizers_refuses_raises_its_error(made, lines):
    tok = made["wordpiece"]
    long_first = [(lines[0] * 5, "b")]
    with pytest.raises(Exception) as stock:
        tok(long_first, truncation="only_second", max_length=8)
    with backend.installed():
        with pytest.raises(Exception) as ours:
            tok(long_first, truncation="only_second", max_length=8)
    assert str(ours.value) == str(stock.value)
    assert "too short" in str(ours.value)


def test_special_tokens_in_text_and_split_special_tokens(made):
    tok = made["wordpiece"]
    texts = ["a [SEP] b [MASK]", "[CLS][PAD] x", "[sep] is not special"]
    stock = _plain(tok(texts, return_offsets_mapping=True, return_special_tokens_mask=True))
    stock_split = _plain(tok(texts, split_special_tokens=True, return_offsets_mapping=True))
    with backend.installed():
        _spied(tok)
        try:
            assert _plain(tok(texts, return_offsets_mapping=True, return_special_tokens_mask=True)) == stock
            assert _plain(tok(texts, split_special_tokens=True, return_offsets_mapping=True)) == stock_split
        finally:
            _unspied(tok)


def test_added_tokens_after_install_rebuild_the_engine(lines):
    tok = _wordpiece(lines[:400])
    with backend.installed():
        before = tok(lines[:50])["input_ids"]
        tok.add_tokens(["zzqx", "qqv"])
        text = ["the zzqx and qqv", *lines[:20]]
        got = tok(text, return_offsets_mapping=True)
    assert tok(lines[:50])["input_ids"] == before
    assert _plain(tok(text, return_offsets_mapping=True)) == _plain(got)
    assert got["input_ids"][0][2] == tok.convert_tokens_to_ids("zzqx")


def test_install_is_opt_in_and_reversible(made):
    tok = made["byte_bpe"]
    assert not backend.is_installed()
    assert type(tok._tokenizer) is tokenizers.Tokenizer
    assert type(tok.backend_tokenizer) is tokenizers.Tokenizer
    with backend.installed():
        assert backend.is_installed()
        assert isinstance(tok._tokenizer, backend.Backend)
        # the state setters reach the real tokenizer
        tok._tokenizer.enable_truncation(7)
        assert tok._tokenizer._raw.truncation["max_length"] == 7
        tok._tokenizer.no_truncation()
        made_inside = PreTrainedTokenizerFast(tokenizer_object=tok.backend_tokenizer._raw)
        assert isinstance(made_inside._tokenizer, backend.Backend)
    assert not backend.is_installed()
    assert type(made_inside._tokenizer) is tokenizers.Tokenizer
    assert type(tok._tokenizer) is tokenizers.Tokenizer


def test_copies_pickles_and_saved_files(made, tmp_path, lines):
    tok = made["unigram"]
    want = _plain(tok(lines[:30], padding=True, return_offsets_mapping=True))
    with backend.installed():
        for other in (copy.deepcopy(tok), pickle.loads(pickle.dumps(tok))):
            assert isinstance(other._tokenizer, backend.Backend)
            assert _plain(other(lines[:30], padding=True, return_offsets_mapping=True)) == want
        tok.save_pretrained(tmp_path)
        again = AutoTokenizer.from_pretrained(tmp_path)
        assert isinstance(again._tokenizer, backend.Backend)
        assert _plain(again(lines[:30], padding=True, return_offsets_mapping=True)) == want
    assert (tmp_path / "tokenizer.json").exists()


def test_a_pipeline_the_engine_refuses_is_served_by_the_real_tokenizer():
    t = Tokenizer(models.WordLevel({"a": 0, "b": 1, "[UNK]": 2}, unk_token="[UNK]"))
    t.pre_tokenizer = pre_tokenizers.Whitespace()
    tok = PreTrainedTokenizerFast(tokenizer_object=t, unk_token="[UNK]")
    want = _plain(tok(["a b c", "b"], return_offsets_mapping=True))
    with backend.installed():
        assert "WordLevel" in tok._tokenizer.subwords_refusal
        assert _plain(tok(["a b c", "b"], return_offsets_mapping=True)) == want
        # pre-tokenized input too
        assert tok([["a", "b"]], is_split_into_words=True)["input_ids"] == [[0, 1]]


def test_keywords_bound_as_inspect_binds_them(monkeypatch: pytest.MonkeyPatch) -> None:
    """The wrapped ``_encode_plus`` binds a call of keywords alone itself: the arguments it hands
    on are what ``inspect``'s ``bind`` and ``apply_defaults`` give (worked here by hand for this
    signature), an unknown keyword in ``**kwargs``; a positional call and a signature with a
    second required parameter still go through ``inspect``."""

    def plus(self, text, text_pair=None, add_special_tokens=True, max_length=None, **kwargs):  # type: ignore[no-untyped-def]
        return "stock"

    import inspect

    assert backend._keywords(inspect.signature(plus)) == (
        frozenset({"text", "text_pair", "add_special_tokens", "max_length"}),
        {"text_pair": None, "add_special_tokens": True, "max_length": None},
        "kwargs",
    )

    def two(self, text, mode, flag=False, **kwargs):  # type: ignore[no-untyped-def]
        return "stock"

    assert backend._keywords(inspect.signature(two))[2] is None

    seen: list[dict[str, Any]] = []
    monkeypatch.setattr(backend, "_serve_call", lambda tok, a: seen.append(dict(a)))
    wrapped = backend._served(plus)
    assert wrapped(object(), text=["a b"], max_length=7, padding_side="left") == "stock"
    assert seen[-1] == {"text": ["a b"], "text_pair": None, "add_special_tokens": True, "max_length": 7,
                        "kwargs": {"padding_side": "left"}}
    tok = object()
    assert wrapped(tok, ["a b"], max_length=7) == "stock"
    assert seen[-1] == {"self": tok, "text": ["a b"], "text_pair": None, "add_special_tokens": True,
                        "max_length": 7, "kwargs": {}}


@pytest.mark.parametrize("name", sorted(BUILDERS))
def test_batch_over_threads_matches_stock(name, made, lines, monkeypatch):
    """A batch long enough to be shared out over four threads (one per 64k characters, at most
    ``_CORES``, set to 4 here) laid out from each thread's own buffers: the same ids, offsets and
    padding as stock transformers on the whole batch, single texts and pairs."""
    tok = made[name]
    texts = [" ".join(lines[j:j + 3]) for j in range(N)]
    assert sum(map(len, texts)) > 3 * 65536
    pairs = (lines, texts[::-1])
    kw = dict(return_offsets_mapping=True, return_special_tokens_mask=True, padding=True)
    want, want_pairs = _plain(tok(texts, **kw)), _plain(tok(*pairs, **kw))
    monkeypatch.setattr(backend, "_CORES", 4)
    backend.install()
    _spied(tok)
    try:
        assert _plain(tok(texts, **kw)) == want
        assert _plain(tok(*pairs, **kw)) == want_pairs
    finally:
        _unspied(tok)
