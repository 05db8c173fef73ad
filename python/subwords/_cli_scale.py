"""``subwords count``: count a corpus into a table, on this machine or on a Dask cluster."""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path
from typing import Any

from .errors import SubwordsError

PROG = "subwords"


def add_parser(sub: Any, positive: Any) -> None:
    c = sub.add_parser("count", help="count the units of text files into a table to train on later (here or on Dask)")
    c.add_argument("inputs", nargs="+", metavar="INPUT",
                   help="UTF-8 text files, one text per line (globs and, with --engine dask, URLs too)")
    c.add_argument("-o", "--output", required=True, metavar="TABLE",
                   help="table to write (atomically): the binary table, or unit<TAB>count lines with --tsv")
    c.add_argument("--tsv", action="store_true", help="write unit<TAB>count lines for people instead of the binary table")
    c.add_argument("--spelling", choices=["end", "continuation", "front", "bytes"], default=None,
                   help="the spelling the table is for (training must ask for the same one); default end, or the "
                        "preset's")
    c.add_argument("--mark", default=None, help="the spelling's mark (default </w>, ##, or ▁)")
    c.add_argument("--no-split-at-marks", action="store_true", help="front: one unit per text")
    c.add_argument("--pre-split", default=None, metavar="NAME|REGEX",
                   help="pre-split before counting, as for train: gpt2, bert, cl100k, o200k, llama3, or a regular expression")
    c.add_argument("--normalize", choices=["nfc", "nfkc", "nfd", "nfkd", "nmt_nfkc", "none"], default=None,
                   help="Unicode normalization before the split, as for train (recorded in the table)")
    c.add_argument("--split-digits", type=int, choices=[1, 3], default=None,
                   help="cut runs of digits into single digits (1) or runs of up to three (3), as for train")
    c.add_argument("--preset", default=None, metavar="NAME",
                   help="count for a preset's training (its spelling options; superbpe, boundless: the spans too)")
    c.add_argument("--superword-pattern", default=None, metavar="superbpe|REGEX",
                   help="SuperBPE: also count the spans of this stage-two pre-split (with --spelling bytes)")
    c.add_argument("--superword-pieces", default=None, metavar="letters|any|REGEX",
                   help="BoundlessBPE (with --preset boundless): which pretokens may join a superword, as for "
                        "train (default letters)")
    c.add_argument("--count-on", choices=["runs", "pairs"], default=None,
                   help="BoundlessBPE (with --preset boundless): count each run of eligible pretokens (default) "
                        "or each adjacent pair, as for train")
    c.add_argument("--lowercase", action="store_true")
    c.add_argument("--strip-accents", action="store_true")
    c.add_argument("--clean-text", action="store_true")
    c.add_argument("--counts", action="store_true", help="each INPUT is a word<TAB>count table to add in")
    c.add_argument("--min-unit-count", type=positive("--min-unit-count"), default=None,
                   help="drop units counted fewer times, and report the share of occurrences dropped")
    c.add_argument("--engine", choices=["local", "dask"], default="local",
                   help="local: this process's threads; dask: partitions on a dask.distributed cluster")
    c.add_argument("--scheduler", default=None, metavar="ADDRESS",
                   help="dask: the scheduler to use (tcp://host:8786); default: start a LocalCluster")
    c.add_argument("--workers", type=positive("--workers"), default=None,
                   help="dask: worker processes of the LocalCluster (default 2)")
    c.add_argument("--threads", type=positive("--threads"), default=None, help="local: counting threads")
    c.add_argument("--input-errors", choices=["strict", "replace"], default="strict")
    c.add_argument("--text-field", default=None, metavar="PATH",
                   help="dask: JSON lines inputs' dotted path to the text (default text)")
    c.add_argument("--text-column", default=None, metavar="NAME",
                   help="dask: Parquet/Arrow inputs' text column (default text)")
    c.add_argument("--quiet", action="store_true")


def cmd_count(a: argparse.Namespace) -> int:
    import glob

    import subwords

    out = Path(a.output)
    if out.is_dir():
        raise SubwordsError(f"-o {a.output}: is a directory; give a file name")
    if not out.parent.exists() and str(out.parent) not in ("", "."):
        raise SubwordsError(f"-o {a.output}: the folder {out.parent} does not exist")
    spelling = dict(spelling=a.spelling, mark=a.mark, split_at_marks=not a.no_split_at_marks, pre_split=a.pre_split,
                    lowercase=a.lowercase, strip_accents=a.strip_accents, clean_text=a.clean_text,
                    normalize=a.normalize, split_digits=a.split_digits, superword_pattern=a.superword_pattern,
                    preset=a.preset, superword_pieces=a.superword_pieces, count_on=a.count_on)
    start = time.monotonic()
    if a.engine == "dask":
        if a.counts or a.input_errors != "strict" or a.threads is not None:
            raise SubwordsError("--counts, --input-errors and --threads apply to --engine local only")
        import subwords.dask

        table = subwords.dask.count(a.inputs, scheduler=a.scheduler, workers=a.workers, text_field=a.text_field,
                                    text_column=a.text_column, **spelling)
    else:
        if a.scheduler is not None or a.workers is not None:
            raise SubwordsError("--scheduler and --workers apply to --engine dask; add --engine dask")
        if a.text_field is not None or a.text_column is not None:
            raise SubwordsError("--text-field and --text-column apply to --engine dask here (subwords train reads "
                                "JSON lines and Parquet with them)")
        paths: list[Path] = []
        for x in a.inputs:
            found = sorted(glob.glob(x)) if glob.has_magic(x) else [x]
            if not found:
                raise SubwordsError(f"{x}: matches no file")
            for f in found:
                if os.path.isdir(f):
                    raise SubwordsError(f"{f}: is a directory; give the text files in it (e.g. {f}/*.txt)")
                if not os.path.exists(f):
                    raise SubwordsError(f"{f}: no such file")
                paths.append(Path(f))
        table = subwords.count(paths, counts=a.counts, input_errors=a.input_errors, threads=a.threads, **spelling)
    note = ""
    if a.min_unit_count is not None:
        table, share = table.prune(a.min_unit_count)
        note = f"; dropped units counted fewer than {a.min_unit_count} times: {share:.2%} of occurrences"
    if a.tsv:
        table.to_tsv(out)
    else:
        table.save(out)
    if not a.quiet:
        print(f"{PROG}: wrote {out}: {len(table):,} distinct units, {table.total:,} occurrences, {table.texts:,} texts "
              f"({a.engine}){note}; {time.monotonic() - start:.2f}s", file=sys.stderr)
    return 0
