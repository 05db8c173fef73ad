"""Unigram quality and training time against sentencepiece, in one run.

    python benchmarks/bench_unigram_quality.py CORPUS.txt [CORPUS.txt ...] [--vocab 8000,32000]
        [--em plain,bayes,sentencepiece] [--limit-mb N] [--settings matched,defaults]

For every corpus (given by path) the lines are split 90/10 by position (every tenth line is
held out). Each trainer learns on the 90% at each vocabulary size, in a child process of its
own (its wall time, CPU time of all its threads, and peak memory), and then Viterbi-encodes the held-out 10%:
* subwords: `front` spelling (sentencepiece's `▁`), 2 threads, once per `--em` method;
* sentencepiece: Unigram with identity normalization, no splitting by script or number, full
  character coverage and every sentence (so both learn from the same text), 2 threads.
With ``--settings defaults`` each trainer runs on its own defaults instead: subwords' ``sentencepiece``
preset (``nmt_nfkc``, coverage 0.9995, ``em="sentencepiece"``), once with sentencepiece's script
rule (``split_by_script=True``, row ``preset:splits``) and once without (``preset:nosplits``),
against sentencepiece with nothing set but the model type, the size and the threads (its
defaults split by script and number); each then encodes the raw held-out lines, normalizing
them its own way. ``matched,defaults`` runs both groups.
Reported per model: held-out pieces (lower is better) and held-out log-likelihood (higher is
better): the sum over held-out lines of the Viterbi spelling's log-probability, each model's
piece scores first renormalised to sum to 1 over its ordinary pieces (the Bayesian step's
scores, subwords' and sentencepiece's alike, are not normalised, and an unnormalised score
would flatter its model). Unknown pieces count as pieces and add no log-probability, for both.
Training times include each library's own reading of the file (subwords through its Python
API, as sentencepiece's), not the Python start-up.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def cpu_seconds() -> float:
    """User + system CPU time of this process so far, every thread included."""
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def child(kind: str, train: str, held: str, vocab: int, out: str) -> None:
    lines = [l for l in Path(held).read_text(encoding="utf-8").splitlines() if l.strip()]
    start, cpu0 = time.perf_counter(), cpu_seconds()
    if kind.startswith("subwords"):
        import subwords

        em = kind.split(":", 1)[1]
        if em.startswith("preset"):  # subwords' own defaults for this job: the sentencepiece preset,
            # with sentencepiece's script rule on (preset:splits) or off (preset:nosplits)
            tok = subwords.train(Path(train), preset="sentencepiece", vocab_size=vocab, threads=2,
                                 split_by_script=em == "preset:splits")
        else:
            tok = subwords.train(Path(train), model="unigram", spelling="front", vocab_size=vocab, threads=2,
                                 em=em)
        secs, cpu = time.perf_counter() - start, cpu_seconds() - cpu0
        lps = [lp for lp in tok.log_probs]
        z = math.log(sum(math.exp(lp) for lp in lps if lp is not None))
        encoded = tok.encode_batch(lines, threads=2)
        pieces = sum(len(ids) for ids in encoded)
        ll = sum(lps[i] - z for ids in encoded for i in ids if lps[i] is not None and lps[i] != -math.inf)
        unscored = sum(1 for ids in encoded for i in ids if lps[i] is None or lps[i] == -math.inf)
        rows = tok.vocab_size
    else:
        import sentencepiece as spm

        if kind == "sentencepiece:defaults":  # its own defaults, but for the threads
            spm.SentencePieceTrainer.train(input=train, model_prefix=out, model_type="unigram", vocab_size=vocab,
                                           num_threads=2, train_extremely_large_corpus=True, minloglevel=2)
        else:
            spm.SentencePieceTrainer.train(
                input=train, model_prefix=out, model_type="unigram", vocab_size=vocab, character_coverage=1.0,
                normalization_rule_name="identity", split_by_unicode_script=False, split_by_number=False,
                num_threads=2, input_sentence_size=0, max_sentence_length=1 << 20,
                train_extremely_large_corpus=True, minloglevel=2)
        secs, cpu = time.perf_counter() - start, cpu_seconds() - cpu0
        sp = spm.SentencePieceProcessor(model_file=out + ".model")
        n = sp.get_piece_size()
        ordinary = [i for i in range(n) if not (sp.is_unknown(i) or sp.is_control(i) or sp.is_unused(i))]
        z = math.log(sum(math.exp(sp.get_score(i)) for i in ordinary))
        encoded = [sp.encode(l) for l in lines]
        pieces = sum(len(ids) for ids in encoded)
        ll = sum(sp.get_score(i) - z for ids in encoded for i in ids if not sp.is_unknown(i))
        unscored = sum(1 for ids in encoded for i in ids if sp.is_unknown(i))
        rows = n
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps({"seconds": secs, "cpu": cpu, "peak_mb": peak, "rows": rows, "pieces": pieces, "ll": ll,
                      "unscored": unscored}))


def split(corpus: Path, tmp: Path, limit_mb: float | None) -> tuple[Path, Path]:
    """The 90% and the 10% (every tenth line) of the corpus, cut at `limit_mb` MB if given."""
    train, held = tmp / f"{corpus.stem}.train.txt", tmp / f"{corpus.stem}.held.txt"
    budget = None if limit_mb is None else int(limit_mb * 1e6)
    with open(corpus, "rb") as f, open(train, "wb") as t, open(held, "wb") as h:
        for k, line in enumerate(f):
            if budget is not None:
                budget -= len(line)
                if budget < 0:
                    break
            (h if k % 10 == 9 else t).write(line)
    return train, held


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "_child":
        child(sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5]), sys.argv[6])
        return
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("corpora", nargs="+", type=Path)
    ap.add_argument("--vocab", default="8000,32000")
    ap.add_argument("--em", default="plain,bayes,sentencepiece")
    ap.add_argument("--limit-mb", type=float, default=None, help="use only the first N MB of each corpus")
    ap.add_argument("--settings", default="matched", help="matched (both on the same text, the default), "
                    "defaults (subwords' sentencepiece preset against sentencepiece's own defaults), or both "
                    "as matched,defaults")
    a = ap.parse_args()
    settings = [x for x in a.settings.split(",") if x]
    if not settings or set(settings) - {"matched", "defaults"}:
        sys.exit(f"--settings takes matched, defaults or matched,defaults (both), not {a.settings!r}")
    kinds = []
    if "matched" in settings:
        kinds += [f"subwords:{e}" for e in a.em.split(",") if e] + ["sentencepiece"]
    if "defaults" in settings:
        kinds += ["subwords:preset:splits", "subwords:preset:nosplits", "sentencepiece:defaults"]
    print(f"# Unigram quality: subwords vs sentencepiece — {time.strftime('%Y-%m-%d %H:%M')}, "
          f"{os.cpu_count()} cpus, load {os.getloadavg()}")
    print("\n| corpus | vocab | trainer | train s | × sp time | CPU s | × sp CPU | peak MB | held-out pieces "
          "| × sp pieces | held-out log-lik | Δ vs sp | unscored |")
    print("|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    with tempfile.TemporaryDirectory() as tmpdir:
        tmp = Path(tmpdir)
        for corpus in a.corpora:
            if not corpus.is_file():
                sys.exit(f"{corpus}: no such file (pass each corpus by its path)")
            train, held = split(corpus, tmp, a.limit_mb)
            mb = train.stat().st_size / 1e6
            for vocab in (int(v) for v in a.vocab.split(",")):
                results = {}
                for kind in kinds:
                    r = subprocess.run([sys.executable, __file__, "_child", kind, str(train), str(held), str(vocab),
                                        str(tmp / "sp")], capture_output=True, text=True)
                    if r.returncode != 0:
                        print(f"| {corpus.stem} | {vocab} | {kind} | failed: {r.stderr.strip().splitlines()[-1:]} |")
                        continue
                    results[kind] = json.loads(r.stdout.strip().splitlines()[-1])
                for kind, r in results.items():
                    sp = results.get("sentencepiece:defaults" if kind.endswith((":splits", ":nosplits", ":defaults"))
                                     else "sentencepiece")
                    xt = f"{sp['seconds'] / r['seconds']:.2f}×" if sp else ""
                    xc = f"{sp['cpu'] / r['cpu']:.2f}×" if sp else ""
                    xp = f"{r['pieces'] / sp['pieces']:.3f}" if sp else ""
                    dl = f"{r['ll'] - sp['ll']:+.0f}" if sp else ""
                    print(f"| {corpus.stem} ({mb:.1f} MB) | {vocab} | {kind} | {r['seconds']:.2f} | {xt} | "
                          f"{r['cpu']:.2f} | {xc} | {r['peak_mb']:.0f} | {r['pieces']} | {xp} | {r['ll']:.0f} | {dl} | {r['unscored']} |",
                          flush=True)
    print(f"\nload at end: {os.getloadavg()}")


if __name__ == "__main__":
    main()
