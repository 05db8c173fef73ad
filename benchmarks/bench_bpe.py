#!/usr/bin/env python3
"""BPE training and byte-level encoding: subwords against its peers, side by side, in one run.

    python benchmarks/bench_bpe.py                       # large corpus, vocab 32000, 2 threads
    python benchmarks/bench_bpe.py --corpus english
    python benchmarks/bench_bpe.py --quick               # english corpus, encode heldout, 1 repeat
    python benchmarks/bench_bpe.py --peers-only          # before subwords is built

Build the corpora first: ``python benchmarks/corpora.py``.

Every training run and every encoding measurement happens in a fresh child process
(``python bench_bpe.py _worker ...``), so the peak resident set size of each run is its own
(``ru_maxrss`` from ``os.wait4`` on that child; it includes the interpreter and the imported
library, whose size alone is printed as the baseline).  Training wall time is measured in the
child around the training call only (for bpeasy, which takes a Python iterator, that includes
reading the file line by line in Python).  Ratios are peer / ours: above 1 means ours is
faster (or smaller).  With ``--peers-only`` the ratios are taken against the first peer of
each group instead.

Groups
------
front (character-level BPE with a SentencePiece-style ``▁`` word-start mark):
  ours          subwords.train(Path(path), model="bpe", spelling="front", vocab_size=V, threads=T)
  sentencepiece model_type=bpe, vocab_size=V, character_coverage=1.0,
                input_sentence_size=0 (all sentences, no sampling), shuffle_input_sentence=False,
                num_threads=T, max_sentence_length=65536 (default 4192 would drop longer
                lines; no corpus line is that long, so it only guards), normalization_rule_name
                ="identity" (no NFKC: subwords does not normalise either), split_by_unicode_
                script=False and split_by_number=False (subwords' units are ▁+word with no
                script/number cuts), byte_fallback=False.  train_extremely_large_corpus only
                widens Unigram's counters, so it stays off for BPE.
  youtokentome  yttm.BPE.train(data=path, vocab_size=V, coverage=1.0, n_threads=T)
bytes (byte-level BPE, GPT-2 regex pre-split, 256 byte symbols):
  ours          subwords.train(Path(path), model="bpe", spelling="bytes", pre_split="gpt2",
                vocab_size=V, threads=T)
  tokenizers    models.BPE + pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True),
                BpeTrainer(vocab_size=V, min_frequency=2, initial_alphabet=ByteLevel.alphabet(),
                special_tokens=[]), RAYON_NUM_THREADS=T
  bpeasy        bpeasy.train_bpe(lines of the file, GPT-2 regex, max_token_length=128,
                vocab_size=V), RAYON_NUM_THREADS=T

Encoding
--------
The byte-level vocabulary learned in this run (ours; with --peers-only, tokenizers') is handed
to tiktoken as ``mergeable_ranks`` (rank = id: bytes 0-255, then merges in order) with the GPT-2
pattern, and to tokenizers as vocab + merges.  Each encoder runs in its own child on the
encode corpus in three modes: ``single`` (the whole text in one call, one thread), ``batch1``
and ``batch2`` (the text cut at line ends into ~16 KiB chunks, one call, 1 or 2 threads).  The
ids of every encoder must be identical to ours in the same mode (a sha256 of the id lists is
compared).  MB/s counts UTF-8 input bytes, best of --repeat.  A cl100k reference (rs-bpe's
built-in cl100k vs tiktoken given the same ranks) is printed too: rs-bpe takes no custom
vocabulary, so it is not compared to ours.
"""
from __future__ import annotations

import argparse
import base64
import hashlib
import json
import os
import platform
import signal
import statistics
import subprocess
import sys
import time
from array import array
from importlib import metadata
from pathlib import Path

from corpora import line_chunks

HERE = Path(__file__).resolve().parent
CORPORA = HERE / "corpora"
OUT = HERE / "out"

GPT2_PATTERN = r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""
CL100K_PATTERN = (
    r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+"""
    r"""|\s++$|\s*[\r\n]|\s+(?!\S)|\s"""
)
CL100K_SIZE = 100256
CHUNK_BYTES = 16 * 1024

TRAINERS = {
    # name: (group, label, distribution for the version column)
    "ours-front": ("front", "subwords", "subwords"),
    "sentencepiece": ("front", "sentencepiece", "sentencepiece"),
    "youtokentome": ("front", "youtokentome", "youtokentome"),
    "ours-bytes": ("bytes", "subwords", "subwords"),
    "tokenizers": ("bytes", "tokenizers", "tokenizers"),
    "bpeasy": ("bytes", "bpeasy", "bpeasy"),
}
GROUP_TITLES = {
    "front": "BPE, spelling=front (▁ word-start mark, character symbols)",
    "bytes": "BPE, spelling=bytes + GPT-2 pre-split (byte symbols)",
}


# ======================================================================================
# child side


def _thread_env(threads: int) -> None:
    os.environ["RAYON_NUM_THREADS"] = str(threads)
    os.environ["RAYON_RS_NUM_CPUS"] = str(threads)
    os.environ["TOKENIZERS_PARALLELISM"] = "true"


def train_worker(name: str, corpus: str, vocab: int, threads: int, outdir: str) -> dict:
    out = Path(outdir)
    if name in ("ours-front", "ours-bytes"):
        import subwords

        kw = dict(model="bpe", spelling="front") if name == "ours-front" else dict(
            model="bpe", spelling="bytes", pre_split="gpt2")
        t0 = time.perf_counter()
        tok = subwords.train(Path(corpus), vocab_size=vocab, threads=threads, **kw)
        dt = time.perf_counter() - t0
        path = out / f"{name}.json"
        tok.save(str(path))
        return {"seconds": dt, "rows": tok.vocab_size, "model": str(path),
                "stop": (tok.report or {}).get("stop")}
    if name == "sentencepiece":
        import sentencepiece as spm

        prefix = out / "sentencepiece"
        t0 = time.perf_counter()
        spm.SentencePieceTrainer.train(
            input=corpus, model_prefix=str(prefix), model_type="bpe", vocab_size=vocab,
            character_coverage=1.0, input_sentence_size=0, shuffle_input_sentence=False,
            num_threads=threads, max_sentence_length=65536,
            normalization_rule_name="identity", split_by_unicode_script=False,
            split_by_number=False, byte_fallback=False,
        )
        dt = time.perf_counter() - t0
        sp = spm.SentencePieceProcessor(model_file=str(prefix) + ".model")
        return {"seconds": dt, "rows": sp.get_piece_size(), "model": str(prefix) + ".model"}
    if name == "youtokentome":
        import youtokentome as yttm

        path = out / "youtokentome.model"
        t0 = time.perf_counter()
        bpe = yttm.BPE.train(data=corpus, model=str(path), vocab_size=vocab, coverage=1.0,
                             n_threads=threads)
        dt = time.perf_counter() - t0
        return {"seconds": dt, "rows": bpe.vocab_size(), "model": str(path)}
    if name == "tokenizers":
        from tokenizers import Tokenizer, models, pre_tokenizers, trainers

        tok = Tokenizer(models.BPE())
        tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
        trainer = trainers.BpeTrainer(
            vocab_size=vocab, min_frequency=2, show_progress=False, special_tokens=[],
            initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        )
        t0 = time.perf_counter()
        tok.train([corpus], trainer)
        dt = time.perf_counter() - t0
        path = out / "tokenizers.json"
        tok.save(str(path))
        return {"seconds": dt, "rows": tok.get_vocab_size(), "model": str(path)}
    if name == "bpeasy":
        import bpeasy

        def lines():
            with open(corpus, encoding="utf-8") as f:
                yield from f

        t0 = time.perf_counter()
        ranks = bpeasy.train_bpe(lines(), GPT2_PATTERN, 128, vocab)
        dt = time.perf_counter() - t0
        path = out / "bpeasy.json"
        rows = [base64.b64encode(b).decode() for b, _ in sorted(ranks.items(), key=lambda kv: kv[1])]
        path.write_text(json.dumps({"ranks_b64": rows}))
        return {"seconds": dt, "rows": len(ranks), "model": str(path)}
    if name == "baseline":
        return {"seconds": 0.0, "rows": 0}
    raise SystemExit(f"unknown trainer {name}")


def _bytes_to_unicode() -> dict[int, str]:
    """GPT-2's printable stand-ins for the 256 byte values."""
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + list(range(ord("®"), ord("ÿ") + 1))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return dict(zip(bs, map(chr, cs)))


def export_vocab(source: str, model: str, dest: str) -> dict:
    """A byte-level model -> {"ranks_b64": [bytes by id], "merges_b64": [[left, right], ...]}."""
    if source == "ours":
        import subwords

        tok = subwords.load(model)
        ranks = [tok.decode_bytes([i]) for i in range(tok.vocab_size)]
        merges = [
            [tok.decode_bytes([tok.piece_to_id(a)]), tok.decode_bytes([tok.piece_to_id(b)])]
            for a, b in tok.merges
        ]
    elif source == "tokenizers":
        data = json.loads(Path(model).read_text(encoding="utf-8"))
        dec = {c: b for b, c in _bytes_to_unicode().items()}
        to_bytes = lambda s: bytes(dec[c] for c in s)  # noqa: E731
        vocab = data["model"]["vocab"]
        ranks = [b""] * len(vocab)
        for piece, i in vocab.items():
            ranks[i] = to_bytes(piece)
        merges = [[to_bytes(a), to_bytes(b)] for a, b in (
            m.split(" ", 1) if isinstance(m, str) else m for m in data["model"]["merges"])]
    else:
        raise SystemExit(f"unknown vocabulary source {source}")
    if len(set(ranks)) != len(ranks):
        raise SystemExit("vocabulary has two rows with the same bytes: cannot be tiktoken ranks")
    b64 = lambda b: base64.b64encode(b).decode()  # noqa: E731
    Path(dest).write_text(json.dumps({
        "source": source,
        "ranks_b64": [b64(r) for r in ranks],
        "merges_b64": [[b64(a), b64(b)] for a, b in merges],
    }))
    return {"rows": len(ranks), "merges": len(merges)}


def _ids_digest(lists) -> tuple[str, int]:
    h = hashlib.sha256()
    total = 0
    for ids in lists:
        a = array("q", ids)
        h.update(len(a).to_bytes(8, "little"))
        h.update(a.tobytes())
        total += len(a)
    return h.hexdigest(), total


def encode_worker(encoder: str, vocab_file: str, model: str, text_file: str, mode: str,
                  threads: int, repeat: int) -> dict:
    text = Path(text_file).read_text(encoding="utf-8")
    nbytes = len(text.encode("utf-8"))
    batch = line_chunks(text, CHUNK_BYTES) if mode != "single" else None
    voc = json.loads(Path(vocab_file).read_text()) if vocab_file else None

    if encoder == "ours":
        import subwords

        tok = subwords.load(model)
        single = tok.encode
        many = lambda xs: tok.encode_batch(xs, threads=threads)  # noqa: E731
    elif encoder in ("tiktoken", "tiktoken-cl100k"):
        import tiktoken

        if encoder == "tiktoken":
            ranks = {base64.b64decode(r): i for i, r in enumerate(voc["ranks_b64"])}
            pat = GPT2_PATTERN
        else:
            from rs_bpe.bpe import openai

            bpe = openai.cl100k_base().bpe()
            ranks = {bpe.decode_tokens([i]): i for i in range(CL100K_SIZE)}
            if len(ranks) != CL100K_SIZE:
                raise SystemExit("rs-bpe's cl100k has duplicate token bytes")
            pat = CL100K_PATTERN
        enc = tiktoken.Encoding(name=f"bench-{encoder}", pat_str=pat, mergeable_ranks=ranks,
                                special_tokens={})
        single = enc.encode_ordinary
        many = lambda xs: enc.encode_ordinary_batch(xs, num_threads=threads)  # noqa: E731
    elif encoder == "tokenizers":
        from tokenizers import Tokenizer, models, pre_tokenizers

        u = _bytes_to_unicode()
        s = lambda b: "".join(u[x] for x in b)  # noqa: E731
        vocab = {s(base64.b64decode(r)): i for i, r in enumerate(voc["ranks_b64"])}
        merges = [(s(base64.b64decode(a)), s(base64.b64decode(b))) for a, b in voc["merges_b64"]]
        tk = Tokenizer(models.BPE(vocab=vocab, merges=merges))
        tk.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
        single = lambda t: tk.encode(t, add_special_tokens=False).ids  # noqa: E731
        many = lambda xs: [e.ids for e in tk.encode_batch(xs, add_special_tokens=False)]  # noqa: E731
    elif encoder == "rs-bpe-cl100k":
        from rs_bpe.bpe import openai

        rt = openai.cl100k_base()
        single = rt.encode
        many = lambda xs: rt.encode_batch_parallel(xs, None)[0]  # noqa: E731  (rayon: RAYON_NUM_THREADS)
    else:
        raise SystemExit(f"unknown encoder {encoder}")

    warm = text[:100_000]
    single(warm) if batch is None else many(line_chunks(warm, CHUNK_BYTES))
    times, result = [], None
    for _ in range(repeat):
        t0 = time.perf_counter()
        result = [single(text)] if batch is None else many(batch)
        times.append(time.perf_counter() - t0)
    digest, n_ids = _ids_digest(result)
    return {
        "mb_s": nbytes / 1e6 / min(times),
        "mb_s_median": nbytes / 1e6 / statistics.median(times),
        "seconds": times, "bytes": nbytes, "ids": n_ids, "ids_sha256": digest,
        "chunks": len(batch) if batch else 1,
    }


def worker_main(argv: list[str]) -> int:
    spec = json.loads(argv[0])
    _thread_env(spec.get("threads", 1))
    kind = spec.pop("kind")
    if kind == "train":
        res = train_worker(**spec)
    elif kind == "export":
        res = export_vocab(**spec)
    elif kind == "encode":
        res = encode_worker(**spec)
    else:
        raise SystemExit(f"unknown worker kind {kind}")
    print("@@RESULT " + json.dumps(res), flush=True)
    return 0


# ======================================================================================
# parent side


class RunFailed(RuntimeError):
    pass


def busy_cpu_seconds() -> float | None:
    """CPU seconds the whole machine has spent busy since boot (all cores), from /proc/stat."""
    try:
        with open("/proc/stat") as f:
            fields = [int(x) for x in f.readline().split()[1:]]
    except (OSError, ValueError):
        return None
    idle = fields[3] + (fields[4] if len(fields) > 4 else 0)  # idle + iowait
    busy = sum(fields[:8]) - idle  # user nice system idle iowait irq softirq steal
    return busy / os.sysconf("SC_CLK_TCK")


WAIT_IDLE = 0.0  # --wait-idle: seconds to wait, before each child, for the machine to go quiet


def wait_for_idle(limit: float, threshold: float = 0.25) -> float | None:
    """Wait up to `limit` seconds until other processes use less than `threshold` cores
    (sampled over 1 s).  Returns the last sample (cores busy), None without /proc/stat."""
    deadline = time.perf_counter() + limit
    while True:
        b0 = busy_cpu_seconds()
        time.sleep(1.0)
        b1 = busy_cpu_seconds()
        if b0 is None or b1 is None:
            return None
        busy = b1 - b0
        if busy < threshold or time.perf_counter() >= deadline:
            return busy


def run_child(spec: dict, log: Path, timeout: float | None) -> dict:
    """Run one worker in a fresh interpreter; return its result plus peak RSS and wall."""
    idle_before = wait_for_idle(WAIT_IDLE) if WAIT_IDLE > 0 else None
    threads = spec.get("threads", 1)
    env = dict(os.environ, RAYON_NUM_THREADS=str(threads), RAYON_RS_NUM_CPUS=str(threads),
               TOKENIZERS_PARALLELISM="true", PYTHONHASHSEED="0")
    out_path = log.with_suffix(".out")
    with open(log, "w") as logf, open(out_path, "w") as outf:
        busy0 = busy_cpu_seconds()
        t0 = time.perf_counter()
        proc = subprocess.Popen(
            [sys.executable, str(Path(__file__).resolve()), "_worker", json.dumps(spec)],
            stdout=outf, stderr=logf, stdin=subprocess.DEVNULL, env=env,
            start_new_session=True,
        )
        deadline = None if timeout is None else t0 + timeout
        while True:
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                break
            if deadline is not None and time.perf_counter() > deadline:
                os.killpg(proc.pid, signal.SIGKILL)
                os.wait4(proc.pid, 0)
                proc.returncode = -9
                raise RunFailed(f"timed out after {timeout:.0f} s (log: {log})")
            time.sleep(0.02)
        wall = time.perf_counter() - t0
        busy1 = busy_cpu_seconds()
        proc.returncode = os.waitstatus_to_exitcode(status)
    stdout = out_path.read_text(errors="replace")
    res = None
    for line in stdout.splitlines():
        if line.startswith("@@RESULT "):
            res = json.loads(line[len("@@RESULT "):])
    if proc.returncode != 0 or res is None:
        tail = log.read_text(errors="replace").strip().splitlines()[-8:]
        raise RunFailed(f"exit {proc.returncode}; log {log}:\n    " + "\n    ".join(tail))
    res["peak_rss_mb"] = usage.ru_maxrss / 1024  # Linux: kilobytes
    res["process_seconds"] = wall
    res["cpu_seconds"] = usage.ru_utime + usage.ru_stime
    if busy0 is not None and busy1 is not None and wall > 0:
        # cores kept busy by other processes while this child ran: the noise indicator
        res["others_cores"] = max(0.0, (busy1 - busy0 - res["cpu_seconds"]) / wall)
    if idle_before is not None:
        res["others_cores_before"] = idle_before
    return res


def resolve_corpus(name: str) -> Path:
    p = Path(name)
    if p.suffix == ".txt" or p.exists():
        if not p.exists():
            raise SystemExit(f"corpus file {p} does not exist")
        return p
    p = CORPORA / f"{name}.txt"
    if name == "large100" and not p.exists() and (CORPORA / "large.txt").exists():
        cut_large(CORPORA / "large.txt", p, 100_000_000)
    if not p.exists():
        raise SystemExit(f"{p} is missing: build the corpora first with `python benchmarks/corpora.py`")
    return p


def cut_large(src: Path, dst: Path, limit: int) -> None:
    """``dst``: the first ``limit`` bytes of ``src`` cut back to a line end ("100 MB" is
    ``large100.txt``, made from ``large.txt`` on first use), written whole or not at all."""
    with open(src, "rb") as f:
        head = f.read(limit)
    cut = head.rfind(b"\n") + 1
    if cut == 0:
        raise SystemExit(f"{src} has no line end in its first {limit} bytes")
    tmp = dst.with_suffix(".tmp")
    tmp.write_bytes(head[:cut])
    os.replace(tmp, dst)


def version_of(dist: str) -> str:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return "not installed"


def ours_available() -> bool:
    try:
        import subwords  # noqa: F401
        return callable(getattr(subwords, "train", None))
    except Exception:
        return False


def fmt_others(r: dict) -> str:
    x = r.get("others_cores")
    return "?" if x is None else f"{x:.2f}"


def fmt_ratio(x: float | None) -> str:
    return "—" if x is None else f"{x:.2f}×"


def machine_info() -> dict:
    cpu = ""
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return {"cpus": os.cpu_count(), "cpu": cpu, "python": platform.python_version(),
            "platform": platform.platform()}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description="BPE training + byte-level encoding: subwords vs peers")
    ap.add_argument("--corpus", default=None, help="large|english|multilingual|code|heldout or a .txt path (default large; --quick: english)")
    ap.add_argument("--encode-corpus", default=None, help="text to encode (default english; --quick: heldout)")
    ap.add_argument("--vocab", type=int, default=32000)
    ap.add_argument("--threads", type=int, default=2, help="threads for trainers that take them (default 2)")
    ap.add_argument("--repeat", type=int, default=None, help="encoding repeats, best is kept (default 3; --quick: 1)")
    ap.add_argument("--train-repeat", type=int, default=None,
                    help="training runs per trainer, fastest kept (default 3 below 50 MB, else 1)")
    ap.add_argument("--quick", action="store_true", help="small corpus, one repeat")
    ap.add_argument("--peers-only", action="store_true", help="run without subwords (before it is built)")
    ap.add_argument("--only", default=None, help="comma list of trainers: " + ",".join(TRAINERS))
    ap.add_argument("--skip-train", action="store_true")
    ap.add_argument("--skip-encode", action="store_true")
    ap.add_argument("--no-cl100k", action="store_true", help="skip the rs-bpe/tiktoken cl100k reference")
    ap.add_argument("--timeout", type=float, default=None, help="seconds per child run")
    ap.add_argument("--wait-idle", type=float, default=0.0, metavar="SECONDS",
                    help="before each child, wait up to this long for other processes to use "
                         "< 0.25 cores (shared machines); default 0 = do not wait")
    ap.add_argument("--workdir", type=Path, default=OUT, help="models, logs and results (default benchmarks/out)")
    args = ap.parse_args(argv)
    global WAIT_IDLE
    WAIT_IDLE = args.wait_idle

    corpus = resolve_corpus(args.corpus or ("english" if args.quick else "large"))
    enc_corpus = resolve_corpus(args.encode_corpus or ("heldout" if args.quick else "english"))
    repeat = args.repeat or (1 if args.quick else 3)
    have_ours = ours_available()
    if not args.peers_only and not have_ours:
        raise SystemExit("subwords is not importable (not built yet?): run with --peers-only, "
                         "or build it with `maturin develop --release` first")
    names = list(TRAINERS) if args.only is None else [n.strip() for n in args.only.split(",")]
    for n in names:
        if n not in TRAINERS:
            raise SystemExit(f"unknown trainer {n}; choose from {', '.join(TRAINERS)}")
    if args.peers_only:
        names = [n for n in names if not n.startswith("ours")]
    work = args.workdir / f"bpe-{corpus.stem}"
    work.mkdir(parents=True, exist_ok=True)

    versions = {d: version_of(d) for d in
                ["subwords", "sentencepiece", "youtokentome", "tokenizers", "bpeasy", "tiktoken", "rs-bpe"]}
    info = machine_info()
    size_mb = corpus.stat().st_size / 1e6
    print(f"# subwords BPE benchmark — {time.strftime('%Y-%m-%d %H:%M')}")
    print(f"machine: {info['cpus']} cpus, {info['cpu']}; Python {info['python']}")
    print("versions: " + ", ".join(f"{k} {v}" for k, v in versions.items()))
    print(f"training corpus: {corpus.name} ({size_mb:.1f} MB), vocab {args.vocab}, threads {args.threads}")
    load = os.getloadavg()
    print(f"load average at start: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}"
          + ("  (other work is running: thread scaling and times will be noisy)" if load[0] > 0.5 else ""))
    print("'others' = cores kept busy by other processes during that run (from /proc/stat);"
          " compare rows only when it is near 0")
    results: dict = {"machine": info, "versions": versions, "corpus": corpus.name,
                     "corpus_bytes": corpus.stat().st_size, "vocab": args.vocab,
                     "threads": args.threads, "train": {}, "encode": {}}

    # ---------------------------------------------------------------- training
    if not args.skip_train:
        base = run_child({"kind": "train", "name": "baseline", "corpus": "", "vocab": 0,
                          "threads": 1, "outdir": str(work)}, work / "baseline.log", args.timeout)
        results["baseline_rss_mb"] = base["peak_rss_mb"]
        train_repeat = args.train_repeat or (3 if corpus.stat().st_size < 50e6 else 1)
        results["train_repeat"] = train_repeat
        for n in names:
            runs = []
            for i in range(train_repeat):
                print(f"  training {n} ({i + 1}/{train_repeat}) ...", file=sys.stderr, flush=True)
                try:
                    runs.append(run_child(
                        {"kind": "train", "name": n, "corpus": str(corpus), "vocab": args.vocab,
                         "threads": args.threads, "outdir": str(work)},
                        work / f"train-{n}.log", args.timeout))
                except RunFailed as e:
                    runs = [{"error": str(e)}]
                    print(f"  {n} failed: {e}", file=sys.stderr)
                    break
            if "error" in runs[0]:
                r = runs[0]
            else:  # the fastest run; every run's seconds and the largest peak RSS kept
                r = dict(min(runs, key=lambda x: x["seconds"]))
                r["all_seconds"] = [x["seconds"] for x in runs]
                r["peak_rss_mb"] = max(x["peak_rss_mb"] for x in runs)
            results["train"][n] = r
        print_train_table(results, names, args.peers_only)

    # ---------------------------------------------------------------- encoding
    if not args.skip_encode:
        run_encoding(results, work, enc_corpus, args, have_ours and not args.peers_only, repeat)

    load = os.getloadavg()
    print(f"\nload average at end: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
    stamp = time.strftime("%Y%m%d-%H%M%S")
    out_json = args.workdir / f"bench_bpe-{corpus.stem}-{stamp}.json"
    out_json.write_text(json.dumps(results, indent=2))
    print(f"\nraw results: {out_json.relative_to(Path.cwd()) if out_json.is_relative_to(Path.cwd()) else out_json}")
    return 0


def print_train_table(results: dict, names: list[str], peers_only: bool) -> None:
    print(f"\n## Training (wall s of the training call, fastest of {results.get('train_repeat', 1)}; "
          f"peak RSS of the child process; interpreter alone {results.get('baseline_rss_mb', 0):.0f} MB)")
    ref_note = "first peer of the group" if peers_only else "ours"
    print(f"ratios = other / {ref_note}: above 1 means {ref_note} is faster / smaller\n")
    hdr = (f"| {'trainer':<14} | {'version':<9} | {'wall s':>8} | {'× time':>7} | {'cpu s':>7} | "
           f"{'peak MB':>8} | {'× RSS':>7} | {'rows':>6} | {'others':>6} |")
    for group in ("front", "bytes"):
        members = [n for n in TRAINERS if TRAINERS[n][0] == group and n in names]
        if not members:
            continue
        print(f"### {GROUP_TITLES[group]}\n")
        print(hdr)
        print("|" + "|".join("-" * (len(c)) for c in hdr.split("|")[1:-1]) + "|")
        ref = next((results["train"][n] for n in members if "error" not in results["train"][n]), None)
        for n in members:
            r = results["train"][n]
            label = TRAINERS[n][1]
            ver = results["versions"].get(TRAINERS[n][2], "")
            if "error" in r:
                print(f"| {label:<14} | {ver:<9} | {'failed':>8} | {'':>7} | {'':>7} | {'':>8} | {'':>7} | {'':>6} | {'':>6} |")
                continue
            rt = r["seconds"] / ref["seconds"] if ref and ref["seconds"] else None
            rm = r["peak_rss_mb"] / ref["peak_rss_mb"] if ref else None
            r["ratio_time"], r["ratio_rss"] = rt, rm
            print(f"| {label:<14} | {ver:<9} | {r['seconds']:>8.2f} | {fmt_ratio(rt):>7} | "
                  f"{r['cpu_seconds']:>7.1f} | {r['peak_rss_mb']:>8.0f} | {fmt_ratio(rm):>7} | "
                  f"{r['rows']:>6} | {fmt_others(r):>6} |")
        print()


def run_encoding(results: dict, work: Path, text: Path, args, use_ours: bool, repeat: int) -> None:
    train = results["train"]
    if use_ours:
        source, model = "ours", train.get("ours-bytes", {}).get("model") or str(work / "ours-bytes.json")
    else:
        source, model = "tokenizers", train.get("tokenizers", {}).get("model") or str(work / "tokenizers.json")
    print(f"\n## Byte-level encoding of {text.name} ({text.stat().st_size / 1e6:.1f} MB), "
          f"vocabulary: the {source} bytes model trained above; best of {repeat}")
    if not Path(model).exists():
        print(f"(skipped: no {source} byte-level model at {model}; train it first)")
        return
    vocab_file = work / "bytes-vocab.json"
    try:
        ex = run_child({"kind": "export", "source": source, "model": model, "dest": str(vocab_file)},
                       work / "export.log", args.timeout)
    except RunFailed as e:
        print(f"(skipped: could not export the vocabulary: {e})")
        return
    print(f"{ex['rows']} rows, {ex['merges']} merges; GPT-2 pattern; "
          f"batch = ~{CHUNK_BYTES // 1024} KiB chunks cut at line ends\n")
    encoders = (["ours"] if use_ours else []) + ["tiktoken", "tokenizers"]
    modes = [("single", 1), ("batch1", 1), ("batch2", 2)]
    enc: dict = {}
    for e in encoders:
        for mode, th in modes:
            print(f"  encoding {e} {mode} ...", file=sys.stderr, flush=True)
            try:
                enc[f"{e}/{mode}"] = run_child(
                    {"kind": "encode", "encoder": e, "vocab_file": str(vocab_file), "model": model,
                     "text_file": str(text), "mode": mode, "threads": th, "repeat": repeat},
                    work / f"encode-{e}-{mode}.log", args.timeout)
            except RunFailed as err:
                enc[f"{e}/{mode}"] = {"error": str(err)}
                print(f"  {e} {mode} failed: {err}", file=sys.stderr)
    results["encode"]["bytes_vocab"] = enc
    ref_enc = encoders[0]
    hdr = (f"| {'encoder':<11} | {'mode':<7} | {'MB/s':>7} | {'median':>7} | {'× ' + ref_enc:>12} | "
           f"{'ids':>9} | {'same ids':>8} | {'others':>6} |")
    print(hdr)
    print("|" + "|".join("-" * len(c) for c in hdr.split("|")[1:-1]) + "|")
    for mode, _ in modes:
        ref = enc.get(f"{ref_enc}/{mode}", {})
        for e in encoders:
            r = enc.get(f"{e}/{mode}", {})
            if "error" in r:
                print(f"| {e:<11} | {mode:<7} | {'failed':>7} | {'':>7} | {'':>12} | {'':>9} | {'':>8} | {'':>6} |")
                continue
            ratio = ref["mb_s"] / r["mb_s"] if "mb_s" in ref else None
            same = "yes" if r.get("ids_sha256") == ref.get("ids_sha256") else "NO"
            r["ratio_vs_ref"], r["same_ids_as_ref"] = ratio, same == "yes"
            print(f"| {e:<11} | {mode:<7} | {r['mb_s']:>7.2f} | {r['mb_s_median']:>7.2f} | "
                  f"{fmt_ratio(ratio):>12} | {r['ids']:>9} | {same:>8} | {fmt_others(r):>6} |")
    print(f"\n(× {ref_enc} = {ref_enc} MB/s / encoder MB/s: above 1 means {ref_enc} is faster)")
    lines = []
    for e in encoders:
        b1, b2 = enc.get(f"{e}/batch1", {}), enc.get(f"{e}/batch2", {})
        if "mb_s" in b1 and "mb_s" in b2:
            lines.append(f"{e} {b2['mb_s'] / b1['mb_s']:.2f}×")
    if lines:
        print("2-thread speed-up (batch2 / batch1): " + ", ".join(lines))
    if use_ours and "mb_s" in enc.get("ours/single", {}) and "mb_s" in enc.get("tiktoken/single", {}):
        print(f"headline: ours 1 thread / tiktoken 1 thread = "
              f"{enc['ours/single']['mb_s'] / enc['tiktoken/single']['mb_s']:.2f}×; "
              f"ours 2 threads / ours 1 thread = "
              f"{enc['ours/batch2']['mb_s'] / enc['ours/batch1']['mb_s']:.2f}×"
              if "mb_s" in enc.get("ours/batch2", {}) and "mb_s" in enc.get("ours/batch1", {}) else "")

    if args.no_cl100k:
        return
    print(f"\n### Reference: cl100k (rs-bpe's built-in ranks; tiktoken given the same ranks)\n")
    ref_rows = {}
    for e in ("tiktoken-cl100k", "rs-bpe-cl100k"):
        for mode, th in (("single", 1), ("batch2", 2)):
            print(f"  encoding {e} {mode} ...", file=sys.stderr, flush=True)
            try:
                ref_rows[f"{e}/{mode}"] = run_child(
                    {"kind": "encode", "encoder": e, "vocab_file": "", "model": "",
                     "text_file": str(text), "mode": mode, "threads": th, "repeat": repeat},
                    work / f"encode-{e}-{mode}.log", args.timeout)
            except RunFailed as err:
                ref_rows[f"{e}/{mode}"] = {"error": str(err)}
    results["encode"]["cl100k"] = ref_rows
    print(f"| {'encoder':<15} | {'mode':<7} | {'MB/s':>7} | {'ids':>9} | {'same ids':>8} | {'others':>6} |")
    print(f"|{'-' * 17}|{'-' * 9}|{'-' * 9}|{'-' * 11}|{'-' * 10}|{'-' * 8}|")
    for mode in ("single", "batch2"):
        ref = ref_rows.get(f"tiktoken-cl100k/{mode}", {})
        for e in ("tiktoken-cl100k", "rs-bpe-cl100k"):
            r = ref_rows.get(f"{e}/{mode}", {})
            if "mb_s" not in r:
                print(f"| {e:<15} | {mode:<7} | {'failed':>7} | {'':>9} | {'':>8} | {'':>6} |")
                continue
            same = "yes" if r["ids_sha256"] == ref.get("ids_sha256") else "NO"
            print(f"| {e:<15} | {mode:<7} | {r['mb_s']:>7.2f} | {r['ids']:>9} | {same:>8} | {fmt_others(r):>6} |")


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "_worker":
        sys.exit(worker_main(sys.argv[2:]))
    sys.exit(main())
