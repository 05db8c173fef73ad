"""``SentencePieceProcessor.Encode`` through subwords' face against sentencepiece itself.

    python benchmarks/bench_compat_sp.py [--corpus english] [--model m.model] [--model-type unigram]
                                         [--vocab 8000] [--repeat 5]

The same ``.model`` file and the same lines go to both, each library in its own process (the
face's process never imports sentencepiece). Without ``--model``, sentencepiece trains a model of
``--model-type`` (``unigram`` or ``bpe``) with ``--vocab`` pieces on the corpus (its defaults
otherwise) and both read that file. Timed calls:

* ``per_call``: ``sp.Encode(line)`` for every line (ids);
* ``per_call_pieces``: ``sp.Encode(line, out_type=str)`` for every line;
* ``batch``: one ``sp.Encode(lines)`` call (a list: sentencepiece's own thread pool, every core);
* ``batch_1_thread``: the same with ``num_threads=1``;
* ``first_pass``: ``Encode(lines, num_threads=1)`` on a processor loaded just before (the face
  keeps the words it met in a cache, so the calls above, after the first, find every word there;
  here none is).

The ids checked come from one call on one thread, untimed (a call on every core after the timed
calls must give the same), which puts every word of the lines in the cache the calls one line at
a time read (after a call on two threads, the words only the second thread met are in that
thread's cache, and the first loop of calls one line at a time met them anew). Its lists are let
go before the timed calls: held, they were still young when the face's batch (which pauses the
collector while it makes its lists) returned, and the collections they then set off ran inside
the next timed call, ids per line (sentencepiece paid them inside its batch instead).

Each figure is the best of ``--repeat`` rounds, a round being one process of each library in turn
(so a busy machine slows both alike); the ids of both are checked identical. The one-thread calls
are timed in CPU time of the process (``time.process_time``), which other work on a loaded machine
disturbs less than wall time; ``batch`` on every core in wall time. Printed: MB/s of each and the
ratio (sentencepiece's time / the face's; above 1 the face is faster).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def _best(f, repeat: int, clock=time.process_time) -> float:
    times = []
    for _ in range(repeat):
        t = clock()
        f()
        times.append(clock() - t)
    return min(times)


def worker(which: str, model: str, corpus: str, repeat: int) -> None:
    """Runs in its own process: times the calls and prints one JSON line."""
    sys.path.insert(0, str(HERE))
    from corpora import corpus_lines

    if which == "face":
        from subwords.compat import sentencepiece as spm
        assert "sentencepiece" not in sys.modules
    else:
        import sentencepiece as spm  # type: ignore[no-redef]
    lines = corpus_lines(corpus)

    def first_pass() -> float:
        fresh = spm.SentencePieceProcessor(model_file=model)
        t = time.process_time()
        fresh.Encode(lines, num_threads=1)
        return time.process_time() - t

    out = {"first_pass": min(first_pass() for _ in range(repeat))}
    sp = spm.SentencePieceProcessor(model_file=model)
    digest = hashlib.sha256(json.dumps(sp.Encode(lines, num_threads=1)).encode()).hexdigest()
    pieces = hashlib.sha256(json.dumps(sp.Encode(lines[::7], out_type=str)).encode()).hexdigest()
    out.update({
        "per_call": _best(lambda: [sp.Encode(l) for l in lines], repeat),
        "per_call_pieces": _best(lambda: [sp.Encode(l, out_type=str) for l in lines], repeat),
        "batch": _best(lambda: sp.Encode(lines), repeat, time.perf_counter),
        "batch_1_thread": _best(lambda: sp.Encode(lines, num_threads=1), repeat),
    })
    # the ids on every core, after the timed calls, are the ones checked
    if hashlib.sha256(json.dumps(sp.Encode(lines)).encode()).hexdigest() != digest:
        raise SystemExit(f"{which}: the ids of a list on every core differ from those on one thread")
    print(json.dumps({"times": out, "ids": digest, "pieces": pieces}))


def _run(which: str, model: str, corpus: str, repeat: int) -> dict:
    r = subprocess.run([sys.executable, __file__, "--worker", which, "--model", model, "--corpus", corpus,
                        "--repeat", str(repeat)], check=False, capture_output=True, text=True)
    if r.returncode != 0:
        raise SystemExit(f"the {which} worker failed:\n{r.stderr[-3000:]}")
    return json.loads(r.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpus", default="english")
    ap.add_argument("--model", default=None)
    ap.add_argument("--model-type", default="unigram", choices=["unigram", "bpe"])
    ap.add_argument("--vocab", type=int, default=8000)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--worker", choices=["face", "sentencepiece"], default=None)
    args = ap.parse_args()
    if args.worker:
        worker(args.worker, args.model, args.corpus, args.repeat)
        return
    sys.path.insert(0, str(HERE))
    from corpora import corpus_lines

    lines = corpus_lines(args.corpus)
    mb = sum(len(l.encode("utf-8")) for l in lines) / 1e6
    with tempfile.TemporaryDirectory() as tmp:
        model = args.model
        if model is None:
            model = str(Path(tmp) / "m.model")
            code = ("import sentencepiece as spm, sys\n"
                    "lines = [l for l in open(sys.argv[1], encoding='utf-8').read().split('\\n') if l.strip()]\n"
                    "spm.SentencePieceTrainer.train(sentence_iterator=iter(lines), model_prefix=sys.argv[2][:-6],"
                    " vocab_size=int(sys.argv[3]), model_type=sys.argv[4], minloglevel=2, num_threads=2,"
                    " max_sentence_length=1 << 16)\n")
            corpus = args.corpus if args.corpus.endswith(".txt") else str(HERE / "corpora" / f"{args.corpus}.txt")
            subprocess.run([sys.executable, "-c", code, corpus, model, str(args.vocab), args.model_type], check=True)
        rounds = [(_run("sentencepiece", model, args.corpus, 1), _run("face", model, args.corpus, 1))
                  for _ in range(args.repeat)]
        sp = {k: rounds[0][0][k] for k in ("ids", "pieces")}
        sp["times"] = {k: min(r[0]["times"][k] for r in rounds) for k in rounds[0][0]["times"]}
        face = {k: rounds[0][1][k] for k in ("ids", "pieces")}
        face["times"] = {k: min(r[1]["times"][k] for r in rounds) for k in rounds[0][1]["times"]}
    if sp["ids"] != face["ids"]:
        raise SystemExit("the face's ids differ from sentencepiece's on this corpus")
    if sp["pieces"] != face["pieces"]:
        raise SystemExit("the face's pieces differ from sentencepiece's on this corpus")
    print(f"corpus {args.corpus}: {len(lines)} lines, {mb:.1f} MB; ids and pieces identical")
    print(f"{'call':18} {'face MB/s':>10} {'sentencepiece MB/s':>19} {'ratio':>6}")
    for k in ("per_call", "per_call_pieces", "batch", "batch_1_thread", "first_pass"):
        t_sp, t_face = sp["times"][k], face["times"][k]
        print(f"{k:18} {mb / t_face:10.1f} {mb / t_sp:19.1f} {t_sp / t_face:6.2f}")


if __name__ == "__main__":
    main()
