"""SentencePiece `.model` files: subwords against sentencepiece on the very same file, as ratios.

    python benchmarks/bench_sentencepiece.py [--corpus english] [--vocab 32000] [--repeat 3]

Models (every one is encoded by both libraries from the same bytes, ids checked identical):

* ``sp-unigram``: a Unigram model trained by sentencepiece on the corpus (nmt_nfkc, its defaults);
* ``sp-bpe``: a BPE model trained by sentencepiece on the corpus (byte fallback);
* ``subwords-unigram``: subwords' own Unigram model of the same size, exported as `.model`;
* ``subwords-native``: the same vocabulary encoded by subwords' own Unigram tokenizer (its
  Viterbi with DESIGN's tie rules and its unit cache) against sentencepiece on the exported file;
  "ids" compares the exported file's encodings (they can differ only by reordering tied pieces);
* ``mistral-v1``: Mistral's Llama-style BPE (32k, byte fallback) from the ``mistral-common``
  wheel on PyPI (fetched, not committed).

Encoding is timed three ways on the corpus lines: one call per line (`encode(text)`), one
batch call on one thread, and one batch call on two threads. Each measurement is the best of
``--repeat`` runs, the libraries alternating, so a busy machine hurts both alike. Load time is
the time to read the file into a ready tokenizer.
"""

from __future__ import annotations

import argparse
import io
import json
import sys
import time
from pathlib import Path

from corpora import best, corpus_lines

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests" / "support"))


def speeds(sp, ours, lines: list[str], mb: float, repeat: int) -> dict:
    """MB/s of both on one call per line, one batch on one thread and one on two; the two
    libraries alternate and each keeps its best of ``repeat``."""
    out = {}
    for mode, f_sp, f_ours in (
        ("per_call", lambda: [sp.encode(l) for l in lines], lambda: [ours.encode(l) for l in lines]),
        ("batch_1_thread", lambda: sp.encode(lines, num_threads=1), lambda: ours.encode_batch(lines, threads=1)),
        ("batch_2_threads", lambda: sp.encode(lines, num_threads=2), lambda: ours.encode_batch(lines, threads=2)),
    ):
        t_sp, t_ours = [], []
        for _ in range(repeat):
            t_sp.append(best(f_sp, 1))
            t_ours.append(best(f_ours, 1))
        out[mode] = {"subwords_MBps": mb / min(t_ours), "sentencepiece_MBps": mb / min(t_sp), "ratio": min(t_sp) / min(t_ours)}
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpus", default="english")
    ap.add_argument("--vocab", type=int, default=32000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--models", default="sp-unigram,sp-bpe,subwords-unigram,mistral-v1")
    args = ap.parse_args()

    import sentencepiece as spm

    import subwords
    from subwords.formats import sentencepiece as S
    from subwords.formats._sp_export import model_bytes

    lines = corpus_lines(args.corpus)
    mb = sum(len(l.encode("utf-8")) + 1 for l in lines) / 1e6
    print(f"corpus {args.corpus}: {len(lines)} lines, {mb:.1f} MB", file=sys.stderr)

    def sp_train(**kw) -> bytes:
        buf = io.BytesIO()
        spm.SentencePieceTrainer.train(sentence_iterator=iter(lines), model_writer=buf, vocab_size=args.vocab,
                                       minloglevel=2, num_threads=2, max_sentence_length=1 << 16, **kw)
        return buf.getvalue()

    models: dict[str, bytes] = {}
    native = None
    wanted = args.models.split(",")
    for name in wanted:
        print(f"building {name}", file=sys.stderr)
        if name == "sp-unigram":
            models[name] = sp_train(model_type="unigram")
        elif name == "sp-bpe":
            models[name] = sp_train(model_type="bpe", byte_fallback=True)
        elif name == "subwords-unigram":
            tok = subwords.train(lines, model="unigram", spelling="front", vocab_size=args.vocab, byte_fallback=True, threads=2)
            models[name] = model_bytes(tok)
            native = tok
        elif name == "mistral-v1":
            import peers

            models[name] = peers.pypi_member("mistral-common==1.13.1", "data/tokenizer.model.v1")

    results = []
    for name, data in models.items():
        load_sp = best(lambda: spm.SentencePieceProcessor(model_proto=data), args.repeat)
        load_ours = best(lambda: S.from_bytes(data), args.repeat)
        sp = spm.SentencePieceProcessor(model_proto=data)
        ours = S.from_bytes(data)
        same = sp.encode(lines) == ours.encode_batch(lines)
        row = {"model": name, "pieces": ours.vocab_size, "kind": ours.model, "identical_ids": same,
               "load_ms": {"subwords": load_ours * 1e3, "sentencepiece": load_sp * 1e3}}
        row.update(speeds(sp, ours, lines, mb, args.repeat))
        results.append(row)
        print(json.dumps(row), file=sys.stderr)
        if name == "subwords-unigram" and native is not None:
            # subwords' own Viterbi (f64, DESIGN's tie rules, unit cache) on the same vocabulary
            tok = native
            mine, theirs = tok.encode_batch(lines), sp.encode(lines)
            differ = sum(a != b for a, b in zip(mine, theirs))
            print(f"subwords-native: {differ} of {len(lines)} lines differ (tied pieces reordered)", file=sys.stderr)
            row = {"model": "subwords-native", "pieces": tok.vocab_size, "kind": "unigram",
                   "identical_ids": differ == 0, "lines_differing": differ, "load_ms": {"subwords": 0.0, "sentencepiece": load_sp * 1e3}}
            row.update(speeds(sp, tok, lines, mb, args.repeat))
            results.append(row)
            print(json.dumps(row), file=sys.stderr)

    print(f"\nSentencePiece models on {args.corpus} ({mb:.1f} MB, {len(lines)} lines); MB/s, best of {args.repeat}; "
          "ratio = subwords speed / sentencepiece speed")
    print(f"{'model':18} {'kind':8} {'ids':5} {'per call':>22} {'batch, 1 thread':>22} {'batch, 2 threads':>22} {'load ms':>16}")
    for r in results:
        cells = [f"{r[m]['subwords_MBps']:5.1f} vs {r[m]['sentencepiece_MBps']:5.1f} ({r[m]['ratio']:.2f}x)"
                 for m in ("per_call", "batch_1_thread", "batch_2_threads")]
        load = f"{r['load_ms']['subwords']:.0f} vs {r['load_ms']['sentencepiece']:.0f}"
        print(f"{r['model']:18} {r['kind']:8} {'same' if r['identical_ids'] else 'DIFF':5} "
              + " ".join(f"{c:>22}" for c in cells) + f" {load:>16}")
    out = HERE / "out"
    out.mkdir(exist_ok=True)
    (out / f"bench_sentencepiece-{args.corpus}-{time.strftime('%Y%m%d-%H%M%S')}.json").write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
