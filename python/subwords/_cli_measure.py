"""The measuring verbs of the ``subwords`` command line: ``trace``, ``curve`` and ``compare``
(``subwords.measure``; docs/MEASURE.md).

Each prints a readable table, or with ``--json`` one JSON document on stdout, and with
``--plot FILE.png|FILE.svg`` also draws it (matplotlib, ``pip install "subwords[plot]"``).

Script contract (pinned by tests/measure/test_cli_measure.py):

* ``subwords curve INPUT... [--counts] --model M --spelling S --sizes 12,17,22 [--heldout FILE]
  --json`` prints one JSON array, one object per size asked, in the order asked, each holding at
  least ``size`` (asked), ``rows`` (actual), ``corpus_pieces``, and ``heldout_pieces`` when
  ``--heldout`` is given.
* ``subwords compare -m MODEL_A -m MODEL_B [-m ...] TEXTFILE --json`` prints one JSON array,
  one object per model in the order given, each holding at least ``model``, ``pieces``,
  ``pieces_per_word``, ``bytes_per_piece``, ``unknown``, ``renyi_efficiency`` (α = 2.5) and
  ``roundtrip_exact``. A model is any file ``subwords.formats.load`` reads.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
from pathlib import Path
from typing import Any, Callable, Optional, Sequence

from .errors import InputError, OptionError, SubwordsError


def _train_options(p: argparse.ArgumentParser, vocab_size: bool) -> None:
    from ._cli_args import _coverage, _positive

    p.add_argument("inputs", nargs="*", metavar="INPUT", help="UTF-8 text files, one text per line (--counts: word<TAB>count)")
    p.add_argument("--counts", action="store_true", help="each INPUT is a word<TAB>count table")
    p.add_argument("--model", choices=["bpe", "wordpiece", "unigram"], default="bpe")
    p.add_argument("--spelling", choices=["end", "continuation", "front", "bytes"], default=None,
                   help="default: the model's own")
    if vocab_size:
        p.add_argument("--vocab-size", type=_positive("--vocab-size"), required=True)
    p.add_argument("--min-count", type=_positive("--min-count"), default=None)
    p.add_argument("--byte-fallback", action="store_true")
    p.add_argument("--byte-fallback-in-budget", action="store_true")
    p.add_argument("--superword-at", type=_positive("--superword-at"), default=None,
                   help="two-stage BPE's switch; with SuperBPE the transition size t")
    p.add_argument("--preset", choices=["superbpe"], default=None,
                   help="superbpe: SuperBPE (byte-level, o200k stage one, the paper's spans; t defaults to 80%% of the largest size)")
    p.add_argument("--superword-pattern", default=None, metavar="superbpe|REGEX",
                   help="SuperBPE: stage two's span pre-split")
    p.add_argument("--superword-words", type=_positive("--superword-words"), default=None,
                   help="SuperBPE: the most words a superword may span (default 4)")
    p.add_argument("--max-piece-length", type=_positive("--max-piece-length"), default=None)
    p.add_argument("--picky", type=float, default=None, metavar="THRESHOLD", help="Picky BPE's IoS threshold")
    p.add_argument("--parity", action="store_true", help="parity-aware BPE (with --language or --language-field)")
    p.add_argument("--language", action="append", default=None, metavar="NAME=FILE",
                   help="--parity: one language's text file; repeatable")
    p.add_argument("--language-field", default=None, metavar="FIELD", help="--parity: JSON lines INPUTs' language field")
    p.add_argument("--parity-measure", choices=["tokens_per_byte", "tokens", "tokens_per_symbol"], default=None)
    p.add_argument("--parity-global-merges", type=int, default=None, metavar="N")
    p.add_argument("--parity-window", type=int, default=None, metavar="W")
    p.add_argument("--parity-alpha", type=float, default=None, metavar="ALPHA")
    p.add_argument("--length-max", action="store_true", help="Length-MAX: merges by count x joined length")
    p.add_argument("--scaffold", action="store_true", help="Scaffold-BPE: scaffold tokens take no row")
    p.add_argument("--alphabet-size", type=_positive("--alphabet-size"), default=None)
    p.add_argument("--character-coverage", type=_coverage, default=None)
    p.add_argument("--mark", default=None)
    p.add_argument("--no-split-at-marks", action="store_true")
    p.add_argument("--pre-split", choices=["gpt2", "bert"], default=None)
    p.add_argument("--threads", type=_positive("--threads"), default=None)
    p.add_argument("--min-count-rule", choices=["filter", "stop"], default=None)
    p.add_argument("--unknown", choices=["word", "rest"], default=None)
    p.add_argument("--max-word-length", type=_positive("--max-word-length"), default=None)
    p.add_argument("--seed-size", type=_positive("--seed-size"), default=None)
    p.add_argument("--shrink", type=float, default=None)
    p.add_argument("--em-rounds", type=int, default=None)
    p.add_argument("--em", choices=["plain", "bayes", "sentencepiece"], default=None,
                   help="unigram: the EM method (as subwords train --em)")
    p.add_argument("--input-errors", choices=["strict", "replace"], default="strict")


def _output_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--json", action="store_true", help="print JSON instead of a table")
    p.add_argument("--plot", metavar="FILE", default=None, help="also draw it to FILE.png or FILE.svg (needs subwords[plot])")
    p.add_argument("--quiet", action="store_true", help="no progress line")


def add_parsers(sub: Any) -> dict[str, Callable[[argparse.Namespace], int]]:
    """Adds the verbs to the ``subwords`` parser; returns ``{verb: handler}``."""
    t = sub.add_parser("trace", help="every step of one training: pairs, counts, ties, corpus length, rows (or Unigram's rounds)")
    _train_options(t, vocab_size=True)
    t.add_argument("--no-ties", action="store_true", help="do not list tied candidates (faster on big corpora)")
    t.add_argument("--force", action="append", default=[], metavar="STEP:LEFT:RIGHT",
                   help="take the pair LEFT RIGHT at merge STEP instead of the tie rule's choice; repeatable")
    t.add_argument("--branches", type=int, default=None, metavar="STEP",
                   help="follow every candidate tied at merge STEP to the end and show the outcomes side by side")
    t.add_argument("--word", default=None, help="with --branches: the word to cut with each branch's table")
    t.add_argument("--em-steps", action="store_true", help="unigram: every piece's probability after every EM step (--json)")
    _output_options(t)

    c = sub.add_parser("curve", help="corpus (and held-out) pieces at many vocabulary sizes, or two learners matched")
    _train_options(c, vocab_size=False)
    c.add_argument("--sizes", required=True, help="12,17,22 or 1000-8000:1000 (ranges inclusive)")
    c.add_argument("--heldout", metavar="FILE", default=None, help="held-out text, one text per line")
    c.add_argument("--matched", metavar="COMPARISON", default=None,
                   help="compare two trainings at the same sizes: bpe-unigram, count-score, front-end, chars-bytes, "
                        "stages (with --superword-at), marks, superbpe (plain BPE against SuperBPE), "
                        "scaffold (plain BPE against Scaffold-BPE)")
    _output_options(c)

    from ._cli_args import _positive

    m = sub.add_parser("compare", help="pieces, fertility, bytes per piece, unknowns, Rényi efficiency, round trip: "
                                       "several models on one text file")
    m.add_argument("-m", "--model", action="append", required=True, metavar="MODEL",
                   help="a model file in any format subwords reads; repeatable")
    m.add_argument("text", metavar="TEXTFILE", help="UTF-8 text, one text per line")
    m.add_argument("--labelled", action="store_true", help="each line is LANGUAGE<TAB>TEXT: adds per-language parity")
    m.add_argument("--threads", type=_positive("--threads"), default=None)
    m.add_argument("--rare-below", type=_positive("--rare-below"), default=5, metavar="K",
                   help="a row the text uses fewer than K times counts as under-trained (default 5)")
    _output_options(m)
    return {"trace": cmd_trace, "curve": cmd_curve, "compare": cmd_compare}


def _kw(a: argparse.Namespace) -> dict[str, Any]:
    kw: dict[str, Any] = dict(
        model=a.model, spelling=a.spelling, min_count=a.min_count, byte_fallback=a.byte_fallback,
        byte_fallback_in_budget=a.byte_fallback_in_budget, mark=a.mark, split_at_marks=not a.no_split_at_marks,
        pre_split=a.pre_split, superword_at=a.superword_at, max_piece_length=a.max_piece_length,
        alphabet_size=a.alphabet_size, character_coverage=a.character_coverage, threads=a.threads,
        input_errors=a.input_errors, min_count_rule=a.min_count_rule, unknown=a.unknown,
    )
    if a.parity:
        kw["parity"] = True
    if a.language is not None:
        langs: dict[str, Path] = {}
        for spec in a.language:
            name, eq, file = spec.partition("=")
            if not eq or not name or not file or name in langs:
                raise SubwordsError(f"--language {spec}: give NAME=FILE, each language once")
            langs[name] = Path(file)
        kw["languages"] = langs
    if a.length_max:
        kw["length_max"] = True
    for k in ("seed_size", "shrink", "em_rounds", "em", "max_word_length", "picky", "preset", "superword_pattern",
              "superword_words", "language_field", "parity_measure", "parity_global_merges", "parity_window",
              "parity_alpha"):
        v = getattr(a, k)
        if v is not None:
            kw[k] = v
    if a.scaffold:
        kw["scaffold"] = True
    if a.max_piece_length is None:
        kw.pop("max_piece_length")  # the model's own default (16 for unigram)
    return kw


def _data(a: argparse.Namespace) -> Any:
    if a.language is not None:
        if a.inputs:
            raise SubwordsError("with --language NAME=FILE, give every file that way: leave the INPUTs out")
        return None
    if not a.inputs:
        raise SubwordsError("give the INPUT files (or --parity with --language NAME=FILE)")
    paths = []
    for x in a.inputs:
        if x == "-":
            raise SubwordsError("the measuring verbs read files, not stdin: give INPUT files")
        if os.path.isdir(x):
            raise SubwordsError(f"{x}: is a directory; give the text files in it (e.g. {x}/*.txt)")
        if not os.path.exists(x):
            raise SubwordsError(f"{x}: no such file")
        paths.append(Path(x))
    return paths


def _progress(a: argparse.Namespace, label: str) -> Optional[Callable[[int, int], None]]:
    from .measure.curve import stderr_progress

    return stderr_progress(label) if sys.stderr.isatty() and not a.quiet else None


def _finite(obj: Any) -> Any:
    """JSON has no infinities: a loss of inf (a piece nothing can replace) is written "inf"."""
    if isinstance(obj, float) and not math.isfinite(obj):
        return str(obj)
    if isinstance(obj, dict):
        return {k: _finite(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_finite(v) for v in obj]
    return obj


def _print_json(obj: Any) -> None:
    print(json.dumps(_finite(obj), ensure_ascii=False, indent=1, allow_nan=False))


def _table(headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    def cell(v: Any) -> str:
        if v is None:
            return "-"
        if isinstance(v, float):
            return f"{v:.4g}" if abs(v) < 1e5 else f"{v:,.0f}"
        if isinstance(v, int) and not isinstance(v, bool):
            return f"{v:,}"
        return str(v)

    cells = [[cell(v) for v in r] for r in rows]
    widths = [max(len(h), *(len(r[i]) for r in cells)) if cells else len(h) for i, h in enumerate(headers)]
    lines = ["  ".join(h.rjust(w) for h, w in zip(headers, widths))]
    lines += ["  ".join(c.rjust(w) for c, w in zip(r, widths)) for r in cells]
    return "\n".join(lines)


def _check_plot(a: argparse.Namespace) -> None:
    if a.plot:
        from .measure.plot import check_path

        check_path(a.plot)


def _forced(specs: Sequence[str]) -> dict[int, tuple[str, str]]:
    out: dict[int, tuple[str, str]] = {}
    for s in specs:
        parts = s.split(":")
        if len(parts) != 3 or not parts[0].isdigit() or not parts[1] or not parts[2]:
            raise OptionError(f"--force {s!r}: write STEP:LEFT:RIGHT, e.g. --force 1:s:t</w>")
        out[int(parts[0])] = (parts[1], parts[2])
    return out


def cmd_trace(a: argparse.Namespace) -> int:
    from . import measure

    _check_plot(a)
    kw = _kw(a)
    data = _data(a)
    forced = _forced(a.force)
    if a.branches is not None:
        if a.plot:
            raise OptionError("--plot draws a trace; with --branches there is no plot (use --json for the outcomes)")
        branches = measure.tie_branches(data, a.branches, word=a.word, forced=forced, counts=a.counts,
                                        vocab_size=a.vocab_size, **kw)
        if a.json:
            _print_json([b.to_dict() for b in branches])
        else:
            print(_table(["choice", "corpus pieces", "rows", "learned", "shared", "only here", "cut"],
                         [(" + ".join(b.choice), b.corpus_pieces, b.rows, b.rows_learned, b.shared_learned,
                           " ".join(b.only_here) or "-", " ".join(b.cut) if b.cut is not None else "-") for b in branches]))
        return 0
    t = measure.trace(data, ties=not a.no_ties, forced=forced or None, em_steps=a.em_steps, counts=a.counts, vocab_size=a.vocab_size, **kw)
    if a.json:
        _print_json(t.to_dict())
    elif isinstance(t, measure.MergeTrace):
        print(f"{t.model}: {t.corpus_pieces_before:,} pieces and {t.rows_before:,} rows before the first merge; stop: {t.stop}")
        print(_table(["step", "left", "right", "count", "score", "tied", "corpus pieces", "rows"],
                     [(s.step, s.left, s.right, s.count, str(s.score) if s.score_den != 1 else "",
                       (s.tie_count if s.tie_count > 1 else "") if not a.no_ties else "-", s.corpus_pieces, s.rows)
                      for s in t.steps]))
    else:
        print(f"unigram: seed of {t.seed_size:,} pieces")
        print(_table(["round", "size", "M-step drops", "log-likelihood", "candidates", "zero losses", "pruned"],
                     [(r.round, r.size, r.em_dropped, r.log_likelihood, r.candidates, r.zero_losses, len(r.pruned))
                      for r in t.rounds]))
    if a.plot:
        from .measure.plot import plot_trace

        plot_trace(t, a.plot)
    return 0


def cmd_curve(a: argparse.Namespace) -> int:
    from . import measure
    from .measure.curve import heldout_texts

    sizes = measure.parse_sizes(a.sizes)
    _check_plot(a)
    kw = _kw(a)
    data = _data(a)
    heldout = None
    if a.heldout is not None:
        if not os.path.isfile(a.heldout):
            raise SubwordsError(f"--heldout {a.heldout}: no such file")
        heldout = heldout_texts(Path(a.heldout))
    if a.matched:
        from .measure.compare import COMPARISONS

        if a.matched not in COMPARISONS or a.matched == "joints":
            raise OptionError(f"--matched must be one of {', '.join(c for c in COMPARISONS if c != 'joints')} "
                              f"(joints: use the Python API, measure.matched); got {a.matched!r}")
        pairs = measure.matched(data, sizes, a.matched, heldout=heldout, counts=a.counts, **kw)
        if a.json:
            _print_json([p.to_dict() for p in pairs])
        else:
            print(COMPARISONS[a.matched][0])
            print(_table(["size", "rows a", "rows b", "pieces a", "pieces b", "held-out a", "held-out b", "shared", "only a", "only b"],
                         [(p.size, p.a.rows, p.b.rows, p.a.corpus_pieces, p.b.corpus_pieces, p.a.heldout_pieces,
                           p.b.heldout_pieces, p.shared, p.only_a, p.only_b) for p in pairs]))
        if a.plot:
            from .measure.plot import plot_matched

            plot_matched(pairs, a.plot, title=COMPARISONS[a.matched][0])
        return 0
    points = measure.curve(data, sizes, heldout=heldout, progress=_progress(a, "curve"), counts=a.counts, **kw)
    if a.json:
        _print_json([p.to_dict() for p in points])
    else:
        print(_table(["size", "rows", "corpus pieces", "held-out pieces", "unknown", "byte pieces"],
                     [(p.size, p.rows, p.corpus_pieces, p.heldout_pieces, p.heldout_unknown, p.heldout_byte_pieces)
                      for p in points]))
    if a.plot:
        from .measure.plot import plot_curve

        plot_curve(points, a.plot, title=f"{a.model}, {a.spelling or 'default spelling'}")
    return 0


def _fmt(x: Optional[float]) -> str:
    return "-" if x is None else f"{x:.4f}"


def cmd_compare(a: argparse.Namespace) -> int:
    from . import measure
    from ._cli_args import load_model

    _check_plot(a)
    if not os.path.isfile(a.text):
        raise SubwordsError(f"{a.text}: no such file")
    from ._io import read_limited

    raw = read_limited(a.text, 1 << 31, "text file")
    try:
        lines = raw.decode("utf-8").splitlines()
    except UnicodeDecodeError as e:
        raise InputError(f"{a.text}: not UTF-8 (byte {e.start}); compare reads UTF-8 text") from None
    languages = None
    if a.labelled:
        languages, texts = [], []
        for n, line in enumerate(lines, 1):
            if not line.strip():
                continue
            lang, tab, text = line.partition("\t")
            if not tab or not lang:
                raise InputError(f"{a.text}: line {n}: --labelled lines are LANGUAGE<TAB>TEXT")
            languages.append(lang)
            texts.append(text)
    else:
        texts = lines
    if not any(t.strip() for t in texts):
        raise InputError(f"{a.text}: no text to measure on (the file is empty or blank)")
    models = {}
    for path in a.model:
        if not os.path.exists(path):
            raise SubwordsError(f"-m {path}: no such model file")
        models[path] = load_model(path)
    results = measure.compare_models(models, texts, languages=languages, threads=a.threads, rare_below=a.rare_below)
    if a.json:
        _print_json([r.to_dict() for r in results])
    else:
        def share(x: Optional[float]) -> str:
            return "-" if x is None else f"{x:.1%}"
        print(_table(["model", "pieces", "per word", "bytes/piece", "tokens/byte", "unknown", "byte pieces", "Rényi 2.5",
                      "used", f"under {a.rare_below} uses", "intermediate", "round trip"],
                     [(r.model, r.pieces, r.pieces_per_word, r.bytes_per_piece, r.tokens_per_byte, r.unknown,
                       r.byte_fallback, r.renyi_efficiency, f"{r.vocab_share:.1%}", share(r.under_trained),
                       share(r.intermediate_share),
                       "exact" if r.roundtrip_exact else f"{r.roundtrip_failures} differ")
                      for r in results]))
        if languages is not None:
            for r in results:
                assert r.languages is not None
                print(f"\n{r.model}: parity ratio {_fmt(r.language_parity_ratio)}, Gini {_fmt(r.language_gini)} "
                      "(of the languages' tokens per byte)")
                print(_table(["language", "texts", "pieces", "per word", "parity", "tokens/byte"],
                             [(k, v.texts, v.pieces, v.pieces_per_word, v.parity, v.tokens_per_byte)
                              for k, v in r.languages.items()]))
    if a.plot:
        from .measure.plot import plot_metrics

        plot_metrics(results, a.plot)
    return 0
