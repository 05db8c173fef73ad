#!/usr/bin/env python3
"""Before/after check for a refactoring that must change nothing observable.

    python scripts/before_after.py run OUT_DIR [--encode-text FILE] [--mb 3]
    python scripts/before_after.py compare BEFORE_DIR AFTER_DIR

``run`` trains a fixed set of models with the ``subwords`` the interpreter imports (every
learner on every spelling, byte fallback, two-stage BPE, joints, the pre-splits, BERT's
preset) on the pages' small corpora and on a slice of the Python standard library (as
``subwords quickstart`` does), saves each model file, and writes what each model does with a
few MB of text: encode, encode_batch on 2 threads, offsets, decode, dropout and Unigram's
other segmenters and analysis. A combination the library refuses is recorded with its error
message, so a change in what is refused shows up too.

Run it once with the build before the change and once with the build after it, into two
folders, then ``compare``: every file must be byte-identical. Nothing here is a golden file:
both sides are produced by the builds being compared, never by the code under test alone.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import sys
import sysconfig
from pathlib import Path

# the pages' corpora (000 = BPE, 002 = Unigram, 003 = WordPiece)
PAGES = {
    "four": {"low": 5, "lower": 2, "newest": 6, "widest": 3},
    "hug": {"hug": 10, "pug": 5, "pun": 12, "bun": 4, "hugs": 5},
}


def stdlib_text(limit: int) -> list[str]:
    """The first `limit` bytes of the standard library's top-level sources, sorted by name."""
    root = Path(sysconfig.get_paths()["stdlib"])
    lines: list[str] = []
    size = 0
    for p in sorted(root.glob("*.py")):
        for line in p.read_text(encoding="utf-8", errors="replace").splitlines():
            lines.append(line)
            size += len(line) + 1
            if size >= limit:
                return lines
    return lines


def configs() -> list[tuple[str, str, dict]]:
    """(name, corpus, train keyword arguments)."""
    out = []
    for corpus in ("four", "hug", "stdlib"):
        small = corpus != "stdlib"
        for model in ("bpe", "wordpiece", "unigram", "word"):
            for spelling in ("end", "continuation", "front", "bytes"):
                size = 30 if small else 1200
                if model == "unigram" and small:
                    size = 20
                kw = dict(model=model, spelling=spelling, vocab_size=size)
                if spelling == "bytes" and small:
                    kw["vocab_size"] = 270
                if spelling == "continuation" and corpus == "stdlib":
                    kw["mark"] = "··"
                out.append((f"{corpus}-{model}-{spelling}", corpus, kw))
                if spelling != "bytes" and model != "word":
                    fb = dict(kw, byte_fallback=True, vocab_size=kw["vocab_size"] + (0 if small else 256))
                    out.append((f"{corpus}-{model}-{spelling}-fallback", corpus, fb))
        out.append((f"{corpus}-bpe-front-twostage", corpus,
                    dict(model="bpe", spelling="front", vocab_size=30 if small else 1200, superword_at=20 if small else 900)))
        out.append((f"{corpus}-bpe-bytes-twostage", corpus,
                    dict(model="bpe", spelling="bytes", vocab_size=280 if small else 1300, superword_at=270 if small else 1000)))
        out.append((f"{corpus}-bpe-end-joints", corpus,
                    dict(model="bpe", spelling="end", vocab_size=30 if small else 1200,
                         joints={"lower": ["low", "er"], "newest": ["new", "est"], "import": ["im", "port"],
                                 "return": ["re", "turn"]})))
        out.append((f"{corpus}-bpe-continuation-joints-fallback", corpus,
                    dict(model="bpe", spelling="continuation", vocab_size=300 if small else 1500, byte_fallback=True,
                         mark="··" if not small else None,
                         joints={"lower": ["low", "er"], "import": ["im", "port"], "self": ["se", "lf"]})))
        out.append((f"{corpus}-bpe-bytes-gpt2", corpus, dict(model="bpe", spelling="bytes", pre_split="gpt2",
                                                              vocab_size=280 if small else 1300)))
        out.append((f"{corpus}-wordpiece-bert", corpus, dict(preset="bert", vocab_size=40 if small else 1200)))
        out.append((f"{corpus}-unigram-front-fallback-shrink", corpus,
                    dict(model="unigram", spelling="front", vocab_size=20 if small else 1000, byte_fallback=True,
                         shrink=0.5, em_rounds=3)))
        # the other EM methods, sentencepiece's script rule, and a seed cap that cuts the seed
        for em in ("bayes", "sentencepiece"):
            out.append((f"{corpus}-unigram-front-{em}", corpus,
                        dict(model="unigram", spelling="front", vocab_size=20 if small else 1000, em=em)))
            out.append((f"{corpus}-unigram-front-{em}-seed-cap", corpus,
                        dict(model="unigram", spelling="front", vocab_size=20 if small else 1000, em=em,
                             seed_size=40 if small else 3000)))
        out.append((f"{corpus}-unigram-front-sentencepiece-scripts", corpus,
                    dict(model="unigram", spelling="front", vocab_size=20 if small else 1000, em="sentencepiece",
                         split_by_script=True)))
    return out


def digest(obj) -> str:
    return hashlib.sha256(json.dumps(obj, ensure_ascii=False).encode()).hexdigest()


def behaviour(tok, texts: list[str], units: list[str]) -> dict:
    """What the model does with the texts (kept as digests: the ids of MBs of text are long)."""
    b: dict = {}

    def attempt(key, f):
        try:
            b[key] = f()
        except Exception as e:  # recorded, compared like any other result
            b[key] = f"{type(e).__name__}: {e}"

    def each(f, ts):
        """f on every text, a refused text recorded by its error."""
        got = []
        for t in ts:
            try:
                got.append(f(t))
            except Exception as e:
                got.append(f"{type(e).__name__}: {e}")
        return digest(got)

    attempt("encode", lambda: each(tok.encode, texts))
    # a batch fails as a whole on one refused text: batches hold the texts encode() takes
    good = [t for t in texts if not _refused(tok, t)]
    attempt("batch2", lambda: digest(tok.encode_batch(good, threads=2)))
    attempt("batch1", lambda: digest(tok.encode_batch(good[:500], threads=1)))
    attempt("offsets", lambda: each(tok.encode_with_offsets, texts[:2000]))
    attempt("decode", lambda: each(lambda t: tok.decode(tok.encode(t)), texts[:2000]))
    attempt("normalize", lambda: each(tok.normalize, texts[:2000]))
    attempt("count_pieces", lambda: tok.count_pieces(texts[:2000]))
    if tok.model == "bpe":
        attempt("dropout", lambda: each(lambda t: tok.encode(t, dropout=0.1, seed=7), texts[:2000]))
    if tok.model == "unigram":
        attempt("fewest", lambda: each(lambda t: tok.encode(t, segmenter="fewest"), texts[:1000]))
        attempt("sample", lambda: each(lambda t: tok.encode(t, segmenter="sample", seed=3, alpha=0.5), texts[:1000]))
        attempt("sample_nbest", lambda: each(lambda t: tok.encode(t, segmenter="sample", seed=3, nbest=4), texts[:500]))
        for u in units:
            attempt(f"lattice {u}", lambda: digest(tok.lattice(u)))
            attempt(f"nbest {u}", lambda: digest(tok.nbest(u, 5)))
            attempt(f"fewest {u}", lambda: tok.fewest(u))
            attempt(f"sample {u}", lambda: tok.sample(u, seed=11, alpha=0.3))
            attempt(f"prob {u}", lambda: tok.unit_log_probability(u))
        attempt("losses", lambda: digest(list(tok.losses(good[:300]).items())))
    return b


def _refused(tok, text: str) -> bool:
    try:
        tok.encode(text)
    except Exception:
        return True
    return False


# models that also encode the large text (--big-mb), once one by one and once as a batch
BIG = ("stdlib-bpe-end", "stdlib-bpe-bytes-gpt2", "stdlib-bpe-front-twostage", "stdlib-unigram-front",
       "stdlib-wordpiece-bert", "stdlib-wordpiece-continuation-fallback", "stdlib-word-end")


def run(out: Path, encode_text: Path | None, mb: float, big_mb: float) -> None:
    import subwords

    out.mkdir(parents=True, exist_ok=True)
    stdlib = stdlib_text(400_000)
    if encode_text is not None:
        raw = encode_text.read_bytes()[: int(max(mb, big_mb) * 1e6)].decode("utf-8", errors="ignore")
        lines = raw.splitlines()
    else:
        lines = stdlib_text(int(max(mb, big_mb) * 1e6))
    lines = [t for t in lines if t.strip()]
    texts, size = [], 0
    for t in lines:
        if size >= mb * 1e6:
            break
        texts.append(t)
        size += len(t.encode()) + 1
    units = ["lowest", "hugs", "import", "self", "widest"]
    summary: dict = {}
    for name, corpus, kw in configs():
        data = PAGES[corpus] if corpus in PAGES else stdlib
        kw = {k: v for k, v in kw.items() if v is not None}
        try:
            tok = subwords.train(data, **kw)
        except Exception as e:
            summary[name] = f"refused: {type(e).__name__}: {e}"
            continue
        (out / f"{name}.json").write_text(tok.to_json(), encoding="utf-8")
        summary[name] = behaviour(tok, texts, units)
        if name in BIG and big_mb > 0:
            summary[name]["big encode"] = digest([tok.encode(t) if not _refused(tok, t) else None for t in lines])
            summary[name]["big batch"] = digest(tok.encode_batch([t for t in lines if not _refused(tok, t)], threads=2))
        print(name, file=sys.stderr)
    (out / "behaviour.json").write_text(json.dumps(summary, indent=1, ensure_ascii=False, sort_keys=True) + "\n",
                                        encoding="utf-8")


def compare(a: Path, b: Path) -> int:
    names = sorted({p.name for p in a.iterdir()} | {p.name for p in b.iterdir()})
    bad = 0
    for n in names:
        x, y = a / n, b / n
        if not x.exists() or not y.exists():
            print(f"only in one folder: {n}")
            bad += 1
        elif x.read_bytes() != y.read_bytes():
            print(f"differs: {n}")
            bad += 1
    print(f"{len(names)} files, {bad} differ")
    return 1 if bad else 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run")
    r.add_argument("out", type=Path)
    r.add_argument("--encode-text", type=Path, help="UTF-8 text to encode (default: the standard library)")
    r.add_argument("--mb", type=float, default=0.5, help="megabytes of it every model encodes (default 0.5)")
    r.add_argument("--big-mb", type=float, default=4.0, help="megabytes a few models encode (default 4)")
    c = sub.add_parser("compare")
    c.add_argument("before", type=Path)
    c.add_argument("after", type=Path)
    a = ap.parse_args()
    if a.cmd == "run":
        run(a.out, a.encode_text, a.mb, a.big_mb)
        return 0
    return compare(a.before, a.after)


if __name__ == "__main__":
    sys.exit(main())
