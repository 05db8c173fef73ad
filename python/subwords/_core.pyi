"""Types of ``subwords._core``, the PyO3 layer (crates/subwords-py/src). Private: ``subwords._api``
and ``subwords.formats`` wrap it.

Argument types follow PyO3's conversions: a Rust ``Vec<T>`` takes any sequence except ``str``
(so ``Sequence[T]``), a tuple takes only a ``tuple``, a map only a ``dict``, ``&[u8]`` only
``bytes``. Errors are the classes of ``subwords.errors`` (``FileError``, an ``OSError``, for files).
"""

from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any, Optional, Union, final

__all__ = ["Trainer", "Encoder", "FaceCall", "Tokenizer", "ProgressView", "SpModel", "sp_model_bytes", "RankBpe", "split_pattern", "HfPipeline", "HfTables",
           "SnmtCodes", "StochasTok",
           "unicode_versions", "gpt2_byte_chars", "CountTable", "Counter", "trainer_use_table", "trainer_load_table",
           "train_traced", "measure_batch", "default_options", "spelling_object",
           "extend_merges", "picky_learn", "parity_train", "parity_learn", "model_extended", "check_specials_normalization", "spelling_units", "parse_count_line"]

@final
class ProgressView:
    """A read-only view of a trainer's progress, safe to poll from another thread."""

    def read(self) -> tuple[str, int, int]:
        """(phase, done, total)"""

@final
class Trainer:
    def __new__(cls, options: Mapping[str, Any], threads: int) -> Trainer:
        """``options``: ``TrainOptions``' fields as the core reads them, checked there (OptionError
        naming the key at fault)."""
    def progress_view(self) -> ProgressView: ...
    def feed_texts(self, texts: Sequence[str]) -> None: ...
    def feed_file(self, path: str) -> None: ...
    def add_counts(self, counts: Sequence[tuple[str, int]]) -> None: ...
    def feed_count_file(self, path: str) -> None: ...
    def stream_again(self, again: Callable[[], Iterator[Union[str, list[str]]]]) -> None:
        """Two-stage BPE: stage two calls ``again()`` for the input once more (lists of texts and
        plain-text file paths, as fed) instead of the trainer keeping the texts."""
    def held_stream_bytes(self) -> int:
        """Bytes of text held in memory for stage two (0 when it reads the input again)."""
    def unit_counts(self) -> list[tuple[str, int]]:
        """The counted units (text, count), sorted by text."""
    def set_units(self, units: Sequence[tuple[str, bool, bool, int]], joints: dict[str, list[str]]) -> None:
        """Replaces the units (text, starts_word, ends_word, count) and records the joints."""
    def train(self) -> Tokenizer: ...

@final
class Encoder:
    """The core's encoder contract over one format object: specials allowed by id, the
    template applied when asked, single calls and batches into lists or id buffers."""
    def with_template(self, single: Sequence[int], pair: Sequence[int]) -> Encoder:
        """The same engine with a template: ids, -1 where the text goes, -2 for a pair's second."""
    @property
    def has_template(self) -> bool: ...
    def specials(self) -> list[tuple[str, int]]: ...
    def encode(self, text: str, pair: Optional[str] = None, allowed: Sequence[int] = ...,
               template: bool = False) -> list[int]: ...
    def encode_batch(self, texts: Sequence[str], threads: int, allowed: Sequence[int] = ...,
                     template: bool = False) -> list[list[int]]: ...
    def encode_batch_flat(self, texts: Sequence[str], threads: int, width: int, allowed: Sequence[int] = ...,
                          template: bool = False, suffix: Sequence[int] = ...) -> tuple[bytearray, bytearray]:
        """(ids, ends): little-endian ids ``width`` bytes wide, each text inside the template when
        asked and followed by ``suffix``; u64 ends. Two new bytearrays, filled without a copy."""
    def with_guard(self, guard: Sequence[str]) -> Encoder:
        """The same engine whose ``encode_plain`` hands back None for a text holding a guard string."""
    def encode_plain(self, text: object, guarded: bool = True) -> Optional[list[int]]:
        """The ids of ``text`` alone (no template; no specials but those the engine always matches);
        None when it is not exactly a ``str``, holds a lone surrogate, or (``guarded``) holds a
        guard string."""

@final
class FaceCall:
    """A tokenizer's method on one text as one native call: one ``str`` and no keyword (for
    ``sentencepiece``, also ``out_type=int`` or ``out_type=str`` alone) go to the engine's plain
    path; any other call goes, with the same arguments, to ``general``. ``__name__`` and
    ``__qualname__`` are ``general``'s; its ``__dict__`` takes the method's ``__doc__``."""
    @property
    def __name__(self) -> str: ...
    @property
    def __qualname__(self) -> str: ...
    @staticmethod
    def sentencepiece(model: SpModel, pieces: bool, general: Callable[..., Any]) -> FaceCall: ...
    @staticmethod
    def tiktoken(encoder: Encoder, guarded: bool, general: Callable[..., Any]) -> FaceCall: ...
    @staticmethod
    def encoder(encoder: Encoder, general: Callable[..., Any]) -> FaceCall:
        """Our tokenizers' ``encode(text)``: the encoder's ids of the text, inside its template
        if it has one."""
    def __call__(self, *args: Any, **kwargs: Any) -> Any: ...
    def __get__(self, obj: object, owner: Optional[type] = None, /) -> FaceCall:
        """Itself (a descriptor only so that ``inspect.isroutine`` holds)."""
    @property
    def __wrapped__(self) -> Optional[Callable[..., Any]]: ...

@final
class Tokenizer:
    @staticmethod
    def from_json(text: str) -> Tokenizer: ...
    @staticmethod
    def from_vocab_txt(raw: bytes, spelling: Mapping[str, Any]) -> Union[Tokenizer, tuple[str, int, str]]: ...
    @staticmethod
    def from_rows(model: str, spelling: Mapping[str, Any], rows: Sequence[tuple[str, str]],
                  template: Optional[tuple[str, str]] = None) -> Tokenizer: ...
    def to_json(self) -> str: ...
    def rank_fast(self) -> bool:
        """Whether the rank engine cuts this model's text (its merges encode as a rank file does)."""
    def encoder(self) -> Encoder:
        """The encoder over this model, with its template (a BERT vocabulary's)."""
    def encode_in_mode(self, text: str, pair: Optional[str], allowed: Sequence[int], template: bool, mode: str,
                       p: float = 0.0, alpha: float = 1.0, nbest: Optional[int] = None, seed: int = 0) -> list[int]:
        """Ids in ``mode`` ("dropout" with ``p``; Unigram's "fewest", "sample" with ``alpha``,
        ``nbest``), each stretch between the ``allowed`` specials drawn from ``seed`` afresh."""
    def encode_with_offsets(self, text: str, allowed: Sequence[int] = ...) -> tuple[list[int], list[int], list[int]]:
        """(ids, starts, ends), offsets in code points; the ``allowed`` specials cut out first."""
    def decode(self, ids: Sequence[int]) -> str: ...
    def decode_bytes(self, ids: Sequence[int]) -> bytes: ...
    def normalize(self, text: str) -> str: ...
    def piece_to_id(self, piece: str) -> int | None: ...
    def id_to_piece(self, id: int) -> str | None: ...
    def rows(self) -> list[str]: ...
    def kinds(self) -> list[str]: ...
    def merges(self) -> list[tuple[str, str]]: ...
    @property
    def vocab_size(self) -> int: ...
    def report(self) -> Optional[dict[str, Any]]: ...
    def options(self) -> Optional[dict[str, Any]]: ...
    def spelling(self) -> dict[str, Any]: ...
    def log_probs(self) -> list[float | None]: ...
    def lattice(self, text: str) -> list[tuple[int, int, str, float]]:
        """(start, end, piece, log-prob) per arc, in arc order."""
    def unit_log_probability(self, text: str) -> float: ...
    def nbest(self, text: str, k: int) -> list[tuple[list[str], float]]: ...
    def spellings(self, text: str) -> list[tuple[list[str], float]]: ...
    def sample(self, text: str, seed: int, alpha: float, nbest: int | None) -> list[str]: ...
    def fewest(self, text: str) -> list[str]: ...
    def losses(self, corpus: Sequence[tuple[str, int]]) -> list[float]:
        """Pruning losses of the learned rows (row order) on a corpus of (text, count)."""
    def template(self) -> tuple[int, int] | None:
        """(cls, sep) ids when the model puts a template around texts."""
    def model_kind(self) -> str: ...

@final
class SpModel:
    def __new__(cls, data: bytes) -> SpModel:
        """A SentencePiece ``.model`` file's bytes (any sequence of ints is taken)."""
    def encoder(self) -> Encoder: ...
    def ids(self, text: str) -> list[int]:
        """sentencepiece's ``encode(text)``."""
    def pieces_of(self, text: str) -> list[str]:
        """sentencepiece's ``encode(text, out_type=str)``: an unknown run's piece is its text."""
    def pieces_of_batch(self, texts: Sequence[str], threads: int) -> list[list[str]]:
        """``pieces_of`` of every text, the ids found on ``threads`` threads."""
    def encode_with_offsets(self, text: str) -> tuple[list[int], list[int], list[int]]:
        """(ids, starts, ends), offsets in code points."""
    def encode_pieces(self, text: str, allowed: Sequence[int] = ...) -> tuple[list[int], list[str]]:
        """(ids, pieces); an unknown run's piece is its own normalized text; the ``allowed``
        specials cut out first, each its own piece."""
    def decode_pieces(self, pieces: Sequence[str]) -> str: ...
    def normalize(self, text: str) -> str: ...
    def normalize_with_offsets(self, text: str) -> tuple[str, list[int]]: ...
    def nbest(self, normalized: str, k: int, timeout_ms: int) -> list[tuple[list[tuple[int, int, int]], float]]: ...
    def decode(self, ids: Sequence[int]) -> str: ...
    def piece_to_id(self, piece: str) -> int | None: ...
    def piece(self, id: int) -> str: ...
    @property
    def vocab_size(self) -> int: ...
    def controls(self) -> list[tuple[str, int]]:
        """(piece, id) of every CONTROL piece."""
    @property
    def pieces(self) -> list[str]: ...
    @property
    def scores(self) -> list[float]: ...
    @property
    def types(self) -> list[int]: ...
    @property
    def kind(self) -> str:
        """"unigram" or "bpe"."""
    @property
    def byte_fallback(self) -> bool: ...
    @property
    def unk_id(self) -> int: ...
    def to_bytes(self) -> bytes: ...

def sp_model_bytes(
    kind: str,
    pieces: Sequence[tuple[str, float, int]],
    byte_fallback: bool,
    unk_surface: str,
    rules: Sequence[tuple[str, str]],
    add_dummy_prefix: bool,
    remove_extra_whitespaces: bool,
    split_by_whitespace: bool,
    roles: Optional[Sequence[tuple[str, int]]] = None,
) -> bytes:
    """A SentencePiece model file: ``pieces`` are (piece, score, type) in id order, ``rules``
    the character-map rules (from, to)."""

@final
class RankBpe:
    @staticmethod
    def from_rank_file(data: bytes, pattern_name: str, specials: Sequence[tuple[str, int]],
                       regex: Optional[str] = None) -> RankBpe:
        """``pattern_name``: "r50k", "cl100k", "o200k", or "regex" with ``regex`` (fancy-regex;
        only its matches are chunks, as tiktoken reads a pattern)."""
    @staticmethod
    def from_ranks(tokens: Sequence[tuple[Sequence[int], int]], pattern_name: str,
                   specials: Sequence[tuple[str, int]], regex: Optional[str] = None) -> RankBpe:
        """From (token bytes, rank) pairs."""
    def encoder(self) -> Encoder: ...
    def decode_bytes(self, ids: Sequence[int]) -> bytes: ...
    def token(self, id: int) -> bytes | None: ...
    def tokens(self) -> list[tuple[bytes, int]]: ...
    def rank(self, bytes: bytes) -> int | None: ...
    def split(self, text: str) -> list[str]: ...
    def vocab_size(self) -> int: ...
    def rank_count(self) -> int: ...
    def pattern(self) -> str: ...
    def regex(self) -> Optional[str]: ...
    def encode_piece(self, piece: bytes) -> list[int]:
        """Ids of one chunk with no split (tiktoken's ``encode_single_piece``)."""
    def specials(self) -> list[tuple[str, int]]: ...

def split_pattern(pattern_name: str, text: str) -> list[str]: ...

@final
class StochasTok:
    """Every split of every row into two rows whose keys join to its key (StochasTok; LiteToken)."""
    def __new__(cls, keys: Sequence[Optional[bytes]]) -> StochasTok: ...
    def splits(self, id: int) -> list[tuple[int, int]]: ...
    def splittable(self) -> int: ...
    def stranded(self, order: Sequence[int], gone: Sequence[bool]) -> tuple[list[int], list[bool]]:
        """The rows of ``order`` no split into two rows outside ``gone`` builds, and ``gone`` updated."""
    def rank_last_splits(self, ids: Sequence[int]) -> list[Optional[tuple[int, int]]]:
        """The last merge made alone by the rank rule of each of ``ids`` and of those merges'
        parts, indexed by id (None: not made so, or not asked)."""
    def expand(self, ids: Sequence[int], p: float, seed: int, index: int = 0) -> list[int]: ...
    def expand_batch(self, batch: Sequence[Sequence[int]], p: float, seed: int, threads: int) -> list[list[int]]: ...

@final
class HfTables:
    """A tokenizer.json model's vocabulary and merges."""
    @staticmethod
    def split(raw: bytes) -> Optional[tuple[str, HfTables]]:
        """The file's text without the model's vocab and merges ({} and [] in their places) and
        those tables; None when the file is not plainly well formed there."""
    @staticmethod
    def vocab_merges(vocab_json: bytes, merges_txt: bytes) -> Optional[HfTables]:
        """GPT-2's vocab.json and merges.txt read; None when either is not plainly well formed."""
    @staticmethod
    def from_objects(vocab: dict[str, int], merges: list[list[str] | str]) -> HfTables:
        """The tables of a document's objects; ``merges``: each "a b" or [a, b]."""
    def get(self, token: str) -> Optional[int]: ...
    def max_id(self) -> Optional[int]: ...
    def __len__(self) -> int: ...
    def pairs(self) -> list[tuple[str, int]]:
        """(token, id) in the file's order."""
    def merges(self) -> list[tuple[str, str]]:
        """(left, right) in rank order."""

@final
class SnmtCodes:
    """A subword-nmt codes file's version and merges, read in the core."""
    @staticmethod
    def read(raw: bytes, merges: int, spelling: Mapping[str, Any]) -> Optional[tuple[SnmtCodes, Optional[Tokenizer]]]:
        """The codes and, when they are the merges of an end-spelling BPE, that model; None when
        the file is not plainly well formed (the Python reader then names what is wrong)."""
    @property
    def version(self) -> tuple[int, int]: ...
    def pairs(self) -> list[tuple[str, str]]:
        """The merges in file order."""
    def __len__(self) -> int: ...

@final
class HfPipeline:
    def __new__(cls, plan: Mapping[str, Any], tables: HfTables, id_limit: int) -> HfPipeline:
        """``plan``: the plan without the model's tables, a dict."""
    def encoder(self) -> Encoder: ...
    def encode_surfaces(self, text: str, allowed: Sequence[int]) -> tuple[list[int], list[tuple[int, str]]]:
        """The ids and (position, string) of each token whose string is not its id's entry."""
    @staticmethod
    def normalize_with(normalizers: Sequence[Mapping[str, Any]], text: str) -> str: ...
    def normalize(self, text: str) -> str: ...
    def encode_offsets(self, text: str, allowed: Sequence[int], trim: Optional[bool] = None) -> list[tuple[int, int, int]]:
        """(id, start, end) per token in code points of ``text``, as tokenizers gives its offsets."""
    def encode_general(self, text: str, allowed: Sequence[int]) -> list[int]:
        """The ids by the general model step alone, no word cache (the byte-level step's check)."""
    @property
    def byte_level_fast(self) -> bool:
        """Whether words go through the byte-level model step."""
    @property
    def rank_fast(self) -> bool:
        """Whether the rank engine cuts the words (the file's byte-level BPE encodes as a rank file does)."""
    def encode_rows(self, batch: object, allowed: Sequence[int], threads: int,
                    want: tuple[bool, bool, bool, bool], trim: Optional[bool] = None,
                    templates: Optional[Sequence[Sequence[tuple[int, Any, Any]]]] = None,
                    trunc: Optional[tuple[int, int, str, bool]] = None,
                    pad: Optional[tuple[Optional[int], Optional[int], bool, int, int]] = None) -> Any:
        """A batch's rows laid out (ids, type ids, attention mask, special-tokens mask, offsets,
        shapes), each a list per row or None when not wanted; None when an item is not a text or
        a pair of texts; a ``str`` (why) where ``tokenizers`` refuses the truncation."""
    def normalize_aligned(self, text: str) -> tuple[str, list[tuple[int, int]]]:
        """The normalized text and, per byte of it, the byte span of ``text`` it came from."""

def default_options() -> dict[str, dict[str, Any]]:
    """{model: {option: value}}: what a training with only the model and ``vocab_size`` reads."""

def spelling_object(spelling: Mapping[str, Any]) -> dict[str, Any]:
    """A model file's whole spelling object from the fields given, the rest at their defaults."""

def check_specials_normalization(options: Mapping[str, Any], specials: list[str]) -> None:
    """An OptionError if the options' normalization would change one of ``specials``."""

def spelling_units(options: Mapping[str, Any], text: str) -> list[tuple[str, int, int]]:
    """The units training with these options cuts ``text`` into: (unit, start byte, end byte)."""

def unicode_versions() -> dict[str, str]:
    """The Unicode versions of the core's character tables, e.g. {"general_category": "16.0.0"}."""

def gpt2_byte_chars() -> list[str]:
    """GPT-2's byte-to-character table: ``table[b]`` is the character that prints byte ``b``."""

@final
class CountTable:
    @staticmethod
    def from_bytes(data: bytes) -> CountTable: ...
    def to_bytes(self) -> bytes: ...
    def merge(self, other: CountTable) -> CountTable: ...
    def prune(self, min: int) -> tuple[CountTable, int]:
        """(the table without units counted fewer than ``min`` times, occurrences dropped)"""
    def __len__(self) -> int: ...
    @property
    def texts(self) -> int: ...
    def total(self) -> int: ...
    def spelling(self) -> dict[str, Any]: ...
    def normalizations(self) -> list[str]: ...
    def items(self, start: int, limit: int) -> list[tuple[str, int]]: ...
    @property
    def superword_pattern(self) -> Optional[str]: ...
    @property
    def span_count(self) -> int: ...
    def span_items(self) -> list[tuple[str, int]]: ...

@final
class Counter:
    def __new__(cls, options: Mapping[str, Any], threads: int) -> Counter: ...
    def feed_texts(self, texts: Sequence[str]) -> None: ...
    def feed_file(self, path: str) -> None: ...
    def add_counts(self, counts: Sequence[tuple[str, int]]) -> None: ...
    def feed_count_file(self, path: str) -> None: ...
    def finish(self) -> CountTable: ...

def trainer_use_table(trainer: Trainer, table: CountTable) -> None:
    """Gives ``trainer`` the table's units in place of text (same spelling, else OptionError)."""

def trainer_load_table(trainer: Trainer, path: str, limit: int) -> None:
    """Reads a binary table file (at most ``limit`` bytes) straight into ``trainer``."""

# subwords.measure (crates/subwords-py/src/trace.rs)
def train_traced(trainer: Trainer, request: Mapping[str, Any]) -> tuple[Tokenizer, dict[str, Any]]:
    """Trains as ``Trainer.train`` with the engine's trace on. ``request``: ``{"ties": bool,
    "max_ties": int, "forced": [(step, left, right), ...], "em": bool, "lengths_only": bool}``.
    Returns the model and ``{"merge": {...} | None, "unigram": {...} | None}``."""
def measure_batch(model: Tokenizer, texts: Sequence[str], threads: int) -> tuple[list[int], list[int], list[int], int, int, list[int]]:
    """Encodes and decodes every text in parallel: (occurrences of each id, by id; pieces per
    text; whitespace words per text; UTF-8 bytes; characters; indices of the texts that do not
    decode back to themselves)."""

def picky_learn(units: Sequence[tuple[Sequence[str], int]], new_rows: int, threshold: float, min_count: int
                ) -> tuple[list[tuple[str, list[str]]], list[str], str, list[list[str]]]:
    """Picky BPE on units spelled in symbols: (events, learned tokens present, stop, each unit's
    final tokens); an event is ``("merge", [left, right, result])`` or ``("remove", [token, *parts])``."""
    ...


def parity_train(languages: Sequence[tuple[str, Trainer]]) -> Tokenizer:
    """Parity-aware BPE from one trainer per language (each fed its language's input, all made
    with the same options, whose ``parity.languages`` name them in this order)."""
    ...


def parity_learn(units: Sequence[tuple[Sequence[str], int, int]], bytes: Sequence[int], new_rows: int, min_count: int,
                 measure: str = "tokens_per_byte", global_merges: int = 0, window: Optional[int] = None,
                 alpha: float = 2.0) -> tuple[list[tuple[str, str]], list[Optional[int]], str, list[int]]:
    """Parity-aware BPE on units spelled in symbols ``(symbols, count, language)``: (merges, the
    language that chose each (None: a global merge), stop, each language's pieces after)."""
    ...


def extend_merges(texts: Sequence[bytes], merges: Sequence[Sequence[int]], units: Sequence[tuple[Sequence[int], int]],
                  new_rows: int, min_count: int, strip_right: bytes
                  ) -> tuple[list[list[int]], list[bytes], tuple[str, int, int, int]]:
    """Replays ``merges`` ((left, right, result) ids) on ``units`` and learns up to ``new_rows`` rows
    after ``texts`` (b"" marks an id with no row). Returns (new merges, new rows' texts,
    (stop, merges learned, pieces before, pieces after))."""

def model_extended(model: Tokenizer, texts: Sequence[str], new_rows: int, min_count: int
                   ) -> tuple[Tokenizer, tuple[str, int, int, int]]:
    """``model`` with up to ``new_rows`` rows learned on ``texts`` under its own spelling."""

def parse_count_line(line: str) -> Optional[tuple[str, int]]: ...
