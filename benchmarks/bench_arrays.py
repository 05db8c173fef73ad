"""Id arrays against lists: ``encode_array`` / ``encode_batch(..., as_numpy=True)`` (one flat
buffer filled in the core, wrapped by numpy) against plain ``encode_batch`` (a list of Python
ints per text), on one and two threads, and ``subwords encode --output``'s writer.

    python benchmarks/bench_arrays.py [--corpus PATH.txt] [--mb 20] [--vocab 8000] [--repeat 3]

The corpus is a text file, one text per line (default: this Python's standard library, its .py
files sorted, the first --mb megabytes of lines; or pass a built corpus such as
corpora/multilingual.txt). A BPE model (front spelling) and a Unigram model are trained on the
first fifth; every method then encodes all the lines in batches of 8192, the best of --repeat
runs is kept, and the table gives MB/s of text and each method's ratio to ``encode_batch`` at
the same thread count, measured in the same run. Each array is checked to hold encode_batch's ids.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

import subwords
from subwords import _arrays

from corpora import best, stdlib_lines

BATCH = 8192


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpus", type=Path, default=None)
    ap.add_argument("--mb", type=float, default=20.0)
    ap.add_argument("--vocab", type=int, default=8000)
    ap.add_argument("--repeat", type=int, default=3)
    a = ap.parse_args()
    if a.corpus is not None:
        lines = a.corpus.read_text(encoding="utf-8").split("\n")
        name = a.corpus.name
    else:
        lines = stdlib_lines(a.mb)
        name = "the standard library's .py files"
    mb = sum(len(t.encode("utf-8")) + 1 for t in lines) / 1e6
    batches = [lines[i:i + BATCH] for i in range(0, len(lines), BATCH)]
    print(f"corpus: {name}, {mb:.1f} MB, {len(lines):,} lines; batches of {BATCH}; best of {a.repeat}; "
          f"{os.cpu_count()} cores", file=sys.stderr)
    models = {
        "bpe front": subwords.train(lines[: len(lines) // 5], model="bpe", spelling="front", vocab_size=a.vocab),
        "unigram front": subwords.train(lines[: len(lines) // 5], model="unigram", spelling="front", vocab_size=a.vocab),
    }
    print("| model | threads | method | s | MB/s | × encode_batch |")
    print("|---|---:|---|---:|---:|---:|")
    for label, tok in models.items():
        for threads in (1, 2):
            want = [ids for b in batches for ids in tok.encode_batch(b, threads=threads)]
            got = [ids for b in batches for ids in tok.encode_array(b, threads=threads).tolist()]
            assert got == want, "encode_array differs from encode_batch"
            methods = {
                "encode_batch (lists)": lambda: [tok.encode_batch(b, threads=threads) for b in batches],
                "as_numpy=True (uint32)": lambda: [tok.encode_batch(b, threads=threads, as_numpy=True) for b in batches],
                "encode_array uint16": lambda: [tok.encode_array(b, threads=threads, dtype="uint16") for b in batches],
            }
            base = None
            for m, f in methods.items():
                s = best(f, a.repeat)
                base = base or s
                print(f"| {label} | {threads} | {m} | {s:.2f} | {mb / s:.1f} | {base / s:.2f} |", flush=True)
            with tempfile.TemporaryDirectory() as tmp:
                out = os.path.join(tmp, "d.npy")

                def write() -> None:
                    bufs = (tok.encode_buffers(b, threads=threads, width=2) for b in batches)
                    _arrays.write_dataset(out, bufs, 2)

                s = best(write, a.repeat)
                print(f"| {label} | {threads} | dataset file (.npy, uint16) | {s:.2f} | {mb / s:.1f} | {base / s:.2f} |",
                      flush=True)


if __name__ == "__main__":
    main()
