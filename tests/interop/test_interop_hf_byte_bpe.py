"""The byte-level model step of the tokenizer.json engine against its general one and against
`tokenizers` itself.

Byte-level BPE files whose words start as plain byte characters (no prefix or suffix, all 256
byte characters in the vocabulary) and whose pre-tokenizers only cut the text (GPT-2's ByteLevel,
or a regex Split before a ByteLevel without its regex) take cheaper lookups for their words
(``byte_level_fast``). Each file here is encoded three ways on real and random text, added tokens
included: by `tokenizers`, by ``encode`` (the byte-level step where the file allows it) and by
``encode_general`` (the general step alone); the three must give the same ids, and a file the
byte-level step must not take is shown to keep the general one.
"""

from __future__ import annotations

import json
import random

import pytest

from subwords.formats import load

import peers

from tokenizers import AddedToken, Regex, Tokenizer, decoders, models, pre_tokenizers, trainers

# OpenAI's o200k_base expression, as its tokenizer.json files carry it
O200K = "|".join([
    r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?",
    r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?",
    r"\p{N}{1,3}", r" ?[^\s\p{L}\p{N}]+[\r\n/]*", r"\s*[\r\n]+", r"\s+(?!\S)", r"\s+",
])

ADDED = ["<|endoftext|>", "<|fim|>"]
PLAIN_ADDED = ["hello world", "ça"]


@pytest.fixture(scope="module")
def texts() -> list[str]:
    return list(peers.multilingual_texts(600_000))


def random_texts(seed: int, n: int) -> list[str]:
    """Texts drawn from letters, marks, digits, spaces, line breaks, CJK, emoji, apostrophes and
    the added tokens' surfaces, in runs, so words of every length up to hundreds of bytes come up."""
    rng = random.Random(seed)
    pool = list("abcdeABCDE  \n\t'0123") + ["é", "e\u0301", "中文", "😀", "ß", "ﬁ", "’s", "'ll", "\r\n", "///",
                                            "the", " of", "ing"] + ADDED + PLAIN_ADDED
    out = []
    for _ in range(n):
        run = rng.choice([3, 10, 40, 200])
        out.append("".join(rng.choice(pool) for _ in range(rng.randint(0, run))))
    out += ["a" * 500, "ab" * 300, " " * 70, "é" * 100, "0" * 40]
    return out


def _added(tok: Tokenizer) -> Tokenizer:
    tok.add_special_tokens([AddedToken(ADDED[0], special=True), AddedToken(ADDED[1], lstrip=True, special=True)])
    tok.add_tokens([AddedToken(PLAIN_ADDED[0], normalized=False), AddedToken(PLAIN_ADDED[1], single_word=True)])
    return tok


def _train(tok: Tokenizer, train: list[str], size: int) -> Tokenizer:
    tok.decoder = decoders.ByteLevel()
    tok.train_from_iterator(train, trainers.BpeTrainer(vocab_size=size, show_progress=False,
                                                       initial_alphabet=pre_tokenizers.ByteLevel.alphabet()))
    return _added(tok)


def gpt2_shape(train: list[str]) -> Tokenizer:
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    return _train(tok, train, 3000)


def o200k_shape(train: list[str]) -> Tokenizer:
    """Llama 3's shape on o200k's expression: a regex Split, a ByteLevel without its regex, and
    ``ignore_merges``."""
    tok = Tokenizer(models.BPE(ignore_merges=True))
    tok.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Split(Regex(O200K), behavior="isolated", invert=False),
        pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)])
    return _train(tok, train, 3000)


def prefix_space(train: list[str]) -> Tokenizer:
    """RoBERTa's ByteLevel (a space added before the text): not only cuts, so the general step."""
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=True)
    return _train(tok, train, 2000)


def missing_byte(train: list[str]) -> Tokenizer:
    """GPT-2's shape without the token of the byte 0x00 (tokenizers drops that byte): the
    general step."""
    doc = json.loads(gpt2_shape(train).to_str())
    vocab = doc["model"]["vocab"]
    gone = "\u0100"  # the character GPT-2's table gives the byte 0x00
    assert not any(gone in m for pair in doc["model"]["merges"] for m in (pair if isinstance(pair, list) else pair.split(" ")))
    del vocab[gone]
    return Tokenizer.from_str(json.dumps(doc))


def cl100k_converted() -> Tokenizer:
    """OpenAI's cl100k_base written as a tokenizer.json: a token's id is its rank, every split of
    a token into two lower-ranked tokens is a merge, ranked by the token it makes, and
    ``ignore_merges`` on (as the encoding benchmark writes it)."""
    # the file as the tiktoken-rs crate ships it (tests/compat/openai_files.py)
    ranks = peers.tiktoken_ranks(peers.crate_member("tiktoken-rs", "0.7.0", "assets/cl100k_base.tiktoken"))
    pattern = peers.tiktoken_spec("cl100k_base", ranks)["pat_str"].replace("{1,3}+", "{1,3}")
    doc = peers.rank_tokenizer_json(ranks, pattern, {})
    return _added(Tokenizer.from_str(json.dumps(doc)))


# name: (build, byte-level step, rank engine); GPT-2's lone ByteLevel has no scanner the rank
# engine runs, and a trained file's merges need not list each token's canonical split
FILES = {"gpt2_shape": (gpt2_shape, True, False), "o200k_shape": (o200k_shape, True, None),
         "prefix_space": (prefix_space, False, False), "missing_byte": (missing_byte, False, False)}


def check(ref: Tokenizer, path: str, fast: bool, texts: list[str], rank: bool | None = False) -> None:
    """``rank``: whether the rank engine must (True) or must not (False) cut the words; None
    for either (the ids are checked both ways)."""
    ours = load(path)
    pipe = ours._pipe
    assert pipe.byte_level_fast is fast
    if rank is not None:
        assert pipe.rank_fast is rank
    allowed = ours._allowed("all")
    want = [e.ids for e in ref.encode_batch(texts, add_special_tokens=False)]
    for text, ids in zip(texts, want):
        assert ours.encode(text, allowed_special="all", add_special_tokens=False) == ids, repr(text[:80])
        assert pipe.encode_general(text, allowed) == ids, repr(text[:80])
    assert ours.encode_batch(texts, allowed_special="all", add_special_tokens=False, threads=2) == want
    # the added tokens came up, as tokens and as text
    added_ids = {ref.token_to_id(t) for t in ADDED + PLAIN_ADDED}
    assert sum(1 for ids in want for i in ids if i in added_ids) > 50


@pytest.mark.parametrize("name", sorted(FILES))
def test_byte_level_step_gives_tokenizers_ids(name, texts, tmp_path):
    build, fast, rank = FILES[name]
    ref = build(texts[::4])
    path = tmp_path / f"{name}.json"
    ref.save(str(path))
    check(ref, str(path), fast, texts[1::3] + random_texts(len(name), 1500), rank)


def test_openai_vocabulary_written_as_tokenizer_json(texts, tmp_path):
    ref = cl100k_converted()
    path = tmp_path / "cl100k.json"
    ref.save(str(path))
    check(ref, str(path), True, texts[::5] + random_texts(7, 800), True)


def test_converted_file_without_a_canonical_split_keeps_the_model_step(texts, tmp_path):
    """cl100k's file with the merge (" th", "e") taken out: the only split of " the" (rank 279)
    into two lower-ranked tokens (" t" + "he" is not one: "he" ranks 383), and the two parts
    tiktoken's merges leave of it. The rank engine would still make " the" inside longer words
    and tokenizers no longer does, so the file keeps the byte-level step, with tokenizers' ids."""
    doc = json.loads(cl100k_converted().to_str())
    merges = doc["model"]["merges"]
    gone = [m for m in merges if (m if isinstance(m, list) else m.split(" ")) == ["\u0120th", "e"]]
    assert len(gone) == 1
    merges.remove(gone[0])
    ref = Tokenizer.from_str(json.dumps(doc))
    path = tmp_path / "cl100k-less.json"
    ref.save(str(path))
    check(ref, str(path), True, texts[::9] + random_texts(8, 300) + [" the", "other theme"], False)
