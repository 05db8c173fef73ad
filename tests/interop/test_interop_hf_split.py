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
