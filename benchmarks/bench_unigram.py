"""Unigram side by side: subwords against sentencepiece and tokenizers, in one run, as ratios.

    python benchmarks/bench_unigram.py [--corpus large] [--vocab 32000]
        [--only subwords:plain,subwords:sentencepiece,subwords:sentencepiece:splits,sentencepiece,
                sentencepiece:splits,tokenizers]

Each trainer runs in a child process (its own peak memory) on the same file, `▁` spelling, the
same size. ``sentencepiece`` runs on matched settings, as in ``bench_bpe.py`` and
``bench_unigram_quality.py``: identity normalization, full character coverage, and no cuts at
script or digit boundaries (``split_by_unicode_script=False``, ``split_by_number=False``), so all
three learn from the same text. ``sentencepiece:splits`` keeps sentencepiece's own cuts (its
defaults): no piece may then cross a change of Unicode script or a digit boundary. That is a
smaller problem (on code, where ``self.x(`` mixes Latin and Common characters, far fewer
candidate pieces), so that row is a different task; ``subwords:METHOD:splits`` is subwords on
the same task (``split_by_script=True``, sentencepiece's rule), and
``--only subwords:sentencepiece:splits,sentencepiece:splits`` compares the two. Time is wall and CPU (user + system, every thread) of the training
call alone, after reading the held-out file; ratios are against the first subwords row. Speed is not allowed to hide quality, so each model is also measured
on held-out text: the log-likelihood of its Viterbi segmentation per word (higher is better)
and pieces per word (lower is shorter), as emitted and with each run of unknown pieces counted
once (``runs_as_one``: the libraries differ there by convention, not by vocabulary). Encoding: each model Viterbi-encodes the held-out text
on one thread with its own vocabulary (same size; loading one library's vocabulary into another
is the interoperability issue's work).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
CORPORA = HERE / "corpora"


def corpus_path(name: str) -> Path:
    p = Path(name)
    return p if p.suffix == ".txt" and p.exists() else CORPORA / f"{name}.txt"


def cpu_seconds() -> float:
    """User + system CPU time of this process so far, every thread included."""
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def runs_as_one(ids, is_unknown) -> int:
    """The pieces of one encoding with each run of unknown pieces counted once. sentencepiece (and
    tokenizers' Unigram) emit one unknown piece for a run of unknown characters, subwords one a
    character; on held-out text with characters the training never saw (``heldout.txt`` mixes every
    corpus's sources) the raw counts then differ by that convention alone."""
    n, prev = 0, False
    for i in ids:
        u = is_unknown(i)
        n += not (u and prev)
        prev = u
    return n


def child(kind: str, corpus: str, vocab: int, out: str, held: str) -> None:
    lines = [l for l in Path(held).read_text(encoding="utf-8").splitlines() if l.strip()]
    words = sum(len(l.split()) for l in lines)
    start, cpu0 = time.perf_counter(), cpu_seconds()
    if kind.startswith("subwords"):
        import subwords

        parts = kind.split(":")
        em = parts[1] if len(parts) > 1 else "plain"
        if parts[2:] not in ([], ["splits"]):
            raise SystemExit(f"unknown trainer {kind!r}: subwords[:plain|bayes|sentencepiece[:splits]]")
        splits = parts[2:] == ["splits"]
        tok = subwords.train(Path(corpus), model="unigram", spelling="front", vocab_size=vocab, threads=2, em=em,
                             split_by_script=splits)
        secs, cpu = time.perf_counter() - start, cpu_seconds() - cpu0
        lp = tok.log_probs
        t = time.perf_counter()
        encoded = [tok.encode(l) for l in lines]
        enc = time.perf_counter() - t
        ll = sum(lp[i] for ids in encoded for i in ids if lp[i] is not None)
        pieces = sum(len(ids) for ids in encoded)
        unk = tok.special_tokens.get("[UNK]")
        runs = sum(runs_as_one(ids, lambda i: i == unk) for ids in encoded)
        rows = tok.vocab_size
    elif kind in ("sentencepiece", "sentencepiece:splits"):
        import sentencepiece as spm

        cuts = kind == "sentencepiece:splits"
        spm.SentencePieceTrainer.train(input=corpus, model_prefix=out, model_type="unigram", vocab_size=vocab,
                                       character_coverage=1.0, normalization_rule_name="identity",
                                       split_by_unicode_script=cuts, split_by_number=cuts,
                                       num_threads=2, input_sentence_size=0, max_sentence_length=1 << 20,
                                       train_extremely_large_corpus=True, minloglevel=2)
        secs, cpu = time.perf_counter() - start, cpu_seconds() - cpu0
        sp = spm.SentencePieceProcessor(model_file=out + ".model")
        t = time.perf_counter()
        encoded = [sp.encode(l) for l in lines]
        enc = time.perf_counter() - t
        ll = sum(sp.get_score(i) for ids in encoded for i in ids if not sp.is_unknown(i))
        pieces = sum(len(ids) for ids in encoded)
        runs = sum(runs_as_one(ids, sp.is_unknown) for ids in encoded)
        rows = sp.get_piece_size()
    elif kind == "tokenizers":
        from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

        tok = Tokenizer(models.Unigram())
        tok.pre_tokenizer = pre_tokenizers.Metaspace()
        tok.decoder = decoders.Metaspace()
        trainer = trainers.UnigramTrainer(vocab_size=vocab, special_tokens=["<unk>"], unk_token="<unk>",
                                          show_progress=False)
        tok.train([corpus], trainer)
        secs, cpu = time.perf_counter() - start, cpu_seconds() - cpu0
        scores = dict(json.loads(tok.to_str())["model"]["vocab"])
        t = time.perf_counter()
        encoded = [tok.encode(l).tokens for l in lines]
        enc = time.perf_counter() - t
        ll = sum(scores.get(p, 0.0) for toks in encoded for p in toks)
        pieces = sum(len(toks) for toks in encoded)
        runs = sum(runs_as_one(toks, lambda p: p == "<unk>") for toks in encoded)
        rows = tok.get_vocab_size()
    else:
        raise SystemExit(f"unknown trainer {kind!r}: subwords[:plain|bayes|sentencepiece[:splits]], sentencepiece, "
                         "sentencepiece:splits or tokenizers")
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    mb = sum(len(l.encode()) for l in lines) / 1e6
    print(json.dumps({"seconds": secs, "cpu": cpu, "peak_mb": peak, "rows": rows, "ll_per_word": ll / words,
                      "pieces_per_word": pieces / words,
                      "runs_per_word": runs / words, "encode_mb_s": mb / enc}))


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "_child":
        child(*sys.argv[2:4], int(sys.argv[4]), *sys.argv[5:7])
        return
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", default="large")
    ap.add_argument("--heldout", default="heldout")
    ap.add_argument("--vocab", type=int, default=32000)
    ap.add_argument("--only", default="subwords,sentencepiece,sentencepiece:splits,tokenizers",
                    help="trainers; subwords:METHOD picks the EM method (subwords alone: plain)")
    a = ap.parse_args()
    corpus, held = corpus_path(a.corpus), corpus_path(a.heldout)
    print(f"# Unigram: subwords vs sentencepiece vs tokenizers — {time.strftime('%Y-%m-%d %H:%M')}, {os.cpu_count()} cpus")
    print(f"training corpus {corpus.name} ({corpus.stat().st_size / 1e6:.1f} MB), vocab {a.vocab}; "
          f"held-out {held.name}; load {os.getloadavg()}")
    results = {}
    with tempfile.TemporaryDirectory() as tmp:
        for kind in a.only.split(","):
            r = subprocess.run([sys.executable, __file__, "_child", kind, str(corpus), str(a.vocab),
                                str(Path(tmp, kind)), str(held)], capture_output=True, text=True)
            if r.returncode != 0:
                print(f"{kind}: failed: {r.stderr.strip().splitlines()[-1:]}")
                continue
            results[kind] = json.loads(r.stdout.strip().splitlines()[-1])
    # ratios against the first subwords row
    ours = next((r for k, r in results.items() if k.startswith("subwords")), None)
    print("\n| trainer | wall s | × time | CPU s | × CPU | peak MB | × RSS | rows | held-out log-lik/word | pieces/word "
          "| pieces/word, unknown runs as one | Viterbi MB/s |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for kind, r in results.items():
        xt = f"{r['seconds'] / ours['seconds']:.2f}×" if ours else ""
        xc = f"{r['cpu'] / ours['cpu']:.2f}×" if ours else ""
        xm = f"{r['peak_mb'] / ours['peak_mb']:.2f}×" if ours else ""
        print(f"| {kind} | {r['seconds']:.2f} | {xt} | {r['cpu']:.2f} | {xc} | {r['peak_mb']:.0f} | {xm} | {r['rows']} | "
              f"{r['ll_per_word']:.3f} | {r['pieces_per_word']:.3f} | "
              f"{r['runs_per_word']:.3f} | {r['encode_mb_s']:.1f} |")
    print(f"\nload at end: {os.getloadavg()}")


if __name__ == "__main__":
    main()
