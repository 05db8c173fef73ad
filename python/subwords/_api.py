"""subwords' own models: ``train``, :class:`SubwordsTokenizer` and :class:`UnigramTokenizer`,
over the Rust engine in ``_core``.

Everything that touches text runs in Rust with the GIL released; this layer turns the accepted
input forms into what the engine reads and gives errors their classes. The options are checked
by the core (``_options.py`` only carries them).
"""

from __future__ import annotations

import contextlib
import gc
import json
import math
import os
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal, Optional, Union, cast, overload

from . import _core
from . import counts as _counts
from ._checks import batch_list, template_arg, text_arg
from ._io import read_limited, write_atomic
from ._options import CORE_PRE_SPLITS, Joints, ModelKind, Normalize, TrainOptions, from_keywords, from_saved, resolved
from ._progress import ProgressLine
from ._specials import AllowedSpecial
from ._specials import allowed_ids
from .errors import InputError, ModelFileError, OptionError, SubwordsError, UnknownPieceError

if TYPE_CHECKING:
    from typing_extensions import TypeGuard  # typing's own from Python 3.10
    from ._arrays import IdArray  # imported on use at run time: `subwords train` needs none of it

# what train() learns from: a word -> count table, texts, or UTF-8 files (one text per line)
TrainData = Union[Mapping[str, int], Iterable[str], "os.PathLike[str]", Sequence["os.PathLike[str]"]]
# what train() also takes: a count table (subwords.count)
TrainInput = Union[TrainData, "_counts.CountTable"]

# what text and counts can be fed to: a trainer, or a counter that makes a count table
_Feedable = Union[_core.Trainer, _core.Counter]
_BATCH_CHARS = 4 << 20
# A model file larger than this is refused before it is parsed (a hostile or mistaken file).
MAX_MODEL_FILE_BYTES = 1 << 31


class gc_paused:
    """No cyclic garbage collection while a batch's result lists are built: they hold only ints
    and cannot form cycles, yet each list counts toward the collector's thresholds, and the
    collections they trigger cost a batch of short texts a tenth of its time.

    A class, not a ``contextlib.contextmanager``: leaving a generator-based one raises and
    catches a ``StopIteration`` with its traceback, and those are the first new objects the
    collector counts once it is back on, so a collection of every list of the batch ran right
    there, inside the call, on the calling thread (30 M instructions for a 2 MB batch
    of lines, 13% of the whole batch). Now a collection runs only if the caller allocates
    containers while it still holds the lists, as it would for lists made any other way."""

    __slots__ = ("_was",)

    def __enter__(self) -> None:
        self._was = gc.isenabled()
        gc.disable()

    def __exit__(self, *exc: object) -> None:
        if self._was:
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
    """One ``word<TAB>count`` line (without its newline): the row, or None for a blank line; a bad
    line is an :class:`InputError` starting with ``where``. The rules are the core's
    (``counting::parse_count_line``), the same that table files are read by: the count is ASCII
    digits only (``str.isdigit`` would let ``²`` through, and ``int`` reads other scripts' digits),
    1 to 2**64 - 1, and the word is non-empty with no whitespace (as ``str.isspace`` has it)."""
    try:
        return _core.parse_count_line(line)
    except ValueError as e:
        raise InputError(f"{where}: {e}") from None


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


def train(data: Optional[TrainInput] = None, options: Optional[TrainOptions] = None, **keywords: Any) -> SubwordsTokenizer:
    """Learns a vocabulary from ``data`` and returns a :class:`SubwordsTokenizer`
    (a :class:`UnigramTokenizer` for ``model="unigram"``).

    The options are a :class:`TrainOptions` (``train(data, options)``) or its fields as keywords
    (``train(data, vocab_size=22, model="bpe")``); an unknown one is an :class:`OptionError`
    naming it. The core checks every value (``options.rs``).

    ``spelling`` defaults to the model's own: ``end`` for BPE (Sennrich), ``continuation`` for
    WordPiece. WordPiece takes ``min_count_rule`` (``"filter"``: pairs below ``min_count`` are no
    candidates, the default; ``"stop"``: test the winner and stop, reported in
    ``report["winner_failed"]``), ``unknown`` (``"word"``: an unfinishable word is one ``[UNK]``;
    ``"rest"``: the pieces matched so far and one ``[UNK]``) and ``max_word_length`` (100, as
    BERT). ``progress=True`` draws a progress line on stderr while training (the CLI does so on a
    terminal). ``data`` is a ``word -> count`` mapping (the form the pages print their corpora in), an
    iterable of texts, or a ``pathlib.Path`` (or list of them) of UTF-8 files, one text per line
    (``counts=True``: ``word<TAB>count`` tables). Parity-aware BPE (``parity=True``) takes one
    input per language instead, ``languages={"en": ..., "de": ...}``, or JSON lines files as
    ``data`` with ``language_field=`` (docs/METHODS.md).

    >>> tok = train({"low": 5, "lower": 2, "newest": 6, "widest": 3}, vocab_size=22)
    >>> tok.merges[:3]
    [('e', 's'), ('es', 't</w>'), ('l', 'o')]
    """
    return _train(data, options, keywords)[0]


def train_traced(data: TrainInput, ask: dict[str, Any], options: Optional[TrainOptions] = None,
                 **keywords: Any) -> tuple[SubwordsTokenizer, dict[str, Any]]:
    """:func:`train` with the engine's trace on, for :mod:`subwords.measure`. ``ask`` is the request
    ``_core.train_traced`` takes (ties, forced choices, EM, lengths only); returns the model and the
    trace as parsed JSON."""
    tok, trace = _train(data, options, keywords, ask)
    assert trace is not None
    return tok, trace


def _train(data: Optional[TrainInput], options: Optional[TrainOptions], keywords: dict[str, Any],
           ask: Optional[dict[str, Any]] = None) -> tuple[SubwordsTokenizer, Optional[dict[str, Any]]]:
    languages = keywords.pop("languages", None)
    if options is None:
        options = from_keywords(keywords)
    elif not isinstance(options, TrainOptions):
        raise OptionError(f"the second argument of train() is a subwords.TrainOptions, got {type(options).__name__}")
    elif keywords:
        options = options.replace(**keywords)
    if options.parity is True or languages is not None:
        from ._parity import train_parity  # one input per language (docs/METHODS.md)

        if ask is not None:
            raise OptionError("the trace does not follow parity-aware BPE yet: train it without one")
        return _wrap(train_parity(data, options, languages, _feed, _threads)), None
    if data is None:
        raise OptionError("train() needs the data to learn from (texts, a word -> count mapping, or paths)")
    core_options = resolved(options)
    if options.model == "unigram" and options.min_count is not None:
        # the core reads min_count with a default, so it cannot tell a given one from its own
        raise OptionError("min_count does not apply to model='unigram' (pruning decides what stays)")
    joints = options.joints
    if joints is not None and not (callable(joints) or isinstance(joints, Mapping)):
        raise OptionError("joints must be a mapping word -> parts, or a callable word -> parts")
    for name in ("counts", "progress"):
        if not isinstance(getattr(options, name), bool):
            raise OptionError(f"{name} must be True or False, got {getattr(options, name)!r}")
    # read into the core's options and checked there, once; a bad value names its key
    trainer = _core.Trainer(core_options, _threads(options.threads))
    with ProgressLine(trainer.progress_view()) if options.progress else contextlib.nullcontext():
        tables = _counts.table_paths(data, counts=options.counts)
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
            if core_options.get("superword_at") is not None and core_options.get("superword_pattern") is None:
                again = _input_again(data, counts=options.counts, input_errors=options.input_errors)
                if again is not None:
                    trainer.stream_again(again)  # stage two reads the input again, keeping no text
            _feed(trainer, data, counts=options.counts, input_errors=options.input_errors)
            if joints is not None:
                trainer.set_units(*_apply_joints(trainer.unit_counts(), joints))
        return _train_model(trainer, ask)


def check_specials_normalization(options: TrainOptions, specials: Sequence[str]) -> None:
    """Refuses special tokens that ``options``' normalization (``normalize``, ``lowercase``,
    ``strip_accents``, ``clean_text``) would change: an :class:`OptionError` naming the first and
    what it would become. Special tokens are matched in the original text and must decode to
    themselves, so a normalization may not touch them.

    >>> check_specials_normalization(TrainOptions(vocab_size=10, normalize="nfkc"), ["<s>", "</s>"])
    >>> check_specials_normalization(TrainOptions(vocab_size=10, lowercase=True), ["<S>"])
    Traceback (most recent call last):
    ...
    subwords.errors.OptionError: the special token "<S>" would be normalized to "<s>" ...
    """
    for t in specials:
        if not isinstance(t, str):
            raise OptionError(f"a special token is a str, got {type(t).__name__}")
    _core.check_specials_normalization(resolved(options), list(specials))


def spelling_units(options: TrainOptions, text: str) -> list[tuple[str, int, int]]:
    """The units training with ``options`` cuts ``text`` into, after normalization and the
    pre-split: ``(unit, start, end)`` with the byte span of ``text`` each stands for."""
    return _core.spelling_units(resolved(options), text_arg(text))


def _train_model(trainer: _core.Trainer, ask: Optional[dict[str, Any]]) -> tuple[SubwordsTokenizer, Optional[dict[str, Any]]]:
    if ask is None:
        return _wrap(trainer.train()), None
    model, trace = _core.train_traced(trainer, ask)
    return _wrap(model), trace


def _count_options(spelling: str, mark: Optional[str], split_at_marks: bool, pre_split: Optional[str], lowercase: bool,
             strip_accents: bool, clean_text: bool, input_errors: str, normalize: Optional[str] = None,
             split_digits: Optional[int] = None, superword_pattern: Optional[str] = None,
             boundless: Optional[dict[str, Any]] = None) -> dict[str, Any]:
    if spelling not in _counts._SPELLINGS:
        raise OptionError(f"spelling must be one of {', '.join(_counts._SPELLINGS)}; got {spelling!r}")
    for name, value in (("split_at_marks", split_at_marks), ("lowercase", lowercase),
                        ("strip_accents", strip_accents), ("clean_text", clean_text)):
        if not isinstance(value, bool):
            raise OptionError(f"{name} must be True or False, got {value!r}")
    options: dict[str, Any] = {"spelling": spelling, "mark": mark, "split_at_marks": split_at_marks,
                               "pre_split": pre_split, "lowercase": lowercase, "strip_accents": strip_accents,
                               "clean_text": clean_text, "input_errors": input_errors}
    # as train() reads them (_options.resolved): a pre_split that is not one of the core's names
    # is a pattern, normalize "none" is none, and an unset one is left out
    if pre_split is not None and pre_split not in CORE_PRE_SPLITS:
        if not isinstance(pre_split, str):
            raise OptionError(f"pre_split must be a name or a regular expression (a str), got {type(pre_split).__name__}")
        options["pattern"], options["pre_split"] = pre_split, None
    if normalize is not None and normalize != "none":
        options["normalize"] = normalize
    if split_digits is not None:
        if isinstance(split_digits, bool):
            raise OptionError(f"split_digits must be 1 or 3, got {split_digits!r}")
        options["split_digits"] = split_digits
    if superword_pattern is not None:
        if not isinstance(superword_pattern, str):
            raise OptionError(f"superword_pattern must be 'superbpe' or a regular expression (a str), "
                              f"got {type(superword_pattern).__name__}")
        options["superword_pattern"] = superword_pattern
    if boundless is not None:
        options["boundless"] = boundless
    return options


#: count()'s options a preset may set, with count()'s defaults
_COUNT_DEFAULTS: dict[str, Any] = {"spelling": None, "mark": None, "split_at_marks": True, "pre_split": None,
                                   "lowercase": False, "strip_accents": False, "clean_text": False,
                                   "normalize": None, "split_digits": None, "superword_pattern": None}


def _count_preset(preset: Optional[str], given: dict[str, Any]) -> dict[str, Any]:
    """The counting options of ``given`` with a preset's filled in where ``given`` left the default
    (the units and spans a training with that preset counts)."""
    out = dict(given)
    if preset is not None:
        from ._options import PRESETS

        if not isinstance(preset, str) or preset not in PRESETS:
            raise OptionError(f"unknown preset {preset!r}; the presets are: {', '.join(PRESETS)}")
        for name, value in PRESETS[preset].items():
            if name in _COUNT_DEFAULTS and out.get(name) == _COUNT_DEFAULTS[name]:
                out[name] = value
    if out["spelling"] is None:  # not given, and no preset's: count()'s default
        out["spelling"] = "end"
    return out


def _count_boundless(preset: Optional[str], superword_pieces: Any, count_on: Any) -> Optional[dict[str, str]]:
    """The BoundlessBPE spans a count with these options counts (None: no BoundlessBPE spans)."""
    from ._options import boundless_spans

    if preset != "boundless" and superword_pieces is None and count_on is None:
        return None
    if preset != "boundless":
        given = "superword_pieces" if superword_pieces is not None else "count_on"
        raise OptionError(f"{given} counts BoundlessBPE's spans: add preset='boundless' (CLI: --preset boundless), "
                          f"or leave it out")
    return boundless_spans(superword_pieces, count_on)


def _counter(*, spelling: str = "end", mark: Optional[str] = None, split_at_marks: bool = True,
            pre_split: Optional[str] = None, lowercase: bool = False, strip_accents: bool = False,
            clean_text: bool = False, input_errors: Literal["strict", "replace"] = "strict",
            normalize: Optional[Normalize] = None, split_digits: Optional[int] = None,
            superword_pattern: Optional[str] = None, threads: Optional[int] = None,
            boundless: Optional[dict[str, Any]] = None) -> _core.Counter:
    """The engine's counter for these options (used by :func:`count` and the Dask workers)."""
    return _core.Counter(_count_options(spelling, mark, split_at_marks, pre_split, lowercase, strip_accents, clean_text,
                                  input_errors, normalize, split_digits, superword_pattern, boundless),
                         _threads(threads))


def count(data: TrainData, *,
          spelling: Optional[str] = None, mark: Optional[str] = None, split_at_marks: bool = True,
          pre_split: Optional[str] = None, lowercase: bool = False, strip_accents: bool = False,
          clean_text: bool = False, counts: bool = False, input_errors: Literal["strict", "replace"] = "strict",
          normalize: Optional[Normalize] = None, split_digits: Optional[int] = None,
          superword_pattern: Optional[str] = None, preset: Optional[str] = None,
          superword_pieces: Optional[str] = None, count_on: Optional[str] = None,
          threads: Optional[int] = None) -> _counts.CountTable:
    """Counts the units of ``data`` -- texts, a ``word -> count`` mapping, or paths to UTF-8 files
    (one text per line; ``counts=True``: ``word<TAB>count`` files) -- under a spelling's options,
    the same ones :func:`subwords.train` takes: ``spelling`` (``end`` unless given or set by
    ``preset``), ``pre_split`` a name (``gpt2``, ``bert``,
    ``cl100k``, ...) or a regular expression, ``normalize`` a Unicode normalization
    (``nfkc``, ``nmt_nfkc``, ...), ``split_digits`` 1 or 3. The table records them, and training on
    it with other options is refused. Train on the result with ``subwords.train(table, ...)``.

    ``superword_pattern`` (SuperBPE's stage-two pre-split; ``preset="superbpe"`` sets it with the
    preset's spelling) also counts the spans in the same pass, so the table trains SuperBPE.
    ``preset`` fills in a preset's spelling options where these are left at their defaults.
    ``preset="boundless"`` also counts BoundlessBPE's spans (runs of pretokens that may join;
    ``superword_pieces`` and ``count_on`` as for :func:`subwords.train`).
    """
    o = _count_preset(preset, dict(spelling=spelling, mark=mark, split_at_marks=split_at_marks, pre_split=pre_split,
                                   lowercase=lowercase, strip_accents=strip_accents, clean_text=clean_text,
                                   normalize=normalize, split_digits=split_digits,
                                   superword_pattern=superword_pattern))
    boundless = _count_boundless(preset, superword_pieces, count_on)
    c = _counter(input_errors=input_errors, threads=threads, boundless=boundless, **o)
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
                trainer.feed_count_file(os.fspath(p))  # parsed in the core, by parse_count_line's rules
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


def _input_again(data: TrainData, *, counts: bool,
                 input_errors: str) -> Optional[Callable[[], Iterator[Union[str, list[str]]]]]:
    """For two-stage BPE: a function that reads ``data`` once more, giving what :func:`_feed`
    gave the trainer in the same order (lists of texts, and the paths of plain text files the
    engine reads itself), so stage two need not keep the texts. None when ``data`` can be read
    only once (an iterator or generator) or is a count mapping: the trainer then keeps them."""
    if isinstance(data, (str, bytes, Mapping)) or counts:
        return None
    from . import inputs
    from .inputs import BATCH_CHARS as _TEXTS_BATCH

    source = inputs.source(data)
    if source is not None:
        if source.files is None and isinstance(source.data, Iterator):
            return None
        texts_source = source

        def again_source() -> Iterator[Union[str, list[str]]]:
            plain = texts_source.sample is None and texts_source.max_bytes is None
            for item in texts_source._items(input_errors, _TEXTS_BATCH, False, engine_files=plain):
                yield item if isinstance(item, list) else item.path
        return again_source
    if not isinstance(data, Iterable) or isinstance(data, Iterator):
        return None  # an iterator (a generator) is read once; asking it for another pass would start none
    iterable = data

    def again_texts() -> Iterator[Union[str, list[str]]]:
        batch: list[str] = []
        size = 0
        for text in iterable:
            if not isinstance(text, str):
                raise InputError(f"the input gave a {type(text).__name__} when read again for stage two, not a str; "
                                 "two-stage training reads its input twice, so it must give the same texts both times")
            batch.append(text)
            size += len(text)
            if size >= _BATCH_CHARS:
                yield batch
                batch, size = [], 0
        if batch:
            yield batch
    return again_texts


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


def load_model_file(path: Union[str, os.PathLike[str]]) -> SubwordsTokenizer:
    """Loads a subwords model file written by :meth:`SubwordsTokenizer.save` (``subwords.load``
    reads every format, this one included)."""
    p = os.fspath(path)
    raw = read_limited(p, MAX_MODEL_FILE_BYTES, "model file")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise ModelFileError(f"{p}: not a subwords model file (not UTF-8 text)") from None
    try:
        return SubwordsTokenizer.from_json(text)
    except ModelFileError as e:
        raise ModelFileError(f"{p}: {e}") from None


def spelling_object(spelling: Mapping[str, Any]) -> dict[str, Any]:
    """A model file's spelling object: ``spelling``'s fields over the core's defaults of the rest
    (``_core.spelling_object``, which checks it as a model file's)."""
    full: dict[str, Any] = _core.spelling_object(dict(spelling))
    return full


def from_parts(model: ModelKind, spelling: Mapping[str, Any], rows: Sequence[tuple[str, str]],
               merges: Sequence[tuple[str, str]] = (), template: Optional[tuple[str, str]] = None) -> SubwordsTokenizer:
    """A model from its parts, for the readers of other formats (a BERT ``vocab.txt``, subword-nmt
    codes): the one place in Python that writes the canonical model document, which the core
    then checks as it checks any model file. ``spelling``: the file's spelling object (scheme,
    mark, ...; the rest take their defaults); ``rows``: (piece, kind) in id order;
    ``template``: the (cls, sep) pieces put around every text."""
    full = spelling_object(spelling)
    if not merges:
        # nothing to find rows for: the rows go to the core as they are, checked as a file of
        # them is, without a JSON document of every row (11 ms of a 30k vocab.txt)
        try:
            return _wrap(_core.Tokenizer.from_rows(model, full, rows, template))
        except ModelFileError:
            raise
        except SubwordsError as e:
            raise ModelFileError(f"the model file's settings are invalid: {e}") from None
    doc = {
        "format": "subwords", "version": 1, "model": model, "spelling": full,
        "stream_merges_from": None, "joints": None,
        "template": None if template is None else {"cls": template[0], "sep": template[1]},
        "options": None, "report": None, "rows": [list(r) for r in rows], "merges": [list(m) for m in merges],
    }
    if template is None:
        del doc["template"]
    return SubwordsTokenizer.from_json(json.dumps(doc, ensure_ascii=False))


def _wrap(model: _core.Tokenizer) -> SubwordsTokenizer:
    """The face of a core model: a UnigramTokenizer when it is one."""
    return UnigramTokenizer(model) if model.model_kind() == "unigram" else SubwordsTokenizer(model)


class SubwordsTokenizer:
    """A model subwords trained or reads from its own file: a spelling, a vocabulary and its
    segmenter. It answers :class:`subwords.Tokenizer` (encode, decode, pieces, offsets, special
    tokens) and adds what only subwords' own models have (rows and kinds, merges, the training
    report, dropout, saving). A Unigram model is a :class:`UnigramTokenizer`, with the analysis.

    >>> tok = train({"low": 5, "lower": 2, "newest": 6, "widest": 3}, vocab_size=22)
    >>> tok.encode_pieces("lowest newer")
    ['lo', 'w', 'est</w>', 'n', 'ew', 'e', 'r</w>']
    >>> tok.decode(tok.encode("lowest newer"))
    'lowest newer'
    """

    # __dict__ holds the native encode call (__init__), __weakref__ its way back to the tokenizer
    __slots__ = ("_model", "_enc", "_always", "_specials", "_stochastok", "_options", "_spelling", "_report",
                 "__dict__", "__weakref__")
    format = "subwords"

    def __init__(self, model: _core.Tokenizer) -> None:
        if not isinstance(model, _core.Tokenizer):
            raise TypeError("a SubwordsTokenizer is made by subwords.train, subwords.load or SubwordsTokenizer.from_json")
        self._model = model
        # the core's encoder: specials, the template and batches (the user-defined symbols
        # match in text whatever a call allows, docs/SPECIALS.md)
        self._enc = model.encoder()
        # the saved options, spelling and report, converted from the core's once (the first two
        # here, the report on first use); the properties hand out copies
        self._options: dict[str, Any] = model.options() or {}
        self._spelling: dict[str, Any] = model.spelling()
        self._report: Optional[dict[str, Any]] = None
        self._always: frozenset[str] = frozenset(self._options.get("user_symbols", ()))
        self._specials: Optional[dict[str, int]] = None  # made on first use: it reads every row
        self._stochastok: Any = None  # StochasTok's split table, made on first use (_stochastok.py)
        if type(self).encode is SubwordsTokenizer.encode:
            # ``encode(text)``, the call users make most, as one native call with no Python
            # frame (the template applied, as the method below does by default); any other call
            # (a keyword, a text that is not exactly a str or holds a lone surrogate) goes to the
            # method with the same arguments. A subclass that overrides ``encode`` keeps its own.
            from ._native_call import native_call

            self.__dict__["encode"] = native_call(self, SubwordsTokenizer.encode,
                                                  lambda general: _core.FaceCall.encoder(self._enc, general))

    # -- encoding ---------------------------------------------------------------------------
    def encode(self, text: str, *, allowed_special: AllowedSpecial = (), add_special_tokens: Optional[bool] = None,
               pair: Optional[str] = None, dropout: Optional[float] = None, seed: Optional[int] = None,
               segmenter: Optional[Literal["viterbi", "fewest", "sample"]] = None, alpha: Optional[float] = None,
               nbest: Optional[int] = None, stochastok: Optional[float] = None) -> list[int]:
        """Ids of ``text``. With ``dropout=p`` (BPE-dropout), each merge is skipped with
        probability ``p``; a ``seed`` is then required, so runs are repeatable. With
        ``stochastok=p`` (StochasTok), ``floor(p * len)`` tries split a random id of the encoding
        into two ids whose pieces join to it (with a ``seed``; docs/METHODS.md).

        A model with a template (a BERT vocabulary) puts ``[CLS]`` before the text and ``[SEP]``
        after it, and after ``pair`` if one is given, unless ``add_special_tokens=False`` (its
        default, None, is True for our models, as transformers' for a BERT vocabulary).
        Special rows (``[UNK]``, ``[CLS]``, ...) in the text are text unless ``allowed_special``
        names them (see :class:`subwords.Tokenizer`)."""
        if stochastok is not None:
            from . import _stochastok

            return _stochastok.encode_one(self, text, stochastok, seed, allowed_special=allowed_special,
                                          add_special_tokens=add_special_tokens, pair=pair, dropout=dropout,
                                          segmenter=segmenter, alpha=alpha, nbest=nbest)
        if type(text) is str and not allowed_special and pair is None and dropout is None and seed is None \
                and segmenter is None and alpha is None and nbest is None \
                and (add_special_tokens is False
                     or (not self._enc.has_template and (add_special_tokens is None or add_special_tokens is True))):
            # the plain call, one argument across: one call per line is mostly this path
            try:
                return self._enc.encode(text)
            except UnicodeError as e:
                raise _surrogate_error(e, "the text") from None
        text = _check_text(text)
        add_special_tokens = template_arg(add_special_tokens, True)
        if dropout is None and seed is None and segmenter is None and alpha is None and nbest is None:
            allowed = allowed_ids(allowed_special, self.special_tokens) if allowed_special else []
            try:
                return self._enc.encode(text, None if pair is None else _check_text(pair), allowed,
                                        add_special_tokens)
            except UnicodeError as e:
                raise _surrogate_error(e, "the text") from None
        return self._encode_full(text, allowed_special, add_special_tokens, pair, dropout, seed, segmenter, alpha, nbest)

    def _encode_full(self, text: str, allowed_special: AllowedSpecial, add_special_tokens: bool, pair: Optional[str],
                     dropout: Optional[float], seed: Optional[int], segmenter: Optional[str], alpha: Optional[float],
                     nbest: Optional[int]) -> list[int]:
        """``encode`` with dropout or a Unigram segmenter: the arguments checked here, the text
        encoded in the core, which cuts it at the allowed specials and puts the template around
        it as for every other call (``_core.Tokenizer.encode_in_mode``)."""
        mode, how = self._mode(dropout, seed, segmenter, alpha, nbest)
        allowed = allowed_ids(allowed_special, self.special_tokens) if allowed_special else []
        second = None if pair is None else _check_text(pair)
        try:
            if mode is None:  # Viterbi, the model's own
                return self._enc.encode(text, second, allowed, add_special_tokens)
            return self._model.encode_in_mode(text, second, allowed, add_special_tokens, mode, **how)
        except UnicodeError as e:
            raise _surrogate_error(e, "the text") from None

    def _mode(self, dropout: Optional[float], seed: Optional[int], segmenter: Optional[str], alpha: Optional[float],
              nbest: Optional[int]) -> tuple[Optional[str], dict[str, Any]]:
        """The core's mode for these arguments, checked: ``"dropout"`` (BPE-dropout), Unigram's
        ``"fewest"`` or ``"sample"``, or None for the model's own segmenter."""
        if segmenter is not None or alpha is not None or nbest is not None:
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
                return (None, {}) if segmenter == "viterbi" else ("fewest", {})
            alpha, nbest, seed = _sampling(alpha, nbest, seed)
            return "sample", {"alpha": alpha, "nbest": nbest, "seed": seed}
        if dropout is None:
            if seed is not None:
                raise OptionError("seed is only used with dropout")
            return None, {}
        if isinstance(dropout, bool) or not isinstance(dropout, (int, float)) or not 0.0 <= dropout <= 1.0:
            raise OptionError(f"dropout must be a probability in [0, 1], got {dropout!r}")
        if seed is None or isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < 2**64:
            raise OptionError("dropout needs an explicit seed (a whole number from 0 to 2**64-1), so runs repeat")
        return "dropout", {"p": float(dropout), "seed": seed}

    def encode_pieces(self, text: str, **kw: Any) -> list[str]:
        # every id encode() gives has a row, so no piece is None
        return cast("list[str]", [self._model.id_to_piece(i) for i in self.encode(text, **kw)])

    def encode_with_offsets(self, text: str, *, allowed_special: AllowedSpecial = ()) -> list[tuple[int, int, int]]:
        """``(id, start, end)`` triples; ``text[start:end]`` is what the piece stands for
        (empty for a mark that stands for the start of the text). No template is added; the
        special surfaces ``allowed_special`` names are matched as in :meth:`encode`."""
        _check_text(text)
        allowed = allowed_ids(allowed_special, self.special_tokens) if allowed_special else []
        try:
            ids, starts, ends = self._model.encode_with_offsets(text, allowed)
        except UnicodeError as e:
            raise _surrogate_error(e, "the text") from None
        return list(zip(ids, starts, ends))

    @overload
    def encode_batch(self, texts: Iterable[str], *, threads: Optional[int] = ..., allowed_special: AllowedSpecial = ...,
                     add_special_tokens: Optional[bool] = ..., as_numpy: Literal[False] = ..., stochastok: Optional[float] = ...,
                     seed: Optional[int] = ...) -> list[list[int]]: ...

    @overload
    def encode_batch(self, texts: Iterable[str], *, threads: Optional[int] = ..., allowed_special: AllowedSpecial = ...,
                     add_special_tokens: Optional[bool] = ..., as_numpy: Literal[True], stochastok: None = ...,
                     seed: None = ...) -> IdArray: ...

    def encode_batch(self, texts: Iterable[str], *, threads: Optional[int] = None, allowed_special: AllowedSpecial = (),
                     add_special_tokens: Optional[bool] = None, as_numpy: bool = False, stochastok: Optional[float] = None,
                     seed: Optional[int] = None) -> Union[list[list[int]], IdArray]:
        """The ids of every text. ``as_numpy=True``: an :class:`subwords.IdArray` instead (one
        flat ``uint32`` array and the texts' offsets, made without a Python object per id; needs
        numpy); :meth:`encode_array` also takes the dtype and an end-of-document id.
        ``stochastok=p, seed=s``: each text's ids split as :meth:`encode` splits them, text ``k``
        drawn from ``(s, k)`` whatever the threads."""
        if stochastok is not None or seed is not None:
            from . import _stochastok

            if stochastok is None:
                raise OptionError("seed is only used with stochastok in encode_batch")
            if as_numpy:
                raise OptionError("stochastok gives lists: leave as_numpy out")
            p, s = _stochastok.check(stochastok, seed)
            lists = self.encode_batch(texts, threads=threads, allowed_special=allowed_special,
                                      add_special_tokens=add_special_tokens)
            return _stochastok.encode_batch(self, lists, p, s, _threads(threads))
        if as_numpy:
            return self.encode_array(texts, threads=threads, allowed_special=allowed_special,
                                     add_special_tokens=add_special_tokens)
        batch = batch_list(texts)  # the core checks every text's type as it reads them
        allowed = allowed_ids(allowed_special, self.special_tokens) if allowed_special else []
        add_special_tokens = template_arg(add_special_tokens, True)
        try:
            with gc_paused():
                return self._enc.encode_batch(batch, _threads(threads), allowed, add_special_tokens)
        except UnicodeError as e:
            raise _surrogate_error(e, f"text {_first_unencodable(batch)} of the batch") from None

    def encode_array(self, texts: Iterable[str], *, threads: Optional[int] = None, dtype: str = "uint32",
                     eos: Optional[int] = None, allowed_special: AllowedSpecial = (),
                     add_special_tokens: Optional[bool] = None) -> IdArray:
        """The ids of every text as an :class:`subwords.IdArray`: ``ids`` (``dtype`` ``"uint16"``
        or ``"uint32"``; a dtype too small for the vocabulary is refused) and ``offsets``, text
        ``i`` being ``ids[offsets[i]:offsets[i+1]]``; ``eos``, an id, follows every text. The
        same ids as :meth:`encode_batch`, filled in the core without a Python object per id."""
        from . import _arrays  # imported on use: `subwords train` has no need of it

        return _arrays.encode_array(self, texts, threads=threads, dtype=dtype, eos=eos, allowed_special=allowed_special,
                                    add_special_tokens=add_special_tokens)

    def encode_buffers(self, batch: Sequence[str], *, threads: Optional[int], width: int, eos: Optional[int] = None,
                       allowed_special: AllowedSpecial = (),
                       add_special_tokens: Optional[bool] = None) -> tuple[bytearray, bytearray]:
        """``encode_array``'s two buffers (little-endian ids ``width`` bytes wide; each text's end,
        u64), for writers that need no numpy (``subwords encode --output``)."""
        batch = batch_list(batch)
        if eos is not None:
            self.id_to_piece(eos)  # an id of this vocabulary, or UnknownPieceError
        suffix = [] if eos is None else [eos]
        allowed = allowed_ids(allowed_special, self.special_tokens) if allowed_special else []
        try:
            return self._enc.encode_batch_flat(batch, _threads(threads), width, allowed,
                                               template_arg(add_special_tokens, True), suffix)
        except UnicodeError as e:
            raise _surrogate_error(e, f"text {_first_unencodable(batch)} of the batch") from None

    def to_transformers(self) -> Any:
        """This model as a ``transformers.PreTrainedTokenizerFast`` (the tokenizer.json export,
        with the special-token roles set), for ``pip install 'subwords[transformers]'``; it
        needs no torch. Refused, like the export, for what tokenizer.json cannot express."""
        from .formats.huggingface.transformers import to_transformers

        return to_transformers(self)

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
            if self._options.get("superword_at") is not None:
                # a two-stage model reads a count table as one stream, as training did
                return len(self._enc.encode(" ".join(w for w, c in rows for _ in range(c))))
            return sum(c * len(self._enc.encode(w)) for w, c in rows)
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
    def special_tokens(self) -> dict[str, int]:
        """The special rows (``[UNK]``, ``[CLS]``, the trained special tokens, user symbols and
        reserved rows): piece -> id."""
        if self._specials is None:
            self._specials = {p: i for i, (p, k) in enumerate(zip(self.rows, self.kinds)) if k == "special"}
        return dict(self._specials)

    @property
    def user_symbols(self) -> list[str]:
        """The user-defined symbols (always matched in text), in id order."""
        return [p for p in self.rows if p in self._always]

    @property
    def merges(self) -> list[tuple[str, str]]:
        return self._model.merges()

    @property
    def model(self) -> str:
        return self._model.model_kind()

    @property
    def spelling(self) -> dict[str, Any]:
        """The spelling as the model file saves it (a copy: changing it changes nothing)."""
        return cast("dict[str, Any]", _fresh(self._spelling))

    @property
    def report(self) -> dict[str, Any]:
        """What training found (``{}`` for a model read from another format; a copy)."""
        if self._report is None:
            self._report = self._model.report() or {}
        return cast("dict[str, Any]", _fresh(self._report))

    @property
    def options(self) -> dict[str, Any]:
        """The training options as the model file saved them (``{}`` for a model read from
        another format; a copy); :attr:`train_options` gives them as a :class:`TrainOptions`."""
        return cast("dict[str, Any]", _fresh(self._options))

    @property
    def train_options(self) -> Optional[TrainOptions]:
        """The training options as a :class:`TrainOptions` (None for a model that was not
        trained by subwords, e.g. read from a BERT ``vocab.txt``)."""
        return from_saved(self._options)

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
    def from_json(cls, text: str) -> SubwordsTokenizer:
        """A model from the text of a model file (a :class:`UnigramTokenizer` for Unigram)."""
        if not isinstance(text, str):
            raise ModelFileError("a model is read from JSON text (str)")
        try:
            return _wrap(_core.Tokenizer.from_json(text))
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
        return (SubwordsTokenizer.from_json, (self.to_json(),))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, SubwordsTokenizer) and self.to_json() == other.to_json()

    __hash__ = None  # type: ignore[assignment]  # unhashable (equal by content); typeshed types __hash__ as a method

    def __repr__(self) -> str:
        s = self._spelling
        return f"<subwords.Tokenizer {self.model} spelling={s['scheme']} rows={self.vocab_size} merges={len(self.merges)}>"


class UnigramTokenizer(SubwordsTokenizer):
    """A Unigram model: everything a :class:`SubwordsTokenizer` does, and the analysis only a
    Unigram model has (docs/API.md, "Analysis of one unit"): each row's log-probability, a
    unit's lattice, its spellings with their probabilities, the n best, sampling, the fewest
    pieces, and each row's pruning loss. A BPE or WordPiece model has none of these attributes.
    """

    __slots__ = ()

    @property
    def log_probs(self) -> list[Optional[float]]:
        """One natural-log probability per row; None for rows that are not pieces."""
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


# The class was called Tokenizer before subwords.Tokenizer became the protocol every tokenizer
# answers; pickles made then name subwords._api.Tokenizer.from_json, so the name stays here.
Tokenizer = SubwordsTokenizer


_text = text_arg


def _fresh(value: Any) -> Any:
    """A copy of a value the core handed over (dicts, lists and scalars), so the caller may
    change it: the saved options, spelling and report stay the model's own."""
    if type(value) is dict:
        return {k: _fresh(v) for k, v in value.items()}
    if type(value) is list or type(value) is tuple:  # a Rust tuple arrives as a tuple: a list, as in the file
        return [_fresh(v) for v in value]
    return value


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
