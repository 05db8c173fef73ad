"""Regex pre-splits (`pre_split=` a name or a pattern) against the original libraries.

* The named patterns against tiktoken's own splitting on real (multilingual) text. tiktoken has
  no call that returns its chunks, so a rank table is built under which tiktoken's tokens are
  exactly its chunks when they equal ours: every byte, every prefix of each of our units, and
  the join of every two neighbouring units are ranked (a chunk of tiktoken's that spans two of
  ours would merge on; one that cuts one of ours cannot produce it whole).
* Any pattern against Python's `regex` module on hypothesis-generated text: every match, and
  every stretch between two matches, is a unit.
"""

from __future__ import annotations

import regex
import tiktoken
from hypothesis import given, settings
from hypothesis import strategies as st

import pytest

import peers
from subwords import TrainOptions
from subwords._api import spelling_units
from subwords.formats import tiktoken as tk

# Llama 3's published pre-split (its tokenizer.json's Split pattern): cl100k's original form
LLAMA3 = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*"
          r"|\s*[\r\n]+|\s+(?!\S)|\s+")
# gpt2 runs GPT-2's hand-written scanner, cl100k and o200k the tiktoken engine's scanners (in
# the core), llama3 fancy-regex; each against tiktoken running the pattern
TIKTOKEN_PATTERN = {"gpt2": tk.R50K_PATTERN, "cl100k": tk.CL100K_PATTERN, "o200k": tk.O200K_PATTERN,
                    "llama3": LLAMA3}


def units(text: str, pre_split: str, spelling: str = "bytes") -> list[str]:
    got = spelling_units(TrainOptions(vocab_size=300, spelling=spelling, pre_split=pre_split), text)
    assert "".join(u for u, _, _ in got) == text if spelling == "bytes" else True
    return [u for u, _, _ in got]


def tiktoken_agrees(pattern: str, texts: list[str], ours: list[list[str]]) -> list[str]:
    ranks = {bytes([b]): b for b in range(256)}
    for pieces in ours:
        bs = [p.encode() for p in pieces]
        for p in bs:
            for k in range(2, len(p) + 1):
                ranks.setdefault(p[:k], len(ranks))
        for a, b in zip(bs, bs[1:]):
            ranks.setdefault(a + b, len(ranks))
    peer = tiktoken.Encoding("oracle", pat_str=pattern, mergeable_ranks=ranks, special_tokens={})
    return [t for t, o in zip(texts, ours) if peer.encode_ordinary(t) != [ranks[p.encode()] for p in o]]


@pytest.mark.parametrize("name", list(TIKTOKEN_PATTERN))
def test_named_patterns_split_as_tiktoken_on_real_text(name):
    texts = list(peers.multilingual_texts(300_000)) + [
        "Hello world, it's 2024!  Twice  spaced\n\nnew lines\t\ttabs ", "I'M WE'LL they'd 1234567 x/y/\n/z",
        "camelCaseWords HTTPServer naïve ÀÉÎ", "   ", "a\r\nb\r\n\r\n c  \n d", "end \u2003\u2003\n\u2003", "x \n ",
    ]
    ours = [units(t, name) for t in texts]
    assert tiktoken_agrees(TIKTOKEN_PATTERN[name], texts, ours) == []


def test_named_pattern_is_the_expression_saved_in_the_model():
    import subwords
    tok = subwords.train(["a b c 123 4567"] * 3, vocab_size=300, spelling="bytes", pre_split="o200k")
    import json
    assert json.loads(tok.to_json())["spelling"]["pattern"] == tk.O200K_PATTERN
    assert tok.train_options.pre_split == "o200k"


def regex_units(pattern: str, text: str) -> list[str]:
    out, last = [], 0
    for m in regex.finditer(pattern, text):
        if m.end() == m.start():
            continue
        if m.start() > last:
            out.append(text[last:m.start()])
        out.append(m.group())
        last = m.end()
    if last < len(text):
        out.append(text[last:])
    return out


PATTERNS = [r"\d+", r"[A-Za-z]+|[^A-Za-z\s]+", r"(?<=a)b+", r"\s+(?!\S)|\s+", r"[A-Z][a-z]*|\d{1,3}",
            r"(?i:ab|c)", r"\w+(?=[.!])", r"[^\s]+", tk.CL100K_PATTERN]
ALPHABET = st.sampled_from(list("aAbBcC019 .!,\n\t'sé中ß") + ["\u00a0"])


@settings(max_examples=150, deadline=None)
@given(pattern=st.sampled_from(PATTERNS), text=st.text(ALPHABET, max_size=40))
def test_any_pattern_splits_as_the_regex_module(pattern, text):
    assert units(text, pattern) == regex_units(pattern, text)


@settings(max_examples=60, deadline=None)
@given(text=st.text(ALPHABET, max_size=40))
def test_a_pattern_cuts_each_word_under_the_end_spelling(text):
    # end: the words first (whitespace), then the pattern inside each word
    want = [u for w in text.split() for u in regex_units(r"\d+", w)]
    assert units(text, r"\d+", spelling="end") == want
