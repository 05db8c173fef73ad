"""The protobuf wire format of SentencePiece's ``ModelProto``, read and edited without the
protobuf package: enough for the face to read the trainer spec's piece names, to rewrite the
normalizer flags and piece types (``SentencePieceNormalizer``'s flags, ``SetVocabulary``), and to
write the ``SentencePieceText`` messages ``encode(..., out_type='serialized_proto')`` returns.

A message is kept as its list of ``(field, wire type, value)`` in file order (value: an ``int``
for varints and fixed-width numbers, ``bytes`` for length-delimited fields), so fields this module
does not know pass through unchanged.
"""

from __future__ import annotations

import struct
from typing import Iterator, Union

from ..errors import ModelFileError

Field = tuple[int, int, Union[int, bytes]]


def _varint(data: bytes, i: int) -> tuple[int, int]:
    shift = out = 0
    while True:
        if i >= len(data) or shift > 63:
            raise ModelFileError("not a SentencePiece model (a truncated protobuf varint)")
        b = data[i]
        i += 1
        out |= (b & 0x7F) << shift
        if b < 0x80:
            return out, i
        shift += 7


def parse(data: bytes) -> list[Field]:
    """The fields of one message."""
    out: list[Field] = []
    i, n = 0, len(data)
    while i < n:
        key, i = _varint(data, i)
        field, wt = key >> 3, key & 7
        if wt == 0:
            v, i = _varint(data, i)
            out.append((field, wt, v))
        elif wt == 2:
            size, i = _varint(data, i)
            if i + size > n:
                raise ModelFileError("not a SentencePiece model (a protobuf field runs past the end)")
            out.append((field, wt, bytes(data[i:i + size])))
            i += size
        elif wt == 5:
            if i + 4 > n:
                raise ModelFileError("not a SentencePiece model (a truncated protobuf field)")
            out.append((field, wt, int.from_bytes(data[i:i + 4], "little")))
            i += 4
        elif wt == 1:
            if i + 8 > n:
                raise ModelFileError("not a SentencePiece model (a truncated protobuf field)")
            out.append((field, wt, int.from_bytes(data[i:i + 8], "little")))
            i += 8
        else:
            raise ModelFileError(f"not a SentencePiece model (protobuf wire type {wt})")
    return out


def _put_varint(out: bytearray, v: int) -> None:
    v &= (1 << 64) - 1
    while v >= 0x80:
        out.append((v & 0x7F) | 0x80)
        v >>= 7
    out.append(v)


def serialize(fields: list[Field]) -> bytes:
    out = bytearray()
    for field, wt, v in fields:
        _put_varint(out, (field << 3) | wt)
        if wt == 0:
            _put_varint(out, int(v))
        elif wt == 2:
            assert isinstance(v, bytes)
            _put_varint(out, len(v))
            out += v
        elif wt == 5:
            out += int(v).to_bytes(4, "little")
        else:
            out += int(v).to_bytes(8, "little")
    return bytes(out)


def get(fields: list[Field], field: int, default: Union[int, bytes, None] = None) -> Union[int, bytes, None]:
    """The last value of ``field`` (protobuf's rule for a repeated optional field)."""
    found = default
    for f, _, v in fields:
        if f == field:
            found = v
    return found


def put(fields: list[Field], field: int, wt: int, value: Union[int, bytes]) -> list[Field]:
    """``fields`` with ``field`` set to ``value`` (its old values dropped, the new one in its
    place or at the end)."""
    out: list[Field] = []
    done = False
    for f in fields:
        if f[0] == field:
            if not done:
                out.append((field, wt, value))
                done = True
            continue
        out.append(f)
    if not done:
        out.append((field, wt, value))
    return out


def float32(v: int) -> float:
    return float(struct.unpack("<f", int(v).to_bytes(4, "little"))[0])


def bits32(x: float) -> int:
    return int.from_bytes(struct.pack("<f", x), "little")


# -- SentencePieceText (sentencepiece.proto) ---------------------------------------------------
# SentencePieceText: text = 1, pieces = 2, score = 3; its SentencePiece: piece = 1, id = 2,
# surface = 3, begin = 4, end = 5. NBestSentencePieceText: nbests = 1.


def piece_text(text: bytes, pieces: Iterator[tuple[bytes, int, bytes, int, int]], score: Union[float, None] = None) -> bytes:
    """A serialized ``SentencePieceText``: every field written, zeros too (the fields have
    presence, and sentencepiece sets each one)."""
    fields: list[Field] = [(1, 2, text)]
    for piece, id, surface, begin, end in pieces:
        fields.append((2, 2, serialize([(1, 2, piece), (2, 0, id), (3, 2, surface), (4, 0, begin), (5, 0, end)])))
    if score is not None:
        fields.append((3, 5, bits32(score)))
    return serialize(fields)


def nbest_text(texts: list[bytes]) -> bytes:
    return serialize([(1, 2, t) for t in texts])
