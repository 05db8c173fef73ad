"""LiteToken and StochasTok (docs/METHODS.md): time and what they do, one run.

* LiteToken (``subwords.trim(..., litetoken=True)``) on cl100k_base and o200k_base as loaded from
  their rank files (the ``bpe-openai`` crate, fetched and cached by ``tests/support/peers.py``)
  and on our own byte-level BPE trained to ``--size`` rows on the training part of the corpora:
  seconds (the cut alone, the rank file already loaded), residues found, removed and kept
  (protected), and the corpus lines whose ids changed; then tokens per byte before and after on
  the held-out part of English, multilingual and code (``benchmarks/corpora.py``).
* StochasTok against BPE-dropout at the same p on our model and the multilingual held-out text:
  tokens per byte, the share of ids split (StochasTok: (pieces after - pieces before) / pieces
  before; the rate asked is p), and the distribution of the pieces' lengths in bytes.

Each corpus is cut into a training part (the lines whose index is not 0 mod 10) and a held-out
part (every tenth line), each up to ``--mb`` MB. Our model is trained on the three training
parts; the LiteToken corpus is ``--lines`` lines, a third from the start of each training part.

    python benchmarks/bench_methods.py [--lines 10000] [--size 32000] [--p 0.1] [--mb 3] [--json FILE]
"""

from __future__ import annotations

import argparse
import gzip
import json
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "support"))

CORPORA = ("english", "multilingual", "code")


def lines_of(name: str) -> list[str]:
    p = ROOT / "benchmarks" / "corpora" / f"{name}.txt"
    if not p.exists():
        raise SystemExit(f"no {p}: run python benchmarks/corpora.py --only english,multilingual,code first")
    return [l for l in p.read_text(encoding="utf-8").split("\n") if l.strip()]


def split(lines: list[str], mb: float) -> tuple[list[str], list[str]]:
    """(training part, held-out part): every tenth line is held out; each part is cut at ``mb`` MB."""
    def cap(part: list[str]) -> list[str]:
        out, size = [], 0
        for l in part:
            size += len(l.encode("utf-8")) + 1
            if size > mb * 1e6:
                break
            out.append(l)
        return out
    return cap([l for k, l in enumerate(lines) if k % 10]), cap([l for k, l in enumerate(lines) if k % 10 == 0])


def tokens_per_byte(tok, texts: list[str]) -> float:
    ids = tok.encode_batch(texts)
    return sum(map(len, ids)) / sum(len(t.encode("utf-8")) for t in texts)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--lines", type=int, default=10_000, help="LiteToken's corpus: lines from each corpus")
    ap.add_argument("--size", type=int, default=32_000, help="our model's rows")
    ap.add_argument("--p", type=float, default=0.1, help="StochasTok's and BPE-dropout's p")
    ap.add_argument("--mb", type=float, default=3.0, help="MB of each corpus's training part, and of its held-out part")
    ap.add_argument("--json", default=None, help="also write the results here")
    args = ap.parse_args()

    import peers

    import subwords

    train, held = {}, {}
    for name in CORPORA:
        train[name], held[name] = split(lines_of(name), args.mb)
    # the LiteToken corpus: the same number of lines from each corpus, mixed
    cut_corpus = [l for name in CORPORA for l in train[name][: args.lines // len(CORPORA)]]
    tmp = Path(tempfile.mkdtemp(prefix="bench-methods-"))
    models = {}
    for name in ("cl100k_base", "o200k_base"):
        path = tmp / f"{name}.tiktoken"
        path.write_bytes(gzip.decompress(peers.crate_member("bpe-openai", "0.2.1", f"data/{name}.tiktoken.gz")))
        models[name] = subwords.load(path)
    t0 = time.perf_counter()
    ours = subwords.train([l for name in CORPORA for l in train[name]], vocab_size=args.size, spelling="bytes",
                          pre_split="gpt2")
    print(f"our byte-level BPE, {ours.vocab_size} rows: trained in {time.perf_counter() - t0:.1f} s", flush=True)
    models[f"ours {args.size // 1000}k"] = ours

    results: dict = {"litetoken": {}, "stochastok": {}}
    print(f"\nLiteToken on {len(cut_corpus):,} lines ({args.lines // len(CORPORA):,} of each of {', '.join(CORPORA)})")
    print(f"{'model':>12} {'seconds':>8} {'rows':>8} {'found':>6} {'removed':>8} {'protected':>9} {'lines changed':>14}   "
          + "   ".join(f"{n} t/B before -> after" for n in CORPORA))
    for name, tok in models.items():
        best = None
        for _ in range(3):
            t0 = time.perf_counter()
            cut = subwords.trim(tok, cut_corpus, litetoken=True)
            s = time.perf_counter() - t0
            best = s if best is None else min(best, s)
        rep = cut.litetoken
        before = {n: tokens_per_byte(tok, held[n]) for n in CORPORA}
        after = {n: tokens_per_byte(cut.tokenizer, held[n]) for n in CORPORA}
        found = len(rep.residues) + len(rep.protected)
        results["litetoken"][name] = dict(seconds=best, rows=cut.old_size, found=found, removed=len(rep.residues),
                                          protected=len(rep.protected), lines=rep.lines, lines_changed=rep.lines_changed,
                                          before=before, after=after)
        print(f"{name:>12} {best:8.2f} {cut.old_size:8,} {found:6,} {len(rep.residues):8,} {len(rep.protected):9,} "
              f"{rep.lines_changed:6,} ({rep.lines_changed / rep.lines:5.1%})   "
              + "   ".join(f"{before[n]:.4f} -> {after[n]:.4f}" + " " * 10 for n in CORPORA), flush=True)

    texts = held["multilingual"]
    exact = ours.encode_batch(texts)
    nbytes = sum(len(t.encode("utf-8")) for t in texts)
    n0 = sum(map(len, exact))
    rows = ours.rows  # printed bytes: one character a byte

    def lengths(batch: list[list[int]]) -> Counter:
        return Counter(min(len(rows[i]), 8) for ids in batch for i in ids)

    def show(c: Counter) -> str:
        total = sum(c.values())
        return " ".join(f"{k if k < 8 else '8+'}:{c[k] / total:5.1%}" for k in range(1, 9))

    t0 = time.perf_counter()
    st = ours.encode_batch(texts, stochastok=args.p, seed=1)
    t_st = time.perf_counter() - t0
    t0 = time.perf_counter()
    dr = [ours.encode(t, dropout=args.p, seed=1 + k) for k, t in enumerate(texts)]
    t_dr = time.perf_counter() - t0
    assert [ours.decode(ids) for ids in st] == [ours.decode(ids) for ids in exact]
    print(f"\nStochasTok vs BPE-dropout, p = {args.p}, our {args.size // 1000}k model, {len(texts):,} held-out "
          f"multilingual lines ({nbytes:,} bytes)")
    print(f"{'':>12} {'pieces':>10} {'t/B':>7} {'growth':>7} {'seconds':>8}   piece length in bytes (8: 8 or more)")
    for label, batch, secs in (("exact", exact, None), ("stochastok", st, t_st), ("dropout", dr, t_dr)):
        n = sum(map(len, batch))
        c = lengths(batch)
        results["stochastok"][label] = dict(pieces=n, tokens_per_byte=n / nbytes, growth=(n - n0) / n0, seconds=secs,
                                            lengths={str(k): v for k, v in sorted(c.items())})
        print(f"{label:>12} {n:10,} {n / nbytes:7.4f} {(n - n0) / n0:7.1%} "
              f"{'' if secs is None else f'{secs:8.2f}':>8}   {show(c)}")
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
