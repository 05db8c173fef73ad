"""SentencePiece ``.model`` files (the protobuf ``ModelProto``), token for token.

``load("m.model")`` returns a :class:`SentencePieceTokenizer` whose ``encode``/``decode`` give
exactly what ``sentencepiece.SentencePieceProcessor`` gives for the same file: the same
normalization (``nmt_nfkc`` or any precompiled character map, ``add_dummy_prefix``,
``remove_extra_whitespaces``), Unigram Viterbi in single precision with SentencePiece's tie rule,
BPE by piece score, user-defined symbols, byte fallback and ``<unk>`` runs. Files using what this
engine cannot reproduce exactly (``model_type`` WORD/CHAR, ``treat_whitespace_as_suffix``, a
denormalizer) are refused with the feature named.

``export(tok, path)`` writes a subwords Unigram or BPE model on the ``front`` spelling as a
``.model`` file that ``sentencepiece`` loads (see :func:`export` for what must hold).
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any, Iterable, Optional, Sequence, Union

from ..._api import _first_unencodable, _surrogate_error, _threads, gc_paused
from ...errors import InputError, ModelFileError, UnknownPieceError
from ..._checks import text_arg
from ..._io import read_limited, write_atomic
from ..._checks import batch_arg, batch_list, template_arg
from ..._specials import AllowedSpecial, allowed_ids
from .._foreign import Foreign

if TYPE_CHECKING:
    from ... import _core

#: piece types of ``ModelProto.SentencePiece.Type``
TYPES = {1: "normal", 2: "unknown", 3: "control", 4: "user_defined", 5: "unused", 6: "byte"}

MAX_FILE_BYTES = 1 << 30


class SentencePieceTokenizer(Foreign):
    """A SentencePiece model read from its ``.model`` file."""

    format = "sentencepiece"
    _family_options = frozenset({"add_bos", "add_eos"})
    __slots__ = ("_m", "_enc", "_enc_around", "_specials", "_size")

    def __init__(self, data: bytes) -> None:
        from ... import _core

        self._m = _core.SpModel(data)
        # the piece list stays in Rust (copying 32k strings here was a sixth of the load time)
        self._size: int = self._m.vocab_size
        self._specials: dict[str, int] = dict(self._m.controls())
        self._enc = self._m.encoder()
        self._enc_around: Optional[_core.Encoder] = None  # made on first use (_enc_t)

    # -- encoding -----------------------------------------------------------------------------
    def encode(self, text: str, *, allowed_special: AllowedSpecial = (), add_special_tokens: Optional[bool] = None,
               pair: Optional[str] = None, add_bos: bool = False, add_eos: bool = False) -> list[int]:
        """Ids of ``text``. Control symbols (``<s>``, ``</s>``, ...) in the text are spelled as
        text, as SentencePiece does, unless ``allowed_special`` names them.
        ``add_special_tokens`` puts the model's ``<s>`` before and ``</s>`` after the ids (those
        of the two it has); ``add_bos``/``add_eos`` (sentencepiece's own names) ask for one side
        each."""
        if type(text) is str and not (allowed_special or add_special_tokens or pair is not None or add_bos or add_eos):
            # the plain call, one argument across: one call per line is mostly this path
            try:
                return self._enc.encode(text)
            except UnicodeEncodeError as e:
                raise _surrogate_error(e, "the text") from None
        add_special_tokens = template_arg(add_special_tokens, False)
        allowed = allowed_ids(allowed_special, self._specials)
        second = None if pair is None else _check_text(pair)
        try:
            if not (add_bos or add_eos):
                enc = self._enc_t() if add_special_tokens else self._enc
                return enc.encode(_check_text(text), second, allowed, add_special_tokens)
            ids = self._enc.encode(_check_text(text), second, allowed)
        except UnicodeEncodeError as e:
            raise _surrogate_error(e, "the text") from None
        bos, eos = self._sides(add_special_tokens, add_bos, add_eos)
        return self._wrap(ids, bos, eos)

    def _enc_t(self) -> "_core.Encoder":
        """The encoder with ``add_special_tokens``' template: the model's ``<s>`` before and
        ``</s>`` after (those of the two it has), around a pair's two texts together."""
        if self._enc_around is None:
            bos = [self._specials["<s>"]] if "<s>" in self._specials else []
            eos = [self._specials["</s>"]] if "</s>" in self._specials else []
            self._enc_around = self._enc.with_template([*bos, -1, *eos], [*bos, -1, -2, *eos])
        return self._enc_around

    def _sides(self, template: bool, bos: bool, eos: bool) -> tuple[bool, bool]:
        """Which of ``<s>``/``</s>`` to add: the template adds those the model has."""
        if template:
            return bos or "<s>" in self._specials, eos or "</s>" in self._specials
        return bos, eos

    def _encode(self, text: str, allowed: frozenset[str]) -> list[int]:
        return self._enc.encode(text, None, allowed_ids(allowed, self._specials))

    def _wrap(self, ids: list[int], bos: bool, eos: bool) -> list[int]:
        if bos:
            ids.insert(0, self._control("<s>"))
        if eos:
            ids.append(self._control("</s>"))
        return ids

    def _control(self, name: str) -> int:
        if name not in self._specials:
            raise InputError(f"this model has no {name} control symbol")
        return self._specials[name]

    def _encode_batch(self, texts: Iterable[str], *, threads: Optional[int] = None,
                      allowed_special: AllowedSpecial = (), add_special_tokens: Optional[bool] = None,
                      add_bos: bool = False, add_eos: bool = False) -> list[list[int]]:
        batch = batch_list(texts)  # the core checks every text's type as it reads them
        if add_bos or add_eos:
            batch = batch_arg(batch)
            return [self.encode(t, allowed_special=allowed_special, add_special_tokens=add_special_tokens,
                                add_bos=add_bos, add_eos=add_eos) for t in batch]
        add_special_tokens = template_arg(add_special_tokens, False)
        enc = self._enc_t() if add_special_tokens else self._enc
        allowed = allowed_ids(allowed_special, self._specials)
        try:
            with gc_paused():
                return enc.encode_batch(batch, _threads(threads), allowed, add_special_tokens)
        except UnicodeEncodeError as e:
            raise _surrogate_error(e, f"text {_first_unencodable(batch)} of the batch") from None

    def encode_buffers(self, batch: Sequence[str], *, threads: Optional[int], width: int, eos: Optional[int] = None,
                       allowed_special: AllowedSpecial = (),
                       add_special_tokens: Optional[bool] = None) -> tuple[bytearray, bytearray]:
        """``encode_array``'s buffers filled in the core (no Python list per text, so both
        threads encode while nothing waits for the GIL)."""
        if eos is not None:
            self.id_to_piece(eos)  # an id of this vocabulary, or UnknownPieceError
        add_special_tokens = template_arg(add_special_tokens, False)
        enc = self._enc_t() if add_special_tokens else self._enc
        allowed = allowed_ids(allowed_special, self._specials)
        batch = batch_list(batch)
        try:
            return enc.encode_batch_flat(batch, _threads(threads), width, allowed, add_special_tokens,
                                         [] if eos is None else [eos])
        except UnicodeEncodeError as e:
            raise _surrogate_error(e, f"text {_first_unencodable(batch)} of the batch") from None

    def encode_pieces(self, text: str, *, allowed_special: AllowedSpecial = (), add_special_tokens: Optional[bool] = None,
                      add_bos: bool = False, add_eos: bool = False) -> list[str]:
        """The pieces as sentencepiece's ``encode(text, out_type=str)``: a run of unknown
        characters is one ``<unk>`` id whose piece is the characters themselves (normalized), so
        ``decode_pieces`` gives them back where ``decode`` of the ids gives the unknown surface."""
        text = _check_text(text)
        allowed = allowed_ids(allowed_special, self._specials) if allowed_special else []
        try:
            pieces: list[str] = self._m.encode_pieces(text, allowed)[1]  # the specials cut in the core
        except UnicodeEncodeError as e:
            raise _surrogate_error(e, "the text") from None
        bos, eos = self._sides(template_arg(add_special_tokens, False), add_bos, add_eos)
        if bos:
            pieces.insert(0, self.id_to_piece(self._control("<s>")))
        if eos:
            pieces.append(self.id_to_piece(self._control("</s>")))
        return pieces

    def encode_with_offsets(self, text: str) -> list[tuple[int, int, int]]:
        """(id, start, end) with offsets in code points of ``text``; the byte pieces of one
        character share its span, all but the last one empty (as SentencePiece)."""
        _check_text(text)
        try:
            ids, starts, ends = self._m.encode_with_offsets(text)
        except UnicodeEncodeError as e:
            raise _surrogate_error(e, "the text") from None
        return list(zip(ids, starts, ends))

    def normalize(self, text: str) -> str:
        """The text SentencePiece segments: normalized, with ``▁`` for spaces."""
        _check_text(text)
        try:
            return self._m.normalize(text)
        except UnicodeEncodeError as e:
            raise _surrogate_error(e, "the text") from None

    # -- decoding -----------------------------------------------------------------------------
    def decode(self, ids: Iterable[int]) -> str:
        return self._m.decode(_ids(ids))

    def decode_pieces(self, pieces: Iterable[str]) -> str:
        """Text of pieces as sentencepiece's ``decode_pieces``: a piece that is not in the
        vocabulary (an unknown run, as ``encode_pieces`` gives it) stands for itself."""
        batch = list(pieces)
        for p in batch:
            if not isinstance(p, str):
                raise InputError(f"a piece is a str, got {type(p).__name__}")
        return self._m.decode_pieces(batch)

    # -- the vocabulary -----------------------------------------------------------------------
    def id_to_piece(self, id: int) -> str:
        if not isinstance(id, int) or not 0 <= id < self._size:
            raise UnknownPieceError(f"id {id!r} is out of range (the model has {self._size} pieces)")
        return self._m.piece(id)

    def piece_to_id(self, piece: str) -> int:
        i = self._m.piece_to_id(piece)
        if i is None:
            raise UnknownPieceError(f"{piece!r} is not a piece of this model")
        return i

    @property
    def vocab_size(self) -> int:
        return self._size

    @property
    def pieces(self) -> list[str]:
        return self._m.pieces

    @property
    def scores(self) -> list[float]:
        return self._m.scores

    @property
    def types(self) -> list[str]:
        """Each id's piece type: normal, unknown, control, user_defined, unused or byte."""
        return [TYPES[t] for t in self._m.types]

    @property
    def model(self) -> str:
        """``"unigram"`` or ``"bpe"``."""
        return self._m.kind

    @property
    def byte_fallback(self) -> bool:
        return self._m.byte_fallback

    @property
    def special_tokens(self) -> dict[str, int]:
        return dict(self._specials)

    def save(self, path: Union[str, os.PathLike[str]]) -> None:
        """Writes the model file back, byte for byte as it was read."""
        write_atomic(path, self._m.to_bytes(), "SentencePiece model")

    def __reduce__(self) -> tuple[Any, tuple[bytes]]:
        return (SentencePieceTokenizer, (self._m.to_bytes(),))


def load(path: Union[str, os.PathLike[str]], format: str = "sentencepiece", **options: Any) -> SentencePieceTokenizer:
    if options:
        raise InputError(f"a SentencePiece model takes no load options (got {sorted(options)})")
    p = os.fspath(path)
    if os.path.isdir(p):
        for name in ("tokenizer.model", "spiece.model", "sentencepiece.model"):
            if os.path.exists(os.path.join(p, name)):
                p = os.path.join(p, name)
                break
    data = read_limited(p, MAX_FILE_BYTES, "SentencePiece model")
    try:
        return SentencePieceTokenizer(data)
    except ModelFileError as e:
        raise ModelFileError(f"{p}: {e}") from None


def write_vocab(source: Any, path: Union[str, os.PathLike[str]]) -> None:
    """Writes the ``.vocab`` side file ``spm_train`` writes next to a model: one ``piece<TAB>score``
    line per id, the score with six significant digits as sentencepiece prints it. ``source`` is
    a :class:`SentencePieceTokenizer` or a subwords model that :func:`export` can write."""
    if not isinstance(source, SentencePieceTokenizer):
        from .write import model_bytes

        source = SentencePieceTokenizer(model_bytes(source))
    lines = []
    for piece, score in zip(source.pieces, source.scores):
        if any(c in piece for c in " \t\r\n"):
            raise InputError(f"piece {piece!r} holds whitespace, which the .vocab format cannot hold")
        lines.append(f"{piece}\t{score:g}\n")
    write_atomic(path, "".join(lines), "SentencePiece .vocab file")


def read_vocab(path: Union[str, os.PathLike[str]]) -> list[tuple[str, float]]:
    """The (piece, score) lines of a ``.vocab`` side file, in id order. The file holds no
    normalization or model type, so it cannot encode; load the ``.model`` for that."""
    raw = read_limited(path, MAX_FILE_BYTES, "SentencePiece .vocab file")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise ModelFileError(f"{os.fspath(path)}: not UTF-8 text") from None
    out = []
    for n, line in enumerate(text.split("\n")[:-1] if text.endswith("\n") else text.split("\n"), 1):
        piece, tab, score = line.partition("\t")
        try:
            value = float(score) if tab else None
        except ValueError:
            value = None
        if not piece or value is None or value != value:
            raise ModelFileError(f"{os.fspath(path)}: line {n} is not 'piece<TAB>score': {line[:60]!r}")
        out.append((piece, value))
    return out


def from_bytes(data: bytes) -> SentencePieceTokenizer:
    """A tokenizer from the bytes of a ``.model`` file (e.g. ``spm.serialized_model_proto()``)."""
    return SentencePieceTokenizer(bytes(data))


_check_text = text_arg


def _ids(ids: Iterable[int]) -> list[int]:
    out = []
    for i in ids:
        if not isinstance(i, int) or isinstance(i, bool) or i < 0:
            raise UnknownPieceError(f"{i!r} is not an id")
        out.append(i)
    return out
