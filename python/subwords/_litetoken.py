"""LiteToken (Sun, Yang, Lin and Zhang, "LiteToken: Removing Intermediate Merge Residues From BPE
Tokenizers", arXiv 2602.04706): after training, remove the rows that BPE makes on the way to
longer rows but rarely emits. ``subwords.trim(model, corpus, litetoken=True)``; docs/METHODS.md.

The paper's measure, reproduced: encode a corpus; for a row ``t``, ``F1`` is how often ``t`` is
in the final encoding and ``F2`` how often ``t`` is made by a merge and then merged again into a
longer row. ``R(t) = F1 / (F1 + F2)``; a learned row seen at least once with ``R(t) < threshold``
is an *intermediate merge residue* and is removed.

``F2`` is counted without replaying the corpus: a row emitted in context was made from its own
pieces only (no merge crossed its edges), so the merges that made it are those that make it
alone -- its *derivation*, the same wherever it is emitted. ``F2(t)`` is then the sum, over the
final rows ``c``, of ``F1(c)`` times the times ``t`` is an inner node of ``c``'s derivation
(:mod:`subwords.reference.litetoken` replays every unit instead and must agree).

What stays valid after the removal (our rule; the paper splits residues out of each encoding
and keeps them as unseen merge steps, which a model file cannot say): **removing a residue never
makes another row impossible to build.** A row can be built when some split of it into two kept
rows is a merge the rule applies:

* rank rule (tiktoken: the adjacent pair whose join has the lowest rank is merged): every split
  of a row into two rows is such a merge, at the row's rank;
* merge list (our models, tokenizer.json): a row's own merges, and, when a part of every one of
  them is removed, new merges for every split into two kept rows, placed where its first merge
  stood (the row is *re-ranked*: the rank rule for that row).

A residue whose removal would leave some row with no such split is kept (*protected*), until no
row is left without one (a fixed point: protect the removed parts of each stranded row's
derivation, then look again).

Base rows (bytes, alphabet, specials, markers) are never removed, so every text is still
encoded, and decodes back unchanged.
"""

from __future__ import annotations

import base64
import json
import math
import os
from collections import Counter
from typing import Any, Callable, NamedTuple, Optional, Sequence, Union, cast

from . import _core
from ._io import read_limited, write_atomic
from .errors import InputError, ModelFileError, OptionError

PathLike = Union[str, "os.PathLike[str]"]
MAX_JSON_BYTES = 512 << 20
DEFAULT_THRESHOLD = 0.1


Writer = Callable[[PathLike], None]


class LiteTokenReport(NamedTuple):
    """What LiteToken found and did."""

    #: the residues removed: (old id, piece, F1, F2)
    residues: list[tuple[int, str, int, int]]
    #: residues kept because a row could not be built without them: (old id, piece, F1, F2)
    protected: list[tuple[int, str, int, int]]
    #: merge-list models: rows given new merges (re-ranked)
    reranked: int
    #: the corpus: lines, and lines whose ids changed (old ids mapped through the id map vs new ids)
    lines: int
    lines_changed: int
    threshold: float
    #: "tiktoken", "subwords", "hf" or "sentencepiece"
    format: str

    @property
    def removed(self) -> int:
        return len(self.residues)


def check_threshold(threshold: object) -> float:
    if isinstance(threshold, bool) or not isinstance(threshold, (int, float)) or not math.isfinite(threshold) \
            or not 0.0 < float(threshold) <= 1.0:
        raise OptionError(f"the LiteToken threshold is a share in (0, 1]: a row is a residue when "
                          f"F1 / (F1 + F2) is below it; got {threshold!r}")
    return float(threshold)


# -- the measure, on ids ---------------------------------------------------------------------

def formations(n: int, derivation: Sequence[Optional[tuple[int, int]]], size: Sequence[int],
               final: Counter[int]) -> tuple[list[int], list[int]]:
    """``(F1, F2)`` per id: ``final`` counts ids in the encoding; ``derivation[c]`` is the split
    that makes ``c`` (None for a base row); ``size[c]`` its length in base symbols."""
    made = [0] * n
    f1 = [0] * n
    # parents are longer than their parts: visit the rows made, longest first, pushing counts down
    by_size: dict[int, set[int]] = {}
    for i, c in final.items():
        f1[i] = c
        made[i] = c
        if derivation[i] is not None:
            by_size.setdefault(size[i], set()).add(i)
    while by_size:
        for c in by_size.pop(max(by_size)):
            a, b = derivation[c]  # type: ignore[misc]
            for x in (a, b):
                made[x] += made[c]
                if derivation[x] is not None:
                    by_size.setdefault(size[x], set()).add(x)
    f2 = [made[i] - f1[i] for i in range(n)]
    return f1, f2


def residues_of(learned: Sequence[bool], f1: Sequence[int], f2: Sequence[int], threshold: float) -> list[int]:
    return [i for i in range(len(f1)) if learned[i] and f1[i] + f2[i] > 0 and f1[i] < threshold * (f1[i] + f2[i])]


def choose(n: int, order: Sequence[int], residues: Sequence[int], table: Any,
           derivation: Callable[[int], Optional[tuple[int, int]]],
           prepare: Optional[Callable[[list[int]], None]] = None) -> tuple[set[int], list[int]]:
    """(removed, protected): the residues removed once every row of ``order`` (learned rows,
    shortest first) that some split could build before can still be built from kept rows.
    ``table`` is the core's split table (``_core.StochasTok``): a row's splits are every pair
    of rows whose keys join to its key, which holds its own merges too. ``prepare(rows)``, when
    given, is called before ``derivation`` is asked about those rows."""
    never, _ = table.stranded(list(order), [False] * n)  # rows no split builds even now stay as they are
    never = set(never)
    order = [c for c in order if c not in never]
    removed = set(residues) - never
    protected: list[int] = []
    while True:
        gone = [False] * n
        for i in removed | never:
            gone[i] = True
        lost, _ = table.stranded(order, gone)
        if not lost:
            return removed, protected
        lost_set = set(lost)
        if prepare is not None:
            prepare(lost)
        back = set()
        for c in lost:
            d = derivation(c)
            tries = ([d] if d is not None else []) + list(table.splits(c))
            for a, b in tries:
                hit = [x for x in (a, b) if x in removed]
                if hit or (a not in lost_set and b not in lost_set):
                    back.update(hit)
                    break
        if not back:  # each stranded row waits on another stranded row: keep every residue among their splits
            back = {x for c in lost for a, b in table.splits(c) for x in (a, b) if x in removed}
        if not back:
            raise AssertionError("LiteToken: a stranded row has no removed part")
        removed -= back
        protected.extend(sorted(back))


def _sizes(n: int, derivation: Sequence[Optional[tuple[int, int]]], base_size: Callable[[int], int]) -> list[int]:
    size = [0] * n
    def get(i: int) -> int:
        stack = [i]
        while stack:
            j = stack[-1]
            if size[j]:
                stack.pop()
                continue
            d = derivation[j]
            if d is None:
                size[j] = base_size(j)
                stack.pop()
                continue
            a, b = d
            if size[a] and size[b]:
                size[j] = size[a] + size[b]
                stack.pop()
            else:
                if not size[a]:
                    stack.append(a)
                if not size[b]:
                    stack.append(b)
        return size[i]
    for i in range(n):
        get(i)
    return size


def _count(encode_batch: Callable[[list[str]], list[list[int]]], texts: list[str]) -> tuple[Counter[int], list[list[int]]]:
    encoded = encode_batch(texts)
    final: Counter[int] = Counter()
    for ids in encoded:
        final.update(ids)
    return final, encoded


def _changed(old: list[list[int]], new: list[list[int]], id_map: list[Optional[int]]) -> int:
    return sum(1 for a, b in zip(old, new) if [id_map[i] for i in a] != b)


# -- tiktoken (rank rule) --------------------------------------------------------------------

Outcome = tuple[Any, list[Optional[int]], int, int, "LiteTokenReport", Writer]


def _litetoken_tiktoken(tok: Any, texts: list[str], threshold: float, threads: Optional[int]) -> Outcome:
    from .formats.tiktoken.read import TiktokenTokenizer

    core = tok._core
    tokens: list[tuple[bytes, int]] = core.tokens()
    specials = dict(core.specials())
    n = max([r for _, r in tokens] + list(specials.values())) + 1
    text_of: list[Optional[bytes]] = [None] * n
    for t, r in tokens:
        text_of[r] = t
    final, encoded = _count(lambda xs: tok.encode_batch(xs, threads=threads), texts)
    table = _core.StochasTok(text_of)  # every split of every row into two rows
    # the last merge that makes each emitted row alone by the rank rule, and so on down (None:
    # the merges do not make it alone); other rows' are found when asked
    derivation: list[Optional[tuple[int, int]]] = table.rank_last_splits(list(final))
    size = [len(t) if t is not None else 1 for t in text_of]
    f1, f2 = formations(n, derivation, size, final)
    learned = [t is not None and len(t) > 1 for t in text_of]
    res = residues_of(learned, f1, f2, threshold)
    order = sorted([r for r in range(n) if learned[r]], key=size.__getitem__)  # shortest first, then by rank

    def prepare(rows: list[int]) -> None:
        found = table.rank_last_splits(rows)
        for r in rows:
            if found[r] is not None:
                derivation[r] = found[r]
    removed, protected = choose(n, order, res, table, derivation.__getitem__, prepare)
    res = [r for r in res if r in removed]
    kept_ranks = [r for r in range(n) if text_of[r] is not None and r not in removed]
    id_map: list[Optional[int]] = [None] * n
    for j, r in enumerate(kept_ranks):
        id_map[r] = j
    for _, i in specials.items():
        id_map[i] = i
    # every kept rank has its bytes
    new_tokens = cast("list[tuple[bytes, int]]", list(zip(map(text_of.__getitem__, kept_ranks), range(len(kept_ranks)))))
    new_core = _core.RankBpe.from_ranks(new_tokens, core.pattern(), sorted(specials.items(), key=lambda kv: kv[1]),
                                        regex=core.regex())
    new = TiktokenTokenizer(new_core, tok.name, tok.pattern)
    new_encoded = new.encode_batch(texts, threads=threads)

    def show(r: int) -> str:
        return (text_of[r] or b"").decode("utf-8", "backslashreplace")

    report = LiteTokenReport([(r, show(r), f1[r], f2[r]) for r in res], [(r, show(r), f1[r], f2[r]) for r in protected], 0,
                             len(texts), _changed(encoded, new_encoded, id_map), threshold, "tiktoken")
    def write(path: PathLike) -> None:
        lines = [base64.b64encode(t).decode("ascii") + f" {r}\n" for t, r in new_tokens]
        write_atomic(path, "".join(lines).encode("ascii"), "rank file")
    # sizes count rows (ranks and specials): the specials keep their ids, above every rank
    return new, id_map, len(tokens) + len(specials), len(kept_ranks) + len(specials), report, write


# -- SentencePiece BPE (score rule) ------------------------------------------------------------

def _proto_fields(data: bytes) -> list[tuple[int, int, bytes]]:
    """A protobuf message's top-level records: (field number, wire type, the record's bytes)."""
    def varint(i: int) -> tuple[int, int]:
        x, shift = 0, 0
        while True:
            if i >= len(data) or shift > 63:
                raise ModelFileError("SentencePiece model: a truncated protobuf varint")
            b = data[i]
            x |= (b & 0x7F) << shift
            i += 1
            if b < 0x80:
                return x, i
            shift += 7
    out = []
    i = 0
    while i < len(data):
        start = i
        tag, i = varint(i)
        wire = tag & 7
        if wire == 0:
            _, i = varint(i)
        elif wire == 1:
            i += 8
        elif wire == 2:
            n, i = varint(i)
            i += n
        elif wire == 5:
            i += 4
        else:
            raise ModelFileError(f"SentencePiece model: protobuf wire type {wire} is not read")
        if i > len(data):
            raise ModelFileError("SentencePiece model: a truncated protobuf record")
        out.append((tag >> 3, wire, data[start:i]))
    return out


def _varint_bytes(x: int) -> bytes:
    out = bytearray()
    while True:
        b = x & 0x7F
        x >>= 7
        if x:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def _payload(record: bytes) -> bytes:
    """The payload of a length-delimited record (its tag and length skipped)."""
    i = 0
    while record[i] & 0x80:
        i += 1
    i += 1
    while record[i] & 0x80:
        i += 1
    return record[i + 1:]


def _sp_without(data: bytes, removed: set[int], new_size: int) -> bytes:
    """The ``.model`` file ``data`` without the pieces at ids ``removed``: every other record
    byte for byte, the trainer spec's ``vocab_size`` set to ``new_size``, and the self-test
    samples left out (their expected pieces were the old model's)."""
    out = bytearray()
    k = 0
    for field, wire, record in _proto_fields(data):
        if field == 1 and wire == 2:  # ModelProto.pieces
            if k not in removed:
                out += record
            k += 1
        elif field == 4 and wire == 2:  # ModelProto.self_test_data
            continue
        elif field == 2 and wire == 2:  # ModelProto.trainer_spec: its vocab_size (field 4)
            spec = bytearray()
            for f, w, r in _proto_fields(_payload(record)):
                spec += (_varint_bytes(4 << 3) + _varint_bytes(new_size)) if (f, w) == (4, 0) else r
            out += _varint_bytes((2 << 3) | 2) + _varint_bytes(len(spec)) + bytes(spec)
        else:
            out += record
    return bytes(out)


def _litetoken_sentencepiece(tok: Any, texts: list[str], threshold: float, threads: Optional[int]) -> Outcome:
    """SentencePiece BPE: encoding joins the adjacent pair whose joined piece has the highest
    score (the leftmost on a tie), a rank rule with ranks by score. Learned rows are the normal
    pieces of more than one character."""
    from .formats.sentencepiece.read import SentencePieceTokenizer

    if tok.model != "bpe":
        raise OptionError("LiteToken removes residues of BPE merges; this SentencePiece model is Unigram, which "
                          "has no merges (its pieces are chosen by probability, none is a step towards another). "
                          "To shrink it, train a smaller Unigram model (subwords train --model unigram "
                          "--vocab-size N)")
    pieces, scores, types = tok.pieces, tok.scores, tok.types
    n = len(pieces)
    normal = [t == "normal" for t in types]
    by_piece = {p: i for i, p in enumerate(pieces) if normal[i]}
    learned = [normal[i] and len(pieces[i]) > 1 for i in range(n)]
    final, encoded = _count(lambda xs: tok.encode_batch(xs, threads=threads), texts)
    keys: list[Optional[bytes]] = [p.encode("utf-8") if normal[i] else None for i, p in enumerate(pieces)]
    table = _core.StochasTok(keys)  # every split of every row into two rows
    derivation: list[Optional[tuple[int, int]]] = [None] * n
    asked = [False] * n

    def alone(i: int) -> Optional[tuple[int, int]]:
        """The last merge of piece ``i`` encoded alone by the score rule (None: not made so)."""
        if any(c not in by_piece for c in pieces[i]):
            return None
        parts = [by_piece[c] for c in pieces[i]]
        last: Optional[tuple[int, int]] = None
        while len(parts) > 1:
            best: Optional[int] = None
            at = -1
            for k in range(len(parts) - 1):
                j = by_piece.get(pieces[parts[k]] + pieces[parts[k + 1]])
                if j is not None and (best is None or scores[j] > scores[best]):
                    best, at = j, k
            if best is None:
                return None
            last = (parts[at], parts[at + 1])
            parts[at:at + 2] = [best]
        return last if parts == [i] else None

    def prepare(rows: list[int]) -> None:
        todo = list(rows)
        while todo:
            r = todo.pop()
            if asked[r] or not learned[r]:
                continue
            asked[r] = True
            d = alone(r)
            if d is not None:
                derivation[r] = d
                todo.extend(d)
    prepare(list(final))
    size = [len(p) for p in pieces]
    f1, f2 = formations(n, derivation, size, final)
    res = residues_of(learned, f1, f2, threshold)
    # shortest first, then the higher score first (the order the rule makes them)
    order = sorted([r for r in range(n) if learned[r]], key=lambda r: (size[r], -scores[r], r))
    removed, protected = choose(n, order, res, table, derivation.__getitem__, prepare)
    res = [r for r in res if r in removed]
    kept = [i for i in range(n) if i not in removed]
    id_map: list[Optional[int]] = [None] * n
    for j, i in enumerate(kept):
        id_map[i] = j
    data = _sp_without(tok._m.to_bytes(), removed, len(kept))
    new = SentencePieceTokenizer(data)
    new_encoded = new.encode_batch(texts, threads=threads)
    report = LiteTokenReport([(r, pieces[r], f1[r], f2[r]) for r in res],
                             [(r, pieces[r], f1[r], f2[r]) for r in protected], 0,
                             len(texts), _changed(encoded, new_encoded, id_map), threshold, "sentencepiece")

    def write(path: PathLike) -> None:
        write_atomic(path, data, "SentencePiece model")
    return new, id_map, n, len(kept), report, write


# -- merge lists (ours, tokenizer.json) -------------------------------------------------------

def _merge_list(n: int, merges: list[tuple[int, int, int]], learned: Sequence[bool], final: Counter[int],
                threshold: float, keys: list[Optional[bytes]]
                ) -> tuple[list[int], list[int], list[tuple[int, int, int]], int, list[int], list[int], set[int]]:
    """The LiteToken cut of a merge-list model, on ids: (residues removed, protected, new merges
    (a, b, c) in rank order, re-ranked rows, F1, F2, removed)."""
    derivation: list[Optional[tuple[int, int]]] = [None] * n
    first_at: dict[int, int] = {}
    by_c: dict[int, list[tuple[int, int]]] = {}
    for k, (a, b, c) in enumerate(merges):
        by_c.setdefault(c, []).append((a, b))
        if derivation[c] is None:
            derivation[c] = (a, b)
            first_at[c] = k
    size = _sizes(n, derivation, lambda i: 1)
    f1, f2 = formations(n, derivation, size, final)
    res = residues_of(learned, f1, f2, threshold)
    table = _core.StochasTok(keys)  # every split into two rows; a row's own merges are among them
    order = sorted((c for c in by_c if learned[c]), key=lambda i: (size[i], i))
    removed, protected = choose(n, order, res, table, lambda c: derivation[c])
    res = [r for r in res if r in removed]
    added: dict[int, list[tuple[int, int, int]]] = {}
    for c in order:
        if c in removed or any(a not in removed and b not in removed for a, b in by_c[c]):
            continue
        new = [(a, b, c) for a, b in table.splits(c) if a not in removed and b not in removed]
        if new:
            added[first_at[c]] = new
    # the kept merges in their order; a re-ranked row's merges go where its first merge stood;
    # any merge waits until both its parts are made (a merge list makes a row before using it)
    ready = set(i for i in range(n) if i not in by_c)
    waiting: dict[int, list[tuple[int, int, int]]] = {}  # part -> merges waiting for it
    out: list[tuple[int, int, int]] = []
    seen = set()

    def offer(m: tuple[int, int, int]) -> None:
        todo = [m]
        while todo:
            m = todo.pop()
            if (m[0], m[1]) in seen:
                continue
            missing = [x for x in (m[0], m[1]) if x not in ready]
            if missing:
                waiting.setdefault(missing[0], []).append(m)
                continue
            seen.add((m[0], m[1]))  # a pair merges once, at its first place
            out.append(m)
            if m[2] not in ready:
                ready.add(m[2])
                todo.extend(reversed(waiting.pop(m[2], [])))
    for k, (a, b, c) in enumerate(merges):
        for m in added.get(k, []):
            offer(m)
        if a not in removed and b not in removed and c not in removed:
            offer((a, b, c))
    assert not any(waiting.values()), "LiteToken: a kept merge's parts are never made"
    return res, protected, out, len(added), f1, f2, removed


#: why a model kind has no merge residues, and what cuts it instead
_NO_MERGES = {
    "wordpiece": "WordPiece encodes by longest match, no row is a step towards another; to drop the rows a "
                 "corpus does not use, run subwords trim without --litetoken",
    "unigram": "its pieces are chosen by probability, none is a step towards another; to drop the rows a corpus "
               "does not use, run subwords trim without --litetoken",
}


def _litetoken_ours(tok: Any, texts: list[str], threshold: float, threads: Optional[int]) -> Outcome:
    from ._api import SubwordsTokenizer

    if tok.model != "bpe":
        raise OptionError(f"LiteToken removes residues of BPE merges; this is a {tok.model} model, which has none "
                          f"({_NO_MERGES[tok.model]})")
    if (tok.options or {}).get("picky") is not None:
        raise OptionError("LiteToken does not cut a Picky BPE model: Picky BPE already removed its intermediate "
                          "tokens during training, and its removals are not merges LiteToken can re-rank")
    if (tok.options or {}).get("scaffold"):
        raise OptionError("LiteToken does not cut a Scaffold-BPE model: Scaffold-BPE already keeps its intermediate "
                          "tokens out of the rows, and its demolitions are not merges LiteToken can re-rank")
    doc = json.loads(tok.to_json())
    if doc.get("stream_merges_from") is not None or doc.get("joints") is not None:
        raise OptionError("LiteToken does not cut two-stage (superword) models or models with pre-split joints")
    rows: list[list[str]] = doc["rows"]
    n = len(rows)
    by_piece = {p: i for i, (p, kind) in enumerate(rows) if kind in ("alphabet", "learned")}
    scheme = doc["spelling"]["scheme"]
    mark = doc["spelling"].get("mark") or ""
    learned = [kind == "learned" for _, kind in rows]
    from .formats.tiktoken import BYTE_TO_CHAR, CHAR_TO_BYTE

    if scheme == "bytes":
        def join(left: str, right: str) -> str:
            return "".join(BYTE_TO_CHAR[CHAR_TO_BYTE[c]] for c in left + right)
    elif scheme == "continuation":
        def join(left: str, right: str) -> str:
            return left + (right[len(mark):] if right.startswith(mark) else right)
    else:
        def join(left: str, right: str) -> str:
            return left + right
    merges = [(by_piece[a], by_piece[b], by_piece[join(a, b)]) for a, b in doc["merges"]]
    keys: list[Optional[bytes]] = [None] * n
    for i, (p, kind) in enumerate(rows):
        if kind not in ("alphabet", "learned"):
            continue
        if scheme == "bytes":
            keys[i] = bytes(CHAR_TO_BYTE[c] for c in p)
        elif scheme == "continuation":
            keys[i] = p[len(mark):].encode("utf-8") if p.startswith(mark) else b"\x00" + p.encode("utf-8")
        else:
            keys[i] = p.encode("utf-8")
    final, encoded = _count(lambda xs: tok.encode_batch(xs, threads=threads), texts)
    res, protected, new_merges, reranked, f1, f2, removed = _merge_list(n, merges, learned, final, threshold, keys)
    # our model file lists learned rows in the order the merges make them: the kept learned rows
    # take the learned places in that order (a re-ranked row may move); the others keep theirs
    made_order = list(dict.fromkeys(c for _, _, c in new_merges if learned[c]))
    fill = iter(made_order)
    order = [next(fill) if learned[i] else i for i in range(n) if i not in removed]
    id_map: list[Optional[int]] = [None] * n
    for j, i in enumerate(order):
        id_map[i] = j
    doc["rows"] = [rows[i] for i in order]
    doc["merges"] = [[rows[a][0], rows[b][0]] for a, b, _ in new_merges]
    doc["report"] = None
    new = SubwordsTokenizer.from_json(json.dumps(doc, ensure_ascii=False))
    new_encoded = new.encode_batch(texts, threads=threads)
    report = LiteTokenReport([(i, rows[i][0], f1[i], f2[i]) for i in res], [(i, rows[i][0], f1[i], f2[i]) for i in protected],
                             reranked, len(texts), _changed(encoded, new_encoded, id_map), threshold, "subwords")
    text = new.to_json()

    def write(path: PathLike) -> None:
        write_atomic(path, text, "model file")
    return new, id_map, n, len(order), report, write


def _litetoken_hf(path: str, texts: list[str], threshold: float, threads: Optional[int]) -> Outcome:
    from .formats.huggingface import read as hf_read
    from .formats.tiktoken import BYTE_TO_CHAR, CHAR_TO_BYTE

    try:
        doc = json.loads(read_limited(path, MAX_JSON_BYTES, "tokenizer.json").decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise ModelFileError(f"{path}: not a tokenizer.json file ({e})") from None
    old_tok = hf_read.HuggingFace(doc, path)
    m = doc.get("model") or {}
    if m.get("type") != "BPE":
        raise OptionError(f"{path}: LiteToken removes residues of BPE merges; this file's model is {m.get('type')!r}, "
                          "which has none (no row is a step of merges towards another); a WordPiece or Unigram "
                          "vocabulary is not cut by LiteToken")
    for key in ("continuing_subword_prefix", "end_of_word_suffix"):
        if m.get(key):
            raise InputError(f"{path}: LiteToken reads BPE tokenizer.json files without {key}")
    vocab: dict[str, int] = m["vocab"]
    added = [t for t in doc.get("added_tokens") or [] if isinstance(t, dict)]
    added_ids = {t["id"] for t in added if isinstance(t.get("id"), int)}
    n = max(list(vocab.values()) + list(added_ids)) + 1
    piece: list[Optional[str]] = [None] * n
    for t, i in vocab.items():
        piece[i] = t
    merges_in = m.get("merges") or []
    as_strings = bool(merges_in) and isinstance(merges_in[0], str)
    merges = []
    for rank, mg in enumerate(merges_in):
        left, right = mg.split(" ", 1) if isinstance(mg, str) else mg
        try:
            merges.append((vocab[left], vocab[right], vocab[left + right]))
        except KeyError:
            raise ModelFileError(f"{path}: merge {rank} ({left!r}, {right!r}) names a token with no id") from None
    made = {c for _, _, c in merges}
    learned = [i in made and i not in added_ids for i in range(n)]
    byte_level = all(c in CHAR_TO_BYTE for t in vocab for c in t)

    keys = [p.encode("utf-8") if p is not None and i not in added_ids else None for i, p in enumerate(piece)]
    final, encoded = _count(lambda xs: old_tok.encode_batch(xs, threads=threads), texts)
    res, protected, new_merges, reranked, f1, f2, removed = _merge_list(n, merges, learned, final, threshold, keys)
    order = [i for i in range(n) if i not in removed]
    id_map: list[Optional[int]] = [None] * n
    for j, i in enumerate(order):
        id_map[i] = j
    out = dict(doc)
    new_vocab = {t: id_map[i] for t, i in vocab.items() if id_map[i] is not None}
    out_merges = [f"{piece[a]} {piece[b]}" if as_strings else [piece[a], piece[b]] for a, b, _ in new_merges]
    out["model"] = {**m, "vocab": new_vocab, "merges": out_merges}
    out["added_tokens"] = [{**t, "id": id_map[t["id"]]} if isinstance(t.get("id"), int) else t for t in added]
    _remap_post(out, id_map)
    text = json.dumps(out, ensure_ascii=False, indent=2)
    new = hf_read.HuggingFace(json.loads(text), path)
    new_encoded = new.encode_batch(texts, threads=threads)

    def show(i: int) -> str:
        p = piece[i] or ""
        if byte_level:
            return bytes(CHAR_TO_BYTE[c] for c in p).decode("utf-8", "backslashreplace")
        return p
    report = LiteTokenReport([(i, show(i), f1[i], f2[i]) for i in res], [(i, show(i), f1[i], f2[i]) for i in protected],
                             reranked, len(texts), _changed(encoded, new_encoded, id_map), threshold, "hf")

    def write(p: PathLike) -> None:
        write_atomic(p, text, "tokenizer.json")
    return new, id_map, n, len(order), report, write


def _remap_post(doc: dict[str, Any], id_map: list[Optional[int]]) -> None:
    """The special tokens' ids a post-processor names (TemplateProcessing, BertProcessing, ...)."""
    def fix(node: Any) -> Any:
        if isinstance(node, dict):
            for k, v in list(node.items()):
                if k == "ids" and isinstance(v, list) and all(isinstance(x, int) for x in v):
                    node[k] = [id_map[x] if 0 <= x < len(id_map) and id_map[x] is not None else x for x in v]
                elif k in ("sep", "cls") and isinstance(v, list) and len(v) == 2 and isinstance(v[1], int):
                    x = v[1]
                    node[k] = [v[0], id_map[x] if 0 <= x < len(id_map) and id_map[x] is not None else x]
                else:
                    fix(v)
        elif isinstance(node, list):
            for v in node:
                fix(v)
        return node
    if doc.get("post_processor") is not None:
        fix(doc["post_processor"])


def litetoken(model: Any, texts: list[str], threshold: float, threads: Optional[int] = None) -> Outcome:
    """(new tokenizer, id map, old size, new size, report, write(path)) for ``model``: one of
    our BPE models, a tiktoken tokenizer, a SentencePiece BPE model, or a path to any of them or
    to a BPE tokenizer.json."""
    from ._api import SubwordsTokenizer
    from .formats.sentencepiece.read import SentencePieceTokenizer
    from .formats.tiktoken.read import TiktokenTokenizer

    threshold = check_threshold(threshold)
    if isinstance(model, SubwordsTokenizer):
        return _litetoken_ours(model, texts, threshold, threads)
    if isinstance(model, TiktokenTokenizer):
        return _litetoken_tiktoken(model, texts, threshold, threads)
    if isinstance(model, SentencePieceTokenizer):
        return _litetoken_sentencepiece(model, texts, threshold, threads)
    if not isinstance(model, (str, os.PathLike)):
        raise InputError(f"LiteToken takes a subwords BPE model, a tiktoken tokenizer, or a path to a model file "
                         f"(ours, tokenizer.json, .tiktoken); got {type(model).__name__}")
    from .formats import _dispatch

    p = os.fspath(model)
    if not os.path.exists(p):
        raise InputError(f"{p}: no such model file")
    fmt = _dispatch.detect(p)
    if fmt == "subwords":
        from ._api import load_model_file

        return _litetoken_ours(load_model_file(p), texts, threshold, threads)
    if fmt == "hf":
        if os.path.isdir(p):
            p = os.path.join(p, "tokenizer.json")
        return _litetoken_hf(p, texts, threshold, threads)
    if fmt == "tiktoken":
        from .formats.tiktoken import load

        return _litetoken_tiktoken(load(p), texts, threshold, threads)
    if fmt == "sentencepiece":
        from .formats.sentencepiece import load as sp_load

        return _litetoken_sentencepiece(sp_load(p), texts, threshold, threads)
    if fmt == "vocab-txt":
        raise OptionError(f"{p}: a vocab.txt is a WordPiece vocabulary, encoded by longest match: no row is a step of "
                          "merges towards another, so LiteToken has nothing to remove")
    raise OptionError(f"{p}: LiteToken reads subwords model files, tokenizer.json, .tiktoken and SentencePiece BPE "
                      f".model files, and writes the same format back; a {fmt} file is not written back yet: write it "
                      "as tokenizer.json (subwords export MODEL tokenizer.json --format hf) and cut that")


# -- the measure alone (subwords.measure: intermediate-token share) ------------------------------

def residue_share(tok: Any, final: Counter[int], threshold: float = DEFAULT_THRESHOLD) -> Optional[tuple[int, int]]:
    """(residues, learned rows) of a BPE tokenizer given ``final``, the ids of its encoding of a
    corpus counted; None for a tokenizer whose merges this cannot read (not BPE)."""
    from ._api import SubwordsTokenizer
    from .formats.tiktoken.read import TiktokenTokenizer

    if isinstance(tok, TiktokenTokenizer):
        tokens = tok._core.tokens()
        n = max([r for _, r in tokens] + list(dict(tok._core.specials()).values())) + 1
        text_of: list[Optional[bytes]] = [None] * n
        rank: dict[bytes, int] = {}
        for t, r in tokens:
            text_of[r] = t
            rank[t] = r
        derivation: list[Optional[tuple[int, int]]] = _core.StochasTok(text_of).rank_last_splits(list(final))
        learned = [t is not None and len(t) > 1 for t in text_of]
        size = [len(t) if t is not None else 1 for t in text_of]
    else:
        if isinstance(tok, SubwordsTokenizer):
            if tok.model != "bpe":
                return None
            rows, kinds = tok.rows, tok.kinds
            n = len(rows)
            by_piece = {p: i for i, (p, k) in enumerate(zip(rows, kinds)) if k in ("alphabet", "learned")}
            pairs = [(by_piece[a], by_piece[b]) for a, b in tok.merges]
            triples = [(a, b, c) for (a, b), c in zip(pairs, _ours_results(tok, by_piece))]
            learned = [k == "learned" for k in kinds]
        else:
            tables = getattr(tok, "_tables", None)
            if tables is None:
                return None
            merges = tables.merges()
            if not merges:
                return None
            vocab = dict(tables.pairs())
            n = max(vocab.values()) + 1
            triples = []
            for a, b in merges:
                if a in vocab and b in vocab and a + b in vocab:
                    triples.append((vocab[a], vocab[b], vocab[a + b]))
            results_set = {c for _, _, c in triples}
            learned = [i in results_set for i in range(n)]
        derivation = [None] * n
        for a, b, c in triples:
            if derivation[c] is None:
                derivation[c] = (a, b)
        size = _sizes(n, derivation, lambda i: 1)
    f1, f2 = formations(n, derivation, size, final)
    return len(residues_of(learned, f1, f2, threshold)), sum(learned)


def _ours_results(tok: Any, by_piece: dict[str, int]) -> list[int]:
    doc = json.loads(tok.to_json())
    scheme = doc["spelling"]["scheme"]
    mark = doc["spelling"].get("mark") or ""
    from .formats.tiktoken import BYTE_TO_CHAR, CHAR_TO_BYTE

    out = []
    for a, b in doc["merges"]:
        if scheme == "bytes":
            j = "".join(BYTE_TO_CHAR[CHAR_TO_BYTE[c]] for c in a + b)
        elif scheme == "continuation":
            j = a + (b[len(mark):] if b.startswith(mark) else b)
        else:
            j = a + b
        out.append(by_piece[j])
    return out
