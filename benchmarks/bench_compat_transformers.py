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

The two run in one process, alternating round by round (a busy machine slows both alike); a
round is ``--passes`` passes over the lines (default 3), every result kept, as a program that
tokenizes a data set keeps them; each figure is the best of ``--repeat`` rounds, and the outputs
of both are checked identical. Each round starts from a full garbage collection
(``gc.collect()``, untimed): without it a round inherits the collector's counts from the other
mode's round before it, and the full collections stock's counts set off (over every result the
process holds) land in the installed round after it. Between rounds each mode's results are kept
as their ``repr`` (a string, which the collector does not track), so a round and its collections
go over the process's own objects and that round's results only, as in a program that uses one
of the two: held as objects (``--hold-other``), stock's 30,000 rows of results made the full
collection timed after an installed round on the multilingual lines 0.16 s instead of 0.07 s
(30,000 rows of stock's results cost a full collection 0.085 s, ours 0.039 s, over the
process's own 0.032 s).

The backend pauses the collector inside each call, so a call sets off one young collection
after it (stock's about sixteen), and a full collection comes at most every 121 calls (CPython's
thresholds: 11 young collections make a middle one, 11 middle ones a full one). A round of three
passes over 10,000 lines (40 batches, 120 calls) never meets one; the last column charges each
installed call 1/121 of a full collection, timed after the round (the conservative figure).
Printed: lines/s of each in wall time and the ratio (stock time / installed time; above 1 the
backend is faster), then the ratio of the process's CPU time (``time.process_time``: every
thread's, so stock's ``tokenizers`` threads count too), which a busy machine moves less, and that
ratio with the installed share of full collections added, and the CPU time of one full
collection after an installed round (the least of the rounds).
"""

from __future__ import annotations

import argparse
import gc
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
CALLS = {
    "ids": {},
    "offsets": {"return_offsets_mapping": True},
    "padded": {"padding": True, "truncation": True, "max_length": 128, "return_offsets_mapping": True},
}


def _tokenizers(train: list[str]) -> dict:
    import tokenizers
    from tokenizers import (
        Tokenizer,
        decoders,
        models,
        normalizers,
        pre_tokenizers,
        processors,
        trainers,
    )
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
    ap.add_argument("--passes", type=int, default=3)
    ap.add_argument("--hold-other", action="store_true",
                    help="keep the other mode's results as objects through each round (the earlier protocol)")
    args = ap.parse_args()
    sys.path.insert(0, str(HERE))
    import subwords.compat.transformers as backend
    from corpora import corpus_lines

    lines = corpus_lines(args.corpus)
    train = lines[::10]
    lines = lines[:args.max_lines]
    batches = [lines[i:i + args.batch] for i in range(0, len(lines), args.batch)]
    mb = sum(len(l.encode("utf-8")) for l in lines) / 1e6
    print(f"corpus {args.corpus}: {len(lines)} lines, {mb:.1f} MB, batches of {args.batch}")
    print(f"{'tokenizer':10} {'call':8} {'stock lines/s':>14} {'installed lines/s':>18} {'ratio':>7} {'CPU ratio':>10}"
          f" {'with full GC':>13} {'full GC s':>10}")
    for name, tok in _tokenizers(train).items():
        for call, kw in CALLS.items():
            times: dict = {"stock": [], "installed": []}
            cpu: dict = {"stock": [], "installed": []}
            full = []  # CPU time of a full collection after an installed round
            outs = {}
            for _ in range(args.repeat):
                for mode in ("stock", "installed"):
                    if mode == "installed":
                        backend.install()
                    got = None
                    gc.collect()
                    t, c = time.perf_counter(), time.process_time()
                    got = [tok(b, **kw) for _ in range(args.passes) for b in batches]
                    times[mode].append(time.perf_counter() - t)
                    cpu[mode].append(time.process_time() - c)
                    if mode == "installed":
                        c = time.process_time()
                        gc.collect()
                        full.append(time.process_time() - c)
                    backend.uninstall()
                    # kept as text (which the collector does not track), so that the other
                    # mode's round and collection go over its own results only
                    kept = [dict(g) for g in got]
                    outs[mode] = kept if args.hold_other else repr(kept)
                    got = kept = None
            if outs["stock"] != outs["installed"]:
                raise SystemExit(f"{name} {call}: the outputs differ")
            s, i = min(times["stock"]), min(times["installed"])
            cs, ci = min(cpu["stock"]), min(cpu["installed"])
            n = len(lines) * args.passes
            charged = ci + min(full) * args.passes * len(batches) / 121
            print(f"{name:10} {call:8} {n / s:14,.0f} {n / i:18,.0f} {s / i:6.2f}x {cs / ci:9.2f}x"
                  f" {cs / charged:12.2f}x {min(full):10.3f}", flush=True)


if __name__ == "__main__":
    main()
