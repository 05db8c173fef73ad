"""SuperBPE from count tables: a table counted with the superword options carries the spans, and
training from it (in Python, from a saved file, or through the CLI) gives the model the text gives;
merged partial tables give it too. A table without spans is refused with how to recount."""

from __future__ import annotations

import random

import pytest

import subwords
from subwords import OptionError
from peers import multilingual_texts
from superword_cases import count_then_train_cli, run_cli, write_corpus


def test_the_spans_of_a_tiny_corpus_by_hand() -> None:
    # the paper's span expression on "the cat!! 12": "!!" is a run of two punctuation marks,
    # "12" a run of digits, and the space between them is the stretch between two matches;
    # "the cat sat" holds no match, so it is one span
    table = subwords.count(["the cat sat", "the cat!! 12"], preset="superbpe")
    assert table.superword_pattern == "superbpe"
    assert table.span_items() == [(" ", 1), ("!!", 1), ("12", 1), ("the cat", 1), ("the cat sat", 1)]
    assert table.spans == 5
    # the units are o200k's pieces, as for a plain byte-level count
    plain = subwords.count(["the cat sat", "the cat!! 12"], spelling="bytes", pre_split="o200k")
    assert list(table.items()) == list(plain.items())
    assert plain.spans == 0 and plain.superword_pattern is None and plain.span_items() == []


def corpus(n_bytes: int, seed: int) -> list[str]:
    texts = list(multilingual_texts(n_bytes))
    random.Random(seed).shuffle(texts)
    return texts


def has_superwords(tok: subwords.Tokenizer) -> bool:
    # a piece with a space after its first byte exists only through stage two
    return any(b" " in tok.decode_bytes([i])[1:].rstrip(b" ") for i in range(tok.vocab_size))


def test_a_table_trains_the_model_the_text_gives(tmp_path) -> None:
    texts = corpus(120_000, 1)
    path = tmp_path / "corpus.txt"
    path.write_text("\n".join(texts) + "\n", encoding="utf-8")
    direct = subwords.train([path], preset="superbpe", vocab_size=900, superword_at=600)
    assert has_superwords(direct)
    table = subwords.count([path], preset="superbpe")
    assert table.spans > 0
    assert subwords.train(table, preset="superbpe", vocab_size=900, superword_at=600).to_json() == direct.to_json()
    # a saved table file, read straight into the trainer
    table.save(tmp_path / "t.counts")
    got = subwords.train([tmp_path / "t.counts"], counts=True, preset="superbpe", vocab_size=900, superword_at=600)
    assert got.to_json() == direct.to_json()
    # and a table merged from three partial ones, in either order
    parts = [subwords.count(texts[k::3], preset="superbpe") for k in range(3)]
    merged = parts[2].merge(parts[0], parts[1])
    assert merged.to_bytes() == parts[0].merge(parts[1], parts[2]).to_bytes()
    assert merged.to_bytes() == subwords.count(texts, preset="superbpe").to_bytes()
    assert merged.span_items() == table.span_items()


def test_the_cli_count_then_train_gives_the_text_model_bytes(tmp_path) -> None:
    path = write_corpus(tmp_path, corpus(120_000, 2))
    from_table, from_text = count_then_train_cli(tmp_path, path, "superbpe", 900)
    assert from_table.read_bytes() == from_text.read_bytes()
    assert has_superwords(subwords.load(from_table))
    # the explicit options count the same table as the preset
    run_cli("count", str(path), "-o", str(tmp_path / "u.counts"), "--spelling", "bytes", "--pre-split", "o200k",
            "--superword-pattern", "superbpe", "--quiet")
    assert (tmp_path / "u.counts").read_bytes() == (tmp_path / "t.counts").read_bytes()


def test_a_table_without_spans_says_how_to_recount(tmp_path) -> None:
    plain = subwords.count(["the cat sat", "on the mat"], spelling="bytes", pre_split="o200k")
    with pytest.raises(OptionError, match=r"count again with the superword options.*--preset superbpe"):
        subwords.train(plain, preset="superbpe", vocab_size=300)
    plain.save(tmp_path / "p.counts")
    with pytest.raises(OptionError, match=r"does not carry.*preset='superbpe'"):
        subwords.train([tmp_path / "p.counts"], counts=True, preset="superbpe", vocab_size=300)
    # spans cut by another expression are named
    other = subwords.count(["the cat sat"], spelling="bytes", pre_split="o200k", superword_pattern=r"[^.]+|\.")
    with pytest.raises(OptionError, match=r"superword_pattern .*this training asks for \"superbpe\""):
        subwords.train(other, preset="superbpe", vocab_size=300)


def test_merging_tables_with_and_without_spans_is_refused() -> None:
    a = subwords.count(["the cat sat"], preset="superbpe")
    b = subwords.count(["on the mat"], spelling="bytes", pre_split="o200k")
    with pytest.raises(OptionError, match="carries SuperBPE spans with one that does not"):
        a.merge(b)
    with pytest.raises(OptionError, match="carries SuperBPE spans with one that does not"):
        b.merge(a)


def test_superword_pattern_needs_the_bytes_spelling() -> None:
    with pytest.raises(OptionError, match="spelling='bytes'"):
        subwords.count(["the cat"], spelling="end", superword_pattern="superbpe")


def test_a_plain_training_ignores_the_spans() -> None:
    texts = corpus(60_000, 3)
    table = subwords.count(texts, preset="superbpe")
    want = subwords.train(texts, model="bpe", spelling="bytes", pre_split="o200k", vocab_size=600)
    assert subwords.train(table, model="bpe", spelling="bytes", pre_split="o200k", vocab_size=600).to_json() == want.to_json()
