"""Scaffold-BPE against plain BPE on the same corpus and size: training time (the ratio), tokens
per byte on held-out text, and the frequency balance the paper claims: the share of rows the
held-out text uses fewer than 5 times (under-trained rows), the share it never uses, and the
held-out count of the row at the 10th percentile (rows sorted by how often the text uses them).

    python benchmarks/bench_scaffold.py [--corpora english,code] [--sizes 8000,32000] [--mb 6]
        [--repeat 3] [--threads 1]
    valgrind --tool=callgrind --callgrind-out-file=cg.scaffold \
        python benchmarks/bench_scaffold.py --corpora code --sizes 32000 --train-only scaffold

Corpora from ``benchmarks/corpora.py`` (run it first); every tenth line is held out. Both models
use the front spelling (the paper's whitespace-marked words), min_count 2, one thread by default.
Each training is timed in one process, alternating plain and Scaffold-BPE, the best of
``--repeat`` in CPU seconds of the process (the machine is shared: only the ratio in one run
means anything).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))

import subwords  # noqa: E402
from subwords.measure import metrics  # noqa: E402

from bench_methods import lines_of, split  # noqa: E402


def timed(f):
    t = time.process_time()
    out = f()
    return out, time.process_time() - t


def balance(tok, held: list[str]) -> tuple[float, int]:
    """(share of text rows never used on ``held``, the use count at the 10th percentile)."""
    uses: Counter[int] = Counter()
    for ids in tok.encode_batch(held):
        uses.update(ids)
    specials = set(tok.special_tokens.values())
    text_rows = [i for i in range(tok.vocab_size) if i not in specials]
    counts = sorted(uses.get(i, 0) for i in text_rows)
    never = sum(c == 0 for c in counts) / len(counts)
    return never, counts[len(counts) // 10]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--corpora", default="english,code")
    ap.add_argument("--sizes", default="8000,32000")
    ap.add_argument("--mb", type=float, default=6.0)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--train-only", choices=["bpe", "scaffold"], default=None,
                    help="train one model on the first corpus and size, once, and print nothing (for callgrind)")
    a = ap.parse_args()
    if a.train_only:
        train, _ = split(lines_of(a.corpora.split(",")[0]), a.mb)
        subwords.train(train, vocab_size=int(a.sizes.split(",")[0]), spelling="front", threads=a.threads,
                       scaffold=a.train_only == "scaffold")
        return
    print("| corpus | rows | model | train CPU s | × BPE | held-out t/B | under-trained (<5 uses) | never used "
          "| uses at p10 | merges | scaffold tokens |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for name in a.corpora.split(","):
        train, held = split(lines_of(name), a.mb)
        for size in (int(s) for s in a.sizes.split(",")):
            best: dict[str, float] = {}
            models = {}
            for _ in range(a.repeat):
                for label, extra in (("BPE", {}), ("Scaffold-BPE", {"scaffold": True})):
                    tok, s = timed(lambda: subwords.train(train, vocab_size=size, spelling="front",
                                                          threads=a.threads, **extra))
                    best[label] = min(best.get(label, s), s)
                    models[label] = tok
            base = best["BPE"]
            for label, tok in models.items():
                m = metrics(tok, held, rare_below=5)
                never, p10 = balance(tok, held)
                events = json.loads(tok.to_json()).get("scaffold_events", [])
                scaffold = sum(e[0] == "-" for e in events)
                print(f"| {name} | {tok.vocab_size:,} | {label} | {best[label]:.2f} | {best[label] / base:.2f} | "
                      f"{m.tokens_per_byte:.4f} | {m.under_trained:.3f} | {never:.3f} | {p10} | "
                      f"{tok.report['merges_learned']:,} | {scaffold:,} |", flush=True)


if __name__ == "__main__":
    main()
