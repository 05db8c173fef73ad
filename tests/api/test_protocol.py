"""Every tokenizer answers ``subwords.Tokenizer``: one file of each format subwords reads,
loaded with ``subwords.load`` (the format detected from the file), and every protocol method
called on it with the same arguments.

The files are written by subwords' exporters from models trained here (the interop tests check
the same formats against the original libraries); what is checked is what the protocol promises
on any tokenizer: the ids of ``encode_batch`` are those of ``encode``; a piece maps to its id
and back; the special tokens the text spells become their ids only when allowed; ``pair``
appends; offsets cut the text into the pieces' spans, in order.
"""

from __future__ import annotations

import pytest

import subwords
from subwords import formats

TEXT = ["low lower newest widest lowest", "the newest of the low", "widest newer lower"] * 4
SAMPLE = "lowest newer"


@pytest.fixture(scope="module")
def every_format(tmp_path_factory) -> dict[str, subwords.Tokenizer]:
    d = tmp_path_factory.mktemp("formats")
    byte_bpe = subwords.train(TEXT, spelling="bytes", pre_split="gpt2", vocab_size=270)
    own = subwords.train(TEXT, vocab_size=30)
    own.save(d / "model.json")
    subwords.train(TEXT, model="unigram", vocab_size=30).save(d / "unigram.json")
    formats.export(byte_bpe, d / "tokenizer.json", "hf")
    (d / "gpt2").mkdir()
    formats.export(byte_bpe, d / "gpt2", "vocab-merges")
    formats.export(byte_bpe, d / "gpt2.tiktoken", "tiktoken")
    formats.export(subwords.train(TEXT, spelling="front", vocab_size=30), d / "m.model", "sentencepiece")
    formats.export(own, d / "codes.bpe", "subword-nmt")
    formats.export(subwords.train(TEXT, preset="bert", vocab_size=40), d / "vocab.txt", "vocab-txt")
    return {"subwords": subwords.load(d / "model.json"), "unigram": subwords.load(d / "unigram.json"),
            "hf": subwords.load(d / "tokenizer.json"), "vocab-merges": subwords.load(d / "gpt2"),
            "tiktoken": subwords.load(d / "gpt2.tiktoken"), "sentencepiece": subwords.load(d / "m.model"),
            "subword-nmt": subwords.load(d / "codes.bpe"), "vocab-txt": subwords.load(d / "vocab.txt")}


def test_load_detects_every_format(every_format):
    got = {name: getattr(tok, "format", None) for name, tok in every_format.items()}
    assert got == {"subwords": "subwords", "unigram": "subwords", "hf": "hf", "vocab-merges": "vocab-merges",
                   "tiktoken": "tiktoken", "sentencepiece": "sentencepiece", "subword-nmt": "subword-nmt",
                   "vocab-txt": "subwords"}  # a vocab.txt is read as a subwords WordPiece model


def test_every_family_is_a_tokenizer(every_format):
    for name, tok in every_format.items():
        assert isinstance(tok, subwords.Tokenizer), name
    assert not isinstance("a string", subwords.Tokenizer)
    assert not isinstance(subwords.TrainOptions(vocab_size=3), subwords.Tokenizer)


@pytest.mark.parametrize("name", ["subwords", "unigram", "hf", "vocab-merges", "tiktoken", "sentencepiece",
                                  "subword-nmt", "vocab-txt"])
def test_every_protocol_method(every_format, name):
    tok: subwords.Tokenizer = every_format[name]
    ids = tok.encode(SAMPLE, add_special_tokens=False)
    assert ids and all(isinstance(i, int) and 0 <= i < tok.vocab_size for i in ids)
    # the batch gives each text's ids, whatever the thread count
    assert tok.encode_batch([SAMPLE, "low"], threads=2, add_special_tokens=False) == \
        [ids, tok.encode("low", add_special_tokens=False)]
    assert tok.encode_batch([SAMPLE], threads=1, add_special_tokens=True) == [tok.encode(SAMPLE, add_special_tokens=True)]
    # as_numpy: the same ids as one flat array and each text's offsets, in every family
    array = tok.encode_batch([SAMPLE, "low"], threads=2, add_special_tokens=False, as_numpy=True)
    assert [array[k].tolist() for k in range(len(array))] == [ids, tok.encode("low", add_special_tokens=False)]
    # pair appends the second text's ids when no template goes around them
    assert tok.encode(SAMPLE, pair="low", add_special_tokens=False) == ids + tok.encode("low", add_special_tokens=False)
    # every id has a piece that maps back to it
    for i in ids:
        assert tok.piece_to_id(tok.id_to_piece(i)) == i
    with pytest.raises(subwords.UnknownPieceError):
        tok.piece_to_id("no such piece \u2603")
    with pytest.raises(subwords.UnknownPieceError):
        tok.id_to_piece(tok.vocab_size + 10**6)
    # pieces decode back, and the ids decode to the text (every format here is lossless on it)
    pieces = tok.encode_pieces(SAMPLE, add_special_tokens=False)
    assert len(pieces) == len(ids) and all(isinstance(p, str) and p for p in pieces)
    assert tok.decode(ids) == SAMPLE
    assert tok.decode_pieces(pieces) == SAMPLE
    # offsets: one per id, in order, inside the text, covering every non-space character
    spans = tok.encode_with_offsets(SAMPLE)
    assert [i for i, _, _ in spans] == ids
    covered = set()
    last = 0
    for _, start, end in spans:
        assert 0 <= start <= end <= len(SAMPLE) and start >= last - 1
        covered.update(range(start, end))
        last = end
    assert {k for k, c in enumerate(SAMPLE) if c != " "} <= covered
    # special tokens: text unless allowed
    specials = tok.special_tokens
    assert all(isinstance(s, str) and isinstance(i, int) for s, i in specials.items())
    for surface, i in specials.items():
        assert tok.encode(surface, add_special_tokens=False) != [i]  # spelled as text
        assert tok.encode(surface, allowed_special="all", add_special_tokens=False) == [i]
        assert tok.encode(surface, allowed_special={surface}, add_special_tokens=False) == [i]
    with pytest.raises(subwords.InputError):
        tok.encode("low", allowed_special={"<no such special>"})


def test_templates_come_from_the_file(every_format):
    # a BERT vocab.txt puts [CLS] ... [SEP] around a text, and around both of a pair
    bert = every_format["vocab-txt"]
    cls, sep = bert.piece_to_id("[CLS]"), bert.piece_to_id("[SEP]")
    plain = bert.encode("low", add_special_tokens=False)
    assert bert.encode("low") == [cls, *plain, sep]
    assert bert.encode("low", pair="low") == [cls, *plain, sep, *plain, sep]
    # the other families have no template: add_special_tokens changes nothing
    for name in ("subwords", "hf", "tiktoken", "subword-nmt"):
        tok = every_format[name]
        assert tok.encode("low", add_special_tokens=True) == tok.encode("low", add_special_tokens=False), name


def test_analysis_only_on_unigram(every_format):
    unigram, bpe = every_format["unigram"], every_format["subwords"]
    assert isinstance(unigram, subwords.UnigramTokenizer) and not isinstance(bpe, subwords.UnigramTokenizer)
    for name in ("lattice", "nbest", "fewest", "losses", "spellings", "sample", "log_probs", "unit_probability"):
        assert hasattr(unigram, name), name
        assert not hasattr(bpe, name), name
    assert isinstance(subwords.train(TEXT, model="unigram", vocab_size=30), subwords.UnigramTokenizer)
    assert type(subwords.train(TEXT, vocab_size=30)) is subwords.SubwordsTokenizer


def test_the_old_class_name_still_reads_model_files(every_format):
    own = every_format["subwords"]
    assert isinstance(own, subwords.SubwordsTokenizer)
    assert subwords.Tokenizer.from_json(own.to_json()) == own  # the name before the protocol took it
    assert subwords.load is formats.load


@pytest.mark.parametrize("name", ["hf", "tiktoken"])
def test_batch_lists_hold_one_reference_per_id(every_format, name):
    """The result lists of a batch are filled by stores into CPython's item arrays, each id the
    model's one int object for that id: every place that holds it holds one reference, and
    freeing the lists gives every reference back (a byte-level vocabulary of 270: ids from 256
    on are above CPython's small ints, whose counts are not kept on 3.12 and later)."""
    import sys

    tok = every_format[name]
    texts = [SAMPLE, "low lower", "", "newest widest"] * 500  # many parts on 2 threads
    first = tok.encode_batch(texts[:1], threads=1, add_special_tokens=False)[0]
    big = [i for i in first if i >= 256]
    assert big, first
    obj = big[0]
    base = sys.getrefcount(obj)
    got = tok.encode_batch(texts, threads=2, add_special_tokens=False)
    same_object = sum(x is obj for ids in got for x in ids)
    # the first text alone has it once: 500 copies of it in the batch, and maybe other texts
    assert same_object == sum(x == obj for ids in got for x in ids) >= 500 * first.count(obj) > 0
    assert sys.getrefcount(obj) - base == same_object
    del got
    assert sys.getrefcount(obj) == base
