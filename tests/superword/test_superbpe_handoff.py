"""A SuperBPE model handed off: tokenizer.json that stock ``tokenizers`` and ``transformers``
load with the same ids as subwords on 2,000 lines of multilingual text; a tiktoken rank file
refused with the reason; ``extend`` keeping every merge and id; the same bytes on 1 and 2
threads with the input shuffled; the CLI form."""

from __future__ import annotations

import json
import random
import subprocess
import sys
from pathlib import Path

import peers
import pytest

import subwords
from subwords import InputError
from subwords.formats import export

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def corpus() -> list[str]:
    return list(peers.multilingual_texts(limit_bytes=1_500_000))


@pytest.fixture(scope="module")
def held_out(corpus: list[str]) -> list[str]:
    return corpus[-2000:]


@pytest.fixture(scope="module")
def model(corpus: list[str]) -> subwords.Tokenizer:
    return subwords.train(corpus[:-2000], vocab_size=4000, preset="superbpe", threads=2)


def test_the_model_has_superwords(model: subwords.Tokenizer) -> None:
    # the test below means something only if pieces cross spaces
    crossing = [p for p in model.rows[256:] if "Ġ" in p.lstrip("Ġ").rstrip("Ġ")]
    assert len(crossing) > 100


def test_tokenizers_loads_the_export_with_the_same_ids(model: subwords.Tokenizer, held_out: list[str],
                                                       tmp_path: Path) -> None:
    import tokenizers

    path = tmp_path / "tokenizer.json"
    export(model, path, "hf")
    hf = tokenizers.Tokenizer.from_file(str(path))
    assert len(held_out) == 2000
    for line in held_out:
        assert hf.encode(line).ids == model.encode(line), line
    doc = json.loads(path.read_text(encoding="utf-8"))
    assert doc["model"]["type"] == "BPE" and len(doc["model"]["merges"]) == len(model.merges)


def test_transformers_loads_the_export_with_the_same_ids(model: subwords.Tokenizer, held_out: list[str],
                                                         tmp_path: Path) -> None:
    import transformers  # in the test extra: a missing install fails, it is never skipped
    export(model, tmp_path / "tokenizer.json", "hf")
    tf = transformers.PreTrainedTokenizerFast(tokenizer_file=str(tmp_path / "tokenizer.json"))
    ids = tf(list(held_out), add_special_tokens=False)["input_ids"]
    assert ids == [model.encode(line) for line in held_out]
    assert tf.decode(ids[0]) == held_out[0]


def test_tiktoken_refuses_with_the_reason(model: subwords.Tokenizer, tmp_path: Path) -> None:
    # a rank file holds no pre-split: tiktoken would cut by another expression than the spans
    with pytest.raises(InputError, match=r"'tiktoken' file cannot express pattern=.*cut text differently"):
        export(model, tmp_path / "model.tiktoken", "tiktoken")
    assert not (tmp_path / "model.tiktoken").exists()


def test_extend_keeps_every_merge_and_id(model: subwords.Tokenizer, corpus: list[str]) -> None:
    from subwords._extend import extend

    ext = extend(model, corpus[:3000], vocab_size=4100)
    new = ext.tokenizer
    assert new.merges[:len(model.merges)] == model.merges
    assert new.rows[:len(model.rows)] == model.rows
    assert len(new.rows) > len(model.rows)
    # the model's limit of four words a piece holds for the new merges too
    for row in new.rows[len(model.rows):]:
        assert len(new.decode_bytes([new.piece_to_id(row)]).split()) <= 4


def test_same_bytes_on_one_and_two_threads_shuffled(corpus: list[str]) -> None:
    texts = corpus[:6000]
    shuffled = texts[:]
    random.Random(7).shuffle(shuffled)
    one = subwords.train(texts, vocab_size=1500, preset="superbpe", threads=1)
    two = subwords.train(shuffled, vocab_size=1500, preset="superbpe", threads=2)
    assert one.to_json() == two.to_json()
    assert one.report["stage_one_merges"] == 1200 - 256


def test_cli_preset_and_explicit_override(tmp_path: Path) -> None:
    src = tmp_path / "in.txt"
    src.write_text("of the way by the way\n" * 20 + "in the end of the day\n" * 20, encoding="utf-8")
    out = tmp_path / "m.json"
    cmd = [sys.executable, "-m", "subwords", "train", str(src), "-o", str(out), "--vocab-size", "300",
           "--preset", "superbpe", "--superword-at", "270", "--superword-words", "2"]
    r = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT)
    assert r.returncode == 0, r.stderr
    tok = subwords.load(out)
    assert tok.report["stage_one_merges"] <= 270 - 256
    assert tok.options["superword_at"] == 270 and tok.options["superword_words"] == 2
    assert tok.options["superword_pattern"] == "superbpe" and tok.options["pattern"] == "o200k"
    assert all(len(tok.decode_bytes([i]).split()) <= 2 for i in range(256, len(tok.rows)))
    assert any(len(tok.decode_bytes([i]).split()) == 2 for i in range(256, len(tok.rows)))
