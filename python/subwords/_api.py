"""The public API: ``train``, ``load`` and ``Tokenizer``, over the Rust engine in ``_core``.

Everything that touches text runs in Rust with the GIL released; this layer validates options,
turns the accepted input forms into what the engine reads, and gives errors their classes.
"""

from __future__ import annotations

import contextlib
import contextvars
import gc
import json
import math
import os
import re
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal, Optional, Union, cast

from . import _core
from . import counts as _counts
from ._checks import text_arg
from ._io import read_limited, write_atomic
from ._progress import ProgressLine
from .errors import InputError, ModelFileError, OptionError, SubwordsError, UnknownPieceError

if TYPE_CHECKING:
    from typing_extensions import TypeGuard  # typing's own from Python 3.10

Model = Literal["bpe", "word", "wordpiece", "unigram"]
SpellingName = Literal["end", "continuation", "front", "bytes"]
Joints = Union[Mapping[str, Sequence[str]], Callable[[str], Optional[Sequence[str]]]]
# what train() learns from: a word -> count table, texts, or UTF-8 files (one text per line)
TrainData = Union[Mapping[str, int], Iterable[str], "os.PathLike[str]", Sequence["os.PathLike[str]"]]
# what train() also takes: a count table (subwords.count)
TrainInput = Union[TrainData, "_counts.CountTable"]

_MODELS = ("bpe", "word", "wordpiece", "unigram")
# each model's own spelling, when none is named
_DEFAULT_SPELLING: dict[str, SpellingName] = {"bpe": "end", "word": "end", "wordpiece": "continuation", "unigram": "end"}
_SPELLINGS = ("end", "continuation", "front", "bytes")
# what text and counts can be fed to: a trainer, or a counter that makes a count table
_Feedable = Union[_core.Trainer, _core.Counter]
_BATCH_CHARS = 4 << 20
# A model file larger than this is refused before it is parsed (a hostile or mistaken file).
MAX_MODEL_FILE_BYTES = 1 << 31
MAX_VOCAB_TXT_BYTES = 64 << 20  # bert-base-uncased's is 232 KB, multilingual BERT's under 1 MB


@contextlib.contextmanager
def gc_paused() -> Iterator[None]:
    """No cyclic garbage collection while a batch's result lists are built: they hold only ints
    and cannot form cycles, yet each list counts toward the collector's thresholds, and the
    collections they trigger cost a batch of short texts a tenth of its time."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def _threads(threads: Optional[int]) -> int:
    if threads is None:
        return os.cpu_count() or 1
    if isinstance(threads, bool) or not isinstance(threads, int) or threads < 1 or threads > 1024:
        raise OptionError(f"threads must be a whole number from 1 to 1024, got {threads!r}")
    return threads


def _surrogate_error(e: UnicodeError, where: str) -> InputError:
    pos = getattr(e, "start", None)
    return InputError(
        f"{where} contains a lone surrogate (at code point {pos}), which is not text and has no UTF-8 "
        "spelling; clean the string first, e.g. s.encode('utf-8', 'replace').decode('utf-8')"
    )


# Counts cross into the engine as u64.
MAX_COUNT = 2**64 - 1


def _check_count(word: object, count: object, where: str) -> tuple[str, int]:
    if not isinstance(word, str) or not word:
        raise InputError(f"{where}: the word must be a non-empty string, got {word!r}")
    if any(c.isspace() for c in word):
        raise InputError(f"{where}: {word!r} contains whitespace; a count table holds one whitespace-free word per row")
    if isinstance(count, bool) or not isinstance(count, int) or count < 1:
        raise InputError(f"{where}: the count of {word!r} must be a positive whole number, got {count!r}")
    if count > MAX_COUNT:
        raise InputError(f"{where}: the count of {word!r} is {count}, above the largest count subwords takes ({MAX_COUNT})")
    return word, count


def parse_count_line(line: str, where: str) -> Optional[tuple[str, int]]:
    """One ``word<TAB>count`` line (without its newline): the row, or None for a blank line.

    The count is ASCII digits only: ``str.isdigit`` would let through ``²`` (which ``int`` then
    rejects with a bare ValueError) and other scripts' digits (which ``int`` silently reads)."""
    if not line.strip():
        return None
    parts = line.split("\t")
    if len(parts) != 2 or re.fullmatch(r"[0-9]+", parts[1].strip(" ")) is None:
        raise InputError(f"{where}: expected 'word<TAB>positive integer', got {line!r}")
    return _check_count(parts[0], int(parts[1]), where)


def read_count_table(path: Union[str, os.PathLike[str]], errors: str = "strict") -> list[tuple[str, int]]:
    """Reads a ``word<TAB>count`` file; a bad line is refused naming the file and line."""
    rows: list[tuple[str, int]] = []
    with open(path, "rb") as f:
        for n, raw in enumerate(f, 1):
            where = f"{os.fspath(path)}: line {n}"
            try:
                line = raw.decode("utf-8", errors=errors).rstrip("\r\n")
            except UnicodeDecodeError as e:
                raise InputError(
                    f"{where}: invalid UTF-8 (byte 0x{raw[e.start]:02X}); convert the file to UTF-8, "
                    "or pass input_errors='replace'"
                ) from None
            row = parse_count_line(line, where)
            if row is not None:
                rows.append(row)
    return rows


def _apply_joints(units: list[tuple[str, int]], joints: Joints) -> tuple[list[tuple[str, bool, bool, int]], dict[str, list[str]]]:
    """Cuts each training word at its joints. A callable is evaluated here, once per distinct
    word, and the cuts it made are what the model keeps (and applies when encoding)."""
    out: list[tuple[str, bool, bool, int]] = []
    cuts: dict[str, list[str]] = {}
    for word, count in units:
        parts = joints(word) if callable(joints) else joints.get(word)
        if parts is not None and (isinstance(parts, str) or not isinstance(parts, Iterable)):
            raise OptionError(f"the joints of {word!r} must be a list of parts (str), got {parts!r}")
        parts = list(parts) if parts is not None else []
        if len(parts) <= 1:
            out.append((word, True, True, count))
            continue
        if any(not isinstance(p, str) or not p for p in parts) or "".join(parts) != word:
            raise OptionError(
                f"the joints of {word!r} are {parts!r}, which do not spell the word: give non-empty parts "
                "that concatenate to it"
            )
        last = len(parts) - 1
        out.extend((p, k == 0, k == last, count) for k, p in enumerate(parts))
        cuts[word] = parts
    return out, cuts


def train(
    data: TrainInput,
    *,
    model: Model = "bpe",
    spelling: Optional[SpellingName] = None,
    vocab_size: int,
    min_count: Optional[int] = None,
    byte_fallback: bool = False,
    byte_fallback_in_budget: bool = False,
    mark: Optional[str] = None,
    split_at_marks: bool = True,
    pre_split: Optional[Literal["gpt2", "bert"]] = None,
    joints: Optional[Joints] = None,
    superword_at: Optional[int] = None,
    max_piece_length: Union[int, None, Literal["16 for unigram, else no bound"]] = "16 for unigram, else no bound",
    alphabet_size: Optional[int] = None,
    character_coverage: Optional[float] = None,
    counts: bool = False,
    threads: Optional[int] = None,
    input_errors: Literal["strict", "replace"] = "strict",
    min_count_rule: Optional[Literal["filter", "stop"]] = None,
    unknown: Optional[Literal["word", "rest"]] = None,
    max_word_length: Union[int, None, Literal["100 for wordpiece"]] = "100 for wordpiece",
    lowercase: bool = False,
    strip_accents: bool = False,
    clean_text: bool = False,
    preset: Optional[Literal["bert"]] = None,
    seed_size: Union[int, None, Literal["1_000_000 for unigram"]] = "1_000_000 for unigram",
    shrink: Optional[float] = None,
    em_rounds: Optional[int] = None,
    progress: bool = False,
) -> "Tokenizer":
    """Learns a vocabulary from ``data`` and returns a :class:`Tokenizer`.

    ``spelling`` defaults to the model's own: ``end`` for BPE (Sennrich), ``continuation`` for
    WordPiece. WordPiece takes ``min_count_rule`` (``"filter"``: pairs below ``min_count`` are no
    candidates, the default; ``"stop"``: test the winner and stop, reported in
    ``report["winner_failed"]``), ``unknown`` (``"word"``: an unfinishable word is one ``[UNK]``;
    ``"rest"``: the pieces matched so far and one ``[UNK]``) and ``max_word_length`` (100, as
    BERT). ``progress=True`` draws a progress line on stderr while training (the CLI does so on a
    terminal). ``data`` is a ``word -> count`` mapping (the form the pages print their corpora in), an
    iterable of texts, or a ``pathlib.Path`` (or list of them) of UTF-8 files, one text per line
    (``counts=True``: ``word<TAB>count`` tables).

    >>> tok = train({"low": 5, "lower": 2, "newest": 6, "widest": 3}, vocab_size=22)
    >>> tok.merges[:3]
    [('e', 's'), ('es', 't</w>'), ('l', 'o')]
    """
    if preset is not None:
        if preset != "bert":
            raise OptionError(f"preset must be 'bert' (or None), got {preset!r}")
        # BERT's WordPiece: continuation marks, punctuation and CJK stand alone, text cleaned,
        # lower-cased and stripped of accents (as bert-base-uncased)
        if model != "bpe" and model != "wordpiece" or spelling not in (None, "continuation"):
            raise OptionError("preset='bert' is model='wordpiece' on the continuation spelling; leave model and spelling out")
        model, spelling, pre_split = "wordpiece", "continuation", "bert"
        lowercase = strip_accents = clean_text = True
    if model not in _MODELS:
        raise OptionError(f"model must be one of {', '.join(_MODELS)}; got {model!r}")
    # Unigram's defaults for real corpora (sentencepiece's): pieces of at most 16 symbols, a
    # seed of at most a million; None asks for no bound. Neither bites on the pages' corpora.
    if max_piece_length == "16 for unigram, else no bound":
        max_piece_length = 16 if model == "unigram" else None
    if seed_size == "1_000_000 for unigram":
        seed_size = 1_000_000 if model == "unigram" else None
    if spelling is None:
        spelling = _DEFAULT_SPELLING[model]
    if min_count_rule not in (None, "filter", "stop"):
        raise OptionError(f"min_count_rule must be 'filter' or 'stop', got {min_count_rule!r}")
    if unknown not in (None, "word", "rest"):
        raise OptionError(f"unknown must be 'word' or 'rest', got {unknown!r}")
    if max_word_length == "100 for wordpiece":
        # BERT's limit by default; an explicit None means no limit
        max_word_length = 100 if model == "wordpiece" else None
    elif model != "wordpiece":
        raise OptionError("max_word_length applies only to model='wordpiece'")
    if max_word_length is not None and (isinstance(max_word_length, bool) or not isinstance(max_word_length, int)
                                        or not 1 <= max_word_length <= 2**32 - 1):
        raise OptionError(f"max_word_length must be a whole number of characters from 1 (or None: no limit), got {max_word_length!r}")
    if model == "wordpiece":
        min_count_rule = min_count_rule or "filter"
        unknown = unknown or "word"
    if spelling not in _SPELLINGS:
        raise OptionError(f"spelling must be one of {', '.join(_SPELLINGS)}; got {spelling!r}")
    if input_errors not in ("strict", "replace"):
        raise OptionError(f"input_errors must be 'strict' or 'replace', got {input_errors!r}")
    if pre_split not in (None, "gpt2", "bert"):
        raise OptionError(f"pre_split must be None, 'gpt2' (bytes) or 'bert' (end, continuation), got {pre_split!r}")
    if vocab_size is None:
        raise OptionError("vocab_size is required: the number of rows to learn up to (a ceiling)")
    for name, value, top in (("vocab_size", vocab_size, MAX_COUNT), ("min_count", min_count, MAX_COUNT),
                             ("superword_at", superword_at, MAX_COUNT), ("max_piece_length", max_piece_length, 2**32 - 1),
                             ("alphabet_size", alphabet_size, MAX_COUNT)):
        if value is not None and (isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= top):
            raise OptionError(f"{name} must be a whole number from 0 to {top}, got {value!r}")
    if character_coverage is not None and (
        isinstance(character_coverage, bool) or not isinstance(character_coverage, (int, float))
        or not math.isfinite(character_coverage) or not 0 < character_coverage <= 1
    ):
        raise OptionError(f"character_coverage must be a number in (0, 1], got {character_coverage!r}")
    if mark is not None and not isinstance(mark, str):
        raise OptionError(f"mark must be a string (or None for the spelling's default), got {mark!r}")
    if joints is not None and not (callable(joints) or isinstance(joints, Mapping)):
        raise OptionError("joints must be a mapping word -> parts, or a callable word -> parts")
    for name, value in (("byte_fallback", byte_fallback), ("byte_fallback_in_budget", byte_fallback_in_budget),
                        ("split_at_marks", split_at_marks), ("counts", counts), ("lowercase", lowercase),
                        ("strip_accents", strip_accents), ("clean_text", clean_text)):
        if not isinstance(value, bool):
            raise OptionError(f"{name} must be True or False, got {value!r}")
    if model != "unigram" and (seed_size is not None or shrink is not None or em_rounds is not None):
        raise OptionError("seed_size, shrink and em_rounds apply only to model='unigram'")
    if model == "unigram":
        if min_count is not None:
            raise OptionError("min_count does not apply to model='unigram' (pruning decides what stays)")
        if seed_size is not None and (isinstance(seed_size, bool) or not isinstance(seed_size, int) or seed_size < 1):
            raise OptionError(f"seed_size must be a whole number from 1, got {seed_size!r}")
        if shrink is not None and (isinstance(shrink, bool) or not isinstance(shrink, (int, float))
                                   or not math.isfinite(shrink) or not 0 < shrink < 1):
            raise OptionError(f"shrink must be a number strictly between 0 and 1, got {shrink!r}")
        if em_rounds is not None and (isinstance(em_rounds, bool) or not isinstance(em_rounds, int)
                                      or not 0 <= em_rounds <= 10**6):
            raise OptionError(f"em_rounds must be a whole number from 0, got {em_rounds!r}")
    if min_count is None:
        min_count = 1 if model == "word" else 2
    options: dict[str, Any] = {
        "model": model,
        "spelling": spelling,
        "vocab_size": vocab_size,
        "min_count": min_count,
        "byte_fallback": byte_fallback,
        "byte_fallback_in_budget": byte_fallback_in_budget,
        "mark": mark,
        "split_at_marks": split_at_marks,
        "pre_split": pre_split,
        "joints": joints is not None,
        "superword_at": superword_at,
        "max_piece_length": max_piece_length,
        "alphabet_size": alphabet_size,
        "character_coverage": None if character_coverage is None else float(character_coverage),
        "input_errors": input_errors,
        "min_count_rule": min_count_rule,
        "unknown": unknown,
        "max_word_length": max_word_length,
        "lowercase": lowercase,
        "strip_accents": strip_accents,
        "clean_text": clean_text,
        "seed_size": seed_size,
        "shrink": None if shrink is None else float(shrink),
        "em_rounds": em_rounds,
    }
    trainer = _core.Trainer(json.dumps(options), _threads(threads))
    if not isinstance(progress, bool):
        raise OptionError(f"progress must be True or False, got {progress!r}")
    with ProgressLine(trainer.progress_view()) if progress else contextlib.nullcontext():
        tables = _counts.table_paths(data, counts=counts)
        if isinstance(data, _counts.CountTable) or (tables is not None and len(tables) > 1):
            if isinstance(data, _counts.CountTable):
                table = data
            else:
                assert tables is not None
                first, *rest = (_counts.CountTable.load(p) for p in tables)
                table = first.merge(*rest)
            _core.trainer_use_table(trainer, table._core)
            if joints is not None:
                trainer.set_units(*_apply_joints(list(table.items()), joints))
        elif tables is not None:
            # one table file: read straight into the trainer, its units moved rather than copied
            _core.trainer_load_table(trainer, os.fspath(tables[0]), _counts.MAX_TABLE_BYTES)
            if joints is not None:
                trainer.set_units(*_apply_joints(list(_counts.CountTable.load(tables[0]).items()), joints))
        else:
            _feed(trainer, data, counts=counts, input_errors=input_errors)
            if joints is not None:
                trainer.set_units(*_apply_joints(trainer.unit_counts(), joints))
        return _train_model(trainer)


# ---- trace hook (subwords.measure): a traced training sets a request for this context; train()
# then asks the engine for its trace and hands it back through the same object.
_TRACE_REQUEST: "contextvars.ContextVar[Optional[dict[str, Any]]]" = contextvars.ContextVar("subwords_trace", default=None)


def _train_model(trainer: _core.Trainer) -> "Tokenizer":
    request = _TRACE_REQUEST.get()
    if request is None:
        return Tokenizer(trainer.train())
    model, trace = _core.train_traced(trainer, json.dumps(request["ask"]))
    request["trace"] = json.loads(trace)
    return Tokenizer(model)


def _count_options(spelling: str, mark: Optional[str], split_at_marks: bool, pre_split: Optional[str], lowercase: bool,
             strip_accents: bool, clean_text: bool, input_errors: str) -> str:
    if spelling not in _SPELLINGS:
        raise OptionError(f"spelling must be one of {', '.join(_SPELLINGS)}; got {spelling!r}")
    for name, value in (("split_at_marks", split_at_marks), ("lowercase", lowercase),
                        ("strip_accents", strip_accents), ("clean_text", clean_text)):
        if not isinstance(value, bool):
            raise OptionError(f"{name} must be True or False, got {value!r}")
    return json.dumps({"spelling": spelling, "mark": mark, "split_at_marks": split_at_marks, "pre_split": pre_split,
                       "lowercase": lowercase, "strip_accents": strip_accents, "clean_text": clean_text,
                       "input_errors": input_errors})


def _counter(*, spelling: str = "end", mark: Optional[str] = None, split_at_marks: bool = True,
            pre_split: Optional[Literal["gpt2", "bert"]] = None, lowercase: bool = False, strip_accents: bool = False,
            clean_text: bool = False, input_errors: Literal["strict", "replace"] = "strict",
            threads: Optional[int] = None) -> _core.Counter:
    """The engine's counter for these options (used by :func:`count` and the Dask workers)."""
    return _core.Counter(_count_options(spelling, mark, split_at_marks, pre_split, lowercase, strip_accents, clean_text,
                                  input_errors), _threads(threads))


def count(data: TrainData, *,
          spelling: str = "end", mark: Optional[str] = None, split_at_marks: bool = True,
          pre_split: Optional[Literal["gpt2", "bert"]] = None, lowercase: bool = False, strip_accents: bool = False,
          clean_text: bool = False, counts: bool = False, input_errors: Literal["strict", "replace"] = "strict",
          threads: Optional[int] = None) -> _counts.CountTable:
    """Counts the units of ``data`` -- texts, a ``word -> count`` mapping, or paths to UTF-8 files
    (one text per line; ``counts=True``: ``word<TAB>count`` files) -- under a spelling's options,
    the same ones :func:`subwords.train` takes. Train on the result with
    ``subwords.train(table, ...)``.
    """
    c = _counter(spelling=spelling, mark=mark, split_at_marks=split_at_marks, pre_split=pre_split, lowercase=lowercase,
                strip_accents=strip_accents, clean_text=clean_text, input_errors=input_errors, threads=threads)
    _feed(c, data, counts=counts, input_errors=input_errors)
    table = _counts.CountTable(c.finish())
    if len(table) == 0:
        raise InputError("the input holds no units to count (empty texts, or nothing but whitespace)")
    return table


def _is_paths(data: object) -> TypeGuard[Union[os.PathLike[str], Sequence[os.PathLike[str]]]]:
    if isinstance(data, os.PathLike):
        return True
    return isinstance(data, (list, tuple)) and bool(data) and all(isinstance(p, os.PathLike) for p in data)


def _feed(trainer: _Feedable, data: TrainData, *, counts: bool, input_errors: str) -> None:
    if isinstance(data, (str, bytes)):
        raise InputError(
            "train() got a single string: pass a list of texts, a word -> count mapping, "
            "or pathlib.Path(...) for a file"
        )
    if isinstance(data, Mapping):
        rows = [_check_count(w, c, "count table") for w, c in data.items()]
        _add_counts(trainer, rows)
        return
    from . import inputs  # files of every format, folders, globs, datasets, sampling

    if not counts and (source := inputs.source(data)) is not None:
        source.feed(trainer, input_errors, _feed_batch)
        return
    if _is_paths(data):
        paths = [data] if isinstance(data, os.PathLike) else list(data)
        for p in paths:
            if counts:
                _add_counts(trainer, read_count_table(p, errors=input_errors))
            else:
                trainer.feed_file(os.fspath(p))
        return
    if counts:
        raise InputError("counts=True needs paths to word<TAB>count files, or pass a mapping")
    if not isinstance(data, Iterable):
        raise InputError(f"cannot train from {type(data).__name__}: pass texts, a mapping, or paths")
    batch: list[str] = []
    size = 0
    first = 0  # index of batch[0] among all texts, for error messages
    for n, text in enumerate(data):
        if not isinstance(text, str):
            raise InputError(f"text {n} is {type(text).__name__}, not str")
        batch.append(text)
        size += len(text)
        if size >= _BATCH_CHARS:
            _feed_batch(trainer, batch, first)
            first += len(batch)
            batch, size = [], 0
    _feed_batch(trainer, batch, first)


def _add_counts(trainer: _Feedable, rows: list[tuple[str, int]]) -> None:
    try:
        trainer.add_counts(rows)
    except UnicodeError as e:
        raise _surrogate_error(e, "the count table") from None


def _feed_batch(trainer: _Feedable, batch: list[str], first: int = 0) -> None:
    if not batch:
        return
    try:
        trainer.feed_texts(batch)
    except UnicodeError as e:
        raise _surrogate_error(e, f"training text {first + _first_unencodable(batch)}") from None


def _first_unencodable(texts: list[str]) -> int:
    for n, t in enumerate(texts):
        try:
            t.encode("utf-8")
        except UnicodeEncodeError:
            return n
    return 0


def load(path: Union[str, os.PathLike[str]]) -> "Tokenizer":
    """Loads a model file written by :meth:`Tokenizer.save`."""
    p = os.fspath(path)
    raw = read_limited(p, MAX_MODEL_FILE_BYTES, "model file")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise ModelFileError(f"{p}: not a subwords model file (not UTF-8 text)") from None
    try:
        return Tokenizer.from_json(text)
    except ModelFileError as e:
        raise ModelFileError(f"{p}: {e}") from None


def bert(vocab: Union[str, os.PathLike[str]], *, lowercase: bool = True, strip_accents: Optional[bool] = None,
         clean_text: bool = True) -> "Tokenizer":
    """A BERT WordPiece tokenizer from an existing ``vocab.txt`` (one piece per line, its line
    number its id), used as it is: text cleaned, CJK ideographs and punctuation split off,
    lower-cased and stripped of accents when ``lowercase`` (as ``bert-base-uncased``; pass
    ``lowercase=False`` for cased vocabularies), longest match first with ``##`` continuations,
    words over 100 characters as ``[UNK]``, and ``[CLS]``/``[SEP]`` around every text.
    """
    p = os.fspath(vocab)
    raw = read_limited(p, MAX_VOCAB_TXT_BYTES, "vocabulary (vocab.txt)")
    try:
        lines = raw.decode("utf-8").split("\n")
    except UnicodeDecodeError:
        raise ModelFileError(f"{p}: not UTF-8 text; a BERT vocab.txt is one UTF-8 piece per line") from None
    if lines and lines[-1] == "":
        lines.pop()
    pieces = [line.rstrip("\r") for line in lines]
    if not pieces:
        raise ModelFileError(f"{p}: empty vocabulary")
    for n, piece in enumerate(pieces, 1):
        if not piece or any(c.isspace() for c in piece):
            raise ModelFileError(f"{p}: line {n}: {piece!r} is not a piece (empty or with whitespace)")
    for name in ("[UNK]", "[CLS]", "[SEP]"):
        if name not in pieces:
            raise ModelFileError(f"{p}: has no {name} row; a BERT vocabulary needs [UNK], [CLS] and [SEP]")
    special = re.compile(r"\[[A-Za-z0-9_]+\]")
    rows = [[piece, "special" if special.fullmatch(piece) else "piece"] for piece in pieces]
    strip = lowercase if strip_accents is None else strip_accents
    doc = {
        "format": "subwords", "version": 1, "model": "wordpiece",
        "spelling": {"scheme": "continuation", "mark": "##", "split_at_marks": True, "pre_split": "bert",
                     "byte_fallback": False, "clean_text": bool(clean_text), "strip_accents": bool(strip),
                     "lowercase": bool(lowercase)},
        "stream_merges_from": None, "joints": None, "template": {"cls": "[CLS]", "sep": "[SEP]"},
        "options": None, "report": None, "rows": rows, "merges": [],
    }
    try:
        return Tokenizer.from_json(json.dumps(doc, ensure_ascii=False))
    except ModelFileError as e:
        raise ModelFileError(f"{p}: {e}") from None


class Tokenizer:
    """A spelling, a vocabulary and its segmenter: ``encode`` and ``decode``.

    >>> tok = train({"low": 5, "lower": 2, "newest": 6, "widest": 3}, vocab_size=22)
    >>> tok.encode_pieces("lowest newer")
    ['lo', 'w', 'est</w>', 'n', 'ew', 'e', 'r</w>']
    >>> tok.decode(tok.encode("lowest newer"))
    'lowest newer'
    """

    __slots__ = ("_model",)

    def __init__(self, model: _core.Model) -> None:
        if not isinstance(model, _core.Model):
            raise TypeError("Tokenizer is made by subwords.train, subwords.load or Tokenizer.from_json")
        self._model = model

    # -- encoding ---------------------------------------------------------------------------
    def encode(self, text: str, *, pair: Optional[str] = None, add_special_tokens: bool = True,
               dropout: Optional[float] = None, seed: Optional[int] = None,
               segmenter: Optional[Literal["viterbi", "fewest", "sample"]] = None, alpha: Optional[float] = None, nbest: Optional[int] = None) -> list[int]:
        """Ids of ``text``. With ``dropout=p`` (BPE-dropout), each merge is skipped with
        probability ``p``; a ``seed`` is then required, so runs are repeatable.

        A model with a template (a BERT vocabulary) puts ``[CLS]`` before the text and ``[SEP]``
        after it, and after ``pair`` if one is given, unless ``add_special_tokens=False``."""
        if segmenter is not None or alpha is not None or nbest is not None:
            return self._encode_segmenter(text, segmenter, alpha, nbest, seed, dropout)
        template = self._model.template() if add_special_tokens else None
        if pair is not None:
            if self._model.template() is None:
                raise OptionError("pair= needs a model with a [CLS]/[SEP] template (see subwords.bert)")
            first = self.encode(text, add_special_tokens=False, dropout=dropout, seed=seed)
            second = self.encode(pair, add_special_tokens=False, dropout=dropout, seed=seed)
            if template is None:
                return first + second
            cls, sep = template
            return [cls, *first, sep, *second, sep]
        if template is not None:
            cls, sep = template
            return [cls, *self.encode(text, add_special_tokens=False, dropout=dropout, seed=seed), sep]
        _check_text(text)
        try:
            if dropout is None:
                if seed is not None:
                    raise OptionError("seed is only used with dropout")
                return self._model.encode(text)
            if isinstance(dropout, bool) or not isinstance(dropout, (int, float)) or not 0.0 <= dropout <= 1.0:
                raise OptionError(f"dropout must be a probability in [0, 1], got {dropout!r}")
            if seed is None or isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < 2**64:
                raise OptionError("dropout needs an explicit seed (a whole number from 0 to 2**64-1), so runs repeat")
            return self._model.encode_dropout(text, float(dropout), seed)
        except UnicodeError as e:
            raise _surrogate_error(e, "the text") from None

    def _encode_segmenter(self, text: str, segmenter: Optional[str], alpha: Optional[float], nbest: Optional[int],
                          seed: Optional[int], dropout: Optional[float]) -> list[int]:
        """Unigram's segmenters: "viterbi" (the default), "fewest", "sample" (seed, alpha, nbest)."""
        segmenter = segmenter or "viterbi"
        if self.model != "unigram":
            raise OptionError(f"segmenter= belongs to unigram models; this is a {self.model} model")
        if segmenter not in ("viterbi", "fewest", "sample"):
            raise OptionError(f"segmenter must be 'viterbi', 'fewest' or 'sample', got {segmenter!r}")
        if dropout is not None:
            raise OptionError("dropout is BPE's; a unigram model samples with segmenter='sample'")
        if segmenter != "sample":
            if alpha is not None or nbest is not None or seed is not None:
                raise OptionError("alpha, nbest and seed go with segmenter='sample'")
            _check_text(text)
            if segmenter == "viterbi":
                return self._model.encode(text)
            return self._model.encode_segmenter(text, "fewest", 1.0, None, 0)
        alpha, nbest, seed = _sampling(alpha, nbest, seed)
        _check_text(text)
        try:
            return self._model.encode_segmenter(text, "sample", alpha, nbest, seed)
        except UnicodeError as e:
            raise _surrogate_error(e, "the text") from None

    # -- Unigram analysis (docs/API.md, "Analysis of one unit") ----------------------------------
    @property
    def log_probs(self) -> list[Optional[float]]:
        """One natural-log probability per row (Unigram); None for rows that are not pieces."""
        return self._model.log_probs()

    def lattice(self, unit: str) -> list[tuple[int, int, str, float]]:
        """The arcs of a unit's lattice: (start, end, piece, log-probability), in arc order."""
        return self._model.lattice(_text(unit))

    def unit_log_probability(self, unit: str) -> float:
        """log P(unit): the total over every spelling."""
        return self._model.unit_log_probability(_text(unit))

    def unit_probability(self, unit: str) -> float:
        return math.exp(self.unit_log_probability(unit))

    def spellings(self, unit: str) -> list[tuple[list[str], float]]:
        """Every spelling with its share of the unit's probability (exponential: short units)."""
        return self._model.spellings(_text(unit))

    def nbest(self, unit: str, k: int) -> list[tuple[list[str], float]]:
        """The k best spellings with their scores (log-probabilities)."""
        if isinstance(k, bool) or not isinstance(k, int) or k < 1:
            raise OptionError(f"k must be a whole number from 1, got {k!r}")
        return self._model.nbest(_text(unit), k)

    def sample(self, unit: str, *, seed: int, alpha: float = 1.0, nbest: Optional[int] = None) -> list[str]:
        """A spelling drawn in proportion to its probability**alpha (among the nbest best)."""
        alpha, nbest, seed = _sampling(alpha, nbest, seed)
        return self._model.sample(_text(unit), seed, alpha, nbest)

    def fewest(self, unit: str) -> list[str]:
        """The fewest pieces this vocabulary spells the unit in (ties: longer piece first)."""
        return self._model.fewest(_text(unit))

    def losses(self, data: Union[Mapping[str, int], Iterable[str]]) -> dict[str, float]:
        """Each learned row's pruning loss on ``data`` (the current table), in row order."""
        if isinstance(data, Mapping):
            corpus = [_check_count(w, c, "count table") for w, c in data.items()]
        elif isinstance(data, str):
            raise InputError("losses() takes a mapping or an iterable of texts, not one string")
        else:
            corpus = [(_text(t), 1) for t in data]
        values = self._model.losses(corpus)
        learned = [p for p, k in zip(self.rows, self.kinds) if k == "learned"]
        return dict(zip(learned, values))

    def encode_pieces(self, text: str, **kw: Any) -> list[str]:
        # every id encode() gives has a row, so no piece is None
        return cast("list[str]", [self._model.id_to_piece(i) for i in self.encode(text, **kw)])

    def encode_with_offsets(self, text: str) -> list[tuple[int, int, int]]:
        """``(id, start, end)`` triples; ``text[start:end]`` is what the piece stands for
        (empty for a mark that stands for the start of the text)."""
        _check_text(text)
        try:
            ids, starts, ends = self._model.encode_with_offsets(text)
        except UnicodeError as e:
            raise _surrogate_error(e, "the text") from None
        return list(zip(ids, starts, ends))

    def encode_batch(self, texts: Iterable[str], *, threads: Optional[int] = None) -> list[list[int]]:
        batch = list(texts)
        for n, t in enumerate(batch):
            if not isinstance(t, str):
                raise InputError(f"text {n} of the batch is {type(t).__name__}, not str")
        try:
            with gc_paused():
                out = self._model.encode_batch(batch, _threads(threads))
        except UnicodeError as e:
            raise _surrogate_error(e, f"text {_first_unencodable(batch)} of the batch") from None
        template = self._model.template()
        if template is not None:
            cls, sep = template
            out = [[cls, *ids, sep] for ids in out]
        return out

    # -- decoding ---------------------------------------------------------------------------
    def decode(self, ids: Iterable[int]) -> str:
        return self._model.decode(_ids(ids))

    def decode_bytes(self, ids: Iterable[int]) -> bytes:
        return self._model.decode_bytes(_ids(ids))

    def decode_pieces(self, pieces: Iterable[str]) -> str:
        return self.decode(self.piece_to_id(p) for p in pieces)

    def normalize(self, text: str) -> str:
        """What ``decode(encode(text))`` gives back when every symbol of ``text`` is spellable."""
        _check_text(text)
        try:
            return self._model.normalize(text)
        except UnicodeError as e:
            raise _surrogate_error(e, "the text") from None

    def count_pieces(self, data: Union[Mapping[str, int], Iterable[str]]) -> int:
        """Total pieces of a corpus: a ``word -> count`` mapping or an iterable of texts."""
        if isinstance(data, Mapping):
            rows = [_check_count(w, c, "count table") for w, c in data.items()]
            if self.options.get("superword_at") is not None:
                # a two-stage model reads a count table as one stream, as training did
                return len(self._model.encode(" ".join(w for w, c in rows for _ in range(c))))
            return sum(c * len(self._model.encode(w)) for w, c in rows)
        if isinstance(data, str):
            raise InputError("count_pieces() takes a mapping or an iterable of texts, not one string")
        return sum(len(self.encode(t)) for t in data)

    # -- the vocabulary -----------------------------------------------------------------------
    @property
    def vocab_size(self) -> int:
        return self._model.vocab_size

    @property
    def rows(self) -> list[str]:
        return self._model.rows()

    @property
    def kinds(self) -> list[str]:
        return self._model.kinds()

    @property
    def merges(self) -> list[tuple[str, str]]:
        return self._model.merges()

    @property
    def model(self) -> str:
        return self._model.model_kind()

    @property
    def spelling(self) -> dict[str, Any]:
        spelling: dict[str, Any] = json.loads(self._model.spelling_json())
        return spelling

    @property
    def report(self) -> dict[str, Any]:
        return json.loads(self._model.report_json()) or {}

    @property
    def options(self) -> dict[str, Any]:
        return json.loads(self._model.options_json()) or {}

    def piece_to_id(self, piece: str) -> int:
        if not isinstance(piece, str):
            raise InputError(f"a piece is a str, got {type(piece).__name__}")
        i = self._model.piece_to_id(piece)
        if i is None:
            raise UnknownPieceError(f"{piece!r} is not a row of this vocabulary")
        return i

    def id_to_piece(self, id: int) -> str:
        p = self._model.id_to_piece(id) if isinstance(id, int) and 0 <= id < 2**32 else None
        if p is None:
            raise UnknownPieceError(f"{id!r} is not an id of this vocabulary ({self.vocab_size} rows)")
        return p

    # -- files ---------------------------------------------------------------------------------
    def to_json(self) -> str:
        return self._model.to_json()

    @classmethod
    def from_json(cls, text: str) -> "Tokenizer":
        if not isinstance(text, str):
            raise ModelFileError("a model is read from JSON text (str)")
        try:
            return cls(_core.Model.from_json(text))
        except ModelFileError:
            raise
        except SubwordsError as e:
            # The engine checks a file's spelling and options with the same code as train()'s
            # arguments, which raises OptionError; in a file they make the file bad.
            raise ModelFileError(f"the model file's settings are invalid: {e}") from None

    def save(self, path: Union[str, os.PathLike[str]]) -> None:
        """Writes the model file atomically: a failed save leaves no partial file behind."""
        write_atomic(path, self._model.to_json(), "model file")

    def __reduce__(self) -> tuple[Any, tuple[str]]:
        return (Tokenizer.from_json, (self.to_json(),))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Tokenizer) and self.to_json() == other.to_json()

    __hash__ = None  # type: ignore[assignment]  # unhashable (equal by content); typeshed types __hash__ as a method

    def __repr__(self) -> str:
        s = self.spelling
        return f"<subwords.Tokenizer {self.model} spelling={s['scheme']} rows={self.vocab_size} merges={len(self.merges)}>"


_text = text_arg


def _sampling(alpha: object, nbest: object, seed: object) -> tuple[float, Optional[int], int]:
    if seed is None or isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < 2**64:
        raise OptionError("sampling needs an explicit seed (a whole number from 0 to 2**64-1), so runs repeat")
    alpha = 1.0 if alpha is None else alpha
    if isinstance(alpha, bool) or not isinstance(alpha, (int, float)) or not math.isfinite(alpha) or alpha < 0:
        raise OptionError(f"alpha must be a finite number >= 0, got {alpha!r}")
    if nbest is not None and (isinstance(nbest, bool) or not isinstance(nbest, int) or nbest < 1):
        raise OptionError(f"nbest must be None or a whole number from 1, got {nbest!r}")
    return float(alpha), nbest, seed


_check_text = text_arg


def _ids(ids: Iterable[int]) -> list[int]:
    out = []
    for i in ids:
        if isinstance(i, bool) or not isinstance(i, int) or not 0 <= i < 2**32:
            raise UnknownPieceError(f"{i!r} is not an id")
        out.append(i)
    return out
