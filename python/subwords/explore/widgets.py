"""Every widget of the four pages as one Python function: ``state dict -> JSON-able dict``.

All numbers come from the library (``subwords.train`` and ``Tokenizer`` methods,
``subwords.measure``, ``subwords.analysis``; the reference learner in ``subwords.reference`` only
for the BPE walk's table of every pair count after a merge). The page's JavaScript only draws what these return.

A widget is declared with its controls (each finite: a range with a step, a select, or a
checkbox), so the state space of every widget is known: the server validates a state against the
declaration before computing, and ``--html`` precomputes every state of every widget.

A result holds any of:

* ``numbers``: ``[[label, value], ...]`` readouts;
* ``pieces``: ``[{"label", "pieces": [[text, kind], ...]}]`` -- a cut, kind one of ``""``,
  ``"unk"``, ``"byte"``, ``"marker"``, ``"span"`` (a row spanning a space), ``"mark"``;
* ``tables``: ``[{"caption", "columns", "rows", "highlight": [row index, ...]}]``;
* ``charts``: ``[{"kind": "line" | "bar" | "scatter" | "lattice", "title", "x", "y", "series":
  [{"name", "points": [[x, y, label?], ...]}], "vlines": [[x, label]], "hlines": [[y, label]]}]``;
* ``note``: a sentence on what the corpus is.

Numbers that are measurements -- size curves, per-step traces (corpus lengths, tied candidates),
tie branches, greedy against optimal, matched comparisons, merge-budget curves -- come from
``subwords.measure`` (docs/MEASURE.md), so every number has one implementation: a BPE or
WordPiece curve is one training read off its trace, not one training per size.
"""

from __future__ import annotations

import hashlib
import itertools
import math
import threading
import unicodedata
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any, Callable, Mapping, Optional, Sequence, Union, cast

import subwords
from subwords import measure
from subwords.analysis import wordpiece_candidates
from subwords.reference import bpe as ref_bpe
from subwords.reference.spelling import make_spelling

from . import corpora as C
from .lessons import NORMALIZATIONS

MARK = "\u2581"
BIG = 2**26  # the largest vocab_size the library takes: "as many rows as it can learn"
Result = dict[str, Any]
State = dict[str, Any]


class ExploreError(ValueError):
    """A request the explorer refuses: the message says what was wrong and what to send."""


# ------------------------------------------------------------------------------------------------
# Declarations


@dataclass(frozen=True)
class Control:
    name: str
    label: str
    kind: str  # "range" | "select" | "checkbox"
    default: Any
    min: int = 0
    max: int = 0
    step: int = 1
    options: tuple[tuple[Any, str], ...] = ()

    def values(self) -> list[Any]:
        if self.kind == "range":
            return list(range(self.min, self.max + 1, self.step))
        if self.kind == "select":
            return [v for v, _ in self.options]
        return [False, True]

    def check(self, value: Any) -> Any:
        if self.kind == "checkbox":
            if isinstance(value, bool):
                return value
            if value in ("0", "1", "true", "false"):
                return value in ("1", "true")
            raise ExploreError(f"{self.name} must be true or false, got {value!r}")
        if self.kind == "range":
            if isinstance(value, str) and value.lstrip("-").isdigit() and len(value) < 12:
                value = int(value)
            if isinstance(value, bool) or not isinstance(value, int):
                raise ExploreError(f"{self.name} must be a whole number from {self.min} to {self.max}, got {value!r}")
            if not self.min <= value <= self.max or (value - self.min) % self.step:
                raise ExploreError(f"{self.name} must be a whole number from {self.min} to {self.max}"
                                   f"{f' in steps of {self.step}' if self.step > 1 else ''}, got {value!r}")
            return value
        for v, _ in self.options:
            if value == v or (isinstance(value, str) and str(v) == value):
                return v
        allowed = ", ".join(str(v) for v, _ in self.options)
        raise ExploreError(f"{self.name} must be one of {allowed}; got {value!r}")

    def spec(self) -> dict[str, Any]:
        d: dict[str, Any] = {"name": self.name, "label": self.label, "kind": self.kind, "default": self.default}
        if self.kind == "range":
            d.update(min=self.min, max=self.max, step=self.step)
        if self.kind == "select":
            d["options"] = [[v, label] for v, label in self.options]
        return d


@dataclass(frozen=True)
class Widget:
    id: str
    page: str
    number: int
    title: str
    compute: Callable[[State], Result]
    controls: tuple[Control, ...]
    large: bool = False  # has a "corpus" control that can name a user corpus
    text: bool = False  # cuts the page's text box (state key ``text``, the running sentence unless typed)
    models: bool = True  # a model file can stand for its fit (False: what it shows needs a training run)

    @property
    def fitted(self) -> bool:
        """Cuts the text box's text with a vocabulary fitted to a large corpus: a model file can
        take the fitted vocabulary's place."""
        return self.large and self.text and self.models

    def spec(self) -> dict[str, Any]:
        from .lessons import lesson

        taught = lesson(self.id, self.page, self.number, sum(w.page == self.page for w in WIDGETS.values()))
        return {"id": self.id, "page": self.page, "number": self.number, "title": self.title,
                "where": taught.pop("where"), "lesson": taught,
                "text": self.text, "large": self.large, "fitted": self.fitted, "controls": [c.spec() for c in self.live_controls()]}

    def live_controls(self) -> tuple[Control, ...]:
        """The controls, the corpus control extended with the user's corpora (and, for the
        fitted-vocabulary widget, the user's models)."""
        if not self.large:
            return self.controls
        extra = tuple((name, f"yours: {name}") for name in sorted(USER_CORPORA))
        if self.fitted:
            extra += tuple((name, f"model: {name}") for name in sorted(USER_MODELS))
        opening = OPENING_CORPUS if OPENING_CORPUS in USER_CORPORA else None
        if self.fitted and OPENING_MODEL in USER_MODELS:
            opening = OPENING_MODEL
        return tuple(Control(c.name, c.label, c.kind, opening or c.default, options=c.options + extra)
                     if c.name == "corpus" else c for c in self.controls)


WIDGETS: "OrderedDict[str, Widget]" = OrderedDict()
PAGES = {"bpe": "Byte Pair Encoding", "unigram": "The Unigram Language Model", "wordpiece": "WordPiece",
         "sentencepiece": "SentencePiece"}


Compute = Callable[[State], Result]


def widget(id: str, page: str, number: int, title: str, *controls: Control,
           large: bool = False, text: bool = False, models: bool = True) -> Callable[[Compute], Compute]:
    def register(fn: Callable[[State], Result]) -> Callable[[State], Result]:
        WIDGETS[id] = Widget(id, page, number, title, fn, tuple(controls), large, text, models)
        return fn
    return register


def rng(name: str, label: str, default: int, lo: int, hi: int, step: int = 1) -> Control:
    return Control(name, label, "range", default, lo, hi, step)


def sel(name: str, label: str, default: Any, *options: tuple[Any, str]) -> Control:
    return Control(name, label, "select", default, options=tuple(options))


def box(name: str, label: str, default: bool) -> Control:
    return Control(name, label, "checkbox", default)


# ------------------------------------------------------------------------------------------------
# Corpora and a cache of fits

#: name -> list of texts (one per line); filled by the server from the command line and uploads.
USER_CORPORA: dict[str, list[str]] = {}
#: name -> a loaded tokenizer (``subwords explore MODEL``)
USER_MODELS: dict[str, Any] = {}
#: The corpus every large-corpus widget opens on: the first given on the command line (else each
#: widget's own built-in corpus).
OPENING_CORPUS: Optional[str] = None
#: The model every fitted-vocabulary widget opens on: the first given on the command line.
OPENING_MODEL: Optional[str] = None


def large_corpus(name: str) -> list[str]:
    if name == C.DOCSTRINGS:
        return list(C.docstring_sentences())
    if name == C.OURS:
        return list(C.EIGHTEEN)
    if name in USER_CORPORA:
        return USER_CORPORA[name]
    if name in _SAMPLES:
        return _sample_lines(name)
    raise ExploreError(f"no corpus named {name!r}: name one given on the command line or uploaded")


def is_users(corpus: Any) -> bool:
    """A corpus of the user's (given, uploaded, or a sample of one): its work runs in the worker."""
    return isinstance(corpus, str) and (corpus in USER_CORPORA or corpus in _SAMPLES)


# ------------------------------------------------------------------------------------------------
# Samples of a large corpus for the widgets whose work would pass the time bound on all of it

#: sample name -> (the corpus it samples, every k-th line)
_SAMPLES: dict[str, tuple[str, int]] = {}
_SAMPLE_LINES: dict[str, tuple[list[str], list[str]]] = {}  # sample name -> (the corpus's lines, the sample's)
_SIZES: dict[int, tuple[list[str], int]] = {}

#: The most text a widget that fits many times works on (bytes of UTF-8): a larger corpus of the
#: user's is sampled evenly (every k-th line) and the widget says so. Measured on 10 MB of Python
#: source on two shared cores: see docs/EXPLORE.md.
SAMPLE_BYTES = {
    "bpe-curve": 4_000_000,  # 15 sizes, one training: 46 s on all 10 MB
    "sp-lengths": 2_000_000,  # 14 sizes under two spellings
    "uni-vs-bpe": 60_000,  # 14 Unigram trainings: 124 s on 340 KB, 24 s on 68 KB
    "uni-pieces": 400_000,  # two Unigram trainings: 19.6 s on 400 KB
    "wp-scatter": 4_000_000,  # every candidate pair scored: 26 s on 10 MB
    "wp-sizes": 500_000,  # WordPiece to exhaustion and at four sizes: 15.5 s on 500 KB
    "wp-lengths": 600_000,  # both rules to exhaustion: 20.3 s on 600 KB, 55.6 s on 0.93 MB
    "bpe-two-stage": 5_000_000,  # both recipes at the largest sizes: 9.4 s on 5 MB, 44.3 s on 11 MB
}


def corpus_bytes(lines: list[str]) -> int:
    entry = _SIZES.get(id(lines))
    if entry is None or entry[0] is not lines:
        entry = _SIZES[id(lines)] = (lines, sum(len(line.encode("utf-8", "surrogatepass")) + 1 for line in lines))
    return entry[1]


def capped(name: str, widget_id: str) -> str:
    """``name``, or the name of an evenly spaced sample of it (every k-th line, the smallest k that
    brings it under the widget's ``SAMPLE_BYTES``) when it is a user's corpus larger than that."""
    cap = SAMPLE_BYTES.get(widget_id)
    lines = USER_CORPORA.get(name)
    if cap is None or lines is None:
        return name
    size = corpus_bytes(lines)
    if size <= cap:
        return name
    k = -(-size // cap)
    sample = f"{name} (every {ordinal(k)} line)"
    _SAMPLES[sample] = (name, k)
    return sample


def ordinal(k: int) -> str:
    return f"{k}{'th' if 10 <= k % 100 <= 20 else {1: 'st', 2: 'nd', 3: 'rd'}.get(k % 10, 'th')}"


def _sample_lines(sample: str) -> list[str]:
    name, k = _SAMPLES[sample]
    lines = USER_CORPORA.get(name)
    if lines is None:
        raise ExploreError(f"no corpus named {name!r}: name one given on the command line or uploaded")
    entry = _SAMPLE_LINES.get(sample)
    if entry is None or entry[0] is not lines:  # made again when the corpus is uploaded again
        entry = _SAMPLE_LINES[sample] = (lines, lines[::k])
    return entry[1]


def corpus_note(name: str) -> str:
    if name in _SAMPLES:
        parent, k = _SAMPLES[name]
        lines, part = USER_CORPORA.get(parent, []), _sample_lines(name)
        return (f"Corpus: every {ordinal(k)} line of your {parent} ({len(part):,} of {len(lines):,} lines, "
                f"{corpus_bytes(part) / 1e6:.2f} of {corpus_bytes(lines) / 1e6:.1f} MB): this widget's work on all of it "
                "(many fits, or every pair scored) would pass the explorer's 60 s bound on a request. The widgets "
                "that fit once use the whole corpus.")
    if name == C.DOCSTRINGS:
        n = sum(len(s.split()) for s in C.docstring_sentences())
        return (f"Corpus: {len(C.docstring_sentences())} sentences ({n} words) of this Python's standard-library "
                "docstrings, a stand-in for the page's eighteen sentences (not printed): the numbers are this "
                "corpus's, not the page's.")
    if name == C.OURS:
        return ("Corpus: eighteen sentences written for this project with the properties the BPE page states for its "
                "own (72 distinct words over 133, 36 characters, 51 symbols; not the page's text): numbers the page "
                "derives from those properties match, the others are this corpus's.")
    return f"Corpus: your {name} ({len(USER_CORPORA.get(name, []))} lines)."


_CACHE: "OrderedDict[Any, Any]" = OrderedDict()
_CACHE_LOCK = threading.Lock()
_CACHE_SIZE = 8192  # every state of every widget on the built-in corpora, with their fits, fits


def cached(key: Any, make: Callable[[], Any]) -> Any:
    with _CACHE_LOCK:
        if key in _CACHE:
            _CACHE.move_to_end(key)
            return _CACHE[key]
    value = make()
    with _CACHE_LOCK:
        _CACHE[key] = value
        while len(_CACHE) > _CACHE_SIZE:
            _CACHE.popitem(last=False)
    return value


def _data(corpus: Union[str, Mapping[str, int]]) -> Any:
    if isinstance(corpus, str):
        return large_corpus(corpus)
    return dict(corpus)


_TOKENS: dict[int, tuple[list[str], str]] = {}


def token(name: str) -> Any:
    """A cache key for a named corpus that changes when its text does: a user's corpus is keyed
    by a digest of its lines (a corpus uploaded again under the same name is a new corpus)."""
    if name in _SAMPLES:
        return (token(_SAMPLES[name][0]), "every", _SAMPLES[name][1])
    lines = USER_CORPORA.get(name)
    if lines is None:
        return name
    entry = _TOKENS.get(id(lines))
    if entry is None or entry[0] is not lines:  # the list is held in the entry: its id stays its own
        digest = hashlib.sha256("\n".join(lines).encode("utf-8", "surrogatepass")).hexdigest()
        entry = _TOKENS[id(lines)] = (lines, digest)
    return (name, entry[1])


def _key(corpus: Union[str, Mapping[str, int]]) -> Any:
    return token(corpus) if isinstance(corpus, str) else tuple(sorted(corpus.items()))


#: Set in the server's worker process: fits on a user's corpus draw the library's progress line
#: (on the worker's stderr, which the server reads for the page).
SHOW_PROGRESS = False


def fit(corpus: Union[str, Mapping[str, int]], **options: Any) -> Any:
    """``subwords.train`` on a built-in table or a named large corpus, cached per options."""
    key = ("fit", _key(corpus), tuple(sorted((k, repr(v)) for k, v in options.items())))
    progress = SHOW_PROGRESS and is_users(corpus)
    return cached(key, lambda: subwords.train(_data(corpus), progress=progress, **options))


def floor(corpus: Union[str, Mapping[str, int]], **options: Any) -> int:
    """The smallest size that can be asked: alphabet + the [UNK] row, from the report of a fit
    (the alphabet does not depend on the size asked). For a merge learner on a user's corpus the
    fit is a short one, asked for a size just above any alphabet the corpus's characters can
    make (each character at most twice, marked and unmarked): training WordPiece to exhaustion on
    1 MB of source takes over a minute, only to read the alphabet. Unigram (whose small sizes
    cost more pruning rounds, not fewer) and the built-in corpora read the full fit's."""
    return cast(int, cached(("floor", _key(corpus), tuple(sorted((k, repr(v)) for k, v in options.items()))),
                            lambda: _floor(corpus, **options)))


def _floor(corpus: Union[str, Mapping[str, int]], **options: Any) -> int:
    full = ("fit", _key(corpus), tuple(sorted((k, repr(v)) for k, v in dict(options, vocab_size=BIG).items())))
    with _CACHE_LOCK:
        known = _CACHE.get(full)
    if known is None and is_users(corpus) and options.get("model", "bpe") != "unigram":
        def bound() -> int:
            lines = large_corpus(cast(str, corpus))
            chars = set().union(*map(set, lines)) if lines else set()
            chars |= set(unicodedata.normalize("NFKC", "".join(chars)))
            return 2 * len(chars) + 8
        try:
            return int(fit(corpus, vocab_size=cached(("bound", _key(corpus)), bound), **options).report["alphabet_size"]) + 1
        except subwords.OptionError:  # an alphabet above the bound: the full fit says
            pass
    return int(fit(corpus, vocab_size=BIG, **options).report["alphabet_size"]) + 1


def ceiling(corpus: Union[str, Mapping[str, int]], **options: Any) -> int:
    """The size the learner stops at when asked for more than it can learn."""
    return cast(int, cached(("ceiling", _key(corpus), tuple(sorted((k, repr(v)) for k, v in options.items()))),
                            lambda: int(fit(corpus, vocab_size=BIG, **options).vocab_size)))


def kind_of(piece: str, tok: Any) -> str:
    if piece == "[UNK]":
        return "unk"
    if piece.startswith("<0x") and piece.endswith(">"):
        return "byte"
    if piece in ("</w>", "##") or piece == MARK:
        return "marker"
    return ""


def strip(label: str, pieces: Sequence[str], tok: Any = None, kinds: Optional[Sequence[str]] = None) -> dict[str, Any]:
    ks = kinds if kinds is not None else [kind_of(p, tok) for p in pieces]
    return {"label": f"{label} ({n_pieces(len(pieces))})", "pieces": [[p, k] for p, k in zip(pieces, ks)]}


def n_pieces(n: int) -> str:
    return f"{n} piece" if n == 1 else f"{n} pieces"


#: The longest text the page's text box may send (characters): 10 KB of pasted text fits, and
#: the request stays under the server's 64 KB bound in any script.
MAX_TEXT = 16_000
#: The pieces of a typed text drawn per strip (the counts are of all of them): 10 KB of prose is
#: about 2,500 pieces a strip and 19 widgets draw 33 strips, more than a browser lays out at typing speed.
DRAWN = 1_000


def text_of(s: State) -> str:
    """The text a widget cuts: the page's text box, the running sentence until something is typed."""
    return cast(str, s.get("text", C.SENTENCE))


def text_name(s: State) -> str:
    return "the sentence" if text_of(s) == C.SENTENCE else "your text"


_ROWS: "OrderedDict[int, tuple[Any, dict[int, tuple[str, str]]]]" = OrderedDict()


def _row_memo(tok: Any) -> dict[int, tuple[str, str]]:
    """id -> (piece, its bytes in hex) for one tokenizer, filled as pieces are met (a typed text
    asks for the same rows again at every key)."""
    with _CACHE_LOCK:
        entry = _ROWS.get(id(tok))
        if entry is None or entry[0] is not tok:  # the tokenizer is held in the entry: its id stays its own
            entry = _ROWS[id(tok)] = (tok, {})
            while len(_ROWS) > 256:
                _ROWS.popitem(last=False)
        return entry[1]


_TABLES: "OrderedDict[int, tuple[Any, Any]]" = OrderedDict()


def table_of(tok: Any) -> Any:
    """A fit's merges, rows and row kinds, read from the library once per fit (each read copies
    them out of the model: 60 ms for a fit of 10 MB, which typing would pay at every pause)."""
    with _CACHE_LOCK:
        entry = _TABLES.get(id(tok))
    if entry is None or entry[0] is not tok:
        entry = (tok, (list(getattr(tok, "merges", None) or []), list(tok.rows), list(tok.kinds)))
        with _CACHE_LOCK:
            _TABLES[id(tok)] = entry
            while len(_TABLES) > 256:
                _TABLES.popitem(last=False)
    return entry[1]


def cut_strip(label: str, tok: Any, text: str, kind: Optional[Callable[[str], str]] = None,
              yours: bool = True) -> dict[str, Any]:
    """A strip of ``text`` as ``tok`` cuts it, every piece with its id, the bytes it decodes to
    (``decode_bytes``) and the characters of the text it came from (``encode_with_offsets``)."""
    try:
        spans = tok.encode_with_offsets(text)
    except (AttributeError, NotImplementedError):  # a model of another library: no offsets
        spans = [(i, 0, 0) for i in tok.encode(text)]
    rows = _row_memo(tok)
    pieces = []
    for i, a, b in spans:
        row = rows.get(i)
        if row is None:
            piece = tok.id_to_piece(i)
            try:
                hex_ = tok.decode_bytes([i]).hex(" ").upper()
            except (AttributeError, NotImplementedError):  # another library's model: its bytes are not given
                hex_ = "?"
            row = rows[i] = (piece, hex_)
        pieces.append([row[0], kind(row[0]) if kind else kind_of(row[0], tok), i, row[1], text[a:b]])
    unk = sum(p[1] == "unk" for p in pieces)
    byte = sum(p[1] == "byte" for p in pieces)
    counts = f"{n_pieces(len(pieces))} · {len(text)} characters · {len(text.encode('utf-8'))} bytes"
    if unk:
        counts += f" · {unk} [UNK]"
    if byte:
        counts += f" · {byte} byte pieces"
    if len(pieces) > DRAWN:
        counts += f" · the first {DRAWN:,} drawn"
    return {"label": f"{label} ({n_pieces(len(pieces))})", "text": yours, "counts": counts, "pieces": pieces[:DRAWN],
            "total": len(pieces), "unk": unk}


def pair_text(pair: Sequence[str]) -> str:
    return f"{pair[0]} + {pair[1]}"


def sizes_between(lo: int, hi: int, n: int) -> list[int]:
    """``n`` sizes from ``lo`` to ``hi`` inclusive, as evenly spaced as whole numbers allow."""
    if hi <= lo:
        return [lo]
    out = sorted({round(lo + (hi - lo) * k / (n - 1)) for k in range(n)})
    return out


def _curve_progress(corpus: Union[str, Mapping[str, int]]) -> Any:
    """On a user's corpus in the server's worker, a progress line the server shows on the page."""
    if SHOW_PROGRESS and is_users(corpus):
        from subwords.measure.curve import stderr_progress

        return stderr_progress("training: sizes")
    return None


def size_curve(corpus: Union[str, Mapping[str, int]], sizes: Sequence[int], held_out: str,
               **options: Any) -> list[dict[str, int]]:
    """Rows, corpus pieces and the held-out text's pieces at each size: :func:`subwords.measure.curve`
    (one training for BPE and WordPiece, the smaller sizes read off its trace)."""
    points = measure.curve(_data(corpus), sizes, heldout=[held_out], progress=_curve_progress(corpus), **options)
    return [_curve_row(p) for p in points]


def _curve_row(p: Any) -> dict[str, int]:
    return {"asked": p.size, "rows": p.rows, "corpus": p.corpus_pieces, "held_out": p.heldout_pieces}


# ------------------------------------------------------------------------------------------------
# The pages' conclusions, for the widgets that run on a corpus the page does not print

#: widget id -> the conclusion its page draws, in our words. Each such widget checks it on the
#: corpus it shows and says where it does not hold (``"conclusion"`` in its result).
CONCLUSIONS = {
    "bpe-fit": "a word the corpus holds is one piece alone and more than one inside the sentence, where a "
               "full stop or a hyphen stops its row from applying (analysis, cost, expected)",
    "bpe-curve": "both curves fall as the table grows, and the held-out sentence gains far less than the corpus",
    "bpe-two-stage": "lifting the word boundary permits rows that span a space without requiring them: some of "
                     "stage two's rows span a space and some do not",
    "bpe-bytes": "for the same merges the byte fit is longer on the corpus than the character fit, and both glue "
                 "every text back exactly",
    "uni-vs-bpe": "above the floor (where both spell letter by letter) Unigram's corpus is shorter than BPE's at every "
                  "size, and its held-out sentence is longer",
    "uni-pieces": "above the smallest size Unigram keeps more whole words (rows that end a word) than BPE",
    "wp-scatter": "count and score disagree: the commonest pair is not the best by score, and the best score "
                  "goes to a rarer pair",
    "wp-sizes": "exactly one piece per word has no ## mark, and it is always the first",
    "wp-open-end": "Alvarez is spelled under continuation marks and refused under end marks; zebra the reverse; "
                   "you is refused under both",
    "wp-lengths": "the score rule's corpus is longer than the count rule's at every budget above zero",
    "sp-extends": "a large share of the merges extend a piece that begins with ▁ (the page: 42 of 99, nearly "
                  "half), and some rows are held twice, with and without ▁ (the page: 17)",
    "sp-roundtrip": "the front mark glues the sentence back exactly; the end mark does not (it loses the space "
                    "after Alvarez with the [UNK] that replaced its last letter)",
    "sp-lengths": "the front mark's corpus is shorter than the end mark's at every size from 52 rows up",
    "sp-no-cut": "with nothing cut at the marks some pieces hold a space inside, and the very first merge joins "
                 "e to the space after it",
    "sp-cjk": "the front scheme finds the words shared across lines: it learns more merges than the end scheme, "
              "reads the lines and the new sentence in fewer pieces, and three of the end scheme's rows are a "
              "character held again with a line-end mark",
}


def conclusion(widget_id: str, differs: Sequence[str]) -> dict[str, Any]:
    """The page's conclusion for a widget and the places it does not hold on the corpus shown."""
    return {"text": CONCLUSIONS[widget_id], "differs": list(differs)}


def _sizes(xs: Sequence[Any]) -> str:
    return ", ".join(str(x) for x in xs)


# ================================================================================================
# BPE page (000_…)

FOUR_WORDS = list(C.FOUR)


@widget("bpe-walk", "bpe", 1, "The merge walk on the four words",
        rng("merges", "merges", 10, 0, 10), text=True)
def bpe_walk(s: State) -> Result:
    k = s["merges"]
    full = fit(C.FOUR, vocab_size=22)
    merges = full.merges[:k]
    lengths = cached(("walk-lengths",), lambda: merge_trace(C.FOUR, ties=False, vocab_size=22).corpus_lengths())
    tok = fit(C.FOUR, vocab_size=12 + k)
    rows = [[w, c, " ".join(tok.encode_pieces(w)), len(tok.encode_pieces(w))] for w, c in C.FOUR.items()]
    learned = [[i + 1, pair_text(m), lengths[i] - lengths[i + 1], lengths[i + 1]] for i, m in enumerate(merges)]
    numbers: list[list[Any]] = [["merges", k], ["corpus pieces", f"{lengths[0]} → {tok.report['corpus_pieces_after']}"],
                                ["rows", f"{12} → {tok.vocab_size}"]]
    if k:
        numbers.append(["last merge", f"{pair_text(merges[-1])} at {lengths[k - 1] - lengths[k]}"])
    pairs = cached(("pairs", k), lambda: _pairs_after(k))
    numbers.append(["largest pair count now", pairs[0][1] if pairs else "none"])
    return {"numbers": numbers,
            "pieces": [cut_strip(f"{text_name(s)} after {k} merges", tok, text_of(s))],
            "tables": [{"caption": "each word's spelling", "columns": ["word", "count", "spelling", "pieces"], "rows": rows},
                       {"caption": "pairs now, by count (the next merge takes the first)", "columns": ["pair", "count"],
                        "rows": [[pair_text(p), c] for p, c in pairs[:8]]},
                       {"caption": "merges so far (count = pieces saved)", "columns": ["#", "pair", "count", "corpus after"],
                        "rows": learned, "highlight": [k - 1] if k else []}],
            "charts": [{"kind": "line", "title": "corpus pieces after each merge", "x": "merges", "y": "pieces",
                        "series": [{"name": "corpus", "points": [[i, n] for i, n in enumerate(lengths)]}],
                        "vlines": [[k, "merges", True]]}],
            "note": "The four words: low 5, lower 2, newest 6, widest 3 (end spelling, l o w</w>)."}


# BPE page: "the six readings under the widget": analysis alone against re-analysis. in the sentence,
# cost alone against low-cost, and expected (the corpus's word) against the sentence's expect.
def _pairs_after(k: int) -> list[tuple[tuple[str, str], int]]:
    """The four words' adjacent pairs and counts after ``k`` merges (the reference's counting),
    in the learner's order: count descending, then the tie rule."""
    sp = make_spelling("end")
    units: Any = _four_units()
    learned = ref_bpe.learn(units, 12 + k, join=sp.join)
    counts = ref_bpe.count_pairs(learned.units)
    ranked = sorted(counts.items(), key=lambda pc: (-pc[1], pc[0]))
    return [((sp.show(a), sp.show(b)), c) for (a, b), c in ranked]


SIX_READINGS = [("analysis", "re-analysis."), ("cost", "low-cost"), ("expected", "expect")]


@widget("bpe-fit", "bpe", 2, "The fitted vocabulary: the sentence's cut and six readings",
        sel("corpus", "corpus", C.OURS, *C.BUILT_IN_LARGE.items()),
        sel("size", "rows asked", 0, (0, "until no pair occurs twice"), (50, "the floor + 50"), (200, "the floor + 200"),
            (800, "the floor + 800")),
        large=True, text=True)
def bpe_fit(s: State) -> Result:
    corpus = s["corpus"]
    tok = fit(corpus, vocab_size=floor(corpus) + s["size"] if s["size"] else BIG)
    text, what = text_of(s), text_name(s)
    shown = cut_strip(what, tok, text)
    readings = cached(("bpe-fit", token(corpus), s["size"]), lambda: six_readings(tok))
    differs = [f"{w} is {n} pieces alone" if n != 1 else f"{w} is one piece inside {u} too"
               for w, _, n, u, _, m in readings if n != 1 or m < 2]
    return {"conclusion": conclusion("bpe-fit", differs),
            "numbers": [["rows", tok.vocab_size], ["learned", len(table_of(tok)[0])],
                        [f"{what.split()[-1]} pieces", shown["total"]], [f"{what.split()[-1]} words", len(text.split())],
                        ["glued back exactly", "yes" if tok.decode(tok.encode(text)) == text else "no"]],
            "pieces": [shown],
            "tables": [{"caption": "the six readings: a word of the corpus alone, against the sentence's word",
                        "columns": ["word", "pieces", "n", "the sentence's", "pieces", "n"], "rows": readings}],
            "note": corpus_note(corpus)}


def six_readings(tok: Any) -> list[list[Any]]:
    readings = []
    for word, unit in SIX_READINGS:
        a, b = list(tok.encode_pieces(word)), list(tok.encode_pieces(unit))
        readings.append([word, " ".join(a), len(a), unit, " ".join(b), len(b)])
    return readings


FIFTY_ONE = {"abcdefghijklmnopqrstuvwxyzABCDEFGH.": 2, **{"A" + c: 1 for c in "abcdefghijklmnop"}}


@widget("bpe-fallback", "bpe", 3, "Byte fallback: rows asked against rows held",
        rng("size", "rows asked", 54, 52, 80), box("fallback", "byte fallback", True), text=True)
def bpe_fallback(s: State) -> Result:
    fb = s["fallback"]
    asked = fit(FIFTY_ONE, vocab_size=s["size"], byte_fallback=fb)
    sentence_tok = fit(C.STAND_IN, vocab_size=60, byte_fallback=fb)
    cafe_tok = fit({"face": 3, "fact": 2}, vocab_size=20, byte_fallback=fb)
    strips, rows = [], []
    for label, tok, text in ((text_name(s), sentence_tok, text_of(s)), ("café", cafe_tok, C.CAFE),
                             ("Greek", sentence_tok, C.GREEK)):
        pieces = list(tok.encode_pieces(text))
        strips.append(cut_strip(label, tok, text) if label == text_name(s) else strip(label, pieces, tok))
        back = tok.decode(tok.encode(text))
        rows.append([label, len(pieces), sum(p.startswith("<0x") for p in pieces), pieces.count("[UNK]"), back,
                     "yes" if back == text else "no"])
    return {"numbers": [["rows asked", s["size"]], ["rows held", asked.vocab_size],
                        ["alphabet", asked.report["alphabet_size"]],
                        ["byte rows", 257 if fb else 0]],
            "pieces": strips,
            "tables": [{"caption": "three texts under " + ("byte rows" if fb else "[UNK]"),
                        "columns": ["text", "pieces", "byte rows", "[UNK]", "glued back", "exact"], "rows": rows}],
            "note": "Rows asked/held: a corpus spelled in 51 symbols (floor 52), as the page's. The sentence and the "
                    "Greek text: a corpus where z occurs inside a word but no word ends in z; café: face 3, fact 2."}


@widget("bpe-curve", "bpe", 4, "The vocabulary-size curve",
        sel("corpus", "corpus", C.OURS, *C.BUILT_IN_LARGE.items()),
        rng("at", "size shown (of 15)", 15, 1, 15), large=True)
def bpe_curve(s: State) -> Result:
    corpus = s["corpus"]
    lo, hi = floor(corpus), ceiling(corpus)
    sizes = sizes_between(lo, hi, 15)
    curve = cached(("curve", token(corpus), tuple(sizes)), lambda: size_curve(corpus, sizes, C.SENTENCE))
    point = curve[min(s["at"], len(curve)) - 1]
    differs = [f"the corpus does not fall from {a['rows']} to {b['rows']} rows" for a, b in zip(curve, curve[1:])
               if b["corpus"] >= a["corpus"] and b["rows"] > a["rows"]]
    differs += [f"the sentence grows from {a['rows']} to {b['rows']} rows" for a, b in zip(curve, curve[1:])
                if b["held_out"] > a["held_out"]]
    gain = {key: 1 - curve[-1][key] / curve[0][key] for key in ("held_out", "corpus")}  # the share of pieces saved
    if len(curve) > 1 and gain["held_out"] >= gain["corpus"]:
        differs.append(f"the sentence saves {gain['held_out']:.0%} of its pieces, the corpus {gain['corpus']:.0%}")
    return {"conclusion": conclusion("bpe-curve", differs),
            "numbers": [["floor (alphabet + [UNK])", lo], ["ceiling (no pair twice)", hi],
                        ["rows", point["rows"]], ["corpus pieces", point["corpus"]], ["sentence pieces", point["held_out"]]],
            "charts": [{"kind": "line", "title": "corpus pieces against rows", "x": "rows", "y": "pieces",
                        "series": [{"name": "corpus", "points": [[p["rows"], p["corpus"]] for p in curve]}],
                        "vlines": [[lo, "floor"], [hi, "ceiling"], [point["rows"], "shown", True]]},
                       {"kind": "line", "title": "held-out sentence pieces against rows", "x": "rows", "y": "pieces",
                        "series": [{"name": "held-out sentence", "points": [[p["rows"], p["held_out"]] for p in curve]}],
                        "vlines": [[lo, "floor"], [hi, "ceiling"], [point["rows"], "shown", True]]}],
            "tables": [{"caption": f"{len(curve)} sizes", "columns": ["rows", "corpus pieces", "sentence pieces"],
                        "rows": [[p["rows"], p["corpus"], p["held_out"]] for p in curve],
                        "highlight": [curve.index(point)]}],
            "note": corpus_note(corpus)}


@widget("bpe-bytes", "bpe", 5, "Character alphabet against bytes on three texts",
        sel("corpus", "corpus", C.OURS, *C.BUILT_IN_LARGE.items()),
        sel("merges", "merges", 85, (0, "0"), (20, "20"), (85, "85"), (200, "200")), large=True, text=True)
def bpe_bytes(s: State) -> Result:
    corpus, m = s["corpus"], s["merges"]
    chars = fit(corpus, vocab_size=floor(corpus) + m, byte_fallback=True)
    m = chars.report["merges_learned"]
    bytes_ = fit(corpus, spelling="bytes", vocab_size=256 + m)
    rows = []
    for label, text in ((text_name(s), text_of(s)), ("accented", C.ACCENTED), ("Greek", C.GREEK), ("café", C.CAFE)):
        a, b = chars.encode(text), bytes_.encode(text)
        rows.append([label, len(a), len(b), "yes" if chars.decode(a) == text else "no",
                     "yes" if bytes_.decode(b) == text else "no"])
    c_pieces, b_pieces = chars.report["corpus_pieces_after"], bytes_.report["corpus_pieces_after"]
    differs = [] if b_pieces > c_pieces else [f"the byte fit's corpus is {b_pieces} pieces, the character fit's {c_pieces}"]
    differs += [f"{row[0]} is not glued back exactly by the {'character' if row[3] == 'no' else 'byte'} fit"
                for row in rows if "no" in row[3:]]
    return {"conclusion": conclusion("bpe-bytes", differs),
            "numbers": [["merges", m], ["character rows", chars.vocab_size], ["byte rows", bytes_.vocab_size],
                        ["corpus pieces (characters)", chars.report["corpus_pieces_after"]],
                        ["corpus pieces (bytes)", bytes_.report["corpus_pieces_after"]]],
            "tables": [{"caption": "pieces per text, same number of merges",
                        "columns": ["text", "characters + byte fallback", "bytes", "exact (chars)", "exact (bytes)"],
                        "rows": rows}],
            "pieces": [cut_strip(f"{text_name(s)}, characters + byte fallback", chars, text_of(s)),
                       cut_strip(f"{text_name(s)}, bytes", bytes_, text_of(s), lambda p: "")],
            "note": corpus_note(corpus)}


def _spans_space(tok: Any, row: str) -> bool:
    """The row's text holds a space after its first non-space character: it crosses from one word
    into the next (a byte-level row's leading space is the word's own, as in ``Ġlow``; ``estĠ``,
    a word's end and the space after it, crosses)."""
    return any(c.isspace() for c in tok.decode([tok.piece_to_id(row)]).lstrip())


#: The two-stage widget's recipes: the page's (end marks; stage two reads each text, or the table,
#: as one stream) and SuperBPE's (``preset="superbpe"``: bytes, o200k's pre-split up to the
#: transition t, then the span expression with at most four words to a piece).
RECIPES = (("page", "the page's (end marks, one stream)"), ("superbpe", "SuperBPE (bytes, o200k, spans of ≤ 4 words)"))
BYTES = 256  # SuperBPE's alphabet: the 256 bytes, no [UNK] row
#: the four words as the page's recipe reads the table: each word repeated its count, single spaces
FOUR_TEXT = " ".join(w for w, n in C.FOUR.items() for _ in range(n))


def _two_stage_merges(corpus: Union[str, Mapping[str, int]], stage_one: int, room: int) -> tuple[int, int]:
    """The merges each stage is asked for. On the four words the controls are the page's rows (the
    floor is 12: stage-one size 22 is 10 merges) and rows left (merges). On a larger corpus the
    stage-one size is a share of the merges plain BPE learns to exhaustion, (size - 12) twelfths of
    them, and each row left for stage two is a twenty-fourth of them."""
    if not isinstance(corpus, str):
        return stage_one - 12, room
    total = max(1, ceiling(corpus) - floor(corpus))
    return round(total * (stage_one - 12) / 12), room * max(1, total // 24)


def two_stage_fit(corpus: Union[str, Mapping[str, int]], recipe: str, one: int, two: int) -> tuple[Any, int]:
    """A two-stage fit by ``recipe`` asked for ``one`` stage-one and ``two`` stage-two merges, and
    its transition (rows at which stage one stops)."""
    if recipe == "superbpe":
        t = BYTES + max(one, 1)  # SuperBPE's transition is at least one row past the bytes
        data: Any = [FOUR_TEXT] if not isinstance(corpus, str) else corpus
        if isinstance(corpus, str):
            return fit(corpus, preset="superbpe", vocab_size=t + two, superword_at=t), t
        return cached(("superbpe-four", t, two), lambda: subwords.train(data, preset="superbpe", vocab_size=t + two,
                                                                        superword_at=t)), t
    base = 12 if not isinstance(corpus, str) else floor(corpus)
    return fit(corpus, vocab_size=base + one + two, superword_at=base + one), base + one


def _stage_two(tok: Any) -> tuple[int, list[str], list[str]]:
    """Stage one's merges, stage two's rows in merge order, and those of them that span a space."""
    merges, rows, kinds = table_of(tok)
    one = tok.report.get("stage_one_merges", len(merges))
    learned = [r for r, k in zip(rows, kinds) if k == "learned"]
    second = learned[one:] if len(learned) > one else []
    return one, second, [r for r in second if _spans_space(tok, r)]


@widget("bpe-two-stage", "bpe", 6, "Two-stage (superword) BPE: the page's recipe and SuperBPE's",
        rng("stage_one", "stage-one size", 22, 12, 24), rng("room", "rows left for stage two", 3, 1, 8),
        sel("recipe", "recipe", "page", *RECIPES),
        sel("corpus", "corpus", "four", ("four", "the four words"), *C.BUILT_IN_LARGE.items()),
        large=True, text=True, models=False)
def bpe_two_stage(s: State) -> Result:
    name = s["corpus"]
    corpus: Union[str, Mapping[str, int]] = C.FOUR if name == "four" else name
    asked = _two_stage_merges(corpus, s["stage_one"], s["room"])
    text, what = text_of(s), text_name(s)
    both = {}
    for recipe, label in RECIPES:
        tok, t = two_stage_fit(corpus, recipe, *asked)
        one, second, spanning = cached(("two-stage", _key(corpus), recipe, asked), lambda: _stage_two(tok))
        both[recipe] = (tok, t, one, second, spanning, label)
    tok, t, one, second, spanning, _ = both[s["recipe"]]
    marks = set(spanning)
    kind = (lambda p: "span" if p in marks else kind_of(p, tok))
    shown = cut_strip(f"{what}, {'SuperBPE' if s['recipe'] == 'superbpe' else 'the page’s recipe'}", tok, text, kind)
    compared = []
    for recipe, (k, kt, kone, ksecond, kspan, label) in both.items():
        n = shown["total"] if k is tok else len(k.encode(text))
        compared.append([label.split(" (")[0], kt, kone, len(ksecond), len(kspan), k.report["corpus_pieces_after"], n])
    rows = [[i + 1 + one, r, tok.decode([tok.piece_to_id(r)]).replace(" ", "\u2423"), "yes" if r in marks else "no"]
            for i, r in enumerate(second)]  # the text with its spaces drawn as ␣, as the strips draw them
    all_span, none_span = second and len(spanning) == len(second), second and not spanning
    differs = ([f"all {len(second)} stage-two rows span a space"] if all_span else []) + (
        [f"none of the {len(second)} stage-two rows spans a space"] if none_span else []) + (
        ["stage two learned nothing"] if not second else [])
    numbers: list[list[Any]] = [["transition t (rows)", t], ["stage-one merges", one], ["stage-two merges", len(second)],
                                ["rows spanning a space", len(spanning)], ["rows", tok.vocab_size],
                                ["corpus pieces", tok.report["corpus_pieces_after"]],
                                [f"{what.split()[-1]} pieces", shown["total"]]]
    strips = [shown]
    if name == "four":
        example = "newest newest low low"
        pieces = list(tok.encode_pieces(example))
        strips.insert(0, strip(example, pieces, tok, ["span" if p in marks else "" for p in pieces]))
    if s["recipe"] == "page":
        recipe_note = "The page's recipe: end marks (l o w</w>); stage two reads each text as one stream"
    else:
        recipe_note = ("SuperBPE: bytes (Ġ is the space byte), stage one on o200k's pre-split up to t = 256 bytes + "
                       "the stage-one merges asked, then the span expression with at most four words to a piece")
    if name == "four":
        recipe_note += ("; the four words' table is read as one text, each word its count of times with single "
                        "spaces, by both recipes")
    recipe_note += "."
    sizes = ("Sizes: stage one asked for {0} merges, stage two for {1}, the same for both recipes.".format(*asked))
    if name != "four":
        sizes += (" On this corpus the stage-one size is (size − 12) twelfths of the merges plain BPE learns to "
                  "exhaustion, and each row left a twenty-fourth of them.")
    return {"conclusion": conclusion("bpe-two-stage", differs),
            "numbers": numbers,
            "tables": [{"caption": f"rows learned after the transition at t = {t} rows (stage one: {one} merges)",
                        "columns": ["merge", "row", "text (␣ a space)", "spans a space"], "rows": rows,
                        "highlight": [i for i, r in enumerate(second) if r in marks]},
                       {"caption": "both recipes at these sizes", "columns":
                        ["recipe", "t", "stage-one merges", "stage-two merges", "spanning a space", "corpus pieces",
                         f"{what.split()[-1]} pieces"], "rows": compared,
                        "highlight": [0 if s["recipe"] == "page" else 1]}],
            "pieces": strips,
            "note": " ".join(x for x in (recipe_note, sizes, "" if name == "four" else corpus_note(name)) if x)}


@widget("bpe-joints", "bpe", 7, "Joints: undo / untie / redo / retie",
        rng("size", "rows asked", 30, 10, 40), sel("word", "word", "undo", *[(w, w) for w in C.UNDO]), text=True)
def bpe_joints(s: State) -> Result:
    free = fit(C.UNDO, vocab_size=s["size"])
    cut = fit(C.UNDO, vocab_size=s["size"], joints=C.JOINTS)
    w = s["word"]
    return {"numbers": [["rows without joints", free.vocab_size], ["pieces without joints", free.count_pieces(C.UNDO)],
                        ["rows with joints", cut.vocab_size], ["pieces with joints", cut.count_pieces(C.UNDO)]],
            "pieces": [strip(f"{w} without joints", free.encode_pieces(w), free),
                       strip(f"{w} with joints", cut.encode_pieces(w), cut),
                       cut_strip(f"{text_name(s)} without joints", free, text_of(s)),
                       cut_strip(f"{text_name(s)} with joints", cut, text_of(s))],
            "tables": [{"caption": "merges", "columns": ["#", "without joints", "with joints"],
                        "rows": [[i + 1, pair_text(a) if a else "", pair_text(b) if b else ""]
                                 for i, (a, b) in enumerate(itertools.zip_longest(free.merges, cut.merges))]}],
            "note": "undo, untie, redo, retie, ten times each; joints un|do, un|tie, re|do, re|tie."}


def _four_units(spelling: str = "end", mark: Optional[str] = None) -> dict[tuple[str, ...], int]:
    sp = make_spelling(spelling, mark=mark) if mark else make_spelling(spelling)
    return {tuple(sp.units(w)[0]): c for w, c in C.FOUR.items()}


def merge_trace(corpus: Mapping[str, int], **options: Any) -> "measure.MergeTrace":
    """:func:`subwords.measure.trace` of a BPE or WordPiece run (a merge trace)."""
    t = measure.trace(corpus, **options)
    if not isinstance(t, measure.MergeTrace):
        raise ExploreError("a merge walk needs model='bpe' or 'wordpiece'")
    return t


def tie_branch(picks: Mapping[int, int], vocab_size: int = 22, spelling: str = "end") -> Any:
    """The engine's trace of the four words (:func:`subwords.measure.trace`, ties listed) on the
    branch that takes, at each step given, the tied candidate of the index given (the tie rule's
    own choice is index 0; an index past the candidates keeps it)."""
    def run() -> Any:
        forced: dict[int, tuple[str, str]] = {}
        for step in sorted(picks):
            i = picks[step]
            if i <= 0:
                continue
            walked = merge_trace(C.FOUR, ties=True, forced=forced, vocab_size=vocab_size, spelling=spelling)
            if step <= len(walked.steps) and i < len(walked.steps[step - 1].ties):
                forced[step] = walked.steps[step - 1].ties[i]
        return merge_trace(C.FOUR, ties=True, forced=forced, vocab_size=vocab_size, spelling=spelling)
    return cached(("branch", tuple(sorted(picks.items())), vocab_size, spelling), run)


def _learned(tok: Any) -> list[str]:
    return [r for r, k in zip(tok.rows, tok.kinds) if k == "learned"]


@widget("bpe-ties", "bpe", 8, "Ties: pick a branch; greedy against optimal",
        sel("first", "branch at merge 1", 1, (0, "e + s (the tie rule)"), (1, "s + t</w>")),
        sel("fourth", "branch at merge 4", 0, (0, "first candidate (the tie rule)"), (1, "second candidate"),
            (2, "third candidate")),
        rng("rts", "merges on report/taste/state", 2, 1, 4), text=True)
def bpe_ties(s: State) -> Result:
    default = tie_branch({})
    branch = tie_branch({1: s["first"], 4: s["fourth"]})
    tok = branch.tokenizer
    ties = [[st.step, st.count, ", ".join(pair_text(t) for t in st.ties), pair_text((st.left, st.right))]
            for st in branch.tie_points()]
    shared = len(set(_learned(default.tokenizer)) & set(_learned(tok)))
    k = s["rts"]
    greedy_lengths = merge_trace(C.RTS, ties=False, vocab_size=10 + k).corpus_lengths()
    gap = cached(("optimal", k), lambda: measure.greedy_vs_optimal(C.RTS, k))[-1]
    best, sequences = gap.optimal, gap.optimal_merges
    return {"numbers": [["corpus pieces on this branch", tok.report["corpus_pieces_after"]],
                        ["rows shared with the default branch", f"{shared} of {len(_learned(tok))}"],
                        ["lowest", " ".join(tok.encode_pieces("lowest"))],
                        ["report/taste/state greedy", " → ".join(str(n) for n in greedy_lengths)],
                        ["optimal", best]],
            "pieces": [cut_strip(f"{text_name(s)} on this branch", tok, text_of(s))],
            "tables": [{"caption": "the ties met on this branch", "columns": ["merge", "count", "tied candidates", "taken"],
                        "rows": ties},
                       {"caption": f"optimal sequences of {k} merges on report/taste/state",
                        "columns": ["sequence", "pieces"],
                        "rows": [[", ".join(pair_text(p) for p in seq), best] for seq in sequences[:8]]}],
            "note": "Four words (the engine's trace, with the tie forced where a branch is picked); "
                    "report 2, taste 8, state 10."}


# ================================================================================================
# Unigram page (002_…)


def seed_table() -> Any:
    return fit(C.FOUR, model="unigram", vocab_size=10**6, em_rounds=0)


UNIGRAM_WORDS = ("lowest", "lower", "newest", "widest")


@widget("uni-spellings", "unigram", 1, "Every spelling of a word with its share",
        sel("word", "word", "lowest", *[(w, w) for w in UNIGRAM_WORDS]))
def uni_spellings(s: State) -> Result:
    word = s["word"]
    seed = seed_table()
    bpe_cut = " ".join(fit(C.FOUR, vocab_size=22).encode_pieces(word))
    spellings = seed.spellings(word)
    rows, rank = [], None
    for i, (pieces, share) in enumerate(spellings):
        text = " ".join(pieces)
        if text == bpe_cut:
            rank = i
        rows.append([i + 1, text, f"{100 * share:.2f}%"])
    numbers: list[list[Any]] = [["candidates in the table", seed.report["seed_size"]],
                                ["spellings", len(spellings)], ["likeliest", " ".join(spellings[0][0])],
                                ["its share", f"{100 * spellings[0][1]:.2f}%"], ["BPE cut (22 rows)", bpe_cut]]
    if rank is not None:
        numbers.append(["BPE cut's rank", f"{rank + 1} of {len(spellings)} at {100 * spellings[rank][1]:.2f}%"])
    # exact ties: the library ranks tied spellings by the tie rule and gives them equal shares
    ties = [f"{' '.join(a[0])} = {' '.join(b[0])} at {100 * a[1]:.2f}%"
            for a, b in zip(spellings[:6], spellings[1:6]) if a[1] == b[1] and a[1] > 0]
    numbers.append(["tied exactly", "; ".join(ties) or "none among the first six"])
    return {"numbers": numbers,
            "tables": [{"caption": "spellings under the starting table, by share", "columns": ["rank", "spelling", "share"],
                        "rows": rows, "highlight": [rank] if rank is not None else []}],
            "charts": [{"kind": "bar", "title": "share of each spelling", "x": "rank", "y": "share (%)",
                        "selected": [[rank + 1, f"BPE's cut ({100 * spellings[rank][1]:.2f}%)"]] if rank is not None else [],
                        "series": [{"name": "share", "points": [[i + 1, round(100 * sh, 4), " ".join(p)]
                                                                 for i, (p, sh) in enumerate(spellings)]}]}],
            "note": "The starting table of the four words: every substring, counted (49 candidates)."}


@widget("uni-lattice", "unigram", 2, "The lattice: positions, arcs and walks",
        sel("word", "word", "lowest", *[(w, w) for w in UNIGRAM_WORDS + ("low",)]))
def uni_lattice(s: State) -> Result:
    seed = seed_table()
    arcs = seed.lattice(s["word"])
    n = max(j for _, j, _, _ in arcs)
    best = seed.nbest(s["word"], 1)[0]
    return {"numbers": [["positions", n + 1], ["arcs", len(arcs)], ["walks", len(seed.spellings(s["word"]))],
                        ["best walk", " ".join(best[0])], ["its score", f"{best[1]:.2f}"]],
            "charts": [{"kind": "lattice", "title": f"the lattice of {s['word']}", "x": "position", "y": "",
                        "series": [{"name": "arcs", "points": [[i, j, p, round(lp, 4)] for i, j, p, lp in arcs]},
                                   {"name": "best", "points": _walk(best[0], arcs)}]}],
            "tables": [{"caption": "arcs", "columns": ["from", "to", "piece", "log p"],
                        "rows": [[i, j, p, f"{lp:.3f}"] for i, j, p, lp in arcs]}],
            "note": "The starting table of the four words."}


def _walk(pieces: Sequence[str], arcs: Sequence[tuple[int, int, str, float]]) -> list[list[Any]]:
    out, at = [], 0
    for p in pieces:
        for i, j, q, _ in arcs:
            if i == at and q == p:
                out.append([i, j, p])
                at = j
                break
    return out


@widget("uni-em", "unigram", 3, "EM, one round at a time",
        sel("corpus", "corpus", "four", ("ab", "ab (one word, once)"), ("four", "the four words")),
        rng("rounds", "EM rounds", 2, 0, 6))
def uni_em(s: State) -> Result:
    table = C.AB if s["corpus"] == "ab" else C.FOUR
    k = s["rounds"]
    toks = [fit(table, model="unigram", vocab_size=10**6, em_rounds=r) for r in range(k + 1)]
    probs = [{r: math.exp(lp) for r, lp in zip(t.rows, t.log_probs) if lp is not None} for t in toks]
    if s["corpus"] == "ab":
        watch = ["ab</w>", "a", "b</w>"]
        word = "ab"
    else:
        watch = ["low</w>", "lo", "newest</w>", "est</w>"]
        word = "lowest"
    best = [t.nbest(word, 1)[0] for t in toks]
    rows = [[r] + [_p(probs[r].get(p, 0.0)) for p in watch] + [" ".join(best[r][0]), f"{best[r][1]:.2f}",
                                                                 f"{toks[r].report['log_likelihood']:.2f}"]
            for r in range(k + 1)]
    numbers: list[list[Any]] = [["rounds", k]] + [[f"p({p})", _p(probs[k].get(p, 0.0))] for p in watch]
    numbers.append([f"best spelling of {word}", f"{' '.join(best[k][0])} at {best[k][1]:.2f}"])
    return {"numbers": numbers,
            "tables": [{"caption": "round by round", "columns": ["round"] + [f"p({p})" for p in watch] +
                        [f"best {word}", "score", "log-likelihood"], "rows": rows, "highlight": [k]}],
            "charts": [{"kind": "line", "title": "probabilities by round", "x": "round", "y": "p",
                        "series": [{"name": p, "points": [[r, probs[r].get(p, 0.0)] for r in range(k + 1)]} for p in watch]}],
            "note": "ab: the pieces a, b and ab, each a third at the start." if s["corpus"] == "ab"
                    else "The four words; no pruning (the size asked is above the seed)."}


def _p(x: float) -> str:
    if x == 0:
        return "0"
    return f"{x:.3f}" if x >= 0.001 else f"{x:.3g}"


@widget("uni-losses", "unigram", 4, "Pruning losses",
        rng("rounds", "EM rounds before pricing", 2, 0, 6), box("zeros", "list the zero-loss pieces", False))
def uni_losses(s: State) -> Result:
    table = fit(C.FOUR, model="unigram", vocab_size=10**6, em_rounds=s["rounds"])
    loss = cached(("losses", s["rounds"]), lambda: table.losses(C.FOUR))
    ranked = sorted(loss.items(), key=lambda kv: (-kv[1], kv[0]))
    nonzero = [(p, v) for p, v in ranked if v != 0.0]
    zero = [p for p, v in ranked if v == 0.0]
    out: Result = {"numbers": [["pieces priced", len(loss)], ["exactly zero", f"{len(zero)} of {len(loss)}"]] +
                   [[f"loss({p})", f"{v:.2f}"] for p, v in nonzero[:6]],
                   "charts": [{"kind": "bar", "title": "loss of each piece (nats)", "x": "piece", "y": "loss",
                               "series": [{"name": "loss", "points": [[i + 1, round(v, 4), p] for i, (p, v) in enumerate(ranked)]}]}],
                   "note": "The four words' starting table after the EM rounds asked; single symbols are never priced."}
    if s["zeros"]:
        out["tables"] = [{"caption": "pieces at exactly zero, in the order pruning takes them (text ascending)",
                          "columns": ["piece"], "rows": [[p] for p in zero]}]
    return out


@widget("uni-rounds", "unigram", 5, "The pruning rounds",
        rng("size", "rows asked", 16, 12, 49),
        sel("shrink", "share kept per round", 0.75, (0.5, "1/2"), (0.75, "3/4"), (0.9, "9/10")), text=True)
def uni_rounds(s: State) -> Result:
    tok = fit(C.FOUR, model="unigram", vocab_size=s["size"], shrink=s["shrink"])
    rounds = tok.report["rounds"]
    return {"numbers": [["rows asked", s["size"]], ["rounds", " → ".join(map(str, rounds))],
                        ["rows", tok.vocab_size], ["corpus pieces", tok.report["corpus_pieces_after"]]],
            "pieces": [cut_strip(text_name(s), tok, text_of(s))],
            "charts": [{"kind": "bar", "title": "pieces kept after each round (without [UNK])", "x": "round", "y": "pieces",
                        "selected": [[len(rounds) - 1, f"last round: {rounds[-1]}"]],
                        "series": [{"name": "pieces", "points": [[i, n, f"round {i}: {n}"] for i, n in enumerate(rounds)]}]}],
            "tables": [{"caption": "the rows kept, with their log probability (single characters stay so that any word "
                                   "can be spelled; a log p far below zero means the model all but never uses one)",
                        "columns": ["row", "log p"],
                        "rows": [[r, f"{lp:.4g}"] for r, lp in zip(tok.rows, tok.log_probs) if lp is not None]}],
            "note": "The four words."}


def matched_curves(corpus: str, sizes: Sequence[int]) -> dict[str, list[dict[str, int]]]:
    """BPE and Unigram at the same sizes on one corpus: :func:`subwords.measure.matched`."""
    points = measure.matched(_data(corpus), sizes, "bpe-unigram", heldout=[C.SENTENCE])
    return {"bpe": [_curve_row(p.a) for p in points], "unigram": [_curve_row(p.b) for p in points]}


def _matched_sizes(corpus: str, upto: int = 100) -> list[int]:
    """Fourteen sizes from the floor both learners can fit to ``upto`` percent of the way to
    BPE's ceiling (a large corpus's Unigram curve is one training per size: a lower top is faster)."""
    lo = max(floor(corpus), floor(corpus, model="unigram"))  # both learners must be able to fit the smallest
    hi = max(lo, ceiling(corpus))
    return sizes_between(lo, lo + (hi - lo) * upto // 100, 14)


@widget("uni-vs-bpe", "unigram", 6, "BPE against Unigram at matched sizes",
        sel("corpus", "corpus", C.OURS, *C.BUILT_IN_LARGE.items()),
        sel("measure", "measured on", "corpus", ("corpus", "the corpus"), ("held_out", "the held-out sentence")),
        sel("upto", "largest size", 100, (100, "BPE's ceiling"), (50, "half way to it"), (20, "a fifth of the way")),
        large=True)
def uni_vs_bpe(s: State) -> Result:
    corpus, what = s["corpus"], s["measure"]
    sizes = _matched_sizes(corpus, s["upto"])
    curves = cached(("matched", token(corpus), tuple(sizes)), lambda: matched_curves(corpus, sizes))
    last_b, last_u = curves["bpe"][-1], curves["unigram"][-1]
    above = [(b, u) for b, u in zip(curves["bpe"], curves["unigram"]) if b["asked"] > sizes[0]]
    not_shorter = [b["asked"] for b, u in above if u["corpus"] >= b["corpus"]]
    not_longer = [b["asked"] for b, u in above if u["held_out"] <= b["held_out"]]
    differs = ([f"Unigram's corpus not shorter at {_sizes(not_shorter)} rows"] if not_shorter else []) + (
        [f"Unigram's sentence not longer at {_sizes(not_longer)} rows"] if not_longer else [])
    return {"conclusion": conclusion("uni-vs-bpe", differs),
            "numbers": [["sizes", len(sizes)], ["largest size", sizes[-1]],
                        [f"BPE at {sizes[-1]}", last_b[what]], [f"Unigram at {sizes[-1]}", last_u[what]]],
            "charts": [{"kind": "line", "title": f"pieces on {'the corpus' if what == 'corpus' else 'the held-out sentence'}",
                        "x": "rows asked", "y": "pieces",
                        "series": [{"name": name, "points": [[p["asked"], p[what]] for p in curves[name]]}
                                   for name in ("bpe", "unigram")]}],
            "tables": [{"caption": "pieces at each size", "columns": ["rows asked", "BPE corpus", "Unigram corpus",
                                                                      "BPE sentence", "Unigram sentence"],
                        "rows": [[b["asked"], b["corpus"], u["corpus"], b["held_out"], u["held_out"]]
                                 for b, u in zip(curves["bpe"], curves["unigram"])]}],
            "note": corpus_note(corpus)}


@widget("uni-pieces", "unigram", 7, "The two vocabularies' pieces side by side",
        sel("corpus", "corpus", C.OURS, *C.BUILT_IN_LARGE.items()),
        sel("at", "size", "middle", ("floor", "the smallest"), ("middle", "a middle size"), ("ceiling", "the largest")),
        large=True, text=True)
def uni_pieces(s: State) -> Result:
    corpus = s["corpus"]
    lo = max(floor(corpus), floor(corpus, model="unigram"))  # both learners must be able to fit it
    hi = max(lo, ceiling(corpus))
    size = {"floor": lo, "middle": (lo + hi) // 2, "ceiling": hi}[s["at"]]
    b = fit(corpus, vocab_size=size)
    u = fit(corpus, model="unigram", vocab_size=size)
    bs, us = cut_strip(f"{text_name(s)}, BPE", b, text_of(s)), cut_strip(f"{text_name(s)}, Unigram", u, text_of(s))
    bp, up = range(bs["total"]), range(us["total"])

    def derive() -> tuple[int, int, list[str], list[str]]:  # once per fit: typing asks again at every pause
        learned_b = [r for r, k in zip(b.rows, b.kinds) if k == "learned"]
        learned_u = [r for r, k in zip(u.rows, u.kinds) if k == "learned"]
        return (sum(r.endswith("</w>") for r in learned_b), sum(r.endswith("</w>") for r in learned_u),
                learned_b[:40], learned_u[:40])
    words_b, words_u, learned_b, learned_u = cached(("uni-pieces", token(corpus), size), derive)
    what = text_name(s).split()[-1]
    differs = [] if words_u > words_b or (words_u == words_b == 0 and size == lo) else [
        f"at {size} rows Unigram holds {words_u} rows that end a word, BPE {words_b}"]
    return {"conclusion": conclusion("uni-pieces", differs),
            "numbers": [["rows asked", size], [f"BPE {what} pieces", len(bp)], [f"Unigram {what} pieces", len(up)],
                        ["BPE learned rows ending a word", words_b], ["Unigram learned rows ending a word", words_u]],
            "pieces": [bs, us],
            "tables": [{"caption": "the first 40 learned rows of each (BPE in merge order, Unigram by probability)",
                        "columns": ["#", "BPE", "Unigram"],
                        "rows": [[i + 1, x or "", y or ""]
                                 for i, (x, y) in enumerate(itertools.zip_longest(learned_b[:40], learned_u[:40]))]}],
            "note": corpus_note(corpus)}


# ================================================================================================
# WordPiece page (003_…)

# A corpus with the page's properties for its marking section (tests/pages/test_pages_wordpiece.py
# builds the same one): the running sentence's other words, z only inside a word, y and u only
# inside.
MARKING = {"Dr.": 2, "didn't": 1, "expect": 2, "the": 4, "low-cost": 1, "re-analysis.": 1,
           "Analysis": 1, "hazard": 2, "above": 1, "data": 2, "found": 1, "herb": 1}


def _wp_table(name: str) -> Union[str, Mapping[str, int]]:
    return C.FOUR if name == "four" else name


def _candidates(name: str) -> list[Any]:
    def make() -> list[Any]:
        if name == "four":
            return wordpiece_candidates(C.FOUR)
        counts: dict[str, int] = {}
        for line in large_corpus(name):
            for w in line.split():
                counts[w] = counts.get(w, 0) + 1
        return wordpiece_candidates(counts)
    return cast("list[Any]", cached(("wpc", token(name)), make))


@widget("wp-scatter", "wordpiece", 1, "Count against score for every candidate pair",
        sel("corpus", "corpus", "four", ("four", "the four words"), *C.BUILT_IN_LARGE.items()),
        sel("table", "list by", "count", ("count", "count"), ("score", "score")), large=True)
def wp_scatter(s: State) -> Result:
    rows = [r for r in _candidates(s["corpus"]) if r.count >= 2]  # the learner's candidates (min count 2)
    if not rows:
        raise ExploreError("this corpus has no candidate pair; give a corpus with words of two letters or more")
    top_count = min(rows, key=lambda r: (-r.count, r.left, r.right))  # the count rule's winner
    by_score = rows  # already in the learner's order
    rank = by_score.index(top_count) + 1
    by_count = sorted(rows, key=lambda r: (-r.count, r.left, r.right))
    top_score = by_score[0]
    count_rank = 1 + sum(r.count > top_score.count for r in rows)
    differs = ([f"the commonest pair ranks first by score too"] if rank == 1 else []) + (
        [f"the best score goes to a pair of the highest count"] if count_rank == 1 else [])
    return {"conclusion": conclusion("wp-scatter", differs),
            "numbers": [["candidates", len(rows)],
                        ["commonest", f"{top_count.left} {top_count.right} at {top_count.count}, score rank {rank}"],
                        ["best score", f"{top_score.left} {top_score.right} = {top_score.score}, "
                                       f"{top_score.count} times, count rank {count_rank}"]],
            "charts": [{"kind": "scatter", "title": "count (across) against score (up)", "x": "count", "y": "score",
                        "logx": s["corpus"] != "four", "logy": s["corpus"] != "four",
                        "series": [{"name": "pairs", "points": [[r.count, float(r.score), f"{r.left} {r.right}"] for r in rows]}]}],
            "tables": [{"caption": f"candidates by {s['table']}", "columns": ["pair", "count", "score"],
                        "rows": [[f"{r.left} {r.right}", r.count, str(r.score)]
                                 for r in (by_count if s["table"] == "count" else by_score)[:15]]}],
            "note": "The four words (continuation spelling)." if s["corpus"] == "four" else corpus_note(s["corpus"])}


@widget("wp-scores", "wordpiece", 2, "The four words' scores",
        sel("order", "order by", "score", ("score", "score"), ("count", "count")))
def wp_scores(s: State) -> Result:
    rows = list(_candidates("four"))
    if s["order"] == "count":  # the count rule's order: count, then the smaller (left, right)
        rows = sorted(rows, key=lambda r: (-r.count, r.left, r.right))
    table = [[i + 1, f"{r.left} {r.right}", r.count, f"{r.count} / ({_sym(r.left)} × {_sym(r.right)})", str(r.score),
              f"{float(r.score):.4f}", f"{r.gain:.2f}"] for i, r in enumerate(rows)]
    best_gain = max(rows, key=lambda r: r.gain)
    es = next(r for r in rows if (r.left, r.right) == ("##e", "##s"))
    id_ = next(r for r in rows if (r.left, r.right) == ("##i", "##d"))
    return {"numbers": [["score(e, s)", f"{es.score} ≈ {float(es.score):.4f}"],
                        ["score(i, d)", f"{id_.score} ≈ {float(id_.score):.4f}"],
                        ["first by " + s["order"], f"{rows[0].left} {rows[0].right}"],
                        ["largest total gain", f"{best_gain.left} {best_gain.right} at {best_gain.gain:.2f}"]],
            "tables": [{"caption": f"the eleven pairs by {s['order']}",
                        "columns": ["#", "pair", "count", "count / (count(a) × count(b))", "score", "≈",
                                    "total gain count × log(N × score)"], "rows": table,
                        "highlight": [rows.index(es), rows.index(id_)]}],
            "note": "The four words: l ##o ##w, ... (symbol counts taken everywhere)."}


def _sym(symbol: str) -> int:
    table = cached(("symcounts",), lambda: _symbol_counts())
    return int(table[symbol])


def _symbol_counts() -> dict[str, int]:
    sp = make_spelling("continuation")
    out: dict[str, int] = {}
    for w, c in C.FOUR.items():
        for sym in sp.units(w)[0]:
            key = sp.show(sym)
            out[key] = out.get(key, 0) + c
    return out


@widget("wp-runs", "wordpiece", 3, "The count run and the score run, step by step",
        rng("step", "merges", 1, 0, 12),
        sel("minimum", "minimum pair count", "2-filter", ("2-filter", "2, filtering the candidates"),
            ("3-filter", "3, filtering the candidates"), ("3-stop", "3, testing the winner and stopping")), text=True)
def wp_runs(s: State) -> Result:
    k = s["step"]
    least, rule = int(s["minimum"][0]), s["minimum"][2:]
    count = fit(C.FOUR, model="bpe", spelling="continuation", vocab_size=12 + k, min_count=least)
    score = fit(C.FOUR, model="wordpiece", vocab_size=12 + k, min_count=least, min_count_rule=rule)
    rows = [[i + 1, pair_text(a) if a else "", pair_text(b) if b else ""]
            for i, (a, b) in enumerate(itertools.zip_longest(count.merges, score.merges))]
    return {"numbers": [["merges", k], ["count run: corpus pieces", count.report["corpus_pieces_after"]],
                        ["score run: corpus pieces", score.report["corpus_pieces_after"]],
                        ["count run's merge", pair_text(count.merges[-1]) if k else "none"],
                        ["score run's merge", pair_text(score.merges[-1]) if score.merges and k else "none"],
                        ["pairs the minimum admits at the start",
                         f"{sum(r.count >= least for r in _candidates('four'))} of {len(_candidates('four'))}"],
                        ["score run: merges learned", score.report["merges_learned"]],
                        ["score run: stop", score.report["stop"]]],
            "tables": [{"caption": "both runs", "columns": ["#", "count", "score"], "rows": rows,
                        "highlight": [k - 1] if k else []}],
            "pieces": [strip(f"{w}, score run", score.encode_pieces(w), score) for w in ("lowest", "widest")] +
                      [cut_strip(f"{text_name(s)}, count run", count, text_of(s), _marked_kind),
                       cut_strip(f"{text_name(s)}, score run", score, text_of(s), _marked_kind)],
            "note": "The four words, continuation spelling, the same number of merges asked of both."}


def _marked(pieces: Sequence[str]) -> list[str]:
    return ["" if not p.startswith("##") else "marker" for p in pieces]


def _plain_kind(piece: str) -> str:
    return kind_of(piece, None)


def _marked_kind(piece: str) -> str:
    return "unk" if piece == "[UNK]" else "marker" if piece.startswith("##") else ""


@widget("wp-sizes", "wordpiece", 4, "The sentence cut at four sizes",
        sel("corpus", "corpus", C.OURS, *C.BUILT_IN_LARGE.items()),
        box("marks", "highlight the ## marks", True), large=True, text=True)
def wp_sizes(s: State) -> Result:
    corpus = s["corpus"]
    lo, hi = floor(corpus, model="wordpiece"), ceiling(corpus, model="wordpiece")
    sizes = sizes_between(lo, hi, 4)
    strips, rows, differs = [], [], []
    for size in sizes:
        tok = fit(corpus, model="wordpiece", vocab_size=size)
        shown = cut_strip(f"{text_name(s)} at {tok.vocab_size} rows", tok, text_of(s),
                          _marked_kind if s["marks"] else _plain_kind)
        strips.append(shown)
        pieces = list(tok.encode_pieces(text_of(s))) if shown["total"] > DRAWN else [p[0] for p in shown["pieces"]]
        unmarked = sum(not p.startswith("##") for p in pieces)
        rows.append([tok.vocab_size, len(pieces), unmarked])
        starts = [i for i, p in enumerate(pieces) if not p.startswith("##")]
        if unmarked != len(text_of(s).split()) or (pieces and starts[:1] != [0]):
            differs.append(f"at {tok.vocab_size} rows {unmarked} unmarked pieces for {len(text_of(s).split())} words")
    return {"conclusion": conclusion("wp-sizes", differs),
            "numbers": [["sizes", ", ".join(map(str, sizes))], ["pieces at the largest", rows[-1][1]],
                        ["words", len(text_of(s).split())], ["unmarked pieces at the largest", rows[-1][2]]],
            "pieces": strips,
            "tables": [{"caption": "one unmarked piece per word, always the first" if text_of(s) == C.SENTENCE
                        else "unmarked pieces: one per word unless a character is [UNK]", "columns": ["rows", "pieces", "unmarked"],
                        "rows": rows}],
            "note": corpus_note(corpus)}


@widget("wp-open-end", "wordpiece", 5, "Characters that never open a word, and never end one",
        sel("corpus", "corpus", "marking", ("marking", "the running sentence's words + hazard, herb, ..."),
            *C.BUILT_IN_LARGE.items()),
        sel("word", "word", "Alvarez", ("Alvarez", "Alvarez"), ("zebra", "zebra"), ("you", "you")), large=True, text=True)
def wp_open_end(s: State) -> Result:
    corpus: Union[str, Mapping[str, int]] = MARKING if s["corpus"] == "marking" else s["corpus"]
    cont = fit(corpus, model="wordpiece", vocab_size=floor(corpus, model="wordpiece"))
    end = fit(corpus, model="wordpiece", spelling="end", vocab_size=floor(corpus, model="wordpiece", spelling="end"))
    alpha_c = [r for r, k in zip(*table_of(cont)[1:]) if k == "alphabet"]
    alpha_e = [r for r, k in zip(*table_of(end)[1:]) if k == "alphabet"]
    chars = sorted({r[2:] if r.startswith("##") else r for r in alpha_c})
    opens = {r for r in alpha_c if not r.startswith("##")}
    ends = {r[:-4] for r in alpha_e if r.endswith("</w>")}
    never_open = [c for c in chars if c not in opens]
    never_end = [c for c in chars if c not in ends]
    w = s["word"]
    pc, pe = list(cont.encode_pieces(w)), list(end.encode_pieces(w))
    differs = []
    for word, spelled in (("Alvarez", (True, False)), ("zebra", (False, True)), ("you", (False, False))):
        got = ("[UNK]" not in cont.encode_pieces(word), "[UNK]" not in end.encode_pieces(word))
        if got != spelled:
            differs.append(f"{word} is {'spelled' if got[0] else 'refused'} under continuation marks and "
                           f"{'spelled' if got[1] else 'refused'} under end marks")
    return {"conclusion": conclusion("wp-open-end", differs),
            "numbers": [["characters", len(chars)], ["never open a word", len(never_open)],
                        ["never end one", len(never_end)],
                        [f"{w}, continuation marks", "refused ([UNK])" if pc == ["[UNK]"] else n_pieces(len(pc))],
                        [f"{w}, end marks", "refused ([UNK])" if "[UNK]" in pe else n_pieces(len(pe))]],
            "tables": [{"caption": "the characters", "columns": ["character", "opens a word", "ends a word"],
                        "rows": [[c, "yes" if c in opens else "never", "yes" if c in ends else "never"] for c in chars]}],
            "pieces": [strip(f"{w} under continuation marks", pc, cont), strip(f"{w} under end marks", pe, end),
                       cut_strip(f"{text_name(s)} under continuation marks", cont, text_of(s)),
                       cut_strip(f"{text_name(s)} under end marks", end, text_of(s))],
            "note": "A corpus built with the page's properties (no word starts or ends in z, y, u)"
                    if s["corpus"] == "marking" else corpus_note(s["corpus"])}


def budget_curve(corpus: Union[str, Mapping[str, int]], budgets: Sequence[int]) -> dict[str, list[list[int]]]:
    """Merges learned and corpus pieces per merge budget under the count rule (BPE, continuation
    marks) and the score rule (WordPiece): :func:`subwords.measure.curve`, one training each."""
    base = floor(corpus, model="wordpiece")
    sizes = [base + m for m in budgets]
    out: dict[str, list[list[int]]] = {}
    for name, options in (("count", {"model": "bpe", "spelling": "continuation"}), ("score", {"model": "wordpiece"})):
        points = measure.curve(_data(corpus), sizes, progress=_curve_progress(corpus), **options)
        out[name] = [[p.merges or 0, p.corpus_pieces] for p in points]  # merges: never None for a merge learner
    return out


@widget("wp-lengths", "wordpiece", 6, "Length per merge budget for both rules",
        sel("corpus", "corpus", "four", ("four", "the four words"), *C.BUILT_IN_LARGE.items()),
        rng("at", "budget shown (of 12)", 10, 1, 12), large=True)
def wp_lengths(s: State) -> Result:
    name = s["corpus"]
    corpus = _wp_table(name)
    if name == "four":
        budgets = list(range(0, 13))
    else:
        top = ceiling(corpus, model="wordpiece") - floor(corpus, model="wordpiece")
        budgets = sorted({round(top * k / 12) for k in range(13)})
    curves = cached(("budget", token(name), tuple(budgets)), lambda: budget_curve(corpus, budgets))
    i = min(s["at"], len(budgets) - 1)
    # x is the budget asked: a rule that runs out of pairs before the budget learns fewer merges
    # (its own count is in the readouts), and its curve stays flat from there
    learned = {rule: curves[rule][i][0] for rule in ("count", "score")}
    not_longer = [b for b, c, w in zip(budgets, curves["count"], curves["score"]) if b > 0 and w[1] <= c[1]]
    return {"conclusion": conclusion("wp-lengths", [f"not longer at budgets {_sizes(not_longer)}"] if not_longer else []),
            "numbers": [["merge budget", budgets[i]], ["count rule: pieces", curves["count"][i][1]],
                        ["score rule: pieces", curves["score"][i][1]],
                        ["merges learned (count / score rule)", f"{learned['count']} / {learned['score']}"]],
            "charts": [{"kind": "line", "title": "corpus pieces per merge budget", "x": "merge budget", "y": "corpus pieces",
                        "series": [{"name": "count rule", "points": [[b, c[1]] for b, c in zip(budgets, curves["count"])]},
                                   {"name": "score rule", "points": [[b, w[1]] for b, w in zip(budgets, curves["score"])]}],
                        "vlines": [[budgets[i], "shown", True]]}],
            "tables": [{"caption": "corpus pieces, and the merges each rule learned (fewer than the budget once it runs "
                                   "out of pairs)",
                        "columns": ["budget", "count rule", "score rule", "learned: count / score"],
                        "rows": [[b, c[1], w[1], f"{c[0]} / {w[0]}"] for b, c, w in zip(budgets, curves["count"], curves["score"])],
                        "highlight": [i]}],
            "note": "The four words, continuation spelling." if name == "four" else corpus_note(name)}


# ================================================================================================
# SentencePiece page (004_…)

NORMALIZATION_ROWS = ["hello  world", " hello world ", "hello\tworld", "hello \u2581 world"]


@widget("sp-stream", "sentencepiece", 1, "Text → ▁ stream → units",
        sel("example", "text", "sentence", ("sentence", "the text box (the sentence until you type)"),
            ("spaces", "hello  world"), ("greek", C.GREEK)), text=True)
def sp_stream(s: State) -> Result:
    text = {"sentence": text_of(s), "spaces": "hello  world", "greek": C.GREEK}[s["example"]]
    corpus = {**C.STAND_IN, "hello": 1, "world": 1, **{w: 1 for w in C.GREEK.split()}}
    tok = fit(corpus, spelling="front", vocab_size=floor(corpus, spelling="front"))
    symbols = list(tok.encode_pieces(text))
    units: list[list[str]] = []
    for p in symbols:
        if p == MARK or not units:
            units.append([])
        units[-1].append(p)
    return {"numbers": [["characters", len(text)], ["spaces", text.count(" ")], ["symbols", len(symbols)],
                        ["marks", symbols.count(MARK)], ["units", len(units)]],
            "pieces": [cut_strip(f"{text_name(s) if s['example'] == 'sentence' else 'the example'} as a ▁ stream", tok, text,
                                 lambda p: "mark" if p == MARK else kind_of(p, tok), yours=s["example"] == "sentence")],
            "tables": [{"caption": "cut before every mark", "columns": ["unit", "symbols"],
                        "rows": [["".join(u), len(u)] for u in units]}],
            "note": "No merge learned: each symbol is one piece."}


@widget("sp-walk", "sentencepiece", 2, "The merge walk with ▁: the mark waits",
        rng("merges", "merges", 15, 0, 15), text=True)
def sp_walk(s: State) -> Result:
    k = s["merges"]
    walked = tie_branch({}, vocab_size=27, spelling="front")
    tok = fit(C.FOUR, spelling="front", vocab_size=12 + k)
    lengths = walked.corpus_lengths()[:k + 1]
    rows = []
    for st in walked.steps[:k]:
        with_mark = any(a == MARK for a, _ in st.ties)
        rows.append([st.step, st.count, ", ".join(pair_text(t) for t in st.ties),
                     pair_text((st.left, st.right)), "yes" if with_mark else ""])
    among = sum(1 for r in rows if r[4])
    taken_mark = sum(1 for r in rows if r[4] and r[3].startswith(MARK + " "))
    return {"numbers": [["merges", k], ["corpus pieces", f"95 → {tok.report['corpus_pieces_after']}"],
                        ["rows", tok.vocab_size], ["a ▁ pair among the tied", among], ["a ▁ pair taken", taken_mark]],
            "pieces": [cut_strip(f"{text_name(s)} after {k} merges", tok, text_of(s))],
            "tables": [{"caption": "each merge, with the candidates tied at its count",
                        "columns": ["#", "count", "tied candidates", "taken", "▁ pair tied"], "rows": rows,
                        "highlight": [i for i, r in enumerate(rows) if r[3].startswith(MARK + " ")]},
                       {"caption": "each word", "columns": ["word", "pieces"],
                        "rows": [[w, " ".join(tok.encode_pieces(w))] for w in C.FOUR]}],
            "charts": [{"kind": "line", "title": "corpus pieces", "x": "merges", "y": "pieces",
                        "series": [{"name": "corpus", "points": [[j, n] for j, n in enumerate(lengths)]}]}],
            "note": "The four words, front spelling (▁low)."}


@widget("sp-extends", "sentencepiece", 3, "Merges that extend a piece beginning with ▁",
        sel("corpus", "corpus", C.OURS, *C.BUILT_IN_LARGE.items()),
        sel("size", "rows asked", 0, (0, "until no pair occurs twice"), (50, "the floor + 50"), (200, "the floor + 200")),
        large=True, text=True)
def sp_extends(s: State) -> Result:
    lo = floor(s["corpus"], spelling="front")
    tok = fit(s["corpus"], spelling="front", vocab_size=lo + s["size"] if s["size"] else BIG)
    merges = table_of(tok)[0]

    def derive() -> tuple[list[int], list[str]]:  # once per fit: typing asks again at every pause
        rows = set(table_of(tok)[1])
        return ([i for i, (a, _) in enumerate(merges) if a.startswith(MARK)],
                sorted(r for r in rows if r.startswith(MARK) and len(r) > 1 and r[1:] in rows))
    ext, twins = cached(("sp-extends", token(s["corpus"]), s["size"]), derive)
    first = {i for i in ext[:40] if i < 40}  # ext ascends: the first 40 merges' are among its first 40
    share = len(ext) / len(merges) if merges else 0.0
    differs = ([] if 1 / 3 <= share <= 1 / 2 else [f"{len(ext)} of {len(merges)} merges extend a ▁ piece ({share:.0%})"]) + (
        [] if twins else ["no row is held twice"])
    return {"conclusion": conclusion("sp-extends", differs),
            "numbers": [["merges", len(merges)], ["extend a ▁ piece", f"{len(ext)} of {len(merges)}"],
                        ["rows that are another row with ▁ in front", len(twins)], ["rows", tok.vocab_size]],
            "pieces": [cut_strip(text_name(s), tok, text_of(s))],
            "tables": [{"caption": "the first 40 merges", "columns": ["#", "merge", "extends ▁"],
                        "rows": [[i + 1, pair_text(m), "yes" if i in first else ""] for i, m in enumerate(merges[:40])],
                        "highlight": sorted(first)},
                       {"caption": "twins", "columns": ["row", "without ▁"], "rows": [[t, t[1:]] for t in twins[:40]]}],
            "note": corpus_note(s["corpus"])}


@widget("sp-roundtrip", "sentencepiece", 4, "The round trip: front mark against end mark",
        sel("corpus", "corpus", "stand_in", ("stand_in", "no word ends in z (the page's property)"),
            *C.BUILT_IN_LARGE.items()),
        sel("size", "rows", 20, (0, "no merge (the floor)"), (20, "the floor + 20"), (-1, "until no pair occurs twice")),
        large=True, text=True)
def sp_roundtrip(s: State) -> Result:
    corpus: Union[str, Mapping[str, int]] = C.STAND_IN if s["corpus"] == "stand_in" else s["corpus"]
    extra = s["size"]
    front = fit(corpus, spelling="front", vocab_size=BIG if extra < 0 else floor(corpus, spelling="front") + extra)
    end = fit(corpus, vocab_size=BIG if extra < 0 else floor(corpus) + extra)
    rows, strips = [], []
    for name, tok in (("front ▁", front), ("end </w>", end)):
        shown = cut_strip(f"{text_name(s)}, {name}", tok, text_of(s))
        back = tok.decode(tok.encode(text_of(s)))
        rows.append([name, tok.vocab_size, shown["total"], back, "yes" if back == text_of(s) else "no"])
        strips.append(shown)
    differs = [] if (rows[0][4], rows[1][4]) == ("yes", "no") else [
        f"the front mark {'glues' if rows[0][4] == 'yes' else 'does not glue'} {text_name(s)} back exactly, the end mark "
        f"{'does' if rows[1][4] == 'yes' else 'does not'}"]
    return {"conclusion": conclusion("sp-roundtrip", differs),
            "numbers": [["front: exact", rows[0][4]], ["end: exact", rows[1][4]], ["end gives", rows[1][3]]],
            "tables": [{"caption": f"{text_name(s)} glued back", "columns": ["marks", "rows", "pieces", "glued back", "exact"],
                        "rows": rows}],
            "pieces": strips,
            "note": "A corpus where z occurs inside a word and no word ends in z (as the page's)."
                    if s["corpus"] == "stand_in" else corpus_note(s["corpus"])}


@widget("sp-normalize", "sentencepiece", 5, "The three normalizations",
        sel("row", "input", 0, *[(i, repr(t)) for i, t in enumerate(NORMALIZATION_ROWS)]))
def sp_normalize(s: State) -> Result:
    rows = []
    for text in NORMALIZATION_ROWS:
        tok = fit({"hello": 2, "world": 2}, spelling="front", vocab_size=20)
        trained = subwords.train([text], spelling="front", vocab_size=20)
        back = tok.decode(tok.encode(text))
        said = [NORMALIZATIONS.get(n, n) for n in trained.report["normalizations"]]
        rows.append([repr(text), repr(tok.normalize(text)), repr(back), ", ".join(said) or "none"])
    chosen = rows[s["row"]]
    return {"numbers": [["input", chosen[0]], ["output", chosen[2]], ["reported", chosen[3]]],
            "tables": [{"caption": "input and output side by side",
                        "columns": ["input", "normalized", "glued back", "reported by training"], "rows": rows,
                        "highlight": [s["row"]]}],
            "note": "A front-spelling fit on hello 2, world 2."}


@widget("sp-lengths", "sentencepiece", 6, "Front against end lengths at 14 sizes",
        sel("corpus", "corpus", C.OURS, *C.BUILT_IN_LARGE.items()),
        sel("measure", "measured on", "corpus", ("corpus", "the corpus"), ("held_out", "the held-out sentence")),
        large=True)
def sp_lengths(s: State) -> Result:
    corpus, what = s["corpus"], s["measure"]
    lo = floor(corpus)  # the end spelling's floor is the higher one: both can be asked from here
    hi = max(ceiling(corpus), ceiling(corpus, spelling="front"))
    sizes = sizes_between(lo, hi, 14)
    curves = cached(("frontend", token(corpus), tuple(sizes)), lambda: {
        "front": size_curve(corpus, sizes, C.SENTENCE, spelling="front"),
        "end": size_curve(corpus, sizes, C.SENTENCE)})
    f0, e0 = curves["front"][0], curves["end"][0]
    not_shorter = [f"{f['asked']} rows ({f['corpus']} against {e['corpus']})" for f, e in zip(curves["front"], curves["end"])
                   if f["corpus"] >= e["corpus"]]
    return {"conclusion": conclusion("sp-lengths", [f"not shorter at {_sizes(not_shorter)}"] if not_shorter else []),
            "numbers": [["floor (front)", floor(corpus, spelling="front")], ["floor (end)", lo],
                        [f"at {sizes[0]}: front / end", f"{f0[what]} / {e0[what]}"],
                        [f"at {sizes[-1]}: front / end", f"{curves['front'][-1][what]} / {curves['end'][-1][what]}"]],
            "charts": [{"kind": "line", "title": f"pieces on {'the corpus' if what == 'corpus' else 'the held-out sentence'}",
                        "x": "rows asked", "y": "pieces",
                        "series": [{"name": name, "points": [[p["asked"], p[what]] for p in curves[name]]}
                                   for name in ("front", "end")]}],
            "tables": [{"caption": "pieces at each size", "columns": ["rows asked", "front corpus", "end corpus",
                                                                      "front sentence", "end sentence"],
                        "rows": [[f["asked"], f["corpus"], e["corpus"], f["held_out"], e["held_out"]]
                                 for f, e in zip(curves["front"], curves["end"])]}],
            "note": corpus_note(corpus)}


@widget("sp-cjk", "sentencepiece", 7, "Text without spaces under both schemes",
        rng("size", "rows asked", 40, 12, 40), text=True)
def sp_cjk(s: State) -> Result:
    lines = C.CJK_LINES
    end = subwords_fit_lines("cjk", lines, vocab_size=max(s["size"], 0))
    front = subwords_fit_lines("cjk", lines, vocab_size=s["size"], spelling="front")
    rows, strips = [], []
    for name, tok in (("end </w>", end), ("front ▁", front)):
        pieces = list(tok.encode_pieces(C.CJK_HELD_OUT))
        line_pieces = sum(len(tok.encode(line)) for line in lines)
        rows.append([name, len(tok.merges), tok.vocab_size, line_pieces, len(pieces)])
        strips.append(strip(name, pieces, tok))
    strips += [cut_strip(f"{text_name(s)}, {name}", tok, text_of(s)) for name, tok in (("end </w>", end), ("front ▁", front))]
    held = set(end.rows)
    marked = [r for r in end.rows if r.endswith("</w>") and len(r) == 5 and r[0] in held]
    e, f = rows
    differs = ([] if f[1] > e[1] else [f"the front scheme learns {f[1]} merges, the end scheme {e[1]}"]) + (
        [] if f[3] < e[3] else [f"the lines are {f[3]} pieces under the front scheme, {e[3]} under the end scheme"]) + (
        [] if f[4] < e[4] else [f"the new sentence is {f[4]} pieces under the front scheme, {e[4]} under the end scheme"]) + (
        [] if len(marked) == 3 else [f"{len(marked)} of the end scheme's rows are a character held again with the mark"])
    return {"conclusion": conclusion("sp-cjk", differs),
            "numbers": [["end: merges / rows", f"{rows[0][1]} / {rows[0][2]}"], ["front: merges / rows", f"{rows[1][1]} / {rows[1][2]}"],
                        ["end: lines / sentence pieces", f"{rows[0][3]} / {rows[0][4]}"],
                        ["front: lines / sentence pieces", f"{rows[1][3]} / {rows[1][4]}"],
                        ["end: characters held again with a line-end mark", len(marked)]],
            "tables": [{"caption": "both schemes", "columns": ["marks", "merges", "rows", "pieces (5 lines)", "pieces (new sentence)"],
                        "rows": rows}],
            "pieces": strips,
            "note": "Five short lines of our own made of the page's seven words (its lines are not printed), "
                    "chosen so that both schemes asked for 40 rows give the page's numbers (3 merges, 17 rows, "
                    "18 and 5 pieces; 6 merges, 18 rows, 15 and 3 pieces); the new sentence is student, "
                    "research, life, origin run together."}


def subwords_fit_lines(name: str, lines: Sequence[str], **options: Any) -> Any:
    key = ("lines", name, tuple(sorted((k, repr(v)) for k, v in options.items())))
    def make() -> Any:
        opts = dict(options)
        asked = opts.pop("vocab_size")
        lo = int(subwords.train(list(lines), vocab_size=BIG, **opts).report["alphabet_size"]) + 1
        opts["vocab_size"] = max(asked, lo)
        return subwords.train(list(lines), **opts)
    return cached(key, make)


@widget("sp-no-cut", "sentencepiece", 8, "No cut at marks: pieces with inner spaces",
        sel("corpus", "corpus", C.OURS, *C.BUILT_IN_LARGE.items()),
        rng("merges", "merges", 40, 10, 60, 10), large=True, text=True)
def sp_no_cut(s: State) -> Result:
    corpus = s["corpus"]
    base = floor(corpus, spelling="front", split_at_marks=False)
    tok = fit(corpus, spelling="front", split_at_marks=False, vocab_size=base + s["merges"])
    merges, all_rows, _ = table_of(tok)
    learned = all_rows[len(all_rows) - len(merges):]
    inner = [i for i, r in enumerate(learned) if MARK in r[1:]]
    differs = ([] if inner else [f"no piece holds a space inside after {len(merges)} merges"]) + (
        [] if merges and tuple(merges[0]) == ("e", MARK) else
        [f"the first merge is {pair_text(merges[0]) if merges else 'none'}"])
    return {"conclusion": conclusion("sp-no-cut", differs),
            "numbers": [["merges", len(merges)], ["pieces with a space not at the front", len(inner)],
                        ["first merge", pair_text(merges[0]) if merges else "none"]],
            "pieces": [cut_strip(text_name(s), tok, text_of(s), lambda p: "span" if MARK in p[1:] else kind_of(p, tok))],
            "tables": [{"caption": "merges in order", "columns": ["#", "merge", "row", "inner space"],
                        "rows": [[i + 1, pair_text(m), r, "yes" if i in inner else ""]
                                 for i, (m, r) in enumerate(zip(merges, learned))], "highlight": inner}],
            "note": corpus_note(corpus)}


@widget("sp-mark", "sentencepiece", 9, "▁ against _ (or another mark)",
        sel("mark", "the other mark", "_", ("_", "_ (95, before the lowercase letters)"),
            ("~", "~ (126, after them)"), ("|", "| (124, after them)")), text=True)
def sp_mark(s: State) -> Result:
    usual = fit(C.FOUR, spelling="front", vocab_size=30)
    other = fit(C.FOUR, spelling="front", mark=s["mark"], vocab_size=30)
    as_usual = {r.replace(s["mark"], MARK) for r in other.rows}
    shared = len(as_usual & set(usual.rows))
    rows = [[i + 1, pair_text(a) if a else "", pair_text(b) if b else ""]
            for i, (a, b) in enumerate(itertools.zip_longest(usual.merges, other.merges))]
    return {"numbers": [["rows under ▁", usual.vocab_size], [f"rows under {s['mark']}", other.vocab_size],
                        ["shared (the mark written the same)", shared],
                        ["lowest under ▁", " ".join(usual.encode_pieces("lowest"))],
                        [f"lowest under {s['mark']}", " ".join(other.encode_pieces("lowest"))]],
            "pieces": [cut_strip(f"{text_name(s)} under ▁", usual, text_of(s)),
                       cut_strip(f"{text_name(s)} under {s['mark']}", other, text_of(s))],
            "tables": [{"caption": "the merges", "columns": ["#", "▁ (9601)", f"{s['mark']} ({ord(s['mark'])})"],
                        "rows": rows, "highlight": [2, 3, 4]}],
            "note": "The four words, front spelling."}


# ------------------------------------------------------------------------------------------------
# Entry points


def get(widget_id: Any) -> Widget:
    if not isinstance(widget_id, str) or widget_id not in WIDGETS:
        raise ExploreError(f"no widget named {str(widget_id)[:80]!r}; the widgets are: {', '.join(WIDGETS)}")
    return WIDGETS[widget_id]


def validate(w: Widget, raw: Any) -> State:
    """The state with every control's value checked, defaults filled in; unknown names refused."""
    if raw is None:
        raw = {}
    if not isinstance(raw, dict):
        raise ExploreError("the state must be a JSON object of control name -> value")
    controls = w.live_controls()
    names = {c.name for c in controls}
    unknown = sorted(str(k) for k in raw if k not in names and not (w.text and k == "text"))
    if unknown:
        if unknown[0] == "text":
            raise ExploreError(f"{w.id} cuts no text of yours (it shows only its page's words); leave out 'text'")
        raise ExploreError(f"{w.id} has no control {unknown[0][:80]!r}; its controls are: {', '.join(sorted(names)) or 'none'}")
    state = {c.name: c.check(raw[c.name]) if c.name in raw else c.default for c in controls}
    if w.text and "text" in raw:
        text = check_text(raw["text"])
        if text != C.SENTENCE:
            state["text"] = text
    return state


def check_text(text: Any) -> str:
    if not isinstance(text, str):
        raise ExploreError("text must be a string (what is typed in the page's text box)")
    if len(text) > MAX_TEXT:
        raise ExploreError(f"the text is {len(text):,} characters; the text box takes up to {MAX_TEXT:,}: shorten it")
    return text


def compare(text: Any, ours: Optional[dict[str, Any]] = None) -> Result:
    """The text box's text under every model named on the command line, side by side, each cut
    by the model's own loader (ids as its library gives them), with ``ours`` -- a strip of the
    fitted-vocabulary widget on the opening corpus -- first."""
    text = check_text(text)
    strips = [ours] if ours else []
    exact = [ours.get("exact", "") if ours else ""]
    for name in sorted(USER_MODELS):
        tok = USER_MODELS[name]
        try:
            strips.append(cut_strip(f"model: {name}", tok, text))
            exact.append("yes" if tok.decode(tok.encode(text)) == text else "no")
        except subwords.SubwordsError as e:
            strips.append({"label": f"model: {name}: refuses this text: {e}", "text": True, "pieces": [], "total": 0,
                           "unk": 0, "counts": ""})
            exact.append("")
    n_bytes = len(text.encode("utf-8"))
    rows = [[s["label"].rsplit(" (", 1)[0], s["total"], f"{len(text) / s['total']:.2f}" if s["total"] else "–",
             f"{n_bytes / s['total']:.2f}" if s["total"] else "–", s["unk"], ex] for s, ex in zip(strips, exact)]
    return {"tables": [{"caption": "the text box's text under each model", "columns":
                        ["model", "pieces", "characters per piece", "bytes per piece", "[UNK]", "glued back exactly"],
                        "rows": rows}],
            "pieces": strips}


# ------------------------------------------------------------------------------------------------
# A model file in a fitted-vocabulary widget


_PER_MODEL: dict[int, tuple[Any, dict[str, Any]]] = {}


def per_model(tok: Any, key: str, make: Callable[[], Any]) -> Any:
    """What a widget derives from a loaded model alone (not from the typed text), made once per
    model: on a model of 127,086 rows a pass over the rows takes tens of milliseconds, which typing
    would pay at every pause."""
    with _CACHE_LOCK:
        entry = _PER_MODEL.get(id(tok))
        if entry is None or entry[0] is not tok:  # the model is held in the entry: its id stays its own
            entry = _PER_MODEL[id(tok)] = (tok, {})
    if key not in entry[1]:
        entry[1][key] = make()
    return entry[1][key]


def model_rows(tok: Any) -> list[str]:
    """Every row of a loaded model, by id (a row a format leaves empty is skipped)."""
    def make() -> list[str]:
        out = []
        for i in range(tok.vocab_size):
            try:
                out.append(tok.id_to_piece(i))
            except (KeyError, IndexError, ValueError, subwords.SubwordsError):
                continue
        return out
    return cast("list[str]", per_model(tok, "rows", make))


#: The space marks models use at a word's front: SentencePiece's ▁ and GPT-2's byte stand-in Ġ.
SPACE_MARKS = (MARK, "\u0120")

# What each fitted-vocabulary widget shows of a model (the size and spelling controls apply to fits only).
_MODEL_NOTES = {
    "bpe-fit": "the six readings are the model's",
    "bpe-bytes": "the table is the model's cut of the page's three texts (accented, Greek, café)",
    "sp-roundtrip": "the table says whether the model glues your text back exactly",
    "sp-extends": "the readouts count the model's rows that begin with a space mark and their twins without it",
    "sp-no-cut": "the readouts count the model's rows with a space mark inside",
    "uni-pieces": "the table lists the model's first 40 rows that are not single characters",
    "wp-sizes": "the readouts count the pieces that open a word (no ## in front)",
    "wp-open-end": "the table lists the model's single characters and whether they open a word (##c rows continue one)",
}


def model_view(w: Widget, s: State) -> Result:
    """A fitted-vocabulary widget with a model file in its fit's place: the model's cut of the text
    box (ids as the model's own library gives them) and the widget's readouts that apply to any
    vocabulary."""
    name = s["corpus"]
    tok = USER_MODELS[name]
    text, what = text_of(s), text_name(s)
    shown = cut_strip(f"{what}, model {name}", tok, text)
    back = tok.decode(tok.encode(text))
    numbers: list[list[Any]] = [["rows", tok.vocab_size], [f"{what.split()[-1]} pieces", shown["total"]],
                                [f"{what.split()[-1]} words", len(text.split())],
                                ["glued back exactly", "yes" if back == text else "no"]]
    extra, tables = per_model(tok, w.id, lambda: _model_fixed(w.id, tok))
    numbers, tables = numbers + extra, list(tables)
    if w.id == "bpe-bytes":
        ps = [p[0] for p in shown["pieces"]] if shown["total"] <= DRAWN else list(tok.encode_pieces(text))
        tables.insert(0, {"caption": "pieces per text under the model",
                          "columns": ["text", "pieces", "byte rows", "[UNK]", "exact"],
                          "rows": [[what, len(ps), sum(p.startswith("<0x") for p in ps), ps.count("[UNK]"),
                                    "yes" if back == text else "no"]] + tables.pop(0)["rows"]})
    elif w.id == "sp-roundtrip":
        tables.append({"caption": f"{what} glued back", "columns": ["model", "rows", "pieces", "glued back", "exact"],
                       "rows": [[name, tok.vocab_size, shown["total"], back, "yes" if back == text else "no"]]})
    elif w.id == "wp-sizes":
        pieces = [p[0] for p in shown["pieces"]] if shown["total"] <= DRAWN else list(tok.encode_pieces(text))
        numbers.append(["pieces without ## in front", sum(not p.startswith("##") for p in pieces)])
    return {"numbers": numbers, "pieces": [shown], "tables": tables,
            "note": f"Model: your {name}, used as it is ({_MODEL_NOTES[w.id]}; the size and spelling controls "
                    "apply to fits only). Its ids are the ones its own library gives."}


def _model_fixed(widget_id: str, tok: Any) -> tuple[list[list[Any]], list[dict[str, Any]]]:
    """The readouts and tables of a fitted-vocabulary widget that depend on the model alone."""
    numbers: list[list[Any]] = []
    tables: list[dict[str, Any]] = []
    rows = model_rows(tok)
    if widget_id == "bpe-fit":
        tables.append({"caption": "the six readings: a word alone, against the sentence's word",
                       "columns": ["word", "pieces", "n", "the sentence's", "pieces", "n"], "rows": six_readings(tok)})
    elif widget_id == "bpe-bytes":
        trs = []
        for label, t in (("accented", C.ACCENTED), ("Greek", C.GREEK), ("café", C.CAFE)):
            ps = list(tok.encode_pieces(t))
            trs.append([label, len(ps), sum(p.startswith("<0x") for p in ps), ps.count("[UNK]"),
                        "yes" if tok.decode(tok.encode(t)) == t else "no"])
        tables.append({"rows": trs})  # the typed text's row goes first (model_view)
    elif widget_id in ("sp-extends", "sp-no-cut"):
        held = set(rows)
        front = [r for r in rows if len(r) > 1 and r[0] in SPACE_MARKS]
        if widget_id == "sp-extends":
            twins = [r for r in front if r[1:] in held]
            numbers += [["rows that begin with a space mark (▁ or Ġ)", len(front)],
                        ["rows that are another row with the mark in front", len(twins)]]
            tables.append({"caption": "twins (the first 40)", "columns": ["row", "without the mark"],
                           "rows": [[t, t[1:]] for t in twins[:40]]})
        else:
            inner = [r for r in rows if any(m in r[1:] for m in SPACE_MARKS)]
            numbers.append(["rows with a space mark not at the front", len(inner)])
            tables.append({"caption": "rows with a space mark inside (the first 40)", "columns": ["row"],
                           "rows": [[r] for r in inner[:40]]})
    elif widget_id == "uni-pieces":
        longer = [r for r in rows if len(r) > 1 and not (r.startswith("<") and r.endswith(">"))]
        tables.append({"caption": "the model's first 40 rows longer than one character, by id", "columns": ["#", "row"],
                       "rows": [[i + 1, r] for i, r in enumerate(longer[:40])]})
    elif widget_id == "wp-open-end":
        single = sorted({r for r in rows if len(r) == 1} | {r[2:] for r in rows if r.startswith("##") and len(r) == 3})
        held = set(rows)
        tables.append({"caption": "the model's single characters", "columns": ["character", "opens a word", "continues one"],
                       "rows": [[c, "yes" if c in held else "never", "yes" if "##" + c in held else "no"]
                                for c in single[:200]]})
    return numbers, tables


def compute(widget_id: Any, raw_state: Any) -> Result:
    w = get(widget_id)
    state = validate(w, raw_state)
    if w.fitted and state.get("corpus") in USER_MODELS:
        try:
            return model_view(w, state)
        except subwords.SubwordsError as e:
            raise ExploreError(str(e)) from None
    if w.large:  # a user's corpus too large for this widget's work: an evenly spaced sample, labelled
        state = dict(state, corpus=capped(state["corpus"], w.id))
    key = ("result", w.id, tuple(sorted((k, repr(token(v) if k == "corpus" else v)) for k, v in state.items())))
    try:
        if "text" in state:  # typed text: the fits are cached, the cut is not (it changes at every key)
            return w.compute(state)
        return cast(Result, cached(key, lambda: w.compute(state)))
    except subwords.SubwordsError as e:
        raise ExploreError(str(e)) from None


def all_states(w: Widget) -> list[State]:
    """Every state of a widget over the built-in corpora (what ``--html`` precomputes)."""
    names = [c.name for c in w.controls]
    values = [c.values() for c in w.controls]
    return [dict(zip(names, combo)) for combo in itertools.product(*values)]


def specs() -> list[dict[str, Any]]:
    return [w.spec() for w in WIDGETS.values()]
