"""Encoding OpenAI's cl100k_base and o200k_base: subwords against every installable encoder.

Peers (each one that imports; one that does not is reported as not installed): tiktoken,
fastokens, tokie, riptoken, wordchipper, kitoken, rs-bpe, bpe-openai, tokenizers. Rank files come
from the ``bpe-openai`` crate (``tests/support/peers.py`` fetches and caches it, as
``bench_tiktoken.py`` does). tokie and tokenizers read a ``tokenizer.json``, written from the rank
file by ``peers.rank_tokenizer_json``; ``subwords-json`` is our own engine on that same file.

Modes (the text: about ``--mb`` MB of whole lines taken at an even stride over each corpus of
``benchmarks/corpora``; see ``corpora.py``):

* ``lines``: one ``encode`` call per line, on one CPU;
* ``16k``: one call per ~16 KB chunk of lines, on one CPU;
* ``batch``: every 16 KB chunk in one batch call on ``--threads`` threads (wall time);
* ``prompt``: single-call latency on ~100-token prompts (``--prompts`` texts of about 400 bytes
  cut at line ends), in microseconds per call, on one CPU.

Each library runs in its own process (``--worker``), pinned to one CPU for the one-thread modes
(``os.sched_setaffinity``). Each timed pass gets a freshly made encoder (made, then one warm-up
call on a short unrelated string, untimed), so a word cache carries nothing from one pass into
the next. One-thread modes are timed in process CPU time, the batch in wall time; best of
``--repeat``. Each worker returns a digest of every id it gave; a library whose digest differs
from tiktoken's on a cell is marked ``≠`` there and left out of the best.

Our own BPE models (``--own ROWS``): a byte-level BPE model of subwords (``spelling="bytes"``,
the o200k pre-split, ``ROWS`` rows) trained on the text the run measures (its lines of every
corpus), saved in our own format and exported as a ``tokenizer.json`` (``export(tok, path,
"hf")``). ``subwords`` encodes with the model itself, ``subwords-json`` and the peers that read a
``tokenizer.json`` (tokenizers, tokie, fastokens) with the exported file; the ids are checked
against tokenizers' (it runs whether listed or not). A peer that cannot read the file is
reported with the reason. ``--encodings ""`` measures the own model alone.

    python benchmarks/bench_encode_peers.py [--mb 4] [--repeat 3] [--rounds 1] [--threads 2]
        [--encodings cl100k_base,o200k_base] [--corpora english,multilingual,code]
        [--modes lines,16k,batch,prompt] [--libs subwords,tiktoken,...] [--own 32000]
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import os
import subprocess
import sys
import tempfile
import time
from array import array
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(ROOT / "tests" / "support"))

LIBS = ["subwords", "subwords-json", "tiktoken", "fastokens", "tokie", "riptoken", "wordchipper", "kitoken",
        "rs-bpe", "bpe-openai", "tokenizers"]
MODULES = {"subwords": "subwords", "subwords-json": "subwords", "tiktoken": "tiktoken", "fastokens": "fastokens",
           "tokie": "tokie", "riptoken": "riptoken", "wordchipper": "wordchipper", "kitoken": "kitoken",
           "rs-bpe": "rs_bpe", "bpe-openai": "bpe_openai", "tokenizers": "tokenizers"}
DISTS = {"subwords-json": "subwords", "rs-bpe": "rs-bpe", "bpe-openai": "bpe-openai"}
MODES = ["lines", "16k", "batch", "prompt"]
OURS = ("subwords", "subwords-json")
# the libraries that read a tokenizer.json, for our own models (tokenizers the reference)
OWN_LIBS = ("tokenizers", "subwords", "subwords-json", "tokie", "fastokens")
# why the others cannot encode our own models
OWN_WHY = {"tiktoken": "reads rank files only, and a BPE model is a merges list",
           "riptoken": "reads rank files only", "wordchipper": "reads OpenAI's named vocabularies only",
           "kitoken": "measured here on rank files only", "rs-bpe": "ships OpenAI's vocabularies only",
           "bpe-openai": "ships OpenAI's vocabularies only"}


def is_own(enc: str) -> bool:
    return enc.startswith("own-")


def reference(enc: str) -> str:
    """The library whose ids are the reference: tiktoken on rank files, tokenizers on our models."""
    return "tokenizers" if is_own(enc) else "tiktoken"


def possessive(name: str) -> str:
    return name + ("'" if name.endswith("s") else "'s")


def train_own(work: Path, enc: str, rows: int, corpora: list[str]) -> None:
    """Our byte-level BPE model of ``rows`` rows, trained on the run's lines of every corpus,
    saved as ``{enc}.model`` and exported as ``{enc}.json``."""
    import subwords
    from subwords.formats import export

    lines = [l for c in corpora for l in json.loads((work / f"{c}.json").read_text(encoding="utf-8"))["lines"]]
    t0 = time.perf_counter()
    tok = subwords.train(lines, vocab_size=rows, spelling="bytes", pre_split="o200k")
    print(f"{enc}: trained on {len(lines)} lines in {time.perf_counter() - t0:.1f} s")
    tok.save(str(work / f"{enc}.model"))
    export(tok, str(work / f"{enc}.json"), "hf")


# ---------------------------------------------------------------------------------------------
# inputs


def rank_file(work: Path, enc: str) -> Path:
    import peers

    p = work / f"{enc}.tiktoken"
    if not p.exists():
        p.write_bytes(gzip.decompress(peers.crate_member("bpe-openai", "0.2.1", f"data/{enc}.tiktoken.gz")))
    return p


def spec(enc: str, ranks: dict[bytes, int]) -> dict:
    """tiktoken's own pattern and special tokens for ``enc`` (nothing fetched)."""
    import peers

    return peers.tiktoken_spec(enc, ranks)


def onig_pattern(pattern: str) -> str:
    """tiktoken's patterns for the regex engines of tokenizers (Oniguruma): a possessive interval
    ``{1,3}+`` reads there as "repeat the interval", so it is written without the ``+``."""
    return pattern.replace("{1,3}+", "{1,3}")


def texts(corpus: str, mb: float, prompts: int) -> dict[str, list[str]]:
    """Lines spread over the corpus (``mb`` MB of them), its 16 KB chunks, and prompts."""
    from corpora import corpus_lines, line_chunks

    lines = corpus_lines(corpus)
    total = sum(len(l.encode("utf-8")) + 1 for l in lines)
    stride = max(1, int(total / (mb * 1e6)))
    picked = lines[::stride]
    chunks = line_chunks("".join(l + "\n" for l in picked), 16_000)
    prompt_texts, cur = [], ""
    for l in picked:
        cur += l + "\n"
        if len(cur.encode("utf-8")) >= 400:
            prompt_texts.append(cur)
            cur = ""
            if len(prompt_texts) == prompts:
                break
    return {"lines": picked, "16k": chunks, "batch": chunks, "prompt": prompt_texts}


# ---------------------------------------------------------------------------------------------
# one library in its own process


def ours(make, threads: int):
    """:func:`maker`'s triple for one of our loaders (every subwords tokenizer encodes alike)."""
    return make, lambda e: e.encode, lambda e, b: e.encode_batch(b, threads=threads)


def hf_tokenizers(path: Path):
    """:func:`maker`'s triple for tokenizers on a tokenizer.json (no special tokens added)."""
    import tokenizers

    def make():
        return tokenizers.Tokenizer.from_file(str(path))

    def one(e):
        f = e.encode
        return lambda t: f(t, add_special_tokens=False).ids

    return make, one, lambda e, b: [x.ids for x in e.encode_batch(b, add_special_tokens=False)]


def maker(lib: str, enc: str, work: Path, threads: int):
    """(make, encode one text -> ids, encode a batch -> list of ids) for ``lib``."""
    if is_own(enc):
        return own_maker(lib, enc, work, threads)
    path = rank_file(work, enc)
    if lib == "subwords":
        from subwords.formats import tiktoken as tk

        return ours(lambda: tk.load(path), threads)
    if lib == "subwords-json":
        import subwords

        return ours(lambda: subwords.load(work / f"{enc}.json"), threads)
    import peers

    ranks = peers.tiktoken_ranks(path.read_bytes())
    sp = spec(enc, ranks)
    if lib == "tiktoken":
        import tiktoken

        def make():
            return tiktoken.Encoding(enc, pat_str=sp["pat_str"], mergeable_ranks=ranks,
                                     special_tokens=sp["special_tokens"])

        return make, lambda e: e.encode_ordinary, lambda e, b: e.encode_ordinary_batch(b, num_threads=threads)
    if lib == "fastokens":
        import fastokens

        def make():
            return fastokens.Tokenizer.from_tiktoken(str(path), pattern=sp["pat_str"],
                                                     special_tokens=sp["special_tokens"])

        def one(e):
            f = e.encode_ordinary
            return lambda t: f(t).ids

        return make, one, lambda e, b: [x.ids for x in e.encode_batch(b)]
    if lib == "tokie":
        import tokie

        def make():
            return tokie.Tokenizer.from_json(str(work / f"{enc}.json"))

        def one(e):
            f = e.encode
            return lambda t: f(t, False).ids

        return make, one, lambda e, b: [x.ids for x in e.encode_batch(b, False)]
    if lib == "tokenizers":
        return hf_tokenizers(work / f"{enc}.json")
    if lib == "riptoken":
        import riptoken

        def make():
            return riptoken.CoreBPE(ranks, sp["special_tokens"], sp["pat_str"])

        return make, lambda e: e.encode_ordinary, lambda e, b: e.encode_ordinary_batch(b)
    if lib == "wordchipper":
        import wordchipper

        def make():
            return wordchipper.Tokenizer.from_pretrained(enc)

        return make, lambda e: e.encode, lambda e, b: e.encode_batch(b)
    if lib == "kitoken":
        import kitoken

        def make():
            return kitoken.Kitoken.from_tiktoken_file(str(path))

        return make, lambda e: e.encode, lambda e, b: e.encode_all(b)
    if lib == "rs-bpe":
        from rs_bpe.bpe import openai as rs

        def make():
            return getattr(rs, enc)()

        return make, lambda e: e.encode, lambda e, b: e.encode_batch_parallel(b, None)[0]
    if lib == "bpe-openai":
        import bpe_openai

        def make():
            return bpe_openai.get_encoding(enc)

        return make, lambda e: e.encode_ordinary, lambda e, b: e.encode_ordinary_batch(b, num_threads=threads)
    raise SystemExit(f"unknown library {lib!r}")


def own_maker(lib: str, enc: str, work: Path, threads: int):
    """:func:`maker` for our own model ``enc``: the model file itself, or its tokenizer.json."""
    import subwords

    path = work / f"{enc}.json"
    if lib == "subwords":
        return ours(lambda: subwords.load(work / f"{enc}.model"), threads)
    if lib == "subwords-json":
        return ours(lambda: subwords.load(path), threads)
    if lib == "tokenizers":
        return hf_tokenizers(path)
    if lib == "tokie":
        import tokie

        def make():
            return tokie.Tokenizer.from_json(str(path))

        def one(e):
            f = e.encode
            return lambda t: f(t, False).ids

        return make, one, lambda e, b: [x.ids for x in e.encode_batch(b, False)]
    if lib == "fastokens":
        import fastokens

        def make():
            return fastokens.Tokenizer.from_file(str(path))

        def one(e):
            f = e.encode
            return lambda t: f(t).ids

        return make, one, lambda e, b: [x.ids for x in e.encode_batch(b)]
    raise SystemExit(f"{lib} cannot encode our own model: {OWN_WHY.get(lib, 'no tokenizer.json reader')}")


def digest(results) -> str:
    h = hashlib.sha256()
    for ids in results:
        a = array("I", list(ids))
        h.update(len(a).to_bytes(8, "little"))
        h.update(a.tobytes())
    return h.hexdigest()[:16]


def worker(args) -> int:
    work = Path(args.work)
    data = json.loads((work / f"{args.corpus}.json").read_text(encoding="utf-8"))
    batch = data[args.mode]
    if args.mode != "batch":
        os.sched_setaffinity(0, {max(os.sched_getaffinity(0))})
    make, one, many = maker(args.worker, args.encoding, work, args.threads)
    nbytes = sum(len(t.encode("utf-8")) for t in batch)
    clock = time.perf_counter if args.mode == "batch" else time.process_time
    best, out = float("inf"), None
    for _ in range(args.repeat):
        e = make()
        f = one(e)
        f("warm up, 123")
        if args.mode == "batch":
            t0 = clock()
            out = many(e, batch)
            dt = clock() - t0
        else:
            t0 = clock()
            out = [f(t) for t in batch]
            dt = clock() - t0
        best = min(best, dt)
    value = best / len(batch) * 1e6 if args.mode == "prompt" else nbytes / 1e6 / best
    print(json.dumps({"value": value, "digest": digest(out), "tokens": sum(len(x) for x in out)}))
    return 0


# ---------------------------------------------------------------------------------------------
# the driver


def version(lib: str) -> str | None:
    from importlib import metadata

    try:
        __import__(MODULES[lib])
    except ImportError:
        return None
    try:
        return metadata.version(DISTS.get(lib, lib))
    except metadata.PackageNotFoundError:
        return "?"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mb", type=float, default=4.0)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--rounds", type=int, default=1,
                    help="the libraries take turns this many times per cell; each keeps its best round")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--prompts", type=int, default=2000)
    ap.add_argument("--encodings", default="cl100k_base,o200k_base")
    ap.add_argument("--corpora", default="english,multilingual,code")
    ap.add_argument("--modes", default=",".join(MODES))
    ap.add_argument("--libs", default=",".join(LIBS))
    ap.add_argument("--work", help="a folder for the rank files and texts (default: a new temporary one)")
    ap.add_argument("--own", type=int, default=0, metavar="ROWS",
                    help="also measure a byte-level BPE model of ours with ROWS rows, trained on the measured text")
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    ap.add_argument("--encoding", help=argparse.SUPPRESS)
    ap.add_argument("--corpus", help=argparse.SUPPRESS)
    ap.add_argument("--mode", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        return worker(args)

    os.environ["RAYON_NUM_THREADS"] = os.environ["RAYON_RS_NUM_THREADS"] = str(args.threads)
    os.environ["TOKENIZERS_PARALLELISM"] = "true"
    work = Path(args.work or tempfile.mkdtemp(prefix="bench-encode-peers-"))
    work.mkdir(parents=True, exist_ok=True)
    libs, modes = args.libs.split(","), args.modes.split(",")
    versions = {}
    for lib in libs:
        v = version(lib)
        if v is None:
            print(f"{lib}: not installed (pip install -c constraints.txt -r benchmarks/requirements.txt)")
        else:
            versions[lib] = v
    libs = [l for l in libs if l in versions]
    encodings = [e for e in args.encodings.split(",") if e]
    if encodings and "tiktoken" not in libs:
        raise SystemExit("tiktoken is the reference for the ids: install it")
    if args.own:
        if version("tokenizers") is None:
            raise SystemExit("tokenizers is the reference for our own model's ids: install it")
        versions["tokenizers"] = version("tokenizers")
    # wordchipper reads OpenAI's files from its cache folder only: give it these
    os.environ["WORDCHIPPER_CACHE_DIR"] = str(work / "wordchipper")

    corpora = args.corpora.split(",")
    for c in corpora:
        (work / f"{c}.json").write_text(json.dumps(texts(c, args.mb, args.prompts)), encoding="utf-8")
    import peers

    results: dict[tuple, dict] = {}
    if args.own:
        encodings.append(f"own-{args.own}")
    for enc in encodings:
        if is_own(enc):
            train_own(work, enc, args.own, corpora)
            run = [l for l in OWN_LIBS if l in libs or l == "tokenizers"]
            for l in libs:
                if l not in OWN_LIBS:
                    print(f"  {enc}: {l} left out: it {OWN_WHY.get(l, 'reads no tokenizer.json')}")
            measure(results, enc, corpora, modes, run, work, args)
            table(results, enc, corpora, modes, run, versions)
            continue
        path = rank_file(work, enc)
        ranks = peers.tiktoken_ranks(path.read_bytes())
        sp = spec(enc, ranks)
        (work / f"{enc}.json").write_text(json.dumps(peers.rank_tokenizer_json(ranks, onig_pattern(sp["pat_str"]),
                                                                    sp["special_tokens"])), encoding="utf-8")
        d = work / "wordchipper" / "openai" / enc
        d.mkdir(parents=True, exist_ok=True)
        (d / f"{enc}.tiktoken").write_bytes(path.read_bytes())
        measure(results, enc, corpora, modes, libs, work, args)
        table(results, enc, corpora, modes, libs, versions)
    return 0


def measure(results, enc, corpora, modes, libs, work, args) -> None:
    """Every library on every corpus and mode of ``enc``, each in its own worker process; the
    reference library first, so that the others' ids are checked against its. With ``--rounds``
    the libraries take turns, round after round, and each keeps its best round: a slow spell of
    a shared machine then falls on every library alike rather than on one library's passes."""
    ref = reference(enc)
    for c in corpora:
        for m in modes:
            for _ in range(args.rounds):
                for lib in [ref] + [l for l in libs if l != ref]:
                    cmd = [sys.executable, __file__, "--worker", lib, "--encoding", enc, "--corpus", c, "--mode",
                           m, "--work", str(work), "--repeat", str(args.repeat), "--threads", str(args.threads)]
                    r = subprocess.run(cmd, capture_output=True, text=True, check=False)
                    if r.returncode != 0:
                        err = (r.stderr.strip().splitlines() or ["?"])[-1]
                        print(f"  {enc} {c} {m} {lib}: failed: {err[:200]}", flush=True)
                        continue
                    res = json.loads(r.stdout.strip().splitlines()[-1])
                    res["same"] = res["digest"] == results.get((enc, c, m, ref), res)["digest"]
                    unit = "us/call" if m == "prompt" else "MB/s"
                    print(f"  {enc} {c:12s} {m:6s} {lib:13s} {res['value']:8.2f} {unit}"
                          f"{'' if res['same'] else f'  ids differ from {ref}'}", flush=True)
                    best = results.get((enc, c, m, lib))
                    if best is None or not res["same"] or (
                            res["value"] < best["value"] if m == "prompt" else res["value"] > best["value"]):
                        results[(enc, c, m, lib)] = dict(res, same=res["same"] and (best or res)["same"])


def table(results, enc, corpora, modes, libs, versions) -> None:
    cols = [(m, c) for m in modes for c in corpora]
    print(f"\n**{enc}**: MB/s (prompt: µs per call, lower is better); ≠: ids differ from {possessive(reference(enc))}\n")
    print("| | " + " | ".join(f"{m} {c[:5]}" for m, c in cols) + " |")
    print("|---|" + "---:|" * len(cols))
    for lib in libs:
        name = lib if lib in OURS else f"{lib} {versions[lib]}"
        cells = []
        for m, c in cols:
            r = results.get((enc, c, m, lib))
            cells.append("—" if r is None else f"{r['value']:.1f}{'' if r['same'] else ' ≠'}")
        print(f"| {name} | " + " | ".join(cells) + " |")
    for ours in OURS:
        if ours not in libs:
            continue
        cells = []
        for m, c in cols:
            mine = results.get((enc, c, m, ours))
            peers_ = [r["value"] for (e, cc, mm, l), r in results.items()
                      if (e, cc, mm) == (enc, c, m) and l not in OURS and r["same"]]
            if mine is None or not peers_:
                cells.append("—")
                continue
            if m == "prompt":
                cells.append(f"{min(peers_) / mine['value']:.2f}×")
            else:
                cells.append(f"{mine['value'] / max(peers_):.2f}×")
        print(f"| **{ours} ÷ best** | " + " | ".join(cells) + " |")
    print()


if __name__ == "__main__":
    sys.exit(main())
