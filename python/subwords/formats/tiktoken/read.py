"""tiktoken ``.tiktoken`` rank files, encoded token for token as tiktoken does.

A rank file has one line per token: the token's bytes in base64, a space, its rank. The rank is
the token's id, and BPE merges the adjacent pair whose *concatenation* has the lowest rank
(leftmost on ties) until no concatenation is a token. Before that, text is cut into chunks by
the encoding's regular expression; subwords runs hand-written scanners proven equal to the four
OpenAI patterns (``r50k_base``/``p50k_base``/``gpt2``, ``cl100k_base``, ``o200k_base``) and
refuses any other pattern.

>>> tok = load("cl100k_base.tiktoken")                                  # doctest: +SKIP
>>> tok.encode("hello world")                                            # doctest: +SKIP
[15339, 1917]

Pieces are shown as text with GPT-2's byte-to-character table (``" world"`` is ``"Ġworld"``),
the spelling Hugging Face uses for the same vocabularies, so every byte string has one printable
name and ``piece_to_id(id_to_piece(i)) == i``. Special tokens show as their surface.

>>> piece_text(b" world"), piece_bytes("Ġworld")
('Ġworld', b' world')
"""

from __future__ import annotations

import bisect
import gzip
import io
import json
import os
import zlib
from typing import Any, Iterable, Mapping, Optional, Sequence

from ... import _core
from ..._api import _threads, gc_paused
from ...errors import InputError, ModelFileError, UnknownPieceError
from ..._checks import text_arg
from ..._io import read_limited
from ..._checks import batch_list
from ..._specials import AllowedSpecial, allowed_ids
from .._foreign import Foreign, PathLike, native_call

ENDOFTEXT = "<|endoftext|>"
FIM_PREFIX = "<|fim_prefix|>"
FIM_MIDDLE = "<|fim_middle|>"
FIM_SUFFIX = "<|fim_suffix|>"
ENDOFPROMPT = "<|endofprompt|>"

# The patterns as tiktoken 0.14 writes them (tiktoken_ext/openai_public.py), and GPT-2's
# original, which tiktoken notes is equivalent to its r50k string (our tests check both).
GPT2_PATTERN = r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""
R50K_PATTERN = r"""'(?:[sdmt]|ll|ve|re)| ?\p{L}++| ?\p{N}++| ?[^\s\p{L}\p{N}]++|\s++$|\s+(?!\S)|\s"""
CL100K_PATTERN = (
    r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+|\s++$|\s*[\r\n]|\s+(?!\S)|\s"""
)
O200K_PATTERN = "|".join([
    r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
    r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
    r"""\p{N}{1,3}""",
    r""" ?[^\s\p{L}\p{N}]+[\r\n/]*""",
    r"""\s*[\r\n]+""",
    r"""\s+(?!\S)""",
    r"""\s+""",
])

# pattern name (of the core's scanners) -> the regex strings it reproduces
PATTERNS: dict[str, tuple[str, ...]] = {
    "r50k": (R50K_PATTERN, GPT2_PATTERN),
    "cl100k": (CL100K_PATTERN,),
    "o200k": (O200K_PATTERN,),
}

# encoding name -> (pattern name, special tokens), from tiktoken_ext/openai_public.py
ENCODINGS: dict[str, tuple[str, dict[str, int]]] = {
    "gpt2": ("r50k", {ENDOFTEXT: 50256}),
    "r50k_base": ("r50k", {ENDOFTEXT: 50256}),
    "p50k_base": ("r50k", {ENDOFTEXT: 50256}),
    "p50k_edit": ("r50k", {ENDOFTEXT: 50256, FIM_PREFIX: 50281, FIM_MIDDLE: 50282, FIM_SUFFIX: 50283}),
    "cl100k_base": ("cl100k", {ENDOFTEXT: 100257, FIM_PREFIX: 100258, FIM_MIDDLE: 100259, FIM_SUFFIX: 100260,
                               ENDOFPROMPT: 100276}),
    "o200k_base": ("o200k", {ENDOFTEXT: 199999, ENDOFPROMPT: 200018}),
}

MAX_FILE_BYTES = 256 << 20  # o200k_base.tiktoken is 3.6 MB


#: GPT-2's byte-to-character table (printable bytes stand for themselves, the others take the
#: code points from U+0100 on, in byte order), from the core, and its inverse.
BYTE_TO_CHAR: list[str] = _core.gpt2_byte_chars()
CHAR_TO_BYTE: dict[str, int] = {c: b for b, c in enumerate(BYTE_TO_CHAR)}


def piece_text(token: bytes) -> str:
    """A token's bytes as text via GPT-2's table (``b" hi"`` -> ``"Ġhi"``)."""
    return "".join(BYTE_TO_CHAR[b] for b in token)


def piece_bytes(piece: str) -> Optional[bytes]:
    """The inverse of :func:`piece_text`, or None when ``piece`` uses a character outside it."""
    try:
        return bytes(CHAR_TO_BYTE[c] for c in piece)
    except KeyError:
        return None


_text = text_arg


def _no_surrogates(text: str) -> str:
    """tiktoken's handling of lone surrogates (which UTF-8 cannot hold): they become U+FFFD."""
    return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")


def _ids(ids: Iterable[int]) -> list[int]:
    out = list(ids)
    for i in out:
        if isinstance(i, bool) or not isinstance(i, int):
            raise InputError(f"ids must be ints, got {type(i).__name__} {i!r}")
        if not 0 <= i < 2**32 - 1:
            raise UnknownPieceError(f"id {i} is not a token of this vocabulary")
    return out


class TiktokenTokenizer(Foreign):
    """An encoder for a tiktoken rank file with one of OpenAI's patterns; ids, text and
    special-token handling are tiktoken's (``encode(text)`` is tiktoken's
    ``encode(text, disallowed_special=())``)."""

    format = "tiktoken"

    def __init__(self, core: _core.RankBpe, name: Optional[str], pattern: str) -> None:
        self._core = core
        self.name = name
        self.pattern = pattern
        self._enc = core.encoder()
        self._specials = dict(core.specials())
        self._special_by_id = {i: s for s, i in self._specials.items()}
        if type(self).encode is TiktokenTokenizer.encode:
            # ``encode(text)``, the call users make most, as one native call with no Python
            # frame; any other call (a keyword, a text that is not exactly a str or holds a
            # lone surrogate) goes to the method below with the same arguments
            self.__dict__["encode"] = native_call(self, TiktokenTokenizer.encode,
                                                  lambda general: _core.FaceCall.tiktoken(self._enc, False, general))

    def encode(self, text: str, *, allowed_special: AllowedSpecial = (), add_special_tokens: Optional[bool] = None,
               pair: Optional[str] = None) -> list[int]:
        """Ids of ``text`` (see ``Foreign.encode``; a rank file has no template). A plain call (a ``str``, no specials, no
        pair) goes to the core directly: the shared path's checks were 8% of a call per line."""
        if pair is None and not allowed_special and type(text) is str:
            try:
                return self._enc.encode(text, None, [])
            except UnicodeEncodeError:
                return self._enc.encode(_no_surrogates(text), None, [])
        return super().encode(text, allowed_special=allowed_special, add_special_tokens=add_special_tokens,
                              pair=pair)

    def _allowed(self, allowed: AllowedSpecial) -> list[int]:
        return allowed_ids(allowed, self._specials)

    def _encode(self, text: str, allowed: frozenset[str]) -> list[int]:
        """Ids of ``text``. Special surfaces are plain text unless allowed (``"all"`` or a set)."""
        chosen = self._allowed(allowed)
        try:
            return self._enc.encode(text, None, chosen)
        except UnicodeEncodeError:
            return self._enc.encode(_no_surrogates(text), None, chosen)

    def _encode_batch(self, texts: Iterable[str], *, threads: Optional[int] = None,
                      allowed_special: AllowedSpecial = (), add_special_tokens: Optional[bool] = None) -> list[list[int]]:
        """Ids of every text, on ``threads`` threads (default: all cores); the result does not
        depend on the thread count. A rank file has no template: ``add_special_tokens`` changes
        nothing."""
        batch = batch_list(texts)  # the core checks every text's type as it reads them
        n = _threads(threads)
        allowed = self._allowed(allowed_special)
        with gc_paused():  # a collection per 700 new lists would walk all made so far
            try:
                return self._enc.encode_batch(batch, n, allowed)
            except UnicodeEncodeError:
                return self._enc.encode_batch([_no_surrogates(t) for t in batch], n, allowed)

    def encode_buffers(self, batch: Sequence[str], *, threads: Optional[int], width: int, eos: Optional[int] = None,
                       allowed_special: AllowedSpecial = (),
                       add_special_tokens: Optional[bool] = None) -> tuple[bytearray, bytearray]:
        """The ids as one flat buffer filled in the core (see ``Foreign.encode_buffers``)."""
        if eos is not None:
            self.id_to_piece(eos)
        batch = batch_list(batch)
        n = _threads(threads)
        allowed = self._allowed(allowed_special)
        suffix = [] if eos is None else [eos]
        try:
            return self._enc.encode_batch_flat(batch, n, width, allowed, False, suffix)
        except UnicodeEncodeError:
            return self._enc.encode_batch_flat([_no_surrogates(t) for t in batch], n, width, allowed, False, suffix)

    def encode_with_offsets(self, text: str) -> list[tuple[int, int, int]]:
        """``(id, start, end)`` in code points, from each token's bytes: a token spans the
        characters its bytes complete, starting at the character its first byte belongs to; a
        token that completes no character (the first bytes of a split character) is empty."""
        text = _text(text)
        ids = self._encode(text, frozenset())
        # starts[k]: the byte offset where character k starts; starts[-1]: the total
        starts = [0]
        for c in _no_surrogates(text):
            starts.append(starts[-1] + len(c.encode("utf-8")))
        out: list[tuple[int, int, int]] = []
        pos = 0
        for i in ids:
            first = bisect.bisect_right(starts, pos) - 1  # the character holding the first byte
            pos += len(self.token_bytes(i))
            complete = bisect.bisect_right(starts, pos) - 1  # characters whose every byte is in
            out.append((i, min(first, complete), complete))
        return out

    def decode_bytes(self, ids: Iterable[int]) -> bytes:
        """The tokens' bytes joined (special tokens as their surface)."""
        try:
            return self._core.decode_bytes(_ids(ids))
        except UnknownPieceError:
            raise
        except (OverflowError, TypeError) as e:  # pragma: no cover - _ids checks first
            raise InputError(f"ids must be non-negative ints: {e}") from None

    def decode(self, ids: Iterable[int]) -> str:
        """The text of ``ids``; bytes that are not valid UTF-8 become U+FFFD, as tiktoken's
        ``decode(ids, errors="replace")``."""
        return self.decode_bytes(ids).decode("utf-8", errors="replace")

    def token_bytes(self, id: int) -> bytes:
        """The bytes of one id."""
        token = self._core.token(_ids([id])[0])
        if token is None:
            raise UnknownPieceError(f"id {id} is not a token of this vocabulary")
        return token

    def id_to_piece(self, id: int) -> str:
        """A special token's surface, or the token's bytes through GPT-2's byte table."""
        token = self.token_bytes(id)
        if id in self._special_by_id:
            return self._special_by_id[id]
        return piece_text(token)

    def piece_to_id(self, piece: str) -> int:
        """The id of a special surface, or of a piece spelled with GPT-2's byte table."""
        if piece in self._specials:
            return self._specials[piece]
        token = piece_bytes(piece) if isinstance(piece, str) else None
        rank = self._core.rank(token) if token else None
        if rank is None:
            raise UnknownPieceError(f"{piece!r} is not a piece of this vocabulary (pieces spell bytes with "
                                    "GPT-2's table: ' world' is 'Ġworld')")
        return rank

    @property
    def vocab_size(self) -> int:
        """One more than the largest id (tiktoken's ``n_vocab``)."""
        return self._core.vocab_size()

    @property
    def special_tokens(self) -> dict[str, int]:
        return dict(self._specials)

    def __repr__(self) -> str:
        return f"<subwords tiktoken tokenizer {self.name or '(unnamed)'}: {self.vocab_size} ids>"

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        return _rebuild, (self._core.tokens(), self._core.pattern(), self._core.specials(), self.name, self.pattern)


def _rebuild(tokens: list[tuple[bytes, int]], pattern_name: str, specials: list[tuple[str, int]],
             name: Optional[str], pattern: str) -> TiktokenTokenizer:
    """Unpickles a :class:`TiktokenTokenizer`."""
    return TiktokenTokenizer(_core.RankBpe.from_ranks(tokens, pattern_name, specials), name, pattern)


def _pattern_of(pattern: Optional[str], path: str) -> tuple[str, Optional[str]]:
    """(core pattern name, encoding name or None) from ``pattern=`` or the file name."""
    if pattern is not None:
        if not isinstance(pattern, str):
            raise InputError(f"pattern must be a str, got {type(pattern).__name__}")
        if pattern in ENCODINGS:
            return ENCODINGS[pattern][0], pattern
        for name, strings in PATTERNS.items():
            if pattern in strings:
                return name, None
        raise InputError(
            f"pattern={pattern[:80]!r} is not one of OpenAI's patterns; subwords splits text only with "
            f"hand-written equivalents of {', '.join(ENCODINGS)} (custom regex pre-split is not supported). "
            "Pass one of those names, or its exact regex string")
    base = os.path.basename(path)
    for suffix in (".gz", ".tiktoken"):
        if base.endswith(suffix):
            base = base[: -len(suffix)]
    if base in ENCODINGS:
        return ENCODINGS[base][0], base
    raise InputError(f"{path}: cannot tell the encoding's pattern from the file name; "
                     f"pass pattern= one of {', '.join(ENCODINGS)}")


def _read(path: str) -> bytes:
    data = read_limited(path, MAX_FILE_BYTES, "rank file")
    if data[:2] == b"\x1f\x8b":
        try:
            with gzip.GzipFile(fileobj=io.BytesIO(data)) as g:
                data = g.read(MAX_FILE_BYTES + 1)
        except (OSError, EOFError, zlib.error) as e:
            raise ModelFileError(f"{path}: a broken gzip file ({e}); gunzip it or fetch it again") from None
        if len(data) > MAX_FILE_BYTES:
            raise ModelFileError(f"{path}: unpacks to more than a rank file's limit of {MAX_FILE_BYTES} bytes")
    return data


def specials_path(path: PathLike) -> str:
    """Where subwords' export writes a rank file's special tokens (JSON, surface -> id), and
    where :func:`load` looks for them first when no ``special_tokens`` are given: the rank
    file's name with ``.special_tokens.json`` added."""
    return os.fspath(path) + ".special_tokens.json"


def load(path: PathLike, format: str = "tiktoken", *, pattern: Optional[str] = None,
         special_tokens: Optional[Mapping[str, int]] = None) -> TiktokenTokenizer:
    """A tokenizer from a ``.tiktoken`` rank file (gzip accepted).

    ``pattern`` is an encoding name (``"cl100k_base"``) or its exact regex string; by default it
    comes from the file name (``cl100k_base.tiktoken``). ``special_tokens`` (surface -> id)
    defaults to those in the file's ``.special_tokens.json`` (written by subwords' export) when
    there is one, else the named encoding's, or none when only a regex string names the pattern.
    """
    if format != "tiktoken":
        raise InputError(f"subwords.formats.tiktoken reads format='tiktoken', not {format!r}")
    p = os.fspath(path)
    pattern_name, encoding = _pattern_of(pattern, p)
    if special_tokens is None and os.path.isfile(specials_path(p)):
        # the special tokens subwords' export wrote beside the rank file
        raw = read_limited(specials_path(p), 1 << 26, "special-token file")
        try:
            special_tokens = json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, ValueError):
            raise ModelFileError(f"{specials_path(p)}: not a JSON object of special tokens (surface -> id)") from None
        if not isinstance(special_tokens, dict):
            raise ModelFileError(f"{specials_path(p)}: not a JSON object of special tokens (surface -> id)")
    if special_tokens is None:
        specials = dict(ENCODINGS[encoding][1]) if encoding else {}
    else:
        if not isinstance(special_tokens, Mapping):
            raise InputError(f"special_tokens must map surface -> id, got {type(special_tokens).__name__}")
        specials = dict(special_tokens)
        for s, i in specials.items():
            if not isinstance(s, str) or not s or isinstance(i, bool) or not isinstance(i, int) or not 0 <= i < 2**31:
                raise InputError(f"special_tokens: {s!r} -> {i!r} must be a non-empty str -> a non-negative int")
    data = _read(p)
    try:
        core = _core.RankBpe.from_rank_file(data, pattern_name, sorted(specials.items(), key=lambda kv: kv[1]))
    except ModelFileError as e:
        raise ModelFileError(f"{p}: {e}") from None
    text = {"r50k": R50K_PATTERN, "cl100k": CL100K_PATTERN, "o200k": O200K_PATTERN}[pattern_name]
    return TiktokenTokenizer(core, encoding or os.path.basename(p), text)
