"""The input options of ``subwords train`` (and ``encode``): one argument group, and the
``Texts`` they describe, so that cli.py holds no knowledge of formats."""

from __future__ import annotations

import argparse
import math
import re
import sys
from collections.abc import Iterable
from typing import Optional

from ..errors import OptionError
from . import Texts

FORMATS_HELP = (
    "INPUT is a file, a folder (every file under it, sorted; hidden ones left out) or a glob "
    "(quote it; ** crosses folders; matches sorted). By name: .txt (one text per line; also any name "
    "no format claims whose start is text), .jsonl/.ndjson (one JSON object per line, the text at "
    "--text-field), both optionally compressed .gz or .zst (pip install 'subwords[zstd]'); .parquet, "
    ".arrow/.feather (the text in --text-column; pip install 'subwords[arrow]'). Files are streamed "
    "a batch at a time, never read whole."
)
TRAIN_HELP = (
    " A bad record (not JSON, no such field, not a string) is refused naming its file and line, "
    "unless --skip-bad-records. --sample keeps each record by a hash of its position and --seed "
    "(the same inputs, fraction and seed give the same sample anywhere); --max-bytes then stops "
    "after that many bytes of texts."
)

_UNITS = {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}


def _size(s: str) -> int:
    m = re.fullmatch(r"\s*([0-9]+)\s*([kmgtKMGT]?)(i?[bB])?\s*", s)
    if m is None or int(m.group(1)) < 1:
        raise argparse.ArgumentTypeError(f"--max-bytes: expected a positive number of bytes like 500000000 or 2G, got {s!r}")
    return int(m.group(1)) * _UNITS[m.group(2).lower()]


def _fraction(s: str) -> float:
    try:
        v = float(s)
    except ValueError:
        v = math.nan
    if not math.isfinite(v) or not 0 < v <= 1:
        raise argparse.ArgumentTypeError(f"--sample: expected a fraction in (0, 1], like 0.1, got {s!r}")
    return v


def add_arguments(p: argparse.ArgumentParser, training: bool = True) -> None:
    g = p.add_argument_group("inputs", FORMATS_HELP + (TRAIN_HELP if training else ""))
    g.add_argument("--text-field", default=None, metavar="PATH",
                   help="JSON lines: the text's field, a dotted path like meta.text (default: text)")
    g.add_argument("--text-column", default=None, metavar="NAME",
                   help="Parquet/Arrow: the text's column (default: text)")
    g.add_argument("--skip-bad-records", action="store_true",
                   help="skip records that are not JSON, lack the field, or are not strings, and print how many")
    if training:
        g.add_argument("--sample", type=_fraction, default=None, metavar="FRACTION",
                       help="keep each record with this probability (needs --seed), reproducibly")
        g.add_argument("--max-bytes", type=_size, default=None, metavar="N",
                       help="read texts (after --sample) until their UTF-8 sizes reach N bytes (K, M, G: 1024-based)")


def uses_options(a: argparse.Namespace) -> bool:
    return any(getattr(a, k, None) not in (None, False) for k in
               ("text_field", "text_column", "skip_bad_records", "sample", "max_bytes"))


def texts_from_args(a: argparse.Namespace, stdin: Optional[Iterable[str]] = None) -> Texts:
    """The ``Texts`` that INPUT... and the input options name (``stdin``: the lines of ``-``)."""
    if stdin is not None and (a.text_field or a.text_column):
        raise OptionError("--text-field and --text-column read files; stdin (-) is read as plain text, one text per line")
    return Texts(stdin if stdin is not None else a.inputs, text_field=a.text_field, text_column=a.text_column,
                 sample=getattr(a, "sample", None), seed=getattr(a, "seed", None) if getattr(a, "sample", None) else None,
                 max_bytes=getattr(a, "max_bytes", None), skip_bad_records=a.skip_bad_records)


def encode_lines(a: argparse.Namespace) -> Optional[Iterable[str]]:
    """The texts ``encode`` reads from INPUT... (None: stdin), one per record, blank ones kept so
    that output line n is record n; the skipped bad records are counted on stderr at the end."""
    if not a.inputs:
        if a.text_field or a.text_column or a.skip_bad_records:
            raise OptionError("--text-field, --text-column and --skip-bad-records read INPUT files; stdin is read as "
                              "plain text, one text per line")
        return None
    if "-" in a.inputs:
        raise OptionError("encode reads stdin when no INPUT is given; leave - out")
    texts = Texts(a.inputs, text_field=a.text_field, text_column=a.text_column, skip_bad_records=a.skip_bad_records)

    def lines() -> Iterable[str]:
        for batch in texts.batches(keep_empty=True):
            yield from batch
        if texts.skipped:
            print(f"subwords: inputs: {texts.summary()}", file=sys.stderr)

    return lines()
