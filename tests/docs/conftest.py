"""The files the guides' examples name, made once per run in a folder every example page copies.

Text comes from this Python's standard library (DESIGN §5: corpora from packages); OpenAI's rank
files from the crate that ships them byte for byte (tests/compat/openai_files.py); the other
libraries' files are trained here with those libraries.
"""

from __future__ import annotations

import gzip
import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "compat"))


def _lines() -> list[str]:
    from subwords.cli import stdlib_files

    text = "".join(p.read_text(encoding="utf-8", errors="replace") for p in stdlib_files()[:40])
    return [line for line in text.splitlines() if line.strip()]


@pytest.fixture(scope="session")
def guide_files(tmp_path_factory) -> Path:
    import openai_files
    import pyarrow as pa
    import pyarrow.parquet as pq
    import sentencepiece as spm
    import tokenizers
    import zstandard

    import subwords

    d = tmp_path_factory.mktemp("guide-files")
    lines = _lines()
    assert len(lines) > 7000, "the standard library gave too little text for the guides' corpus"

    def write(name: str, rows: list[str]) -> None:
        (d / name).parent.mkdir(parents=True, exist_ok=True)
        (d / name).write_text("\n".join(rows) + "\n", encoding="utf-8")

    write("corpus.txt", lines[:6000])
    write("text.txt", lines[6000:6200])
    write("held.txt", lines[6200:6600])
    # word<TAB>count; four.tsv is the BPE page's four words (low 5, lower 2, newest 6, widest 3)
    four = "low\t5\nlower\t2\nnewest\t6\nwidest\t3\n"
    (d / "table.tsv").write_text(four, encoding="utf-8")
    (d / "four.tsv").write_text(four, encoding="utf-8")
    for k in range(3):
        write(f"corpus/part{k}.txt", lines[k * 2000:(k + 1) * 2000])
        write(f"shards/part{k}.txt", lines[k * 2000:(k + 1) * 2000])
    records = [json.dumps({"meta": {"text": line, "body": line}, "text": line}) for line in lines[:3000]]
    for k in range(2):
        write(f"data/part{k}.txt", lines[k * 1000:(k + 1) * 1000])
        write(f"data/part{k}.jsonl", records[k * 1500:(k + 1) * 1500])
        with gzip.open(d / "data" / f"part{k}.txt.gz", "wt", encoding="utf-8") as f:
            f.write("\n".join(lines[k * 1000:(k + 1) * 1000]) + "\n")
    zipped = zstandard.ZstdCompressor().compress(("\n".join(records) + "\n").encode())
    (d / "data" / "deep").mkdir()
    (d / "data" / "deep" / "part.jsonl.zst").write_bytes(zipped)
    (d / "data.jsonl.zst").write_bytes(zipped)
    (d / "corpus.jsonl.zst").write_bytes(zipped)
    pq.write_table(pa.table({"content": lines[:2000]}), d / "train.parquet")

    # our models
    for name, size in (("a.json", 800), ("b.json", 1600)):
        subwords.train(d / "corpus.txt", vocab_size=size, spelling="front").save(d / name)
    # OpenAI's rank files, under their own names and one other
    for name in ("cl100k_base.tiktoken", "o200k_base.tiktoken"):
        (d / name).write_bytes(openai_files.data(name))
    (d / "ranks.tiktoken").write_bytes(openai_files.data("o200k_base.tiktoken"))
    # sentencepiece's .model
    spm.SentencePieceTrainer.train(input=str(d / "corpus.txt"), model_prefix=str(d / "tokenizer"),
                                   vocab_size=800, model_type="bpe", minloglevel=2)
    # a tokenizer.json (byte-level BPE with a BERT-style template), and the same as vocab.json + merges.txt
    hf = tokenizers.Tokenizer(tokenizers.models.BPE())
    hf.pre_tokenizer = tokenizers.pre_tokenizers.ByteLevel(add_prefix_space=False)
    hf.decoder = tokenizers.decoders.ByteLevel()
    trainer = tokenizers.trainers.BpeTrainer(vocab_size=1000, special_tokens=["[CLS]", "[SEP]"],
                                             initial_alphabet=tokenizers.pre_tokenizers.ByteLevel.alphabet())
    hf.train([str(d / "corpus.txt")], trainer)
    hf.post_processor = tokenizers.processors.TemplateProcessing(
        single="[CLS] $A [SEP]", pair="[CLS] $A [SEP] $B:1 [SEP]:1",
        special_tokens=[("[CLS]", hf.token_to_id("[CLS]")), ("[SEP]", hf.token_to_id("[SEP]"))])
    hf.save(str(d / "tokenizer.json"))
    from transformers import PreTrainedTokenizerFast

    PreTrainedTokenizerFast(tokenizer_file=str(d / "tokenizer.json"), cls_token="[CLS]", sep_token="[SEP]",
                            pad_token="[SEP]").save_pretrained(str(d / "model"))
    (d / "gpt2-folder").mkdir()
    hf.model.save(str(d / "gpt2-folder"))
    # the id arrays `subwords encode --output` writes (docs/HANDOFF.md)
    
    from subwords.cli import main

    assert main(["encode", "-m", str(d / "a.json"), str(d / "text.txt"), "--output", str(d / "train.npy")]) == 0
    return d
