"""The drop-in faces against the originals: the same calls on the same files and text.

tiktoken section: ``subwords.compat.tiktoken`` against the real ``tiktoken``, both through
``get_encoding(name)`` reading the same OpenAI rank file from a tiktoken cache folder (fetched
from the ``tiktoken-rs`` crate by ``tests/support/peers.py``), on each corpus of
``benchmarks/corpora`` (the first ``--mb`` megabytes, cut at a line end):

* ``encode`` per line: ``enc.encode(line)`` for every line, one thread, lines per second of
  process CPU time (the machine is shared: CPU time of a one-thread loop is what the library
  costs);
* ``encode_ordinary_batch``: ``enc.encode_ordinary_batch(lines)`` with tiktoken's default
  ``num_threads``, wall time.

Each library runs in its own process (so neither's import, allocator or threads touch the
other's), each repeat on an encoding newly loaded (untimed), because the face keeps the words it
merged from call to call and a second pass over the same lines would time a cache. Best of
``--repeat``. The children report a digest of every id, and the table says whether they agree.
Ratios are face / tiktoken speed.

    python benchmarks/bench_compat.py [--mb 2] [--repeat 3] [--encodings cl100k_base,o200k_base]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import tempfile
import time
from array import array
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "support"))
sys.path.insert(0, str(ROOT / "tests" / "compat"))


def corpus_lines(name: str, mb: float) -> list[str]:
    p = ROOT / "benchmarks" / "corpora" / f"{name}.txt"
    if not p.exists():
        raise SystemExit(f"no {p}: run python benchmarks/corpora.py first")
    with open(p, encoding="utf-8") as f:
        text = f.read(int(mb * 1e6))
    return [line for line in text[: text.rfind("\n") + 1].split("\n") if line]


def _digest(batches) -> str:
    h = hashlib.sha256()
    for ids in batches:
        h.update(array("I", ids).tobytes())
        h.update(b"|")
    return h.hexdigest()[:16]


def tiktoken_child(library: str, encoding: str, corpus: str, mb: float, repeat: int) -> dict:
    """Runs in the child: times one library's ``encode`` per line and ``encode_ordinary_batch``."""
    if library == "face":
        import subwords.compat.tiktoken as tt

        def fresh():
            tt._ENCODINGS.clear()
            return tt.get_encoding(encoding)
    else:
        import tiktoken as tt
        import tiktoken.registry

        def fresh():
            tiktoken.registry.ENCODINGS.clear()
            return tt.get_encoding(encoding)

    lines = corpus_lines(corpus, mb)
    per_line, batch, ids_line, ids_batch = [], [], None, None
    for _ in range(repeat):
        enc = fresh()
        enc.encode("warm up")  # lazy set-up of a new encoding, not the text's words
        t0 = time.process_time()
        ids_line = [enc.encode(line) for line in lines]
        per_line.append(time.process_time() - t0)
        enc = fresh()
        enc.encode("warm up")
        t0 = time.perf_counter()
        ids_batch = enc.encode_ordinary_batch(lines)
        batch.append(time.perf_counter() - t0)
    return {"lines": len(lines), "bytes": sum(len(x.encode("utf-8")) + 1 for x in lines),
            "per_line": min(per_line), "batch": min(batch),
            "ids_line": _digest(ids_line), "ids_batch": _digest(ids_batch)}


def tiktoken_section(args: argparse.Namespace) -> list[str]:
    import openai_files

    cache = openai_files.as_tiktoken_cache(Path(tempfile.mkdtemp(prefix="bench-compat-")) / "cache")
    env = {**os.environ, "TIKTOKEN_CACHE_DIR": str(cache)}
    env.pop("SUBWORDS_TIKTOKEN_DIR", None)
    rows = []
    for encoding in args.encodings.split(","):
        for corpus in args.corpora.split(","):
            got = {}
            for library in ("tiktoken", "face"):
                cmd = [sys.executable, __file__, "--child", library, "--encodings", encoding, "--corpora", corpus,
                       "--mb", str(args.mb), "--repeat", str(args.repeat)]
                r = subprocess.run(cmd, env=env, capture_output=True, text=True)
                if r.returncode != 0:
                    raise SystemExit(f"{library} child failed:\n{r.stderr[-3000:]}")
                got[library] = json.loads(r.stdout.strip().splitlines()[-1])
            t, f = got["tiktoken"], got["face"]
            same = t["ids_line"] == f["ids_line"] and t["ids_batch"] == f["ids_batch"]
            mb = t["bytes"] / 1e6
            row = (f"| {encoding} | {corpus} | {t['lines']} | {mb:.1f} | "
                   f"{t['lines'] / t['per_line']:,.0f} | {f['lines'] / f['per_line']:,.0f} | "
                   f"{t['per_line'] / f['per_line']:.2f}x | "
                   f"{mb / t['batch']:.1f} | {mb / f['batch']:.1f} | {t['batch'] / f['batch']:.2f}x | {same} |")
            print(row, flush=True)
            rows.append(row)
    head = ["| encoding | corpus | lines | MB | tiktoken encode lines/s | face encode lines/s | face/tiktoken | "
            "tiktoken batch MB/s | face batch MB/s | face/tiktoken | same ids |",
            "|---|---|---|---|---|---|---|---|---|---|---|"]
    return head + rows


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mb", type=float, default=2.0, help="megabytes of each corpus (default 2)")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--encodings", default="cl100k_base,o200k_base")
    ap.add_argument("--corpora", default="english,multilingual,code")
    ap.add_argument("--child", choices=["tiktoken", "face"], help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        print(json.dumps(tiktoken_child(args.child, args.encodings, args.corpora, args.mb, args.repeat)))
        return 0
    print("tiktoken: subwords.compat.tiktoken vs tiktoken "
          f"(encode per line: CPU time, one thread; encode_ordinary_batch: wall time, {os.cpu_count()} cores)")
    table = tiktoken_section(args)
    print("\n" + "\n".join(table))
    return 0


if __name__ == "__main__":
    sys.exit(main())
