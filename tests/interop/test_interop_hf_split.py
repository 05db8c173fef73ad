"""tokenizer.json `Split` pre-tokenizers against `tokenizers` itself: Regex and String patterns,
every behavior, with and without `invert`. The files are built and trained with the tokenizers
Python API; each must encode the multilingual sample and the edge cases to the same ids."""

from __future__ import annotations

import itertools

import pytest

import peers
from subwords.errors import ModelFileError
from subwords.formats import load

from tokenizers import Regex, Tokenizer, models, pre_tokenizers, trainers

BEHAVIORS = ["removed", "isolated", "merged_with_previous", "merged_with_next", "contiguous"]
PATTERNS = {"regex_digits": Regex(r"\p{N}+"), "regex_space": Regex(r"\s+"), "string_space": " ",
            "string_dash": "-", "regex_lookahead": Regex(r"\s+(?!\S)|\s+")}
EDGE = ["", " ", "  a  b ", "12-34--56", "a-b - c-", "x1y22z333", "-", "--", "   ", "tail   ", "中文 12 ab-cd"]


@pytest.fixture(scope="module")
def texts() -> list[str]:
    return list(peers.multilingual_texts(300_000)) + EDGE


def build(pattern, behavior: str, invert: bool, train: list[str]) -> Tokenizer:
    tok = Tokenizer(models.BPE(unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.Split(pattern, behavior, invert=invert)
    tok.train_from_iterator(train, trainers.BpeTrainer(vocab_size=400, special_tokens=["[UNK]"], show_progress=False))
    return tok


@pytest.mark.parametrize(("pattern", "behavior", "invert"),
                         [(p, b, i) for p, b, i in itertools.product(PATTERNS, BEHAVIORS, (False, True))
                          if not i or p in ("regex_digits", "string_dash")])
def test_split_files_encode_as_tokenizers(pattern, behavior, invert, texts, tmp_path):
    ref = build(PATTERNS[pattern], behavior, invert, texts[::5])
    path = tmp_path / "tokenizer.json"
    ref.save(str(path))
    ours = load(path)
    want = [e.ids for e in ref.encode_batch(texts, add_special_tokens=False)]
    got = ours.encode_batch(texts, threads=2)
    bad = [k for k, (a, b) in enumerate(zip(want, got)) if a != b]
    assert not bad, f"{len(bad)} differ, first {texts[bad[0]][:60]!r}: {want[bad[0]][:12]} vs {got[bad[0]][:12]}"


def test_an_invalid_split_regex_refuses_the_file(tmp_path, texts):
    import json
    ref = build(Regex(r"\d+"), "isolated", False, texts[:50])
    doc = json.loads(ref.to_str())
    doc["pre_tokenizer"]["pattern"] = {"Regex": "a(b"}
    path = tmp_path / "tokenizer.json"
    path.write_text(json.dumps(doc))
    with pytest.raises(ModelFileError, match="not a valid regular expression"):
        load(path)
    doc["pre_tokenizer"]["behavior"] = "Sideways"
    path.write_text(json.dumps(doc))
    with pytest.raises(ModelFileError, match="Sideways"):
        load(path)


# The OpenAI expressions as tokenizer.json files carry them: Llama 3's form of cl100k, and
# tiktoken's cl100k with the interval written for Oniguruma (`\p{N}{1,3}`); with a byte-level
# step after the split, the files tiktoken vocabularies are converted to. Both reach our
# hand-written scanners and the direct word path, which tokenizers checks here.
OPENAI_SPLITS = {
    "llama3": r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+",
    "cl100k_oniguruma": r"'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}| ?[^\s\p{L}\p{N}]++[\r\n]*+|\s++$|\s*[\r\n]|\s+(?!\S)|\s",
}
WHITESPACE_ENDS = ["a\n  ", "a\n", "a  ", "a \n \n ", "x\r\n\r\n", "it's 12345 I'M\n\n  ", " \u2003\n", "\n"]


@pytest.mark.parametrize("name", sorted(OPENAI_SPLITS))
def test_openai_splits_with_byte_level_encode_as_tokenizers(name, texts, tmp_path):
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Split(Regex(OPENAI_SPLITS[name]), "isolated", invert=False),
        pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)])
    tok.train_from_iterator(texts[::5], trainers.BpeTrainer(
        vocab_size=600, initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False))
    path = tmp_path / "tokenizer.json"
    tok.save(str(path))
    ours = load(path)
    sample = texts + WHITESPACE_ENDS
    want = [e.ids for e in tok.encode_batch(sample, add_special_tokens=False)]
    got = [ours.encode(t) for t in sample]
    bad = [k for k, (a, b) in enumerate(zip(want, got)) if a != b]
    assert not bad, f"{len(bad)} differ, first {sample[bad[0]][:60]!r}: {want[bad[0]][:12]} vs {got[bad[0]][:12]}"
