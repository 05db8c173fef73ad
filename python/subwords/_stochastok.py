"""StochasTok (Sims et al., ICLR 2026, arXiv 2506.01687) on our models: ``encode(text,
stochastok=p, seed=s)``, ``encode_batch(texts, stochastok=p, seed=s)``, ``subwords encode
--stochastok P --seed S``. The splitting is the core's (``segmenters/stochastok.rs``): after the
encoding of ``n`` ids, ``floor(p * n)`` attempts, each at a position drawn uniformly from the
current ids, replacing a splittable id by one of its splits drawn uniformly.

A split of a row is two rows whose pieces join to it, as the model's spelling joins pieces
(so the split decodes to the same text). The keys handed to the core make that a plain byte
join: the raw bytes of a byte-level row; the piece itself for the end-of-word and front-mark
spellings (``lo`` + ``w</w>`` = ``low</w>``, ``▁lo`` + ``w`` = ``▁low``); for the continuation
spelling, a word-initial piece is keyed ``\\0`` + piece and a ``##`` piece by its text without
the mark, so ``lo`` + ``##w`` keys to ``lo w`` and ``##lo`` + ``##w`` to ``##low``, never
``lo`` + ``w``. Special, unknown, byte-fallback and bare-marker rows never split and are never
parts.

Text ``k`` of a batch is drawn from seed ``splitmix(seed, k)`` (its index, not its thread), so
a batch gives the same ids on any number of threads, and ``encode(t, stochastok=p, seed=s)`` is
``encode_batch([t], stochastok=p, seed=s)[0]``.
"""

from __future__ import annotations

import math
from typing import Any, Optional

from . import _core
from .errors import OptionError


def check(p: object, seed: object) -> tuple[float, int]:
    if isinstance(p, bool) or not isinstance(p, (int, float)) or not math.isfinite(p) or not 0.0 <= p <= 1.0:
        raise OptionError(f"stochastok must be a probability in [0, 1] (the share of the ids to try splitting), "
                          f"got {p!r}")
    if seed is None or isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < 2**64:
        raise OptionError("stochastok needs an explicit seed (a whole number from 0 to 2**64-1), so runs repeat")
    return float(p), seed


def keys(tok: Any) -> list[Optional[bytes]]:
    """The core's key of each row (see the module's text)."""
    spelling = tok._spelling
    scheme = spelling.get("scheme")
    mark = spelling.get("mark") or ""
    out: list[Optional[bytes]] = []
    # a byte-level row is printed one character a byte (GPT-2's table, from the core)
    char_to_byte = {c: b for b, c in enumerate(_core.gpt2_byte_chars())} if scheme == "bytes" else {}
    for piece, kind in zip(tok.rows, tok.kinds):
        if kind not in ("alphabet", "learned") or not piece:
            out.append(None)
        elif scheme == "bytes":
            out.append(bytes(char_to_byte[c] for c in piece))
        elif scheme == "continuation":
            out.append(piece[len(mark):].encode("utf-8") if mark and piece.startswith(mark)
                       else b"\0" + piece.encode("utf-8"))
        else:
            out.append(piece.encode("utf-8"))
    return out


def table(tok: Any) -> Any:
    """The tokenizer's split table, made on first use and kept."""
    t = tok._stochastok
    if t is None:
        t = _core.StochasTok(keys(tok))
        tok._stochastok = t
    return t


def encode_one(tok: Any, text: str, p: object, seed: object, index: int = 0, **kw: Any) -> list[int]:
    """``tok.encode(text, **kw)`` split as text ``index`` under ``seed``."""
    p, seed = check(p, seed)
    if kw.get("dropout") is not None or kw.get("segmenter") == "sample":
        raise OptionError("stochastok splits the exact encoding; dropout and segmenter='sample' are other ways to vary "
                          "it: use one of them")
    ids = tok.encode(text, **kw)
    return list(table(tok).expand(ids, p, seed, index))


def encode_batch(tok: Any, lists: list[list[int]], p: object, seed: object, threads: int) -> list[list[int]]:
    p, seed = check(p, seed)
    return [list(x) for x in table(tok).expand_batch(lists, p, seed, threads)]
