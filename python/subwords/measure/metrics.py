"""Metrics for any tokenizer over a set of texts.

"Any tokenizer" is anything with ``encode``, ``id_to_piece`` and ``vocab_size``: a trained
:class:`subwords.Tokenizer` or anything :func:`subwords.formats.load` reads (tiktoken rank files,
SentencePiece models, Hugging Face ``tokenizer.json``, ...). All texts are encoded in one batch
(``encode_batch`` where the tokenizer has it), and every count below comes from that one pass.

Rényi efficiency (Zouhar et al., 2023, "Tokenization and the Noiseless Channel") follows the
definition of the PyPI package ``tokenization-scorer`` (its ``metrics._renyi_efficiency``): over
the observed piece distribution ``p`` (relative frequency of each distinct piece in the
encoding), ``H_α(p) / log2(V)`` with ``H_α = log2(Σ p_i^α) / (1 - α)`` and ``V`` the number of
distinct pieces observed. It is undefined (None here) when fewer than two distinct pieces occur.

The measures the tokenizer-method papers report (docs/METHODS.md):

* tokens per byte: pieces over UTF-8 bytes of the texts (lower is better compression);
* under-trained rows (as Picky BPE and Scaffold-BPE count them): the share of the vocabulary's
  text rows (special rows left out) that the encoding of the texts uses fewer than ``k`` times
  (``k`` = ``rare_below``, default 5);
* per language (``languages=``): each language's tokens per byte; the parity ratio, the largest
  over the smallest; and the Gini coefficient of the languages' tokens per byte,
  ``G = Σ_i Σ_j |c_i - c_j| / (2 n² mean(c))`` (0 = every language costs the same). Parity-aware
  BPE reports it on parallel text; on text that is not parallel, tokens per byte is the cost
  that does not depend on how much text each language has;
* intermediate-token share (LiteToken, arXiv 2602.04706): the share of a BPE vocabulary's
  learned rows that are intermediate merge residues on the texts, ``F1 / (F1 + F2) < 0.1``
  (``F1``: times the row is in the encoding; ``F2``: times it is made and merged again);
  None for a model with no merges.
"""

from __future__ import annotations

import dataclasses
import math
import re
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping, Optional, Sequence

from ..errors import InputError, OptionError

UNKNOWN_PIECES = frozenset({"[UNK]", "<unk>", "<UNK>"})
_BYTE_PIECE = re.compile(r"<0x[0-9A-F]{2}>")


def gini(values: Sequence[float]) -> Optional[float]:
    """The Gini coefficient ``Σ_i Σ_j |x_i - x_j| / (2 n² mean)``; None for no values or mean 0.

    >>> gini([1.0, 1.0, 1.0]), gini([0.0, 0.0, 3.0])
    (0.0, 0.6666666666666666)
    """
    xs = [float(x) for x in values]
    n = len(xs)
    if n == 0:
        return None
    mean = math.fsum(xs) / n
    if mean <= 0:
        return None
    return math.fsum(abs(a - b) for a in xs for b in xs) / (2 * n * n * mean)


def under_trained_share(freq: Mapping[int, int], rows: Sequence[int], k: int) -> Optional[float]:
    """The share of ``rows`` (ids) that ``freq`` (id -> uses) holds fewer than ``k`` times."""
    if not rows:
        return None
    return sum(1 for i in rows if freq.get(i, 0) < k) / len(rows)


def renyi_efficiency(counts: Iterable[int], alpha: float) -> Optional[float]:
    """Rényi efficiency of a distribution given by its counts (see the module docstring)."""
    if isinstance(alpha, bool) or not isinstance(alpha, (int, float)) or not math.isfinite(alpha) or alpha <= 0:
        raise OptionError(f"alpha must be a positive number, got {alpha!r}")
    c = [n for n in counts if n > 0]
    total = sum(c)
    if len(c) < 2:
        return None
    probs = [n / total for n in c]
    if alpha == 1:
        h = -math.fsum(p * math.log2(p) for p in probs)
    else:
        h = math.log2(math.fsum(p ** alpha for p in probs)) / (1 - alpha)
    return h / math.log2(len(c))


@dataclass
class LanguageMetrics:
    texts: int
    pieces: int
    words: int
    pieces_per_word: Optional[float]
    parity: Optional[float]
    """This language's pieces per word over the first language's (1.0 = parity)."""
    bytes: int = 0
    tokens_per_byte: Optional[float] = None
    """This language's compression: pieces over UTF-8 bytes."""

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


@dataclass
class Metrics:
    model: str
    texts: int
    pieces: int
    words: int
    """Whitespace-separated words."""
    pieces_per_word: Optional[float]
    """Fertility: pieces per whitespace word."""
    bytes: int
    chars: int
    bytes_per_piece: Optional[float]
    chars_per_piece: Optional[float]
    unknown: int
    """Pieces that are the unknown row (``[UNK]``, ``<unk>``)."""
    byte_fallback: int
    """Byte-fallback pieces (``<0x..>`` rows)."""
    roundtrip_exact: bool
    """Every text decodes back to itself exactly."""
    roundtrip_failures: int
    vocab_size: int
    vocab_used: int
    vocab_share: float
    """Distinct ids used over ``vocab_size``."""
    renyi_efficiency: Optional[float]
    """At α = 2.5."""
    renyi_efficiency_3: Optional[float]
    """At α = 3."""
    encode_seconds: float
    """The measuring pass's wall time: one batch encoding (and, for our models, the decoding for
    the round trip, which runs in the same parallel pass)."""
    bytes_per_second: Optional[float]
    tokens_per_byte: Optional[float] = None
    """Pieces over UTF-8 bytes."""
    rare_below: int = 5
    under_trained: Optional[float] = None
    """The share of text rows (specials left out) used fewer than ``rare_below`` times."""
    intermediate_share: Optional[float] = None
    """BPE: the share of learned rows that are LiteToken residues on these texts (R < 0.1)."""
    language_parity_ratio: Optional[float] = None
    """The largest language tokens per byte over the smallest."""
    language_gini: Optional[float] = None
    """The Gini coefficient of the languages' tokens per byte."""
    heldout_log_likelihood: Optional[float] = None
    """Unigram models of ours: Σ over the texts' whitespace words of their log-probability."""
    languages: Optional[dict[str, LanguageMetrics]] = None
    examples: list[str] = field(default_factory=list)
    """Up to three texts that do not round-trip."""

    def to_dict(self) -> dict[str, Any]:
        d = dataclasses.asdict(self)
        if self.languages is not None:
            d["languages"] = {k: v.to_dict() for k, v in self.languages.items()}
        return d


def _encode_all(tok: Any, texts: list[str], threads: Optional[int]) -> list[list[int]]:
    from .. import _api

    if isinstance(tok, _api.SubwordsTokenizer):
        # raw pieces: a template's [CLS]/[SEP] are not the text's
        return tok.encode_batch(texts, threads=threads, add_special_tokens=False)
    batch = getattr(tok, "encode_batch", None)
    if batch is not None:
        try:
            return [list(x) for x in batch(texts, threads=threads)]
        except TypeError:
            return [list(x) for x in batch(texts)]
    return [list(tok.encode(t)) for t in texts]


@dataclass
class _Pass:
    freq: Counter[int]
    pieces: list[int]
    """per text"""
    words: list[int]
    """per text"""
    bytes: int
    chars: int
    failed: list[int]


def _encode_decode(tok: Any, texts: list[str], threads: Optional[int]) -> _Pass:
    """One pass: each id's occurrences, pieces and words per text, bytes and characters, and
    the indices of texts that do not round-trip."""
    from .. import _api, _core

    if isinstance(tok, _api.SubwordsTokenizer):
        # one parallel pass in the core: encode, decode, count (no id lists built in Python)
        try:
            counts, lengths, words, nbytes, chars, failed = _core.measure_batch(tok._model, texts, _api._threads(threads))
        except UnicodeError as e:
            raise _api._surrogate_error(e, f"text {_api._first_unencodable(texts)}") from None
        return _Pass(Counter({i: c for i, c in enumerate(counts) if c}), lengths, words, nbytes, chars, failed)
    encoded = _encode_all(tok, texts, threads)
    batch = getattr(tok, "decode_batch", None)
    decoded = list(batch(encoded)) if batch is not None else [tok.decode(ids) for ids in encoded]
    freq: Counter[int] = Counter()
    for ids in encoded:
        freq.update(ids)
    try:
        nbytes = sum(map(len, map(str.encode, texts)))
    except UnicodeEncodeError:
        raise InputError(f"text {_api._first_unencodable(texts)} holds a lone surrogate: not text a tokenizer can "
                         "encode; clean the input") from None
    return _Pass(freq, [len(ids) for ids in encoded], [len(t.split()) for t in texts], nbytes, sum(map(len, texts)),
                 [k for k, (t, d) in enumerate(zip(texts, decoded)) if t != d])


def _special_ids(tok: Any, size: int) -> tuple[set[int], set[int]]:
    """(unknown ids, byte-fallback ids) by the pieces' names."""
    from .. import _api

    if isinstance(tok, _api.SubwordsTokenizer):
        unk = {i for i, (r, k) in enumerate(zip(tok.rows, tok.kinds)) if k == "special" and r in UNKNOWN_PIECES}
        byte = {i for i, k in enumerate(tok.kinds) if k == "byte"}
        return unk, byte
    unk = set()
    for name in UNKNOWN_PIECES:
        try:
            unk.add(int(tok.piece_to_id(name)))
        except Exception:  # noqa: BLE001 - a format without that piece raises its own error
            pass
    return unk, set()


def metrics(tok: Any, texts: Sequence[str], *, name: Optional[str] = None, languages: Optional[Sequence[str]] = None,
            threads: Optional[int] = None, rare_below: int = 5) -> Metrics:
    """Measures ``tok`` on ``texts`` (see :class:`Metrics` for each number). ``languages``: one
    label per text, for per-language pieces per word and parity (relative to the first label).

    >>> import subwords
    >>> tok = subwords.train({"low": 5, "lower": 2, "newest": 6, "widest": 3}, vocab_size=22)
    >>> m = metrics(tok, ["low lower", "lowest"])  # low</w> + lo w e r</w> + lo w est</w>
    >>> (m.pieces, m.words, m.unknown, m.roundtrip_exact)
    (8, 3, 0, True)
    """
    if isinstance(rare_below, bool) or not isinstance(rare_below, int) or rare_below < 1:
        raise OptionError(f"rare_below must be a whole number >= 1 (rows used fewer times are under-trained), "
                          f"got {rare_below!r}")
    for attr in ("encode", "id_to_piece", "vocab_size"):
        if not hasattr(tok, attr):
            raise OptionError(f"metrics needs a tokenizer with encode, id_to_piece and vocab_size; "
                              f"{type(tok).__name__} has no {attr}")
    if isinstance(texts, (str, bytes)):
        raise InputError("texts: pass a list of texts, not a single string")
    texts = list(texts)
    if not set(map(type, texts)) <= {str}:  # (at C speed; the loop only to name the culprit)
        n, bad = next((n, t) for n, t in enumerate(texts) if not isinstance(t, str))
        raise InputError(f"text {n} is {type(bad).__name__}, not str")
    if not any(t.strip() for t in texts):
        raise InputError("no text to measure on: every text is empty or blank")
    if languages is not None:
        languages = list(languages)
        if len(languages) != len(texts):
            raise InputError(f"{len(languages)} language labels for {len(texts)} texts: give one label per text")
    from .. import _api

    size = int(tok.vocab_size)
    start = time.perf_counter()
    run = _encode_decode(tok, texts, threads)
    seconds = time.perf_counter() - start
    freq, lengths, failed = run.freq, run.pieces, run.failed
    unk_ids, byte_ids = _special_ids(tok, size)
    if not isinstance(tok, _api.SubwordsTokenizer):
        # another library's file: byte-fallback rows by their names (<0x41>)
        byte_ids = {i for i in freq if _BYTE_PIECE.fullmatch(_piece_name(tok, i) or "")}
    pieces = sum(freq.values())
    words, nbytes, chars = sum(run.words), run.bytes, run.chars
    examples = [texts[k] for k in failed[:3]]
    langs: Optional[dict[str, LanguageMetrics]] = None
    if languages is not None:
        langs = {}
        for lang in dict.fromkeys(languages):
            sel = [i for i, l in enumerate(languages) if l == lang]
            p = sum(lengths[i] for i in sel)
            w = sum(run.words[i] for i in sel)
            b = sum(len(texts[i].encode("utf-8")) for i in sel)
            langs[lang] = LanguageMetrics(texts=len(sel), pieces=p, words=w, pieces_per_word=p / w if w else None,
                                          parity=None, bytes=b, tokens_per_byte=p / b if b else None)
        first = next(iter(langs.values())).pieces_per_word
        for v in langs.values():
            v.parity = v.pieces_per_word / first if first and v.pieces_per_word is not None else None
    costs = [v.tokens_per_byte for v in langs.values() if v.tokens_per_byte is not None] if langs else []
    from .._litetoken import residue_share

    share = residue_share(tok, freq)
    return Metrics(
        model=str(name or getattr(tok, "format", None) or getattr(tok, "model", type(tok).__name__)),
        texts=len(texts), pieces=pieces, words=words, pieces_per_word=pieces / words if words else None,
        bytes=nbytes, chars=chars, bytes_per_piece=nbytes / pieces if pieces else None,
        chars_per_piece=chars / pieces if pieces else None,
        unknown=sum(freq[i] for i in unk_ids), byte_fallback=sum(freq[i] for i in byte_ids),
        roundtrip_exact=not failed, roundtrip_failures=len(failed), vocab_size=size, vocab_used=len(freq),
        vocab_share=len(freq) / size if size else 0.0,
        renyi_efficiency=renyi_efficiency(freq.values(), 2.5), renyi_efficiency_3=renyi_efficiency(freq.values(), 3.0),
        encode_seconds=seconds, bytes_per_second=nbytes / seconds if seconds > 0 else None,
        tokens_per_byte=pieces / nbytes if nbytes else None, rare_below=rare_below,
        under_trained=under_trained_share(freq, _text_rows(tok, size), rare_below),
        intermediate_share=share[0] / share[1] if share and share[1] else None,
        language_parity_ratio=max(costs) / min(costs) if len(costs) > 1 and min(costs) > 0 else None,
        language_gini=gini(costs) if len(costs) > 1 else None,
        heldout_log_likelihood=_unigram_ll(tok, texts), languages=langs, examples=examples)


def _text_rows(tok: Any, size: int) -> list[int]:
    """The ids of the rows that stand for text: every id but the special rows."""
    from .. import _api

    if isinstance(tok, _api.SubwordsTokenizer):
        return [i for i, k in enumerate(tok.kinds) if k != "special"]
    from ..formats.tiktoken.read import TiktokenTokenizer

    if isinstance(tok, TiktokenTokenizer):
        return sorted(r for _, r in tok._core.tokens())
    specials = set()
    try:
        specials = {int(i) for i in dict(tok.special_tokens).values()}
    except Exception:  # noqa: BLE001 - a format without the mapping
        pass
    return [i for i in range(size) if i not in specials]


def _piece_name(tok: Any, i: int) -> Optional[str]:
    try:
        return str(tok.id_to_piece(i))
    except Exception:  # noqa: BLE001 - an id the format cannot name
        return None


def _unigram_ll(tok: Any, texts: list[str]) -> Optional[float]:
    from .. import _api

    if not isinstance(tok, _api.UnigramTokenizer):
        return None
    total = 0.0
    for t in texts:
        for w in t.split():
            total += tok.unit_log_probability(w)
    return total


def piece_counts(tok: Any, texts: Sequence[str]) -> Mapping[int, int]:
    """How often each id occurs in the encoding of ``texts`` (the distribution the Rényi
    efficiency is computed on)."""
    c: Counter[int] = Counter()
    for ids in _encode_all(tok, list(texts), None):
        c.update(ids)
    return c
