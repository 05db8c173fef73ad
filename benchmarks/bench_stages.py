"""Where one training or one encoding spends its instructions, stage by stage (callgrind).

    python benchmarks/bench_stages.py JOB[,JOB...] [--corpora english,multilingual] [--vocab 32000]
        [--train-mb 0] [--mb 1] [--work DIR] [--reuse] [--functions N]

Each job runs in a fresh Python process under ``valgrind --tool=callgrind`` on one thread
(``threads=1``, ``RAYON_NUM_THREADS=1``), so its counts do not depend on the machine's load. A
stage is the inclusive count of the core's functions that do it (sums and differences of a few
named functions, listed in ``STAGES`` below), in millions and per byte of input. The floor is a
rough estimate of what the stage must do at least, from the input's bytes, lines, ids,
whitespace-separated words, distinct words and their characters; "× floor" is the stage over it.

Jobs:

* ``train-wordpiece``: ``subwords.train(path, model="wordpiece", pre_split="bert")``, then
  ``to_json``;
* ``train-unigram``, ``train-unigram-sp``: ``model="unigram", spelling="front"`` with the page's
  EM (``em="plain"``) and with ``em="sentencepiece"``, then ``to_json``;
* ``train-bpe-front``, ``train-bpe-bytes``: ``model="bpe"`` with ``spelling="front"``, and with
  ``spelling="bytes", pre_split="gpt2"``, then ``to_json``;
* ``encode-bpe``, ``encode-wordpiece``, ``encode-unigram``: a model of ours trained (outside
  callgrind) on the whole corpus with ``--vocab`` rows (BPE ``front``, WordPiece with the BERT
  pre-split, Unigram ``front``), saved as JSON, loaded, and the first ``--mb`` MB of the corpus's
  lines encoded one ``encode(line)`` call per line into lists, a fresh model;
* ``encode-model``: a Unigram model trained the same way with ``byte_fallback=True``, written as
  a sentencepiece ``.model`` file and read by ``subwords.load`` (the ``.model`` reader), the same
  lines;
* ``encode-o200k``, ``encode-cl100k``: OpenAI's rank file (the copy in the ``bpe-openai`` crate,
  as ``bench_encode_peers.py`` takes it) read by the rank engine, the same lines; with ``-16k``
  (``encode-o200k-16k``), one call per ~16 KB chunk of those lines, the peers benchmark's
  ``16k`` cell. Both runs make one short call first, as ``bench_encode_peers.py`` does before
  it times a pass (the vocabulary's id objects made once), so it is not counted.

An encoding job runs twice, with and without the encode calls: "the call" is the whole
difference less the core's stages (Python's loop, the argument read, the list built).

A training reads the whole corpus, or its first ``--train-mb`` MB; ``--mb`` cuts what the
encoders encode. Callgrind files are kept in ``--work`` (``JOB.CORPUS.VOCAB.out``); ``--reuse``
reads them again instead of running, and ``--functions N`` prints each job's N largest core functions (inclusive), to find
the names a new stage needs.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
CORE = "_core.abi3.so"

TRAIN = {
    "train-wordpiece": {"model": "wordpiece", "pre_split": "bert"},
    "train-unigram": {"model": "unigram", "spelling": "front", "em": "plain"},
    "train-unigram-sp": {"model": "unigram", "spelling": "front", "em": "sentencepiece"},
    "train-bpe-front": {"model": "bpe", "spelling": "front"},
    "train-bpe-bytes": {"model": "bpe", "spelling": "bytes", "pre_split": "gpt2"},
}
ENCODE = {
    # job: (the model trained for it, its file's suffix)
    "encode-bpe": ({"model": "bpe", "spelling": "front"}, ".json"),
    "encode-wordpiece": ({"model": "wordpiece", "pre_split": "bert"}, ".json"),
    "encode-unigram": ({"model": "unigram", "spelling": "front"}, ".json"),
    "encode-model": ({"model": "unigram", "spelling": "front", "byte_fallback": True}, ".model"),
}
# job: (the rank file's encoding, whether the texts are ~16 KB chunks of the lines)
RANK = {f"encode-{enc}{tail}": (f"{enc}_base", tail == "-16k")
        for enc in ("o200k", "cl100k") for tail in ("", "-16k")}


def texts(job: str, lines_path: str) -> list[str]:
    """What an encoding job encodes, one call a text: the lines, or ~16 KB chunks of them."""
    with open(lines_path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    if job in RANK and RANK[job][1]:
        from corpora import line_chunks

        return line_chunks("".join(l + "\n" for l in lines), 16_000)
    return lines


def child(job: str, corpus: str, model: str, lines_path: str, vocab: int, encode: bool,
          lib: str) -> None:
    """Runs under callgrind: one training, or one model loaded and (if `encode`) its encoding."""
    import subwords

    if job in TRAIN:
        tok = subwords.train(Path(corpus), vocab_size=vocab, threads=1, **TRAIN[job])
        tok.to_json()
        return
    lines = texts(job, lines_path)
    if job in RANK:
        # made and called as bench_encode_peers.py makes and times it, after one short call
        from bench_encode_peers import maker

        make, one, _ = maker(lib, RANK[job][0], Path(model).parent, 1)
        encode_one = one(make())
        encode_one("warm up, 123")
    else:
        encode_one = subwords.load(model).encode
    if encode:
        out = [encode_one(line) for line in lines]
        assert len(out) == len(lines)


def measures(text: str) -> dict[str, int]:
    """What the floors count: bytes, lines, words (whitespace-separated), distinct words and
    the characters of the distinct words."""
    words = text.split()
    distinct = set(words)
    return {"bytes": len(text.encode("utf-8")), "lines": text.count("\n") + 1, "words": len(words),
                "distinct": len(distinct), "symbols": sum(len(w) for w in distinct)}


def cut(corpus: Path, mb: float, to: Path) -> Path:
    """The corpus's first `mb` MB, cut at a line end."""
    if not to.exists():
        keep, size = [], 0
        with open(corpus, encoding="utf-8") as f:
            for line in f:
                line = line.rstrip("\n")
                if size + len(line.encode("utf-8")) + 1 > mb * 1e6:
                    break
                keep.append(line)
                size += len(line.encode("utf-8")) + 1
        to.write_text("\n".join(keep), encoding="utf-8")
    return to


def prepare(job: str, corpus: Path, work: Path, vocab: int, mb: float,
            train_mb: float) -> tuple[Path, str, str, dict[str, int]]:
    """Outside callgrind: the text a training reads, or the model an encoding job loads and the
    lines it encodes; and their measures."""
    if job in TRAIN:
        if train_mb:
            corpus = cut(corpus, train_mb, work / f"{corpus.stem}.{train_mb:g}mb-train.txt")
        return corpus, "", "", measures(corpus.read_text(encoding="utf-8"))
    import subwords

    if job in RANK:
        from bench_encode_peers import rank_file
        from subwords.formats import tiktoken as tk

        model = rank_file(work, RANK[job][0])
        lines_path = cut(corpus, mb, work / f"{corpus.stem}.{mb:g}mb.txt")
        m = measures(lines_path.read_text(encoding="utf-8"))
        tok = tk.load(model)
        m["ids"] = sum(len(tok.encode(t)) for t in texts(job, str(lines_path)))
        m["lines"] = len(texts(job, str(lines_path)))  # the calls
        return corpus, str(model), str(lines_path), m
    kw, suffix = ENCODE[job]
    name = "unigram-bf" if job == "encode-model" else kw["model"]
    model = work / f"{name}.{corpus.stem}.{vocab}{suffix}"
    if not model.exists():
        tok = subwords.train(corpus, vocab_size=vocab, threads=2, **kw)
        if suffix == ".model":
            from subwords.formats._sp_export import model_bytes

            model.write_bytes(model_bytes(tok))
        else:
            tok.save(model)
    lines_path = cut(corpus, mb, work / f"{corpus.stem}.{mb:g}mb.txt")
    text = lines_path.read_text(encoding="utf-8")
    m = measures(text)
    tok = subwords.load(model)
    m["ids"] = sum(len(tok.encode(line)) for line in text.split("\n"))
    return corpus, str(model), str(lines_path), m


def callgrind(out: Path, args: list[str]) -> None:
    env = dict(os.environ, RAYON_NUM_THREADS="1", PYTHONHASHSEED="0")
    cmd = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", sys.executable, __file__, *args]
    r = subprocess.run(cmd, env=env, capture_output=True, text=True, check=False)
    if r.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed:\n{r.stderr[-3000:]}")


LINE = re.compile(r"^\s*([\d,]+) \(\s*[\d.]+%\)\s+(.*)$")


def inclusive(out: Path) -> tuple[int, dict[str, int]]:
    """The run's total, and each function of the core's inclusive count."""
    r = subprocess.run(["callgrind_annotate", "--inclusive=yes", "--threshold=100", str(out)],
                       capture_output=True, text=True, check=True)
    total, funcs = 0, {}
    for line in r.stdout.splitlines():
        m = LINE.match(line)
        if not m:
            continue
        n, rest = int(m.group(1).replace(",", "")), m.group(2)
        if rest.startswith("PROGRAM TOTALS"):
            total = n
            continue
        if rest.endswith("libm.so.6]"):  # `exp`, `log1p`: the plain EM's
            name = rest[: rest.rindex(" [")].rsplit(":", 1)[-1]
        elif rest.endswith(f"{CORE}]"):
            name = rest[: rest.rindex(" [")]
            name = name.split(":", 1)[1] if name.startswith("???:") else name
        else:
            continue
        if re.search(r"'\d+$", name):
            continue  # a recursion level, counted again inside the outermost call's count
        funcs[name] = max(funcs.get(name, 0), n)
    return total, funcs


def f(funcs: dict[str, int], name: str) -> int:
    """The inclusive count of the function `name` names (a path's tail; the largest if several)."""
    hits = [n for k, n in funcs.items() if k == name or k.endswith("::" + name)]
    return max(hits, default=0)


def per_byte(k: float):
    return lambda m: k * m["bytes"]


# The reading, splitting and counting stages every trainer shares: `feed_file` reads 8 MB blocks
# and hands each text to `count_text`, which normalizes (`observe`), pre-splits, and adds each
# unit to the table (`Tally::add`).
FRONT = [
    ("reading: 8 MB blocks, UTF-8 check, lines cut",
     lambda F, m: F("UnitCounter::feed_file") - F("counting::count_text"), per_byte(1), "a vector scan: ~1 / byte"),
    ("normalizing (`front`: whitespace runs, stripped ends, marks in the text)",
     lambda F, m: F("Normalizations::observe"), None, "nothing apart: fused into the pre-split's scan"),
    ("pre-splitting",
     lambda F, m: F("counting::count_text") - F("Normalizations::observe") - F("Tally::add"),
     lambda m: 3 * m["bytes"] + 20 * m["words"], "a byte-class scan, ~3 / byte, and ~20 / word for the unit's key"),
    ("counting: a table probe per word, the table handed to the learner",
     lambda F, m: F("Tally::add") + F("UnitCounter::finish_units"), lambda m: 40 * m["words"],
     "one probe per word: ~40 / word"),
]
WRITE = ("writing the JSON (`to_json`)", lambda F, m: F("Tokenizer>::to_json"), None, "")
# `train` runs on a worker thread: the call's own inclusive count leaves it out
TOTAL = ("total in the core",
         lambda F, m: F("UnitCounter::feed_file") + F("UnitCounter::finish_units") + F("pipeline::train_traced")
         + F("Tokenizer>::to_json"), None, "")
MERGE = [
    *FRONT,
    ("spelling the units (`spell_serial`)", lambda F, m: F("pipeline::spell_serial"),
     lambda m: 10 * m["symbols"], "~10 / symbol of the distinct units"),
    ("the alphabet, the rest of the set-up",
     lambda F, m: F("pipeline::train_traced") - F("engine::run") - F("pipeline::merge_model")
     - F("pipeline::encoded_length") - F("pipeline::spell_serial"), None, ""),
    ("the merge loop: its pair index built", lambda F, m: F("Engine::new"),
     lambda m: 15 * m["symbols"], "two passes over the units' symbol pairs: ~15 / pair"),
    ("the merge loop: the merges", lambda F, m: F("engine::run") - F("Engine::new"), None,
     "the sites: every occurrence of the merged pair in the distinct units rewritten"),
    ("the model built", lambda F, m: F("pipeline::merge_model"), None, ""),
    ("the report's count of the corpus's pieces", lambda F, m: F("pipeline::encoded_length"),
     lambda m: 10 * m["symbols"], "one longest match per distinct unit: ~10 / symbol"),
    WRITE,
    TOTAL,
]
UNIGRAM = [
    *FRONT,
    ("spelling the units (`spell_serial`)", lambda F, m: F("pipeline::spell_serial"),
     lambda m: 10 * m["symbols"], "~10 / symbol of the distinct units"),
    ("the runs cut at unknown symbols, sorted, equal runs joined (`collect_runs`)",
     lambda F, m: F("unigram::collect_runs"), None, "one pass and a sort of the distinct units"),
    ("the seed, the EM rounds and the pruning rounds (one function once inlined)",
     lambda F, m: F("unigram::train_traced") - F("unigram::collect_runs") - F("em::final_pass"), None,
     "`plain`: three `logaddexp` per arc per round, in the specification's order"),
    ("of which `exp` and `log1p` (libm)", lambda F, m: F("exp@@GLIBC_2.29") + F("__log1p_fma"), None,
     "`plain`: three per arc per round, in the specification's order"),
    ("of which the seed's arcs (`seed_arcs`)", lambda F, m: F("seed::seed_arcs::{{closure}}"), None,
     "two walks of the sorted suffixes"),
    ("of which sorts (rayon's `par_sort`: the seed's suffixes, and the runs' sort in `collect_runs`)",
     lambda F, m: F("rayon::slice::sort::recurse"), None, "O(P log P · L) for P positions"),
    ("Viterbi passes (`Lattice::viterbi_with`: the pruning's and the final pass's)",
     lambda F, m: F("Lattice::viterbi_with"), None, "one Viterbi per run, and one per piece"),
    ("the final likelihood pass (`final_pass`)", lambda F, m: F("em::final_pass"), None, "one Viterbi per run"),
    ("the model built", lambda F, m: F("pipeline::train_unigram") - F("unigram::train_traced")
     - F("pipeline::encoded_length"), None, ""),
    ("the report's count of the corpus's pieces", lambda F, m: F("pipeline::encoded_length"), None,
     "one Viterbi per distinct unit"),
    WRITE,
    TOTAL,
]

def call_rows(engine: str) -> list:
    """The last rows of an encoding's table: the list, the call around ``engine`` (the function
    that encodes one text), and the total."""
    return [
        ("the list built (`new_id_list`)", lambda F, m: F("raw::new_id_list"),
         lambda m: 300 * m["lines"] + 10 * m["ids"],
         "a list allocated per call, ~300, and a store and a reference per id, ~10"),
        ("the call: Python's loop, the str read, the binding",
         lambda F, m: m["calls"] - F(engine) - F("raw::new_id_list"),
         lambda m: 500 * m["lines"], "a C call taking one str: ~500 / line"),
        ("total", lambda F, m: m["calls"], None, ""),
    ]


# An encoding: `m["calls"]` is the whole difference the encode calls make to the process.
OWN = [
    ("normalizing, pre-splitting, the word cache's lookups",
     lambda F, m: F("subwords_core::encoder::encode") - F("Tokenizer::encode_unit_into") - F("WordCache<V>::insert"),
     lambda m: 3 * m["bytes"] + 30 * m["words"], "a byte-class scan, ~3 / byte, and a probe per word, ~30 / word"),
    ("words not in the cache: encoded (`encode_unit_into`) and stored",
     lambda F, m: F("Tokenizer::encode_unit_into") + F("WordCache<V>::insert"), None,
     "none once every word was met"),
    *call_rows("subwords_core::encoder::encode"),
]
# The sentencepiece `.model` reader (subwords-compat): normalized, then cut into words, each word
# through the reader's own cache, a Viterbi for a word met the first time.
MODEL = [
    ("normalizing (the file's character map, whitespace)", lambda F, m: F("SpModel::normalize_into"),
     lambda m: 3 * m["bytes"], "a byte-class scan with the map's lookups: ~3 / byte"),
    ("cutting the words, the word cache's lookups, the ids placed",
     lambda F, m: F("SpModel::encode_with") - F("SpModel::normalize_into") - F("SpModel::word_viterbi"),
     lambda m: 3 * m["bytes"] + 30 * m["words"], "a scan for the word marks, ~3 / byte, and a probe per word, ~30 / word"),
    ("of which the word cache's lookups (`WordCache::get_packed`)", lambda F, m: F("WordCache<V>::get_packed"),
     lambda m: 30 * m["words"], "a probe per word: ~30 / word"),
    ("words not in the cache: their Viterbi (`word_viterbi`)", lambda F, m: F("SpModel::word_viterbi"), None,
     "none once every word was met"),
    *call_rows("SpModel::encode_with"),
]
# The rank engine (subwords-compat's `RankBpe`): the text split in batches of chunks
# (`encode_ordinary_into`, the scanner inlined), each chunk looked up whole (`probe`), the rest
# from the word cache or merged once and stored (`encode_short_rest`, `encode_rest`).
RANK_STAGES = [
    ("pre-splitting (the scanner, chunks batched, keys and hashes made)",
     lambda F, m: F("RankBpe::encode_ordinary_into") - F("RankBpe::probe"),
     lambda m: 3 * m["bytes"], "a byte-class scan: ~3 / byte"),
    ("whole-chunk lookups (the filter, the short-token table)",
     lambda F, m: F("RankBpe::probe") - F("RankBpe::encode_short_rest") - F("RankBpe::encode_rest"),
     lambda m: 10 * m["words"], "one probe per chunk: ~10 / word"),
    ("chunks that are no token: the word cache's lookups and inserts, the long tokens' map",
     lambda F, m: F("RankBpe::encode_short_rest") + F("RankBpe::encode_rest") - F(MERGES_SHORT) - F(MERGES_LONG),
     None, "one probe per such chunk"),
    ("chunks that are no token, met the first time: merged (on the stack, or the scan)",
     lambda F, m: F(MERGES_SHORT) + F(MERGES_LONG), None, "none once every word was met"),
    *call_rows("RankBpe::encode_ordinary_into"),
]
MERGES_SHORT, MERGES_LONG = "RankBpe::merge_small_avx2", "RankBpe::merge_scan"
STAGES: dict[str, list] = {
    **{job: RANK_STAGES for job in RANK},
    "encode-model": MODEL,
    "encode-bpe": OWN,
    "encode-wordpiece": OWN,
    "encode-unigram": OWN,
    "train-unigram": UNIGRAM,
    "train-unigram-sp": UNIGRAM,
    "train-wordpiece": MERGE,
    "train-bpe-front": MERGE,
    "train-bpe-bytes": MERGE,
}


def main() -> int:
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        job, corpus, model, lines, vocab, encode, lib = sys.argv[2:9]
        child(job, corpus, model, lines, int(vocab), encode == "1", lib)
        return 0
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("jobs", help=f"comma-separated, of {', '.join([*TRAIN, *ENCODE, *RANK])}")
    ap.add_argument("--corpora", default="english,multilingual")
    ap.add_argument("--corpus-dir", default=str(HERE / "corpora"))
    ap.add_argument("--vocab", type=int, default=32000)
    ap.add_argument("--mb", type=float, default=1.0, help="MB of lines the encoding jobs encode")
    ap.add_argument("--train-mb", type=float, default=0,
                    help="train on the corpus's first MB only (cut at a line end); 0: the whole corpus")
    ap.add_argument("--work", default=None, help="keeps the models, the lines and the callgrind files")
    ap.add_argument("--reuse", action="store_true", help="read the callgrind files of an earlier run")
    ap.add_argument("--functions", type=int, default=0, help="print each job's N largest core functions")
    ap.add_argument("--lib", default="subwords",
                    help="the rank jobs: the library to run (any of bench_encode_peers.py's); "
                         "for another than subwords only the total is counted")
    a = ap.parse_args()
    work = Path(a.work or tempfile.mkdtemp(prefix="bench-stages-"))
    work.mkdir(parents=True, exist_ok=True)
    for job in a.jobs.split(","):
        if job not in TRAIN and job not in ENCODE and job not in RANK:
            raise SystemExit(f"unknown job {job!r}")
        if a.lib != "subwords" and job not in RANK:
            raise SystemExit(f"--lib {a.lib}: only the rank jobs ({', '.join(RANK)}) run another library")
        columns = []
        for name in a.corpora.split(","):
            corpus = Path(a.corpus_dir) / f"{name}.txt"
            corpus, model, lines, m = prepare(job, corpus, work, a.vocab, a.mb, a.train_mb)
            tag = f"{job}.{name}.{a.vocab}" + (f".{a.train_mb:g}mb" if a.train_mb and job in TRAIN else "")
            tag += f".{a.lib}" if a.lib != "subwords" else ""
            out, base = work / f"{tag}.out", work / f"{tag}.load.out"
            args = ["--child", job, str(corpus), model, lines, str(a.vocab)]
            if not (a.reuse and out.exists()):
                callgrind(out, [*args, "1", a.lib])
            encoding = job not in TRAIN
            if encoding and not (a.reuse and base.exists()):
                callgrind(base, [*args, "0", a.lib])
            total, funcs = inclusive(out)
            m["calls"] = 0
            if encoding:
                # what the load-only run spent in a function (a warm-up call's share) is not the
                # encoding's
                base_total, base_funcs = inclusive(base)
                m["calls"] = total - base_total
                funcs = {k: n - base_funcs.get(k, 0) for k, n in funcs.items()}
            print(f"\n{job}, {name}: " + ", ".join(f"{k} {v:,}" for k, v in m.items())
                  + f"; the process {total / 1e6:,.1f} M instructions", flush=True)
            for fn, n in sorted(funcs.items(), key=lambda kv: -kv[1])[: a.functions]:
                print(f"  {n / 1e6:10,.1f} M  {fn}")
            columns.append((name, m, funcs))
        table(job, columns, total_only=a.lib != "subwords")
    return 0


def table(job: str, columns: list, total_only: bool = False) -> None:
    """One row a stage: millions, per byte and × floor for each corpus, then the floor."""
    stages = STAGES.get(job)
    if not stages:
        return
    if total_only:  # another library's functions are not ours to name
        stages = stages[-1:]
    head = "| stage | " + " | ".join(f"{c} M | / byte | × floor" for c, _, _ in columns) + " | floor |"
    print("\n" + head + "\n|---|" + "---:|---:|---:|" * len(columns) + "---|")
    for label, expr, floor, text in stages:
        cells, seen = [], 0
        for _, m, funcs in columns:
            n = expr(lambda name, funcs=funcs: f(funcs, name), m)
            seen |= n != 0
            fl = floor(m) if floor else 0
            cells += [f"{n / 1e6:,.1f}", f"{n / m['bytes']:,.1f}", f"{n / fl:.1f}×" if fl else "—"]
        if seen:  # a stage the job does not have (WordPiece's normalizing) is left out
            print(f"| {label} | " + " | ".join(cells) + f" | {text} |")


if __name__ == "__main__":
    sys.exit(main())
