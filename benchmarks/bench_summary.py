#!/usr/bin/env python3
"""Every ratio against the peers, in one run: the benchmarks below, one after another, on the
same machine, each printing its own table with the peers measured beside subwords.

    python benchmarks/bench_summary.py [--corpora english,multilingual,code,large] [--vocab 32000]
        [--quality-vocab 8000,32000] [--log summary.log]

Per corpus (a name under benchmarks/corpora, built by ``python benchmarks/corpora.py``):
* BPE training, ``front`` against sentencepiece and ``bytes`` against tokenizers
  (``bench_bpe.py --skip-encode``): time, peak memory, ratios;
* WordPiece training against tokenizers (``bench_wordpiece.py --train-only``);
* Unigram training time and quality against sentencepiece, 90/10 split, at each
  ``--quality-vocab`` (``bench_unigram_quality.py --em plain,sentencepiece``: the default method
  and the one the ``sentencepiece`` preset uses): time, CPU time, peak memory, held-out pieces,
  held-out log-likelihood.
Once: encoding modes, load times and batch scaling against sentencepiece, tokenizers,
tiktoken and subword-nmt (``bench_encode_load.py``), and cl100k_base and o200k_base encoded by
every installable encoder on the corpora but ``large`` (``bench_encode_peers.py``).

Each part runs as its own process (so one part's memory does not weigh on the next); its output
is printed as it comes and also written to ``--log``. A part that fails is reported with its exit
status and the run goes on, so one missing peer does not lose the rest of an hour's run; the
exit status is then 1. On the 2-core machine of benchmarks/README.md the four corpora take
several hours: ``--corpora english`` takes about a quarter of an hour.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def parts(corpora: list[str], vocab: int, quality_vocab: str) -> list[tuple[str, list[str]]]:
    out = []
    for c in corpora:
        path = HERE / "corpora" / f"{c}.txt"
        out += [
            (f"BPE training on {c}", ["bench_bpe.py", "--corpus", c, "--vocab", str(vocab), "--skip-encode",
                                      "--only", "ours-front,sentencepiece,ours-bytes,tokenizers"]),
            (f"WordPiece training on {c}", ["bench_wordpiece.py", "--corpus", c, "--vocab", str(vocab), "--train-only"]),
            (f"Unigram training and quality on {c}", ["bench_unigram_quality.py", str(path), "--vocab", quality_vocab,
                                                      "--em", "plain,sentencepiece"]),
        ]
    out.append(("Encoding, load time and batch scaling", ["bench_encode_load.py", "--vocab", str(vocab)]))
    small = [c for c in corpora if c != "large"]
    if small:
        out.append(("Encoding OpenAI's vocabularies against every installable encoder",
                    ["bench_encode_peers.py", "--corpora", ",".join(small)]))
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--corpora", default="english,multilingual,code,large")
    ap.add_argument("--vocab", type=int, default=32000)
    ap.add_argument("--quality-vocab", default="8000,32000")
    ap.add_argument("--log", type=Path, default=Path("bench_summary.log"))
    a = ap.parse_args()
    corpora = [c for c in a.corpora.split(",") if c]
    missing = [c for c in corpora if not (HERE / "corpora" / f"{c}.txt").exists()]
    if missing:
        ap.error(f"corpora not built: {', '.join(missing)}; run python benchmarks/corpora.py --only {','.join(missing)}")
    failed = []
    with open(a.log, "w", encoding="utf-8") as log:
        def say(line: str) -> None:
            print(line, flush=True)
            log.write(line + "\n")
            log.flush()

        for title, cmd in parts(corpora, a.vocab, a.quality_vocab):
            say(f"\n## {title}\n\n    python benchmarks/{' '.join(cmd)}\n")
            start = time.perf_counter()
            with subprocess.Popen([sys.executable, str(HERE / cmd[0]), *cmd[1:]], stdout=subprocess.PIPE,
                                  stderr=subprocess.STDOUT, text=True) as p:
                assert p.stdout is not None
                for line in p.stdout:
                    say(line.rstrip("\n"))
            if p.returncode != 0:
                failed.append(title)
                say(f"\n(this part failed with exit status {p.returncode})")
            say(f"\n({title}: {time.perf_counter() - start:.0f} s)")
        if failed:
            say("\nFailed parts: " + "; ".join(failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
