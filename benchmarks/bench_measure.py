#!/usr/bin/env python3
"""subwords.measure's two performance goals.

    python benchmarks/bench_measure.py                 # english.txt, 15 sizes 1000..15000, 3 repeats
    python benchmarks/bench_measure.py --corpus-dir DIR --repeat 5

Build the corpora first: ``python benchmarks/corpora.py --only english,heldout``.

1. **Size curve.** ``measure.curve(english.txt, 15 sizes)`` (BPE, the default ``end`` spelling)
   against one ``subwords.train(english.txt, vocab_size=<largest>)``. Goal: the curve costs at
   most 1.5x the training. Also printed: the traced training alone (``ties=False``), the curve
   with held-out text (the first ~1 MB of ``heldout.txt``: one encoding per size), so the
   trace's own cost and the held-out's show.
2. **compare.** ``measure.metrics`` (what ``subwords compare`` runs per model) against plain
   ``encode_batch`` of the same texts with the same tokenizer (a 15000-row model trained above),
   on ``heldout.txt``. Goal: less than 10% more. ``metrics`` also decodes every text (the round
   trip check) and counts the pieces.

Timings are wall clock, best of ``--repeat``, in this one process, alternating the contenders
so that a busy machine slows both alike.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from corpora import best

HERE = Path(__file__).resolve().parent


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--corpus-dir", default=str(HERE / "corpora"))
    ap.add_argument("--heldout", default=None, help="held-out text (default: CORPUS_DIR/heldout.txt)")
    ap.add_argument("--sizes", default="1000-15000:1000")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--threads", type=int, default=2)
    a = ap.parse_args()

    import subwords
    from subwords import measure
    from subwords.measure.curve import heldout_texts

    corpus = Path(a.corpus_dir) / "english.txt"
    heldout = Path(a.heldout) if a.heldout else Path(a.corpus_dir) / "heldout.txt"
    for p in (corpus, heldout):
        if not p.exists():
            raise SystemExit(f"{p} is missing: run python benchmarks/corpora.py --only english,heldout "
                             "(or give --heldout FILE)")
    sizes = measure.parse_sizes(a.sizes)
    top = max(sizes)
    th = a.threads
    print(f"corpus {corpus.name} ({corpus.stat().st_size / 1e6:.1f} MB), {len(sizes)} sizes {min(sizes)}..{top}, "
          f"threads {th}, best of {a.repeat}")

    times: dict[str, list[float]] = {k: [] for k in ("train", "traced", "curve", "curve+heldout")}
    held = heldout_texts(heldout)
    # the curve's held-out text: its first ~1 MB (heldout.txt's size), encoded once per size
    cut, acc = [], 0
    for t in held:
        cut.append(t)
        acc += len(t.encode("utf-8")) + 1
        if acc >= 1_000_000:
            break
    for _ in range(a.repeat):
        for name, fn in (
            ("train", lambda: subwords.train(corpus, vocab_size=top, threads=th)),
            ("traced", lambda: measure.trace(corpus, ties=False, vocab_size=top, threads=th)),
            ("curve", lambda: measure.curve(corpus, sizes, threads=th)),
            ("curve+heldout", lambda: measure.curve(corpus, sizes, heldout=cut, threads=th)),
        ):
            t = time.perf_counter()
            fn()
            times[name].append(time.perf_counter() - t)
    b = {k: min(v) for k, v in times.items()}
    print("\n## 1. size curve")
    print("| run | seconds | / train |")
    print("| --- | ---: | ---: |")
    for k in ("train", "traced", "curve", "curve+heldout"):
        print(f"| {k} | {b[k]:.2f} | {b[k] / b['train']:.2f}x |")
    print(f"goal: curve <= 1.5x train: {'met' if b['curve'] <= 1.5 * b['train'] else 'NOT met'}")

    tok = subwords.train(corpus, vocab_size=top, threads=th)
    texts = held
    nbytes = sum(len(t.encode("utf-8")) for t in texts)
    plain, full = [], []
    for _ in range(a.repeat):
        t = time.perf_counter()
        tok.encode_batch(texts, threads=th)
        plain.append(time.perf_counter() - t)
        t = time.perf_counter()
        measure.metrics(tok, texts, threads=th)
        full.append(time.perf_counter() - t)
    p, f = min(plain), min(full)
    print("\n## 2. compare (metrics of one model) against plain batch encoding")
    print(f"texts: {heldout.name}, {len(texts):,} lines, {nbytes / 1e6:.2f} MB; model: {top} rows")
    print("| run | seconds | MB/s |")
    print("| --- | ---: | ---: |")
    print(f"| encode_batch | {p:.3f} | {nbytes / 1e6 / p:.1f} |")
    print(f"| metrics | {f:.3f} | {nbytes / 1e6 / f:.1f} |")
    print(f"overhead: {100 * (f / p - 1):.1f}% (goal < 10%: {'met' if f < 1.10 * p else 'NOT met'})")


if __name__ == "__main__":
    main()
