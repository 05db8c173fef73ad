"""Pre-splits and normalization: what each costs on encode.

    python benchmarks/bench_pre_split.py [--mb 5] [--vocab 4000]

One byte-level BPE model is trained per pre-split on the first --mb megabytes of this Python's
standard library (its .py files, sorted): GPT-2's hand-written scanner (``pre_split="gpt2"``),
the same expression run by fancy-regex (``pre_split=<gpt2's expression>``), and cl100k, o200k
(their scanners, ``spelling/openai.rs``). Then end-spelling models with and without ``normalize="nfkc"``. Each row is the
best of three ``encode_batch`` passes over the corpus (one thread), in MB/s of UTF-8 text.
"""

from __future__ import annotations

import argparse
import sysconfig
import time
from pathlib import Path

import subwords

GPT2_EXPRESSION = r"'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"


def stdlib_lines(mb: float) -> list[str]:
    out: list[str] = []
    size = 0
    for p in sorted(Path(sysconfig.get_paths()["stdlib"]).rglob("*.py")):
        if "site-packages" in p.parts:
            continue
        for line in p.read_text(encoding="utf-8", errors="replace").splitlines():
            if line.strip():
                out.append(line)
                size += len(line.encode())
                if size >= mb * 1e6:
                    return out
    return out


def best_mbps(tok, texts: list[str]) -> float:
    size = sum(len(t.encode()) for t in texts) / 1e6
    times = []
    for _ in range(3):
        t0 = time.perf_counter()
        tok.encode_batch(texts, threads=1)
        times.append(time.perf_counter() - t0)
    return size / min(times)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--mb", type=float, default=5)
    ap.add_argument("--vocab", type=int, default=4000)
    a = ap.parse_args()
    texts = stdlib_lines(a.mb)
    rows = [("bytes, gpt2 (scanner)", dict(spelling="bytes", pre_split="gpt2")),
            ("bytes, gpt2 (fancy-regex)", dict(spelling="bytes", pre_split=GPT2_EXPRESSION)),
            ("bytes, cl100k (scanner)", dict(spelling="bytes", pre_split="cl100k")),
            ("bytes, o200k (scanner)", dict(spelling="bytes", pre_split="o200k")),
            ("end", dict(spelling="end")),
            ("end, normalize=nfkc", dict(spelling="end", normalize="nfkc"))]
    print(f"{len(texts)} lines, {sum(len(t.encode()) for t in texts) / 1e6:.1f} MB")
    for name, kw in rows:
        tok = subwords.train(texts, vocab_size=a.vocab, threads=1, **kw)
        print(f"{name:30s} {best_mbps(tok, texts):7.1f} MB/s")


if __name__ == "__main__":
    main()
