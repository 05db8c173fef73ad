"""subwords.extend: continuing BPE from our models, a tokenizer.json made by the
``tokenizers`` library and a tiktoken rank file, keeping every old id and merge.

Expected merges come from the BPE page or from the hand calculations written next to them."""

from __future__ import annotations

import json

import pytest

import subwords
from subwords.errors import InputError, OptionError
from subwords import extend

# BPE page: "The word low occurs five times, lower twice, newest six times and widest three."
FOUR = {"low": 5, "lower": 2, "newest": 6, "widest": 3}
FOUR_TEXTS = [w for w, n in FOUR.items() for _ in range(n)]

# The page's ten merges, worked by hand in tests/pages/test_pages_bpe.py (FOUR_MERGES).
FOUR_MERGES = [("e", "s"), ("es", "t</w>"), ("l", "o"), ("e", "w"), ("ew", "est</w>"), ("n", "ewest</w>"),
               ("lo", "w</w>"), ("d", "est</w>"), ("i", "dest</w>"), ("w", "idest</w>")]


def test_extending_the_page_model_on_its_corpus_learns_the_pages_remaining_merges():
    # 16 rows = 11 alphabet + [UNK] + 4 merges; the page's corpus replayed through those four
    # merges is the state the trainer is in after its fourth merge, so extending to 22 must
    # learn the page's merges 5..10, with ids 16..21 after the old ones.
    small = subwords.train(FOUR, vocab_size=16)
    assert small.merges == FOUR_MERGES[:4]
    ext = extend(small, FOUR_TEXTS, vocab_size=22)
    tok = ext.tokenizer
    assert tok.merges == FOUR_MERGES
    assert tok.rows[:16] == small.rows
    assert tok.rows[16:] == ["ewest</w>", "newest</w>", "low</w>", "dest</w>", "idest</w>", "widest</w>"]
    assert (ext.old_size, ext.new_size, ext.merges_learned, ext.stop) == (16, 22, 6, "size")
    # By hand, after the first four merges: low 5 x [lo w</w>] + lower 2 x [lo w e r</w>] +
    # newest 6 x [n ew est</w>] + widest 3 x [w i d est</w>] = 10 + 8 + 18 + 12 = 48; after all
    # ten: 5 x [low</w>] + 2 x [lo w e r</w>] + 6 x [newest</w>] + 3 x [widest</w>] = 5 + 8 + 6 + 3 = 22
    assert (ext.pieces_before, ext.pieces_after) == (48, 22)


def test_extending_on_new_text_by_hand():
    # The 16-row model holds the merges e+s, es+t</w>, l+o, e+w. New corpus: lowest x4, newer x3.
    # Replayed: lowest = l o w e s t</w> -> l o w es t</w> -> l o w est</w> -> lo w est</w>
    #           newer  = n e w e r</w>   -> (e+w) n ew e r</w>
    # Pairs: (lo,w) 4, (w,est</w>) 4, (e,r</w>) 3, (ew,e) 3, (n,ew) 3.
    #  1 lo+w        4  (tie with w+est</w>: "lo" < "w")
    #  2 low+est</w> 4
    #  3 e+r</w>     3  (three at 3: "e" < "ew" < "n")
    #  4 ew+er</w>   3  (tie with n+ew: "ew" < "n")
    #  5 n+ewer</w>  3  then no pair is left
    # Pieces: 4 x 3 + 3 x 4 = 24 before, 4 + 3 = 7 after.
    small = subwords.train(FOUR, vocab_size=16)
    new = ["lowest"] * 4 + ["newer"] * 3
    ext = extend(small, new, vocab_size=40)
    tok = ext.tokenizer
    assert tok.merges[4:] == [("lo", "w"), ("low", "est</w>"), ("e", "r</w>"), ("ew", "er</w>"), ("n", "ewer</w>")]
    assert tok.rows[16:] == ["low", "lowest</w>", "er</w>", "ewer</w>", "newer</w>"]
    assert (ext.stop, ext.pieces_before, ext.pieces_after) == ("no_pairs", 24, 7)
    assert small.encode_pieces("lowest") == ["lo", "w", "est</w>"]
    assert tok.encode_pieces("lowest") == ["lowest</w>"]
    # old text is cut as before wherever the new merges do not apply
    assert tok.encode("widest") == small.encode("widest")


def test_old_ids_kept_and_new_text_shorter_for_a_byte_level_model(tmp_path):
    old_text = ["the cat sat on the mat", "a dog ran in the park"] * 10
    new_text = ["tokenization of subwords", "subwords tokenization extends vocabularies"] * 10
    tok = subwords.train(old_text, model="bpe", spelling="bytes", pre_split="gpt2", vocab_size=280)
    out = tmp_path / "ext.json"
    ext = extend(tok, new_text, vocab_size=tok.vocab_size + 25, output=out)
    new = subwords.load(out)
    assert new.rows[:tok.vocab_size] == tok.rows
    assert new.merges[:len(tok.merges)] == tok.merges
    assert new.vocab_size == ext.new_size == tok.vocab_size + 25
    for text in new_text:
        assert len(new.encode(text)) < len(tok.encode(text))
        assert new.decode(new.encode(text)) == text
    for text in old_text:
        assert new.decode(new.encode(text)) == text


@pytest.fixture()
def hf_file(tmp_path):
    import tokenizers
    from tokenizers import decoders, models, pre_tokenizers, trainers

    tk = tokenizers.Tokenizer(models.BPE())
    tk.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tk.decoder = decoders.ByteLevel()
    old_text = ["the cat sat on the mat", "a dog ran in the park", "the cat and the dog"] * 20
    tk.train_from_iterator(old_text, trainers.BpeTrainer(
        vocab_size=300, initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), special_tokens=["<|endoftext|>"]))
    # an added token outside the model's vocab: id 283, a hole in model.vocab's ids
    tk.add_special_tokens(["<|pad|>"])
    path = tmp_path / "tokenizer.json"
    tk.save(str(path))
    return path


NEW = ["tokenization of subwords", "subwords tokenization extends vocabularies", "the cat reads subwords"] * 10


def test_tokenizer_json_keeps_ids_and_merges(hf_file, tmp_path):
    import tokenizers

    before = json.loads(hf_file.read_text(encoding="utf-8"))
    out = tmp_path / "ext.json"
    ext = extend(hf_file, NEW, vocab_size=284 + 30, output=out)
    after = json.loads(out.read_text(encoding="utf-8"))
    old_vocab, new_vocab = before["model"]["vocab"], after["model"]["vocab"]
    assert len(old_vocab) == 283  # 256 bytes + 1 special + 26 merges (tokenizers stopped there)
    assert [t["id"] for t in before["added_tokens"]] == [0, 283]  # <|endoftext|> first, as trained
    assert all(new_vocab[t] == i for t, i in old_vocab.items())
    # <|pad|> is written into the vocab at its id (else tokenizers would renumber it after the
    # grown vocab), and the new ids come after it
    assert new_vocab["<|pad|>"] == 283
    assert sorted(set(new_vocab.values()) - set(old_vocab.values()) - {283}) == list(range(284, 314))
    assert (ext.old_size, ext.new_size) == (284, 314)
    assert after["model"]["merges"][:len(before["model"]["merges"])] == before["model"]["merges"]
    assert after["added_tokens"] == before["added_tokens"]
    old_tk, new_tk = tokenizers.Tokenizer.from_file(str(hf_file)), tokenizers.Tokenizer.from_file(str(out))
    for text in NEW:
        ids = new_tk.encode(text).ids
        assert ids == ext.tokenizer.encode(text)
        assert len(ids) < len(old_tk.encode(text).ids)
        assert new_tk.decode(ids) == text
    assert new_tk.encode("the cat sat").ids == old_tk.encode("the cat sat").ids
    assert new_tk.token_to_id("<|pad|>") == 283


@pytest.fixture()
def tiktoken_file(tmp_path):
    from subwords.formats import _dispatch

    old_text = ["the cat sat on the mat", "a dog ran in the park", "the cat and the dog"] * 20
    tok = subwords.train(old_text, model="bpe", spelling="bytes", pre_split="gpt2", vocab_size=300)
    path = tmp_path / "small.tiktoken"
    _dispatch.export(tok, path, "tiktoken")
    return path


def test_tiktoken_keeps_ranks_and_loads_in_tiktoken(tiktoken_file, tmp_path):
    import tiktoken
    from tiktoken.load import load_tiktoken_bpe

    from subwords.formats.tiktoken import R50K_PATTERN

    old = subwords.load(tiktoken_file, pattern="r50k_base")
    out = tmp_path / "ext.tiktoken"
    old_ranks = load_tiktoken_bpe(str(tiktoken_file))
    n = len(old_ranks)
    assert sorted(old_ranks.values()) == list(range(n))
    # vocab_size counts ranks and specials: n ranks + r50k_base's <|endoftext|> (id 50256)
    ext = extend(old, NEW, vocab_size=n + 1 + 30, output=out)
    new_ranks = load_tiktoken_bpe(str(out))
    assert all(new_ranks[t] == r for t, r in old_ranks.items())
    assert sorted(new_ranks.values()) == list(range(n + 30))
    assert (ext.old_size, ext.new_size) == (n + 1, n + 31)
    enc = tiktoken.Encoding("extended", pat_str=R50K_PATTERN, mergeable_ranks=new_ranks, special_tokens={})
    for text in NEW:
        ids = enc.encode(text)
        assert ids == ext.tokenizer.encode(text)
        assert len(ids) < len(old.encode(text))
        assert enc.decode(ids) == text


@pytest.mark.parametrize("model", ["unigram", "wordpiece"])
def test_extending_a_model_without_merges_is_refused(model, tmp_path):
    tok = subwords.train(["hello world"] * 5, model=model, vocab_size=20)
    out = tmp_path / "out.json"
    with pytest.raises(OptionError, match="continues BPE"):
        extend(tok, ["new text"], vocab_size=40, output=out)
    assert not out.exists()


def test_bad_sizes_and_empty_corpora_refused(tmp_path, hf_file, tiktoken_file):
    tok = subwords.train(FOUR, vocab_size=16)
    out = tmp_path / "out"
    with pytest.raises(OptionError, match="not above the tokenizer's current size 16"):
        extend(tok, ["lowest"], vocab_size=10, output=out)
    with pytest.raises(OptionError, match="not above"):
        extend(tok, ["lowest"], vocab_size=16, output=out)
    with pytest.raises(OptionError, match="vocab_size must be an int"):
        extend(tok, ["lowest"], vocab_size="20", output=out)
    with pytest.raises(OptionError, match="min_count"):
        extend(tok, ["lowest"], vocab_size=20, min_count=0, output=out)
    for model in (tok, hf_file, tiktoken_file):
        for empty in ([], ["", "   "]):
            kw = {"pattern": "r50k_base"} if model == tiktoken_file else {}
            with pytest.raises(InputError, match="empty"):
                extend(model, empty, vocab_size=400, output=out, **kw)
    with pytest.raises(OptionError, match="above the largest size"):
        extend(tok, ["lowest"], vocab_size=10**30, output=out)
    with pytest.raises(OptionError, match="min_count"):
        extend(tok, ["lowest"], vocab_size=20, min_count=10**30, output=out)
    for model in (tok, hf_file, tiktoken_file):
        kw = {"pattern": "r50k_base"} if model == tiktoken_file else {}
        with pytest.raises(InputError, match="lone surrogate"):
            extend(model, ["ok", "bad \ud800 text"], vocab_size=400, output=out, **kw)
        with pytest.raises(InputError, match="not a str"):
            extend(model, ["ok", b"bytes"], vocab_size=400, output=out, **kw)
    with pytest.raises(InputError, match="single string"):
        extend(tok, "lowest", vocab_size=20, output=out)
    with pytest.raises(OptionError, match="not above"):
        extend(hf_file, NEW, vocab_size=284, output=out)
    assert not out.exists()


def test_a_tokenizer_json_that_is_not_byte_level_is_refused(tmp_path):
    import tokenizers
    from tokenizers import models, pre_tokenizers, trainers

    tk = tokenizers.Tokenizer(models.BPE(unk_token="[UNK]"))
    tk.pre_tokenizer = pre_tokenizers.Whitespace()
    tk.train_from_iterator(["the cat sat"] * 5, trainers.BpeTrainer(vocab_size=40, special_tokens=["[UNK]"]))
    path = tmp_path / "tokenizer.json"
    tk.save(str(path))
    out = tmp_path / "out.json"
    with pytest.raises(InputError, match="byte-level BPE"):
        extend(path, ["new text"], vocab_size=100, output=out)
    assert not out.exists()


def test_corrupt_files_refused(tmp_path):
    from subwords.errors import ModelFileError

    out = tmp_path / "out"
    bad_json = tmp_path / "tokenizer.json"
    bad_json.write_text('{"version": "1.0", "model": ', encoding="utf-8")
    bad_rank = tmp_path / "r50k_base.tiktoken"
    bad_rank.write_bytes(b"not base64 at all\n")
    for path in (bad_json, bad_rank):
        with pytest.raises(ModelFileError):
            extend(path, ["some text"], vocab_size=400, output=out)
    with pytest.raises(InputError, match="takes a subwords BPE model"):
        extend(42, ["some text"], vocab_size=400, output=out)
    assert not out.exists()


SPELLINGS = {
    "end": dict(vocab_size=60),
    "continuation": dict(vocab_size=60, spelling="continuation"),
    "front": dict(vocab_size=60, spelling="front"),
    "bytes": dict(vocab_size=300, spelling="bytes", pre_split="gpt2"),
    "end-fallback": dict(vocab_size=60, byte_fallback=True),
    "front-fallback": dict(vocab_size=60, spelling="front", byte_fallback=True),
    "end-lowercase": dict(vocab_size=60, lowercase=True),
}
TRAIN = ["The cat sat on the mat", "a dog ran in the park", "the cat and the dog", "Naïve café owners cook",
         "subwords cut words into pieces", "pieces of words make a vocabulary"] * 6


@pytest.mark.parametrize("name", list(SPELLINGS))
def test_extending_on_the_training_corpus_is_training_further(name):
    # Replaying a model's merges on its own corpus gives the state its trainer was in after the
    # last of them; the engine then takes the same steps the trainer would have taken next.
    kw = dict(SPELLINGS[name])
    small = subwords.train(TRAIN, **kw)
    kw["vocab_size"] += 25
    big = subwords.train(TRAIN, **kw)
    assert big.report["stop"] == "size" and big.vocab_size == small.vocab_size + 25
    ext = extend(small, TRAIN, vocab_size=big.vocab_size)
    assert ext.tokenizer.rows == big.rows
    assert ext.tokenizer.merges == big.merges
    assert ext.tokenizer.kinds == big.kinds
    # and the pieces it reports are the trainer's
    assert ext.pieces_after == big.report["corpus_pieces_after"]


def test_a_wordpiece_tokenizer_json_is_refused(tmp_path):
    import tokenizers
    from tokenizers import models, pre_tokenizers, trainers

    tk = tokenizers.Tokenizer(models.WordPiece(unk_token="[UNK]"))
    tk.pre_tokenizer = pre_tokenizers.Whitespace()
    tk.train_from_iterator(["the cat sat"] * 5, trainers.WordPieceTrainer(vocab_size=40, special_tokens=["[UNK]"]))
    path = tmp_path / "tokenizer.json"
    tk.save(str(path))
    out = tmp_path / "out.json"
    with pytest.raises(OptionError, match="continues BPE training"):
        extend(path, ["new text"], vocab_size=100, output=out)
    assert not out.exists()


def test_tokenizer_json_with_ignore_merges(hf_file, tmp_path):
    # tokenizers (Llama 3 style files): a unit that is a token is that token, whatever the merges
    import tokenizers

    doc = json.loads(hf_file.read_text(encoding="utf-8"))
    doc["model"]["ignore_merges"] = True
    src = tmp_path / "ignore.json"
    src.write_text(json.dumps(doc), encoding="utf-8")
    out = tmp_path / "ext.json"
    ext = extend(src, NEW, vocab_size=284 + 30, output=out)
    new_tk = tokenizers.Tokenizer.from_file(str(out))
    assert json.loads(out.read_text(encoding="utf-8"))["model"]["ignore_merges"] is True
    for text in NEW:
        assert new_tk.encode(text).ids == ext.tokenizer.encode(text)
