"""BoundlessBPE (Schmidt, Reddy, Tanner and Pinter 2025, arXiv 2504.00178), written to be read: the
oracle a faster learner is tested against. The rules, and which of them are our reading of the
paper, are in docs/METHODS.md (BoundlessBPE).

Byte-level throughout. A text is cut by a pre-split expression (``o200k`` by default) into
*pretokens*; nothing is dropped. The learner sees two tables and never the texts themselves:

- the *units*: each distinct pretoken and how often it occurs;
- the *spans*: each distinct stretch of two or more adjacent pretokens of one text that may
  all take part in superwords (``superword_pieces``; a pretoken holding a line break never
  does), and how often it occurs; with
  ``count_on="runs"`` (default) each maximal such stretch, with ``"pairs"`` each adjacent pair.

Each step takes the candidate with the largest count, of two kinds:

- a *merge*: two adjacent tokens inside a pretoken, counted over the units as in plain BPE
  (overlaps included);
- a *supermerge*: two adjacent pretokens ``(P, Q)`` of a span, neither of them already inside
  a superword there, when each is at that moment spelled by one token and the superword
  ``P + Q`` is not a row yet; counted over the spans times their counts, overlaps included. It
  joins every such occurrence in every span, left to right without overlap.

A tie goes to the smaller ``(left, right)`` by bytes, a merge before a supermerge. A merge joins
every occurrence in every unit, left to right without overlap. After a merge ``(a, b)`` each
parent ``x`` in ``{a, b}`` that is longer than one byte and is not a pretoken inside a superword
is *deleted* when its intersection over self ``f(a, b) / f(x)`` (counts before the merge) is at
least ``deletion_threshold``: ``x`` leaves the rows and every unit spelled with ``x`` is
spelled with the two tokens the first merge that made ``x`` joined (each of them, if no longer
a row, by the two it was first made of, down to bytes). A superword is never deleted either.
``deletion_threshold=None`` never deletes.

The rows are the 256 bytes and every token made and not deleted. Learning stops when the rows
reach ``vocab_size`` ("size"), when no candidate is left ("no_pairs"), when the best count is
below ``min_count`` ("min_count"), or after ``event_limit`` merges and supermerges (deletions may
undo rows, so a cap keeps learning finite; "event_limit").
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from typing import Optional

import regex

from .superword import STAGE_ONE, pieces

#: which pretokens may take part in a supermerge
ELIGIBLE = {
    # letters (with marks), after at most one space: the words of the pre-split
    "letters": r"\A ?[\p{L}\p{M}]+\Z",
    # every pretoken without a line break
    "any": r"\A[^\r\n]+\Z",
}

Pair = tuple[bytes, bytes]
Span = tuple[bytes, ...]
#: ("merge", a, b) | ("super", P, Q) | ("delete", x, b"")
Event = tuple[str, bytes, bytes]


def _apply(seq: list[bytes], a: bytes, b: bytes) -> list[bytes]:
    out: list[bytes] = []
    i = 0
    while i < len(seq):
        if i + 1 < len(seq) and seq[i] == a and seq[i + 1] == b:
            out.append(a + b)
            i += 2
        else:
            out.append(seq[i])
            i += 1
    return out


def _spell(t: bytes, parents: dict[bytes, Pair], alive: set[bytes]) -> list[bytes]:
    """``t`` in rows: a token that is no row is spelled by the two tokens it was made of, again
    and again (bytes are always rows)."""
    if t in alive:
        return [t]
    a, b = parents[t]
    return _spell(a, parents, alive) + _spell(b, parents, alive)


def _split(seq: list[bytes], x: bytes, parents: dict[bytes, Pair], alive: set[bytes]) -> list[bytes]:
    out: list[bytes] = []
    for t in seq:
        out.extend(_spell(t, parents, alive) if t == x else (t,))
    return out


def _join(its: list[tuple[bytes, bool]], p: bytes, q: bytes) -> list[tuple[bytes, bool]]:
    """The superword ``p q`` joined in a span, left to right without overlap."""
    out: list[tuple[bytes, bool]] = []
    i = 0
    while i < len(its):
        if i + 1 < len(its) and its[i] == (p, False) and its[i + 1] == (q, False):
            out.append((p + q, True))
            i += 2
        else:
            out.append(its[i])
            i += 1
    return out


def tables(texts: Iterable[str], pre_split: str = "o200k", *, superword_pieces: str = "letters",
           count_on: str = "runs") -> tuple[Counter[bytes], Counter[Span]]:
    """The unit table and the span table of ``texts``.

    A span is a stretch of adjacent eligible pretokens of one text (``superword_pieces``):
    with ``count_on="runs"`` each maximal such stretch of two or more, with ``"pairs"`` each
    adjacent eligible pair on its own."""
    if count_on not in ("runs", "pairs"):
        raise ValueError(f"count_on={count_on!r}: give 'runs' or 'pairs'")
    expression = STAGE_ONE.get(pre_split, pre_split)
    eligible = regex.compile(ELIGIBLE.get(superword_pieces, superword_pieces))
    units: Counter[bytes] = Counter()
    spans: Counter[Span] = Counter()
    for text in texts:
        ps = [p for p in pieces(text, expression) if p]
        units.update(p.encode() for p in ps)
        run: list[bytes] = []
        for p in [*ps, None]:
            if p is not None and "\n" not in p and eligible.search(p):
                run.append(p.encode())
                continue
            if count_on == "pairs":
                spans.update(zip(run, run[1:]))
            elif len(run) > 1:
                spans[tuple(run)] += 1
            run = []
    return units, spans


def learn(units: Counter[bytes], spans: Counter[Span], vocab_size: int, *, min_count: int = 2,
          deletion_threshold: Optional[float] = 0.9, event_limit: Optional[int] = None) -> dict[str, object]:
    """BoundlessBPE on the two tables.

    Returns ``{"events": [...], "rows": [token bytes in the order they were made, bytes first],
    "superwords": [(P, Q)], "stop": why}``; ``rows`` holds only the tokens that are rows at the end.
    """
    if vocab_size < 257:
        raise ValueError(f"vocab_size={vocab_size}: give at least 257 (the 256 bytes are the first rows)")
    if deletion_threshold is not None and not 0 < deletion_threshold <= 1:
        raise ValueError(f"deletion_threshold={deletion_threshold}: give a share in (0, 1], or None to never delete")
    # each span's items: a pretoken (False) or a superword already joined there (True)
    items: dict[Span, list[tuple[bytes, bool]]] = {sp: [(p, False) for p in sp] for sp in sorted(spans)}
    seg: dict[bytes, list[bytes]] = {u: [bytes([b]) for b in u] for u in sorted(units)}
    order: list[bytes] = [bytes([i]) for i in range(256)]
    alive: set[bytes] = set(order)
    parents: dict[bytes, Pair] = {}
    protected: set[bytes] = set()
    done: set[Pair] = set()
    events: list[Event] = []
    limit = event_limit if event_limit is not None else 10 * max(vocab_size - 256, 1)
    made = 0
    stop = "size"
    while len(alive) < vocab_size:
        if made >= limit:
            stop = "event_limit"
            break
        regular: Counter[Pair] = Counter()
        for u, s in seg.items():
            for pair in zip(s, s[1:]):
                regular[pair] += units[u]
        supers: Counter[Pair] = Counter()
        for sp, its in items.items():
            for (p, joined_p), (q, joined_q) in zip(its, its[1:]):
                if not joined_p and not joined_q and seg[p] == [p] and seg[q] == [q] and p + q not in alive:
                    supers[(p, q)] += spans[sp]
        candidates = [(-n, a, b, 0) for (a, b), n in regular.items()] + \
                     [(-n, a, b, 1) for (a, b), n in supers.items()]
        if not candidates:
            stop = "no_pairs"
            break
        neg, a, b, kind = min(candidates)
        if -neg < min_count:
            stop = "min_count"
            break
        made += 1
        ab = a + b
        if kind == 1:
            for sp, its in items.items():
                items[sp] = _join(its, a, b)
            done.add((a, b))
            protected.update((a, b, ab))
            events.append(("super", a, b))
            if ab not in alive:
                alive.add(ab)
                order.append(ab)
            continue
        freq: Counter[bytes] = Counter()
        for u, s in seg.items():
            for t in s:
                freq[t] += units[u]
        joint = regular[(a, b)]
        for u in seg:
            seg[u] = _apply(seg[u], a, b)
        events.append(("merge", a, b))
        parents.setdefault(ab, (a, b))
        if ab not in alive:
            alive.add(ab)
            order.append(ab)
        if deletion_threshold is None:
            continue
        for x in dict.fromkeys((a, b)):
            if len(x) > 1 and x in alive and x not in protected and joint / freq[x] >= deletion_threshold:
                alive.discard(x)
                order.remove(x)
                events.append(("delete", x, b""))
                for u in seg:
                    seg[u] = _split(seg[u], x, parents, alive)
    return {"events": events, "rows": order, "superwords": sorted(done), "stop": stop}


def train(texts: Sequence[str], vocab_size: int, *, pre_split: str = "o200k", superword_pieces: str = "letters",
          count_on: str = "runs", **options: object) -> dict[str, object]:
    """BoundlessBPE on ``texts`` (counted into the two tables first); ``options`` as for :func:`learn`."""
    units, spans = tables(texts, pre_split, superword_pieces=superword_pieces, count_on=count_on)
    return learn(units, spans, vocab_size, **options)  # type: ignore[arg-type]


def encode(text: str, model: dict[str, object], pre_split: str = "o200k",
           cache: Optional[dict[str, list[bytes]]] = None) -> list[bytes]:
    """``text`` in tokens: each pretoken replays the merges and deletions in order, then adjacent
    one-token pretokens join into superwords, the earliest supermerge first, left to right.
    ``cache`` (a dict kept by the caller for one model) remembers each pretoken's tokens."""
    events: list[Event] = model["events"]  # type: ignore[assignment]
    rank = {(a, b): k for k, (kind, a, b) in enumerate(events) if kind == "super"}
    expression = STAGE_ONE.get(pre_split, pre_split)
    items: list[list[bytes]] = []
    for p in pieces(text, expression):
        if cache is not None and p in cache:
            items.append(list(cache[p]))
            continue
        s = [bytes([c]) for c in p.encode()]
        alive = {bytes([i]) for i in range(256)}
        made: dict[bytes, Pair] = {}
        for kind, a, b in events:
            if kind == "merge":
                s = _apply(s, a, b)
                alive.add(a + b)
                made.setdefault(a + b, (a, b))
            elif kind == "delete":
                alive.discard(a)
                s = _split(s, a, made, alive)
            elif a + b not in alive:
                alive.add(a + b)
        if cache is not None:
            cache[p] = list(s)
        items.append(s)
    joined = [False] * len(items)
    while True:
        found = [(rank[(items[i][0], items[i + 1][0])], i) for i in range(len(items) - 1)
                 if not joined[i] and not joined[i + 1] and len(items[i]) == 1 and len(items[i + 1]) == 1
                 and (items[i][0], items[i + 1][0]) in rank]
        if not found:
            break
        _, i = min(found)
        items[i] = [items[i][0] + items[i + 1][0]]
        joined[i] = True
        del items[i + 1]
        del joined[i + 1]
    return [t for s in items for t in s]


__all__ = ["ELIGIBLE", "encode", "learn", "tables", "train"]
