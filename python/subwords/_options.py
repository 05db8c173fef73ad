"""``subwords.TrainOptions``: every training option as one frozen value.

The dataclass only carries values and their types. Whether a value has the right type, is in
range and goes with the others is decided in one place, the core
(``crates/subwords-core/src/options.rs``): :func:`resolved`'s dict is read straight into the
core's options when the ``_core.Trainer`` is made, and a bad value is an
:class:`~subwords.errors.OptionError` naming its key. An option that does not exist is one
naming it and listing the ones that do.

The defaults are the core's (``_core.default_options()``, one table): the dataclass's field
defaults and the model-dependent ones (``DEFAULT``, below) are read from it, and
:func:`resolved` is the one place that fills the model-dependent ones in. The pure-Python
reference reads the same table through this module.
"""

from __future__ import annotations

import dataclasses
import enum
import os
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal, Optional, Union

from . import _core
from .errors import OptionError

#: every option a training with only the model and ``vocab_size`` reads, by model (the core's
#: table; an option missing from it defaults to off, empty or none)
CORE_DEFAULTS: dict[str, dict[str, Any]] = _core.default_options()
_ANY = CORE_DEFAULTS["bpe"]  # the options whose default is the same for every model

ModelKind = Literal["bpe", "word", "wordpiece", "unigram"]
SpellingName = Literal["end", "continuation", "front", "bytes"]
#: a named pre-split (``gpt2``, ``bert``, ``cl100k``, ``o200k``, ``llama3``) or any regular expression
PreSplit = str
Normalize = Literal["nfc", "nfkc", "nfd", "nfkd", "nmt_nfkc", "none"]
PresetName = Literal["gpt2", "cl100k", "o200k", "llama", "sentencepiece", "sennrich", "bert", "superbpe", "boundless"]
MinCountRule = Literal["filter", "stop"]
Unknown = Literal["word", "rest"]
InputErrors = Literal["strict", "replace"]
Joints = Union[Mapping[str, Sequence[str]], Callable[[str], Optional[Sequence[str]]]]


class Default(enum.Enum):
    """The value of an option left to the model's own default (where ``None`` means something
    else: "no bound")."""

    DEFAULT = "the model's default"

    def __repr__(self) -> str:
        return "DEFAULT"


DEFAULT = Default.DEFAULT

#: each model's own spelling, used when ``spelling`` is None
DEFAULT_SPELLING: dict[str, SpellingName] = {m: d["spelling"] for m, d in CORE_DEFAULTS.items()}
#: ``min_count`` when None: the word model keeps every unit seen once; the merge models need two
#: (Unigram takes none: pruning decides)
DEFAULT_MIN_COUNT: dict[str, int] = {m: d["min_count"] for m, d in CORE_DEFAULTS.items() if m != "unigram"}
#: the options whose ``DEFAULT`` depends on the model: {option: {model: value}}; every other
#: model gets None. Unigram's two are sentencepiece's defaults for real corpora (neither bites on
#: the pages' corpora); WordPiece's is BERT's.
MODEL_DEFAULTS: dict[str, dict[str, Any]] = {
    name: {m: d[name] for m, d in CORE_DEFAULTS.items() if d.get(name) is not None}
    for name in ("max_piece_length", "seed_size", "max_word_length", "min_count_rule", "unknown")
}


@dataclasses.dataclass(frozen=True)
class TrainOptions:
    """What :func:`subwords.train` learns with. ``train(data, options)`` takes one;
    ``train(data, vocab_size=..., ...)`` builds one from the keywords.

    >>> opts = TrainOptions(vocab_size=22)
    >>> opts.model, opts.spelling
    ('bpe', None)
    >>> opts.replace(model="unigram").model
    'unigram'
    """

    vocab_size: int
    model: ModelKind = "bpe"
    #: None: the model's own (``end``; ``continuation`` for WordPiece)
    spelling: Optional[SpellingName] = None
    #: None: 1 for ``word``, 2 for the merge models; Unigram takes none (pruning decides)
    min_count: Optional[int] = None
    byte_fallback: bool = _ANY["byte_fallback"]
    byte_fallback_in_budget: bool = _ANY["byte_fallback_in_budget"]
    mark: Optional[str] = None
    split_at_marks: bool = _ANY["split_at_marks"]
    pre_split: Optional[PreSplit] = None
    joints: Optional[Joints] = None
    superword_at: Optional[int] = None
    #: DEFAULT: 16 for Unigram, else no bound; None: no bound
    max_piece_length: Union[int, None, Default] = DEFAULT
    alphabet_size: Optional[int] = None
    character_coverage: Optional[float] = None
    counts: bool = False
    input_errors: InputErrors = _ANY["input_errors"]
    #: WordPiece (None: ``filter``)
    min_count_rule: Optional[MinCountRule] = None
    #: WordPiece (None: ``word``)
    unknown: Optional[Unknown] = None
    #: WordPiece: DEFAULT is 100 (BERT's); None: no limit
    max_word_length: Union[int, None, Default] = DEFAULT
    lowercase: bool = _ANY["lowercase"]
    strip_accents: bool = _ANY["strip_accents"]
    clean_text: bool = _ANY["clean_text"]
    #: a named recipe (:data:`PRESETS`); an option given explicitly (not left at its default)
    #: overrides the preset's value
    preset: Optional[PresetName] = None
    #: Unigram: DEFAULT is 1,000,000; None: no bound
    seed_size: Union[int, None, Default] = DEFAULT
    shrink: Optional[float] = None
    em_rounds: Optional[int] = None
    #: Unigram: the M-step; None: ``"plain"`` (the page's), ``"bayes"``: sentencepiece's digamma step
    #: ``"sentencepiece"``: sentencepiece's whole loop (digamma step with its drops, its pruning
    #: criterion, its stop at 1.1x the target and final pick by score)
    em: Optional[Literal["plain", "bayes", "sentencepiece"]] = None
    #: None: every core
    threads: Optional[int] = None
    progress: bool = False
    #: special tokens (docs/SPECIALS.md): rows 0..k-1 in this order, inside ``vocab_size``, never
    #: learned from, matched in text only when a call's ``allowed_special`` names them
    special_tokens: Sequence[str] = ()
    #: SentencePiece-style user-defined symbols: rows after the specials, always matched in text
    user_symbols: Sequence[str] = ()
    #: placeholder rows ``<|reserved_0|>``, ``<|reserved_1|>``, ... after the user symbols
    reserved_tokens: int = 0
    #: more reserved rows until the vocabulary size is a multiple of this (outside the budget)
    pad_to_multiple: Optional[int] = None
    #: which special token plays which role in the exports (each one of ``special_tokens``;
    #: ``unk_token`` can only be ``[UNK]``, the unknown row)
    bos_token: Optional[str] = None
    eos_token: Optional[str] = None
    pad_token: Optional[str] = None
    unk_token: Optional[str] = None
    #: Unicode normalization before the split (None or ``"none"``: none)
    normalize: Optional[Normalize] = None
    #: cut runs of digits into single digits (1) or runs of up to three (3)
    split_digits: Optional[int] = None
    #: Unigram: sentencepiece's ``split_by_unicode_script``: no seed piece mixes two scripts
    #: (``abc1`` and ``foo(`` are out, ``1.5`` is in; docs/API.md has the rule)
    split_by_script: bool = False
    #: with ``split_by_script``: digits are a script of their own (sentencepiece's
    #: ``split_by_number``); False lets a digit join any script
    split_by_number: bool = _ANY["split_by_number"]
    #: SuperBPE: stage two's span pre-split (``"superbpe"``: the paper's expression; anything else
    #: a regular expression); with it, ``superword_at`` is the transition size t
    superword_pattern: Optional[str] = None
    #: SuperBPE: the most words a superword may span (None: 4, the paper's)
    superword_words: Optional[int] = None
    #: Picky BPE (arXiv 2409.04599; docs/METHODS.md): during training, remove a merged token
    #: whose intersection over self reaches this threshold, in (0, 1]. BPE only
    picky: Optional[float] = None
    #: Parity-aware BPE (arXiv 2508.04796; docs/METHODS.md): each merge is the pair counted most
    #: in the language compressed worst so far. The input is one per language
    #: (``train(languages={"en": ..., "de": ...})``) or JSON lines with ``language_field``. BPE only
    parity: bool = False
    #: parity: JSON lines inputs' field naming each record's language (the text is at ``text``)
    language_field: Optional[str] = None
    #: parity: what "compressed worst" is: ``"tokens_per_byte"`` (None: the default), ``"tokens"``
    #: (the paper's, on parallel text) or ``"tokens_per_symbol"``
    parity_measure: Optional[Literal["tokens_per_byte", "tokens", "tokens_per_symbol"]] = None
    #: parity: this many merges by plain BPE's rule first (the paper's hybrid)
    parity_global_merges: Optional[int] = None
    #: parity: a moving window of this many steps, in which a language takes at most
    #: ``parity_alpha / languages`` of the steps (``parity_alpha`` None: 2)
    parity_window: Optional[int] = None
    parity_alpha: Optional[float] = None
    #: Length-MAX (arXiv 2511.20849; docs/METHODS.md): each merge takes the pair with the largest
    #: count x joined length (in alphabet symbols) instead of the largest count. BPE only
    length_max: bool = False
    #: Scaffold-BPE (arXiv 2404.17808; docs/METHODS.md): tokens that mostly stand inside longer
    #: ones are marked scaffold while BPE trains, take no row, and are split at encoding. BPE only
    scaffold: bool = False
    #: BoundlessBPE (arXiv 2504.00178; docs/METHODS.md): supermerges of two adjacent whole
    #: pretokens compete with ordinary merges, and tokens that were only steps are deleted.
    #: Byte-level BPE with a pre-split only (``preset="boundless"``)
    boundless: bool = False
    #: BoundlessBPE: delete a merge's parent when its intersection over self reaches this, in
    #: (0, 1]; DEFAULT is 0.9 (Picky BPE's); None never deletes
    deletion_threshold: Union[float, None, Default] = DEFAULT
    #: BoundlessBPE: which pretokens may join a superword: ``"letters"`` (None: the default;
    #: letters and marks after at most one space), ``"any"`` (any without a line break), or a
    #: regular expression a pretoken must contain a match of
    superword_pieces: Optional[str] = None
    #: BoundlessBPE: the spans counted, ``"runs"`` (None: the default; each maximal run of
    #: eligible pretokens) or ``"pairs"`` (each adjacent pair on its own, a smaller table)
    count_on: Optional[Literal["runs", "pairs"]] = None

    def replace(self, **changes: Any) -> TrainOptions:
        """A copy with some options changed (unknown names are an OptionError)."""
        return from_keywords({**{f.name: getattr(self, f.name) for f in dataclasses.fields(self)}, **changes})


NAMES: tuple[str, ...] = tuple(f.name for f in dataclasses.fields(TrainOptions))

#: the options that live on the Python side only (the core never sees them as such)
PYTHON_ONLY = frozenset({"counts", "preset", "threads", "progress", "language_field"})

#: the options of parity-aware BPE, saved together as the core's ``parity``
PARITY_KEYS = {"parity_measure": "measure", "parity_global_merges": "global_merges", "parity_window": "window",
               "parity_alpha": "alpha"}


def from_keywords(keywords: Mapping[str, Any]) -> TrainOptions:
    """A TrainOptions from keyword arguments; an unknown name is an OptionError naming it and
    listing the valid ones."""
    unknown = sorted(set(keywords) - set(NAMES))
    if unknown:
        raise OptionError(f"unknown option {unknown[0]!r}; the options are: {', '.join(NAMES)}")
    if "vocab_size" not in keywords:
        raise OptionError("vocab_size is required: the number of rows to learn up to (a ceiling)")
    return TrainOptions(**keywords)


def resolved(options: TrainOptions, languages: Sequence[str] = ()) -> dict[str, Any]:
    """The options as the core reads them: every DEFAULT and model-dependent None filled in
    (the preset expanded), the Python-only ones left out, ``joints`` as whether there are any;
    under ``parity``, ``languages`` are the names of the inputs in order."""
    o = {f.name: getattr(options, f.name) for f in dataclasses.fields(options)}
    _resolve_parity(o, languages)
    preset = o["preset"]
    if preset is not None:
        if not isinstance(preset, str) or preset not in PRESETS:
            raise OptionError(f"unknown preset {preset!r}; the presets are: {', '.join(PRESETS)}")
        for name, value in PRESETS[preset].items():
            if o[name] == FIELD_DEFAULTS[name]:
                o[name] = value  # an option given explicitly overrides the preset
    _resolve_boundless(o)
    if o["normalize"] == "none":
        o["normalize"] = None
    pre_split = o["pre_split"]
    o["pattern"] = None
    if pre_split is not None and pre_split not in CORE_PRE_SPLITS:
        if not isinstance(pre_split, str):
            raise OptionError(f"pre_split must be a name or a regular expression (a str), got {type(pre_split).__name__}")
        o["pattern"], o["pre_split"] = pre_split, None
    model = o["model"]
    if o["spelling"] is None:
        o["spelling"] = DEFAULT_SPELLING.get(model)
    if o["min_count"] is None and model != "unigram":
        o["min_count"] = DEFAULT_MIN_COUNT.get(model)
    for name, by_model in MODEL_DEFAULTS.items():
        if o[name] is DEFAULT or (o[name] is None and name in ("min_count_rule", "unknown")):
            o[name] = by_model.get(model)
    o["joints"] = o["joints"] is not None
    for name in PYTHON_ONLY:
        del o[name]
    if o["superword_pattern"] is not None and o["superword_at"] is None and isinstance(o["vocab_size"], int):
        # SuperBPE's transition: 80% of the size unless given, at least one row past the bytes
        lead = len(o["special_tokens"]) + len(o["user_symbols"]) + (o["reserved_tokens"] or 0)
        o["superword_at"] = max(o["vocab_size"] * 4 // 5, min(o["vocab_size"], 257 + lead))
    if isinstance(o["picky"], bool) or not (o["picky"] is None or isinstance(o["picky"], (int, float))):
        raise OptionError(f"picky must be a number in (0, 1], the IoS threshold (e.g. picky=0.9), got {o['picky']!r}")
    if isinstance(o["picky"], int):
        o["picky"] = float(o["picky"])
    if not isinstance(o["length_max"], bool):
        raise OptionError(f"length_max must be True or False (the merge rule of arXiv 2511.20849), got {o['length_max']!r}")
    if not isinstance(o["scaffold"], bool):
        raise OptionError(f"scaffold must be True or False, got {o['scaffold']!r}")
    if not o["scaffold"]:
        del o["scaffold"]  # off: absent, so files without it stay as they were
    for name in ("normalize", "pattern", "split_digits", "superword_pattern", "superword_words", "picky", "parity",
                 "boundless"):
        if o[name] is None:
            del o[name]  # unset: absent, so files without them stay as they were
    if o["min_count"] is None:
        del o["min_count"]  # the core's own default (Unigram refuses an explicit one)
    return o


def boundless_spans(superword_pieces: Any, count_on: Any) -> dict[str, str]:
    """BoundlessBPE's options that decide which spans are counted (training and counting take the
    same ones), checked, with their defaults filled in."""
    pieces = superword_pieces if superword_pieces is not None else "letters"
    if not isinstance(pieces, str) or not pieces:
        raise OptionError(f"superword_pieces must be 'letters', 'any' or a regular expression (a str), got {pieces!r}")
    on = count_on if count_on is not None else "runs"
    if on not in ("runs", "pairs"):
        raise OptionError(f"count_on must be 'runs' or 'pairs', got {on!r}")
    return {"superword_pieces": pieces, "count_on": on}


def _resolve_boundless(o: dict[str, Any]) -> None:
    """``boundless`` and its options as the core's one ``boundless`` value (or none)."""
    if not isinstance(o["boundless"], bool):
        raise OptionError(f"boundless must be True or False (BoundlessBPE, or preset='boundless'), got {o['boundless']!r}")
    keys = ("deletion_threshold", "superword_pieces", "count_on")
    given = [k for k in keys if o[k] is not (DEFAULT if k == "deletion_threshold" else None)]
    if not o["boundless"]:
        if given:
            raise OptionError(f"{given[0]} applies to BoundlessBPE: add preset='boundless' (CLI: --preset boundless), "
                              f"or leave it out")
        o["boundless"] = None
    else:
        t = o["deletion_threshold"]
        if t is DEFAULT:
            t = 0.9
        if t is not None and (isinstance(t, bool) or not isinstance(t, (int, float)) or not 0 < t <= 1):
            raise OptionError(f"deletion_threshold must be a share in (0, 1] (0.9 by default; None never deletes), "
                              f"got {t!r}")
        o["boundless"] = {"deletion_threshold": None if t is None else float(t),
                          **boundless_spans(o["superword_pieces"], o["count_on"])}
    for k in keys:
        del o[k]


def _resolve_parity(o: dict[str, Any], languages: Sequence[str]) -> None:
    """``parity`` and its options as the core's one ``parity`` value (or none)."""
    if not isinstance(o["parity"], bool):
        raise OptionError(f"parity must be True or False, got {o['parity']!r}")
    given = [k for k in (*PARITY_KEYS, "language_field") if o[k] is not None]
    if not o["parity"]:
        if given:
            raise OptionError(f"{given[0]} applies to parity-aware BPE: add parity=True (CLI: --parity), or leave it out")
        o["parity"] = None
    else:
        for k in ("parity_global_merges", "parity_window"):
            if o[k] is not None and (isinstance(o[k], bool) or not isinstance(o[k], int) or o[k] < (0 if k == "parity_global_merges" else 1)):
                raise OptionError(f"{k} must be a whole number of merges ({'0' if k == 'parity_global_merges' else '1'} or more), got {o[k]!r}")
        if o["parity_alpha"] is not None and (isinstance(o["parity_alpha"], bool) or not isinstance(o["parity_alpha"], (int, float))):
            raise OptionError(f"parity_alpha must be a positive number, got {o['parity_alpha']!r}")
        value: dict[str, Any] = {"languages": list(languages)}
        for k, core in PARITY_KEYS.items():
            if o[k] is not None:
                value[core] = float(o[k]) if k == "parity_alpha" else o[k]
        o["parity"] = value
    for k in PARITY_KEYS:
        del o[k]


def from_saved(saved: Mapping[str, Any]) -> Optional[TrainOptions]:
    """The TrainOptions of a model's saved ``options`` (None when the file has none)."""
    if not saved:
        return None
    known = {k: v for k, v in saved.items() if k in NAMES and k != "joints"}
    parity = known.pop("parity", None)
    if isinstance(parity, Mapping):
        known["parity"] = True
        for k, core in PARITY_KEYS.items():
            if parity.get(core) is not None:
                known[k] = parity[core]
    boundless = known.pop("boundless", None)
    if isinstance(boundless, Mapping):
        known["boundless"] = True
        known["deletion_threshold"] = boundless.get("deletion_threshold", 0.9)
        known["superword_pieces"] = boundless.get("superword_pieces")
        known["count_on"] = boundless.get("count_on")
    for name in SPECIAL_LISTS:
        if name in known:
            known[name] = tuple(known[name])
    if saved.get("pattern") is not None:
        known["pre_split"] = saved["pattern"]
    if known.get("model") == "unigram":
        known.pop("min_count", None)  # the core's default, saved though Unigram takes none
    return TrainOptions(**known)


#: the options that are lists of texts (special rows)
SPECIAL_LISTS = ("special_tokens", "user_symbols")

#: the pre-splits the core has as names of their own; every other value is a pattern
CORE_PRE_SPLITS = ("gpt2", "bert")

#: each field's default, for telling an option left alone from one given
FIELD_DEFAULTS: dict[str, Any] = {f.name: f.default for f in dataclasses.fields(TrainOptions)
                                  if f.default is not dataclasses.MISSING}

#: the presets: every option each one sets (docs/presets.md has the table). An option given
#: explicitly, i.e. not left at its default, keeps its given value.
PRESETS: dict[str, dict[str, Any]] = {
    # GPT-2: byte-level BPE with GPT-2's pre-split
    "gpt2": {"model": "bpe", "spelling": "bytes", "pre_split": "gpt2"},
    # cl100k_base and o200k_base: byte-level BPE with OpenAI's later patterns
    "cl100k": {"model": "bpe", "spelling": "bytes", "pre_split": "cl100k"},
    "o200k": {"model": "bpe", "spelling": "bytes", "pre_split": "o200k"},
    # Llama (1 and 2): sentencepiece BPE, the front mark, byte fallback, every digit alone
    "llama": {"model": "bpe", "spelling": "front", "byte_fallback": True, "split_digits": 1},
    # sentencepiece's defaults: Unigram on the front mark, nmt_nfkc, character coverage 0.9995.
    # Byte fallback stays off unless given (byte_fallback=True); sentencepiece's training loop
    # (em="sentencepiece": its seed, M-step, pruning and final pick).
    "sentencepiece": {"model": "unigram", "spelling": "front", "normalize": "nmt_nfkc",
                      "character_coverage": 0.9995, "em": "sentencepiece"},
    # Sennrich et al.'s BPE (subword-nmt): the end mark </w>, pairs seen at least twice
    "sennrich": {"model": "bpe", "spelling": "end"},
    # BERT's WordPiece: continuation marks, punctuation and CJK stand alone, text cleaned,
    # lower-cased and stripped of accents (as bert-base-uncased)
    "bert": {"model": "wordpiece", "spelling": "continuation", "pre_split": "bert", "lowercase": True,
             "strip_accents": True, "clean_text": True},
    # SuperBPE (Liu et al. 2025): byte-level BPE on o200k's pre-split up to superword_at (80% of
    # vocab_size unless given), then merges across spaces inside the paper's spans, at most four
    # words a piece (docs/METHODS.md)
    "superbpe": {"model": "bpe", "spelling": "bytes", "pre_split": "o200k", "superword_pattern": "superbpe"},
    # BoundlessBPE (Schmidt et al. 2025): byte-level BPE on o200k's pre-split where two adjacent
    # whole pretokens may join into a superword at any step, and tokens that were only steps are
    # deleted (deletion_threshold 0.9; docs/METHODS.md)
    "boundless": {"model": "bpe", "spelling": "bytes", "pre_split": "o200k", "boundless": True},
}

PathLike = Union[str, "os.PathLike[str]"]

__all__ = ["TrainOptions", "DEFAULT", "Default", "from_keywords", "resolved", "from_saved", "NAMES", "PRESETS"]
