"""WordPiece side by side: subwords against tokenizers, in one run, printed as ratios.

    python benchmarks/bench_wordpiece.py [--corpus large] [--encode-corpus english] [--whitespace]

`--whitespace` trains both on whitespace-split words only (no BERT pre-split): every word is a
unit, words that begin with `##` included (WordPiece on any text).

Training: ours (`model="wordpiece"`, the score-driven learner, BERT's pre-split) against
tokenizers' WordPieceTrainer (which is BPE with a `##` prefix) at the same size. Each trainer
runs in a child process, so its peak memory is its own.

Encoding: our vocabulary handed to tokenizers' WordPiece model with the same pre-split (BERT's
punctuation split, CJK ideographs isolated by its BertNormalizer, nothing else normalized), so
the two must give identical ids; then single-thread throughput of each on the same text.
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


def child(kind: str, corpus: str, vocab: int, out: str, whitespace: bool = False) -> None:
    """Runs one training in this (child) process and prints a JSON line."""
    start, cpu0 = time.perf_counter(), time.process_time()
    if kind == "ours":
        import subwords

        tok = subwords.train(Path(corpus), model="wordpiece", pre_split=None if whitespace else "bert",
                             vocab_size=vocab, threads=2)
        tok.save(out)
        rows = tok.vocab_size
    else:
        from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, trainers

        tok = Tokenizer(models.WordPiece(unk_token="[UNK]"))
        tok.normalizer = normalizers.BertNormalizer(clean_text=False, handle_chinese_chars=True,
                                                    strip_accents=False, lowercase=False)
        tok.pre_tokenizer = pre_tokenizers.WhitespaceSplit() if whitespace else pre_tokenizers.BertPreTokenizer()
        if whitespace:
            tok.normalizer = None
        trainer = trainers.WordPieceTrainer(vocab_size=vocab, special_tokens=["[UNK]"], show_progress=False)
        tok.train([corpus], trainer)
        tok.save(out)
        rows = tok.get_vocab_size()
    secs, cpu = time.perf_counter() - start, time.process_time() - cpu0
    ru = resource.getrusage(resource.RUSAGE_SELF)
    peak = ru.ru_maxrss / 1024
    # cpu: the training call and the save (every thread, imports included); process: the whole child
    print(json.dumps({"seconds": secs, "cpu": cpu, "process_cpu": ru.ru_utime + ru.ru_stime, "peak_mb": peak,
                      "rows": rows}))


def run_child(kind: str, corpus: Path, vocab: int, out: Path, whitespace: bool = False) -> dict:
    r = subprocess.run([sys.executable, __file__, "_child", kind, str(corpus), str(vocab), str(out)]
                       + (["whitespace"] if whitespace else []),
                       capture_output=True, text=True, check=True)
    return json.loads(r.stdout.strip().splitlines()[-1])


def best_rate(fn, texts: list[str], mb: float, repeat: int) -> tuple[float, object]:
    best, out = 0.0, None
    for _ in range(repeat):
        t = time.perf_counter()
        out = fn(texts)
        best = max(best, mb / (time.perf_counter() - t))
    return best, out


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "_child":
        child(sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5], whitespace=sys.argv[6:] == ["whitespace"])
        return
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", default="large")
    ap.add_argument("--encode-corpus", default="english")
    ap.add_argument("--vocab", type=int, default=32000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--whitespace", action="store_true", help="whitespace-split words only, no BERT pre-split")
    ap.add_argument("--train-only", action="store_true", help="the training table only")
    a = ap.parse_args()
    corpus = corpus_path(a.corpus)
    print(f"# WordPiece: subwords vs tokenizers — {time.strftime('%Y-%m-%d %H:%M')}, {os.cpu_count()} cpus")
    print(f"training corpus {corpus.name} ({corpus.stat().st_size / 1e6:.1f} MB), vocab {a.vocab}; load {os.getloadavg()}")
    with tempfile.TemporaryDirectory() as tmp:
        ours_file, theirs_file = Path(tmp, "ours.json"), Path(tmp, "theirs.json")
        ours = run_child("ours", corpus, a.vocab, ours_file, a.whitespace)
        theirs = run_child("tokenizers", corpus, a.vocab, theirs_file, a.whitespace)
        print("pre-split:", "whitespace only" if a.whitespace else "BERT")
        # CPU time first: on a shared machine the wall seconds move with the load, the CPU seconds much less
        print("\n| trainer | cpu s | × cpu | whole child cpu s | × cpu (child) | wall s | × time | peak MB | × RSS | rows |\n"
              "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
        for name, r in (("subwords (score-driven WordPiece)", ours), ("tokenizers WordPieceTrainer", theirs)):
            print(f"| {name} | {r['cpu']:.2f} | {r['cpu'] / ours['cpu']:.2f}× | {r['process_cpu']:.2f} | "
                  f"{r['process_cpu'] / ours['process_cpu']:.2f}× | {r['seconds']:.2f} | "
                  f"{r['seconds'] / ours['seconds']:.2f}× | {r['peak_mb']:.0f} | "
                  f"{r['peak_mb'] / ours['peak_mb']:.2f}× | {r['rows']} |")
        print(f"load after: {os.getloadavg()}")
        if a.train_only:
            return

        import subwords
        from tokenizers import Tokenizer, models, normalizers, pre_tokenizers

        tok = subwords.load(ours_file)
        vocab = {p: i for i, p in enumerate(tok.rows)}
        hf = Tokenizer(models.WordPiece(vocab, unk_token="[UNK]", max_input_chars_per_word=100))
        hf.normalizer = normalizers.BertNormalizer(clean_text=False, handle_chinese_chars=True,
                                                   strip_accents=False, lowercase=False)
        hf.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
        lines = [l for l in corpus_path(a.encode_corpus).read_text(encoding="utf-8").splitlines() if l.strip()]
        docs = ["\n".join(lines[i:i + 200]) for i in range(0, len(lines), 200)]
        mb = sum(len(d.encode()) for d in docs) / 1e6
        ours_rate, ours_ids = best_rate(lambda ds: [tok.encode(d) for d in ds], docs, mb, a.repeat)
        hf_rate, hf_ids = best_rate(lambda ds: [e.ids for e in hf.encode_batch(ds, add_special_tokens=False)]
                                    if False else [hf.encode(d, add_special_tokens=False).ids for d in ds], docs, mb, a.repeat)
        same = sum(x == y for x, y in zip(ours_ids, hf_ids))
        print(f"\nEncoding {a.encode_corpus} ({mb:.1f} MB, {len(docs)} chunks), one thread, our vocabulary in both:")
        print(f"\n| encoder | MB/s | × ours | identical chunks |\n|---|---:|---:|---:|")
        print(f"| subwords (LinMaxMatch) | {ours_rate:.1f} | 1.00× | {same}/{len(docs)} |")
        print(f"| tokenizers WordPiece | {hf_rate:.1f} | {ours_rate / hf_rate:.2f}× | |")
        # a vocabulary made by tokenizers' own BERT trainer, loaded as vocab.txt by both
        from tokenizers import BertWordPieceTokenizer

        bert_train = BertWordPieceTokenizer(lowercase=True)
        bert_train.train([str(corpus_path(a.encode_corpus))], vocab_size=a.vocab, show_progress=False)
        bert_train.save_model(tmp)
        ours_bert = subwords.bert(Path(tmp, "vocab.txt"))
        theirs_bert = BertWordPieceTokenizer(str(Path(tmp, "vocab.txt")), lowercase=True)
        ob_rate, ob_ids = best_rate(lambda ds: [ours_bert.encode(d) for d in ds], docs, mb, a.repeat)
        tb_rate, tb_ids = best_rate(lambda ds: [theirs_bert.encode(d).ids for d in ds], docs, mb, a.repeat)
        same_b = sum(x == y for x, y in zip(ob_ids, tb_ids))
        print(f"| subwords.bert (tokenizers' BERT vocab.txt, uncased) | {ob_rate:.1f} | 1.00× | {same_b}/{len(docs)} |")
        print(f"| tokenizers BertWordPieceTokenizer (same vocab.txt) | {tb_rate:.1f} | {ob_rate / tb_rate:.2f}× | |")
        print(f"\nload at end: {os.getloadavg()}")
        if same != len(docs):
            for x, y, d in zip(ours_ids, hf_ids, docs):
                if x != y:
                    i = next(k for k in range(min(len(x), len(y))) if x[k] != y[k]) if x[:len(y)] != y[:len(x)] else min(len(x), len(y))
                    print("first difference:", [tok.id_to_piece(t) for t in x[max(0, i - 3):i + 3]],
                          [tok.id_to_piece(t) for t in y[max(0, i - 3):i + 3]])
                    break


if __name__ == "__main__":
    main()
