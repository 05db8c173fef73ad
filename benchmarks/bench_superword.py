#!/usr/bin/env python3
"""SuperBPE against plain byte-level BPE on the same pre-split, side by side, in one run.

    python benchmarks/bench_superword.py                         # large corpus (first 100 MB), 32k rows
    python benchmarks/bench_superword.py --corpus english --vocab 8000
    python benchmarks/bench_superword.py --limit-mb 20 --at 0.7,0.8,0.9
    python benchmarks/bench_superword.py --boundless             # with BoundlessBPE

Build the corpora first: ``python benchmarks/corpora.py``.

Each training runs in a fresh child process (``bench_superword.py _worker ...``), so its peak
resident set size (``ru_maxrss`` from ``os.wait4``) and its CPU seconds (user + system) are its
own; wall time is measured in the child around ``subwords.train`` only. The corpus is read from
a file (the first ``--limit-mb`` megabytes, cut at a line end).

Rows:
  plain     subwords.train(path, vocab_size=V, preset="o200k")       byte-level BPE, o200k pre-split
  superbpe  subwords.train(path, vocab_size=V, preset="superbpe", superword_at=round(a x V))
            (o200k in stage one, the paper's spans in stage two, at most four words a piece)
  boundless with --boundless: subwords.train(path, vocab_size=V, preset="boundless")
            (BoundlessBPE: o200k pretokens, superwords of two whole letter pretokens, deletion
            threshold 0.9), the Rust learner on the units and the span runs; with --pairs
            also count_on="pairs" (each adjacent pair a span: a smaller table)
  reference with --reference: BoundlessBPE by the pure-Python reference
            (subwords.reference.boundless, each line a text, the same rules); it recounts every
            pair at every step, so keep --limit-mb to about 1 and --vocab to a few thousand. Its
            held-out tokens come from the reference's encoder; its time is the reference's.

Tokens per byte are counted on ``heldout.txt`` (documents removed from every other corpus), as a
whole and on its lines split into three kinds by a simple rule: code (a line that starts with
whitespace or holds one of ``= ( ) { } ; :`` followed by a line end or ``#``), non-English (a
line with a character above U+007F), English (the rest). Ratios are superbpe / plain.

SuperBPE's own release (a fork of tokenizers) is not on PyPI and its source is on GitHub, which
this machine cannot reach, so it is not run here; the paper's figures are quoted beside ours in
benchmarks/README.md.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
CORPORA = HERE / "corpora"
OUT = HERE / "out"
CODE = re.compile(r"^\s|[=(){};]|:$|#")


def worker(args: list[str]) -> None:
    path, vocab, kind, at = args[0], int(args[1]), args[2], float(args[3])
    import subwords

    held = [l for l in (CORPORA / "heldout.txt").read_text(encoding="utf-8").split("\n") if l.strip()]
    kinds = {"all": held, "english": [], "multilingual": [], "code": []}
    for line in held:
        key = "code" if CODE.search(line) else "multilingual" if any(ord(c) > 127 for c in line) else "english"
        kinds[key].append(line)
    if kind == "reference":
        from subwords.reference import boundless

        t0 = time.perf_counter()
        texts = [l for l in Path(path).read_text(encoding="utf-8").split("\n") if l]
        model = boundless.train(texts, vocab)
        dt = time.perf_counter() - t0
        cache: dict = {}
        count = lambda lines: sum(len(boundless.encode(l, model, cache=cache)) for l in lines)
        events = model["events"]
        extra = {"rows": len(model["rows"]), "stop": model["stop"],
                 "supermerges": sum(e[0] == "super" for e in events),
                 "deletions": sum(e[0] == "delete" for e in events)}
    else:
        kw = {"plain": dict(preset="o200k"), "boundless": dict(preset="boundless"),
              "boundless-pairs": dict(preset="boundless", count_on="pairs")}.get(
            kind, dict(preset="superbpe", superword_at=round(at * vocab)))
        t0 = time.perf_counter()
        tok = subwords.train(Path(path), vocab_size=vocab, threads=2, **kw)
        dt = time.perf_counter() - t0
        count = lambda lines: sum(len(ids) for ids in tok.encode_batch(lines))
        extra = {"rows": tok.vocab_size, "stage_one": (tok.report or {}).get("stage_one_merges")}
        if kind.startswith("boundless"):
            events = json.loads(tok.to_json())["boundless_events"]
            extra.update(stop=(tok.report or {}).get("stop"), supermerges=sum(e[0] == "=" for e in events),
                         deletions=sum(e[0] == "-" for e in events))
    tpb = {}
    for k, lines in kinds.items():
        tpb[k] = count(lines) / max(1, sum(len(l.encode("utf-8")) for l in lines))
    print(json.dumps({"seconds": dt, "tokens_per_byte": tpb, **extra}))


def cut(src: Path, dst: Path, limit: int) -> None:
    """Writes the first ``limit`` bytes of ``src`` to ``dst``, cut at a line end, a block at a time.

    The parent never holds the corpus: a child started by ``subprocess`` reports in ``ru_maxrss``
    at least its parent's peak (the kernel carries it over at ``exec``), and reading 145 MB to cut
    100 MB from it made plain BPE's row read 248 MB where the training itself peaks near 143 MB.
    """
    with src.open("rb") as f, dst.open("wb") as out:
        left = limit
        while left > 0:
            block = f.read(min(left, 8 << 20))
            if not block:
                break
            out.write(block)
            left -= len(block)
    with dst.open("r+b") as out:
        end = out.seek(0, 2)
        while end > 0:
            start = max(0, end - (1 << 20))
            out.seek(start)
            at = out.read(end - start).rfind(b"\n")
            if at >= 0:
                out.truncate(start + at + 1)
                return
            end = start
        out.truncate(0)


def run(path: Path, vocab: int, kind: str, at: float) -> dict:
    cmd = [sys.executable, __file__, "_worker", str(path), str(vocab), kind, str(at)]
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True)
    out = p.stdout.read() if p.stdout else ""
    _, status, usage = os.wait4(p.pid, 0)
    if status != 0:
        raise SystemExit(f"{kind} failed (status {status})")
    r = json.loads(out.strip().splitlines()[-1])
    r["cpu"] = usage.ru_utime + usage.ru_stime
    r["peak_mb"] = usage.ru_maxrss / 1024
    return r


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "_worker":
        return worker(sys.argv[2:])
    ap = argparse.ArgumentParser()
    ap.add_argument("--corpus", default="large")
    ap.add_argument("--limit-mb", type=float, default=100)
    ap.add_argument("--vocab", type=int, default=32000)
    ap.add_argument("--at", default="0.8",
                    help="transition sizes as fractions of --vocab, comma-separated ('' for no SuperBPE row)")
    ap.add_argument("--boundless", action="store_true", help="add BoundlessBPE (preset='boundless')")
    ap.add_argument("--pairs", action="store_true", help="add BoundlessBPE with count_on='pairs'")
    ap.add_argument("--reference", action="store_true",
                    help="add BoundlessBPE by the pure-Python reference (small corpora only)")
    a = ap.parse_args()
    src = CORPORA / f"{a.corpus}.txt"
    OUT.mkdir(exist_ok=True)
    path = OUT / f"superword-{a.corpus}-{a.limit_mb:g}mb.txt"
    if not path.exists():
        cut(src, path, int(a.limit_mb * 1e6))
    size = path.stat().st_size / 1e6
    print(f"corpus {a.corpus}, {size:.1f} MB, vocab {a.vocab}, 2 threads")
    rows = [("plain", 0.0)] + [("superbpe", float(x)) for x in a.at.split(",") if x]
    if a.boundless:
        rows.append(("boundless", 0.0))
    if a.pairs:
        rows.append(("boundless-pairs", 0.0))
    if a.reference:
        rows.append(("reference", 0.0))
    res = {}
    for kind, at in rows:
        res[(kind, at)] = r = run(path, a.vocab, kind, at)
        label = f"superbpe t={at:g}" if kind == "superbpe" else kind
        tpb = r["tokens_per_byte"]
        print(f"{label:16} wall {r['seconds']:7.1f} s  cpu {r['cpu']:7.1f} s  peak {r['peak_mb']:7.0f} MB  "
              f"tokens/byte all {tpb['all']:.4f} en {tpb['english']:.4f} ml {tpb['multilingual']:.4f} "
              f"code {tpb['code']:.4f}"
              + (f"  supermerges {r['supermerges']} deletions {r['deletions']} rows {r['rows']} stop {r['stop']}"
                 if kind.startswith("boundless") or kind == "reference" else ""), flush=True)
    base = res[("plain", 0.0)]
    for (kind, at), r in res.items():
        if kind == "plain":
            continue
        ratio = {k: r["tokens_per_byte"][k] / base["tokens_per_byte"][k] for k in base["tokens_per_byte"]}
        label = f"superbpe t={at:g}" if kind == "superbpe" else kind
        print(f"{label} / plain: cpu {r['cpu'] / base['cpu']:.2f}x  peak {r['peak_mb'] / base['peak_mb']:.2f}x  "
              + "  ".join(f"tokens {k} {v:.3f}" for k, v in ratio.items()))


if __name__ == "__main__":
    main()
