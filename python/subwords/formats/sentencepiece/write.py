"""Writing a subwords model as a SentencePiece ``.model`` file.

What must hold, and why (anything else is refused with the reason):

* the model is Unigram or BPE on the ``front`` spelling with the mark ``▁`` and no
  ``clean_text``/``strip_accents``/``lowercase`` (SentencePiece has no such steps);
* BPE: every learned piece is made by exactly one merge, because SentencePiece orders merges by
  the score of the piece they make (a piece's score is minus its merge rank here);
* Unigram: every piece has a finite log-probability (the piece's score).

Whitespace: the ``front`` spelling treats every Unicode whitespace character as a separator and
collapses runs; the file carries a character map sending each of them to U+0020, and
SentencePiece's ``remove_extra_whitespaces`` and ``add_dummy_prefix`` do the rest. ``[UNK]`` is
the unknown piece and decodes as ``[UNK]`` (``unk_surface``). Trained special tokens are
``CONTROL`` pieces and user symbols ``USER_DEFINED`` ones; ``bos_token``/``eos_token``/
``pad_token`` set the trainer spec's ``bos_id``/``eos_id``/``pad_id`` (-1 when not given).

Where the two engines still differ (the round-trip tests measure it): SentencePiece merges a run
of unknown characters into one ``<unk>`` id (subwords writes one ``[UNK]`` per character) when
there is no byte fallback; and a Unigram spelling whose pieces can be put in another order (runs
of one character: ``xxxxx`` as ``xx·xxx`` or ``xxx·xx``) is an exact tie that the two engines
break differently (SentencePiece keeps the longest last piece). Its Viterbi also adds
single-precision scores, so spellings within float rounding of each other could resolve
differently; the round-trip tests saw none on the multilingual corpus.
"""

from __future__ import annotations

import os
from typing import Any, Union

from ..._io import write_atomic
from ...errors import InputError

# Unicode White_Space, as Rust's char::is_whitespace (the front spelling's separators)
WHITESPACE = [chr(c) for c in (0x09, 0x0A, 0x0B, 0x0C, 0x0D, 0x20, 0x85, 0xA0, 0x1680, *range(0x2000, 0x200B),
                                0x2028, 0x2029, 0x202F, 0x205F, 0x3000)]

NORMAL, UNKNOWN, CONTROL, USER_DEFINED, UNUSED, BYTE = 1, 2, 3, 4, 5, 6


def model_bytes(tok: Any) -> bytes:
    from ... import _core

    kind = tok.model
    if kind not in ("unigram", "bpe"):
        raise InputError(f"a {kind} model cannot be written as SentencePiece (only unigram and bpe)")
    sp = tok.spelling
    if sp["scheme"] != "front":
        raise InputError(f"the {sp['scheme']} spelling cannot be written as SentencePiece; train with spelling='front'")
    if sp["mark"] != "\u2581":
        raise InputError(f"SentencePiece's space mark is U+2581; this model uses {sp['mark']!r}")
    for opt in ("clean_text", "strip_accents", "lowercase"):
        if sp.get(opt):
            raise InputError(f"{opt}=True has no SentencePiece equivalent; train without it to export")
    rows, kinds = tok.rows, tok.kinds
    pieces: list[tuple[str, float, int]] = []
    if kind == "unigram":
        lps = tok.log_probs
    else:
        learned = [r for r, k in zip(rows, kinds) if k == "learned"]
        if len(tok.merges) != len(learned):
            raise InputError(f"{len(tok.merges)} merges make {len(learned)} learned pieces: a piece made by two "
                             "merges has no single SentencePiece score")
    user = set(getattr(tok, "user_symbols", ()))
    rank = 0
    for i, (row, k) in enumerate(zip(rows, kinds)):
        if k == "special":
            # [UNK] is the unknown piece; trained specials are control pieces (never matched in
            # text, as subwords' default), user symbols user-defined ones (always matched)
            pieces.append((row, 0.0, UNKNOWN if row == "[UNK]" else USER_DEFINED if row in user else CONTROL))
        elif k == "byte":
            pieces.append((row, 0.0, BYTE))
        elif k in ("alphabet", "learned"):
            if kind == "unigram":
                lp = lps[i]
                if lp is None or lp != lp or lp in (float("inf"), float("-inf")):
                    raise InputError(f"piece {row!r} has log-probability {lp}; SentencePiece needs finite scores")
                score = float(lp)
            elif k == "learned":
                rank += 1
                score = float(-rank)
            else:
                score = float(-(len(rows) + 1))
            pieces.append((row, score, NORMAL))
        else:
            raise InputError(f"row {i} ({row!r}) is a {k} row, which SentencePiece cannot hold")
    rules = [(c, " ") for c in WHITESPACE if c != " "]
    options = getattr(tok, "options", {}) or {}
    roles = [(role, rows.index(options[f"{role}_token"])) for role in ("bos", "eos", "pad") if options.get(f"{role}_token")]
    return _core.sp_model_bytes(kind, pieces, bool(sp["byte_fallback"]), "[UNK]", rules, True, True,
                                bool(sp["split_at_marks"]), roles or None)


def export(tok: Any, path: Union[str, os.PathLike[str]], format: str = "sentencepiece") -> None:
    """Writes ``tok`` as a SentencePiece ``.model`` file (see the module docstring for what must
    hold)."""
    if format != "sentencepiece":
        raise InputError(f"sentencepiece.export writes format='sentencepiece', not {format!r}")
    if not hasattr(tok, "rows") or not hasattr(tok, "spelling"):
        raise InputError("export writes subwords models (from subwords.train or subwords.load)")
    write_atomic(path, model_bytes(tok), "SentencePiece model")
