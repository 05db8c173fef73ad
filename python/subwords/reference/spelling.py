"""Spellings: how a text becomes units of symbols, and how pieces become text again.

A learner never knows what a mark is. It receives *units already spelled in symbols, with
counts*, and a way to join two pieces. Everything else about text lives here:

* the split of a text into **units** (words, ``▁`` + word, byte chunks, joint-cut parts),
* the **symbols** a unit is spelled in (``low`` is ``l o w</w>`` under ``end``),
* how two pieces **join** (``l`` + ``##o`` is ``lo`` under ``continuation``),
* **byte fallback** for a symbol with no row, and
* **decoding**: the spelling run backwards.

Worked example, the four words of the BPE page (``low`` 5, ``lower`` 2, ``newest`` 6,
``widest`` 3) under each spelling::

    end           low    -> l o w</w>          (3 symbols; 79 pieces for the 16 words)
    continuation  low    -> l ##o ##w
    front         low    -> ▁ l o w            (4 symbols; 95 pieces for the 16 words)
    bytes         low    -> 6C 6F 77           (printed l o w in the GPT-2 byte alphabet)

Under ``end`` the ``w`` that ends ``low`` (``w</w>``) and the ``w`` inside ``lower`` are two
different symbols, which is why the four words need 11 symbols and not 10.

Whitespace means the Unicode White_Space property (the set below), not ``str.isspace``, which
also counts U+001C..U+001F; the Rust engine uses ``char::is_whitespace``, which agrees with this
set.

A word containing the ``end`` mark (``</w>``), or beginning with the ``continuation`` mark
(``##``), is refused with :class:`~subwords.errors.InputError`: its pieces could not be told
apart from pieces of other words, and decoding could not put it back.
"""

from __future__ import annotations

from collections.abc import Callable, Container, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Generic, Optional, TypeVar, Union, cast

from subwords.errors import InputError, SubwordsError

#: Unicode White_Space: what every spelling treats as a space.
WHITESPACE = frozenset(
    "\t\n\x0b\x0c\r \x85\xa0\u1680"
    + "".join(chr(c) for c in range(0x2000, 0x200B))
    + "\u2028\u2029\u202f\u205f\u3000"
)

#: The GPT-2 pre-split pattern (needs the third-party ``regex`` module for ``\p{L}``).
GPT2_PATTERN = r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""

#: Row keys that are not pieces. Pieces are ``str`` (``bytes`` under the bytes spelling).
UNK = ("special", "[UNK]")
MARKER = ("marker",)


Piece = Union[str, bytes]
#: A row's key: its piece, or a tag tuple (``UNK``, ``MARKER``, ``byte_row(n)``).
RowKey = Union[str, bytes, "tuple[Any, ...]"]


def byte_row(value: int) -> RowKey:
    """The key of byte-fallback row ``<0xNN>``."""
    return ("byte", value)
#: The pieces of one spelling: ``str``, or ``bytes`` under the bytes spelling.
P = TypeVar("P", str, bytes)


@dataclass(frozen=True)
class Unknown:
    """A symbol with no row (dropped by an alphabet limit, or never seen in training).

    It stands where the symbol stood, never takes part in a pair, and becomes ``[UNK]`` or its
    byte-fallback rows when the unit is turned into ids.
    """

    symbol: Piece


def is_whitespace(ch: str) -> bool:
    return ch in WHITESPACE


def split_words(text: str) -> list[str]:
    """The maximal runs of non-whitespace characters, in order."""
    out: list[str] = []
    start = None
    for i, ch in enumerate(text):
        if ch in WHITESPACE:
            if start is not None:
                out.append(text[start:i])
                start = None
        elif start is None:
            start = i
    if start is not None:
        out.append(text[start:])
    return out


def check_text(text: str, where: str = "text") -> None:
    """Refuse a ``str`` holding a lone surrogate (it has no UTF-8 spelling)."""
    for i, ch in enumerate(text):
        if 0xD800 <= ord(ch) <= 0xDFFF:
            raise InputError(
                f"{where} holds a lone surrogate U+{ord(ch):04X} at code point {i}; "
                "it has no UTF-8 encoding. Fix the text, or decode its source with "
                "errors='replace'."
            )


def utf8_rows(ch: str) -> list[RowKey]:
    """Byte-fallback rows spelling the characters ``ch``."""
    return [byte_row(b) for b in ch.encode("utf-8")]


# The GPT-2 printable stand-ins for the 256 byte values: bytes that print as themselves keep
# their own code point, the other 68 are given U+0100 onwards in byte order (so space is Ġ).
def _gpt2_alphabet() -> list[str]:
    keep = set(range(0x21, 0x7F)) | set(range(0xA1, 0xAD)) | set(range(0xAE, 0x100))
    out = []
    extra = 0
    for b in range(256):
        if b in keep:
            out.append(chr(b))
        else:
            out.append(chr(0x100 + extra))
            extra += 1
    return out


GPT2_BYTE_TO_CHAR = _gpt2_alphabet()
GPT2_CHAR_TO_BYTE = {c: b for b, c in enumerate(GPT2_BYTE_TO_CHAR)}

Joints = Union[None, Mapping[str, "list[str]"], Callable[[str], "Optional[list[str]]"]]


class Spelling(Generic[P]):
    """Shared behaviour; one subclass per scheme. ``P`` is the type of its pieces."""

    name: str
    mark: str | None = None
    has_unk = True
    #: Spellings whose byte fallback needs a bare marker row (``</w>`` / ``##``).
    has_marker_row = False

    # -- text -> units -------------------------------------------------------------------
    def normalize(self, text: str) -> str:
        raise NotImplementedError

    def units(self, text: str) -> list[tuple[P, ...]]:
        """The text's units in order, each spelled as a tuple of symbols."""
        raise NotImplementedError

    def normalizations(self, text: str) -> list[str]:
        """Which normalizations changed ``text`` (only ``front`` has any)."""
        return []

    # -- pieces ----------------------------------------------------------------------------
    def join(self, left: P, right: P) -> P:
        return left + right

    def show(self, piece: P) -> str:
        """A piece as the pages print it."""
        return piece  # type: ignore[return-value]  # text pieces print as themselves; bytes overrides

    def parse(self, printed: str) -> P | None:
        """The piece printed as ``printed`` (inverse of :meth:`show`), or None."""
        return printed  # type: ignore[return-value]  # text pieces are their printed form; bytes overrides

    def fallback(self, symbol: P, alphabet: Container[P]) -> list[RowKey]:
        """Rows for a symbol with no row of its own, when byte fallback is on."""
        raise NotImplementedError

    # -- rows -> bytes -----------------------------------------------------------------------
    def decode(self, keys: list[RowKey]) -> bytes:
        raise NotImplementedError


def _row_bytes_plain(key: RowKey) -> bytes | None:
    """Bytes of the rows every text spelling decodes the same way, else None."""
    if key == UNK:
        return b"[UNK]"
    if isinstance(key, tuple) and key[0] == "byte":
        return bytes([key[1]])
    return None


class _WordSpelling(Spelling[str]):
    """``end`` and ``continuation``: units are whitespace-separated words (or their joint parts)."""

    mark: str

    def __init__(self, mark: str, joints: Joints = None) -> None:
        self.mark = mark
        self.joints = joints

    def normalize(self, text: str) -> str:
        check_text(text)
        words = split_words(text)
        for w in words:
            self._check_word(w)
        return " ".join(words)

    def _check_word(self, word: str) -> None:
        raise NotImplementedError

    def parts(self, word: str) -> list[str]:
        """The word cut at its joints (``undo`` -> ``un``, ``do``), or the word alone."""
        if self.joints is None:
            return [word]
        if callable(self.joints):
            parts = self.joints(word)
        else:
            parts = self.joints.get(word)
        if not parts:  # None or empty: the word is not cut
            return [word]
        return check_parts(word, parts)

    def units(self, text: str) -> list[tuple[str, ...]]:
        check_text(text)
        out: list[tuple[str, ...]] = []
        for word in split_words(text):
            self._check_word(word)
            parts = self.parts(word)
            for k, part in enumerate(parts):
                out.append(self.spell_part(part, first=k == 0, last=k == len(parts) - 1))
        return out

    def spell_part(self, part: str, first: bool, last: bool) -> tuple[str, ...]:
        raise NotImplementedError


def check_parts(word: str, parts: Iterable[object]) -> list[str]:
    """Validate a joint cut: non-empty string parts that spell the word exactly."""
    if isinstance(parts, str) or not all(isinstance(p, str) and p for p in parts):
        raise SubwordsError(
            f"joints for {word!r} must be a list of non-empty strings, got {parts!r}"
        )
    cut = cast("list[str]", list(parts))  # strings all (checked above)
    if "".join(cut) != word:
        raise SubwordsError(
            f"joints for {word!r} must concatenate to the word itself, got {cut!r}"
        )
    return cut


class EndSpelling(_WordSpelling):
    """Sennrich: the last symbol of each word carries the mark. ``low`` -> ``l o w</w>``.

    Decoding concatenates the pieces, turns every mark into a space and drops the final space.
    """

    name = "end"
    has_marker_row = True

    def _check_word(self, word: str) -> None:
        if self.mark in word:
            raise InputError(
                f"the word {word!r} contains the end mark {self.mark!r}; its pieces would be "
                "indistinguishable from word-final pieces. Train with another mark=."
            )

    def spell_part(self, part: str, first: bool, last: bool) -> tuple[str, ...]:
        symbols = list(part)
        if last:
            symbols[-1] += self.mark
        return tuple(symbols)

    def fallback(self, symbol: str, alphabet: Container[str]) -> list[RowKey]:
        # An unknown final ``c</w>``: the plain row ``c`` if there is one, else the bytes of
        # ``c``; then the bare ``</w>`` row, so the space still comes back.
        if symbol.endswith(self.mark):
            ch = symbol[: -len(self.mark)]
            head: list[RowKey] = [ch] if ch in alphabet else utf8_rows(ch)
            return head + [MARKER]
        return utf8_rows(symbol)

    def decode(self, keys: list[RowKey]) -> bytes:
        out = bytearray()
        for key in keys:
            plain = _row_bytes_plain(key)
            if plain is not None:
                out += plain
            elif key == MARKER:
                out += b" "
            else:
                out += cast(str, key).replace(self.mark, " ").encode("utf-8")  # the other keys are pieces
        if out.endswith(b" "):
            del out[-1]
        return bytes(out)


#: Opens the key of a word-first piece whose text begins with the continuation mark (the word
#: ``##word`` starts with such a piece). Whether a piece continues a word is a property of its
#: row, not of its letters: ``WORD_START + "##a"`` (the word ``##a``) and ``"##a"`` (``a``
#: continued) are two rows that print alike. A lone surrogate is never in checked text
#: (:func:`check_text`), so no other piece holds it. The Rust core does the same with the byte
#: 0xFF, which sorts after every UTF-8 text: :func:`key_order` sorts such keys last as well.
WORD_START = "\udfff"


def key_order(piece: Any) -> tuple[bool, Any]:
    """Sort key of symbol texts: code-point order, keys opened by :data:`WORD_START` last."""
    return (isinstance(piece, str) and piece.startswith(WORD_START), piece)


def piece_text(key: str) -> str:
    """The piece a key stands for (without :data:`WORD_START`)."""
    return key[1:] if key.startswith(WORD_START) else key


class ContinuationSpelling(_WordSpelling):
    """WordPiece: the first symbol is plain, every other carries ``##``. ``low`` -> ``l ##o ##w``.

    Joining strips the right piece's mark (``##e`` + ``##s`` = ``##es``). Decoding: a piece
    without the mark starts a new word, a ``##`` piece continues the current one. A word may
    itself begin with the mark (``##a`` is ``#``, ``###``, ``##a``): a word-first piece whose
    text begins with the mark is keyed with :data:`WORD_START` in front, so ``#`` + ``###`` is
    the word-first ``##``, never a continuation.

        >>> sp = ContinuationSpelling("##")
        >>> sp.join(sp.join("#", "###"), "##a") == WORD_START + "##a"
        True
        >>> sp.decode([WORD_START + "##a", "##b"])
        b'##ab'
    """

    name = "continuation"
    has_marker_row = True

    def _check_word(self, word: str) -> None:
        pass  # any word: the word-start property is on the row (WORD_START)

    def refuse_word_start(self, text: str) -> None:
        """For the learners that join texts without the word-start property (Unigram's seed,
        the word model): refuse a unit that starts a word with the mark, as the Rust core does."""
        for unit in self.units(text):
            if not unit or unit[0].startswith(self.mark):
                continue  # a part after a joint: it continues its word
            word = piece_text(unit[0]) + "".join(s[len(self.mark):] for s in unit[1:])
            if word.startswith(self.mark):
                raise InputError(
                    f"the word {word!r} holds the continuation mark {self.mark!r}; its pieces would be "
                    "indistinguishable from marked pieces. Train with pre_split=\"bert\" or another mark=."
                )

    def spell_part(self, part: str, first: bool, last: bool) -> tuple[str, ...]:
        chars = list(part)
        out = [ch if (first and k == 0) else self.mark + ch for k, ch in enumerate(chars)]
        if first and out and out[0].startswith(self.mark):  # a one-character mark opens the word
            out[0] = WORD_START + out[0]
        return tuple(out)

    def join(self, left: str, right: str) -> str:
        if not right.startswith(self.mark):
            raise SubwordsError("continuation pieces cannot join across words")
        joined = left + right[len(self.mark):]
        if not left.startswith((self.mark, WORD_START)) and joined.startswith(self.mark):
            return WORD_START + joined  # a word-first piece stays one
        return joined

    def show(self, piece: str) -> str:
        return piece_text(piece)

    def fallback(self, symbol: str, alphabet: Container[str]) -> list[RowKey]:
        if symbol.startswith(WORD_START):
            return utf8_rows(symbol[1:])
        # ``##c`` is never replaced by the plain ``c`` row (that would start a new word).
        if symbol.startswith(self.mark):
            return [MARKER] + utf8_rows(symbol[len(self.mark):])
        return utf8_rows(symbol)

    def decode(self, keys: list[RowKey]) -> bytes:
        out = bytearray()
        prev = None  # "byte", "marker" or "piece"
        for key in keys:
            if key == MARKER:
                prev = "marker"
                continue
            if isinstance(key, tuple) and key[0] == "byte":
                b = key[1]
                # A byte continues the word after the bare ``##`` row, or when it is a UTF-8
                # continuation byte following another byte row (the rest of one character).
                continues = prev == "marker" or (prev == "byte" and 0x80 <= b <= 0xBF)
                if not continues and out:
                    out += b" "
                out.append(b)
                prev = "byte"
                continue
            # [UNK] carries no mark, so it always starts a word; the other keys are pieces
            text = "[UNK]" if key == UNK else cast(str, key)
            if key != UNK and text.startswith(self.mark):
                out += text[len(self.mark):].encode("utf-8")
                prev = "piece"
                continue
            if out:
                out += b" "
            out += piece_text(text).encode("utf-8")
            prev = "piece"
        return bytes(out)


class FrontSpelling(Spelling[str]):
    """SentencePiece: whitespace runs become one ``▁``, one ``▁`` goes in front.

    ``hello  world`` -> ``▁hello▁world``; with ``split_at_marks`` the stream is cut before every
    mark, so the units are ``▁hello`` and ``▁world``. A ``▁`` already in the text stays a mark
    of its own (``a ▁ b`` -> ``▁a▁▁▁b``, which decodes to ``a   b``). An empty (or all-space)
    text has no units at all, not even the leading mark.
    """

    name = "front"
    mark: str

    def __init__(self, mark: str = "\u2581", split_at_marks: bool = True) -> None:
        self.mark = mark
        self.split_at_marks = split_at_marks

    def stream(self, text: str) -> str:
        """The marked stream: runs -> one mark each, ends stripped, one mark in front."""
        check_text(text)
        out: list[str] = []
        in_run = False
        for ch in text:
            if ch in WHITESPACE:
                in_run = True
                continue
            if in_run and out:
                out.append(self.mark)
            in_run = False
            out.append(ch)
        if not out:
            return ""
        return self.mark + "".join(out)

    def normalize(self, text: str) -> str:
        return self.decode([self.stream(text)]).decode("utf-8")

    def normalizations(self, text: str) -> list[str]:
        found = []
        i, j = 0, len(text)
        while i < j and text[i] in WHITESPACE:
            i += 1
        while j > i and text[j - 1] in WHITESPACE:
            j -= 1
        core = text[i:j]
        run = ""
        changed_run = False
        for ch in core:
            if ch in WHITESPACE:
                run += ch
            else:
                if run and run != " ":
                    changed_run = True
                run = ""
        if changed_run:
            found.append("whitespace_runs")
        if i > 0 or j < len(text):
            found.append("stripped_ends")
        if self.mark in text:
            found.append("mark_in_text")
        return found

    def units(self, text: str) -> list[tuple[str, ...]]:
        s = self.stream(text)
        if not s:
            return []
        if not self.split_at_marks:
            return [tuple(s)]
        out: list[tuple[str, ...]] = []
        for ch in s:
            if ch == self.mark or not out:
                out.append((ch,))
            else:
                out[-1] = out[-1] + (ch,)
        return out

    def fallback(self, symbol: str, alphabet: Container[str]) -> list[RowKey]:
        return utf8_rows(symbol)

    def decode(self, keys: list[RowKey]) -> bytes:
        out = bytearray()
        for key in keys:
            plain = _row_bytes_plain(key)
            out += plain if plain is not None else cast(str, key).replace(self.mark, " ").encode("utf-8")
        if out.startswith(b" "):
            del out[0]
        return bytes(out)


class BytesSpelling(Spelling[bytes]):
    """Byte level: symbols are the 256 byte values; no normalization, no ``[UNK]``, no mark.

    Units without a pre-split: the text is cut before every whitespace character that follows a
    non-whitespace character or is followed by one, so a single space travels with the word
    after it (``a  b`` -> ``a``, `` ``, `` b``). With ``pre_split="gpt2"`` the GPT-2 pattern cuts.
    Pieces are ``bytes``; they print in the GPT-2 byte alphabet (``Ġlow``). Ties compare raw
    bytes.
    """

    name = "bytes"
    has_unk = False

    def __init__(self, pre_split: str | None = None) -> None:
        self.pre_split = pre_split
        self._regex: Any = None  # a pattern of the regex module (which has no types)
        if pre_split == "gpt2":
            import regex  # third-party: \p{L} and \p{N}

            self._regex = regex.compile(GPT2_PATTERN)

    def chunks(self, text: str) -> list[str]:
        check_text(text)
        if self._regex is not None:
            found: list[str] = self._regex.findall(text)
            return found
        out: list[str] = []
        start = 0
        for i in range(1, len(text)):
            if text[i] in WHITESPACE and (
                text[i - 1] not in WHITESPACE
                or (i + 1 < len(text) and text[i + 1] not in WHITESPACE)
            ):
                out.append(text[start:i])
                start = i
        if text:
            out.append(text[start:])
        return out

    def normalize(self, text: str) -> str:
        check_text(text)
        return text

    def units(self, text: str) -> list[tuple[bytes, ...]]:
        return [tuple(bytes([b]) for b in c.encode("utf-8")) for c in self.chunks(text)]

    def show(self, piece: bytes) -> str:
        return "".join(GPT2_BYTE_TO_CHAR[b] for b in piece)

    def parse(self, printed: str) -> bytes | None:
        try:
            return bytes(GPT2_CHAR_TO_BYTE[c] for c in printed)
        except KeyError:
            return None

    def decode(self, keys: list[RowKey]) -> bytes:
        return b"".join(cast("list[bytes]", keys))  # every row of the bytes spelling is a piece of raw bytes


def make_spelling(
    spelling: str,
    *,
    mark: str | None = None,
    split_at_marks: bool = True,
    pre_split: str | None = None,
    joints: Joints = None,
) -> Spelling[Any]:
    """The spelling object for validated options (see ``training.validate``)."""
    if spelling == "end":
        return EndSpelling("</w>" if mark is None else mark, joints)
    if spelling == "continuation":
        return ContinuationSpelling("##" if mark is None else mark, joints)
    if spelling == "front":
        return FrontSpelling("\u2581" if mark is None else mark, split_at_marks)
    if spelling == "bytes":
        return BytesSpelling(pre_split)
    raise SubwordsError(f"unknown spelling {spelling!r}")
