"""subwords.extend and subwords.trim: time and what they buy, one run.

* cl100k_base (from the ``bpe-openai`` crate, fetched and cached by ``tests/support/peers.py``)
  extended by ``--new`` tokens on the first ``--mb`` MB of a corpus: seconds, the corpus's
  pieces before and after, and whether the real ``tiktoken`` (loading the written rank file)
  gives the same ids as ours on every line;
* our byte-level BPE: trained to ``--size`` on the first half of the corpus, then extended by
  ``--new`` on the second half, against training ``--size + --new`` on the whole corpus from
  scratch (seconds of each, ratio extend / retrain, and tokens of the second half under each);
* trim of that extended model to the second half's rows: seconds, rows before and after.

    python benchmarks/bench_extend.py [--corpus multilingual] [--mb 2] [--new 1000] [--size 8000]
"""

from __future__ import annotations

import argparse
import gzip
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "support"))


def corpus(name: str, mb: float) -> list[str]:
    p = ROOT / "benchmarks" / "corpora" / f"{name}.txt"
    if not p.exists():
        raise SystemExit(f"no {p}: run python benchmarks/corpora.py first")
    with open(p, encoding="utf-8") as f:
        text = f.read(int(mb * 1e6))
    return [l for l in text[: text.rfind("\n") + 1].splitlines() if l.strip()]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--corpus", default="multilingual")
    ap.add_argument("--mb", type=float, default=2.0)
    ap.add_argument("--new", type=int, default=1000)
    ap.add_argument("--size", type=int, default=8000)
    args = ap.parse_args()

    import peers
    import tiktoken
    from tiktoken.load import load_tiktoken_bpe

    import subwords
    from subwords.formats.tiktoken import CL100K_PATTERN

    lines = corpus(args.corpus, args.mb)
    tmp = Path(tempfile.mkdtemp(prefix="bench-extend-"))
    path = tmp / "cl100k_base.tiktoken"
    path.write_bytes(gzip.decompress(peers.crate_member("bpe-openai", "0.2.1", "data/cl100k_base.tiktoken.gz")))
    tok = subwords.load(path)
    out = tmp / "extended.tiktoken"
    t0 = time.perf_counter()
    ext = subwords.extend(tok, lines, vocab_size=tok.vocab_size + args.new, output=out)
    t_ext = time.perf_counter() - t0
    enc = tiktoken.Encoding("extended", pat_str=CL100K_PATTERN, mergeable_ranks=load_tiktoken_bpe(str(out)),
                            special_tokens={})
    agree = sum(enc.encode(l) == ext.tokenizer.encode(l) for l in lines)
    print(f"cl100k_base + {args.new} on {args.mb} MB {args.corpus}: {t_ext:.2f} s; pieces "
          f"{ext.pieces_before} -> {ext.pieces_after} ({ext.pieces_after / ext.pieces_before:.3f}); "
          f"tiktoken agrees on {agree}/{len(lines)} lines")

    half = len(lines) // 2
    a, b = lines[:half], lines[half:]
    kw = dict(model="bpe", spelling="bytes", pre_split="gpt2")
    base = subwords.train(a, vocab_size=args.size, **kw)
    t0 = time.perf_counter()
    grown = subwords.extend(base, b, vocab_size=base.vocab_size + args.new).tokenizer
    t_grow = time.perf_counter() - t0
    t0 = time.perf_counter()
    fresh = subwords.train(lines, vocab_size=base.vocab_size + args.new, **kw)
    t_fresh = time.perf_counter() - t0
    n = lambda tk: sum(len(x) for x in tk.encode_batch(b))  # noqa: E731
    print(f"ours {base.vocab_size} + {args.new}: extend on the second half {t_grow:.2f} s, retrain on all "
          f"{t_fresh:.2f} s (ratio {t_grow / t_fresh:.2f}); second half's tokens: base {n(base)}, "
          f"extended {n(grown)}, retrained {n(fresh)}")
    t0 = time.perf_counter()
    cut = subwords.trim(grown, b)
    print(f"trim to the second half: {time.perf_counter() - t0:.2f} s, {cut.old_size} -> {cut.new_size} rows")


if __name__ == "__main__":
    main()
