"""Count tables and Dask: counting throughput and scaling, and training from a large table.

    python benchmarks/bench_scale.py count [--corpus large]           # 1 vs 2 threads / workers
    python benchmarks/bench_scale.py table [--units 3000000] [--vocab 32000] [--seed 1] [--build NAME=DIR] [--table DIR]
    python benchmarks/bench_scale.py make-table --units N --seed S --out DIR   # the table alone
    python benchmarks/bench_scale.py text [--corpus large] [--vocab 32000] [--superword-at N] [--build NAME=DIR]

``count`` counts the corpus with ``subwords count`` (one process, 1 and 2 threads) and with
``subwords.dask.count`` on a LocalCluster of 1 and 2 worker processes, and prints MB/s and the
scaling efficiency (speed-up / workers). The cluster's start-up is timed apart from counting.

``table`` makes a synthetic Zipf table, reproducible from ``--seed``: ``--units`` distinct
lower-case words of 3 to 14 letters drawn with English letter frequencies, the k-th most
frequent counted ``ceil(10^7 / k)`` times. It writes the table as subwords' binary table and as
a ``word<TAB>count`` TSV, then trains BPE at ``--vocab`` from each in a child process (its own
peak RSS, from ``os.wait4``): subwords from the binary table, subwords from the TSV (the path
that parses the table in Python), and sentencepiece from the same TSV (``input_format="tsv"``).
Bytes per distinct unit are peak RSS over ``--units``, and (the merge engine's own share) peak RSS
minus the baseline (a child that only imports ``subwords.cli`` and its core) over ``--units``.

``text`` trains BPE ``front`` at ``--vocab`` from a corpus file through the CLI and reports the
same two numbers, the distinct units taken from the model's report. With ``--superword-at N`` it
trains two-stage BPE (stage one up to ``N`` rows), whose stage two reads the file again.

``--build NAME=DIR`` (repeatable) runs the same subwords commands a second time with another
build of the package first on ``PYTHONPATH`` (a folder holding a ``subwords`` package with its
compiled core), so a before/after pair is measured in one run; the models must be byte-identical.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
CORPORA = HERE / "corpora"
LETTERS = "etaoinshrdlcumwfgypbvkjxqz"
FREQ = [12.7, 9.1, 8.2, 7.5, 7.0, 6.7, 6.3, 6.1, 6.0, 4.3, 4.0, 2.8, 2.8, 2.4, 2.4, 2.2, 2.0, 2.0, 1.9, 1.5, 1.0,
        0.8, 0.15, 0.15, 0.10, 0.07]


def corpus_path(name: str) -> Path:
    p = Path(name)
    return p if p.suffix == ".txt" and p.exists() else CORPORA / f"{name}.txt"


def timed(cmd: list[str], env: dict[str, str] | None = None) -> tuple[float, float, str, float]:
    # os.wait4 on a child we start ourselves, so ru_maxrss is that child's own peak, and its CPU
    # seconds (user + system) are its own: the ratio that holds when the machine is loaded
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    _, status, usage = os.wait4(proc.pid, 0)
    secs = time.perf_counter() - start
    out = proc.stdout.read().decode() if proc.stdout else ""
    err = proc.stderr.read().decode() if proc.stderr else ""
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{' '.join(cmd[:5])} ...: failed: {err.strip()[-800:]}")
    return secs, usage.ru_maxrss / 1024, out, usage.ru_utime + usage.ru_stime


DASK_CHILD = """
import sys, time, json
import distributed, subwords.dask
if __name__ == "__main__":
    path, workers = sys.argv[1], int(sys.argv[2])
    t = time.perf_counter()
    cluster = distributed.LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, host="127.0.0.1",
                                       scheduler_port=0, dashboard_address=None, worker_dashboard_address=None)
    client = distributed.Client(cluster)
    up = time.perf_counter() - t
    t = time.perf_counter()
    table = subwords.dask.count([path], client=client, spelling="front", blocksize=16 << 20)
    secs = time.perf_counter() - t
    print(json.dumps({"startup": up, "seconds": secs, "units": len(table)}))
    client.close(); cluster.close()
"""


def bench_count(a: argparse.Namespace) -> None:
    corpus = corpus_path(a.corpus)
    mb = corpus.stat().st_size / 1e6
    print(f"# counting {corpus.name} ({mb:.1f} MB), front spelling — {time.strftime('%Y-%m-%d %H:%M')}, "
          f"{os.cpu_count()} cpus, load {os.getloadavg()}")
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        base = None
        for threads in (1, 2):
            out = Path(tmp, f"local{threads}.counts")
            secs, rss, _, _ = timed([sys.executable, "-m", "subwords", "count", str(corpus), "--spelling", "front",
                                  "--threads", str(threads), "-o", str(out), "--quiet"])
            base = base or secs
            rows.append((f"subwords count, {threads} thread(s)", secs, None, mb / secs, base / secs / threads, rss))
        script = Path(tmp, "dask_child.py")
        script.write_text(DASK_CHILD)
        dbase = None
        for workers in (1, 2):
            secs, rss, out, _ = timed([sys.executable, str(script), str(corpus), str(workers)])
            r = json.loads(out.strip().splitlines()[-1])
            dbase = dbase or r["seconds"]
            rows.append((f"subwords.dask.count, {workers} worker(s)", r["seconds"], r["startup"], mb / r["seconds"],
                         dbase / r["seconds"] / workers, rss))
        same = Path(tmp, "local1.counts").read_bytes() == Path(tmp, "local2.counts").read_bytes()
    print("\n| counter | counting s | cluster start s | MB/s | scaling efficiency | client peak MB |")
    print("|---|---:|---:|---:|---:|---:|")
    for name, secs, up, speed, eff, rss in rows:
        print(f"| {name} | {secs:.2f} | {'' if up is None else f'{up:.1f}'} | {speed:.1f} | {eff:.2f} | {rss:.0f} |")
    print(f"\nthe 1- and 2-thread tables are byte-identical: {same}; load at end {os.getloadavg()}")


def zipf_table(units: int, seed: int, folder: Path) -> tuple[Path, Path]:
    import subwords

    rnd = random.Random(seed)
    seen: set[str] = set()
    words: list[str] = []
    while len(words) < units:
        n = rnd.randint(3, 14)
        w = "".join(rnd.choices(LETTERS, weights=FREQ, k=n))
        if w not in seen:
            seen.add(w)
            words.append(w)
    del seen
    counts = {w: math.ceil(10**7 / (k + 1)) for k, w in enumerate(words)}
    del words
    table = subwords.count(counts, spelling="front")
    binary, tsv = folder / "zipf.counts", folder / "zipf.tsv"
    table.save(binary)
    with open(tsv, "w", encoding="utf-8") as f:
        for w, c in counts.items():
            f.write(f"{w}\t{c}\n")
    return binary, tsv


def zipf_table_fast(units: int, seed: int, folder: Path) -> tuple[Path, Path]:
    """The same kind of table as ``zipf_table`` (distinct words of 3 to 14 letters with English
    letter frequencies, in the order first drawn, the k-th counted ``ceil(10^7 / k)`` times),
    drawn with numpy's seeded generator in batches: a 20 M table in minutes rather than hours.
    The words differ from ``zipf_table``'s for the same seed (another generator)."""
    import numpy as np

    import subwords

    rng = np.random.default_rng(seed)
    weights = np.array(FREQ) / sum(FREQ)
    codes = np.frombuffer(LETTERS.encode(), dtype=np.uint8)
    rows = np.zeros((0, 14), dtype=np.uint8)
    while True:
        want = max(units - len(rows), 1 << 16) * 11 // 10
        parts = [rows]
        for start in range(0, want, 1 << 20):
            # in batches of a million words (the draws are int64 before they become letters)
            n = min(1 << 20, want - start)
            letters = codes[rng.choice(len(codes), size=(n, 14), p=weights)]
            lengths = rng.integers(3, 15, size=n)
            letters[np.arange(14)[None, :] >= lengths[:, None]] = 0
            parts.append(letters)
        rows = np.concatenate(parts)
        del parts
        # distinct words in the order first drawn
        _, first = np.unique(rows.view("S14").ravel(), return_index=True)
        rows = rows[np.sort(first)]
        if len(rows) >= units:
            rows = rows[:units]
            break
    words = [w.decode() for w in rows.view("S14").ravel().tolist()]
    del rows
    k = np.arange(1, units + 1, dtype=np.int64)
    counts = ((10**7 + k - 1) // k).tolist()
    table = subwords.count(dict(zip(words, counts)), spelling="front")
    binary, tsv = folder / "zipf.counts", folder / "zipf.tsv"
    table.save(binary)
    del table
    with open(tsv, "w", encoding="utf-8") as f:
        for i in range(0, units, 1 << 20):
            f.write("".join(f"{w}\t{c}\n" for w, c in zip(words[i:i + (1 << 20)], counts[i:i + (1 << 20)])))
    return binary, tsv


SP_CHILD = """
import sys, sentencepiece as spm
spm.SentencePieceTrainer.train(input=sys.argv[1], input_format="tsv", model_prefix=sys.argv[2], model_type="bpe",
    vocab_size=int(sys.argv[3]), character_coverage=1.0, normalization_rule_name="identity", num_threads=2,
    split_by_number=False, split_by_unicode_script=False, minloglevel=2, train_extremely_large_corpus=True)
"""


def builds(a: argparse.Namespace) -> list[tuple[str, dict[str, str] | None]]:
    """The subwords builds to run: this interpreter's, then each ``--build NAME=DIR``."""
    out: list[tuple[str, dict[str, str] | None]] = [("subwords", None)]
    for spec in a.build or ():
        name, sep, folder = spec.partition("=")
        if not sep or not Path(folder, "subwords", "__init__.py").is_file():
            raise SystemExit(f"--build {spec!r}: expected NAME=DIR with DIR/subwords/__init__.py (a built package)")
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join([str(Path(folder).resolve()), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
        out.append((f"subwords ({name})", env))
    return out


def baseline(env: dict[str, str] | None) -> float:
    """Peak RSS (MB) of a child that only starts Python and imports the CLI and the core."""
    return min(timed([sys.executable, "-c", "import subwords.cli, subwords._core"], env)[1] for _ in range(3))


def bench_text(a: argparse.Namespace) -> None:
    path = corpus_path(a.corpus)
    two = f", two-stage from {a.superword_at}" if a.superword_at else ""
    print(f"# BPE front at {a.vocab}{two} from {path.name} ({path.stat().st_size / 1e6:.1f} MB), 2 threads — "
          f"{time.strftime('%Y-%m-%d %H:%M')}, {os.cpu_count()} cpus, load {os.getloadavg()}")
    rows = []
    models = []
    with tempfile.TemporaryDirectory(dir=a.tmp) as tmp:
        for k, (name, env) in enumerate(builds(a)):
            out = Path(tmp, f"m{k}.json")
            base = baseline(env)
            secs, rss, _, _ = timed([sys.executable, "-m", "subwords", "train", str(path), "--spelling", "front",
                                  "--vocab-size", str(a.vocab), "--threads", "2", "-o", str(out), "--quiet",
                                  *(["--superword-at", str(a.superword_at)] if a.superword_at else [])], env)
            units = json.loads(out.read_text(encoding="utf-8"))["report"]["distinct_units"]
            rows.append((name, secs, rss, base, units))
            models.append(out.read_bytes())
    print("\n| build | wall s | peak MB | baseline MB | distinct units | B per unit | B per unit over baseline |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for name, secs, rss, base, units in rows:
        print(f"| {name} | {secs:.1f} | {rss:.0f} | {base:.0f} | {units:,} | {rss * 2**20 / units:.0f} | "
              f"{(rss - base) * 2**20 / units:.0f} |")
    print(f"\nevery build wrote the same model bytes: {len(set(models)) == 1}; load at end {os.getloadavg()}")


def bench_table(a: argparse.Namespace) -> None:
    print(f"# training from a synthetic Zipf table: {a.units:,} distinct units, seed {a.seed}, BPE at {a.vocab}, "
          f"front spelling — {time.strftime('%Y-%m-%d %H:%M')}, {os.cpu_count()} cpus, load {os.getloadavg()}")
    with tempfile.TemporaryDirectory(dir=a.tmp) as tmp:
        t = time.perf_counter()
        if a.table:
            # a table made before by `make-table` with the same --units and --seed (making a
            # 20 M table takes longer than training on it)
            binary, tsv = Path(a.table, "zipf.counts"), Path(a.table, "zipf.tsv")
            if not binary.is_file() or not tsv.is_file():
                raise SystemExit(f"--table {a.table}: expected zipf.counts and zipf.tsv from `make-table`")
        else:
            # made in a child: a child started from a parent that holds the table's words inherits
            # the parent's peak RSS in ru_maxrss, which would inflate every number below
            subprocess.run([sys.executable, __file__, "make-table", "--units", str(a.units), "--seed", str(a.seed),
                            "--out", tmp], check=True)
            binary, tsv = Path(tmp, "zipf.counts"), Path(tmp, "zipf.tsv")
            print(f"made the table in {time.perf_counter() - t:.1f} s", end=": ")
        print(f"binary {binary.stat().st_size / 1e6:.0f} MB, TSV {tsv.stat().st_size / 1e6:.0f} MB")
        runs: list[tuple[str, list[str], dict[str, str] | None]] = [
            ("subwords, binary table", [sys.executable, "-m", "subwords", "train", str(binary), "--counts", "--spelling",
                                        "front", "--vocab-size", str(a.vocab), "--threads", "2", "-o",
                                        str(Path(tmp, "a.json")), "--quiet"], None),
        ]
        if not a.no_tsv:
            runs.append(("subwords, TSV table", [sys.executable, "-m", "subwords", "train", str(tsv), "--counts",
                                                 "--spelling", "front", "--vocab-size", str(a.vocab), "--threads", "2",
                                                 "-o", str(Path(tmp, "b.json")), "--quiet"], None))
        extra = builds(a)[1:]
        for k, (name, env) in enumerate(extra):
            runs.append((f"{name}, binary table", [sys.executable, "-m", "subwords", "train", str(binary), "--counts",
                                                    "--spelling", "front", "--vocab-size", str(a.vocab), "--threads",
                                                    "2", "-o", str(Path(tmp, f"x{k}.json")), "--quiet"], env))
        if not a.no_sentencepiece:
            script = Path(tmp, "sp.py")
            script.write_text(SP_CHILD)
            runs.append(("sentencepiece, TSV (input_format=tsv)", [sys.executable, str(script), str(tsv),
                                                                   str(Path(tmp, "sp")), str(a.vocab)], None))
        base = {None: baseline(None)}
        for name, env in extra:
            base[name] = baseline(env)
        results = []
        for name, cmd, env in runs:
            secs, rss, _, cpu = timed(cmd, env)
            b = base.get(next((n for n, e in extra if e is env), None)) if env is not None else base[None]
            results.append((name, secs, cpu, rss, b if name.startswith("subwords") else None))
        first = Path(tmp, "a.json").read_bytes()
        others = [Path(tmp, f).read_bytes() for f in ["b.json"] * (not a.no_tsv) + [f"x{k}.json" for k in range(len(extra))]]
        same = all(o == first for o in others)
    ours = results[0]
    print("\n| trainer | wall s | time ÷ subwords (binary) | CPU s | CPU ÷ subwords (binary) | peak MB "
          "| bytes per distinct unit | over baseline |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for name, secs, cpu, rss, b in results:
        over = "" if b is None else f"{(rss - b) * 2**20 / a.units:.0f}"
        print(f"| {name} | {secs:.1f} | {secs / ours[1]:.2f}× | {cpu:.1f} | {cpu / ours[2]:.2f}× | {rss:.0f} "
              f"| {rss * 2**20 / a.units:.0f} | {over} |")
    print(f"\nbaseline (import only) MB: {base}")
    print(f"\nevery subwords run wrote the same model bytes: {same}; load at end {os.getloadavg()}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="what", required=True)
    c = sub.add_parser("count")
    c.add_argument("--corpus", default="large")
    t = sub.add_parser("table")
    t.add_argument("--units", type=int, default=3_000_000)
    t.add_argument("--vocab", type=int, default=32000)
    t.add_argument("--seed", type=int, default=1)
    t.add_argument("--tmp", default=None, help="folder for the generated tables (default: the system's)")
    t.add_argument("--no-sentencepiece", action="store_true")
    t.add_argument("--no-tsv", action="store_true", help="skip subwords' own TSV run (it parses the table in Python)")
    t.add_argument("--table", default=None, metavar="DIR",
                   help="train on DIR/zipf.counts and DIR/zipf.tsv, written before by make-table "
                        "with the same --units and --seed, instead of making the table")
    x = sub.add_parser("text")
    x.add_argument("--corpus", default="large", help="a corpus name under benchmarks/corpora, or a .txt path")
    x.add_argument("--vocab", type=int, default=32000)
    x.add_argument("--tmp", default=None)
    x.add_argument("--superword-at", type=int, default=None, help="train two-stage BPE, stage one up to this size")
    for q in (t, x):
        q.add_argument("--build", action="append", metavar="NAME=DIR",
                       help="also run another subwords build (DIR holds its subwords package); repeatable")
    m = sub.add_parser("make-table", help="(used by table) write zipf.counts and zipf.tsv into --out")
    m.add_argument("--units", type=int, required=True)
    m.add_argument("--seed", type=int, required=True)
    m.add_argument("--out", required=True)
    m.add_argument("--fast", action="store_true", help="draw the words with numpy (other words, same distribution)")
    a = ap.parse_args()
    if a.what == "make-table":
        if not Path(a.out).is_dir():  # say so before drawing millions of words, not after
            raise SystemExit(f"--out {a.out}: no such folder (make it first)")
        (zipf_table_fast if a.fast else zipf_table)(a.units, a.seed, Path(a.out))
        return
    {"count": bench_count, "table": bench_table, "text": bench_text}[a.what](a)


if __name__ == "__main__":
    main()
