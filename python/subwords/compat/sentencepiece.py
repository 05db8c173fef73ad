"""sentencepiece's Python API on subwords' engine: ``import subwords.compat.sentencepiece as spm``.

``SentencePieceProcessor`` reads the same ``.model`` files and gives the same ids and pieces as
``sentencepiece`` (the ``.model`` reader in ``subwords.formats.sentencepiece`` is exact for
Unigram and BPE models). The plain calls (``encode`` to ids or pieces, one text or a batch,
``decode``) go straight to the Rust engine; the rest is built on it here:

* n-best (``NBestEncode*``) by the engine's k-best search over the Unigram lattice as
  sentencepiece defines it (the pieces matching at each character, an unknown node where no
  one-character piece does, user-defined symbols scored ``0.1·(bytes − 1)``);
* sampling (``enable_sampling``, ``SampleEncodeAs*``, ``SampleEncodeAndScoreAs*``) and
  ``CalculateEntropy`` on that lattice here: forward-filtering backward-sampling for
  ``nbest_size < 0``, a draw among the n best otherwise; BPE sampling is BPE-dropout with
  ``alpha`` as the drop rate. The draws are seeded (``SetRandomGeneratorSeed``) but are not
  sentencepiece's own random stream;
* ``out_type`` ``int``, ``str``, ``bytes``, ``'serialized_proto'``, ``'proto'`` (needs the
  ``protobuf`` package), ``'offset_mapping'`` and ``'numpy'``;
* ``SentencePieceTrainer.train`` on subwords' trainer, with spm_train's flag names (those it does
  not reproduce are refused by name).

What is not offered raises an error naming it (``'immutable_proto'``, ``model_type=word``, a
Python pre-tokenizer for training, ``ConvertToFlatbuffer``...). docs/COMPAT.md has the table.
"""

from __future__ import annotations

import heapq
import math
import os
import random
import struct
import threading
from typing import Any, Iterable, Optional, Sequence, Union

from ..errors import FileError, InputError, ModelFileError, OptionError, SubwordsError, UnknownPieceError
from . import _spwire as wire

__version__ = "0.2.3"

SPACE = "\u2581"
NORMAL, UNKNOWN, CONTROL, USER_DEFINED, UNUSED, BYTE = 1, 2, 3, 4, 5, 6
_UNK_PENALTY = 10.0


class IdRangeError(InputError, IndexError):
    """An id outside the vocabulary (sentencepiece raises ``IndexError``)."""


class PieceTypeError(InputError, TypeError):
    """An id or piece argument of the wrong type."""


class NotOfferedError(SubwordsError, RuntimeError):
    """A sentencepiece feature or option combination this face does not offer."""


class NotOfferedOptionError(OptionError):
    """A sentencepiece option value this face does not offer (a ``ValueError``)."""


# -- globals -------------------------------------------------------------------------------------
_rng = random.Random()
_rng_lock = threading.Lock()
_nbest_timeout_ms = 0


def SetRandomGeneratorSeed(seed: int) -> None:
    """Seeds the draws of every sampling call (the draws are this face's own, not
    sentencepiece's stream)."""
    with _rng_lock:
        _rng.seed(int(seed))


def SetMinLogLevel(v: int) -> None:
    """Accepted for compatibility: this face logs nothing."""
    int(v)


def SetNBestTimeout(timeout_ms: int) -> None:
    """n-best search stops after ``timeout_ms`` milliseconds with the results found so far (0:
    no limit)."""
    global _nbest_timeout_ms
    _nbest_timeout_ms = max(0, int(timeout_ms))


def SetDataDir(data_dir: str) -> None:
    """Accepted for compatibility: the face needs no data folder."""
    os.fspath(data_dir)


set_random_generator_seed = SetRandomGeneratorSeed
set_min_log_level = SetMinLogLevel
set_nbest_timeout = SetNBestTimeout
set_data_dir = SetDataDir


def ConvertToFlatbuffer(**kwargs: Any) -> Any:
    raise NotOfferedError("ConvertToFlatbuffer (sentencepiece-lite's FlatBuffer format) is not offered by "
                          "subwords' sentencepiece face; use the real sentencepiece package for it")


convert_to_flatbuffer = ConvertToFlatbuffer


class ThreadPool:
    """A thread count to hand to ``encode``/``decode`` (``thread_pool=``); the engine keeps its own
    workers."""

    def __init__(self, num_threads: int) -> None:
        if not isinstance(num_threads, int) or num_threads < 1:
            raise OptionError(f"ThreadPool needs a positive thread count, got {num_threads!r}")
        self._n = num_threads

    def num_threads(self) -> int:
        return self._n


# -- the protobuf classes (optional) -------------------------------------------------------------
_PB: dict[str, Any] = {}


def _pb_classes() -> dict[str, Any]:
    """SentencePieceText, NBestSentencePieceText and a partial ModelProto as protobuf classes,
    built from descriptors written here (the field numbers of sentencepiece's .proto files)."""
    if _PB:
        return _PB
    from google.protobuf import descriptor_pb2, descriptor_pool, message_factory  # type: ignore[import-untyped,unused-ignore]

    F = descriptor_pb2.FieldDescriptorProto
    pool = descriptor_pool.DescriptorPool()

    def field(msg: Any, name: str, num: int, ty: int, label: int = F.LABEL_OPTIONAL, type_name: str = "",
              default: str = "") -> None:
        f = msg.field.add(name=name, number=num, type=ty, label=label)
        if type_name:
            f.type_name = type_name
        if default:
            f.default_value = default

    text = descriptor_pb2.FileDescriptorProto(name="subwords_sentencepiece.proto", package="sentencepiece", syntax="proto2")
    spt = text.message_type.add(name="SentencePieceText")
    sp = spt.nested_type.add(name="SentencePiece")
    field(sp, "piece", 1, F.TYPE_STRING)
    field(sp, "id", 2, F.TYPE_UINT32)
    field(sp, "surface", 3, F.TYPE_STRING)
    field(sp, "begin", 4, F.TYPE_UINT32)
    field(sp, "end", 5, F.TYPE_UINT32)
    field(spt, "text", 1, F.TYPE_STRING)
    field(spt, "pieces", 2, F.TYPE_MESSAGE, F.LABEL_REPEATED, ".sentencepiece.SentencePieceText.SentencePiece")
    field(spt, "score", 3, F.TYPE_FLOAT)
    nb = text.message_type.add(name="NBestSentencePieceText")
    field(nb, "nbests", 1, F.TYPE_MESSAGE, F.LABEL_REPEATED, ".sentencepiece.SentencePieceText")

    model = descriptor_pb2.FileDescriptorProto(name="subwords_sentencepiece_model.proto", package="sentencepiece",
                                               syntax="proto2")
    ts = model.message_type.add(name="TrainerSpec")
    mt = ts.enum_type.add(name="ModelType")
    for n, v in (("UNIGRAM", 1), ("BPE", 2), ("WORD", 3), ("CHAR", 4)):
        mt.value.add(name=n, number=v)
    field(ts, "input", 1, F.TYPE_STRING, F.LABEL_REPEATED)
    field(ts, "model_prefix", 2, F.TYPE_STRING)
    field(ts, "model_type", 3, F.TYPE_ENUM, type_name=".sentencepiece.TrainerSpec.ModelType", default="UNIGRAM")
    field(ts, "vocab_size", 4, F.TYPE_INT32, default="8000")
    field(ts, "character_coverage", 10, F.TYPE_FLOAT, default="0.9995")
    field(ts, "byte_fallback", 35, F.TYPE_BOOL, default="false")
    for name, num, d in (("unk_id", 40, "0"), ("bos_id", 41, "1"), ("eos_id", 42, "2"), ("pad_id", 43, "-1")):
        field(ts, name, num, F.TYPE_INT32, default=d)
    for name, num in (("unk_surface", 44), ("unk_piece", 45), ("bos_piece", 46), ("eos_piece", 47), ("pad_piece", 48)):
        field(ts, name, num, F.TYPE_STRING)
    ns = model.message_type.add(name="NormalizerSpec")
    field(ns, "name", 1, F.TYPE_STRING)
    field(ns, "precompiled_charsmap", 2, F.TYPE_BYTES)
    field(ns, "add_dummy_prefix", 3, F.TYPE_BOOL, default="true")
    field(ns, "remove_extra_whitespaces", 4, F.TYPE_BOOL, default="true")
    field(ns, "escape_whitespaces", 5, F.TYPE_BOOL, default="true")
    field(ns, "normalization_rule_tsv", 6, F.TYPE_STRING)
    mp = model.message_type.add(name="ModelProto")
    mps = mp.nested_type.add(name="SentencePiece")
    ty = mps.enum_type.add(name="Type")
    for n, v in (("NORMAL", 1), ("UNKNOWN", 2), ("CONTROL", 3), ("USER_DEFINED", 4), ("BYTE", 6), ("UNUSED", 5)):
        ty.value.add(name=n, number=v)
    field(mps, "piece", 1, F.TYPE_STRING)
    field(mps, "score", 2, F.TYPE_FLOAT)
    field(mps, "type", 3, F.TYPE_ENUM, type_name=".sentencepiece.ModelProto.SentencePiece.Type", default="NORMAL")
    field(mp, "pieces", 1, F.TYPE_MESSAGE, F.LABEL_REPEATED, ".sentencepiece.ModelProto.SentencePiece")
    field(mp, "trainer_spec", 2, F.TYPE_MESSAGE, type_name=".sentencepiece.TrainerSpec")
    field(mp, "normalizer_spec", 3, F.TYPE_MESSAGE, type_name=".sentencepiece.NormalizerSpec")
    field(mp, "denormalizer_spec", 5, F.TYPE_MESSAGE, type_name=".sentencepiece.NormalizerSpec")
    pool.Add(text)
    pool.Add(model)
    get = getattr(message_factory, "GetMessageClass", None)
    for name in ("SentencePieceText", "NBestSentencePieceText", "ModelProto", "TrainerSpec", "NormalizerSpec"):
        d = pool.FindMessageTypeByName("sentencepiece." + name)
        _PB[name] = get(d) if get else message_factory.MessageFactory(pool).GetPrototype(d)
    return _PB


def __getattr__(name: str) -> Any:
    """``sentencepiece_pb2`` and ``sentencepiece_model_pb2``, as sentencepiece ships them (built
    on first use; they need the protobuf package)."""
    if name in ("sentencepiece_pb2", "sentencepiece_model_pb2"):
        import types

        c = _pb_classes()
        mod = types.ModuleType(f"{__name__}.{name}")
        names = (("SentencePieceText", "NBestSentencePieceText") if name == "sentencepiece_pb2"
                 else ("ModelProto", "TrainerSpec", "NormalizerSpec"))
        for n in names:
            setattr(mod, n, c[n])
        globals()[name] = mod
        return mod
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _f32(x: float) -> float:
    return float(struct.unpack("f", struct.pack("f", x))[0])


# -- the model -----------------------------------------------------------------------------------
class _Model:
    """One loaded ``.model``: the Rust engine plus what the Python side needs of the file."""

    def __init__(self, data: bytes) -> None:
        from .. import _core

        self.data = bytes(data)
        try:
            self.m = _core.SpModel(self.data)
        except ModelFileError:
            raise
        self.e = self.m.encoder()  # the core's encoder contract: single calls and batches
        self.pieces: list[str] = self.m.pieces
        self.scores: list[float] = self.m.scores
        self.types: list[int] = self.m.types
        self.size = len(self.pieces)
        self.index = {p: i for i, p in enumerate(self.pieces)}
        self.kind: str = self.m.kind
        self.unk: int = self.m.unk_id
        self.byte_fallback: bool = self.m.byte_fallback
        top = wire.parse(self.data)
        trainer = wire.parse(wire.get(top, 2, b""))  # type: ignore[arg-type]
        norm = wire.parse(wire.get(top, 3, b""))  # type: ignore[arg-type]

        def name(field: int, default: str) -> str:
            v = wire.get(trainer, field)
            return v.decode("utf-8") if isinstance(v, bytes) else default

        self.unk_surface = name(44, " \u2047 ")
        self.role_pieces = {"unk": name(45, "<unk>"), "bos": name(46, "<s>"), "eos": name(47, "</s>"),
                            "pad": name(48, "<pad>")}
        self.add_dummy_prefix = bool(wire.get(norm, 3, 1))
        self.remove_extra_whitespaces = bool(wire.get(norm, 4, 1))
        self.escape_whitespaces = bool(wire.get(norm, 5, 1))
        self._table: Optional[dict[str, tuple[int, float]]] = None
        self._maxlen = 1
        self._users: list[str] = [p for p, t in zip(self.pieces, self.types) if t == USER_DEFINED]
        self.byte_ids = {int(p[3:5], 16): i for i, (p, t) in enumerate(zip(self.pieces, self.types)) if t == BYTE}
        # ``encode(text)`` and ``encode(text, out_type=str)`` (each id's piece, except that a run
        # of unknown characters is its own text), and of a list of texts on the engine's batch
        # workers: one engine call each
        self.ids = self.m.ids
        self.pieces_of = self.m.pieces_of
        self.pieces_of_batch = self.m.pieces_of_batch

    def role_id(self, role: str) -> int:
        i = self.index.get(self.role_pieces[role])
        want = UNKNOWN if role == "unk" else CONTROL
        return i if i is not None and self.types[i] == want else -1

    # lattice tables (built on first use)
    def table(self) -> dict[str, tuple[int, float]]:
        if self._table is None:
            t: dict[str, tuple[int, float]] = {}
            for i, (p, s, ty) in enumerate(zip(self.pieces, self.scores, self.types)):
                if ty == NORMAL:
                    t[p] = (i, s)
                elif ty == USER_DEFINED:
                    t[p] = (i, _f32(0.1 * (len(p.encode("utf-8")) - 1)))
            self._maxlen = max((len(p) for p in t), default=1)
            normal = [s for s, ty in zip(self.scores, self.types) if ty == NORMAL]
            self.min_score = min(normal) if normal else 0.0
            self._table = t
        return self._table

    def normalize_map(self, text: str) -> tuple[str, list[int]]:
        """Normalized text and, per character of it plus one past the end, the byte offset in
        ``text`` it came from."""
        norm, bmap = self.m.normalize_with_offsets(text)
        if not norm:
            return "", [len(text.encode("utf-8"))]
        out = []
        b = 0
        for ch in norm:
            out.append(bmap[b])
            b += len(ch.encode("utf-8"))
        out.append(bmap[b] if b < len(bmap) else len(text.encode("utf-8")))
        return norm, out

    # -- the Unigram lattice --------------------------------------------------------------------
    def arcs(self, norm: str) -> list[list[tuple[int, int, float]]]:
        """For each end position, the arcs ``(start, id, score)`` ending there, start ascending."""
        table = self.table()
        unk_score = self.min_score - _UNK_PENALTY
        n = len(norm)
        ends: list[list[tuple[int, int, float]]] = [[] for _ in range(n + 1)]
        L = self._maxlen
        for i in range(n):
            single = False
            for ln in range(1, min(L, n - i) + 1):
                hit = table.get(norm[i:i + ln])
                if hit is not None:
                    ends[i + ln].append((i, hit[0], hit[1]))
                    single |= ln == 1
            if not single:
                ends[i + 1].append((i, self.unk, unk_score))
        for e in ends:
            e.sort(key=lambda a: a[0])
        return ends

    def nbest(self, norm: str, k: int) -> list[tuple[list[tuple[int, int, int]], float]]:
        """The ``k`` best segmentations of ``norm`` (cuts ``(start, end, id)`` in characters,
        score), best first: the engine's k-best search (``SpModel.nbest``), its sums in single
        precision as sentencepiece's; the earlier start wins a tie."""
        if not norm:
            return [([], 0.0)]
        pos = {}
        b = 0
        for c, ch in enumerate(norm):
            pos[b] = c
            b += len(ch.encode("utf-8"))
        pos[b] = len(norm)
        return [([(pos[s], pos[e], id) for s, e, id in cuts], score)
                for cuts, score in self.m.nbest(norm, k, _nbest_timeout_ms)]

    def forward(self, norm: str, theta: float) -> tuple[list[list[tuple[int, int, float]]], list[float]]:
        ends = self.arcs(norm)
        n = len(norm)
        F = [-math.inf] * (n + 1)
        F[0] = 0.0
        for j in range(1, n + 1):
            F[j] = _logsumexp([F[i] + theta * s for (i, _, s) in ends[j]])
        return ends, F

    def sample(self, norm: str, theta: float, rng: random.Random) -> tuple[list[tuple[int, int, int]], float]:
        """One segmentation drawn with probability ∝ exp(theta·score) (forward filtering,
        backward sampling), and its log-probability."""
        if not norm:
            return [], 0.0
        ends, F = self.forward(norm, theta)
        cuts = []
        j = len(norm)
        logp = 0.0
        while j > 0:
            weights = [F[i] + theta * s - F[j] for (i, _, s) in ends[j]]
            r = rng.random()
            acc = 0.0
            pick = len(weights) - 1
            for idx, w in enumerate(weights):
                acc += math.exp(w)
                if r < acc:
                    pick = idx
                    break
            i, id, s = ends[j][pick]
            logp += theta * s
            cuts.append((i, j, id))
            j = i
        cuts.reverse()
        return cuts, logp - F[len(norm)]

    def entropy(self, norm: str, theta: float) -> float:
        if not norm:
            return 0.0
        ends, F = self.forward(norm, theta)
        n = len(norm)
        B = [-math.inf] * (n + 1)
        B[n] = 0.0
        starts: list[list[tuple[int, float]]] = [[] for _ in range(n + 1)]
        for j in range(1, n + 1):
            for (i, _, s) in ends[j]:
                starts[i].append((j, s))
        for i in range(n - 1, -1, -1):
            B[i] = _logsumexp([theta * s + B[j] for (j, s) in starts[i]])
        Z = F[n]
        expected = 0.0
        for j in range(1, n + 1):
            for (i, _, s) in ends[j]:
                expected += math.exp(F[i] + theta * s + B[j] - Z) * theta * s
        return Z - expected

    def count_paths(self, norm: str) -> int:
        ends = self.arcs(norm)
        c = [0] * (len(norm) + 1)
        c[0] = 1
        for j in range(1, len(norm) + 1):
            c[j] = sum(c[i] for (i, _, _) in ends[j])
        return c[len(norm)]

    # -- BPE with dropout -----------------------------------------------------------------------
    def bpe_dropout(self, norm: str, p: float, rng: random.Random) -> list[tuple[int, int, int]]:
        """sentencepiece's BPE over ``norm`` with each join skipped with probability ``p``."""
        table = {pc: i for i, (pc, t) in enumerate(zip(self.pieces, self.types)) if t in (NORMAL, USER_DEFINED, UNUSED)}
        # initial symbols: a user-defined symbol whole, else one character
        syms: list[list[int]] = []  # [start, end]
        i = 0
        users = sorted(self._users, key=len, reverse=True)
        while i < len(norm):
            for u in users:
                if norm.startswith(u, i):
                    syms.append([i, i + len(u)])
                    i += len(u)
                    break
            else:
                syms.append([i, i + 1])
                i += 1
        n = len(syms)
        prev = list(range(-1, n - 1))
        nxt = list(range(1, n + 1))
        nxt[-1:] = [-1] if n else []
        alive = [True] * n
        heap: list[tuple[float, int, int, int, str]] = []

        def push(a: int, b: int) -> None:
            if a < 0 or b < 0:
                return
            text = norm[syms[a][0]:syms[b][1]]
            id = table.get(text)
            if id is not None:
                heapq.heappush(heap, (-self.scores[id], syms[a][0], a, b, text))

        for a in range(n - 1):
            push(a, a + 1)
        while heap:
            _, _, a, b, text = heapq.heappop(heap)
            if not (alive[a] and alive[b]) or nxt[a] != b or norm[syms[a][0]:syms[b][1]] != text:
                continue
            if p > 0 and rng.random() < p:
                continue
            syms[a][1] = syms[b][1]
            alive[b] = False
            nxt[a] = nxt[b]
            if nxt[b] >= 0:
                prev[nxt[b]] = a
            push(prev[a], a)
            push(a, nxt[a])
        cuts: list[tuple[int, int, int]] = []
        k = 0 if n else -1
        while k >= 0:
            s, e = syms[k]
            self._resegment(norm[s:e], s, table, cuts)
            k = nxt[k]
        return cuts

    def _resegment(self, text: str, start: int, table: dict[str, int], cuts: list[tuple[int, int, int]]) -> None:
        id = table.get(text)
        if id is None:
            cuts.append((start, start + len(text), self.unk))
            return
        if self.types[id] != UNUSED:
            cuts.append((start, start + len(text), id))
            return
        # an unused piece: split it back into the two pieces that made it (the best-scoring split)
        best = None
        for m in range(1, len(text)):
            a, b = table.get(text[:m]), table.get(text[m:])
            if a is not None and b is not None:
                sc = self.scores[a] + self.scores[b]
                if best is None or sc > best[0]:
                    best = (sc, m)
        if best is None:
            cuts.append((start, start + len(text), id))
            return
        self._resegment(text[:best[1]], start, table, cuts)
        self._resegment(text[best[1]:], start + best[1], table, cuts)

    # -- cuts to output -------------------------------------------------------------------------
    def emit(self, norm: str, cmap: list[int], cuts: list[tuple[int, int, int]]) -> tuple[list[int], list[str], list[tuple[int, int]]]:
        """Ids, pieces and byte spans of the input, from cuts of the normalized text (an unknown
        cut to byte pieces under byte fallback, a run of unknown cuts to one ``<unk>``)."""
        ids: list[int] = []
        pieces: list[str] = []
        spans: list[tuple[int, int]] = []
        prev_unk = False
        for (s, e, id) in cuts:
            ob, oe = cmap[s], cmap[e]
            surface = norm[s:e]
            if id == self.unk:
                if self.byte_fallback:
                    bs = surface.encode("utf-8")
                    for k, b in enumerate(bs):
                        bid = self.byte_ids[b]
                        ids.append(bid)
                        pieces.append(self.pieces[bid])
                        spans.append((ob, oe) if k + 1 == len(bs) else (ob, ob))
                    prev_unk = True
                    continue
                if prev_unk:
                    spans[-1] = (spans[-1][0], oe)
                    pieces[-1] += surface
                    continue
                ids.append(id)
                pieces.append(surface)
                spans.append((ob, oe))
                prev_unk = True
                continue
            ids.append(id)
            pieces.append(self.pieces[id])
            spans.append((ob, oe))
            prev_unk = False
        return ids, pieces, spans

    # -- decoding with surfaces -----------------------------------------------------------------
    def decode_surfaces(self, items: list[tuple[int, Optional[str]]]) -> list[str]:
        """Each item's share of the decoded text (sentencepiece's decoder: the first piece loses
        its leading ``▁``, controls decode to nothing, byte pieces join into characters whose text
        goes to the last byte of each)."""
        strip_first = self.add_dummy_prefix or self.remove_extra_whitespaces
        out: list[str] = []
        pending: list[int] = []  # byte values of the byte pieces not yet flushed
        is_bos_ws = True
        bos_ws_seen = False
        text_len = 0

        def flush() -> None:
            nonlocal text_len
            if not pending:
                return
            data = bytes(pending)
            k = 0
            shares = [""] * len(data)
            while k < len(data):
                for ln in (1, 2, 3, 4):
                    try:
                        ch = data[k:k + ln].decode("utf-8")
                    except UnicodeDecodeError:
                        continue
                    shares[k + ln - 1] = ch
                    k += ln
                    break
                else:
                    shares[k] = "\ufffd"
                    k += 1
            base = len(out) - len(pending)
            for idx, sh in enumerate(shares):
                out[base + idx] = sh
                text_len += len(sh)
            pending.clear()

        for id, own in items:
            ty = self.types[id]
            if ty == BYTE:
                pending.append(int(self.pieces[id][3:5], 16))
                out.append("")
                continue
            flush()
            if bos_ws_seen or text_len:
                is_bos_ws = False
            bos_ws_seen = False
            if ty == CONTROL:
                out.append("")
            elif ty == UNKNOWN:
                out.append(own if own is not None else self.unk_surface)
            else:
                p = self.pieces[id]
                if is_bos_ws and strip_first and p.startswith(SPACE):
                    p = p[1:]
                    bos_ws_seen = not self.remove_extra_whitespaces
                out.append(p.replace(SPACE, " "))
            text_len += len(out[-1])
        flush()
        return out


def _unroll(path: Any) -> list[tuple[int, int, int]]:
    cuts = []
    while path is not None:
        cuts.append(path[0])
        path = path[1]
    cuts.reverse()
    return cuts


def _logsumexp(xs: list[float]) -> float:
    if not xs:
        return -math.inf
    m = max(xs)
    if m == -math.inf:
        return m
    return m + math.log(sum(math.exp(x - m) for x in xs))


# -- argument helpers ----------------------------------------------------------------------------
_OUT_TYPES = (int, str, bytes, "serialized_proto", "proto", "offset_mapping", "numpy", "immutable_proto")


def _out_type(return_type: Any, out_type: Any, default: Any) -> Any:
    if return_type is not None and out_type is not None:
        raise OptionError("give return_type or out_type (its older name), not both")
    t = return_type if return_type is not None else out_type if out_type is not None else default
    if t == "immutable_proto":
        raise NotOfferedOptionError("out_type='immutable_proto' is not offered by subwords' sentencepiece face; "
                                    "use 'proto' (needs the protobuf package) or 'serialized_proto'")
    if not any(t is x or t == x for x in _OUT_TYPES if x != "immutable_proto"):
        raise OptionError(f"unknown return type {t!r}; use int, str, bytes, 'serialized_proto', 'proto', "
                          "'offset_mapping' or 'numpy'")
    return t


def _check_return_bytes(t: Any, return_bytes: Optional[bool]) -> None:
    if return_bytes is None:
        return
    if t == "offset_mapping":
        return
    if t is str and return_bytes:
        raise OptionError("return_bytes=True contradicts return_type=str")
    if t is bytes and not return_bytes:
        raise OptionError("return_bytes=False contradicts return_type=bytes")
    if t is not str and t is not bytes:
        raise OptionError(f"return_bytes applies to str, bytes and 'offset_mapping' output, not {t!r}")


def _text(x: Any) -> tuple[str, bool]:
    if isinstance(x, str):
        return x, False
    if isinstance(x, (bytes, bytearray, memoryview)):
        try:
            return bytes(x).decode("utf-8"), True
        except UnicodeDecodeError as e:
            raise InputError(f"the input bytes are not UTF-8 ({e.reason} at byte {e.start})") from None
    raise PieceTypeError(f"expected text (str or bytes) or a list of them, got {type(x).__name__}")


def _gc_paused() -> Any:
    """No cyclic collection while a batch's result lists are made (``subwords._api.gc_paused``):
    they hold only ints or strs, yet each counts toward the collector's thresholds. On 83,102
    English lines through an 8,000-piece Unigram model, the collections they triggered were a
    third of a batch's CPU time on one thread, all of it on the calling thread, so on two
    threads the second one waited for them."""
    from .._api import gc_paused

    return gc_paused()


def _is_batch(x: Any) -> bool:
    return isinstance(x, (list, tuple))


def _threads(num_threads: Optional[int], pool: Optional[ThreadPool]) -> int:
    if pool is not None:
        return pool.num_threads()
    if num_threads is None or num_threads <= 0:
        return os.cpu_count() or 1
    return int(num_threads)


def _int_id(x: Any) -> int:
    if hasattr(x, "dtype") and getattr(x, "ndim", 1) == 0 and x.dtype.kind in "iu":
        return int(x)
    if isinstance(x, bool) or not isinstance(x, int):
        raise PieceTypeError(f"an id is an int, got {type(x).__name__}")
    return int(x)


class VectorBuffer(bytearray):
    """The read-only int32 buffer under an ``out_type='numpy'`` array."""

    def data_address(self) -> int:
        import ctypes

        if not len(self):
            return 0
        c = (ctypes.c_char * len(self)).from_buffer(self)
        addr = ctypes.addressof(c)
        del c
        return addr


def _numpy_ids(ids: list[int]) -> Any:
    import numpy as np

    buf = VectorBuffer(np.asarray(ids, dtype=np.int32).tobytes())
    return np.frombuffer(memoryview(buf).toreadonly(), dtype=np.int32)


# -- the processor -------------------------------------------------------------------------------
# the names of ``Encode`` that ``_refresh`` makes native calls on a processor
_ENCODE_NAMES = ("Encode", "encode", "Tokenize", "tokenize")


class SentencePieceProcessor:
    """sentencepiece's ``SentencePieceProcessor`` on subwords' engine."""

    def __init__(self, model_file: Any = None, model_proto: Optional[bytes] = None, out_type: Any = None,
                 add_bos: bool = False, add_eos: bool = False, reverse: bool = False, emit_unk_piece: bool = False,
                 enable_sampling: bool = False, nbest_size: int = -1, alpha: float = 0.1, num_threads: int = -1,
                 return_type: Any = None) -> None:
        self._model: Optional[_Model] = None
        self._opts: dict[str, Any] = {}
        self._encode_extra: tuple[bool, bool, bool, bool] = (False, False, False, False)
        self._decode_extra_reverse = False
        self._vocab_source: Optional[bytes] = None
        self._plain = False
        self._one: Any = None
        self._one_ids: Any = None
        self._one_pieces: Any = None
        self.Init(model_file=model_file, model_proto=model_proto, out_type=out_type, add_bos=add_bos, add_eos=add_eos,
                  reverse=reverse, emit_unk_piece=emit_unk_piece, enable_sampling=enable_sampling,
                  nbest_size=nbest_size, alpha=alpha, num_threads=num_threads, return_type=return_type)

    def Init(self, model_file: Any = None, model_proto: Optional[bytes] = None, out_type: Any = None,
             add_bos: bool = False, add_eos: bool = False, reverse: bool = False, emit_unk_piece: bool = False,
             enable_sampling: bool = False, nbest_size: int = -1, alpha: float = 0.1, num_threads: int = -1,
             return_type: Any = None) -> None:
        t = _out_type(return_type, out_type, int)
        self._opts = dict(out_type=t, add_bos=add_bos, add_eos=add_eos, reverse=reverse, emit_unk_piece=emit_unk_piece,
                          enable_sampling=enable_sampling, nbest_size=nbest_size, alpha=alpha, num_threads=num_threads)
        if model_file is not None or model_proto is not None:
            self.Load(model_file=model_file, model_proto=model_proto)
        self._refresh()

    def _refresh(self) -> None:
        """Whether a call without options may go straight to the engine."""
        o = self._opts
        self._plain = (self._model is not None and not any(self._encode_extra)
                       and not (o["add_bos"] or o["add_eos"] or o["reverse"] or o["emit_unk_piece"]
                                or o["enable_sampling"]))
        # the engine's call for one text: with no out_type (the processor's own), ids, pieces
        m = self._model if self._plain else None
        self._one_ids = m.ids if m is not None else None
        self._one_pieces = m.pieces_of if m is not None else None
        self._one = {int: self._one_ids, str: self._one_pieces}.get(o["out_type"])
        # ``Encode(text)`` (and its other names) as one native call with no Python frame, while
        # the class's own method is what it stands for: any other call goes to that method
        d = self.__dict__
        for name in _ENCODE_NAMES:
            d.pop(name, None)
        if self._one is not None:
            from .. import _core

            cls = type(self)
            for name in _ENCODE_NAMES:
                if getattr(cls, name) is SentencePieceProcessor.Encode:
                    general = SentencePieceProcessor.Encode.__get__(self, cls)
                    d[name] = _core.FaceCall.sentencepiece(m.m, o["out_type"] is str, general)  # type: ignore[union-attr]

    @classmethod
    def from_file(cls, model_file: Any, return_type: Any = None, **kwargs: Any) -> "SentencePieceProcessor":
        if "model_proto" in kwargs:
            raise OptionError("from_file takes model_file only; use from_proto for serialized bytes")
        return cls(model_file=model_file, return_type=return_type, **kwargs)

    @classmethod
    def from_proto(cls, model_proto: bytes, return_type: Any = None, **kwargs: Any) -> "SentencePieceProcessor":
        if "model_file" in kwargs:
            raise OptionError("from_proto takes model_proto only; use from_file for a path")
        return cls(model_proto=model_proto, return_type=return_type, **kwargs)

    # -- loading --------------------------------------------------------------------------------
    def Load(self, model_file: Any = None, model_proto: Optional[bytes] = None) -> bool:
        if model_file is not None and model_proto is not None:
            raise OptionError("give model_file or model_proto, not both")
        if model_proto is not None:
            return self.LoadFromSerializedProto(model_proto)
        if model_file is None:
            raise OptionError("Load needs model_file= (a path) or model_proto= (the file's bytes)")
        return self.LoadFromFile(model_file)

    def LoadFromFile(self, arg: Any) -> bool:
        from .._io import read_limited

        data = read_limited(os.fspath(arg), 1 << 30, "SentencePiece model")
        try:
            self._set_model(data)
        except ModelFileError as e:
            raise ModelFileError(f"{os.fspath(arg)}: {e}") from None
        return True

    def LoadFromSerializedProto(self, serialized: Any) -> bool:
        if not isinstance(serialized, (bytes, bytearray, memoryview)):
            raise PieceTypeError(f"a serialized model is bytes, got {type(serialized).__name__}")
        self._set_model(bytes(serialized))
        return True

    load = Load
    load_from_file = LoadFromFile
    load_from_serialized_proto = LoadFromSerializedProto
    init = Init

    def _set_model(self, data: bytes) -> None:
        self._model = _Model(data)
        self._vocab_source = None
        self._refresh()

    @property
    def _m(self) -> _Model:
        if self._model is None:
            raise NotOfferedError("no model is loaded; call Load(model_file=...) first")
        return self._model

    # -- pickling -------------------------------------------------------------------------------
    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        for k in ("_one", "_one_ids", "_one_pieces", *_ENCODE_NAMES):  # the engine's calls, made again on loading
            state.pop(k, None)
        model = state.pop("_model", None)
        state["_model_bytes"] = None if model is None else (self._vocab_source or model.data)
        state["_restricted"] = None if self._vocab_source is None or model is None else model.data
        return state

    def __setstate__(self, state: Any) -> None:
        if isinstance(state, (bytes, bytearray)):  # a model-only state: the file's bytes
            self.__init__(model_proto=bytes(state))  # type: ignore[misc]
            return
        state = dict(state)
        source = state.pop("_model_bytes", None)
        restricted = state.pop("_restricted", None)
        self.__dict__.update(state)
        self._model = None
        if source is not None:
            self._model = _Model(restricted if restricted is not None else source)
            self._vocab_source = source if restricted is not None else None
        self._refresh()

    def serialized_model_proto(self) -> bytes:
        return self._m.data

    # -- options ---------------------------------------------------------------------------------
    def SetEncodeExtraOptions(self, extra_option: str) -> None:
        """``bos``, ``eos``, ``reverse`` and ``unk`` (emit_unk_piece), joined by ``:``."""
        flags = {"bos": False, "eos": False, "reverse": False, "unk": False}
        for part in filter(None, str(extra_option).split(":")):
            if part not in flags:
                raise OptionError(f"unknown encode extra option {part!r}; the options are bos, eos, reverse, unk")
            if part in ("bos", "eos") and self._m.role_id(part) < 0:
                raise InputError(f"this model has no {part} control symbol")
            flags[part] = True
        self._encode_extra = (flags["bos"], flags["eos"], flags["reverse"], flags["unk"])
        self._refresh()

    def SetDecodeExtraOptions(self, extra_option: str) -> None:
        """``reverse`` (decode the pieces in reverse order)."""
        rev = False
        for part in filter(None, str(extra_option).split(":")):
            if part != "reverse":
                raise OptionError(f"unknown decode extra option {part!r}; the decoder takes reverse")
            rev = True
        self._decode_extra_reverse = rev

    def SetVocabulary(self, valid_vocab: Iterable[str]) -> None:
        """Restricts segmentation to ``valid_vocab``: every other normal piece is treated as
        unused (Unigram never picks it; BPE splits it back), as sentencepiece does."""
        m = self._m
        keep = set(valid_vocab)
        source = self._vocab_source or m.data
        top = wire.parse(source)
        out: list[wire.Field] = []
        for f, wt, v in top:
            if f == 1 and wt == 2:
                piece = wire.parse(v)  # type: ignore[arg-type]
                text = wire.get(piece, 1, b"")
                ty = wire.get(piece, 3, NORMAL)
                if ty == NORMAL and isinstance(text, bytes) and text.decode("utf-8") not in keep:
                    piece = wire.put(piece, 3, 0, UNUSED)
                v = wire.serialize(piece)
            out.append((f, wt, v))
        self._model = _Model(wire.serialize(out))
        self._vocab_source = source
        self._refresh()

    def ResetVocabulary(self) -> None:
        if self._vocab_source is not None:
            self._model = _Model(self._vocab_source)
            self._vocab_source = None
            self._refresh()

    def LoadVocabulary(self, filename: Any, threshold: int) -> None:
        """Keeps the pieces of a ``piece<TAB>frequency`` file whose frequency is at least
        ``threshold`` (spm_encode's ``--vocabulary``)."""
        keep = []
        with open(os.fspath(filename), encoding="utf-8") as f:
            for n, line in enumerate(f, 1):
                line = line.rstrip("\n")
                if not line:
                    continue
                piece, _, freq = line.partition("\t")
                try:
                    count = int(freq) if freq else 1
                except ValueError:
                    raise InputError(f"{os.fspath(filename)}: line {n} is not 'piece<TAB>frequency'") from None
                if count >= threshold:
                    keep.append(piece)
        self.SetVocabulary(keep)

    # -- the vocabulary --------------------------------------------------------------------------
    def GetPieceSize(self) -> int:
        return self._m.size

    get_piece_size = GetPieceSize
    piece_size = GetPieceSize

    def vocab_size(self) -> int:
        return self._m.size

    def __len__(self) -> int:
        return self._m.size

    def __getitem__(self, piece: str) -> int:
        return int(self.PieceToId(piece))

    def _id_arg(self, id: Any, fn: Any) -> Any:
        m = self._m
        if isinstance(id, (str, bytes)):
            raise PieceTypeError(f"an id is an int, got {type(id).__name__}")
        if isinstance(id, (list, tuple)) or (hasattr(id, "ndim") and getattr(id, "ndim", 0) >= 1):
            return [self._id_arg(i, fn) for i in (id.tolist() if hasattr(id, "tolist") else id)]
        i = _int_id(id)
        if not 0 <= i < m.size:
            raise IdRangeError(f"piece id {i} is out of range (the model has {m.size} pieces)")
        return fn(i)

    def IdToPiece(self, id: Any) -> Any:
        return self._id_arg(id, lambda i: self._m.pieces[i])

    def GetScore(self, id: Any) -> Any:
        return self._id_arg(id, lambda i: self._m.scores[i])

    def IsUnknown(self, id: Any) -> Any:
        return self._id_arg(id, lambda i: self._m.types[i] == UNKNOWN)

    def IsControl(self, id: Any) -> Any:
        return self._id_arg(id, lambda i: self._m.types[i] == CONTROL)

    def IsUnused(self, id: Any) -> Any:
        return self._id_arg(id, lambda i: self._m.types[i] == UNUSED)

    def IsByte(self, id: Any) -> Any:
        return self._id_arg(id, lambda i: self._m.types[i] == BYTE)

    def PieceToId(self, piece: Any) -> Any:
        m = self._m
        if isinstance(piece, bytes):
            piece = piece.decode("utf-8")
        if isinstance(piece, str):
            i = m.index.get(piece)
            return m.unk if i is None else i
        if isinstance(piece, (list, tuple)):
            out = []
            for p in piece:
                if not isinstance(p, (str, bytes)):
                    raise PieceTypeError(f"a piece is a str, got {type(p).__name__}")
                out.append(self.PieceToId(p))
            return out
        raise PieceTypeError(f"a piece is a str (or a list of them), got {type(piece).__name__}")

    def unk_id(self) -> int:
        return self._m.role_id("unk")

    def bos_id(self) -> int:
        return self._m.role_id("bos")

    def eos_id(self) -> int:
        return self._m.role_id("eos")

    def pad_id(self) -> int:
        return self._m.role_id("pad")

    id_to_piece = IdToPiece
    piece_to_id = PieceToId
    get_score = GetScore
    is_unknown = IsUnknown
    is_control = IsControl
    is_unused = IsUnused
    is_byte = IsByte

    # -- encoding --------------------------------------------------------------------------------
    def Encode(self, input: Any, out_type: Any = None, add_bos: Optional[bool] = None, add_eos: Optional[bool] = None,
               reverse: Optional[bool] = None, emit_unk_piece: Optional[bool] = None,
               enable_sampling: Optional[bool] = None, nbest_size: Optional[int] = None, alpha: Optional[float] = None,
               num_threads: Optional[int] = None, thread_pool: Optional[ThreadPool] = None, return_type: Any = None,
               return_bytes: Optional[bool] = None) -> Any:
        # the plain calls (ids or pieces, no per-call option, defaults that add nothing) go
        # straight to the engine
        if (add_bos is None and add_eos is None and reverse is None and emit_unk_piece is None
                and enable_sampling is None and return_type is None and return_bytes is None):
            ti = type(input)
            if ti is str:
                one = (self._one if out_type is None else self._one_ids if out_type is int
                       else self._one_pieces if out_type is str else None)
                if one is not None:
                    return one(input)
            t = self._opts["out_type"] if out_type is None else out_type
            if self._plain and ti is list and thread_pool is None and (t is int or t is str):
                n = self._opts["num_threads"] if num_threads is None else num_threads
                batch = self._model.e.encode_batch if t is int else self._model.pieces_of_batch  # type: ignore[union-attr]
                try:
                    with _gc_paused():
                        return batch(input, _threads(n, None))
                except TypeError:
                    pass  # bytes among the texts: the general path below
        return self._encode(input, out_type, add_bos, add_eos, reverse, emit_unk_piece, enable_sampling, nbest_size,
                            alpha, num_threads, thread_pool, return_type, return_bytes)

    def _encode(self, input: Any, out_type: Any, add_bos: Optional[bool], add_eos: Optional[bool],
                reverse: Optional[bool], emit_unk_piece: Optional[bool], enable_sampling: Optional[bool],
                nbest_size: Optional[int], alpha: Optional[float], num_threads: Optional[int],
                thread_pool: Optional[ThreadPool], return_type: Any, return_bytes: Optional[bool]) -> Any:
        o = self._opts
        t = _out_type(return_type, out_type, o["out_type"])
        _check_return_bytes(t, return_bytes)
        ex_bos, ex_eos, ex_rev, ex_unk = self._encode_extra
        add_bos = (o["add_bos"] or ex_bos) if add_bos is None else add_bos
        add_eos = (o["add_eos"] or ex_eos) if add_eos is None else add_eos
        reverse = (o["reverse"] or ex_rev) if reverse is None else reverse
        emit_unk_piece = (o["emit_unk_piece"] or ex_unk) if emit_unk_piece is None else emit_unk_piece
        enable_sampling = o["enable_sampling"] if enable_sampling is None else enable_sampling
        nbest_size = o["nbest_size"] if nbest_size is None else nbest_size
        alpha = o["alpha"] if alpha is None else alpha
        num_threads = o["num_threads"] if num_threads is None else num_threads
        if t == "offset_mapping" and (add_bos or add_eos or reverse or emit_unk_piece):
            raise NotOfferedError("out_type='offset_mapping' takes no add_bos, add_eos, reverse or emit_unk_piece")
        m = self._m
        if add_bos and m.role_id("bos") < 0:
            raise InputError("add_bos=True but this model has no <s> control symbol (bos_id() is -1)")
        if add_eos and m.role_id("eos") < 0:
            raise InputError("add_eos=True but this model has no </s> control symbol (eos_id() is -1)")
        sample = None
        if enable_sampling:
            sample = self._sample_args(nbest_size, alpha)
        plain = not (add_bos or add_eos or reverse or emit_unk_piece) and sample is None
        if _is_batch(input):
            if t is int and plain and all(type(x) is str for x in input):
                with _gc_paused():
                    return m.e.encode_batch(list(input), _threads(num_threads, thread_pool))
            if t is str and plain and all(type(x) is str for x in input):
                return [m.pieces_of(x) for x in input]
            return [self._encode_one(x, t, add_bos, add_eos, reverse, emit_unk_piece, sample, return_bytes)
                    for x in input]
        if plain and type(input) is str:
            if t is int:
                return m.e.encode(input)
            if t is str:
                return m.pieces_of(input)
        return self._encode_one(input, t, add_bos, add_eos, reverse, emit_unk_piece, sample, return_bytes)

    def _sample_args(self, nbest_size: int, alpha: float) -> tuple[int, float]:
        m = self._m
        if m.kind == "bpe":
            if not 0.0 <= alpha <= 1.0:
                raise OptionError(f"BPE sampling drops each join with probability alpha, which must be in [0, 1], got {alpha}")
        return (int(nbest_size), float(alpha))

    def _segment(self, text: str, sample: Optional[tuple[int, float]]) -> tuple[str, list[int], list[tuple[int, int, int]], Optional[float]]:
        """Normalized text, its char→input byte map, the cuts and (sampling) the log-probability."""
        m = self._m
        norm, cmap = m.normalize_map(text)
        if sample is None:
            return norm, cmap, self._viterbi(norm), None
        nbest_size, alpha = sample
        with _rng_lock:
            if m.kind == "bpe":
                return norm, cmap, m.bpe_dropout(norm, alpha, _rng), None
            if nbest_size in (0, 1):
                return norm, cmap, self._viterbi(norm), None
            if nbest_size < 0:
                cuts, logp = m.sample(norm, alpha, _rng)
                return norm, cmap, cuts, logp
            cands = m.nbest(norm, nbest_size)
            ws = [alpha * sc for _, sc in cands]
            z = _logsumexp(ws)
            r = _rng.random()
            acc = 0.0
            pick = len(cands) - 1
            for i, w in enumerate(ws):
                acc += math.exp(w - z)
                if r < acc:
                    pick = i
                    break
            return norm, cmap, cands[pick][0], ws[pick] - z

    def _viterbi(self, norm: str) -> list[tuple[int, int, int]]:
        m = self._m
        if m.kind == "bpe":
            return m.bpe_dropout(norm, 0.0, _rng)
        return m.nbest(norm, 1)[0][0] if norm else []

    def _encode_one(self, x: Any, t: Any, add_bos: bool, add_eos: bool, reverse: bool, emit_unk_piece: bool,
                    sample: Optional[tuple[int, float]], return_bytes: Optional[bool],
                    seg: Optional[tuple[str, list[int], list[tuple[int, int, int]], Optional[float]]] = None,
                    score: Optional[float] = None) -> Any:
        m = self._m
        text, was_bytes = _text(x)
        if seg is None and sample is None and t in (int, str, bytes, "numpy"):
            if t is int or t == "numpy":
                ids = m.e.encode(text)
                pieces = None
            else:
                ids, pieces = m.m.encode_pieces(text)
            spans = None
        else:
            if seg is None:
                seg = self._segment(text, sample)
            norm, cmap, cuts, _ = seg
            ids, pieces, spans = m.emit(norm, cmap, cuts)
        if emit_unk_piece and pieces is not None:
            unk_piece = m.pieces[m.unk]
            pieces = [unk_piece if i == m.unk else p for i, p in zip(ids, pieces)]
        if add_bos or add_eos or reverse:
            ids = list(ids)
            pieces = None if pieces is None else list(pieces)
            nbytes = len(text.encode("utf-8"))
            if spans is not None:
                spans = list(spans)
            if add_bos:
                b = m.role_id("bos")
                ids.insert(0, b)
                if pieces is not None:
                    pieces.insert(0, m.pieces[b])
                if spans is not None:
                    spans.insert(0, (0, 0))
            if add_eos:
                e = m.role_id("eos")
                ids.append(e)
                if pieces is not None:
                    pieces.append(m.pieces[e])
                if spans is not None:
                    spans.append((nbytes, nbytes))
            if reverse:
                ids.reverse()
                if pieces is not None:
                    pieces.reverse()
                if spans is not None:
                    spans.reverse()
        if t is int:
            return ids
        if t == "numpy":
            return _numpy_ids(ids)
        if t is str:
            return pieces
        if t is bytes:
            return [p.encode("utf-8") for p in pieces]  # type: ignore[union-attr]
        raw = text.encode("utf-8")
        assert spans is not None and pieces is not None
        if t == "offset_mapping":
            as_bytes = was_bytes if return_bytes is None else return_bytes
            if as_bytes:
                return {"ids": ids, "pieces": [p.encode("utf-8") for p in pieces], "offsets": list(spans)}
            cum = _byte_to_char(raw)
            return {"ids": ids, "pieces": pieces, "offsets": [(cum[b], cum[e]) for b, e in spans]}
        blob = wire.piece_text(raw, ((p.encode("utf-8"), i, raw[b:e], b, e) for p, i, (b, e) in zip(pieces, ids, spans)),
                               score)
        if t == "serialized_proto":
            return blob
        msg = _pb_classes()["SentencePieceText"]()
        msg.ParseFromString(blob)
        return msg

    encode = Encode
    Tokenize = Encode
    tokenize = Encode

    def EncodeAsIds(self, input: Any, **kwargs: Any) -> Any:
        return self.Encode(input, out_type=int, **kwargs)

    def EncodeAsPieces(self, input: Any, **kwargs: Any) -> Any:
        return self.Encode(input, out_type=str, **kwargs)

    def EncodeAsSerializedProto(self, input: Any, **kwargs: Any) -> Any:
        return self.Encode(input, out_type="serialized_proto", **kwargs)

    def EncodeAsProto(self, input: Any, **kwargs: Any) -> Any:
        return self.Encode(input, out_type="proto", **kwargs)

    def EncodeAsOffsetMapping(self, input: Any, **kwargs: Any) -> Any:
        return self.Encode(input, out_type="offset_mapping", **kwargs)

    def EncodeAsNumpy(self, input: Any, **kwargs: Any) -> Any:
        return self.Encode(input, out_type="numpy", **kwargs)

    def EncodeAsImmutableProto(self, input: Any, **kwargs: Any) -> Any:
        return self.Encode(input, out_type="immutable_proto", **kwargs)

    encode_as_ids = EncodeAsIds
    encode_as_pieces = EncodeAsPieces
    encode_as_serialized_proto = EncodeAsSerializedProto
    encode_as_proto = EncodeAsProto
    encode_as_offset_mapping = EncodeAsOffsetMapping
    encode_as_numpy = EncodeAsNumpy
    encode_as_immutable_proto = EncodeAsImmutableProto

    def ParallelEncode(self, input: Any, out_type: Any = None, add_bos: Optional[bool] = None,
                       add_eos: Optional[bool] = None, reverse: Optional[bool] = None,
                       emit_unk_piece: Optional[bool] = None, chunk_len: Optional[int] = None,
                       num_threads: Optional[int] = None, thread_pool: Optional[ThreadPool] = None,
                       return_type: Any = None) -> Any:
        """The same result as ``Encode`` (sentencepiece splits a long text into chunks for its
        threads and joins the results; the engine's own encode is already that result)."""
        if chunk_len is not None and (not isinstance(chunk_len, int) or chunk_len < 1):
            raise OptionError(f"chunk_len must be a positive int, got {chunk_len!r}")
        return self.Encode(input, out_type=out_type, add_bos=add_bos, add_eos=add_eos, reverse=reverse,
                           emit_unk_piece=emit_unk_piece, num_threads=num_threads, thread_pool=thread_pool,
                           return_type=return_type, enable_sampling=False)

    parallel_encode = ParallelEncode

    def ParallelEncodeAsIds(self, input: Any, **kwargs: Any) -> Any:
        return self.ParallelEncode(input, out_type=int, **kwargs)

    def ParallelEncodeAsPieces(self, input: Any, **kwargs: Any) -> Any:
        return self.ParallelEncode(input, out_type=str, **kwargs)

    def ParallelEncodeAsProto(self, input: Any, **kwargs: Any) -> Any:
        return self.ParallelEncode(input, out_type="proto", **kwargs)

    def ParallelEncodeAsNumpy(self, input: Any, **kwargs: Any) -> Any:
        return self.ParallelEncode(input, out_type="numpy", **kwargs)

    parallel_encode_as_ids = ParallelEncodeAsIds
    parallel_encode_as_pieces = ParallelEncodeAsPieces
    parallel_encode_as_proto = ParallelEncodeAsProto
    parallel_encode_as_numpy = ParallelEncodeAsNumpy

    # -- n-best and sampling ---------------------------------------------------------------------
    def NBestEncode(self, input: Any, out_type: Any = None, add_bos: Optional[bool] = None,
                    add_eos: Optional[bool] = None, reverse: Optional[bool] = None,
                    emit_unk_piece: Optional[bool] = None, nbest_size: Optional[int] = None,
                    return_type: Any = None) -> Any:
        o = self._opts
        t = _out_type(return_type, out_type, o["out_type"])
        if t == "offset_mapping":
            raise NotOfferedError("NBestEncode has no 'offset_mapping' output")
        m = self._m
        if m.kind != "unigram":
            raise NotOfferedError("NBestEncode is not available for a BPE model (sentencepiece offers it for Unigram only)")
        k = o["nbest_size"] if nbest_size is None else nbest_size
        if not isinstance(k, int) or k < 1:
            raise OptionError(f"nbest_size must be a positive int for NBestEncode, got {k!r}")
        k = min(k, 1024)
        flags = dict(add_bos=o["add_bos"] if add_bos is None else add_bos, add_eos=o["add_eos"] if add_eos is None else add_eos,
                     reverse=o["reverse"] if reverse is None else reverse,
                     emit_unk_piece=o["emit_unk_piece"] if emit_unk_piece is None else emit_unk_piece)

        def one(x: Any) -> Any:
            text, _ = _text(x)
            norm, cmap = m.normalize_map(text)
            sub = "serialized_proto" if t in ("proto", "serialized_proto") else t
            outs = []
            for cuts, sc in m.nbest(norm, k):
                outs.append(self._encode_one(x, sub, flags["add_bos"], flags["add_eos"], flags["reverse"],
                                             flags["emit_unk_piece"], None, None, seg=(norm, cmap, cuts, sc),
                                             score=sc if sub == "serialized_proto" else None))
            if t in ("proto", "serialized_proto"):
                blob = wire.nbest_text(outs)
                if t == "serialized_proto":
                    return blob
                msg = _pb_classes()["NBestSentencePieceText"]()
                msg.ParseFromString(blob)
                return msg
            return outs

        if _is_batch(input):
            return [one(x) for x in input]
        return one(input)

    nbest_encode = NBestEncode

    def NBestEncodeAsIds(self, input: Any, nbest_size: Optional[int] = None, **kwargs: Any) -> Any:
        return self.NBestEncode(input, nbest_size=nbest_size, out_type=int, **kwargs)

    def NBestEncodeAsPieces(self, input: Any, nbest_size: Optional[int] = None, **kwargs: Any) -> Any:
        return self.NBestEncode(input, nbest_size=nbest_size, out_type=str, **kwargs)

    def NBestEncodeAsProto(self, input: Any, nbest_size: Optional[int] = None, **kwargs: Any) -> Any:
        return self.NBestEncode(input, nbest_size=nbest_size, out_type="proto", **kwargs)

    def NBestEncodeAsSerializedProto(self, input: Any, nbest_size: Optional[int] = None, **kwargs: Any) -> Any:
        return self.NBestEncode(input, nbest_size=nbest_size, out_type="serialized_proto", **kwargs)

    def NBestEncodeAsNumpy(self, input: Any, nbest_size: Optional[int] = None, **kwargs: Any) -> Any:
        return self.NBestEncode(input, nbest_size=nbest_size, out_type="numpy", **kwargs)

    nbest_encode_as_ids = NBestEncodeAsIds
    nbest_encode_as_pieces = NBestEncodeAsPieces
    nbest_encode_as_proto = NBestEncodeAsProto
    nbest_encode_as_serialized_proto = NBestEncodeAsSerializedProto
    nbest_encode_as_numpy = NBestEncodeAsNumpy

    def SampleEncodeAsIds(self, input: Any, nbest_size: Optional[int] = None, alpha: Optional[float] = None, **kwargs: Any) -> Any:
        return self.Encode(input, out_type=int, enable_sampling=True, nbest_size=nbest_size, alpha=alpha, **kwargs)

    def SampleEncodeAsPieces(self, input: Any, nbest_size: Optional[int] = None, alpha: Optional[float] = None, **kwargs: Any) -> Any:
        return self.Encode(input, out_type=str, enable_sampling=True, nbest_size=nbest_size, alpha=alpha, **kwargs)

    def SampleEncodeAsProto(self, input: Any, nbest_size: Optional[int] = None, alpha: Optional[float] = None, **kwargs: Any) -> Any:
        return self.Encode(input, out_type="proto", enable_sampling=True, nbest_size=nbest_size, alpha=alpha, **kwargs)

    def SampleEncodeAsSerializedProto(self, input: Any, nbest_size: Optional[int] = None, alpha: Optional[float] = None, **kwargs: Any) -> Any:
        return self.Encode(input, out_type="serialized_proto", enable_sampling=True, nbest_size=nbest_size, alpha=alpha, **kwargs)

    def SampleEncodeAsNumpy(self, input: Any, nbest_size: Optional[int] = None, alpha: Optional[float] = None, **kwargs: Any) -> Any:
        return self.Encode(input, out_type="numpy", enable_sampling=True, nbest_size=nbest_size, alpha=alpha, **kwargs)

    sample_encode_as_ids = SampleEncodeAsIds
    sample_encode_as_pieces = SampleEncodeAsPieces
    sample_encode_as_proto = SampleEncodeAsProto
    sample_encode_as_serialized_proto = SampleEncodeAsSerializedProto
    sample_encode_as_numpy = SampleEncodeAsNumpy

    def SampleEncodeAndScore(self, input: Any, out_type: Any = None, add_bos: Optional[bool] = None,
                             add_eos: Optional[bool] = None, reverse: Optional[bool] = None,
                             emit_unk_piece: Optional[bool] = None, num_samples: Optional[int] = None,
                             alpha: Optional[float] = None, wor: Optional[bool] = None,
                             include_best: Optional[bool] = None, return_type: Any = None) -> Any:
        """``num_samples`` segmentations drawn with probability ∝ exp(alpha·score), each with its
        log-probability under that distribution. ``wor``: without replacement (no segmentation
        twice; at most as many as there are); ``include_best``: the first is the best one (needs
        ``wor``)."""
        o = self._opts
        t = _out_type(return_type, out_type, o["out_type"])
        m = self._m
        if m.kind != "unigram":
            raise NotOfferedError("SampleEncodeAndScore is not available for a BPE model (Unigram only, as in sentencepiece)")
        n = 1 if num_samples is None else num_samples
        if not isinstance(n, int) or n < 1:
            raise OptionError(f"num_samples must be a positive int, got {n!r}")
        a = o["alpha"] if alpha is None else float(alpha)
        wor = bool(wor)
        include_best = bool(include_best)
        if include_best and not wor:
            raise OptionError("include_best=True needs wor=True (sampling without replacement)")
        flags = (o["add_bos"] if add_bos is None else add_bos, o["add_eos"] if add_eos is None else add_eos,
                 o["reverse"] if reverse is None else reverse,
                 o["emit_unk_piece"] if emit_unk_piece is None else emit_unk_piece)

        def one(x: Any) -> Any:
            text, _ = _text(x)
            norm, cmap = m.normalize_map(text)
            picked: list[tuple[list[tuple[int, int, int]], float]] = []
            seen: set[tuple[tuple[int, int, int], ...]] = set()
            limit = n
            if wor:
                limit = min(n, m.count_paths(norm)) if norm else 1
            _, F = m.forward(norm, a) if norm else (None, [0.0])
            if include_best:
                cuts, best_score = m.nbest(norm, 1)[0]
                lp = a * best_score - F[-1]
                picked.append((cuts, lp))
                seen.add(tuple(cuts))
            while len(picked) < limit:
                with _rng_lock:
                    cuts, lp = m.sample(norm, a, _rng)
                if wor:
                    key = tuple(cuts)
                    if key in seen:
                        continue
                    seen.add(key)
                picked.append((cuts, lp))
            return [(self._encode_one(x, t, *flags, None, None, seg=(norm, cmap, c, lp)), lp) for c, lp in picked]

        if _is_batch(input):
            return [one(x) for x in input]
        return one(input)

    sample_encode_and_score = SampleEncodeAndScore

    def SampleEncodeAndScoreAsIds(self, input: Any, num_samples: Optional[int] = None, alpha: Optional[float] = None, **kwargs: Any) -> Any:
        return self.SampleEncodeAndScore(input, out_type=int, num_samples=num_samples, alpha=alpha, **kwargs)

    def SampleEncodeAndScoreAsPieces(self, input: Any, num_samples: Optional[int] = None, alpha: Optional[float] = None, **kwargs: Any) -> Any:
        return self.SampleEncodeAndScore(input, out_type=str, num_samples=num_samples, alpha=alpha, **kwargs)

    def SampleEncodeAndScoreAsProto(self, input: Any, num_samples: Optional[int] = None, alpha: Optional[float] = None, **kwargs: Any) -> Any:
        return self.SampleEncodeAndScore(input, out_type="proto", num_samples=num_samples, alpha=alpha, **kwargs)

    def SampleEncodeAndScoreAsSerializedProto(self, input: Any, num_samples: Optional[int] = None, alpha: Optional[float] = None, **kwargs: Any) -> Any:
        return self.SampleEncodeAndScore(input, out_type="serialized_proto", num_samples=num_samples, alpha=alpha, **kwargs)

    sample_encode_and_score_as_ids = SampleEncodeAndScoreAsIds
    sample_encode_and_score_as_pieces = SampleEncodeAndScoreAsPieces
    sample_encode_and_score_as_proto = SampleEncodeAndScoreAsProto
    sample_encode_and_score_as_serialized_proto = SampleEncodeAndScoreAsSerializedProto

    def CalculateEntropy(self, input: Any, alpha: float, num_threads: Optional[int] = None) -> Any:
        """The entropy (nats) of the distribution ∝ exp(alpha·score) over the segmentations of
        the text (Unigram), by forward-backward over its lattice."""
        m = self._m
        if m.kind != "unigram":
            raise NotOfferedError("CalculateEntropy is not available for a BPE model (Unigram only, as in sentencepiece)")

        def one(x: Any) -> float:
            text, _ = _text(x)
            norm, _ = m.normalize_map(text)
            return m.entropy(norm, float(alpha))

        if _is_batch(input):
            return [one(x) for x in input]
        return one(input)

    calculate_entropy = CalculateEntropy
    Entropy = CalculateEntropy
    entropy = CalculateEntropy

    # -- decoding --------------------------------------------------------------------------------
    def Decode(self, input: Any, out_type: Any = None, num_threads: Optional[int] = None,
               thread_pool: Optional[ThreadPool] = None, return_type: Any = None,
               return_bytes: Optional[bool] = None) -> Any:
        t = _out_type(return_type, out_type, str)
        if t is int or t == "numpy":
            if return_bytes is not None:
                raise OptionError(f"return_bytes applies to str, bytes and 'offset_mapping' output, not {t!r}")
            raise OptionError(f"decode returns str, bytes, 'serialized_proto', 'proto' or 'offset_mapping', not {t!r}")
        _check_return_bytes(t, return_bytes)
        if input is None:
            return self._decode_one([], t, return_bytes)
        if isinstance(input, (int, str, bytes)) and not isinstance(input, bool):
            return self._decode_one([input], t, return_bytes)
        if hasattr(input, "ndim"):
            if input.dtype.kind not in "iu":
                raise PieceTypeError(f"decode takes integer ids; the array holds {input.dtype}")
            if input.ndim == 1:
                return self._decode_one(input.tolist(), t, return_bytes)
            if input.ndim == 2:
                return [self._decode_one(row, t, return_bytes) for row in input.tolist()]
            raise PieceTypeError(f"decode takes a 1-d or 2-d array of ids, got {input.ndim} dimensions")
        seq = input if type(input) is list else list(input)
        if seq and _is_seq(seq[0]):
            for x in seq:
                if not _is_seq(x):
                    raise PieceTypeError("decode takes ids, pieces, or a list of sequences of them, not a mix")
            return [self._decode_one(_seq_list(x), t, return_bytes) for x in seq]
        return self._decode_one(seq, t, return_bytes)

    decode = Decode
    Detokenize = Decode
    detokenize = Decode

    def _decode_one(self, seq: list[Any], t: Any, return_bytes: Optional[bool]) -> Any:
        m = self._m
        if self._decode_extra_reverse:
            seq = seq[::-1]
        pieces_in = bool(seq) and isinstance(seq[0], (str, bytes))
        piece_bytes = pieces_in and isinstance(seq[0], bytes)
        if pieces_in:
            items: list[tuple[int, Optional[str]]] = []
            strs = []
            for p in seq:
                if isinstance(p, bytes):
                    p = p.decode("utf-8")
                elif not isinstance(p, str):
                    raise PieceTypeError(f"decode takes a list of ids or of pieces, not a mix (got {type(p).__name__})")
                strs.append(p)
                i = m.index.get(p)
                items.append((m.unk, p) if i is None else (i, None))
            if t is str or t is bytes:
                s = m.m.decode_pieces(strs)
                return s.encode("utf-8") if t is bytes else s
        else:
            if all(type(x) is int for x in seq):
                ids = seq
            else:
                ids = [_int_id(x) for x in seq]
            if t is str or t is bytes:
                try:
                    s = m.m.decode(ids)
                except (UnknownPieceError, OverflowError):
                    s = None
                if s is not None:
                    return s.encode("utf-8") if t is bytes else s
            for i in ids:
                if not 0 <= i < m.size:
                    raise IdRangeError(f"piece id {i} is out of range (the model has {m.size} pieces)")
            items = [(i, None) for i in ids]
            strs = [m.pieces[i] for i in ids]
        shares = m.decode_surfaces(items)
        text = "".join(shares)
        raw = text.encode("utf-8")
        ids_out = [i for i, _ in items]
        pieces_out = [own if own is not None else m.pieces[i] for i, own in items]
        spans = []
        pos = 0
        for sh in shares:
            n = len(sh.encode("utf-8"))
            spans.append((pos, pos + n))
            pos += n
        if t == "offset_mapping":
            as_bytes = piece_bytes if return_bytes is None else return_bytes
            if as_bytes:
                return {"text": raw, "ids": ids_out, "pieces": [p.encode("utf-8") for p in pieces_out], "offsets": spans}
            cum = _byte_to_char(raw)
            return {"text": text, "ids": ids_out, "pieces": pieces_out, "offsets": [(cum[b], cum[e]) for b, e in spans]}
        blob = wire.piece_text(raw, ((p.encode("utf-8"), i, raw[b:e], b, e) for p, i, (b, e) in zip(pieces_out, ids_out, spans)))
        if t == "serialized_proto":
            return blob
        msg = _pb_classes()["SentencePieceText"]()
        msg.ParseFromString(blob)
        return msg

    def DecodeIds(self, input: Any, out_type: Any = str, **kwargs: Any) -> Any:
        return self.Decode(input, out_type=out_type, **kwargs)

    def DecodePieces(self, input: Any, out_type: Any = str, **kwargs: Any) -> Any:
        return self.Decode(input, out_type=out_type, **kwargs)

    def DecodeIdsAsProto(self, input: Any, **kwargs: Any) -> Any:
        return self.Decode(input, out_type="proto", **kwargs)

    def DecodePiecesAsProto(self, input: Any, **kwargs: Any) -> Any:
        return self.Decode(input, out_type="proto", **kwargs)

    def DecodeIdsAsSerializedProto(self, input: Any, **kwargs: Any) -> Any:
        return self.Decode(input, out_type="serialized_proto", **kwargs)

    def DecodePiecesAsSerializedProto(self, input: Any, **kwargs: Any) -> Any:
        return self.Decode(input, out_type="serialized_proto", **kwargs)

    def DecodeAsOffsetMapping(self, input: Any, **kwargs: Any) -> Any:
        return self.Decode(input, out_type="offset_mapping", **kwargs)

    decode_ids = DecodeIds
    decode_pieces = DecodePieces
    decode_ids_as_proto = DecodeIdsAsProto
    decode_pieces_as_proto = DecodePiecesAsProto
    decode_ids_as_serialized_proto = DecodeIdsAsSerializedProto
    decode_pieces_as_serialized_proto = DecodePiecesAsSerializedProto

    # -- normalization ---------------------------------------------------------------------------
    def Normalize(self, input: Any, with_offsets: Optional[bool] = None) -> Any:
        m = self._m
        return _normalize(lambda s: m.normalize_map(s), input, bool(with_offsets))

    normalize = Normalize

    @property
    def _processor(self) -> "_BatchDecoder":
        return _BatchDecoder(self)


class _BatchDecoder:
    """The batch decode entry points of sentencepiece's binding (``sp._processor._Decode*Batch``),
    each reading its batch's length once."""

    def __init__(self, sp: SentencePieceProcessor) -> None:
        self._sp = sp

    @staticmethod
    def _items(batch: Any) -> list[Any]:
        n = len(batch)
        return [list(batch[i]) for i in range(n)]

    def _DecodePiecesBatch(self, batch: Any, num_threads: Any, pool: Any) -> list[str]:
        return [self._sp.Decode(x, out_type=str) for x in self._items(batch)]

    def _DecodePiecesAsBytesBatch(self, batch: Any, num_threads: Any, pool: Any) -> list[bytes]:
        return [self._sp.Decode(x, out_type=bytes) for x in self._items(batch)]

    def _DecodePiecesAsSerializedProtoBatch(self, batch: Any, num_threads: Any, pool: Any) -> list[bytes]:
        return [self._sp.Decode(x, out_type="serialized_proto") for x in self._items(batch)]

    def _DecodeAsOffsetMappingBatch(self, batch: Any, num_threads: Any, pool: Any, return_bytes: Any) -> list[Any]:
        return [self._sp.Decode(x, out_type="offset_mapping", return_bytes=return_bytes or None)
                for x in self._items(batch)]


def _is_seq(x: Any) -> bool:
    return isinstance(x, (list, tuple)) or (hasattr(x, "ndim") and getattr(x, "ndim", 0) == 1)


def _empty_seq(x: Any) -> bool:
    return _is_seq(x) and len(x) == 0


def _seq_list(x: Any) -> list[Any]:
    if hasattr(x, "ndim"):
        if x.dtype.kind not in "iu":
            raise PieceTypeError(f"decode takes integer ids; the array holds {x.dtype}")
        return list(x.tolist())
    return list(x)


def _byte_to_char(raw: bytes) -> list[int]:
    """For each byte offset of ``raw`` (and its end), the number of characters before it."""
    out = [0] * (len(raw) + 1)
    c = 0
    for i, b in enumerate(raw):
        out[i] = c
        if b & 0xC0 != 0x80:
            c += 1
    out[len(raw)] = c
    return out


def _normalize(fn: Any, input: Any, with_offsets: bool) -> Any:
    if _is_batch(input):
        return [_normalize(fn, x, with_offsets) for x in input]
    text, was_bytes = _text(input)
    norm, cmap = fn(text)
    if not with_offsets:
        return norm.encode("utf-8") if was_bytes else norm
    if was_bytes:
        out = []
        for ch, o in zip(norm, cmap):
            out.extend([o] * len(ch.encode("utf-8")))
        out.append(cmap[-1])
        return norm.encode("utf-8"), out
    cum = _byte_to_char(text.encode("utf-8"))
    return norm, [cum[o] for o in cmap]


# -- normalization rules -------------------------------------------------------------------------
def _nmt_extra(ch: str) -> Optional[str]:
    """sentencepiece's ``nmt_nfkc`` additions to NFKC for one character: controls dropped (None),
    the whitespace-like ones made a space."""
    c = ord(ch)
    if c <= 8 or c == 0x0B or 0x0E <= c <= 0x1F or c in (0x7F, 0x8F, 0x9F):
        return None
    if ch in "\t\n\x0c\r\u1680\u2028\u2029\ufeff\ufffd" or 0x200B <= c <= 0x200F:
        return " "
    return ch


_RULES: dict[str, list[tuple[str, str]]] = {}


def _rules(name: str) -> list[tuple[str, str]]:
    """Character rules for a named normalization: each code point that the form changes, with
    what it becomes. (Per character: sentencepiece's own maps also hold some multi-character
    compositions, and drop control characters, which these do not.)"""
    if name in _RULES:
        return _RULES[name]
    import unicodedata

    if name == "identity":
        rules: list[tuple[str, str]] = []
    elif name in ("nfkc", "nmt_nfkc", "nfkc_cf", "nmt_nfkc_cf"):
        rules = []
        nmt = name.startswith("nmt")
        cf = name.endswith("_cf")
        for c in range(1, 0x110000):
            if 0xD800 <= c <= 0xDFFF:
                continue
            ch = chr(c)
            out = unicodedata.normalize("NFKC", ch)
            if cf:
                out = unicodedata.normalize("NFKC", out.casefold())
            if nmt:
                out = "".join(filter(None, (_nmt_extra(x) for x in out)))
            # a deletion rule (a control character to nothing) is left out: sentencepiece refuses
            # the map the engine compiles with one, so those characters pass through unchanged
            if out != ch and out and "\0" not in out:
                rules.append((ch, out))
    else:
        raise OptionError(f"normalization rule {name!r} is not offered; use identity, nfkc, nmt_nfkc, nfkc_cf "
                          "or nmt_nfkc_cf")
    _RULES[name] = rules
    return rules


def _build_model(kind: str, pieces: list[tuple[str, float, int]], byte_fallback: bool, unk_surface: str,
                 rules: list[tuple[str, str]], add_dummy_prefix: bool, remove_extra_whitespaces: bool,
                 escape_whitespaces: bool, split_by_whitespace: bool, roles: list[tuple[str, int]],
                 rule_name: Optional[str], trainer_extra: Sequence[wire.Field] = ()) -> bytes:
    from .. import _core

    data = _core.sp_model_bytes(kind, pieces, byte_fallback, unk_surface, rules, add_dummy_prefix,
                                remove_extra_whitespaces, split_by_whitespace, roles or None)
    top = wire.parse(data)
    norm = wire.parse(wire.get(top, 3, b""))  # type: ignore[arg-type]
    norm = wire.put(norm, 5, 0, int(escape_whitespaces))
    if rule_name is not None:
        norm = wire.put(norm, 1, 2, rule_name.encode("utf-8"))
    top = wire.put(top, 3, 2, wire.serialize(norm))
    if trainer_extra:
        trainer = wire.parse(wire.get(top, 2, b""))  # type: ignore[arg-type]
        for f, wt, v in trainer_extra:
            trainer = wire.put(trainer, f, wt, v)
        top = wire.put(top, 2, 2, wire.serialize(trainer))
    return wire.serialize(top)


def _with_flags(data: bytes, add_dummy_prefix: Optional[bool], escape_whitespaces: Optional[bool],
                remove_extra_whitespaces: Optional[bool]) -> bytes:
    top = wire.parse(data)
    norm = wire.parse(wire.get(top, 3, b""))  # type: ignore[arg-type]
    for field, value in ((3, add_dummy_prefix), (4, remove_extra_whitespaces), (5, escape_whitespaces)):
        if value is not None:
            norm = wire.put(norm, field, 0, int(bool(value)))
    return wire.serialize(wire.put(top, 3, 2, wire.serialize(norm)))


def _bare(rules: list[tuple[str, str]], rule_name: Optional[str]) -> bytes:
    """A model with no pieces but ``<unk>``, to carry a normalizer (proto defaults: every flag on)."""
    return _build_model("unigram", [("<unk>", 0.0, UNKNOWN), (SPACE, 0.0, NORMAL)], False, " \u2047 ", rules, True,
                        True, True, True, [], rule_name)


class SentencePieceNormalizer:
    """sentencepiece's normalizer: a model's normalization (``model_file``/``model_proto``), a
    named rule set (``rule_name``), a rule file (``rule_tsv``: hex code points ``from<TAB>to``),
    or a list of string rules (``norm_map``); each flag given overrides the spec's."""

    def __init__(self, model_file: Any = None, model_proto: Optional[bytes] = None,
                 normalizer_spec: Optional[bytes] = None, rule_tsv: Any = None, rule_name: Optional[str] = None,
                 norm_map: Optional[Sequence[tuple[Any, Any]]] = None, add_dummy_prefix: Optional[bool] = None,
                 escape_whitespaces: Optional[bool] = None, remove_extra_whitespaces: Optional[bool] = None) -> None:
        given = [x for x in (model_file, model_proto, normalizer_spec, rule_tsv, rule_name, norm_map) if x is not None]
        if len(given) > 1:
            raise OptionError("give one of model_file, model_proto, normalizer_spec, rule_tsv, rule_name, norm_map")
        self._rules: Optional[list[tuple[str, str]]] = None
        if model_file is not None:
            from .._io import read_limited

            data = read_limited(os.fspath(model_file), 1 << 30, "SentencePiece model")
        elif model_proto is not None:
            data = bytes(model_proto)
        elif normalizer_spec is not None:
            data = wire.serialize(wire.put(wire.parse(_bare([], None)), 3, 2, bytes(normalizer_spec)))
        elif rule_tsv is not None:
            self._rules = _read_tsv(rule_tsv)
            data = _bare(self._rules, "user_defined")
        elif norm_map is not None:
            self._rules = _check_map(norm_map)
            data = _bare(self._rules, "user_defined")
        else:
            data = _bare(_rules(rule_name or "nmt_nfkc"), rule_name or "nmt_nfkc")
        self._flags = dict(add_dummy_prefix=add_dummy_prefix, escape_whitespaces=escape_whitespaces,
                           remove_extra_whitespaces=remove_extra_whitespaces)
        self._data = _with_flags(data, add_dummy_prefix, escape_whitespaces, remove_extra_whitespaces)
        self._model = _Model(self._data)

    def Normalize(self, input: Any, with_offsets: Optional[bool] = None) -> Any:
        return _normalize(self._model.normalize_map, input, bool(with_offsets))

    normalize = Normalize

    def Decompile(self) -> list[tuple[str, str]]:
        """The rules (``from``, ``to``) in order of ``from``, when they were given as rules."""
        if self._rules is None:
            raise NotOfferedError("Decompile reads back rules given as norm_map or rule_tsv; a compiled map from a "
                                  "model file is not decompiled by this face")
        return sorted(self._rules)

    decompile = Decompile

    def serialized_normalizer_spec(self) -> bytes:
        return wire.get(wire.parse(self._data), 3, b"")  # type: ignore[return-value]

    def serialized_model_proto(self) -> bytes:
        return self._data


def _check_map(norm_map: Sequence[tuple[Any, Any]]) -> list[tuple[str, str]]:
    out: dict[str, str] = {}
    for pair in norm_map:
        src, dst = pair
        try:
            src = src.decode("utf-8") if isinstance(src, bytes) else src
            dst = dst.decode("utf-8") if isinstance(dst, bytes) else dst
        except UnicodeDecodeError:
            raise InputError("a norm_map rule is not UTF-8") from None
        if not isinstance(src, str) or not isinstance(dst, str):
            raise PieceTypeError("norm_map holds (from, to) pairs of str or bytes")
        if not src:
            raise InputError("a norm_map rule has an empty source")
        if src == dst:
            raise InputError(f"the norm_map rule {src!r} -> {dst!r} changes nothing")
        if src in out:
            raise InputError(f"norm_map has two rules for {src!r}")
        if "\0" in src or "\0" in dst:
            raise InputError("a norm_map rule holds NUL")
        out[src] = dst
    return list(out.items())


def _read_tsv(path: Any) -> list[tuple[str, str]]:
    rules = []
    with open(os.fspath(path), encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            line = line.split("#", 1)[0].rstrip("\n")
            if not line.strip():
                continue
            cols = line.split("\t")
            if len(cols) < 2:
                raise InputError(f"{os.fspath(path)}: line {n} is not 'from<TAB>to' (hex code points)")
            try:
                src = "".join(chr(int(h, 16)) for h in cols[0].split())
                dst = "".join(chr(int(h, 16)) for h in cols[1].split())
            except ValueError:
                raise InputError(f"{os.fspath(path)}: line {n} holds something other than hex code points") from None
            rules.append((src, dst))
    return _check_map(rules)


# -- training ------------------------------------------------------------------------------------
#: spm_train flags this face takes, with their defaults (sentencepiece's)
_TRAIN_DEFAULTS: dict[str, Any] = {
    "input": None, "model_prefix": None, "model_type": "unigram", "vocab_size": 8000,
    "character_coverage": 0.9995, "byte_fallback": False, "user_defined_symbols": (), "control_symbols": (),
    "normalization_rule_name": "nmt_nfkc", "split_by_whitespace": True, "split_by_unicode_script": True,
    "split_by_number": True, "split_digits": False, "max_sentencepiece_length": 16, "num_threads": 16,
    "unk_id": 0, "bos_id": 1, "eos_id": 2, "pad_id": -1, "unk_piece": "<unk>", "bos_piece": "<s>",
    "eos_piece": "</s>", "pad_piece": "<pad>", "unk_surface": " \u2047 ", "add_dummy_prefix": True,
    "remove_extra_whitespaces": True, "hard_vocab_limit": True, "max_sentence_length": 4192,
    "seed_sentencepiece_size": 1000000, "shrinking_factor": 0.75, "num_sub_iterations": 2,
    "input_sentence_size": 0, "shuffle_input_sentence": True, "minloglevel": 0, "input_format": "text",
    "vocabulary_output_piece_score": True, "train_extremely_large_corpus": False, "self_test_sample_size": 0,
    "use_all_vocab": False, "random_seed": None, "mining_sentence_size": 0, "training_sentence_size": 0,
    "sentence_iterator": None, "model_writer": None, "escape_whitespaces": True,
}

#: spm_train flags this face refuses when they ask for something other than the default, and why
_TRAIN_REFUSED = {
    "treat_whitespace_as_suffix": (False, "whitespace as a suffix is not reproduced by subwords' .model engine"),
    "allow_whitespace_only_pieces": (False, "subwords' front spelling never learns pieces of whitespace alone"),
    "required_chars": ("", "required_chars is not reproduced by subwords' trainer"),
    "enable_differential_privacy": (False, "differentially private training is not offered"),
    "differential_privacy_noise_level": (0.0, "differentially private training is not offered"),
    "differential_privacy_clipping_threshold": (0, "differentially private training is not offered"),
    "normalization_rule_tsv": ("", "a rule file for training: build a SentencePieceNormalizer(rule_tsv=...) and "
                                   "pass normalizer= instead"),
    "denormalization_rule_tsv": ("", "denormalization is not offered"),
    "pretokenization_delimiter": ("", "a pre-tokenization delimiter is not offered by subwords' trainer"),
    "pretokenizer": (None, "a Python pre-tokenizer for training is not offered by subwords' trainer"),
    "allow_inconsistent_pretokenization": (False, "a Python pre-tokenizer for training is not offered"),
    "seed_sentencepieces_file": ("", "seed pieces from a file are not offered by subwords' trainer"),
}


def _parse_flags(arg: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for tok in arg.split():
        if not tok.startswith("--"):
            raise OptionError(f"spm_train flags are --name=value; got {tok!r}")
        name, eq, value = tok[2:].partition("=")
        out[name] = value if eq else "true"
    return out


def _as_bool(name: str, v: Any) -> bool:
    if isinstance(v, bool):
        return v
    if isinstance(v, str) and v.lower() in ("true", "1", "false", "0"):
        return v.lower() in ("true", "1")
    if isinstance(v, int):
        return bool(v)
    raise OptionError(f"--{name} takes true or false, got {v!r}")


def _flag_list(name: str, v: Any) -> list[str]:
    if v is None:
        return []
    if isinstance(v, str):
        return [x for x in v.split(",") if x] if v else []
    return [str(x) for x in v]


def _lines(flags: dict[str, Any]) -> list[str]:
    out: list[str] = []
    limit = int(flags["max_sentence_length"])

    def add(line: Any) -> None:
        if isinstance(line, bytes):
            line = line.decode("utf-8")
        line = line.rstrip("\r\n")
        if line and len(line.encode("utf-8")) <= limit:
            out.append(line)

    it = flags["sentence_iterator"]
    if it is not None:
        for line in it:
            add(line)
    for path in _flag_list("input", flags["input"]):
        if flags["input_format"] not in ("text", ""):
            raise OptionError(f"--input_format={flags['input_format']} is not offered (text only)")
        try:
            with open(path, encoding="utf-8") as f:
                for line in f:
                    add(line)
        except OSError as e:
            raise FileError(e.errno or 0, f"cannot read the training input {path}: {e.strerror}", path) from None
    n = int(flags["input_sentence_size"])
    if n > 0 and len(out) > n:
        rng = random.Random(flags["random_seed"] if flags["random_seed"] is not None else 0)
        out = rng.sample(out, n) if _as_bool("shuffle_input_sentence", flags["shuffle_input_sentence"]) else out[:n]
    if not out:
        raise InputError("the training input holds no sentence (give --input=FILE or sentence_iterator=...)")
    return out


class SentencePieceTrainer:
    """``spm_train`` on subwords' trainer: ``SentencePieceTrainer.train('--input=f --model_prefix=m
    --vocab_size=8000')`` or the same as keywords. Writes ``<model_prefix>.model`` and
    ``<model_prefix>.vocab`` (or the model's bytes to ``model_writer``)."""

    @staticmethod
    def Train(arg: Optional[str] = None, logstream: Any = None, normalizer: Optional[SentencePieceNormalizer] = None,
              **kwargs: Any) -> None:
        flags: dict[str, Any] = {}
        if arg is not None:
            if not isinstance(arg, str):
                raise OptionError("the first argument of Train is a flag string ('--input=... --vocab_size=...')")
            flags.update(_parse_flags(arg))
        for k, v in kwargs.items():
            if k in flags:
                raise OptionError(f"--{k} is given twice (in the string and as a keyword)")
            flags[k] = v
        for k, v in flags.items():
            if k in _TRAIN_REFUSED:
                default, why = _TRAIN_REFUSED[k]
                if v is not None and v != default and str(v).lower() not in (str(default).lower(), ""):
                    raise NotOfferedOptionError(f"--{k}: {why}")
            elif k not in _TRAIN_DEFAULTS:
                raise NotOfferedOptionError(f"--{k} is not an spm_train flag this face reproduces; the flags it "
                                            f"takes are: {', '.join(sorted(_TRAIN_DEFAULTS))}")
        f = {**_TRAIN_DEFAULTS, **{k: v for k, v in flags.items() if k in _TRAIN_DEFAULTS}}
        if normalizer is not None:
            for k in ("add_dummy_prefix", "remove_extra_whitespaces", "escape_whitespaces", "normalization_rule_name"):
                if k in flags:
                    raise OptionError(f"--{k} conflicts with normalizer= (which carries its own); give one of them")
        _train(f, normalizer)

    train = Train


def _train(f: dict[str, Any], normalizer: Optional[SentencePieceNormalizer]) -> None:
    import subwords

    model_type = str(f["model_type"]).lower()
    if model_type in ("word", "char"):
        raise NotOfferedOptionError(f"--model_type={model_type} is not offered: subwords' .model engine reproduces "
                                    "unigram and bpe")
    if model_type not in ("unigram", "bpe"):
        raise OptionError(f"--model_type must be unigram or bpe, got {model_type!r}")
    vocab_size = int(f["vocab_size"])
    prefix = f["model_prefix"]
    writer = f["model_writer"]
    if (prefix is None) == (writer is None):
        raise OptionError("give --model_prefix (files <prefix>.model and <prefix>.vocab) or model_writer=, one of them")
    byte_fallback = _as_bool("byte_fallback", f["byte_fallback"])
    user = _flag_list("user_defined_symbols", f["user_defined_symbols"])
    control = _flag_list("control_symbols", f["control_symbols"])
    # the normalizer: a given one, else the named rule set with the flags
    if normalizer is not None:
        norm_data = normalizer._data
        nm = normalizer._model
        rules_name = None
        add_dummy_prefix, remove_extra, escape = nm.add_dummy_prefix, nm.remove_extra_whitespaces, nm.escape_whitespaces
        top = wire.parse(norm_data)
        spec = wire.get(top, 3, b"")
        rules = None
    else:
        rules_name = str(f["normalization_rule_name"])
        rules = _rules(rules_name)
        add_dummy_prefix = _as_bool("add_dummy_prefix", f["add_dummy_prefix"])
        remove_extra = _as_bool("remove_extra_whitespaces", f["remove_extra_whitespaces"])
        escape = _as_bool("escape_whitespaces", f["escape_whitespaces"])
        spec = None
    # the pieces that are not learned, at their ids
    roles = [("unk", int(f["unk_id"]), str(f["unk_piece"])), ("bos", int(f["bos_id"]), str(f["bos_piece"])),
             ("eos", int(f["eos_id"]), str(f["eos_piece"])), ("pad", int(f["pad_id"]), str(f["pad_piece"]))]
    if int(f["unk_id"]) < 0:
        raise OptionError("--unk_id must be set (sentencepiece models need an unknown piece)")
    slots: dict[int, tuple[str, float, int]] = {}
    for role, id, piece in roles:
        if id < 0:
            continue
        if id >= vocab_size:
            raise OptionError(f"--{role}_id={id} is outside the vocabulary of {vocab_size}")
        if id in slots:
            raise OptionError(f"--{role}_id={id} is taken by {slots[id][0]!r}")
        if role == "unk":
            ty = UNKNOWN
        elif piece in user:
            user.remove(piece)
            ty = USER_DEFINED
        elif piece in control:
            control.remove(piece)
            ty = CONTROL
        else:
            ty = CONTROL
        slots[id] = (piece, 0.0, ty)
    fixed = [(p, 0.0, CONTROL) for p in control] + [(p, 0.0, USER_DEFINED) for p in user]
    if byte_fallback:
        fixed += [(f"<0x{b:02X}>", 0.0, BYTE) for b in range(256)]
    n_learn = vocab_size - len(slots) - len(fixed)
    if n_learn < 2:
        raise OptionError(f"--vocab_size={vocab_size} leaves no room for learned pieces after the "
                          f"{len(slots) + len(fixed)} reserved ones")
    # normalize the corpus as the model will, then learn on the normalized text
    lines = _lines(f)
    if normalizer is not None:
        raw = _Model(_with_flags(norm_data, False, False, False))
    else:
        raw = _Model(_bare(rules, None) if rules else _bare([], None))
        raw = _Model(_with_flags(raw.data, False, False, False))
    lines = [raw.m.normalize(x) for x in lines]
    lines = [x for x in lines if x]
    threads = int(f["num_threads"])
    options: dict[str, Any] = dict(model=model_type, vocab_size=n_learn + 1, spelling="front", mark=SPACE,
                                   split_at_marks=_as_bool("split_by_whitespace", f["split_by_whitespace"]),
                                   character_coverage=float(f["character_coverage"]),
                                   threads=max(1, min(threads, os.cpu_count() or 1)))
    if model_type == "unigram":
        options.update(em="sentencepiece", max_piece_length=int(f["max_sentencepiece_length"]),
                       split_by_script=_as_bool("split_by_unicode_script", f["split_by_unicode_script"]),
                       split_by_number=_as_bool("split_by_number", f["split_by_number"]),
                       seed_size=int(f["seed_sentencepiece_size"]), shrink=float(f["shrinking_factor"]),
                       em_rounds=int(f["num_sub_iterations"]))
    else:
        options.update(max_piece_length=int(f["max_sentencepiece_length"]))
    if _as_bool("split_digits", f["split_digits"]):
        options["split_digits"] = 1
    tok = subwords.train(lines, **options)
    learned: list[tuple[str, float, int]] = []
    if model_type == "unigram":
        for row, kind, lp in zip(tok.rows, tok.kinds, getattr(tok, "log_probs")):
            if kind in ("alphabet", "learned"):
                learned.append((row, float(lp), NORMAL))
        learned.sort(key=lambda r: -r[1])
    else:
        rank = 0
        alphabet = []
        for row, kind in zip(tok.rows, tok.kinds):
            if kind == "learned":
                rank += 1
                learned.append((row, float(-rank), NORMAL))
            elif kind == "alphabet":
                alphabet.append(row)
        learned += [(row, float(-(rank + 1 + i)), NORMAL) for i, row in enumerate(alphabet)]
    taken = {p for p, _, _ in slots.values()} | {p for p, _, _ in fixed}
    learned = [r for r in learned if r[0] not in taken][:n_learn]
    rest = iter(fixed + learned)
    pieces: list[tuple[str, float, int]] = []
    for i in range(len(slots) + len(fixed) + len(learned)):
        pieces.append(slots[i] if i in slots else next(rest))
    role_ids = [(role, id) for role, id, _ in roles if id >= 0 and role != "unk" and pieces[id][2] == CONTROL]
    extra: list[wire.Field] = [(3, 0, 1 if model_type == "unigram" else 2), (4, 0, len(pieces)),
                               (44, 2, str(f["unk_surface"]).encode("utf-8"))]
    for field, (role, id, piece) in zip((45, 46, 47, 48), roles):
        extra.append((field, 2, piece.encode("utf-8")))
    for field, (role, id, piece) in zip((40, 41, 42, 43), roles):
        extra.append((field, 0, id & ((1 << 64) - 1)))
    if prefix is not None:
        extra.append((2, 2, str(prefix).encode("utf-8")))
    data = _build_model(model_type, pieces, byte_fallback, str(f["unk_surface"]), rules or [], add_dummy_prefix,
                        remove_extra, escape, _as_bool("split_by_whitespace", f["split_by_whitespace"]), role_ids,
                        rules_name, extra)
    if spec is not None:
        data = wire.serialize(wire.put(wire.parse(data), 3, 2, bytes(spec)))
    _Model(data)  # reads back, or refuses
    if writer is not None:
        writer.write(data)
        return
    from .._io import write_atomic

    write_atomic(f"{prefix}.model", data, "SentencePiece model")
    with_scores = _as_bool("vocabulary_output_piece_score", f["vocabulary_output_piece_score"])
    vocab = "".join(f"{p}\t{_score_text(s)}\n" if with_scores else f"{p}\n" for p, s, _ in pieces)
    write_atomic(f"{prefix}.vocab", vocab, "SentencePiece .vocab file")


def _score_text(s: float) -> str:
    return f"{s:g}"
