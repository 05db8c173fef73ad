"""tiktoken rank files: subwords vs tiktoken vs rs-bpe, same ranks, same text, one run.

For cl100k_base and o200k_base (OpenAI's rank files, from the ``bpe-openai`` crate, fetched and
cached by ``tests/support/peers.py``) and each corpus in ``benchmarks/corpora`` (english, multilingual,
code; the first ``--mb`` megabytes of each, cut at a line end):

* load: seconds to read the rank file and build the encoder (rs-bpe: its embedded vocabulary);
* single: one ``encode`` of the whole text on one thread, MB/s of UTF-8 input per second of
  process CPU time (the machines are shared; CPU time of a one-thread call is what the
  encoder costs, wall time is what the neighbours allow), best of ``--repeat``, ours each time
  on a newly loaded encoder, as it keeps the words it has merged from call to call;
* batch: ``encode_batch`` of ~16 KB texts on ``--threads`` threads (tiktoken's
  ``encode_ordinary_batch(num_threads=)``, rs-bpe's ``encode_batch_parallel`` with
  ``RAYON_NUM_THREADS``), wall time;

and checks that every encoder gives the very same ids. Ratios are ours / peer.

    python benchmarks/bench_tiktoken.py [--mb 4] [--repeat 3] [--threads 2]
"""

from __future__ import annotations

import argparse
import gzip
import os
import sys
import tempfile
import time
from pathlib import Path

from corpora import line_chunks

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "support"))


def corpus(name: str, mb: float) -> str:
    p = ROOT / "benchmarks" / "corpora" / f"{name}.txt"
    if p.exists():
        with open(p, encoding="utf-8") as f:
            text = f.read(int(mb * 1e6))
        return text[: text.rfind("\n") + 1]
    raise SystemExit(f"no {name}.txt: run python benchmarks/corpora.py first")


def best(fn, repeat: int, clock=time.perf_counter) -> tuple[float, object]:
    times, result = [], None
    for _ in range(repeat):
        t0 = clock()
        result = fn()
        times.append(clock() - t0)
    return min(times), result


def best_cold(make, run, repeat: int, clock=time.perf_counter) -> tuple[float, object]:
    """``best`` of ``run(engine)``, each repeat on an engine just made by ``make`` (untimed). Our
    engine keeps the ids of the words it merged from call to call, which tiktoken and rs-bpe do
    not, so a repeat on the same engine would time a text whose words it has all met."""
    times, result = [], None
    for _ in range(repeat):
        engine = make()
        engine.encode("warm up")  # lazy set-up of a new engine, not the text's words
        t0 = clock()
        result = run(engine)
        times.append(clock() - t0)
    return min(times), result


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mb", type=float, default=4.0, help="megabytes of each corpus (default 4)")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--encodings", default="cl100k_base,o200k_base")
    ap.add_argument("--corpora", default="english,multilingual,code")
    args = ap.parse_args()
    os.environ.setdefault("RAYON_NUM_THREADS", str(args.threads))

    import peers
    import tiktoken
    import tiktoken_ext.openai_public as public
    from rs_bpe.bpe import openai as rs_openai
    from tiktoken.load import load_tiktoken_bpe

    from subwords.formats import tiktoken as tk

    tmp = Path(tempfile.mkdtemp(prefix="bench-tiktoken-"))
    rows = []
    for enc_name in args.encodings.split(","):
        path = tmp / f"{enc_name}.tiktoken"
        path.write_bytes(gzip.decompress(peers.crate_member("bpe-openai", "0.2.1", f"data/{enc_name}.tiktoken.gz")))

        t0 = time.perf_counter()
        ours = tk.load(path)
        load_ours = time.perf_counter() - t0

        t0 = time.perf_counter()
        ranks = load_tiktoken_bpe(str(path))
        original = public.load_tiktoken_bpe
        public.load_tiktoken_bpe = lambda *a, **k: ranks
        spec = getattr(public, enc_name)()
        public.load_tiktoken_bpe = original
        peer = tiktoken.Encoding(enc_name, pat_str=spec["pat_str"], mergeable_ranks=ranks,
                                 special_tokens=spec["special_tokens"])
        load_tt = time.perf_counter() - t0

        t0 = time.perf_counter()
        rs = getattr(rs_openai, enc_name)()
        load_rs = time.perf_counter() - t0
        print(f"\n{enc_name}: load ours {load_ours:.3f}s  tiktoken {load_tt:.3f}s  rs-bpe {load_rs:.3f}s  "
              f"(ours/tiktoken {load_tt / load_ours:.1f}x faster, ours/rs-bpe {load_rs / load_ours:.1f}x)")

        for cname in args.corpora.split(","):
            text = corpus(cname, args.mb)
            nbytes = len(text.encode("utf-8"))
            many = line_chunks(text, 16_000)
            ours.encode(text[:100_000]), peer.encode_ordinary(text[:100_000]), rs.encode(text[:100_000])

            cpu = time.process_time
            s_ours, ids_ours = best_cold(lambda: tk.load(path), lambda e: e.encode(text), args.repeat, cpu)
            s_tt, ids_tt = best(lambda: peer.encode_ordinary(text), args.repeat, cpu)
            s_rs, ids_rs = best(lambda: rs.encode(text), args.repeat, cpu)
            b_ours, bids_ours = best_cold(lambda: tk.load(path), lambda e: e.encode_batch(many, threads=args.threads),
                                          args.repeat)
            b_tt, bids_tt = best(lambda: peer.encode_ordinary_batch(many, num_threads=args.threads), args.repeat)
            b_rs, bids_rs = best(lambda: rs.encode_batch_parallel(many, None)[0], args.repeat)

            same_tt = ids_ours == ids_tt and bids_ours == bids_tt
            same_rs = ids_ours == list(ids_rs) and [list(x) for x in bids_rs] == bids_ours
            if not same_rs:
                first = next((k for k, (x, y) in enumerate(zip(bids_ours, bids_rs)) if x != list(y)), None)
                print(f"  rs-bpe differs: single {ids_ours != list(ids_rs)}, batch texts {len(bids_ours)} vs "
                      f"{len(bids_rs)}, first differing batch text {first}")
            mb = nbytes / 1e6
            row = (enc_name, cname, mb, mb / s_ours, mb / s_tt, mb / s_rs, mb / b_ours, mb / b_tt, mb / b_rs,
                   same_tt, same_rs)
            rows.append(row)
            print(f"  {cname:12s} {mb:5.1f} MB  single: ours {mb / s_ours:6.1f}  tiktoken {mb / s_tt:6.1f}  "
                  f"rs-bpe {mb / s_rs:6.1f} MB/s  (x{s_tt / s_ours:.2f} tiktoken, x{s_rs / s_ours:.2f} rs-bpe)   "
                  f"batch/{args.threads}: ours {mb / b_ours:6.1f}  tiktoken {mb / b_tt:6.1f}  rs-bpe {mb / b_rs:6.1f} "
                  f"(x{b_tt / b_ours:.2f}, x{b_rs / b_ours:.2f})   same ids: tiktoken {same_tt}, rs-bpe {same_rs}")

    print("\n| encoding | corpus | MB | ours 1t | tiktoken 1t | rs-bpe 1t | ours/tiktoken | ours/rs-bpe | "
          f"ours {args.threads}t | tiktoken {args.threads}t | rs-bpe {args.threads}t | same ids (tiktoken, rs-bpe) |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for (e, c, mb, o, t, r, bo, bt, br, st, sr) in rows:
        print(f"| {e} | {c} | {mb:.1f} | {o:.1f} | {t:.1f} | {r:.1f} | {o / t:.2f}x | {o / r:.2f}x | "
              f"{bo:.1f} | {bt:.1f} | {br:.1f} | {st}, {sr} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
