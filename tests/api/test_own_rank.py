"""Our own byte-level BPE models cut by the rank engine (``crates/subwords-compat/src/own_rank.rs``):
a model written by hand whose ids are worked out by hand, and the models that must keep the
core's merge replay, one for each option that disqualifies them. ``_core.Tokenizer.rank_fast()``
says which engine a model took; the replay's ids come from ``encode_in_mode(..., "dropout",
p=0.0)`` (dropout that skips nothing, always the core's).
"""

from __future__ import annotations

import json

import pytest
import subwords
from byte_rows import CHARS
from byte_rows import o200k_spelling as _o200k_spelling
from byte_rows import show as _show
from subwords import SubwordsTokenizer


def toy(learned: list[str], merges: list[tuple[str, str]], spelling: dict | None = None) -> SubwordsTokenizer:
    """A model file written by hand: the special ``<|x|>`` (id 0), the 256 bytes (byte b is
    id 1 + b), then ``learned`` (ids 257, 258, ...), with ``merges`` in rank order."""
    rows = [["<|x|>", "special"]] + [[c, "alphabet"] for c in CHARS] + [[_show(t), "learned"] for t in learned]
    doc = {"format": "subwords", "version": 1, "model": "bpe", "spelling": spelling or _o200k_spelling(),
           "stream_merges_from": None, "joints": None, "template": None, "options": None, "report": None,
           "rows": rows, "merges": [[_show(a), _show(b)] for a, b in merges]}
    return SubwordsTokenizer.from_json(json.dumps(doc))


def replay(tok, text: str, allowed: list[int]) -> list[int]:
    return tok._model.encode_in_mode(text, None, allowed, False, "dropout", p=0.0, seed=0)


# ids: ab 257, bc 258, abc 259, aa 260, aaa 261
LEARNED = ["ab", "bc", "abc", "aa", "aaa"]
MERGES = [("a", "b"), ("b", "c"), ("ab", "c"), ("a", "a"), ("aa", "a")]


def test_a_model_written_by_hand_takes_the_rank_engine_with_its_ids():
    tok = toy(LEARNED, MERGES)
    assert tok._model.rank_fast()
    x, sp = 1 + ord("x"), 1 + ord(" ")
    lt, bar, gt = 1 + ord("<"), 1 + ord("|"), 1 + ord(">")
    # "abcaaa" is one o200k word: (a, b) first (rank 0) -> ab c a a a; (b, c) is gone; (ab, c)
    # (rank 2) -> abc a a a; (a, a) (rank 3), left to right -> abc aa a; (aa, a) -> abc aaa
    assert tok.encode("abcaaa") == [259, 261]
    # "aaaaa": (a, a) twice, left to right -> aa aa a; (aa, a) at the right -> aa aaa
    assert tok.encode("aaaaa") == [260, 261]
    # " bc" is one word: the space, then (b, c)
    assert tok.encode(" bc") == [sp, 258]
    # the special allowed: cut out first, each side encoded alone
    text = "abcaaa<|x|>aaaaa bc"
    assert tok.encode(text, allowed_special=["<|x|>"]) == [259, 261, 0, 260, 261, sp, 258]
    # not allowed: text, split by o200k into abcaaa, <|, x, |>, aaaaa, " bc"
    assert tok.encode(text) == [259, 261, lt, bar, x, bar, gt, 260, 261, sp, 258]
    assert tok.encode_pieces(text, allowed_special="all") == ["abc", "aaa", "<|x|>", "aa", "aaa", "Ġ", "bc"]
    assert tok.encode_batch([text, "xabc"], threads=2, allowed_special=["<|x|>"]) == [
        [259, 261, 0, 260, 261, sp, 258], [x, 259]]
    # offsets in code points; "é" is two bytes: the first piece (0xC3) ends inside the character,
    # counted at its start
    assert tok.encode_with_offsets(text, allowed_special=["<|x|>"]) == [
        (259, 0, 3), (261, 3, 6), (0, 6, 11), (260, 11, 13), (261, 13, 16), (sp, 16, 17), (258, 17, 19)]
    assert tok.encode_with_offsets("éab") == [(1 + 0xC3, 0, 0), (1 + 0xA9, 0, 1), (257, 1, 3)]
    assert tok.decode([259, 261, 0, 260, 261, sp, 258]) == text
    # the core's replay gives the same ids
    for t in (text, "abcaaa", "aaaaa", "éab", "xabc abcd bcab"):
        assert tok.encode(t) == replay(tok, t, [])
    assert tok.encode(text, allowed_special="all") == replay(tok, text, [0])
    # "bcab": (a, b) first (rank 0) -> b c ab, then (b, c) -> bc ab
    assert tok.encode("bcab") == [258, 257]


def test_a_hand_written_model_the_rank_engine_would_misread_keeps_the_replay():
    # abc made only from (a, bc): the replay makes ab first, and (a, bc) never meets, so "abc"
    # stays [ab, c]; abc's split by the rank engine, (ab, c), is not listed
    tok = toy(["ab", "bc", "abc"], [("a", "b"), ("b", "c"), ("a", "bc")])
    assert not tok._model.rank_fast()
    assert tok.encode("abc") == [257, 1 + ord("c")] == replay(tok, "abc", [])
    # abc made again after a merge took it as a part: (abc, d) ranks before (a, bc), which makes
    # abc too; one merge at a time (tokenizers' rule) and the replay's all occurrences at once
    # could part there, so the replay stays
    tok = toy(["ab", "bc", "abc", "abcd"], [("a", "b"), ("b", "c"), ("ab", "c"), ("abc", "d"), ("a", "bc")])
    assert not tok._model.rank_fast()
    assert tok.encode("abcd") == [260] == replay(tok, "abcd", [])
    # the same merges without the second making of abc take the rank engine
    tok = toy(["ab", "bc", "abc", "abcd"], [("a", "b"), ("b", "c"), ("ab", "c"), ("abc", "d")])
    assert tok._model.rank_fast()
    assert tok.encode("abcd") == [260]


def test_a_pattern_without_a_scanner_keeps_the_replay():
    spelling = dict(_o200k_spelling(), pattern=r"\w+|\s+|[^\w\s]+")
    tok = toy(LEARNED, MERGES, spelling)
    assert not tok._model.rank_fast()
    assert tok.encode("abcaaa aaaaa") == [259, 261, 1 + ord(" "), 260, 261]


CORPUS = ["the lower newest widest 12345 Привет мир, hello!", "def f(x):\n    return x * 2  # 研究"] * 20

# each option that must keep the core's replay, on a model that would otherwise take the rank
# engine (the bytes spelling, the o200k pre-split)
DISQUALIFIED = {
    "no pre-split": {"spelling": "bytes"},
    "the gpt2 pre-split": {"spelling": "bytes", "pre_split": "gpt2"},
    "digits split": {"spelling": "bytes", "pre_split": "o200k", "split_digits": 1},
    "lowercase": {"spelling": "bytes", "pre_split": "o200k", "lowercase": True},
    "unicode normalization": {"spelling": "bytes", "pre_split": "o200k", "normalize": "nfkc"},
    "stream merges": {"spelling": "bytes", "pre_split": "o200k", "superword_at": 300},
    "picky": {"spelling": "bytes", "pre_split": "o200k", "picky": 0.9},
    "scaffold": {"spelling": "bytes", "pre_split": "o200k", "scaffold": True},
    "unigram": {"spelling": "bytes", "pre_split": "o200k", "model": "unigram"},
    "end": {"spelling": "end"},
    "continuation": {"spelling": "continuation"},
    "front": {"spelling": "front"},
    "front with byte fallback": {"spelling": "front", "byte_fallback": True},
    "wordpiece": {"spelling": "continuation", "model": "wordpiece"},
}


@pytest.mark.parametrize("name", sorted(DISQUALIFIED))
def test_each_option_that_changes_the_cut_keeps_the_replay(name):
    opts = DISQUALIFIED[name]
    if opts.get("model") != "unigram":  # unigram has no min_count
        opts = {"min_count": 1, **opts}
    tok = subwords.train(CORPUS, vocab_size=320, **opts)
    assert not tok._model.rank_fast()


def test_the_same_model_without_those_options_takes_the_rank_engine():
    for pre_split in ("o200k", "cl100k", "llama3"):
        tok = subwords.train(CORPUS, vocab_size=320, min_count=1, spelling="bytes", pre_split=pre_split)
        assert tok._model.rank_fast()
        for t in CORPUS[:2]:
            assert tok.encode(t) == replay(tok, t, [])


def test_boundless_keeps_the_replay():
    tok = subwords.train(CORPUS, vocab_size=320, min_count=1, spelling="bytes", pre_split="o200k", boundless=True)
    assert not tok._model.rank_fast()


def test_dropout_stays_with_the_core():
    tok = subwords.train(CORPUS, vocab_size=320, min_count=1, spelling="bytes", pre_split="o200k")
    assert tok._model.rank_fast()
    t = CORPUS[0]
    # every merge skipped: the bytes
    assert tok.encode(t, dropout=1.0, seed=3) == [tok.piece_to_id(CHARS[b]) for b in t.encode()]
    assert tok.encode(t, dropout=0.0, seed=3) == tok.encode(t)
