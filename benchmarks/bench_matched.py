"""One matched table: every training method of docs/METHODS.md against plain BPE at the same
sizes, on the same training text, measured on the same held-out text.

    python benchmarks/bench_matched.py [--corpora english,multilingual,code] [--sizes 8000,32000,64000]
        [--mb 3] [--threads 1] [--markdown FILE]

Per corpus (``benchmarks/corpora.py`` builds them) and size, the front spelling, min_count 2:
* plain BPE, Picky BPE (threshold 0.9), Scaffold-BPE and Length-MAX, each trained on the
  training part (the lines whose index is not 0 mod 10, cut at ``--mb`` MB);
* parity-aware BPE on the multilingual corpus, its languages those of the corpus's sources (the
  fortunes rebuilt per language from their packages, as ``bench_parity.py`` does; the other
  methods train on the same lines);
* LiteToken: the plain model cut by ``subwords.trim(..., litetoken=True)`` with the training part;
* StochasTok: the plain model encoding at p = 0.1, seed 0.

On the held-out part (every tenth line, cut at ``--mb`` MB): rows (a method may stop short of the
size when it runs out of pairs), training CPU seconds over plain BPE's, tokens per byte and its
change, the share of text rows used fewer than 5 times (under-trained), the share never used, the
Rényi efficiency at α = 2.5, the share of learned rows that are LiteToken residues, and, on the
multilingual corpus, the Gini coefficient of the languages' tokens per byte. The last column is
the paper's own headline figure, measured here. One process, one method after another, so only the
ratios within one run mean anything on a shared machine.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any, Callable, Optional

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))

import subwords  # noqa: E402
from subwords.measure import metrics  # noqa: E402

from bench_methods import lines_of, split  # noqa: E402

HEADER = ("| corpus | rows asked | method | rows | train CPU × BPE | held-out tokens/byte | vs BPE "
          "| under-trained (<5 uses) | never used | Rényi 2.5 | residue share | language Gini | the paper's figure |")


def timed(f: Callable[[], Any]) -> tuple[Any, float]:
    t = time.process_time()
    out = f()
    return out, time.process_time() - t


def never_used(tok: Any, held: list[str]) -> float:
    uses: Counter[int] = Counter()
    for ids in tok.encode_batch(held):
        uses.update(ids)
    specials = set(tok.special_tokens.values())
    rows = [i for i in range(tok.vocab_size) if i not in specials]
    return sum(uses.get(i, 0) == 0 for i in rows) / len(rows)


def multilingual(mb: float) -> tuple[dict[str, list[str]], list[str], list[str]]:
    """({language: training lines}, held-out lines, their language labels) of the multilingual
    fortunes, rebuilt per language as ``bench_parity.py`` does; each language's two parts cut in
    proportion so that each whole part is at most ``mb`` MB."""
    from bench_parity import languages as per_language

    langs = per_language()

    def size(lines: list[str]) -> int:
        return sum(len(l.encode("utf-8")) + 1 for l in lines)

    def cut(lines: list[str], share: float) -> list[str]:
        out, n = [], 0
        for l in lines:
            n += len(l.encode("utf-8")) + 1
            if n > share:
                break
            out.append(l)
        return out

    train_total = sum(size(t) for t, _ in langs.values())
    held_total = sum(size(h) for _, h in langs.values())
    train = {n: cut(t, mb * 1e6 * size(t) / train_total) for n, (t, _) in langs.items()}
    held, labels = [], []
    for n, (_, h) in langs.items():
        part = cut(h, min(1.0, mb * 1e6 / held_total) * size(h))
        held += part
        labels += [n] * len(part)
    return train, held, labels


def fmt(x: Optional[float], spec: str) -> str:
    return "—" if x is None else format(x, spec)


#: The table's lines as printed, for ``--markdown``.
LINES: list[str] = []


def emit(line: str) -> None:
    """Prints a line of the table and keeps it for ``--markdown``."""
    LINES.append(line)
    print(line, flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--corpora", default="english,multilingual,code")
    ap.add_argument("--sizes", default="8000,32000,64000")
    ap.add_argument("--mb", type=float, default=3.0)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--markdown", type=Path, default=None, help="also write the table to this file")
    a = ap.parse_args()
    emit(HEADER)
    emit("|" + "---|" * (HEADER.count("|") - 1))
    for name in a.corpora.split(","):
        by_language: Optional[dict[str, list[str]]] = None
        labels: Optional[list[str]] = None
        if name == "multilingual":  # by language, for parity-aware BPE and the Gini
            by_language, held, labels = multilingual(a.mb)
            train = [l for part in by_language.values() for l in part]
        else:
            train, held = split(lines_of(name), a.mb)
        for size in (int(s) for s in a.sizes.split(",")):
            base = dict(vocab_size=size, spelling="front", min_count=2, threads=a.threads)
            variants: list[tuple[str, dict[str, Any]]] = [
                ("BPE", {}), ("Picky BPE (0.9)", {"picky": 0.9}), ("Scaffold-BPE", {"scaffold": True}),
                ("Length-MAX", {"length_max": True})]
            if by_language is not None:
                variants.append(("parity-aware BPE", {"parity": True, "languages": by_language}))
            plain: Any = None
            plain_m: Any = None
            plain_cpu = plain_tpb = plain_never = 0.0
            for label, extra in variants:
                data = None if "languages" in extra else train
                tok, cpu = timed(lambda: subwords.train(data, **base, **extra))
                m = metrics(tok, held, languages=labels)
                never = never_used(tok, held)
                if plain is None:
                    plain, plain_m, plain_cpu, plain_tpb, plain_never = tok, m, cpu, m.tokens_per_byte, never
                headline = {
                    "BPE": "",
                    "Picky BPE (0.9)": f"under-trained {plain_m.under_trained:.3f} → {m.under_trained:.3f} (paper: fewer)",
                    "Scaffold-BPE": f"never used {plain_never:.3f} → {never:.3f} (paper: a better balance)",
                    "Length-MAX": f"tokens {100 * (m.tokens_per_byte / plain_tpb - 1):+.1f}% (paper: −14 to −18%)",
                    "parity-aware BPE": f"Gini {fmt(plain_m.language_gini, '.3f')} → {fmt(m.language_gini, '.3f')} "
                                        f"(paper: 0.049 → 0.012 at 128k)",
                }[label]
                row(name, size, label, tok, cpu / plain_cpu, m, plain_tpb, never, headline)
            tok = subwords.trim(plain, train, litetoken=True).tokenizer
            m = metrics(tok, held, languages=labels)
            removed = plain.vocab_size - tok.vocab_size
            row(name, size, "LiteToken (on BPE)", tok, None, m, plain_tpb, never_used(tok, held),
                f"{removed:,} residues removed ({100 * removed / plain.vocab_size:.1f}%; paper: 5–10%)")
            ids = plain.encode_batch(held)
            split_ids = [plain.encode(t, stochastok=0.1, seed=0) for t in held]
            before, after = sum(map(len, ids)), sum(map(len, split_ids))
            nbytes = sum(len(t.encode("utf-8")) for t in held)
            emit(f"| {name} | {size:,} | StochasTok p=0.1 (on BPE) | {plain.vocab_size:,} | — | {after / nbytes:.4f} | "
                  f"{100 * (after * 1.0 / before - 1):+.1f}% | — | — | — | — | — | "
                  f"split rate {(after - before) / before:.3f} (asked 0.1; a one-symbol piece cannot split) |")
    if a.markdown is not None:
        # written once the whole table is made, so a failed run leaves no half table
        a.markdown.write_text("\n".join(LINES) + "\n", encoding="utf-8")


def row(name: str, size: int, label: str, tok: Any, cpu_ratio: Optional[float], m: Any, plain_tpb: float,
        never: float, headline: str) -> None:
    trained = cpu_ratio is not None  # LiteToken's rows are fewer by design
    short = "*" if trained and tok.vocab_size < size else ""  # ran out of pairs before the size
    emit(f"| {name} | {size:,} | {label} | {tok.vocab_size:,}{short} | {fmt(cpu_ratio, '.2f')} | {m.tokens_per_byte:.4f} | "
          f"{100 * (m.tokens_per_byte / plain_tpb - 1):+.1f}% | {fmt(m.under_trained, '.3f')} | {never:.3f} | "
          f"{fmt(m.renyi_efficiency, '.3f')} | {fmt(m.intermediate_share, '.3f')} | {fmt(m.language_gini, '.3f')} | "
          f"{headline} |")


if __name__ == "__main__":
    main()
