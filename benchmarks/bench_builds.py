#!/usr/bin/env python3
"""Two builds of subwords side by side, with the peers, in one run: is a change "no slower"?

    python benchmarks/bench_builds.py --build before=PYTHON --build after=PYTHON \
        [--corpus english] [--vocab 32000] [--lines 30000] [--repeat 3] [--only TASK,...]

Each ``--build`` names an interpreter (a virtualenv's ``bin/python``) whose ``import subwords``
is the build to measure. The peers (sentencepiece, tokenizers, tiktoken: the ``test`` extra) run
in the interpreter that runs this script. To measure a change, ``before`` is the last commit
before it.

Every measurement is a fresh child process (``PYTHON bench_builds.py _task ...``) that loads its
input, then times one section with both the wall clock and the process CPU clock (every
thread's, ``time.process_time``). The builds and the peer alternate within each of ``--repeat``
passes, and each cell is the median. The table gives the seconds, then each build's ratio
against the peer (peer / build: above 1, the build is faster), then after / before on CPU time.

Tasks, on the corpus's first ``--lines`` lines for encoding and on the whole file for training:

* ``train-bpe-front``, ``train-unigram-front``: the training call at ``--vocab``, 2 threads,
  against sentencepiece's trainer (identity normalization, full character coverage, as in
  ``bench_bpe.py``/``bench_unigram.py``);
* ``train-wordpiece``: our WordPiece (``continuation``) against tokenizers' WordPieceTrainer;
* ``encode-bytes``, ``encode-unigram``: each build's own model (trained by that build in the
  set-up; the set-up prints the model files' sha256, so a difference in bytes shows too), one
  call per line and one batch on 1 thread, against tiktoken's cl100k (bytes) and sentencepiece
  on the same ``.model``-less vocabulary size (unigram) as the speed reference;
* ``load-model``, ``encode-model``: sentencepiece's own 32k Unigram ``.model``, read by each
  build's reader (``subwords.formats.load``) and by sentencepiece;
* ``encode-json``: a byte-level BPE tokenizer.json trained by tokenizers, read by each build
  and by tokenizers;
* ``encode-cl100k``: OpenAI's cl100k_base rank file (from the ``bpe-openai`` crate, as
  ``tests/support/peers.py`` fetches it), read by each build and by tiktoken.

With ``--callgrind`` the load and encode tasks are counted in instructions instead of timed:
each child runs under ``valgrind --tool=callgrind`` once with its measured section and once
without it (``BENCH_BUILDS_DRY=1``: the same set-up), and the difference is the section's
instruction count. That count does not move with the machine's load (it does not see cache
misses either, so it complements the timings, not replaces them). Use fewer ``--lines``.

Ids are hashed in every child: the builds must agree with each other on every task, and with
the peer where they read the peer's file; a mismatch is printed next to the row.
"""
from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
TASKS = ["train-bpe-front", "train-unigram-front", "train-wordpiece", "encode-bytes-call",
         "encode-bytes-batch", "encode-unigram-call", "encode-unigram-batch", "load-model",
         "encode-model-call", "encode-model-batch", "encode-json-batch", "encode-cl100k-batch"]


def lines_of(path: Path, n: int) -> list[str]:
    out = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.rstrip("\n")
            if line:
                out.append(line)
                if len(out) == n:
                    break
    return out


def digest(ids_lists) -> str:
    h = hashlib.sha256()
    for ids in ids_lists:
        h.update(json.dumps(list(ids)).encode())
    return h.hexdigest()[:12]


DRY = os.environ.get("BENCH_BUILDS_DRY") == "1"  # set-up only: the callgrind baseline


class Clock:
    def __enter__(self):
        self.w, self.c = time.perf_counter(), time.process_time()
        return self

    def __exit__(self, *exc):
        self.wall, self.cpu = time.perf_counter() - self.w, time.process_time() - self.c


# --- children -------------------------------------------------------------------------------

def sp_train_args(corpus: Path, prefix: str, model_type: str, vocab: int) -> dict:
    return dict(input=str(corpus), model_prefix=prefix, model_type=model_type, vocab_size=vocab,
                character_coverage=1.0, normalization_rule_name="identity", split_by_number=False,
                split_by_unicode_script=False, num_threads=2, input_sentence_size=0,
                max_sentence_length=1 << 20, minloglevel=2,
                hard_vocab_limit=False, add_dummy_prefix=True, remove_extra_whitespaces=False)


def child(task: str, who: str, a: argparse.Namespace) -> dict:
    corpus, work, vocab = Path(a.corpus), Path(a.work), a.vocab
    texts = lines_of(corpus, a.lines)
    out: dict = {}
    if who == "peer":
        if task in ("train-bpe-front", "train-unigram-front"):
            import sentencepiece as spm
            kind = "bpe" if "bpe" in task else "unigram"
            with tempfile.TemporaryDirectory() as d, Clock() as c:
                spm.SentencePieceTrainer.train(**sp_train_args(corpus, f"{d}/m", kind, vocab))
        elif task == "train-wordpiece":
            from tokenizers import Tokenizer, models, pre_tokenizers, trainers
            tok = Tokenizer(models.WordPiece(unk_token="[UNK]"))
            tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
            tr = trainers.WordPieceTrainer(vocab_size=vocab, special_tokens=["[UNK]"], show_progress=False)
            with Clock() as c:
                tok.train([str(corpus)], tr)
        elif task.startswith("encode-bytes") or task == "encode-cl100k-batch":
            enc = tiktoken_encoding(work)
            c = time_encode(task, enc.encode_ordinary, lambda t: enc.encode_ordinary_batch(t, num_threads=1), texts, out)
        elif task == "load-model":
            import sentencepiece as spm
            with Clock() as c:
                if not DRY:
                    spm.SentencePieceProcessor(model_file=str(work / "sp-unigram.model"))
        elif task.startswith("encode-model") or task.startswith("encode-unigram"):
            import sentencepiece as spm
            sp = spm.SentencePieceProcessor(model_file=str(work / "sp-unigram.model"))
            c = time_encode(task, sp.encode, lambda t: sp.encode(t, num_threads=1), texts, out)
        elif task == "encode-json-batch":
            from tokenizers import Tokenizer
            tok = Tokenizer.from_file(str(work / "hf-bytes.json"))
            c = time_encode(task, None, lambda t: [e.ids for e in tok.encode_batch(t, add_special_tokens=False)], texts, out)
        else:
            raise SystemExit(f"no peer for {task}")
        out.update(wall=c.wall, cpu=c.cpu)
        return out
    import subwords
    from subwords import formats
    mine = work / who
    if task.startswith("train-"):
        kw = {"train-bpe-front": dict(model="bpe", spelling="front"),
              "train-unigram-front": dict(model="unigram", spelling="front"),
              "train-wordpiece": dict(model="wordpiece", spelling="continuation", preset="bert")}[task]
        with Clock() as c:
            subwords.train(corpus, vocab_size=vocab, threads=2, **kw)
    elif task.startswith("encode-bytes") or task.startswith("encode-unigram"):
        tok = subwords.load(mine / ("bytes.json" if "bytes" in task else "unigram.json"))
        c = time_encode(task, tok.encode, lambda t: tok.encode_batch(t, threads=1), texts, out)
    elif task == "load-model":
        with Clock() as c:
            if not DRY:
                formats.load(work / "sp-unigram.model")
    elif task.startswith("encode-model"):
        tok = formats.load(work / "sp-unigram.model")
        c = time_encode(task, tok.encode, lambda t: tok.encode_batch(t, threads=1), texts, out)
    elif task == "encode-json-batch":
        tok = formats.load(work / "hf-bytes.json")
        c = time_encode(task, None, lambda t: tok.encode_batch(t, threads=1), texts, out)
    elif task == "encode-cl100k-batch":
        tok = formats.load(work / "cl100k_base.tiktoken")
        c = time_encode(task, None, lambda t: tok.encode_batch(t, threads=1), texts, out)
    out.update(wall=c.wall, cpu=c.cpu)
    return out


def time_encode(task: str, one, batch, texts: list[str], out: dict) -> Clock:
    if DRY:
        with Clock() as c:
            pass
        return c
    if task.endswith("-call"):
        with Clock() as c:
            ids = [one(t) for t in texts]
    else:
        with Clock() as c:
            ids = batch(texts)
    out["ids"] = digest(ids)
    return c


def tiktoken_encoding(work: Path):
    import base64

    import tiktoken
    import tiktoken_ext.openai_public as public

    data = (work / "cl100k_base.tiktoken").read_bytes()
    ranks = {base64.b64decode(t): int(r) for t, r in (line.split() for line in data.splitlines() if line)}
    original = public.load_tiktoken_bpe
    public.load_tiktoken_bpe = lambda *x, **k: ranks
    try:
        spec = public.cl100k_base()
    finally:
        public.load_tiktoken_bpe = original
    return tiktoken.Encoding("cl100k_base", pat_str=spec["pat_str"], mergeable_ranks=ranks, special_tokens={})


# --- the parent -----------------------------------------------------------------------------

def setup(builds: dict[str, str], a: argparse.Namespace, work: Path) -> None:
    peer_py = sys.executable
    script = f"""
import gzip, sys
sys.path.insert(0, {str(ROOT / 'tests' / 'support')!r})
from pathlib import Path
import sentencepiece as spm
from tokenizers import Tokenizer, models, pre_tokenizers, decoders, trainers
import peers
work, corpus, vocab = Path({str(work)!r}), {a.corpus!r}, {a.vocab}
sys.path.insert(0, {str(HERE)!r})
from bench_builds import sp_train_args
spm.SentencePieceTrainer.train(**sp_train_args(corpus, str(work / 'sp-unigram'), 'unigram', vocab))
tok = Tokenizer(models.BPE())
tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
tok.decoder = decoders.ByteLevel()
tok.train([corpus], trainers.BpeTrainer(vocab_size=vocab, show_progress=False,
          initial_alphabet=pre_tokenizers.ByteLevel.alphabet()))
tok.save(str(work / 'hf-bytes.json'))
(work / 'cl100k_base.tiktoken').write_bytes(gzip.decompress(peers.crate_member('bpe-openai', '0.2.1', 'data/cl100k_base.tiktoken.gz')))
"""
    subprocess.run([peer_py, "-c", script], check=True)
    for name, py in builds.items():
        d = work / name
        d.mkdir()
        script = f"""
import subwords
from pathlib import Path
d = Path({str(d)!r})
subwords.train(Path({a.corpus!r}), model='bpe', spelling='bytes', vocab_size={a.vocab}, threads=2).save(d / 'bytes.json')
subwords.train(Path({a.corpus!r}), model='unigram', spelling='front', vocab_size={a.vocab}, threads=2).save(d / 'unigram.json')
"""
        subprocess.run([py, "-c", script], check=True)
        for f in ("bytes.json", "unigram.json"):
            print(f"  {name} {f}: sha256 {hashlib.sha256((d / f).read_bytes()).hexdigest()[:16]}")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--build", action="append", required=True, help="NAME=PYTHON (two or more)")
    p.add_argument("--corpus", default="english")
    p.add_argument("--vocab", type=int, default=32000)
    p.add_argument("--lines", type=int, default=30000)
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--only", default=",".join(TASKS))
    p.add_argument("--callgrind", action="store_true",
                   help="count instructions instead (valgrind's callgrind; load and encode tasks only): each "
                        "child runs twice under callgrind, with and without the measured section, and the "
                        "difference is the section's instructions, the same whatever the machine's load")
    a = p.parse_args()
    builds = dict(b.split("=", 1) for b in a.build)
    if len(builds) < 2:
        p.error("give two builds: --build before=PYTHON --build after=PYTHON")
    corpus = Path(a.corpus)
    if not corpus.exists():
        corpus = HERE / "corpora" / f"{a.corpus}.txt"
    if not corpus.exists():
        p.error(f"no corpus {a.corpus!r}: build it with python benchmarks/corpora.py")
    a.corpus = str(corpus.resolve())
    tasks = [t for t in a.only.split(",") if t]
    bad = [t for t in tasks if t not in TASKS]
    if bad:
        p.error(f"unknown task(s) {bad}; the tasks are {TASKS}")
    peer_py = sys.executable
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        print(f"corpus {corpus.name}, vocab {a.vocab}, {a.lines} lines for encoding, {a.repeat} passes; load average {os.getloadavg()[0]:.2f}")
        setup(builds, a, work)
        if a.callgrind:
            return callgrind(builds, tasks, a, work)
        results: dict[tuple[str, str], list[dict]] = {}
        for r in range(a.repeat):
            for task in tasks:
                for who, py in [*builds.items(), ("peer", peer_py)]:
                    cmd = [py, __file__, "_task", task, who, "--corpus", a.corpus, "--work", str(work),
                           "--vocab", str(a.vocab), "--lines", str(a.lines)]
                    res = subprocess.run(cmd, check=True, capture_output=True, text=True)
                    results.setdefault((task, who), []).append(json.loads(res.stdout.splitlines()[-1]))
            print(f"  pass {r + 1} done, load average {os.getloadavg()[0]:.2f}", flush=True)
    names = list(builds)
    head = ["task"] + [f"{n} s (cpu)" for n in names] + ["peer s (cpu)"] + [f"peer/{n} (cpu)" for n in names]
    head += [f"{names[0]}/{n} (cpu; above 1: {n} faster)" for n in names[1:]] + ["ids"]
    print("\n| " + " | ".join(head) + " |\n|" + "---|" * len(head))
    for task in tasks:
        med = {w: statistics.median(x["cpu"] for x in results[(task, w)]) for w in [*names, "peer"]}
        walls = {w: statistics.median(x["wall"] for x in results[(task, w)]) for w in [*names, "peer"]}
        row = [task] + [f"{walls[w]:.3f} ({med[w]:.3f})" for w in [*names, "peer"]]
        row += [f"{med['peer'] / med[n]:.2f}" for n in names]
        row += [f"{med[names[0]] / med[n]:.2f}" for n in names[1:]]
        ids = {w: {x.get("ids") for x in results[(task, w)]} for w in [*names, "peer"]}
        same = all(ids[n] == ids[names[0]] for n in names)
        peer_same = ids["peer"] == ids[names[0]]
        note = ("same" if same else "BUILDS DIFFER") if None not in ids[names[0]] else "-"
        if task in ("encode-model-call", "encode-model-batch", "encode-json-batch", "encode-cl100k-batch"):
            note += ", = peer" if peer_same else ", PEER DIFFERS"
        row.append(note)
        print("| " + " | ".join(row) + " |")


def instructions(cmd: list[str], dry: bool) -> int:
    env = dict(os.environ, BENCH_BUILDS_DRY="1" if dry else "0")
    r = subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", *cmd],
                       capture_output=True, text=True, env=env, check=True)
    found = [line for line in r.stderr.splitlines() if "Collected :" in line]
    if not found:
        raise SystemExit(f"callgrind printed no total for {cmd}: {r.stderr[-500:]}")
    return int(found[-1].split("Collected :")[1].split()[0])


def callgrind(builds: dict[str, str], tasks: list[str], a: argparse.Namespace, work: Path) -> None:
    tasks = [t for t in tasks if not t.startswith("train-")]
    names = list(builds)
    peer_py = sys.executable
    head = ["task"] + [f"{n} Ir" for n in names] + ["peer Ir"] + [f"peer/{n}" for n in names]
    head += [f"{names[0]}/{n}" for n in names[1:]]
    print("\n| " + " | ".join(head) + " |\n|" + "---|" * len(head))
    for task in tasks:
        ir = {}
        for who, py in [*builds.items(), ("peer", peer_py)]:
            cmd = [py, __file__, "_task", task, who, "--corpus", a.corpus, "--work", str(work),
                   "--vocab", str(a.vocab), "--lines", str(a.lines)]
            ir[who] = instructions(cmd, False) - instructions(cmd, True)
        row = [task] + [f"{ir[w]:,}" for w in [*names, "peer"]]
        row += [f"{ir['peer'] / ir[n]:.2f}" for n in names]
        row += [f"{ir[names[0]] / ir[n]:.3f}" for n in names[1:]]
        print("| " + " | ".join(row) + " |", flush=True)


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "_task":
        q = argparse.ArgumentParser()
        q.add_argument("_", help="_task")
        q.add_argument("task")
        q.add_argument("who")
        q.add_argument("--corpus")
        q.add_argument("--work")
        q.add_argument("--vocab", type=int)
        q.add_argument("--lines", type=int)
        args = q.parse_args()
        print(json.dumps(child(args.task, args.who, args)))
    else:
        main()
