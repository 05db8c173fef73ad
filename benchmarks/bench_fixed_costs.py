"""Where the time of one `subwords train` goes on a small corpus, next to the peers, in one run.

    python benchmarks/bench_fixed_costs.py --corpus PATH/english.txt [--repeat 5] [--only bpe,wordpiece]

At 7 MB a process's fixed costs count. Every measurement is a fresh child process, and
its CPU time (user + system, from `os.wait4`) is reported next to its wall time: on a machine
shared with other work the wall seconds swing with the load, the CPU seconds much less. The runs
of one table are interleaved (one of each, then again), and each cell is the median.

Rows:
* `python -c pass`: the interpreter alone;
* `import subwords.cli`, and `import subwords.cli` + the Rust extension (`subwords._core`);
* the whole CLI, `python -m subwords train CORPUS ... -o FILE --quiet`;
* phases timed inside one process with `time.process_time` (every thread's CPU time): imports,
  `subwords.count(path)` (reading and counting), `subwords.train(path)` (reading, counting, the
  alphabet and the merge loop; train minus count is the rest), `tok.save` (writing the model);
* the peer, in its own child: importing it, then its training call (sentencepiece for BPE with the
  settings of `bench_bpe.py`, tokenizers' WordPieceTrainer for WordPiece as in
  `bench_wordpiece.py`), and the whole child.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TASKS = {
    # name: (our train keywords, CLI flags, peer)
    "bpe": (dict(model="bpe", spelling="front"), ["--model", "bpe", "--spelling", "front"], "sentencepiece"),
    "wordpiece": (dict(model="wordpiece", pre_split="bert"), ["--model", "wordpiece", "--pre-split", "bert"],
                  "tokenizers"),
    "wordpiece-ws": (dict(model="wordpiece"), ["--model", "wordpiece"], "tokenizers-ws"),
}


def phases(task: str, corpus: str, vocab: int, threads: int, out: str) -> dict:
    """Runs in the child: our phases, each timed in CPU and wall seconds."""
    res = {}
    c0, w0 = time.process_time(), time.perf_counter()

    def mark(name: str) -> None:
        nonlocal c0, w0
        c1, w1 = time.process_time(), time.perf_counter()
        res[name] = (c1 - c0, w1 - w0)
        c0, w0 = c1, w1

    import subwords
    import subwords._core  # noqa: F401  (the extension is loaded lazily otherwise)
    mark("imports (subwords + _core)")
    kw, _, _ = TASKS[task]
    count_kw = {k: v for k, v in kw.items() if k != "model"}
    if kw["model"] == "wordpiece":
        count_kw.setdefault("spelling", "continuation")
    subwords.count(Path(corpus), threads=threads, **count_kw)
    mark("reading + counting (subwords.count)")
    tok = subwords.train(Path(corpus), vocab_size=vocab, threads=threads, **kw)
    mark("train(path): read, count, alphabet, merges")
    tok.save(out)
    mark("writing the model (save)")
    return res


def peer(name: str, corpus: str, vocab: int, threads: int, out: str) -> dict:
    res = {}
    c0, w0 = time.process_time(), time.perf_counter()
    if name == "sentencepiece":
        import sentencepiece as spm

        c1, w1 = time.process_time(), time.perf_counter()
        spm.SentencePieceTrainer.train(
            input=corpus, model_prefix=out, model_type="bpe", vocab_size=vocab,
            character_coverage=1.0, input_sentence_size=0, shuffle_input_sentence=False,
            num_threads=threads, max_sentence_length=65536,
            normalization_rule_name="identity", split_by_unicode_script=False,
            split_by_number=False, byte_fallback=False, minloglevel=2,
        )
    else:
        from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, trainers

        c1, w1 = time.process_time(), time.perf_counter()
        tok = Tokenizer(models.WordPiece(unk_token="[UNK]"))
        if name == "tokenizers-ws":
            tok.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
        else:
            tok.normalizer = normalizers.BertNormalizer(clean_text=False, handle_chinese_chars=True,
                                                        strip_accents=False, lowercase=False)
            tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
        trainer = trainers.WordPieceTrainer(vocab_size=vocab, special_tokens=["[UNK]"], show_progress=False)
        tok.train([corpus], trainer)
        tok.save(out)
    c2, w2 = time.process_time(), time.perf_counter()
    res[f"{name}: import"] = (c1 - c0, w1 - w0)
    res[f"{name}: training call"] = (c2 - c1, w2 - w1)
    return res


def run(argv: list[str], threads: int) -> tuple[float, float, str]:
    """One child: (wall, user + sys) and its stdout."""
    env = dict(os.environ, RAYON_NUM_THREADS=str(threads), TOKENIZERS_PARALLELISM="true")
    t0 = time.perf_counter()
    with tempfile.TemporaryFile() as f:
        p = subprocess.Popen(argv, stdout=f, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, env=env)
        _, status, ru = os.wait4(p.pid, 0)
        wall = time.perf_counter() - t0
        err = p.stderr.read().decode(errors="replace")
        p.stderr.close()
        f.seek(0)
        out = f.read().decode()
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{' '.join(argv)} failed:\n{err[-2000:]}")
    return wall, ru.ru_utime + ru.ru_stime, out


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "_child":
        kind, task, corpus, vocab, threads, out = sys.argv[2:8]
        fn = phases if kind == "ours" else peer
        print("@@" + json.dumps(fn(task, corpus, int(vocab), int(threads), out)))
        return
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", required=True, help="a .txt file (e.g. english.txt from benchmarks/corpora.py)")
    ap.add_argument("--vocab", type=int, default=32000)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--only", default="bpe,wordpiece", help="comma-separated: " + ",".join(TASKS))
    a = ap.parse_args()
    corpus = str(Path(a.corpus).resolve())
    if not Path(corpus).is_file():
        raise SystemExit(f"{a.corpus}: no such file (build it with benchmarks/corpora.py)")
    tasks = [t.strip() for t in a.only.split(",") if t.strip()]
    for t in tasks:
        if t not in TASKS:
            raise SystemExit(f"--only: unknown task {t!r}; choose from {', '.join(TASKS)}")
    py = sys.executable
    print(f"# fixed costs — {time.strftime('%Y-%m-%d %H:%M')}, {os.cpu_count()} cpus, load {os.getloadavg()}")
    print(f"corpus {Path(corpus).name} ({Path(corpus).stat().st_size / 1e6:.2f} MB), vocab {a.vocab}, "
          f"threads {a.threads}, median of {a.repeat}\n")
    with tempfile.TemporaryDirectory() as tmp:
        for task in tasks:
            _, flags, peer_name = TASKS[task]
            model = str(Path(tmp, f"{task}.json"))
            procs = {
                "python -c pass": [py, "-c", "pass"],
                "import subwords.cli": [py, "-c", "import subwords.cli"],
                "import subwords.cli + _core": [py, "-c", "import subwords.cli, subwords._core"],
                "subwords train (whole CLI process)": [py, "-m", "subwords", "train", corpus, *flags, "--vocab-size",
                                                       str(a.vocab), "--threads", str(a.threads), "-o", model,
                                                       "--quiet"],
                f"{peer_name} (whole child)": [py, __file__, "_child", "peer", peer_name, corpus, str(a.vocab),
                                               str(a.threads), str(Path(tmp, peer_name))],
                "ours, phases (whole child)": [py, __file__, "_child", "ours", task, corpus, str(a.vocab),
                                               str(a.threads), str(Path(tmp, f"{task}-phases.json"))],
            }
            got: dict[str, list[tuple[float, float]]] = {}
            for _ in range(a.repeat):
                for name, argv in procs.items():
                    wall, cpu, out = run(argv, a.threads)
                    got.setdefault(name, []).append((cpu, wall))
                    for line in out.splitlines():
                        if line.startswith("@@"):
                            for k, v in json.loads(line[2:]).items():
                                got.setdefault("  " + k, []).append(tuple(v))
            print(f"## {task}: {' '.join(flags)} (peer: {peer_name})\n")
            print("| what | cpu s (median) | wall s (median) | cpu s, every run |\n|---|---:|---:|---|")
            med = {}
            for name, runs in got.items():
                cpu = statistics.median(r[0] for r in runs)
                wall = statistics.median(r[1] for r in runs)
                med[name] = (cpu, wall)
                print(f"| {name} | {cpu:.3f} | {wall:.3f} | {', '.join(f'{r[0]:.2f}' for r in runs)} |")
            ours = med["subwords train (whole CLI process)"]
            theirs = med[f"{peer_name} (whole child)"]
            print(f"\nwhole process, {peer_name} / subwords: cpu {theirs[0] / ours[0]:.2f}×, wall {theirs[1] / ours[1]:.2f}×")
            ot = med.get("  train(path): read, count, alphabet, merges")
            pt = med.get(f"  {peer_name}: training call")
            if ot and pt:
                print(f"training call only, {peer_name} / subwords: cpu {pt[0] / ot[0]:.2f}×, wall {pt[1] / ot[1]:.2f}×")
            print(f"load now {os.getloadavg()}\n")


if __name__ == "__main__":
    main()
