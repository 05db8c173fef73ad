"""Writing a subwords byte-level BPE model as a tiktoken rank file (``read.py`` reads them)."""

from __future__ import annotations

import base64
import json
from typing import Any

from ..._io import write_atomic
from ...errors import InputError
from .._foreign import PathLike
from .read import piece_bytes, specials_path


def _replay(token: bytes, merge_rank: dict[tuple[int, int], int]) -> list[int]:
    """Merge-list BPE on one byte string: the adjacent pair with the lowest merge rank, leftmost
    on ties, until no adjacent pair is a merge (our BPE encoder's rule)."""
    parts = list(token)
    while len(parts) > 1:
        best, at = None, -1
        for k in range(len(parts) - 1):
            r = merge_rank.get((parts[k], parts[k + 1]))
            if r is not None and (best is None or r < best):
                best, at = r, k
        if best is None:
            break
        parts[at:at + 2] = [best]
    return parts


def export(tokenizer: Any, path: PathLike, format: str = "tiktoken") -> None:
    """Writes a subwords BPE model trained with ``spelling="bytes", pre_split="gpt2"`` as a rank
    file for the ``r50k_base`` pattern (GPT-2's): rank = row id, a row's bytes = its piece.

    tiktoken merges by *rank of the concatenation*, not by merge list, so the two can disagree
    in general (a token reachable from two different splits). They agree on every text when
    (1) each merge's parts come before it in the row order, (2) no two rows have the same bytes,
    and (3) every token's own bytes replay (by the merge list) to that one token. Proof sketch:
    the merge list applies ranks in increasing order; if tiktoken ever preferred a pair (x, y)
    whose concatenation T is a token but not through T's own merge, the bytes of x and y would
    have been merged by the ranks below T's, so by (3) they would already be T. (3) also makes
    tiktoken's shortcut (a chunk that is a token is one id) agree. ``export`` checks (1)-(3)
    and refuses, naming the row, a model that fails them; ``tests/interop/test_interop_tiktoken.py``
    checks the round trip through the real ``tiktoken.Encoding`` on a real corpus.
    """
    if format != "tiktoken":
        raise InputError(f"subwords.formats.tiktoken writes format='tiktoken', not {format!r}")
    model = getattr(tokenizer, "model", None)
    spelling = getattr(tokenizer, "spelling", None)
    if model != "bpe" or not isinstance(spelling, dict) or spelling.get("scheme") != "bytes" \
            or spelling.get("pre_split") != "gpt2":
        raise InputError("a tiktoken rank file holds byte-level BPE with GPT-2's pre-split: train with "
                         "model='bpe', spelling='bytes', pre_split='gpt2'")
    for option in ("lowercase", "strip_accents", "clean_text"):
        if spelling.get(option):
            raise InputError(f"the model normalizes text ({option}=True); a tiktoken rank file cannot express "
                             "normalization. Train without it")
    options = tokenizer.options
    for option in ("joints", "superword_at"):
        if options.get(option):
            raise InputError(f"the model uses {option}; tiktoken's GPT-2 pattern cannot express it. Train without it")
    if options.get("user_symbols"):
        raise InputError("the model has user symbols, which match in text whatever a call allows; tiktoken's "
                         "special tokens match only when allowed, so a rank file cannot express them. Train "
                         "with special_tokens instead")
    all_rows, all_kinds, merges = tokenizer.rows, tokenizer.kinds, tokenizer.merges
    # trained special tokens are the leading rows: they leave the rank file (their ids stay
    # free) and go to the special-token file beside it
    lead = next((i for i, k in enumerate(all_kinds) if k != "special"), len(all_kinds))
    rows, kinds = all_rows[lead:], all_kinds[lead:]
    other = sorted({k for k in kinds if k not in ("alphabet", "learned")})
    if other:
        raise InputError(f"the model has {other[0]!r} rows; a rank file holds only byte tokens "
                         "(tiktoken's special tokens are given to tiktoken.Encoding separately)")
    tokens: list[bytes] = []
    for i, piece in enumerate(rows):
        b = piece_bytes(piece)
        if b is None:
            raise InputError(f"row {lead + i} ({piece!r}) is not spelled with GPT-2's byte table")
        tokens.append(b)
    if tokens[:256] != [bytes([b]) for b in range(256)] or kinds[:256] != ["alphabet"] * 256:
        raise InputError("the first 256 rows after the special tokens must be the 256 bytes in order (the bytes "
                         "spelling's alphabet); this model's are not")
    if len(set(tokens)) != len(tokens):
        seen: dict[bytes, int] = {}
        for i, t in enumerate(tokens):
            if t in seen:
                raise InputError(f"rows {seen[t]} and {i} have the same bytes {t!r}; a rank file gives each byte "
                                 "string one rank")
            seen[t] = i
    if len(merges) != len(rows) - 256:
        raise InputError(f"{len(rows) - 256} learned rows but {len(merges)} merges; the model is not plain BPE")
    # below, ids count from the first byte row; the file adds `lead` back
    index = {t: i for i, t in enumerate(tokens)}
    merge_rank: dict[tuple[int, int], int] = {}
    for k, (left, right) in enumerate(merges):
        row = 256 + k
        lb, rb = piece_bytes(left), piece_bytes(right)
        li, ri = index.get(lb) if lb else None, index.get(rb) if rb else None
        if lb is None or rb is None or li is None or ri is None or lb + rb != tokens[row] or li >= row or ri >= row:
            raise InputError(f"merge {k} ({left!r} + {right!r}) does not make row {row} from earlier rows; "
                             "ranks could not follow the merge order")
        merge_rank[(li, ri)] = row
    for row in range(256, len(tokens)):
        got = _replay(tokens[row], merge_rank)
        if got != [row]:
            raise InputError(
                f"row {row} ({rows[row]!r}) does not encode to itself by its merges (it gives rows {got}); tiktoken "
                "would encode it as one token, so a rank file cannot reproduce this model exactly")
    lines = b"".join(base64.b64encode(t) + b" " + str(lead + i).encode() + b"\n" for i, t in enumerate(tokens))
    specials = special_tokens(tokenizer)
    write_atomic(path, lines, "rank file")
    if specials:
        write_atomic(specials_path(path), json.dumps(specials, ensure_ascii=False, indent=1), "special-token file")


def special_tokens(tokenizer: Any) -> dict[str, int]:
    """The special tokens of a trained model as tiktoken takes them (surface -> id), for
    ``tiktoken.Encoding(special_tokens=...)``: every special row."""
    return {p: i for i, (p, k) in enumerate(zip(tokenizer.rows, tokenizer.kinds)) if k == "special"}
