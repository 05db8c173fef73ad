"""The ``subwords`` command line: train, encode, decode, inspect, export, quickstart.

Every command that reads a model reads any format ``subwords.formats.load`` knows (detected
from the file, or ``--format``); ``export`` and ``train --format`` write through
``subwords.formats.export``. A tokenizer from another library's file has a smaller face (no
offsets, no dropout, no segmenters); the commands say so instead of guessing.

A user mistake gets one clear line on stderr and exit status 2, never a traceback. Model files are
written atomically, so a failed or interrupted training leaves no partial file.
"""

from __future__ import annotations

import argparse
import io
import json
import math
import os
import sys
import sysconfig
import time
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, NoReturn, Optional, Protocol, Sequence, TextIO

from ._api import _check_count, parse_count_line
from . import _cli_scale
from ._cli_args import _count, _coverage, _load_options, _missing_format, _positive, _probability, load_model
from .errors import InputError, SubwordsError, UnknownPieceError
from ._format_names import FORMATS  # not .formats: train need not import every reader
from .inputs import _cli as inputs_cli

PROG = "subwords"


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:  # argparse exits 2 with usage; keep that, but say what to do
        self.print_usage(sys.stderr)
        self.exit(2, f"{self.prog}: error: {message} (see '{self.prog} --help')\n")


def _version() -> str:
    from . import __version__

    return __version__


def _model_format_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--format", choices=FORMATS, default=None, help="the model file's format (default: detected from the file)")
    p.add_argument("-O", "--load-option", action="append", default=[], metavar="KEY=VALUE",
                   help="an option for reading the model (e.g. lowercase=false for a cased vocab.txt, merges=N for "
                        "subword-nmt codes); repeatable")


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(prog=PROG, description="Learn subword vocabularies and cut text into pieces.")
    p.add_argument("--version", action="version", version=f"%(prog)s {_version()}")
    sub = p.add_subparsers(dest="command", required=True, parser_class=_Parser)

    t = sub.add_parser("train", help="learn a vocabulary from text files (or - for stdin)")
    t.add_argument("inputs", nargs="*", metavar="INPUT",
                   help="files, folders or globs (.txt, .jsonl, .parquet, .arrow; .gz, .zst; see inputs below); - reads stdin")
    inputs_cli.add_arguments(t)
    t.add_argument("-o", "--output", required=True, metavar="MODEL", help="model file to write (atomically)")
    t.add_argument("--model", choices=["bpe", "word", "wordpiece", "unigram"], default="bpe")
    t.add_argument("--spelling", choices=["end", "continuation", "front", "bytes"], default=None,
                   help="default: the model's own (end for bpe and word, continuation for wordpiece)")
    t.add_argument("--vocab-size", type=_positive("--vocab-size"), required=True)
    t.add_argument("--min-count", type=_positive("--min-count"), default=None,
                   help="stop when the best pair occurs fewer times (default 2; 1 for --model word)")
    t.add_argument("--byte-fallback", action="store_true", help="256 <0xNN> rows for symbols with no row")
    t.add_argument("--byte-fallback-in-budget", action="store_true",
                   help="count the byte rows inside --vocab-size (SentencePiece's convention)")
    t.add_argument("--counts", action="store_true", help="each INPUT is a word<TAB>count table")
    t.add_argument("--superword-at", type=_positive("--superword-at"), default=None,
                   help="two-stage BPE: stage one stops at this many rows, stage two merges across words "
                        "(with --preset superbpe: the transition size t, default 80%% of --vocab-size)")
    t.add_argument("--superword-pattern", default=None,
                   help="SuperBPE: stage two's span pre-split (superbpe: the paper's; or a regular expression)")
    t.add_argument("--superword-words", type=_positive("--superword-words"), default=None,
                   help="SuperBPE: the most words a superword may span (default 4)")
    t.add_argument("--max-piece-length", type=_positive("--max-piece-length"), default=None)
    t.add_argument("--deletion-threshold", type=_threshold, default=argparse.SUPPRESS, metavar="SHARE|none",
                   help="BoundlessBPE: delete a merge's parent whose intersection over self reaches SHARE, in (0, 1] "
                        "(default 0.9; none never deletes)")
    t.add_argument("--superword-pieces", default=None, metavar="letters|any|REGEX",
                   help="BoundlessBPE: which pretokens may join a superword (default letters)")
    t.add_argument("--count-on", choices=["runs", "pairs"], default=None,
                   help="BoundlessBPE: count each run of eligible pretokens (default) or each adjacent pair")
    t.add_argument("--picky", type=float, default=None, metavar="THRESHOLD",
                   help="Picky BPE: remove a merged token whose intersection over self reaches THRESHOLD, in (0, 1]")
    t.add_argument("--parity", action="store_true",
                   help="parity-aware BPE: each merge is the pair counted most in the language compressed worst so far")
    t.add_argument("--language", action="append", default=None, metavar="NAME=FILE",
                   help="--parity: one language's text file (repeat for each language)")
    t.add_argument("--language-field", default=None, metavar="FIELD",
                   help="--parity: the INPUTs are JSON lines whose FIELD names each record's language")
    t.add_argument("--parity-measure", choices=["tokens_per_byte", "tokens", "tokens_per_symbol"], default=None,
                   help="--parity: what compressed worst means (default tokens_per_byte)")
    t.add_argument("--parity-global-merges", type=int, default=None, metavar="N",
                   help="--parity: the first N merges by plain BPE's rule")
    t.add_argument("--parity-window", type=int, default=None, metavar="W",
                   help="--parity: a moving window of W steps in which one language takes at most ALPHA/languages")
    t.add_argument("--parity-alpha", type=float, default=None, metavar="ALPHA", help="--parity-window's share (default 2)")
    t.add_argument("--length-max", action="store_true",
                   help="Length-MAX: each merge takes the pair with the largest count x joined length (BPE only)")
    t.add_argument("--scaffold", action="store_true",
                   help="Scaffold-BPE: tokens that mostly stand inside longer ones take no row, and are split at encoding")
    t.add_argument("--alphabet-size", type=_positive("--alphabet-size"), default=None)
    t.add_argument("--character-coverage", type=_coverage, default=None)
    t.add_argument("--mark", default=None, help="the spelling's mark (default </w>, ##, or ▁)")
    t.add_argument("--no-split-at-marks", action="store_true", help="front: one unit per text")
    t.add_argument("--pre-split", default=None, metavar="NAME|REGEX",
                   help="gpt2 (bytes: GPT-2's pre-split), bert (end/continuation: punctuation and CJK stand alone), "
                        "cl100k, o200k, llama3 (their published patterns), or any regular expression (fancy-regex "
                        "syntax; every match and every stretch between matches is a unit)")
    t.add_argument("--normalize", choices=["nfc", "nfkc", "nfd", "nfkd", "nmt_nfkc", "none"], default=None,
                   help="Unicode normalization before the split, saved in the model and applied on encode "
                        "(offsets still point into the original text); default none")
    t.add_argument("--lowercase", action="store_true", help="lower-case the text before the split")
    t.add_argument("--split-digits", type=int, choices=[1, 3], default=None,
                   help="cut runs of digits into single digits (1) or runs of up to three (3)")
    t.add_argument("--seed", type=int, default=None, help="the seed of --sample (training itself is deterministic)")
    t.add_argument("--threads", type=_positive("--threads"), default=None)
    t.add_argument("--min-count-rule", choices=["filter", "stop"], default=None,
                   help="wordpiece: pairs below --min-count are no candidates (filter, default), or stop when the winner is below it")
    t.add_argument("--unknown", choices=["word", "rest"], default=None,
                   help="wordpiece: an unfinishable word is one [UNK] (word, default), or its matched pieces and one [UNK]")
    t.add_argument("--max-word-length", type=_positive("--max-word-length"), default=None,
                   help="wordpiece: a longer word (in characters) is one [UNK] (default 100)")
    t.add_argument("--seed-size", type=_positive("--seed-size"), default=None,
                   help="unigram: cap on the seed (the most frequent substrings; the alphabet always stays)")
    t.add_argument("--shrink", type=float, default=None,
                   help="unigram: a pruning round keeps this fraction of the table (default 0.75)")
    t.add_argument("--em-rounds", type=int, default=None, help="unigram: EM rounds before every size check (default 2)")
    t.add_argument("--em", choices=["plain", "bayes", "sentencepiece"], default=None,
                   help="unigram: the M-step: the page's (plain, default), sentencepiece's digamma step (bayes), "
                        "or sentencepiece's whole loop: digamma step, its pruning and final pick (sentencepiece)")
    t.add_argument("--split-by-script", action="store_true",
                   help="unigram: sentencepiece's script rule, no seed piece mixes two scripts (abc1 and foo( are out)")
    t.add_argument("--no-split-by-number", action="store_true",
                   help="with --split-by-script: a digit joins any script (sentencepiece's split_by_number=false)")
    t.add_argument("--input-errors", choices=["strict", "replace"], default="strict",
                   help="invalid UTF-8: refuse naming file and line (strict), or read it as U+FFFD (replace)")
    t.add_argument("--min-unit-count", type=_positive("--min-unit-count"), default=None,
                   help="count first and drop units counted fewer times before training (reports the share dropped)")
    t.add_argument("--quiet", action="store_true")
    t.add_argument("--preset", choices=["gpt2", "cl100k", "o200k", "llama", "sentencepiece", "sennrich", "bert", "superbpe",
                                        "boundless"],
                   default=None,
                   help="a usual recipe (docs/presets.md lists every option each sets; an option given explicitly "
                        "overrides it). bert: BERT's WordPiece (continuation '##', punctuation and CJK split off, "
                        "text cleaned, lower-cased, accents stripped), the model a BERT vocab.txt (--format vocab-txt) holds")
    t.add_argument("--format", choices=FORMATS, default="subwords",
                   help="write the model in this format (default: subwords' own JSON); refused, with nothing written, "
                        "when the format cannot express the model")
    _add_special_arguments(t)

    e = sub.add_parser("encode", help="text lines on stdin -> pieces (or ids) lines on stdout")
    e.add_argument("-m", "--model", required=True, metavar="MODEL")
    e.add_argument("inputs", nargs="*", metavar="INPUT", help="files, folders or globs to encode, one output line per record "
                   "(default: stdin's lines); see inputs below")
    inputs_cli.add_arguments(e, training=False)
    _model_format_args(e)
    e.add_argument("--allow-special", default=None, metavar="all|A,B",
                   help="turn these special tokens' surfaces in the text into their ids (default: none, the text is text)")
    g = e.add_mutually_exclusive_group()
    g.add_argument("--ids", action="store_true", help="write ids instead of pieces")
    g.add_argument("--jsonl", action="store_true", help="write one JSON object per line: pieces, ids, offsets (offsets: subwords models only)")
    e.add_argument("--dropout", type=_probability, default=None, help="BPE-dropout probability (needs --seed)")
    e.add_argument("--stochastok", type=_probability, default=None, metavar="P",
                   help="StochasTok: after encoding a line of n ids, floor(P*n) tries each split a random id into two "
                        "rows that join to it (needs --seed; docs/METHODS.md)")
    e.add_argument("--seed", type=_count("--seed"), default=None,
                   help="the seed of --dropout, --stochastok or --segmenter sample (each line uses seed + line index; "
                        "--stochastok: line i is drawn from (seed, i))")
    e.add_argument("--segmenter", choices=["viterbi", "fewest", "sample"], default=None,
                   help="unigram: the likeliest spelling (default), the fewest pieces, or a sampled spelling")
    e.add_argument("--nbest", type=_positive("--nbest"), default=None, help="unigram sampling: draw among the n best")
    e.add_argument("--alpha", type=float, default=None, help="unigram sampling: probability**alpha (default 1)")
    e.add_argument("--threads", type=_positive("--threads"), default=None)
    ds = e.add_argument_group("dataset", "write every document's ids to one array for training instead of lines on "
                              "stdout: FILE.npy (numpy) or FILE.bin (raw little-endian ids), plus FILE.offsets.npy "
                              "(uint64, documents+1 entries: document i is ids[offsets[i]:offsets[i+1]]); written "
                              "atomically, nothing on error (docs/HANDOFF.md)")
    ds.add_argument("--output", default=None, metavar="FILE.npy|FILE.bin", help="the id array to write")
    ds.add_argument("--dtype", choices=["uint16", "uint32"], default=None,
                    help="the ids' type (default uint32); uint16 is refused, nothing written, for a vocabulary "
                         "with ids above 65535")
    ds.add_argument("--eos", default=None, metavar="TOKEN",
                    help="a vocabulary entry (e.g. a special token) whose id follows every document")

    d = sub.add_parser("decode", help="pieces (or ids) lines on stdin -> text lines on stdout")
    d.add_argument("-m", "--model", required=True, metavar="MODEL")
    _model_format_args(d)
    d.add_argument("--ids", action="store_true", help="read ids instead of pieces")

    i = sub.add_parser("inspect", help="sizes, rows and merges of a model")
    i.add_argument("model", metavar="MODEL")
    _model_format_args(i)
    i.add_argument("--json", action="store_true", help="one JSON object: rows, kinds, merges, report, options")
    i.add_argument("--rows", type=_count("--rows"), default=20, metavar="N",
                   help="how many rows and merges to show (text output; default 20)")

    x = sub.add_parser("export", help="write a model in another library's format")
    x.add_argument("model", metavar="MODEL", help="a model file in any format subwords reads")
    x.add_argument("output", metavar="OUT", help="file (or folder, for formats that write one) to write, atomically")
    x.add_argument("--format", required=True, choices=FORMATS, help="the format to write")
    x.add_argument("--from", dest="source_format", choices=FORMATS, default=None,
                   help="MODEL's format (default: detected from the file)")
    x.add_argument("-O", "--load-option", action="append", default=[], metavar="KEY=VALUE",
                   help="an option for reading MODEL (e.g. lowercase=false for a cased vocab.txt); repeatable")

    _cli_scale.add_parser(sub, _positive)

    q = sub.add_parser("quickstart", help="train on this Python's standard library and cut a sentence into pieces")
    q.add_argument("--vocab-size", type=_positive("--vocab-size"), default=8000)
    q.add_argument("--spelling", choices=["end", "continuation", "front", "bytes"], default="front")
    q.add_argument("--sentence", default="Dr. Alvarez didn't expect the low-cost re-analysis.")
    q.add_argument("--mark", default=None,
                   help="the spelling's mark (default: the spelling's own, </w>, ## or ▁)")
    q.add_argument("-o", "--output", default=None, metavar="MODEL", help="also save the model here")
    from .explore import register as _register_explore  # the explorer's verb (docs/EXPLORE.md)
    _register_explore(sub, COMMANDS)
    # subwords.measure's verbs (trace, curve, compare): python/subwords/_cli_measure.py
    from . import _cli_measure
    COMMANDS.update(_cli_measure.add_parsers(sub))
    # extend and trim: python/subwords/_cli_extend.py
    from . import _cli_extend
    COMMANDS.update(_cli_extend.add_parsers(sub))
    return p


class _Show(Protocol):
    def __call__(self, done: int, final: bool = False) -> None: ...


def _progress(stream: TextIO, label: str) -> Optional[_Show]:
    if not stream.isatty():
        return None
    start = time.monotonic()

    def show(done: int, final: bool = False) -> None:
        rate = done / max(time.monotonic() - start, 1e-9)
        stream.write(f"\r{label}: {done:,} lines ({rate:,.0f}/s)" + ("\n" if final else ""))
        stream.flush()

    return show


def _stdin_lines(errors: Optional[str] = None) -> Iterator[str]:
    """Lines of stdin without their line ends. Lines end at b"\\n" only, never at the other
    characters ``str.splitlines`` knows (U+2028, U+0085, ...): those are text inside a line.
    ``errors`` is training's --input-errors (None: a command that has no such option)."""
    for n, raw in enumerate(sys.stdin.buffer, 1):
        try:
            yield raw.decode("utf-8", errors=errors or "strict").rstrip("\r\n")
        except UnicodeDecodeError as e:
            raise InputError(
                f"stdin: line {n}: invalid UTF-8 (byte 0x{raw[e.start]:02X}); convert the input to UTF-8"
                + (", or pass --input-errors replace" if errors == "strict" else "")
            ) from None


def _stdin_count_table(errors: str) -> dict[str, int]:
    rows: dict[str, int] = {}
    for n, line in enumerate(_stdin_lines(errors), 1):
        row = parse_count_line(line, f"stdin: line {n}")
        if row is not None:
            word, count = row
            rows[word] = rows.get(word, 0) + count
    for word, count in rows.items():
        _check_count(word, count, "stdin (after adding up repeated words)")
    return rows


def export_atomic(tok: Any, out: str, fmt: str) -> None:
    """Writes ``tok`` in ``fmt`` to ``out`` without ever leaving a half-written file: the export
    goes to a fresh folder beside ``out`` and is renamed over it only once complete. An existing
    folder ``out`` is handed to the format as it is (formats that write a folder of files)."""
    from . import formats

    if os.path.isdir(out):
        try:
            formats.export(tok, out, fmt)
        except ImportError as e:
            raise _missing_format(fmt, e) from None
        return
    import shutil
    import tempfile

    folder = os.path.dirname(os.path.abspath(out))
    if not os.path.isdir(folder):
        raise SubwordsError(f"{out}: the folder {folder} does not exist")
    work = tempfile.mkdtemp(prefix=".subwords-export-", dir=folder)
    try:
        staged = os.path.join(work, os.path.basename(out))
        try:
            formats.export(tok, staged, fmt)
        except ImportError as e:
            raise _missing_format(fmt, e) from None
        if not os.path.exists(staged):
            raise SubwordsError(f"the {fmt} export wrote nothing at {out}")
        os.replace(staged, out)
        # files an export writes beside its main one (a rank file's special tokens, the
        # tokenizer_config.json of special-token roles)
        for extra in sorted(os.listdir(work)):
            os.replace(os.path.join(work, extra), os.path.join(folder, extra))
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _add_special_arguments(t: argparse.ArgumentParser) -> None:
    """The special-token options of ``train`` (docs/SPECIALS.md)."""
    t.add_argument("--special-token", action="append", default=[], metavar="TOKEN",
                   help="a special token (repeatable): ids 0..k-1 in the order given, inside --vocab-size, never "
                        "learned from, matched in text only when allowed (encode --allow-special)")
    t.add_argument("--user-symbol", action="append", default=[], metavar="TOKEN",
                   help="a user-defined symbol (repeatable, after the special tokens): always matched in text")
    t.add_argument("--reserved-tokens", type=_count("--reserved-tokens"), default=0, metavar="N",
                   help="N placeholder rows <|reserved_0|>... after the user symbols, inside --vocab-size")
    t.add_argument("--pad-to-multiple", type=_positive("--pad-to-multiple"), default=None, metavar="M",
                   help="more reserved rows until the vocabulary size is a multiple of M (e.g. 128)")
    for role in ("bos", "eos", "pad", "unk"):
        t.add_argument(f"--{role}-token", default=None, metavar="TOKEN",
                       help=f"the special token that plays the {role} role in the exports"
                            + (" (only [UNK], the unknown row)" if role == "unk" else " (one of --special-token)"))


def _special_keywords(a: argparse.Namespace) -> dict[str, Any]:
    """The special-token options given on the command line (none given: none passed)."""
    kw: dict[str, Any] = {}
    if a.special_token:
        kw["special_tokens"] = list(a.special_token)
    if a.user_symbol:
        kw["user_symbols"] = list(a.user_symbol)
    if a.reserved_tokens:
        kw["reserved_tokens"] = a.reserved_tokens
    if a.pad_to_multiple is not None:
        kw["pad_to_multiple"] = a.pad_to_multiple
    for role in ("bos", "eos", "pad", "unk"):
        if getattr(a, f"{role}_token") is not None:
            kw[f"{role}_token"] = getattr(a, f"{role}_token")
    return kw


def _is_own(tok: Any) -> bool:
    from ._api import SubwordsTokenizer

    return isinstance(tok, SubwordsTokenizer)


def _describe(tok: Any, path: str) -> str:
    return f"{path} is a {getattr(tok, 'format', 'foreign')} file"


def _allowed(spec: Optional[str]) -> Any:
    """--allow-special: 'all', or comma-separated surfaces."""
    if spec is None:
        return ()
    if spec == "all":
        return "all"
    chosen = [x for x in spec.split(",") if x]
    if not chosen:
        raise SubwordsError("--allow-special: give 'all' or special tokens separated by commas, e.g. '<|endoftext|>,<|fim_prefix|>'")
    return frozenset(chosen)


def _check_output(name: str) -> Path:
    """Refuses a model path that cannot be written before any work is done."""
    out = Path(name)
    if out.is_dir():
        raise SubwordsError(f"-o {name}: is a directory; give a file name")
    if not out.parent.exists() and str(out.parent) not in ("", "."):
        raise SubwordsError(f"-o {name}: the folder {out.parent} does not exist")
    return out


def _train_pruned(a: argparse.Namespace, kw: dict[str, Any], texts: Optional[Iterable[str]]) -> tuple[Any, float]:
    """Counts the inputs under the training's spelling, drops rare units, trains on the table."""
    import subwords
    from ._options import DEFAULT_SPELLING

    bert = a.preset == "bert"
    if (a.preset not in (None, "bert") or a.normalize not in (None, "none") or a.lowercase or a.split_digits is not None
            or a.pre_split not in (None, "gpt2", "bert")):
        raise SubwordsError("--min-unit-count counts with the spelling options only; it does not take --normalize, "
                            "--lowercase, --split-digits, a pattern --pre-split or a preset other than bert yet")
    from .counts import CountTable, table_paths

    paths = [Path(x) for x in a.inputs]
    tables = table_paths(paths, counts=True) if a.counts and texts is None else None
    if tables is not None:
        # binary tables (`subwords count -o`) are summed as they are; training checks their spelling
        first, *rest = (CountTable.load(p) for p in tables)
        table = first.merge(*rest) if rest else first
    else:
        table = subwords.count(texts if texts is not None else paths, counts=a.counts, input_errors=a.input_errors, threads=a.threads,
                               spelling="continuation" if bert else a.spelling or DEFAULT_SPELLING[a.model], mark=a.mark,
                               split_at_marks=not a.no_split_at_marks, pre_split="bert" if bert else a.pre_split,
                               lowercase=bert, strip_accents=bert, clean_text=bert)
    table, dropped = table.prune(a.min_unit_count)
    return subwords.train(table, **kw), dropped


def _train_parity(a: argparse.Namespace) -> int:
    """``train --parity``: one file per language (``--language NAME=FILE``) or JSON lines with
    ``--language-field``; the other options as for plain BPE."""
    import subwords

    if not a.parity:
        raise SubwordsError("--language gives parity-aware BPE its inputs: add --parity")
    languages: Optional[dict[str, Path]] = None
    if a.language is not None:
        if a.inputs:
            raise SubwordsError("with --language NAME=FILE, give every file that way: leave the INPUTs out")
        languages = {}
        for spec in a.language:
            name, eq, file = spec.partition("=")
            if not eq or not name or not file:
                raise SubwordsError(f"--language {spec}: give NAME=FILE, e.g. --language en=english.txt")
            if name in languages:
                raise SubwordsError(f"--language {name} is given twice: give each language once")
            languages[name] = Path(file)
    elif not a.inputs:
        raise SubwordsError("--parity needs --language NAME=FILE (repeated), or JSON lines INPUTs with --language-field")
    out = _check_output(a.output)
    kw = dict(
        model=a.model, spelling=a.spelling, vocab_size=a.vocab_size, min_count=a.min_count,
        byte_fallback=a.byte_fallback, byte_fallback_in_budget=a.byte_fallback_in_budget, mark=a.mark,
        split_at_marks=not a.no_split_at_marks, pre_split=a.pre_split, superword_at=a.superword_at,
        max_piece_length=a.max_piece_length, alphabet_size=a.alphabet_size, character_coverage=a.character_coverage,
        threads=a.threads, input_errors=a.input_errors, preset=a.preset, normalize=a.normalize,
        lowercase=a.lowercase, split_digits=a.split_digits, picky=a.picky, length_max=a.length_max, scaffold=a.scaffold,
        counts=a.counts, parity=True,
        language_field=a.language_field, parity_measure=a.parity_measure,
        parity_global_merges=a.parity_global_merges, parity_window=a.parity_window, parity_alpha=a.parity_alpha,
        **_special_keywords(a),
    )
    start = time.monotonic()
    data = None if languages is not None else [Path(x) for x in a.inputs]
    tok = subwords.train(data, languages=languages, **kw)
    if a.format == "subwords":
        tok.save(out)
    else:
        export_atomic(tok, str(out), a.format)
    if not a.quiet:
        p = tok.report["parity"]
        per = ", ".join(f"{x['name']} {x['tokens_per_byte']:.4f}" for x in p["languages"])
        print(f"{PROG}: wrote {out}: {tok.vocab_size} rows, {len(tok.merges)} merges, stopped by {tok.report.get('stop')}; "
              f"tokens per byte {per}; Gini {p['gini']:.4f}; {time.monotonic() - start:.2f}s", file=sys.stderr)
    return 0


def _threshold(value: str) -> object:
    """--deletion-threshold: a number, or none (never delete); the range is checked with the options."""
    if value.lower() == "none":
        return None
    try:
        return float(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{value!r} is not a number in (0, 1] or none") from None


def _boundless_keywords(a: argparse.Namespace) -> dict[str, object]:
    """BoundlessBPE's options as train() takes them: only those given (the preset's otherwise)."""
    kw: dict[str, object] = {}
    if hasattr(a, "deletion_threshold"):  # (absent unless given: "none" is a value of its own)
        kw["deletion_threshold"] = a.deletion_threshold
    for k in ("superword_pieces", "count_on"):
        if getattr(a, k) is not None:
            kw[k] = getattr(a, k)
    return kw


def cmd_train(a: argparse.Namespace) -> int:
    import subwords

    if a.seed is not None and a.sample is None:
        raise SubwordsError(f"--seed: {a.model} training is deterministic and uses no randomness; --seed goes with --sample")
    if "-" in a.inputs and a.inputs != ["-"]:
        raise SubwordsError("- (stdin) must be the only INPUT")
    if a.language is not None or a.parity:
        return _train_parity(a)
    if not a.inputs:
        raise SubwordsError("give the INPUT files to learn from (or --parity with --language NAME=FILE)")
    if a.counts and inputs_cli.uses_options(a):
        raise SubwordsError("--counts reads word<TAB>count tables; the text input options do not apply to them")
    if a.min_unit_count is not None and a.inputs == ["-"] and a.counts:
        raise SubwordsError("--min-unit-count with --counts needs table files; save stdin to a file first")
    out = _check_output(a.output)
    kw = dict(
        model=a.model, spelling=a.spelling, vocab_size=a.vocab_size, min_count=a.min_count,
        byte_fallback=a.byte_fallback, byte_fallback_in_budget=a.byte_fallback_in_budget,
        mark=a.mark, split_at_marks=not a.no_split_at_marks, pre_split=a.pre_split,
        superword_at=a.superword_at, superword_pattern=a.superword_pattern, superword_words=a.superword_words,
        **_boundless_keywords(a),
        max_piece_length=a.max_piece_length, alphabet_size=a.alphabet_size,
        character_coverage=a.character_coverage, threads=a.threads, input_errors=a.input_errors,
        min_count_rule=a.min_count_rule, unknown=a.unknown, preset=a.preset,
        normalize=a.normalize, lowercase=a.lowercase, split_digits=a.split_digits,
        split_by_script=a.split_by_script, split_by_number=not a.no_split_by_number, picky=a.picky,
        length_max=a.length_max, scaffold=a.scaffold,
        **{k: v for k, v in (("seed_size", a.seed_size), ("shrink", a.shrink), ("em_rounds", a.em_rounds)) if v is not None},
        **({} if a.max_word_length is None else {"max_word_length": a.max_word_length}),
        **({} if a.em is None else {"em": a.em}),
        progress=sys.stderr.isatty() and not a.quiet,
        **_special_keywords(a),
    )
    for x in a.inputs if a.counts else ():
        if x == "-":
            continue
        if os.path.isdir(x):
            raise SubwordsError(f"{x}: is a directory; give the text files in it (e.g. {x}/*.txt)")
        if not os.path.exists(x):
            raise SubwordsError(f"{x}: no such file")
    # files, folders and globs of every format, or stdin's lines, sampled as the options say
    texts = None if a.counts else inputs_cli.texts_from_args(a, _stdin_lines(a.input_errors) if a.inputs == ["-"] else None)
    start = time.monotonic()
    if a.inputs == ["-"] and a.counts:
        tok = subwords.train(_stdin_count_table(a.input_errors), **kw)
    elif a.min_unit_count is not None:
        tok, dropped = _train_pruned(a, kw, texts)
    else:
        tok = subwords.train(texts if texts is not None else [Path(x) for x in a.inputs], counts=a.counts, **kw)
    # Nothing is written before training has succeeded, and the save itself is atomic (a
    # temporary file beside the target, renamed over it): a failed run leaves no partial file
    # and never clobbers an existing model.
    if a.format == "subwords":
        tok.save(out)
    else:
        export_atomic(tok, str(out), a.format)
    if not a.quiet:
        r = tok.report
        secs = time.monotonic() - start
        note = " (the corpus supports no more: the size is a ceiling)" if r.get("size_not_reached") else ""
        print(
            f"{PROG}: wrote {out}{'' if a.format == 'subwords' else f' ({a.format})'}: {tok.vocab_size} rows, {len(tok.merges)} merges, alphabet {r.get('alphabet_size')}, "
            f"stopped by {r.get('stop')}{note}; corpus {r.get('corpus_pieces_before'):,} -> "
            f"{r.get('corpus_pieces_after'):,} pieces; {secs:.2f}s",
            file=sys.stderr,
        )
        if a.min_unit_count is not None:
            print(f"{PROG}: dropped units counted fewer than {a.min_unit_count} times before training: "
                  f"{dropped:.2%} of occurrences", file=sys.stderr)
        norm = r.get("normalizations")
        if norm:
            changed = ", ".join(norm)
            print(f"{PROG}: normalized the text: {changed} (decode gives back the normalized text)", file=sys.stderr)
    if texts is not None and inputs_cli.uses_options(a):
        print(f"{PROG}: inputs: {texts.summary()}", file=sys.stderr)  # the sample and the skipped records
    return 0


def cmd_encode(a: argparse.Namespace) -> int:
    if a.output is None and (a.dtype is not None or a.eos is not None):
        raise SubwordsError("--dtype and --eos shape the dataset file; give --output FILE.npy (or FILE.bin)")
    tok = load_model(a.model, a.format, a.load_option)
    if a.output is not None:
        return _encode_dataset(tok, a)
    if not _is_own(tok):
        return _encode_foreign(tok, a)
    allowed = _allowed(a.allow_special)
    sampling = a.segmenter == "sample"
    if (a.dropout is not None or sampling or a.stochastok is not None) and a.seed is None:
        raise SubwordsError("--dropout, --stochastok and --segmenter sample need --seed, so that runs repeat")
    if a.seed is not None and a.dropout is None and not sampling and a.stochastok is None:
        raise SubwordsError("--seed is only used with --dropout, --stochastok or --segmenter sample")
    if a.stochastok is not None and (a.dropout is not None or a.segmenter is not None or a.jsonl):
        raise SubwordsError("--stochastok splits the exact encoding: leave --dropout, --segmenter and --jsonl out")
    if (a.nbest is not None or a.alpha is not None) and not sampling:
        raise SubwordsError("--nbest and --alpha go with --segmenter sample")
    if a.segmenter is not None and a.jsonl:
        raise SubwordsError("--jsonl writes the default encoding with offsets; leave --segmenter out")
    if a.dropout is not None and a.jsonl:
        raise SubwordsError("--jsonl writes the exact encoding with offsets; it cannot be combined with --dropout")
    out = sys.stdout
    show = _progress(sys.stderr, "encode")
    done = 0
    batch: list[str] = []

    def flush() -> None:
        nonlocal done
        if not batch:
            return
        if a.jsonl:
            for line in batch:
                trip = tok.encode_with_offsets(line, allowed_special=allowed)
                obj = {"pieces": [tok.id_to_piece(i) for i, _, _ in trip], "ids": [i for i, _, _ in trip],
                       "offsets": [[s, e] for _, s, e in trip]}
                out.write(json.dumps(obj, ensure_ascii=False) + "\n")
        else:
            if a.stochastok is not None:
                from . import _stochastok

                exact = tok.encode_batch(batch, threads=a.threads, allowed_special=allowed)
                split = _stochastok.table(tok)
                results = [split.expand(ids, a.stochastok, a.seed, done + k) for k, ids in enumerate(exact)]
            elif a.dropout is not None:
                results = [tok.encode(line, dropout=a.dropout, seed=a.seed + done + k, allowed_special=allowed)
                           for k, line in enumerate(batch)]
            elif sampling:
                results = [tok.encode(line, segmenter="sample", seed=(a.seed + done + k) % 2**64, alpha=a.alpha,
                                      nbest=a.nbest, allowed_special=allowed) for k, line in enumerate(batch)]
            elif a.segmenter == "fewest":
                results = [tok.encode(line, segmenter="fewest", allowed_special=allowed) for line in batch]
            else:
                results = tok.encode_batch(batch, threads=a.threads, allowed_special=allowed)
            for ids in results:
                out.write((" ".join(map(str, ids)) if a.ids else " ".join(tok.id_to_piece(i) for i in ids)) + "\n")
        done += len(batch)
        batch.clear()
        if show:
            show(done)

    _feed_stdin(batch, flush, inputs_cli.encode_lines(a))
    if show:
        show(done, final=True)
    return 0


def _encode_dataset(tok: Any, a: argparse.Namespace) -> int:
    """``encode --output``: every record's ids into one array file and its offsets, batch by
    batch on the core's threads; the dtype is checked against the vocabulary before anything
    is read or written."""
    from . import _arrays

    for flag, value in (("--ids", a.ids), ("--jsonl", a.jsonl), ("--dropout", a.dropout), ("--segmenter", a.segmenter),
                        ("--seed", a.seed), ("--nbest", a.nbest), ("--alpha", a.alpha), ("--stochastok", a.stochastok)):
        if value not in (None, False):
            raise SubwordsError(f"{flag} shapes the lines written to stdout; --output writes the default encoding's ids")
    if os.path.splitext(a.output)[1] not in (".npy", ".bin"):
        raise SubwordsError(f"--output {a.output!r}: the dataset file is NAME.npy (numpy) or NAME.bin (raw ids)")
    eos = None if a.eos is None else tok.piece_to_id(a.eos)
    width = _arrays.width_of(a.dtype or "uint32", tok.vocab_size, () if eos is None else (eos,))
    allowed = _allowed(a.allow_special)
    show = _progress(sys.stderr, "encode")
    lines = inputs_cli.encode_lines(a)

    def batches() -> Iterator[tuple[bytearray, bytearray]]:
        batch: list[str] = []
        for line in _stdin_lines() if lines is None else lines:
            batch.append(line)
            if len(batch) >= 8192:
                yield tok.encode_buffers(batch, threads=a.threads, width=width, eos=eos, allowed_special=allowed)
                batch = []
        if batch:
            yield tok.encode_buffers(batch, threads=a.threads, width=width, eos=eos, allowed_special=allowed)

    docs, total = _arrays.write_dataset(a.output, batches(), width, show)
    if show:
        show(docs, final=True)
    print(f"{PROG}: wrote {total:,} ids of {docs:,} documents to {a.output} ({a.dtype or 'uint32'}) and their "
          f"offsets to {_arrays.offsets_path(a.output)}", file=sys.stderr)
    return 0


def _feed_stdin(batch: list[str], flush: Callable[[], None], lines: Optional[Iterable[str]] = None) -> None:
    """Reads stdin (or ``lines``) a line at a time into ``batch``, calling ``flush`` every 8192 lines and at the end."""
    for line in _stdin_lines() if lines is None else lines:
        batch.append(line)
        if len(batch) >= 8192:
            flush()
    flush()


def _encode_foreign(tok: Any, a: argparse.Namespace) -> int:
    """encode for a tokenizer read from another library's file: ids, pieces (the format's own
    text form when it has one, e.g. subword-nmt's ``lo@@ west``) or JSON lines without offsets."""
    for flag, value in (("--dropout", a.dropout), ("--segmenter", a.segmenter), ("--seed", a.seed),
                        ("--nbest", a.nbest), ("--alpha", a.alpha), ("--stochastok", a.stochastok)):
        if value is not None:
            raise SubwordsError(f"{flag}: {_describe(tok, a.model)}, encoded exactly as its library does; "
                                f"{flag} needs a subwords model (convert it, or train one)")
    allowed = _allowed(a.allow_special)
    out = sys.stdout
    show = _progress(sys.stderr, "encode")
    done = 0
    batch: list[str] = []
    text_form = getattr(tok, "process_line", None)

    def flush() -> None:
        nonlocal done
        if not batch:
            return
        results = tok.encode_batch(batch, threads=a.threads, allowed_special=allowed)
        for line, ids in zip(batch, results):
            if a.jsonl:
                obj = {"pieces": [tok.id_to_piece(i) for i in ids], "ids": ids}
                out.write(json.dumps(obj, ensure_ascii=False) + "\n")
            elif a.ids:
                out.write(" ".join(map(str, ids)) + "\n")
            elif text_form is not None and not (allowed and tok.special_tokens):
                out.write(text_form(line) + "\n")
            else:
                out.write(" ".join(tok.id_to_piece(i) for i in ids) + "\n")
        done += len(batch)
        batch.clear()
        if show:
            show(done)

    _feed_stdin(batch, flush, inputs_cli.encode_lines(a))
    if show:
        show(done, final=True)
    return 0


def cmd_decode(a: argparse.Namespace) -> int:
    tok = load_model(a.model, a.format, a.load_option)
    own = _is_own(tok)
    decode_pieces = getattr(tok, "decode_pieces", None) or (lambda items: tok.decode([tok.piece_to_id(x) for x in items]))
    for n, line in enumerate(_stdin_lines(), 1):
        # Pieces are separated by U+0020 only: a piece never holds one, but it can hold characters
        # that str.split() would also cut at (U+001C..U+001F are not White_Space, docs/API.md).
        items = [x for x in line.split(" ") if x]
        try:
            if a.ids:
                if not all(x.isascii() and x.isdigit() for x in items):
                    raise SubwordsError(f"expected ids (whole numbers) separated by spaces, got {line!r}")
                sys.stdout.write(tok.decode([int(x) for x in items]) + "\n")
            else:
                sys.stdout.write((tok.decode_pieces(items) if own else decode_pieces(items)) + "\n")
        except UnknownPieceError as e:
            raise UnknownPieceError(f"stdin: line {n}: {e}") from None
        except SubwordsError as e:
            raise SubwordsError(f"stdin: line {n}: {e}") from None
    return 0


def _inspect_foreign(tok: Any, a: argparse.Namespace) -> int:
    """inspect for a tokenizer from another library's file: its format, size, special tokens,
    rows (and merges, when it has them)."""
    n = tok.vocab_size
    merges = getattr(tok, "merges", None)
    if merges is None:
        merges = getattr(tok, "codes", None)
    merges = list(merges) if merges is not None and not callable(merges) else []
    if a.json:
        obj = {"format": tok.format, "vocab_size": n, "special_tokens": dict(tok.special_tokens),
               "rows": [tok.id_to_piece(i) for i in range(n)], "merges": [list(m) for m in merges]}
        print(json.dumps(obj, ensure_ascii=False))
        return 0
    print(f"format     {tok.format}")
    print(f"rows       {n}")
    specials = tok.special_tokens
    if specials:
        shown = ", ".join(f"{k} ({v})" for k, v in list(specials.items())[:10])
        print(f"special    {len(specials)}: {shown}{' ...' if len(specials) > 10 else ''}")
    if merges:
        print(f"merges     {len(merges)}")
    if a.rows:
        print(f"first {min(a.rows, n)} rows:")
        for i in range(min(a.rows, n)):
            print(f"  {i:>6}  {tok.id_to_piece(i)}")
    if merges and a.rows:
        print(f"first {min(a.rows, len(merges))} merges:")
        for k, (l, rr) in enumerate(merges[: a.rows]):
            print(f"  {k:>6}  {l} + {rr}")
    return 0


def cmd_inspect(a: argparse.Namespace) -> int:
    tok = load_model(a.model, a.format, a.load_option)
    if not _is_own(tok):
        return _inspect_foreign(tok, a)
    if a.json:
        obj = {"model": tok.model, "spelling": tok.spelling, "vocab_size": tok.vocab_size, "rows": tok.rows,
               **({"log_probs": [None if p is None or math.isinf(p) else p for p in tok.log_probs]}
                  if tok.model == "unigram" else {}),
               "kinds": tok.kinds, "merges": [list(m) for m in tok.merges], "report": tok.report, "options": tok.options}
        print(json.dumps(obj, ensure_ascii=False))
        return 0
    r = tok.report
    kinds = tok.kinds
    counts = {k: kinds.count(k) for k in dict.fromkeys(kinds)}
    print(f"model      {tok.model}")
    s = tok.spelling
    mark = f"mark {s['mark']!r}, " if s.get("mark") else ""
    print(f"spelling   {s['scheme']} ({mark}byte fallback {'on' if s['byte_fallback'] else 'off'})")
    print(f"rows       {tok.vocab_size}  ({', '.join(f'{v} {k}' for k, v in counts.items())})")
    print(f"merges     {len(tok.merges)}")
    if r:
        print(f"stopped    by {r.get('stop')}; corpus {r.get('corpus_pieces_before')} -> {r.get('corpus_pieces_after')} pieces")
    rows = tok.rows
    merges = tok.merges
    if a.rows:
        print(f"first {min(a.rows, len(rows))} rows:")
    for i in range(min(a.rows, len(rows))):
        print(f"  {i:>6}  {rows[i]:<20} {kinds[i]}")
    if merges and a.rows:
        print(f"first {min(a.rows, len(merges))} merges:")
        for k, (l, rr) in enumerate(merges[: a.rows]):
            print(f"  {k:>6}  {l} + {rr}")
    return 0


def cmd_export(a: argparse.Namespace) -> int:
    tok = load_model(a.model, a.source_format, a.load_option)
    if not _is_own(tok) and a.format != tok.format:
        # a foreign tokenizer is written in another format through the subwords model it is
        # equivalent to, when it has one (e.g. subword-nmt 0.2 codes)
        inner = getattr(tok, "tokenizer", None)
        if inner is None:
            raise SubwordsError(f"{_describe(tok, a.model)} with no equivalent subwords model, so it cannot be "
                                f"written as {a.format}")
        tok = inner
    out = a.output
    if os.path.exists(out) and os.path.samefile(out, a.model):
        raise SubwordsError(f"{out}: is MODEL itself; write the export to another path")
    export_atomic(tok, out, a.format)
    print(f"{PROG}: wrote {out} ({a.format})", file=sys.stderr)
    return 0


def stdlib_files() -> list[Path]:
    """The Python standard library's own sources: a corpus every machine running subwords has."""
    root = Path(sysconfig.get_paths()["stdlib"])
    files = sorted(p for p in root.glob("*.py") if p.is_file())
    if not files:
        raise SubwordsError(f"no Python sources found under {root}; pass your own files to 'subwords train'")
    return files


def cmd_quickstart(a: argparse.Namespace) -> int:
    import subwords

    if a.output:
        _check_output(a.output)
    files = stdlib_files()
    size = sum(f.stat().st_size for f in files)
    # Python sources hold words that begin with "##" ("####" comment rules): the continuation
    # is a property of the row, not a prefix of its text, so they train under "##" too.
    mark = a.mark
    shown = f", mark {mark}" if mark else ""
    print(f"training BPE ({a.spelling} spelling{shown}, {a.vocab_size} rows) on {len(files)} standard-library files, {size / 1e6:.1f} MB ...")
    start = time.monotonic()
    tok = subwords.train(files, model="bpe", spelling=a.spelling, vocab_size=a.vocab_size, mark=mark,
                         progress=sys.stderr.isatty(),
                         input_errors="replace")
    secs = time.monotonic() - start
    r = tok.report
    print(f"learned {len(tok.merges)} merges in {secs:.2f}s; the corpus went from {r['corpus_pieces_before']:,} to {r['corpus_pieces_after']:,} pieces")
    pieces = tok.encode_pieces(a.sentence)
    print(f"\n{a.sentence}\n  -> {len(pieces)} pieces: {' '.join(pieces)}")
    back = tok.decode(tok.encode(a.sentence))
    print(f"  -> decoded: {back}")
    if a.output:
        tok.save(a.output)
        print(f"saved {a.output}; try: echo 'some text' | subwords encode -m {a.output}")
    return 0


def _os_error_text(e: OSError) -> str:
    """The message without Python's "[Errno 2]" prefix, keeping the file name."""
    if e.errno is None or not e.strerror:
        return str(e)
    return f"{e.filename}: {e.strerror}" if e.filename else e.strerror


COMMANDS = {"train": cmd_train, "encode": cmd_encode, "decode": cmd_decode, "inspect": cmd_inspect, "export": cmd_export,
            "quickstart": cmd_quickstart, "count": _cli_scale.cmd_count}


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        if isinstance(sys.stdout, io.TextIOWrapper):
            sys.stdout.reconfigure(encoding="utf-8")
        status = COMMANDS[args.command](args)
        sys.stdout.flush()
        return status
    except BrokenPipeError:
        # The reader went away (`subwords encode ... | head`): not an error. Point stdout at
        # devnull so the interpreter's final flush does not raise again.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except SubwordsError as e:
        print(f"{PROG}: error: {e}", file=sys.stderr)
        return 2
    except OSError as e:
        print(f"{PROG}: error: {_os_error_text(e)}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"{PROG}: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
