"""subwords.trim: the trimmed vocabulary cuts the text it covers exactly as before,
and the id map says where every kept row went."""

from __future__ import annotations

import json

import pytest
from hypothesis import assume, given, settings, strategies as st

import subwords
from subwords.errors import InputError, OptionError, UnknownPieceError
from subwords import trim

CORPUS = [
    "the cat sat on the mat", "a dog ran in the park", "the cat and the dog", "hello world of subwords",
    "subwords cut words into pieces", "pieces of words make a vocabulary", "naïve café owners cook",
] * 4
# the trimming corpus: a part of the training one, so some rows go
PART = CORPUS[:3] + CORPUS[6:7]
WORDS = sorted({w for line in PART for w in line.split()})

MODELS = {
    "bpe-end": dict(vocab_size=70),
    "bpe-front": dict(vocab_size=70, spelling="front"),
    "bpe-fallback": dict(vocab_size=70, byte_fallback=True),
    "bpe-bytes": dict(vocab_size=300, spelling="bytes", pre_split="gpt2"),
    "wordpiece": dict(model="wordpiece", vocab_size=70),
    "unigram": dict(model="unigram", vocab_size=60),
}


@pytest.fixture(scope="module", params=list(MODELS))
def trimmed(request):
    tok = subwords.train(CORPUS, **MODELS[request.param])
    return request.param, tok, trim(tok, PART)


def _covered(tok, t, text):
    """Every piece the old model cuts ``text`` into was kept."""
    return all(t.id_map[i] is not None for i in tok.encode(text))


def _check_same_cut(tok, t, text):
    old_ids = tok.encode(text)
    assert _covered(tok, t, text)
    assert t.tokenizer.encode_pieces(text) == tok.encode_pieces(text)
    assert t.tokenizer.encode(text) == [t.id_map[i] for i in old_ids]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from(WORDS), min_size=1, max_size=8))
def test_covered_text_is_cut_exactly_as_before(trimmed, words):
    name, tok, t = trimmed
    text = " ".join(words)
    # a word-level spelling covers every such text; under byte-level BPE a unit is a word with
    # the space before it, and a word seen only at the start of a line may not be covered
    if name != "bpe-bytes":
        assert _covered(tok, t, text)
    assume(_covered(tok, t, text))
    _check_same_cut(tok, t, text)


def test_the_trimming_corpus_is_cut_as_before_and_rows_went(trimmed):
    name, tok, t = trimmed
    for text in PART:
        _check_same_cut(tok, t, text)
    assert t.new_size < t.old_size
    assert t.old_size == tok.vocab_size and t.new_size == t.tokenizer.vocab_size


def test_the_id_map_is_dense_ordered_and_names_the_same_pieces(trimmed):
    name, tok, t = trimmed
    kept = [i for i, j in enumerate(t.id_map) if j is not None]
    assert [t.id_map[i] for i in kept] == list(range(t.new_size))
    for i in kept:
        assert t.tokenizer.id_to_piece(t.id_map[i]) == tok.id_to_piece(i)
        assert t.tokenizer.kinds[t.id_map[i]] == tok.kinds[i]
    # every merge kept is an old merge, in the old order, with all three rows kept
    old = tok.merges
    positions = [old.index(m) for m in t.tokenizer.merges]
    assert positions == sorted(positions)


def test_the_page_corpus_by_hand():
    # BPE page corpus (low 5, lower 2, newest 6, widest 3) at 22 rows; merges (by hand in
    # tests/pages/test_pages_bpe.py): e+s, es+t</w>, l+o, e+w, ew+est</w>, n+ewest</w>, lo+w</w>,
    # d+est</w>, i+dest</w>, w+idest</w>.
    tok = subwords.train({"low": 5, "lower": 2, "newest": 6, "widest": 3}, vocab_size=22)
    # "low" is cut [low</w>]: the one used row is low</w>. Its closure: lo, w</w>
    # (lo+w</w>), then l, o (l+o). Kept: [UNK] (special) + l o w</w> + lo low</w> = 6 rows.
    t = trim(tok, ["low low"])
    assert t.tokenizer.rows == ["[UNK]", "l", "o", "w</w>", "lo", "low</w>"]
    assert t.tokenizer.merges == [("l", "o"), ("lo", "w</w>")]
    old = tok.rows
    assert t.id_map == [0 if p == "[UNK]" else (t.tokenizer.rows.index(p) if p in t.tokenizer.rows else None)
                        for p in old]
    assert t.tokenizer.encode_pieces("low") == ["low</w>"]
    # text it does not cover is cut differently: n, e, s, t</w> have no row any more
    assert tok.encode_pieces("newest") == ["newest</w>"]
    assert "[UNK]" in t.tokenizer.encode_pieces("newest")


def test_min_count_and_keep(tmp_path):
    tok = subwords.train({"low": 5, "lower": 2, "newest": 6, "widest": 3}, vocab_size=22)
    # "low" x3 and "newest" x1: min_count=2 keeps low</w> and its closure only; keep adds newest</w>'s
    t = trim(tok, ["low low low newest"], min_count=2)
    assert "newest</w>" not in t.tokenizer.rows and "low</w>" in t.tokenizer.rows
    t = trim(tok, ["low low low newest"], min_count=2, keep=["newest</w>"])
    assert t.tokenizer.encode_pieces("newest") == ["newest</w>"]
    out = tmp_path / "small.json"
    t = trim(tok, ["low"], output=out)
    assert subwords.load(out).rows == t.tokenizer.rows
    ids = json.loads((tmp_path / "small.json.ids.json").read_text(encoding="utf-8"))
    assert ids == {"old_size": 22, "new_size": 6, "old_to_new": t.id_map}


def test_bad_input_refused_and_nothing_written(tmp_path):
    tok = subwords.train({"low": 5, "lower": 2, "newest": 6, "widest": 3}, vocab_size=22)
    out = tmp_path / "out.json"
    with pytest.raises(InputError, match="empty"):
        trim(tok, [], output=out)
    with pytest.raises(InputError, match="empty"):
        trim(tok, ["  ", ""], output=out)
    with pytest.raises(OptionError, match="min_count"):
        trim(tok, ["low"], min_count=0, output=out)
    with pytest.raises(OptionError, match="list of pieces"):
        trim(tok, ["low"], keep="low</w>", output=out)
    with pytest.raises(UnknownPieceError):
        trim(tok, ["low"], keep=["nothing"], output=out)
    with pytest.raises(InputError, match="lone surrogate"):
        trim(tok, ["low \udfff"], output=out)
    with pytest.raises(InputError, match="own models"):
        trim(object(), ["low"], output=out)
    assert not out.exists() and not (tmp_path / "out.json.ids.json").exists()
