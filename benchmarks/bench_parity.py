"""Parity-aware BPE against plain BPE and against tokenizers' ``ParityBpeTrainer``, on the
multilingual fortunes split by language.

    python benchmarks/bench_parity.py [--sizes 8000,32000] [--repeat 1] [--threads 2]

The per-language text is rebuilt from the same Debian packages ``corpora.py`` makes
``multilingual.txt`` from (``MULTILINGUAL_PACKAGES``, one package a language; the ``.deb`` files
are kept in ``benchmarks/corpora/debs``, the text only in memory). Every tenth fortune of each
language is held out. Every model is byte-level BPE on GPT-2's pre-split (tokenizers:
``ByteLevel``), ``min_count`` 2.

Measured, in one process (the machine is shared: only ratios within one run mean anything):

* training seconds: plain BPE (ours), parity-aware BPE (ours; the rule on tokens per byte, and
  on total training tokens, which is what ``ParityBpeTrainer`` does without a development set),
  and ``ParityBpeTrainer`` with the same languages and merges;
* on the held-out fortunes: each language's tokens per byte, their Gini coefficient and the
  largest over the smallest (``subwords.measure.metrics``), and fertility (pieces per
  whitespace word, all languages together).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))

import corpora  # noqa: E402
import subwords  # noqa: E402
from subwords.measure import metrics  # noqa: E402


def languages() -> dict[str, tuple[list[str], list[str]]]:
    """{language: (training lines, held-out lines)} of the multilingual fortunes."""
    cache = corpora.DEFAULT_OUT / "debs"
    cache.mkdir(parents=True, exist_ok=True)
    out = {}
    with tempfile.TemporaryDirectory(prefix="subwords-parity-") as tmp:
        pkgs = corpora.download_and_extract([p for p, _ in corpora.MULTILINGUAL_PACKAGES], Path(tmp), cache)
        stats: dict = {"skipped_not_utf8": []}
        for p, lang in corpora.MULTILINGUAL_PACKAGES:
            docs = corpora.fortune_docs(pkgs[p][1], stats)
            train = [l for k, d in enumerate(docs) if k % 10 != 9 for l in d.split("\n") if l.strip()]
            held = [l for k, d in enumerate(docs) if k % 10 == 9 for l in d.split("\n") if l.strip()]
            out[lang] = (train, held)
    return out


def timed(f):
    t = time.perf_counter()
    out = f()
    return out, time.perf_counter() - t


def hf_parity(per_lang: list[list[str]], size: int) -> None:
    from tokenizers import Tokenizer, models, pre_tokenizers
    from tokenizers.trainers import ParityBpeTrainer

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    trainer = ParityBpeTrainer(num_merges=size - 256, min_frequency=2, show_progress=False,
                               initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    trainer.train_from_iterator(tok, train_iterators=[iter(x) for x in per_lang])


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="8000,32000")
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--no-peer", action="store_true", help="leave tokenizers' ParityBpeTrainer out")
    a = ap.parse_args()
    langs = languages()
    names = list(langs)
    train_all = [l for n in names for l in langs[n][0]]
    held = [l for n in names for l in langs[n][1]]
    labels = [n for n in names for _ in langs[n][1]]
    mb = sum(len(l.encode()) + 1 for l in train_all) / 1e6
    print(f"{len(names)} languages, {mb:.1f} MB of training lines, {len(held)} held-out lines", file=sys.stderr)
    common = dict(spelling="bytes", pre_split="gpt2", min_count=2, threads=a.threads)
    runs = {
        "plain BPE": lambda size: subwords.train(train_all, vocab_size=size, **common),
        "parity, tokens per byte": lambda size: subwords.train(
            languages={n: langs[n][0] for n in names}, parity=True, vocab_size=size, **common),
        "parity, tokens": lambda size: subwords.train(
            languages={n: langs[n][0] for n in names}, parity=True, parity_measure="tokens", vocab_size=size, **common),
    }
    if not a.no_peer:
        runs["tokenizers ParityBpeTrainer"] = lambda size: hf_parity([langs[n][0] for n in names], size)
    print("| rows | model | train s | × plain BPE | held-out Gini (t/B) | max/min t/B | fertility (pieces/word) | vs plain |")
    print("|---|---|---|---|---|---|---|---|")
    for size in (int(s) for s in a.sizes.split(",")):
        best: dict[str, float] = {}
        models = {}
        for _ in range(a.repeat):
            for label, f in runs.items():
                tok, s = timed(lambda: f(size))
                best[label] = min(best.get(label, s), s)
                models[label] = tok
        base = best["plain BPE"]
        plain_fert = None
        for label, tok in models.items():
            if tok is None:
                print(f"| {size:,} | {label} | {best[label]:.2f} | {best[label] / base:.2f} | | | | |")
                continue
            m = metrics(tok, held, languages=labels)
            fert = m.pieces_per_word
            plain_fert = plain_fert or fert
            print(f"| {size:,} | {label} | {best[label]:.2f} | {best[label] / base:.2f} | {m.language_gini:.4f} | "
                  f"{m.language_parity_ratio:.3f} | {fert:.4f} | {100 * (fert / plain_fert - 1):+.1f}% |", flush=True)
        if "tokenizers ParityBpeTrainer" in best:
            ours = best["parity, tokens"]
            print(f"tokenizers ParityBpeTrainer / ours (tokens rule) at {size:,}: "
                  f"{best['tokenizers ParityBpeTrainer'] / ours:.2f}x", file=sys.stderr)
        per = metrics(models["plain BPE"], held, languages=labels).languages
        par = metrics(models["parity, tokens per byte"], held, languages=labels).languages
        print(f"per language at {size:,}, held-out tokens per byte (plain -> parity): " + ", ".join(
            f"{n} {per[n].tokens_per_byte:.3f}->{par[n].tokens_per_byte:.3f}" for n in names), file=sys.stderr)


if __name__ == "__main__":
    main()
