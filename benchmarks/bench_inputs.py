"""Training inputs: what each format costs, against the plain text file that the engine reads itself.

    python benchmarks/bench_inputs.py [--corpus english|PATH.txt] [--mb 30] [--vocab 8000]

The same texts are written as .txt, .txt.gz, .txt.zst, .jsonl.zst, .parquet and .arrow (in a
temporary folder), then each runs in a child process twice: reading every text through
``subwords.inputs`` (MB/s of text), and training BPE (front spelling, two threads) from it. Each
child reports its wall time and peak RSS (``ru_maxrss`` from ``os.wait4``), so the memory column
shows what streaming costs: about one batch on top of the interpreter and pyarrow, whatever the
file's size. Columns are ratios to the .txt row, measured in the same run. Every trained model is
checked to be byte-identical to the .txt one. The default corpus, with no corpora built, is
this Python's standard library (its .py files, sorted, the first --mb megabytes of lines).
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from corpora import stdlib_lines

HERE = Path(__file__).resolve().parent
FORMATS = ["c.txt", "c.txt.gz", "c.txt.zst", "c.jsonl.zst", "c.parquet", "c.arrow"]
SAMPLED = ["c.txt", "c.jsonl.zst"]  # read again with sample=0.1 (the Python reader, then the draw per record)


def write_formats(lines: list[str], folder: Path) -> None:
    import pyarrow as pa
    import pyarrow.feather
    import pyarrow.parquet
    import zstandard

    plain = ("\n".join(lines) + "\n").encode("utf-8")
    (folder / "c.txt").write_bytes(plain)
    (folder / "c.txt.gz").write_bytes(gzip.compress(plain, compresslevel=6))
    (folder / "c.txt.zst").write_bytes(zstandard.ZstdCompressor(level=3).compress(plain))
    jsonl = "".join(json.dumps({"text": t}, ensure_ascii=False) + "\n" for t in lines).encode("utf-8")
    (folder / "c.jsonl.zst").write_bytes(zstandard.ZstdCompressor(level=3).compress(jsonl))
    table = pa.table({"text": lines})
    pyarrow.parquet.write_table(table, folder / "c.parquet")
    pyarrow.feather.write_feather(table, folder / "c.arrow")


def child(task: str, path: str, vocab: int, out: str) -> None:
    import subwords
    from subwords import inputs

    start = time.perf_counter()
    if task in ("read", "sample"):
        data = inputs.texts(path, **({"sample": 0.1, "seed": 1} if task == "sample" else {}))
        chars = sum(sum(map(len, b)) for b in data.batches())
        result = {"secs": time.perf_counter() - start, "chars": chars, "kept": data.kept}
    else:
        tok = subwords.train(Path(path), model="bpe", spelling="front", vocab_size=vocab, threads=2)
        result = {"secs": time.perf_counter() - start, "sha256": hashlib.sha256(tok.to_json().encode()).hexdigest()}
    Path(out).write_text(json.dumps(result), encoding="utf-8")


def run_child(args: list[str]) -> tuple[dict, float]:
    with tempfile.NamedTemporaryFile(suffix=".json", delete=False) as f:
        out = f.name
    proc = subprocess.Popen([sys.executable, __file__, "_child", *args, out])
    _, status, usage = os.wait4(proc.pid, 0)
    if status != 0:
        sys.exit(f"child {args} failed with status {status}")
    result = json.loads(Path(out).read_text(encoding="utf-8"))
    os.unlink(out)
    return result, usage.ru_maxrss / 1024  # KiB -> MiB on Linux


def prepare(corpus: str, mb: float, folder: str, out: str) -> None:
    """Writes every format into ``folder`` (in a child, so that the parent, whose memory every
    child starts from until it execs, stays small)."""
    if corpus:
        p = Path(corpus) if corpus.endswith(".txt") else HERE / "corpora" / f"{corpus}.txt"
        lines = p.read_text(encoding="utf-8").split("\n")
        if lines and lines[-1] == "":
            lines.pop()
        name = str(p)
    else:
        lines = stdlib_lines(mb)
        name = f"the standard library's .py files ({sys.version.split()[0]})"
    write_formats(lines, Path(folder))
    Path(out).write_text(json.dumps({"name": name, "lines": len(lines)}), encoding="utf-8")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--corpus", default="", help="english|multilingual|code|large or a .txt path (default: the stdlib)")
    ap.add_argument("--mb", type=float, default=30, help="the stdlib corpus's size, in MB of text")
    ap.add_argument("--vocab", type=int, default=8000)
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        info, _ = run_child(["_prepare", a.corpus, str(a.mb), tmp])
        _, idle_rss = run_child(["_idle", "", "0"])
        mb = (folder / "c.txt").stat().st_size / 1e6
        print(f"corpus: {info['name']}, {mb:.1f} MB, {info['lines']:,} lines; BPE front, vocab {a.vocab}, 2 threads; "
              f"an idle child with subwords and pyarrow imported peaks at {idle_rss:.0f} MB\n")
        print("| file | size MB | read s | read MB/s | read peak MB | train s | × train time | train peak MB | model = .txt's |")
        print("|---|---:|---:|---:|---:|---:|---:|---:|---|")
        base = None
        for f in FORMATS:
            path = str(folder / f)
            read, read_rss = run_child(["read", path, str(a.vocab)])
            train, train_rss = run_child(["train", path, str(a.vocab)])
            if base is None:
                base = train
            same = "yes" if train["sha256"] == base["sha256"] else "**NO**"
            print(f"| `{f}` | {os.path.getsize(path) / 1e6:.1f} | {read['secs']:.2f} | {mb / read['secs']:.0f} | "
                  f"{read_rss:.0f} | {train['secs']:.2f} | {train['secs'] / base['secs']:.2f} | {train_rss:.0f} | {same} |")
        print("\n| file, sample=0.1 | read s | read MB/s (of the whole file's text) | texts kept | read peak MB |")
        print("|---|---:|---:|---:|---:|")
        for f in SAMPLED:
            got, rss = run_child(["sample", str(folder / f), str(a.vocab)])
            print(f"| `{f}` | {got['secs']:.2f} | {mb / got['secs']:.0f} | {got['kept']:,} | {rss:.0f} |")


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "_child":
        task = sys.argv[2]
        if task == "_prepare":
            prepare(sys.argv[3], float(sys.argv[4]), sys.argv[5], sys.argv[6])
        elif task == "_idle":
            import pyarrow.parquet  # noqa: F401
            import subwords.inputs  # noqa: F401
            Path(sys.argv[-1]).write_text("{}", encoding="utf-8")
        else:
            child(task, sys.argv[3], int(sys.argv[4]), sys.argv[5])
    else:
        main()
