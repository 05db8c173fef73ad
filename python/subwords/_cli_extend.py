"""``subwords extend`` and ``subwords trim``: python/subwords/_extend.py and _trim.py
on the command line. Both write their output atomically and print one summary line."""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import Any, Callable

from .errors import SubwordsError


def _positive(name: str) -> Callable[[str], int]:
    def parse(v: str) -> int:
        try:
            n = int(v)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{name} takes a whole number, got {v!r}") from None
        if n < 1:
            raise argparse.ArgumentTypeError(f"{name} must be at least 1, got {n}")
        return n
    return parse


def _share(v: str) -> float:
    import math

    try:
        x = float(v)
    except ValueError:
        raise argparse.ArgumentTypeError(f"--threshold takes a number in (0, 1], got {v!r}") from None
    if not math.isfinite(x) or not 0.0 < x <= 1.0:
        raise argparse.ArgumentTypeError(f"--threshold takes a number in (0, 1], got {v!r}")
    return x


def add_parsers(sub: Any) -> dict[str, Callable[[argparse.Namespace], int]]:
    e = sub.add_parser("extend", help="continue BPE training of a model (ours, tokenizer.json, .tiktoken) on new text")
    e.add_argument("model", metavar="MODEL", help="a subwords BPE model, a byte-level BPE tokenizer.json or a .tiktoken file")
    e.add_argument("inputs", nargs="+", metavar="CORPUS", help="text files (one text per line), as train reads them")
    e.add_argument("--vocab-size", type=_positive("--vocab-size"), required=True,
                   help="the size to reach (ids; for tiktoken, ranks plus special tokens)")
    e.add_argument("--min-count", type=_positive("--min-count"), default=2,
                   help="stop when the best pair occurs fewer times (default 2)")
    e.add_argument("--pattern", default=None, help="a .tiktoken file's encoding name, when its file name does not say")
    e.add_argument("-o", "--output", required=True, metavar="OUT", help="where to write the model, in MODEL's format")
    t = sub.add_parser("trim", help="cut a subwords model to the rows a corpus uses, or (--litetoken) remove a BPE "
                       "model's intermediate merge residues; writes the old->new id map too")
    t.add_argument("model", metavar="MODEL", help="a subwords model file (BPE, WordPiece or Unigram); with --litetoken "
                   "also a BPE tokenizer.json, a .tiktoken file or a SentencePiece BPE .model")
    t.add_argument("inputs", nargs="+", metavar="CORPUS", help="text files (one text per line)")
    t.add_argument("--min-count", type=_positive("--min-count"), default=1,
                   help="keep rows the corpus uses at least this often (default 1)")
    t.add_argument("--keep", action="append", default=[], metavar="TOKEN", help="keep this row too; repeatable")
    t.add_argument("-o", "--output", required=True, metavar="OUT", help="where to write the trimmed model")
    t.add_argument("--id-map", default=None, metavar="FILE", help="where to write the id map (default OUT.ids.json)")
    t.add_argument("--litetoken", action="store_true",
                   help="remove LiteToken's intermediate merge residues (rows the corpus mostly sees merged on into "
                        "longer rows) instead; output in MODEL's format (docs/METHODS.md)")
    t.add_argument("--threshold", type=_share, default=None, metavar="R",
                   help="with --litetoken: a row is a residue when F1/(F1+F2) on the corpus is below R (default 0.1)")
    t.add_argument("--pattern", default=None, help="with --litetoken: a .tiktoken file's encoding name, when its file "
                   "name does not say")
    return {"extend": cmd_extend, "trim": cmd_trim}


def _inputs(a: argparse.Namespace) -> list[Path]:
    for p in a.inputs:
        if not os.path.exists(p):
            raise SubwordsError(f"{p}: no such file")
    return [Path(p) for p in a.inputs]


def _output(a: argparse.Namespace) -> None:
    out = Path(a.output)
    if out.is_dir():
        raise SubwordsError(f"-o {a.output}: is a directory; give a file name")
    if str(out.parent) not in ("", ".") and not out.parent.exists():
        raise SubwordsError(f"-o {a.output}: the folder {out.parent} does not exist")


def cmd_extend(a: argparse.Namespace) -> int:
    from ._extend import extend

    _output(a)
    r = extend(a.model, _inputs(a), vocab_size=a.vocab_size, min_count=a.min_count, output=a.output,
               pattern=a.pattern)
    print(f"extended {a.model} ({r.format}): {r.old_size} -> {r.new_size} ids, {r.merges_learned} merges learned "
          f"(stopped: {r.stop}); the new text: {r.pieces_before} -> {r.pieces_after} pieces; wrote {a.output}")
    return 0


def cmd_trim(a: argparse.Namespace) -> int:
    from ._api import SubwordsTokenizer
    from .formats import _dispatch
    from ._trim import trim

    _output(a)
    if a.litetoken:
        return _cmd_litetoken(a)
    if a.threshold is not None or a.pattern is not None:
        raise SubwordsError("--threshold and --pattern go with --litetoken")
    tok = _dispatch.load(a.model)
    if not isinstance(tok, SubwordsTokenizer):
        raise SubwordsError(f"{a.model}: trim cuts subwords model files; this is a {getattr(tok, 'format', '?')} file")
    r = trim(tok, _inputs(a), min_count=a.min_count, keep=a.keep, output=a.output, id_map_output=a.id_map)
    where = a.id_map if a.id_map is not None else a.output + ".ids.json"
    print(f"trimmed {a.model}: {r.old_size} -> {r.new_size} rows; wrote {a.output} and the id map {where}")
    return 0


def _cmd_litetoken(a: argparse.Namespace) -> int:
    from ._trim import trim

    if a.min_count != 1 or a.keep:
        raise SubwordsError("--litetoken removes residues only: --min-count and --keep belong to the usage trim")
    if not os.path.exists(a.model):
        raise SubwordsError(f"{a.model}: no such model file")
    model: object = a.model
    if a.pattern is not None:
        from .formats.tiktoken import load

        model = load(a.model, pattern=a.pattern)
    r = trim(model, _inputs(a), litetoken=True, threshold=a.threshold, output=a.output, id_map_output=a.id_map)
    rep = r.litetoken
    assert rep is not None
    where = a.id_map if a.id_map is not None else a.output + ".ids.json"
    print(f"litetoken {a.model} ({rep.format}): {r.old_size} -> {r.new_size} ids; {len(rep.residues)} residues "
          f"removed (F1/(F1+F2) < {rep.threshold:g}), {len(rep.protected)} kept because a row needs them, "
          f"{rep.reranked} rows re-ranked; the corpus: {rep.lines_changed} of {rep.lines} lines' ids changed; "
          f"wrote {a.output} and the id map {where}")
    return 0
