"""Matched comparisons: two trainings at the same sizes on the same texts, and several
tokenizers measured on the same texts.

:func:`matched` trains two option sets (one of :data:`COMPARISONS`, or your own) at each size
and reports both curve points and the rows the two tables share and do not share.

Rows are compared by text. When the two sides write marks differently the rows are first put in
one writing, so that a row counts as shared when it stands for the same thing:

* the same scheme with two marks (``▁`` against ``_``): the second side's mark is written as the
  first's (the SentencePiece page's "once the mark is written the same way");
* different schemes (front against end marks, characters against bytes): each row is read as
  the text it stands for without its mark (``low</w>`` and ``▁low`` are both ``low``; a byte
  row's characters as the bytes they spell), so a shared row is one both tables hold as a
  string, wherever its word boundary falls.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Optional, Sequence

from ..errors import OptionError
from .curve import CurvePoint, _measure_heldout, check_sizes, heldout_texts, models_at
from .metrics import Metrics, metrics

# name -> (what it compares, options of side a, options of side b). Options given to `matched`
# go to both sides; a side's own options win.
COMPARISONS: dict[str, tuple[str, dict[str, Any], dict[str, Any]]] = {
    "bpe-unigram": ("BPE against Unigram", {"model": "bpe"}, {"model": "unigram"}),
    "count-score": ("count against score (BPE against WordPiece, continuation marks)",
                    {"model": "bpe", "spelling": "continuation"}, {"model": "wordpiece", "spelling": "continuation"}),
    "front-end": ("front marks against end marks", {"spelling": "front"}, {"spelling": "end"}),
    "chars-bytes": ("a character alphabet against bytes", {"spelling": "front"}, {"spelling": "bytes"}),
    "stages": ("one stage against two (superword BPE; give superword_at)", {}, {"superword_at": None}),
    "joints": ("joints against none (give joints)", {"joints": None}, {}),
    "marks": ("the ▁ mark against _ (front marks)", {"spelling": "front"}, {"spelling": "front", "mark": "_"}),
    "superbpe": ("plain byte-level BPE against SuperBPE (o200k pre-split; superword_at is t)",
                 {"model": "bpe", "spelling": "bytes", "pre_split": "o200k"}, {"preset": "superbpe"}),
    "scaffold": ("plain BPE against Scaffold-BPE", {"model": "bpe"}, {"model": "bpe", "scaffold": True}),
}

#: the options only SuperBPE's side of the "superbpe" comparison takes
_SUPERWORD = ("preset", "superword_at", "superword_pattern", "superword_words")

MAX_LISTED = 50


@dataclass
class MatchedPoint:
    size: int
    a: CurvePoint
    b: CurvePoint
    shared: int
    """Rows both tables hold (in one writing, see the module docstring)."""
    only_a: int
    only_b: int
    only_a_rows: list[str] = field(default_factory=list)
    """Up to 50 rows only side a holds, sorted."""
    only_b_rows: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        d = dataclasses.asdict(self)
        d["a"] = self.a.to_dict()
        d["b"] = self.b.to_dict()
        return d


def _mark_stripper(tok: Any) -> Callable[[str, str], str]:
    sp = tok.spelling
    scheme, mark = sp.get("scheme"), sp.get("mark") or ""
    if scheme == "bytes":
        from .. import _core

        back = {c: b for b, c in enumerate(_core.gpt2_byte_chars())}

        def from_bytes(row: str, kind: str) -> str:
            if kind != "learned" and kind != "alphabet":
                return row
            raw = bytes(back[c] for c in row) if all(c in back for c in row) else row.encode()
            return raw.decode("utf-8", "backslashreplace").strip(" ")

        return from_bytes

    def strip(row: str, kind: str) -> str:
        if kind not in ("learned", "alphabet") or not mark:
            return row
        if scheme == "end" and row.endswith(mark):
            return row[: -len(mark)]
        if scheme in ("front", "continuation") and row.startswith(mark) and row != mark:
            return row[len(mark):]
        return row

    return strip


def row_keys(a: Any, b: Any) -> tuple[list[str], list[str]]:
    """Both tables' rows in one writing (see the module docstring)."""
    sa, sb = a.spelling, b.spelling
    if sa.get("scheme") == sb.get("scheme"):
        ma, mb = sa.get("mark") or "", sb.get("mark") or ""
        rows_b = list(b.rows)
        if ma != mb and ma and mb:
            rows_b = [r.replace(mb, ma) if k in ("learned", "alphabet") else r for r, k in zip(rows_b, b.kinds)]
        return list(a.rows), rows_b
    fa, fb = _mark_stripper(a), _mark_stripper(b)
    return [fa(r, k) for r, k in zip(a.rows, a.kinds)], [fb(r, k) for r, k in zip(b.rows, b.kinds)]


def _sides(comparison: Optional[str], a: Optional[Mapping[str, Any]], b: Optional[Mapping[str, Any]],
           options: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    if comparison is not None:
        if comparison not in COMPARISONS:
            raise OptionError(f"comparison must be one of {', '.join(COMPARISONS)}; got {comparison!r}")
        _, da, db = COMPARISONS[comparison]
    elif a is None or b is None:
        raise OptionError("name a comparison (one of " + ", ".join(COMPARISONS) + ") or give both a= and b= options")
    else:
        da, db = {}, {}
    side_a = {**options, **da, **(a or {})}
    side_b = {**options, **db, **(b or {})}
    if comparison == "stages":
        at = options.get("superword_at") or (b or {}).get("superword_at")
        if at is None:
            raise OptionError("the 'stages' comparison needs superword_at= (where stage one stops)")
        side_a.pop("superword_at", None)
        side_b["superword_at"] = at
    if comparison == "superbpe":
        for k in _SUPERWORD:
            if k in side_a and (a or {}).get(k) is None:
                side_a.pop(k)
        side_b["preset"] = "superbpe"
    if comparison == "scaffold" and not (a or {}).get("scaffold"):
        side_a.pop("scaffold", None)
    if comparison == "joints":
        j = options.get("joints") or (a or {}).get("joints")
        if j is None:
            raise OptionError("the 'joints' comparison needs joints= (a word -> parts mapping or callable)")
        side_a["joints"] = j
        side_b.pop("joints", None)
    return side_a, side_b


def matched(data: Any, sizes: Sequence[int], comparison: Optional[str] = None, *, a: Optional[Mapping[str, Any]] = None,
            b: Optional[Mapping[str, Any]] = None, heldout: Any = None, **options: Any) -> list[MatchedPoint]:
    """Trains both sides at each of ``sizes`` on ``data`` and compares them.

    >>> four = {"low": 5, "lower": 2, "newest": 6, "widest": 3}
    >>> [(p.a.rows, p.b.rows, p.shared) for p in matched(four, [30], "bpe-unigram", spelling="front")]
    [(27, 30, 23)]
    """
    sizes = check_sizes(sizes)
    side_a, side_b = _sides(comparison, a, b, options)
    texts = heldout_texts(heldout)
    got_a = list(models_at(data, sizes, **side_a))
    got_b = list(models_at(data, sizes, **side_b))
    out = []
    for (s, ta, pa), (_, tb, pb) in zip(got_a, got_b):
        if texts:
            _measure_heldout(ta, texts, pa)
            _measure_heldout(tb, texts, pb)
        ka, kb = row_keys(ta, tb)
        sa, sb = set(ka), set(kb)
        out.append(MatchedPoint(size=s, a=pa, b=pb, shared=len(sa & sb), only_a=len(sa - sb), only_b=len(sb - sa),
                                only_a_rows=sorted(sa - sb)[:MAX_LISTED], only_b_rows=sorted(sb - sa)[:MAX_LISTED]))
    return out


def compare_models(models: Mapping[str, Any], texts: Sequence[str], *, languages: Optional[Sequence[str]] = None,
                   threads: Optional[int] = None, rare_below: int = 5) -> list[Metrics]:
    """:func:`metrics` for each named tokenizer on the same texts, in the order given."""
    if not models:
        raise OptionError("compare needs at least one model")
    return [metrics(tok, texts, name=name, languages=languages, threads=threads, rare_below=rare_below)
            for name, tok in models.items()]
