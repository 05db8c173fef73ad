"""Picky BPE against plain BPE on the same corpus and size: training time (the ratio), tokens
per byte on held-out text, and the share of under-trained rows (used fewer than 5 times on the
held-out text): the paper's claim is fewer under-trained tokens at equal or better compression.

    python benchmarks/bench_picky.py [--corpora english,multilingual,code] [--sizes 8000,32000]
        [--threshold 0.9] [--mb 6]

Corpora from ``benchmarks/corpora.py`` (run it first); every tenth line is held out. Both models
use the front spelling (the paper's whitespace-marked words), min_count 2, the same threads.
Each training is timed in CPU seconds of the process, one thread, alternating plain and Picky in
one process, the best of ``--repeat``: the machine is shared, so only the ratio in one run means
anything.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
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


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--corpora", default="english,multilingual,code")
    ap.add_argument("--sizes", default="8000,32000")
    ap.add_argument("--threshold", type=float, default=0.9)
    ap.add_argument("--mb", type=float, default=6.0)
    ap.add_argument("--repeat", type=int, default=1)
    a = ap.parse_args()
    print("| corpus | rows | model | train s | ratio | held-out t/B | under-trained (<5 uses) | merges | removed |")
    print("|---|---|---|---|---|---|---|---|---|")
    for name in a.corpora.split(","):
        train, held = split(lines_of(name), a.mb)
        for size in (int(s) for s in a.sizes.split(",")):
            best = {}
            models = {}
            for _ in range(a.repeat):
                for label, extra in (("BPE", {}), (f"Picky {a.threshold}", {"picky": a.threshold})):
                    tok, s = timed(lambda: subwords.train(train, vocab_size=size, spelling="front", threads=1, **extra))
                    best[label] = min(best.get(label, s), s)
                    models[label] = tok
            base = best["BPE"]
            for label, tok in models.items():
                m = metrics(tok, held, rare_below=5)
                events = json.loads(tok.to_json()).get("picky_events", [])
                removed = sum(e[0] == "-" for e in events)
                print(f"| {name} | {tok.vocab_size:,} | {label} | {best[label]:.2f} | {best[label] / base:.2f} | "
                      f"{m.tokens_per_byte:.4f} | {m.under_trained:.3f} | {tok.report['merges_learned']:,} | "
                      f"{removed:,} |", flush=True)


if __name__ == "__main__":
    main()
