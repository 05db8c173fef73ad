"""Cutting one of our vocabularies down to the rows a corpus uses: :func:`trim`.

The rule (docs/EXTEND.md): a row is *used* when encoding the corpus gives it at least
``min_count`` times. Kept are the used rows, the rows named by ``keep``, every special, byte and
marker row, every alphabet row of a byte-level model (it has no ``[UNK]`` to fall back on) and of a
Unigram model (its pieces must be spelled in its alphabet), and
the *closure*: a kept row made by merges keeps every merge that makes it and both parts of each,
recursively. A merge is kept when its two parts and its result are. Ids are renumbered densely in
the old order, and :attr:`Trim.id_map` says where each old id went.

Why text the trimmed vocabulary covers (every piece the old model cuts it into is kept) is cut
exactly as before: BPE -- every merge the old replay applies makes a piece that ends in, or is
merged into, a final piece, so it is in the closure; at each step the old replay's choice (the
lowest-ranked merge that applies) is in the kept list, which is a sub-list of the old one, so it
is also the lowest there; when no old merge applies, no kept one does. WordPiece -- longest match
picks the longest row at each place; it is kept, and removing others never makes a longer one.
Unigram -- the best path uses kept pieces only, and removing other pieces removes only other
paths; the log-probabilities are kept as they were (renormalizing would shift paths of different
lengths by different amounts).
"""

from __future__ import annotations

import json
import os
from collections import Counter
from typing import Any, Iterable, NamedTuple, Optional, Union

from ._api import SubwordsTokenizer
from ._io import write_atomic
from .errors import InputError, OptionError

__all__ = ["trim", "Trim"]

PathLike = Union[str, "os.PathLike[str]"]
_ALWAYS = ("special", "byte", "marker")


class Trim(NamedTuple):
    """What :func:`trim` returns."""

    tokenizer: SubwordsTokenizer
    #: ``id_map[old_id]`` is the row's new id, or None when it was dropped
    id_map: list[Optional[int]]
    old_size: int
    new_size: int
    #: with ``litetoken=True``: what LiteToken removed, and how many corpus lines changed ids
    litetoken: Optional[Any] = None

    def id_map_json(self) -> str:
        """The id map as written beside the model: ``{"old_size", "new_size", "old_to_new"}``."""
        return json.dumps({"old_size": self.old_size, "new_size": self.new_size, "old_to_new": self.id_map}) + "\n"


def _closure(rows: list[list[str]], merges: list[list[str]], kept: set[int], by_piece: dict[str, int],
             join: Any) -> set[int]:
    made_by: dict[int, list[tuple[int, int]]] = {}
    for left, right in merges:
        a, b = by_piece[left], by_piece[right]
        made_by.setdefault(by_piece_join(by_piece, join, left, right), []).append((a, b))
    todo = list(kept)
    while todo:
        c = todo.pop()
        for a, b in made_by.get(c, ()):
            for x in (a, b):
                if x not in kept:
                    kept.add(x)
                    todo.append(x)
    return kept


def by_piece_join(by_piece: dict[str, int], join: Any, left: str, right: str) -> int:
    return by_piece[join(left, right)]


def trim(tokenizer: Any, data: object, *, min_count: int = 1, keep: Iterable[str] = (),
         output: Optional[PathLike] = None, id_map_output: Optional[PathLike] = None, litetoken: bool = False,
         threshold: Optional[float] = None, threads: Optional[int] = None) -> Trim:
    """Keeps the rows of ``tokenizer`` (one of our models: BPE, WordPiece or Unigram) that
    encoding ``data`` uses at least ``min_count`` times, plus ``keep`` (pieces as
    :meth:`~SubwordsTokenizer.id_to_piece` writes them) and what they need (see the module's
    text). With ``output``, writes the model there and the id map to ``id_map_output``
    (default: ``output`` + ``".ids.json"``), both atomically.

    >>> import subwords
    >>> tok = subwords.train({"low": 5, "lower": 2, "newest": 6, "widest": 3}, vocab_size=22)
    >>> t = trim(tok, ["low low lower"])
    >>> t.tokenizer.encode_pieces("low lower") == tok.encode_pieces("low lower")
    True

    With ``litetoken=True`` it removes LiteToken's intermediate merge residues instead (rows
    whose ``F1 / (F1 + F2)`` on ``data`` is below ``threshold``, default 0.1; see
    :mod:`subwords._litetoken` and docs/METHODS.md). ``tokenizer`` may then be any BPE model
    ``subwords.load`` reads (ours, a tiktoken tokenizer, or a path to ours, a ``tokenizer.json``
    or a ``.tiktoken`` file); the output is written in its format, and
    :attr:`Trim.litetoken` reports the rows removed and the corpus lines whose ids changed.
    """
    from ._extend import _texts

    if litetoken is not True and litetoken is not False:
        raise OptionError(f"litetoken is True or False, got {litetoken!r}")
    if litetoken:
        return _trim_litetoken(tokenizer, data, min_count, keep, output, id_map_output, threshold, threads)
    if threshold is not None:
        raise OptionError("threshold is LiteToken's: pass litetoken=True with it")

    if isinstance(tokenizer, SubwordsTokenizer) and (tokenizer.options or {}).get("picky") is not None:
        raise OptionError("trim() does not cut a Picky BPE model: a row it drops would leave its merges "
                          "and removals without their tokens; train a smaller one")
    if isinstance(tokenizer, SubwordsTokenizer) and (tokenizer.options or {}).get("scaffold"):
        raise OptionError("trim() does not cut a Scaffold-BPE model: a row it drops would leave merges "
                          "without their tokens; train a smaller one")
    if not isinstance(tokenizer, SubwordsTokenizer):
        raise InputError(f"trim() cuts subwords' own models (load other formats with subwords.load and export "
                         f"them first); got {type(tokenizer).__name__}")
    if isinstance(min_count, bool) or not isinstance(min_count, int) or min_count < 1:
        raise OptionError(f"min_count must be an int >= 1, got {min_count!r}")
    if isinstance(keep, str):
        raise OptionError("keep takes a list of pieces, not one str")
    doc = json.loads(tokenizer.to_json())
    if doc.get("stream_merges_from") is not None or doc.get("joints") is not None:
        raise OptionError("trim() does not cut two-stage (superword) models or models with pre-split joints")
    rows: list[list[str]] = doc["rows"]
    merges: list[list[str]] = doc["merges"]
    texts = _texts(data, "trim")
    used = Counter(i for ids in tokenizer.encode_batch(texts) for i in ids)
    kept = {i for i, c in used.items() if c >= min_count}
    for piece in keep:
        if not isinstance(piece, str):
            raise OptionError(f"keep: {piece!r} is not a str")
        kept.add(tokenizer.piece_to_id(piece))  # an UnknownPieceError names a piece with no row
    byte_level = doc["spelling"]["scheme"] == "bytes"
    for i, (_piece, kind) in enumerate(rows):
        if kind in _ALWAYS or (kind == "alphabet" and (byte_level or doc["model"] == "unigram")):
            kept.add(i)
    by_piece = {p: i for i, (p, kind) in enumerate(rows) if kind in ("alphabet", "learned")}
    strip = doc["spelling"]["mark"] if doc["spelling"]["scheme"] == "continuation" else ""

    def join(left: str, right: str) -> str:
        return left + (right[len(strip):] if strip and right.startswith(strip) else right)

    if byte_level:
        from .formats.tiktoken import BYTE_TO_CHAR, CHAR_TO_BYTE

        def join(left: str, right: str) -> str:  # noqa: F811 -- rows are printed bytes
            return "".join(BYTE_TO_CHAR[CHAR_TO_BYTE[c]] for c in left + right)

    kept = _closure(rows, merges, kept, by_piece, join)
    order = sorted(kept)
    id_map: list[Optional[int]] = [None] * len(rows)
    for j, i in enumerate(order):
        id_map[i] = j
    doc["rows"] = [rows[i] for i in order]
    doc["merges"] = [m for m in merges if all(by_piece_join(by_piece, join, *m) in kept and by_piece[x] in kept
                                              for x in m)]
    if "log_probs" in doc:
        doc["log_probs"] = [doc["log_probs"][i] for i in order]
    doc["report"] = None  # the training report described the rows before the cut
    new = SubwordsTokenizer.from_json(json.dumps(doc, ensure_ascii=False))
    result = Trim(new, id_map, len(rows), len(order))
    if output is not None:
        map_path = id_map_output if id_map_output is not None else os.fspath(output) + ".ids.json"
        write_atomic(map_path, result.id_map_json(), "id map")
        write_atomic(output, new.to_json(), "model file")
    return result


def _trim_litetoken(tokenizer: Any, data: object, min_count: int, keep: Iterable[str], output: Optional[PathLike],
                    id_map_output: Optional[PathLike], threshold: Optional[float], threads: Optional[int]) -> Trim:
    from ._extend import _texts
    from ._litetoken import DEFAULT_THRESHOLD, check_threshold, litetoken

    if min_count != 1 or isinstance(keep, str) or list(keep):
        raise OptionError("litetoken=True removes residues only; min_count and keep belong to the usage trim")
    threshold = check_threshold(DEFAULT_THRESHOLD if threshold is None else threshold)
    texts = _texts(data, "trim")
    new, id_map, old_size, new_size, report, write = litetoken(tokenizer, texts, threshold, threads)
    result = Trim(new, id_map, old_size, new_size, report)
    if output is not None:
        map_path = id_map_output if id_map_output is not None else os.fspath(output) + ".ids.json"
        write_atomic(map_path, result.id_map_json(), "id map")
        write(output)
    return result
