"""subword-nmt codes files: read them and segment exactly as ``subword_nmt.apply_bpe.BPE``, and
write a subwords BPE model (``end`` spelling) as a codes file.

What apply_bpe does (subword-nmt 0.3.8, read to learn the semantics; nothing copied):

* A line is stripped of ``\\r``, ``\\n`` and ``' '`` at both ends and split on ``' '`` only; empty
  words (space runs) are dropped. Tabs, no-break spaces and every other character belong to the
  word they stand in.
* Version 0.2 (what ``learn_bpe`` writes): a word's symbols are its characters, the last one
  carrying ``</w>`` (``low`` -> ``l o w</w>``). Version 0.1: the characters and then a separate
  ``</w>`` symbol. A one-character word is never merged at all (it is returned as it is).
* Merges: of the adjacent pairs present, the one listed first in the file wins; every occurrence
  of it is merged, left to right, without overlap; repeat until no listed pair is present. A pair
  listed twice counts at its first line.
* Output: ``</w>`` is removed from the word's last piece (a bare ``</w>`` piece is dropped), and
  every piece but a word's last gets the separator ``@@``: ``lo@@ west``. A character that no merge
  mentions stays as it is.

:class:`SubwordNmt` reproduces that as text (``segment``, ``process_line``, ``segment_tokens``,
``segment_word``) and as ids. subword-nmt has no ids (an NMT toolkit numbers the segmented text
later), so the ids are this module's: the rows of the subwords model built from the codes --
``[UNK]`` (id 0), then (version 0.1 only) the bare ``</w>`` row, then every character of the codes
both plain and with ``</w>`` in code-point order, then each merge's joined piece in file order
(a piece made twice keeps its first row). A symbol with no row (a character no merge mentions)
is ``[UNK]``; the text output keeps the character itself, as subword-nmt does.

Version 0.2 codes written as ``learn_bpe`` writes them (each part a symbol or an earlier line's
piece) become a :class:`~subwords.SubwordsTokenizer` on the ``end`` spelling, which replays
merges by the same rule, so ``encode`` and ``segment`` run in Rust for every text whose only
whitespace is ``' '`` (inside the stripped line) and that holds no literal ``</w>`` (``segment``
prints each piece as the text its offsets cover, so unknown characters print as themselves).
Other texts (tabs, no-break spaces, newlines inside a line, surrogates) and other codes take a
pure-Python path with the same rule and a cache per word, as apply_bpe keeps. The two are
checked against each other and against subword-nmt in the tests.

Options: ``merges=N`` (use the first N lines, as ``apply_bpe --merges``) and ``separator=``
(``--separator``) are supported. ``vocab``/``vocabulary_threshold`` (``--vocabulary``),
``glossaries`` and ``dropout`` are refused: they are not implemented here, and passing them
silently would segment differently.
"""

from __future__ import annotations

import functools
import os
import re
from typing import TYPE_CHECKING, Any, Iterable, Optional

from ... import _core
from ...errors import InputError, ModelFileError
from ..._checks import text_arg
from ..._io import read_limited, write_atomic
from .write import END, codes_text
from ..._checks import batch_arg
from ..._specials import AllowedSpecial
from .._foreign import Foreign, PathLike, allowed_set

if TYPE_CHECKING:
    from ..._api import SubwordsTokenizer

# Unicode White_Space (what subwords' spellings split on) other than U+0020, the only character
# subword-nmt splits on: a text free of these (inside the stripped line) splits the same way.
_OTHER_WHITESPACE = re.compile("[\t\n\x0b\x0c\r\x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]")
_SURROGATE = re.compile("[\ud800-\udfff]")
MAX_CODES_FILE_BYTES = 1 << 30
_END_SPELLING = {"scheme": "end", "mark": END}
_UNSUPPORTED = {
    "vocab": "--vocabulary (reverting merges that make pieces outside a vocabulary)",
    "vocabulary_threshold": "--vocabulary-threshold",
    "glossaries": "--glossaries",
    "dropout": "--dropout (BPE-dropout; use a subwords model's encode(dropout=, seed=))",
}


def _read_codes(p: str, raw: bytes, merges: int) -> tuple[tuple[int, int], list[tuple[str, str]]]:
    """Version and merge pairs (duplicates kept, file order); the error that names the line."""
    if raw.startswith(b"\xef\xbb\xbf"):
        raise ModelFileError(f"{p}: starts with a UTF-8 byte-order mark, which subword-nmt reads as part of "
                             "the first line (the '#version' header then becomes a merge); remove the BOM")
    lines = raw.split(b"\n")
    for n, line in enumerate(lines, 1):
        try:
            line.decode("utf-8")
        except UnicodeDecodeError as e:
            raise ModelFileError(f"{p}: line {n}: invalid UTF-8 (byte 0x{line[e.start]:02X}); a codes file is UTF-8 text") from None
        if b"\r" in line.rstrip(b"\r"):
            raise ModelFileError(f"{p}: line {n}: a carriage return inside the line; readers disagree on whether "
                                 "it ends the line, so the file is ambiguous: use \\n line ends")
    text = raw.decode("utf-8")
    first, _, rest = text.partition("\n")
    start = 1
    if first.startswith("#version:"):
        word = first.split()[-1] if first.split() else ""
        stripped = re.sub(r"(\.0+)*$", "", word)
        if stripped == "0.2":
            version = (0, 2)
        elif stripped == "0.1":
            version = (0, 1)
        else:
            raise ModelFileError(f"{p}: line 1: codes version {word!r}; subword-nmt (and subwords) read versions 0.1 and 0.2")
        body = rest
        start = 2
    else:
        version = (0, 1)  # subword-nmt reads a file without the header as version 0.1
        body = text
    # as apply_bpe: trailing newlines go, every other line is a merge
    items = body.rstrip("\n").split("\n") if body.strip("\r\n ") else []
    pairs: list[tuple[str, str]] = []
    for k, item in enumerate(items):
        if merges != -1 and k >= merges:
            break
        parts = item.strip("\r\n ").split(" ")
        if len(parts) != 2 or not parts[0] or not parts[1]:
            what = "an empty line" if not item.strip("\r\n ") else repr(item.strip("\r\n "))
            raise ModelFileError(f"{p}: line {k + start}: {what} is not a merge; each line after the "
                                 "'#version' header is two symbols separated by one space, e.g. 'e s</w>'")
        pairs.append((parts[0], parts[1]))
    if not pairs:
        raise ModelFileError(f"{p}: no merges (subword-nmt refuses a codes file without merges); "
                             "was it truncated, or learned with too few symbols?")
    return version, pairs


def _is_end_spelling_model(pairs: list[tuple[str, str]]) -> bool:
    """True when the codes are merges of a subwords ``end`` model: every ``</w>`` is the end
    mark of a right part with a body, and each part is one symbol or the piece of an earlier
    line (what ``learn_bpe`` writes). Hand-made codes can break the second rule (apply_bpe still
    applies them once the part exists); those encode on the pure-Python path."""
    made: set[str] = set()
    for a, b in pairs:
        if END in a:
            return False
        body = b[:-len(END)] if b.endswith(END) else b
        if not body or END in body:
            return False
        if (len(a) > 1 and a not in made) or (len(body) > 1 and b not in made):
            return False
        made.add(a + b)
    return True


class SubwordNmt(Foreign):
    """A codes file read as subword-nmt reads it (see the module docstring).

    >>> import pathlib, tempfile
    >>> with tempfile.TemporaryDirectory() as d:
    ...     path = pathlib.Path(d, "codes")
    ...     _ = path.write_text("#version: 0.2\\ne s\\nes t</w>\\nl o\\nlo w</w>\\n", encoding="utf-8")
    ...     bpe = SubwordNmt(path)
    >>> bpe.segment("lowest low slow")
    'lo@@ w@@ est low s@@ low'
    >>> bpe.encode_pieces("lowest low")
    ['lo@@', 'w@@', 'est', 'low']
    >>> [bpe.id_to_piece(i) for i in bpe.encode("lowest low")]
    ['lo', 'w', 'est</w>', 'low</w>']
    """

    format = "subword-nmt"

    def __init__(self, path: PathLike, *, merges: int = -1, separator: str = "@@") -> None:
        if isinstance(merges, bool) or not isinstance(merges, int) or merges < -1:
            raise InputError(f"merges must be -1 (all) or a whole number of merges to use, got {merges!r}")
        if not isinstance(separator, str):
            raise InputError(f"separator must be a string, got {separator!r}")
        self.path = os.fspath(path)
        self.separator = separator
        self._cache: dict[str, tuple[str, ...]] = {}
        raw = read_limited(self.path, MAX_CODES_FILE_BYTES, "codes file")
        # the core reads a plainly well-formed file, and builds its model (a reader
        # in Python took 172 ms for 32k merges, subword-nmt's own 32 ms); for any other file it
        # answers None, and the Python reader below reads it and names what is wrong
        from ..._api import _wrap

        # more merges than a file could hold is all of them (and fits the core's integer)
        fast = _core.SnmtCodes.read(raw, merges if merges < 1 << 62 else -1, _END_SPELLING)
        self._tokenizer: Optional[SubwordsTokenizer]
        if fast is not None:
            self._core_codes: Optional[_core.SnmtCodes] = fast[0]
            self.version = fast[0].version
            self._tokenizer = None if fast[1] is None else _wrap(fast[1])
            return
        self._core_codes = None
        self.version, pairs = _read_codes(self.path, raw, merges)
        self.codes = pairs
        self._tokenizer = self._build_tokenizer() if self.version == (0, 2) and _is_end_spelling_model(pairs) else None

    # -- the vocabulary ------------------------------------------------------------------------
    # made on first use: a file read by the core has its model already, and needs these only
    # for the texts its model does not segment (see ``_fast``), ids and ``save_codes``
    @functools.cached_property
    def codes(self) -> list[tuple[str, str]]:
        """The merges in file order (``merges=`` applied), a pair listed twice kept twice."""
        assert self._core_codes is not None  # the Python reader sets the attribute itself
        return self._core_codes.pairs()

    @functools.cached_property
    def _rank(self) -> dict[tuple[str, str], int]:
        rank: dict[tuple[str, str], int] = {}
        for r, pair in enumerate(self.codes):
            rank.setdefault(pair, r)
        return rank

    @functools.cached_property
    def _rows(self) -> list[str]:
        return self._build_rows()

    @functools.cached_property
    def _ids(self) -> dict[str, int]:
        ids: dict[str, int] = {}
        for i, piece in enumerate(self._rows):
            if i > 0:
                ids.setdefault(piece, i)
        return ids

    def _build_rows(self) -> list[str]:
        chars: set[str] = set()
        for a, b in self.codes:
            for part in (a, b):
                chars.update(part[:-len(END)] if part.endswith(END) else part)
        chars.discard("")
        rows = ["[UNK]"] + ([END] if self.version == (0, 1) else [])
        rows += [s for c in sorted(chars) for s in (c, c + END)]
        self._alphabet_end = len(rows)
        seen = set(rows)
        for a, b in self.codes:
            joined = a + b
            if joined not in seen:
                seen.add(joined)
                rows.append(joined)
        return rows

    def _build_tokenizer(self) -> SubwordsTokenizer:
        """The same rows and merges as a subwords model on the end spelling (encodes in Rust)."""
        from ..._api import from_parts

        rows_text = self._rows
        alphabet_end = self._alphabet_end
        rows = [("[UNK]", "special")]
        rows += [(r, "alphabet") for r in rows_text[1:alphabet_end]]
        rows += [(r, "learned") for r in rows_text[alphabet_end:]]
        merges = [pair for pair, rank in sorted(self._rank.items(), key=lambda kv: kv[1])]
        try:
            return from_parts("bpe", _END_SPELLING, rows, merges)
        except ModelFileError as e:
            raise ModelFileError(f"{self.path}: {e}") from None

    @property
    def tokenizer(self) -> Optional[SubwordsTokenizer]:
        """The subwords model these codes make (version 0.2 codes), or None."""
        return self._tokenizer

    @property
    def vocab_size(self) -> int:
        # the model has the same rows, and its size without making the Python rows
        return self._tokenizer.vocab_size if self._tokenizer is not None else len(self._rows)

    @property
    def rows(self) -> list[str]:
        return list(self._rows)

    def id_to_piece(self, id: int) -> str:
        from ...errors import UnknownPieceError

        if isinstance(id, bool) or not isinstance(id, int) or not 0 <= id < len(self._rows):
            raise UnknownPieceError(f"{id!r} is not an id of this vocabulary ({len(self._rows)} rows)")
        return self._rows[id]

    def piece_to_id(self, piece: str) -> int:
        from ...errors import UnknownPieceError

        if piece == "[UNK]":
            return 0
        i = self._ids.get(piece) if isinstance(piece, str) else None
        if i is None:
            raise UnknownPieceError(f"{piece!r} is not a row of this vocabulary")
        return i

    # -- segmentation as subword-nmt -----------------------------------------------------------
    def symbols(self, word: str) -> tuple[str, ...]:
        """The word after every merge, ``</w>`` still on its last symbol (subword-nmt's inner form)."""
        cached = self._cache.get(word)
        if cached is not None:
            return cached
        if len(word) == 1:
            return (word + END,) if self.version == (0, 2) else (word, END)
        if self.version == (0, 2):
            syms = list(word[:-1]) + [word[-1] + END]
        else:
            syms = list(word) + [END]
        rank = self._rank
        while len(syms) > 1:
            best = None
            for k in range(len(syms) - 1):
                r = rank.get((syms[k], syms[k + 1]))
                if r is not None and (best is None or r < best):
                    best = r
            if best is None:
                break
            left, right = self.codes[best]
            joined = left + right
            out: list[str] = []
            k = 0
            n = len(syms)
            while k < n:
                if k + 1 < n and syms[k] == left and syms[k + 1] == right:
                    out.append(joined)
                    k += 2
                else:
                    out.append(syms[k])
                    k += 1
            syms = out
        result = tuple(syms)
        self._cache[word] = result
        return result

    def segment_word(self, word: str) -> tuple[str, ...]:
        """One word's pieces as subword-nmt prints them (no separator, no ``</w>``)."""
        syms = self.symbols(word)
        if len(word) == 1:
            return (word,)
        last = syms[-1]
        if last == END:
            return syms[:-1]
        if last.endswith(END):
            return syms[:-1] + (last[:-len(END)],)
        return syms

    def segment_tokens(self, tokens: Iterable[str]) -> list[str]:
        """As ``BPE.segment_tokens``: every piece but a word's last carries the separator."""
        out: list[str] = []
        sep = self.separator
        for word in tokens:
            if not word:
                continue
            pieces = self.segment_word(word)
            out.extend(p + sep for p in pieces[:-1])
            out.append(pieces[-1])
        return out

    def segment(self, line: str) -> str:
        """As ``BPE.segment``: the line's words segmented, joined by one space."""
        _check_text(line)
        if self._fast(line):
            return self._segment_fast(line)
        return " ".join(self.segment_tokens(line.strip("\r\n ").split(" ")))

    def _segment_fast(self, line: str) -> str:
        """``segment`` from the Rust encoding: each piece prints as the text it covers (so a
        symbol with no row prints as itself), pieces of one word touch, words are apart."""
        text = line.strip("\r\n ")
        out: list[str] = []
        sep = self.separator + " "
        last = -1
        assert self._tokenizer is not None  # segment() calls this only when _fast(line)
        for _, start, end in self._tokenizer.encode_with_offsets(text):
            if out:
                out.append(sep if start == last else " ")
            out.append(text[start:end])
            last = end
        return "".join(out)

    def process_line(self, line: str) -> str:
        """As ``BPE.process_line``: ``segment`` keeping the line's leading and trailing whitespace."""
        _check_text(line)
        lead = len(line) - len(line.lstrip("\r\n "))
        trail = len(line) - len(line.rstrip("\r\n "))
        out = line[:lead] + self.segment(line)
        if trail and trail != len(line):
            out += line[-trail:]
        return out

    # -- ids -----------------------------------------------------------------------------------
    def _fast(self, text: str) -> bool:
        inner = text.strip("\r\n ")
        return (self._tokenizer is not None and END not in inner and _OTHER_WHITESPACE.search(inner) is None
                and _SURROGATE.search(inner) is None)

    def _encode_slow(self, text: str) -> list[int]:
        ids: list[int] = []
        for word in text.strip("\r\n ").split(" "):
            if not word:
                continue
            if END in word:
                raise InputError(f"the word {word!r} contains the end mark {END!r}: subword-nmt segments it, "
                                 "but its pieces have no ids here (they would read as word ends); use segment() for text")
            ids.extend(self._ids.get(s, 0) for s in self.symbols(word))
        return ids

    def _encode(self, text: str, allowed: frozenset[str]) -> list[int]:
        """Ids of the pieces ``segment(text)`` prints (``[UNK]`` for symbols no merge mentions).
        A codes file has no special tokens, so ``allowed_special`` accepts only the empty choice."""
        if self._tokenizer is not None and self._fast(text):
            return self._tokenizer.encode(text)
        return self._encode_slow(text)

    def _encode_batch(self, texts: Iterable[str], *, threads: Optional[int] = None,
                      allowed_special: AllowedSpecial = (), add_special_tokens: Optional[bool] = None) -> list[list[int]]:
        batch = batch_arg(texts)
        allowed_set(allowed_special, ())
        if self._tokenizer is not None and all(self._fast(t) for t in batch):
            return self._tokenizer.encode_batch(batch, threads=threads)
        return [self.encode(t) for t in batch]

    def encode_pieces(self, text: str, *, allowed_special: AllowedSpecial = (),
                      add_special_tokens: Optional[bool] = None) -> list[str]:
        """subword-nmt's pieces, as ``segment(text)`` prints them: every piece of a word but the
        last carries the separator (``lo@@ w@@ est``); ``decode_pieces`` reads them back. (The
        rows, ``id_to_piece``, spell the word end with ``</w>`` instead.)"""
        allowed_set(allowed_special, ())
        line = self.segment(text)
        return line.split(" ") if line else []

    def encode_with_offsets(self, text: str) -> list[tuple[int, int, int]]:
        """``(id, start, end)`` in code points: each piece is the next stretch of its word."""
        text = _check_text(text)
        ids = self.encode(text)
        sep = self.separator
        pieces = [p[:-len(sep)] if p.endswith(sep) else p for p in self.encode_pieces(text)]
        if len(pieces) != len(ids):  # pragma: no cover - every symbol is one id and one piece
            raise InputError("this text's pieces and ids do not pair up; offsets are not available for it")
        out: list[tuple[int, int, int]] = []
        pos = 0
        for i, piece in zip(ids, pieces):
            start = text.index(piece, pos)
            out.append((i, start, start + len(piece)))
            pos = start + len(piece)
        return out

    def decode(self, ids: Iterable[int]) -> str:
        """The pieces joined, each ``</w>`` read as a space (the last one dropped); ``[UNK]``
        prints as ``[UNK]``."""
        text = "".join(self.id_to_piece(i) for i in ids).replace(END, " ")
        return text[:-1] if text.endswith(" ") else text

    def decode_pieces(self, pieces: Iterable[str]) -> str:
        """Text from pieces as ``segment`` prints them: a piece ending in the separator joins
        the next one (subword-nmt's ``sed -r 's/(@@ )|(@@ ?$)//g'``); words are joined by a space."""
        out: list[str] = []
        sep = self.separator
        glue = False
        for piece in pieces:
            if not isinstance(piece, str):
                raise InputError(f"a piece is a str, got {type(piece).__name__}")
            if out and not glue:
                out.append(" ")
            glue = piece.endswith(sep)
            out.append(piece[: -len(sep)] if glue else piece)
        return "".join(out)

    def save_codes(self, path: PathLike) -> None:
        """Writes these codes (as read, ``merges=`` applied) as a version-0.2/0.1 codes file."""
        write_atomic(path, codes_text(self.codes, self.version), "subword-nmt codes file")

    def __repr__(self) -> str:
        return f"<subwords subword-nmt codes v{self.version[0]}.{self.version[1]}: {len(self.codes)} merges, {self.vocab_size} ids>"


_check_text = text_arg


def load(path: PathLike, format: str = "subword-nmt", **options: Any) -> SubwordNmt:
    """Reads a subword-nmt codes file. Options: ``merges`` (first N, -1 = all), ``separator``."""
    if format != "subword-nmt":
        raise InputError(f"subword_nmt.load reads format='subword-nmt', not {format!r}")
    for name in options:
        if name in _UNSUPPORTED:
            raise InputError(f"{name}= is apply_bpe's {_UNSUPPORTED[name]}, which subwords does not reproduce; "
                             "segment with subword-nmt itself for that")
        if name not in ("merges", "separator"):
            raise InputError(f"unknown option {name}= for subword-nmt codes (supported: merges, separator)")
    return SubwordNmt(path, **options)
