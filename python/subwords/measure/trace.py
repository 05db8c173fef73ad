"""Training traces, tie branches and greedy against optimal.

A trace is what the engine did at every step of one training, recorded by the Rust engine itself
(``crates/subwords-core/src/learners/merge/trace.rs`` and ``learners/unigram/``), not re-computed here:

* BPE and WordPiece: each merge's pair, its count (or exact score ``num / den``), the candidates
  tied with it, the corpus length after it and the rows after it;
* Unigram: each size check's table size, log-likelihood, the losses of the pieces pruning could
  remove (how many exactly zero) and the pieces it removed; on request the EM trajectories.

Everything returned is a plain dataclass whose ``to_dict()`` is JSON-ready.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Mapping, Optional, Sequence, Union

from .. import _api
from ..errors import OptionError

Pair = tuple[str, str]


def _piece(p: Any) -> str:
    # the engine writes a piece that is not valid UTF-8 (a byte-level fragment) as its byte values
    return p if isinstance(p, str) else bytes(p).decode("utf-8", "backslashreplace")


@dataclass
class MergeStep:
    """One merge, as the engine took it."""

    step: int
    """1-based, counted across both stages of superword BPE."""
    stage: int
    left: str
    right: str
    result: str
    count: int
    """The pair's count (BPE), the numerator of the WordPiece score, or count x joined length (Length-MAX)."""
    score_den: int
    """The score's denominator: 1 under counts, ``count(left) * count(right)`` for WordPiece."""
    ties: list[Pair]
    """The candidates with exactly this step's score, in the tie rule's order (the rule's own
    choice first). Empty unless ``ties=True``."""
    tie_count: int
    forced: bool
    new_row: bool
    """False when the joined piece already had a row (two merge paths to one string)."""
    corpus_pieces: int
    """The corpus length after this step, as ``report["corpus_pieces_after"]`` counts it."""
    rows: int
    """The vocabulary size after this step (every row: [UNK], byte rows, alphabet, learned)."""

    @property
    def score(self) -> Fraction:
        return Fraction(self.count, self.score_den)

    def to_dict(self) -> dict[str, Any]:
        d = dataclasses.asdict(self)
        d["ties"] = [list(t) for t in self.ties]
        return d


@dataclass
class MergeTrace:
    """A BPE or WordPiece training, step by step."""

    model: str
    corpus_pieces_before: int
    rows_before: int
    """Rows before the first merge ([UNK], byte rows and the alphabet)."""
    floor: int
    """The smallest ``vocab_size`` the corpus allows (rows that count against the budget)."""
    steps: list[MergeStep]
    stop: str
    tokenizer: Any = field(repr=False, compare=False)

    def tie_points(self) -> list[MergeStep]:
        """The steps where more than one candidate tied (needs ``ties=True``)."""
        return [s for s in self.steps if s.tie_count > 1]

    def corpus_lengths(self) -> list[int]:
        """The corpus length before any merge and after each one."""
        return [self.corpus_pieces_before] + [s.corpus_pieces for s in self.steps]

    def to_dict(self) -> dict[str, Any]:
        return {"model": self.model, "corpus_pieces_before": self.corpus_pieces_before, "rows_before": self.rows_before,
                "floor": self.floor, "stop": self.stop, "steps": [s.to_dict() for s in self.steps]}


@dataclass
class UnigramRound:
    """One size check of the Unigram learner: the table after its EM rounds, then pruning."""

    round: int
    size: int
    """Pieces in the table when the round's EM steps began (single symbols included; [UNK] and
    byte rows not)."""
    em_dropped: int
    """Pieces the round's M-steps dropped before its size check: ``em="sentencepiece"`` drops
    pieces of two or more symbols under an expected count of 0.5 (0 for the other methods)."""
    log_likelihood: float
    candidates: int
    """Pieces pruning could remove (two or more symbols); 0 on the last round."""
    zero_losses: int
    """How many of the candidates' losses were exactly zero."""
    losses: list[tuple[str, float]]
    """Every candidate with its loss, in pruning's order (loss descending, text ascending)."""
    pruned: list[tuple[str, float]]

    def to_dict(self) -> dict[str, Any]:
        d = dataclasses.asdict(self)
        d["losses"] = [list(x) for x in self.losses]
        d["pruned"] = [list(x) for x in self.pruned]
        return d


@dataclass
class EmStep:
    """Every live piece's probability after one EM step (step 0: the table before the round's
    first step)."""

    round: int
    step: int
    log_probs: dict[str, float]

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


@dataclass
class UnigramTrace:
    model: str
    seed_size: int
    rounds: list[UnigramRound]
    em: list[EmStep]
    tokenizer: Any = field(repr=False, compare=False)

    @property
    def sizes(self) -> list[int]:
        """The table size at each size check (``report["rounds"]``)."""
        return [r.size for r in self.rounds]

    def to_dict(self) -> dict[str, Any]:
        return {"model": self.model, "seed_size": self.seed_size, "rounds": [r.to_dict() for r in self.rounds],
                "em": [e.to_dict() for e in self.em]}


Trace = Union[MergeTrace, UnigramTrace]


def _float(x: Any) -> float:
    return float(x)  # "inf", "-inf" come as text (JSON has no infinities)


def _fallback_rows_outside(tok: Any) -> int:
    if tok.options.get("byte_fallback_in_budget"):
        return 0
    return sum(1 for k in tok.kinds if k in ("byte", "marker"))


def _forced_list(forced: Optional[Mapping[int, Sequence[str]]]) -> list[list[Any]]:
    out: list[list[Any]] = []
    for step, pair in (forced or {}).items():
        if isinstance(step, bool) or not isinstance(step, int) or step < 1:
            raise OptionError(f"forced: steps are whole numbers from 1, got {step!r}")
        if not (isinstance(pair, (tuple, list)) and len(pair) == 2 and all(isinstance(p, str) for p in pair)):
            raise OptionError(f"forced[{step}] must be a (left, right) pair of pieces, got {pair!r}")
        out.append([step, pair[0], pair[1]])
    return out


def trace(data: Any, *, ties: bool = True, max_ties: int = 64, forced: Optional[Mapping[int, Sequence[str]]] = None,
          em_steps: bool = False, **options: Any) -> Trace:
    """Trains like :func:`subwords.train` (same ``data`` and options) and returns what the engine
    did at every step.

    ``ties``: list each step's tied candidates (one pass over the live pairs per step: meant for
    small corpora; ``ties=False`` keeps the cost of a plain training). ``forced``: ``{step: (left,
    right)}`` takes that candidate at that merge number instead of the tie rule's choice (a pair
    that is not a candidate there is an :class:`OptionError`). ``em_steps`` (Unigram): record
    every piece's probability after every EM step. ``em`` is the training option, as in
    :func:`subwords.train` (``em="sentencepiece"`` traces sentencepiece's loop).

    >>> t = trace({"low": 5, "lower": 2, "newest": 6, "widest": 3}, vocab_size=22)
    >>> [(s.left, s.right, s.count, s.corpus_pieces) for s in t.steps[:2]]
    [('e', 's', 9, 70), ('es', 't</w>', 9, 61)]
    >>> t.steps[0].ties
    [('e', 's'), ('s', 't</w>')]
    """
    for name, value in (("ties", ties), ("em_steps", em_steps)):
        if not isinstance(value, bool):
            raise OptionError(f"{name} must be True or False, got {value!r}")
    if isinstance(max_ties, bool) or not isinstance(max_ties, int) or max_ties < 1:
        raise OptionError(f"max_ties must be a whole number from 1, got {max_ties!r}")
    model = options.get("model", "bpe")
    if model == "word":
        raise OptionError("model='word' learns no merges and prunes nothing: there is nothing to trace")
    if options.get("picky") is not None:
        raise OptionError("trace does not follow Picky BPE yet: its removals are not steps of the merge engine "
                          "it records; train with picky= and read the model file's picky_events")
    if options.get("scaffold"):
        raise OptionError("trace does not follow Scaffold-BPE yet: its marks are not steps of the merge engine "
                          "it records; train with scaffold=True and read the model file's scaffold_events")
    if forced and model == "unigram":
        raise OptionError("forced choices apply to the merge learners (bpe, wordpiece), not to unigram")
    if em_steps and model != "unigram":
        raise OptionError("em_steps=True applies only to model='unigram'")
    ask = {"ties": ties, "max_ties": max_ties, "forced": _forced_list(forced), "em": em_steps}
    tok, raw = _api.train_traced(data, ask, **options)
    if raw.get("unigram") is not None:
        return _unigram_trace(tok, raw["unigram"])
    return _merge_trace(tok, raw["merge"])


@dataclass
class Lengths:
    """A merge run reduced to what a size curve needs: after each step, its corpus length and
    rows (no per-step objects: cheap for tens of thousands of steps)."""

    corpus_pieces_before: int
    rows_before: int
    floor: int
    corpus_pieces: list[int]
    rows: list[int]
    tokenizer: Any = field(repr=False, compare=False)


def lengths(data: Any, **options: Any) -> Lengths:
    """Trains like :func:`subwords.train` and returns each merge's corpus length and rows."""
    if options.get("model", "bpe") not in ("bpe", "wordpiece"):
        raise OptionError("lengths apply to the merge learners (model='bpe' or 'wordpiece')")
    ask = {"ties": False, "max_ties": 1, "forced": [], "em": False, "lengths_only": True}
    tok, trace = _api.train_traced(data, ask, **options)
    raw = trace["merge"]
    new_rows = raw["new_rows_after"]
    rows_before = tok.vocab_size - (new_rows[-1] if new_rows else 0)
    before = tok.report["corpus_pieces_before"]
    offset = before - (raw["stage_pieces_before"][0] if raw["stage_pieces_before"] else 0)
    return Lengths(corpus_pieces_before=before, rows_before=rows_before, floor=rows_before - _fallback_rows_outside(tok),
                   corpus_pieces=[p + offset for p in raw["pieces_after"]], rows=[rows_before + r for r in new_rows],
                   tokenizer=tok)


def _merge_trace(tok: Any, raw: dict[str, Any]) -> MergeTrace:
    report = tok.report
    steps_raw = raw["steps"]
    learned = steps_raw[-1]["new_rows_after"] if steps_raw else 0
    rows_before = tok.vocab_size - learned
    # the pipeline counts symbols outside the alphabet (alphabet limits) on top of the engine
    offset = report["corpus_pieces_before"] - (raw["stage_pieces_before"][0] if raw["stage_pieces_before"] else 0)
    steps = []
    for n, s in enumerate(steps_raw, 1):
        steps.append(MergeStep(
            step=n, stage=s["stage"], left=_piece(s["left"]), right=_piece(s["right"]), result=_piece(s["result"]),
            count=s["num"], score_den=int(s["den"]), ties=[(_piece(a), _piece(b)) for a, b in s["ties"]],
            tie_count=s["tie_count"], forced=s["forced"], new_row=s["new_row"],
            corpus_pieces=s["pieces_after"] + offset, rows=rows_before + s["new_rows_after"]))
    return MergeTrace(model=tok.model, corpus_pieces_before=report["corpus_pieces_before"], rows_before=rows_before,
                      floor=rows_before - _fallback_rows_outside(tok), steps=steps, stop=report["stop"], tokenizer=tok)


def _unigram_trace(tok: Any, raw: dict[str, Any]) -> UnigramTrace:
    rounds = [UnigramRound(round=n, size=r["size"], em_dropped=r["em_dropped"], log_likelihood=_float(r["log_likelihood"]), candidates=r["candidates"],
                           zero_losses=r["zero_losses"], losses=[(_piece(p), _float(x)) for p, x in r["losses"]],
                           pruned=[(_piece(p), _float(x)) for p, x in r["pruned"]])
              for n, r in enumerate(raw["rounds"])]
    em = [EmStep(round=e["round"], step=e["step"], log_probs={_piece(p): _float(x) for p, x in e["pieces"]})
          for e in raw["em"]]
    return UnigramTrace(model="unigram", seed_size=raw["seed_size"], rounds=rounds, em=em, tokenizer=tok)


# ------------------------------------------------------------------------------------------------
# Tie branches


@dataclass
class Branch:
    """One way through a tie, followed to the end of the run."""

    step: int
    choice: Pair
    corpus_pieces: int
    rows: int
    rows_learned: int
    shared_learned: int
    """Learned rows this branch has in common with the first branch (the tie rule's own)."""
    only_here: list[str]
    only_first: list[str]
    cut: Optional[list[str]]
    """``word`` encoded by this branch's table (None when no word was asked)."""
    merges: list[Pair]

    def to_dict(self) -> dict[str, Any]:
        d = dataclasses.asdict(self)
        d["choice"] = list(self.choice)
        d["merges"] = [list(m) for m in self.merges]
        return d


def _learned_rows(tok: Any) -> list[str]:
    return [r for r, k in zip(tok.rows, tok.kinds) if k == "learned"]


def tie_branches(data: Any, step: int, *, word: Optional[str] = None, forced: Optional[Mapping[int, Sequence[str]]] = None,
                 **options: Any) -> list[Branch]:
    """Follows every candidate tied at merge ``step`` to the end of the run; the first branch is
    the tie rule's own choice. ``forced`` fixes choices at earlier steps (to reach a later tie on
    another branch). ``word``: encode it with every branch's table.

    >>> four = {"low": 5, "lower": 2, "newest": 6, "widest": 3}
    >>> [(b.choice, b.corpus_pieces, b.shared_learned) for b in tie_branches(four, 1, vocab_size=22)]
    [(('e', 's'), 22, 10), (('s', 't</w>'), 22, 9)]
    """
    if isinstance(step, bool) or not isinstance(step, int) or step < 1:
        raise OptionError(f"step must be a whole number from 1, got {step!r}")
    if options.get("model", "bpe") not in ("bpe", "wordpiece"):
        raise OptionError("tie branches apply to the merge learners (model='bpe' or 'wordpiece')")
    base = dict(forced or {})
    first = trace(data, ties=True, forced=base, **options)
    assert isinstance(first, MergeTrace)
    if step > len(first.steps):
        raise OptionError(f"step {step}: the run has only {len(first.steps)} merges")
    candidates = first.steps[step - 1].ties
    runs: list[tuple[Pair, Any]] = []
    for pair in candidates:
        if pair == candidates[0]:
            runs.append((pair, first.tokenizer))
            continue
        t = trace(data, ties=False, forced={**base, step: pair}, **options)
        runs.append((pair, t.tokenizer))
    first_rows = _learned_rows(runs[0][1])
    out = []
    for pair, tok in runs:
        rows = _learned_rows(tok)
        out.append(Branch(
            step=step, choice=pair, corpus_pieces=tok.report["corpus_pieces_after"], rows=tok.vocab_size,
            rows_learned=len(rows), shared_learned=len(set(rows) & set(first_rows)),
            only_here=sorted(set(rows) - set(first_rows)), only_first=sorted(set(first_rows) - set(rows)),
            cut=None if word is None else tok.encode_pieces(word), merges=list(tok.merges)))
    return out


# ------------------------------------------------------------------------------------------------
# Greedy against optimal


@dataclass
class GreedyGap:
    """After ``merges`` merges: the greedy learner's corpus length against the shortest any
    sequence of that many merges reaches (exhaustive search: small corpora only)."""

    merges: int
    greedy: int
    optimal: int
    gap: int
    greedy_merges: list[Pair]
    optimal_merges: list[list[Pair]]

    def to_dict(self) -> dict[str, Any]:
        d = dataclasses.asdict(self)
        d["greedy_merges"] = [list(p) for p in self.greedy_merges]
        d["optimal_merges"] = [[list(p) for p in seq] for seq in self.optimal_merges]
        return d


def greedy_vs_optimal(counts: Mapping[str, int], max_merges: int, *, spelling: str = "end",
                      min_count: int = 2) -> list[GreedyGap]:
    """For 1..``max_merges`` merges, the engine's greedy corpus length against the optimum found
    by :func:`subwords.analysis.optimal_merges` (exhaustive: exponential in ``max_merges``), both
    taking only pairs that occur at least ``min_count`` times (the learner's default, 2).

    >>> [(g.merges, g.greedy, g.optimal) for g in greedy_vs_optimal({"report": 2, "taste": 8, "state": 10}, 2)]
    [(1, 84, 84), (2, 74, 66)]
    """
    from ..analysis import optimal_merges

    if isinstance(max_merges, bool) or not isinstance(max_merges, int) or not 1 <= max_merges <= 12:
        raise OptionError(f"max_merges must be a whole number from 1 to 12 (the search is exhaustive), got {max_merges!r}")
    if not isinstance(counts, Mapping):
        raise OptionError("greedy_vs_optimal needs a word -> count mapping (the search is exhaustive: small corpora)")
    # a size no small corpus reaches: the greedy run is the prefix of one run to exhaustion
    t = trace(counts, ties=False, spelling=spelling, vocab_size=1 << 26, min_count=min_count)
    assert isinstance(t, MergeTrace)
    out = []
    kw: dict[str, Any] = {"min_count": min_count}
    for k in range(1, min(max_merges, len(t.steps)) + 1):
        best, seqs = optimal_merges(counts, k, spelling=spelling, **kw)
        greedy = t.steps[k - 1].corpus_pieces
        out.append(GreedyGap(merges=k, greedy=greedy, optimal=best, gap=greedy - best,
                             greedy_merges=[(s.left, s.right) for s in t.steps[:k]],
                             optimal_merges=[list(s) for s in seqs]))
    return out
