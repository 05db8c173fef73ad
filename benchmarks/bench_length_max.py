"""Length-MAX against plain BPE on the same corpus and size: training time (the ratio) and tokens
per byte on held-out text. The paper's claim: 14-18% fewer tokens than BPE at 10k-50k rows.

    python benchmarks/bench_length_max.py [--corpora english,multilingual,code] [--sizes 8000,32000]
        [--spelling front] [--mb 6] [--repeat 1]

Corpora from ``benchmarks/corpora.py`` (run it first); every tenth line is held out. Both models
use the same spelling (front by default: whitespace-marked words), min_count 2, the same threads.
Each training is timed in one process, alternating plain and Length-MAX, the best of
``--repeat``: the machine is shared, so only the ratio in one run means anything.

The paper encodes with its vocabulary by the fewest tokens (a dynamic programme), not by replaying
merges. The last column measures that too, for both vocabularies: the same rows as a Unigram
model whose pieces all have one log-probability, whose best path is then a path of fewest pieces.
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
    t = time.perf_counter()
    out = f()
    return out, time.perf_counter() - t


def fewest_pieces(tok):
    """The same rows, encoded by a path of fewest pieces (Unigram Viterbi, every piece one score)."""
    d = json.loads(tok.to_json())
    d.update(model="unigram", merges=[], report=None, options=None)
    d["log_probs"] = [None if kind == "special" else -1.0 for _, kind in d["rows"]]
    return subwords.SubwordsTokenizer.from_json(json.dumps(d, ensure_ascii=False))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--corpora", default="english,multilingual,code")
    ap.add_argument("--sizes", default="8000,32000")
    ap.add_argument("--spelling", default="front")
    ap.add_argument("--mb", type=float, default=6.0)
    ap.add_argument("--repeat", type=int, default=1)
    a = ap.parse_args()
    print("| corpus | rows | model | train s | × BPE | held-out tokens/byte | vs BPE | bytes/piece | "
          "fewest-pieces tokens/byte | vs BPE |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for name in a.corpora.split(","):
        train, held = split(lines_of(name), a.mb)
        held_bytes = sum(len(t.encode("utf-8")) for t in held)
        for size in (int(s) for s in a.sizes.split(",")):
            best: dict[str, float] = {}
            models = {}
            for _ in range(a.repeat):
                for label, extra in (("BPE", {}), ("Length-MAX", {"length_max": True})):
                    tok, s = timed(lambda: subwords.train(train, vocab_size=size, spelling=a.spelling, **extra))
                    best[label] = min(best.get(label, s), s)
                    models[label] = tok
            base_t = best["BPE"]
            base_tpb = None
            for label, tok in models.items():
                m = metrics(tok, held, rare_below=5)
                base_tpb = base_tpb or m.tokens_per_byte
                change = m.tokens_per_byte / base_tpb - 1
                pieces = m.tokens_per_byte * held_bytes
                dp = sum(map(len, fewest_pieces(tok).encode_batch(held))) / held_bytes
                print(f"| {name} | {tok.vocab_size:,} | {label} | {best[label]:.2f} | {best[label] / base_t:.2f} | "
                      f"{m.tokens_per_byte:.4f} | {change:+.1%} | {held_bytes / pieces:.2f} | {dp:.4f} | "
                      f"{dp / base_tpb - 1:+.1%} |", flush=True)


if __name__ == "__main__":
    main()
