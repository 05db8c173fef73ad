"""Differential tests: our own byte-level BPE models cut by the rank engine (the models whose
merges pass the check of ``crates/subwords-compat/src/own_rank.rs``) against the core's merge
replay, on random models trained on random small corpora with each pre-split the rank engine has
a scanner for (o200k, cl100k, Llama 3), and random texts holding the models' special tokens.

The replay's ids come from ``_core.Tokenizer.encode_in_mode(..., "dropout", p=0.0)``: the
core's BPE with dropout of probability 0, which skips no merge and never takes the rank engine
(dropout is the core's alone). Every call surface is compared with it: single calls, batches on
two threads into lists and into flat buffers, pieces, offsets (worked out from the replay's ids
and each piece's bytes), and decoding.
"""

from __future__ import annotations

import struct

import subwords
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

SETTINGS = settings(
    max_examples=120,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

# letters of both cases, digits, the apostrophe forms the patterns care about, punctuation,
# whitespace of every kind they split on, and characters of two, three and four bytes
ALPHABET = "aabbcAB01'sd ..,!/\n\r\t é研😀я"
SPECIALS = ["<|end|>", "<|e", "<s>"]

words = st.text(alphabet=ALPHABET, min_size=1, max_size=12)
corpora = st.lists(words.map(lambda w: w + " " + w[::-1]), min_size=1, max_size=12)


@st.composite
def texts(draw):
    """A text of random characters with special surfaces (whole or cut short) among them."""
    parts = draw(st.lists(st.one_of(words, st.sampled_from(SPECIALS + ["<|", "<s"])), max_size=8))
    return "".join(parts)


def allowed_ids(tok, allowed):
    specials = tok.special_tokens
    return sorted(specials[s] for s in allowed)


def replay(tok, text, allowed):
    """The core's merge replay (dropout of probability 0) on ``text``."""
    return tok._model.encode_in_mode(text, None, allowed_ids(tok, allowed), False, "dropout", p=0.0, seed=0)


def offsets_of(tok, text, ids):
    """``(id, start, end)`` in code points, worked out from the ids: each piece stands for the
    next bytes of the text (a special for its surface), and a byte offset inside a character
    counts as that character's start."""
    surfaces = {i: s for s, i in tok.special_tokens.items()}
    char_at = []
    for k, c in enumerate(text):
        char_at.extend([k] * len(c.encode("utf-8")))
    char_at.append(len(text))
    out, at = [], 0
    for i in ids:
        n = len(surfaces[i].encode("utf-8")) if i in surfaces else len(tok.decode_bytes([i]))
        out.append((i, char_at[at], char_at[at + n]))
        at += n
    assert at == len(text.encode("utf-8"))
    return out


@SETTINGS
@given(corpus=corpora, pre_split=st.sampled_from(["o200k", "cl100k", "llama3"]),
       extra=st.integers(0, 120), specials=st.lists(st.sampled_from(SPECIALS), unique=True),
       probes=st.lists(texts(), min_size=1, max_size=6), data=st.data())
def test_rank_engine_gives_the_replays_ids(corpus, pre_split, extra, specials, probes, data):
    tok = subwords.train(corpus, vocab_size=len(specials) + 256 + extra, spelling="bytes",
                         pre_split=pre_split, min_count=1, special_tokens=specials)
    # every model the core's BPE trains on these expressions takes the rank engine
    assert tok._model.rank_fast()
    allowed = data.draw(st.lists(st.sampled_from(specials), unique=True)) if specials else []
    want = [replay(tok, t, allowed) for t in probes]
    assert [tok.encode(t, allowed_special=allowed) for t in probes] == want
    assert tok.encode_batch(probes, threads=2, allowed_special=allowed) == want
    ids, ends = tok.encode_buffers(probes, threads=2, width=4, allowed_special=allowed)
    flat = list(struct.unpack(f"<{len(ids) // 4}I", bytes(ids)))
    bounds = [0] + list(struct.unpack(f"<{len(ends) // 8}Q", bytes(ends)))
    assert [flat[a:b] for a, b in zip(bounds, bounds[1:])] == want
    for t, w in zip(probes, want):
        assert tok.encode_pieces(t, allowed_special=allowed) == [tok.id_to_piece(i) for i in w]
        assert tok.encode_with_offsets(t, allowed_special=allowed) == offsets_of(tok, t, w)
        assert tok.decode(w) == t
    # the plain call on one text, nothing allowed
    assert [tok.encode(t) for t in probes] == [replay(tok, t, []) for t in probes]


@SETTINGS
@given(corpus=corpora, pre_split=st.sampled_from([None, "gpt2", r"\w+|\s+|[^\w\s]+"]),
       extra=st.integers(0, 60), probes=st.lists(texts(), min_size=1, max_size=4))
def test_other_pre_splits_keep_the_replay(corpus, pre_split, extra, probes):
    opts = {} if pre_split is None else {"pre_split": pre_split}
    tok = subwords.train(corpus, vocab_size=256 + extra, spelling="bytes", min_count=1, **opts)
    assert not tok._model.rank_fast()
    assert [tok.encode(t) for t in probes] == [replay(tok, t, []) for t in probes]
