"""transformers' ``PreTrainedTokenizerFast.__call__`` stock against the same tokenizer with
``subwords.compat.transformers`` installed.

    python benchmarks/bench_compat_transformers.py [--corpus english|multilingual|path.txt] [--repeat 3]

Three tokenizers are trained with ``tokenizers`` on a tenth of the corpus (a BERT-like WordPiece,
a RoBERTa-like byte-level BPE and a T5-like Unigram, as tests/compat does) and loaded as
``PreTrainedTokenizerFast``. Timed: ``tok(batch, ...)`` over the corpus's lines in batches of
``--batch`` (default 256), for

* ``ids``: ``tok(batch)`` (ids, attention mask and, for BERT, token type ids);
* ``offsets``: ``tok(batch, return_offsets_mapping=True)``;
* ``padded``: ``tok(batch, padding=True, truncation=True, max_length=128, return_offsets_mapping=True)``.

The two run in one process, alternating call by call (a busy machine slows both alike); each
figure is the best of ``--repeat`` rounds, and the outputs of both are checked identical.
Printed: lines/s of each in wall time and the ratio (stock time / installed time; above 1 the
backend is faster), then the ratio of the process's CPU time (``time.process_time``: every
thread's, so stock's ``tokenizers`` threads count too), which a busy machine moves less.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
CALLS = {
    "ids": {},
    "offsets": dict(return_offsets_mapping=True),
    "padded": dict(padding=True, truncation=True, max_length=128, return_offsets_mapping=True),
}


def _tokenizers(train: list[str]) -> dict:
    import tokenizers
    from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers, processors, trainers
    from transformers import PreTrainedTokenizerFast

    out = {}
    t = Tokenizer(models.WordPiece(unk_token="[UNK]"))
    t.normalizer = normalizers.BertNormalizer(lowercase=True)
    t.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    t.train_from_iterator(train, trainers.WordPieceTrainer(
        vocab_size=16000, special_tokens=["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]))
    t.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]", pair="[CLS] $A [SEP] $B:1 [SEP]:1",
        special_tokens=[("[CLS]", t.token_to_id("[CLS]")), ("[SEP]", t.token_to_id("[SEP]"))])
    t.decoder = decoders.WordPiece()
    out["wordpiece"] = PreTrainedTokenizerFast(tokenizer_object=t, unk_token="[UNK]", pad_token="[PAD]",
                                               cls_token="[CLS]", sep_token="[SEP]", mask_token="[MASK]")
    t = Tokenizer(models.BPE())
    t.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    t.train_from_iterator(train, trainers.BpeTrainer(
        vocab_size=16000, special_tokens=["<s>", "<pad>", "</s>", "<mask>"],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet()))
    t.post_processor = processors.RobertaProcessing(("</s>", t.token_to_id("</s>")), ("<s>", t.token_to_id("<s>")))
    t.decoder = decoders.ByteLevel()
    out["byte_bpe"] = PreTrainedTokenizerFast(tokenizer_object=t, bos_token="<s>", eos_token="</s>",
                                              pad_token="<pad>", mask_token="<mask>")
    t = Tokenizer(models.Unigram())
    t.normalizer = normalizers.Sequence([normalizers.NFKC(), normalizers.Replace(tokenizers.Regex(" {2,}"), " ")])
    t.pre_tokenizer = pre_tokenizers.Metaspace()
    t.train_from_iterator(train, trainers.UnigramTrainer(
        vocab_size=16000, special_tokens=["<pad>", "</s>", "<unk>"], unk_token="<unk>"))
    t.post_processor = processors.TemplateProcessing(single="$A </s>", pair="$A </s> $B:1 </s>:1",
                                                     special_tokens=[("</s>", t.token_to_id("</s>"))])
    t.decoder = decoders.Metaspace()
    out["unigram"] = PreTrainedTokenizerFast(tokenizer_object=t, eos_token="</s>", pad_token="<pad>",
                                             unk_token="<unk>")
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpus", default="english")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--batch", type=int, default=256)
    ap.add_argument("--max-lines", type=int, default=20000)
    args = ap.parse_args()
    sys.path.insert(0, str(HERE))
    from corpora import corpus_lines

    import subwords.compat.transformers as backend

    lines = corpus_lines(args.corpus)
    train = lines[::10]
    lines = lines[:args.max_lines]
    batches = [lines[i:i + args.batch] for i in range(0, len(lines), args.batch)]
    mb = sum(len(l.encode("utf-8")) for l in lines) / 1e6
    print(f"corpus {args.corpus}: {len(lines)} lines, {mb:.1f} MB, batches of {args.batch}")
    print(f"{'tokenizer':10} {'call':8} {'stock lines/s':>14} {'installed lines/s':>18} {'ratio':>7} {'CPU ratio':>10}")
    for name, tok in _tokenizers(train).items():
        for call, kw in CALLS.items():
            times: dict = {"stock": [], "installed": []}
            cpu: dict = {"stock": [], "installed": []}
            outs = {}
            for _ in range(args.repeat):
                for mode in ("stock", "installed"):
                    if mode == "installed":
                        backend.install()
                    t, c = time.perf_counter(), time.process_time()
                    got = [tok(b, **kw) for b in batches]
                    times[mode].append(time.perf_counter() - t)
                    cpu[mode].append(time.process_time() - c)
                    backend.uninstall()
                    outs[mode] = [dict(g) for g in got]
            if outs["stock"] != outs["installed"]:
                raise SystemExit(f"{name} {call}: the outputs differ")
            s, i = min(times["stock"]), min(times["installed"])
            cs, ci = min(cpu["stock"]), min(cpu["installed"])
            print(f"{name:10} {call:8} {len(lines) / s:14,.0f} {len(lines) / i:18,.0f} {s / i:6.2f}x {cs / ci:9.2f}x",
                  flush=True)


if __name__ == "__main__":
    main()
