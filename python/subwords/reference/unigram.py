"""The Unigram language model (Kudo): a table of pieces with probabilities, shrunk by pruning.

Written to be read; every rule below is also in docs/API.md ("Unigram"), which the Rust engine
implements to the bit.

The model
---------
A table maps each piece to a probability; the table's probabilities add to one. A unit is
pieces drawn one after another, independently, so a *spelling* of a unit (a way of cutting its
symbols into pieces the table holds) has the product of its pieces' probabilities. Everything
is done in natural logarithms.

The seed (the Unigram page's four words, ``end`` spelling: ``low`` 5, ``lower`` 2, ``newest``
6, ``widest`` 3): every substring of every unit, counted at every position it occurs,
overlapping, times the unit's count; probability = count / total. The four words hold 6, 15, 21
and 21 substrings per occurrence, 6x5 + 15x2 + 21x6 + 21x3 = 249 in all, 49 of them distinct
(``w</w>`` is one symbol, so ``w`` and ``w</w>`` are two pieces). ``e`` occurs 2 + 12 + 3 = 17
times:

    >>> import math
    >>> FOUR = {"low": 5, "lower": 2, "newest": 6, "widest": 3}
    >>> seed = train_unigram(FOUR, vocab_size=10**6, em_rounds=0)   # the seed, untouched
    >>> p = {piece: math.exp(lp) for piece, lp in zip(seed.rows, seed.log_probs) if lp is not None}
    >>> seed.report["seed_size"], len(p), round(p["e"], 3), round(p["est</w>"], 3)
    (49, 49, 0.068, 0.036)
    >>> abs(p["e"] - 17 / 249) < 1e-15
    True

Spellings. ``lowest`` is not in the corpus; the seed table spells it 28 ways. Each spelling's
*share* is its probability over the unit's (the sum over all its spellings):

    >>> [(" ".join(s), f"{100 * share:.2f}%") for s, share in seed.spellings("lowest")[:4]]
    [('lo west</w>', '46.81%'), ('lowe st</w>', '20.06%'), ('low est</w>', '20.06%'), ('lo w est</w>', '3.10%')]

``lowe st</w>`` and ``low est</w>`` tie exactly (2 x 9 = 2 x 9 in counts); the tie rule puts
the spelling with the longer piece at the first place they differ first.

The lattice. Positions 0..n lie between a unit's n symbols; a piece is an arc from one position
to a later one, and a spelling is a walk from 0 to n. ``lowest`` (``l o w e s t</w>``) has 17
arcs in the seed table, admitting 28 walks. Two recurrences over the arcs answer the two
questions about a unit: ``best(i) = max over arcs (i, j) of log p + best(j)`` (Viterbi, filled
from the end; the likeliest spelling) and ``total(j) = sum over arcs (i, j) of total(i) x p``
(the unit's probability):

    >>> len(seed.lattice("lowest")), len(seed.spellings("lowest"))
    (17, 28)
    >>> seed.encode_pieces("lowest")
    ['lo', 'west</w>']

Re-estimation (EM). Expected counts by forward-backward: an arc's expected use is
``total-into-start x p x total-out-of-end / total``, times the unit's count, summed over the
corpus; each piece's new probability is its expected count over the sum of all expected counts.
The smallest corpus with a choice in it, ``ab`` once: pieces ``a``, ``b</w>``, ``ab</w>`` at a
third each; the whole spelling has 1/3 of the word's 4/9, i.e. 3/4, so the expected counts are
0.75, 0.25, 0.25 (sum 1.25) and the new probabilities 0.6, 0.2, 0.2; a second round gives the
whole spelling 0.9375 / 1.0625 = 0.882:

    >>> def p_ab(k):
    ...     tok = train_unigram({"ab": 1}, vocab_size=10, em_rounds=k)
    ...     return round(math.exp(tok.log_probs[tok.piece_to_id("ab</w>")]), 3)
    >>> [p_ab(k) for k in (0, 1, 2)]
    [0.333, 0.6, 0.882]

Pruning. The loss of a piece is what the corpus's best spellings lose without it:
``sum over units whose best spelling uses p of count x (best score with p - best score
without p)``, on the current table, not renormalised. Two EM rounds run before every size
check; each round keeps ``max(target, floor(3/4 x size))`` pieces, ranked by loss descending
then piece text; single symbols are never pruned. The four words shrink 49, 36, 27, 20, 15:

    >>> tok = train_unigram(FOUR, vocab_size=16)
    >>> tok.report["rounds"]
    [49, 36, 27, 20, 15]
    >>> tok.rows[12:]
    ['newest</w>', 'low</w>', 'widest</w>', 'lower</w>']

Segmenters over a Unigram vocabulary: :meth:`UnigramTokenizer.encode` (Viterbi, or
``segmenter="fewest"`` / ``"sample"``), :meth:`~UnigramTokenizer.nbest`,
:meth:`~UnigramTokenizer.sample`, :meth:`~UnigramTokenizer.fewest`,
:meth:`~UnigramTokenizer.unit_probability`, :meth:`~UnigramTokenizer.spellings`,
:meth:`~UnigramTokenizer.lattice`.

Tie rules (Viterbi and n-best): higher score; then fewer pieces; then the longer piece at the
earliest position where two spellings differ. Scores are IEEE doubles computed by the
recurrences exactly as written in docs/API.md, and those doubles are what every method reports;
but "higher" and "equal" are decided on the exact sum of the pieces' log-probabilities, each
taken once as the whole number ``round(lp * 2**64)`` (:func:`fixed`). A float sum depends on the
order it adds in, so two spellings of the same pieces in another order, tied in arithmetic, could
differ in the last bit and rounding, not the tie rule, would pick. ``aaaaab`` over
``aa`` (-0.1), ``aaa`` (-0.2) and ``b`` (-0.3), ``a`` far less likely: ``aa aaa b`` and
``aaa aa b`` are tied, and the longer piece first wins, although the float recurrence
(``lp + score(rest)``, from the last piece) scores ``aa aaa b`` -0.1 + (-0.2 + -0.3) = -0.6 and
``aaa aa b`` -0.2 + (-0.1 + -0.3) = -0.6000000000000001:

    >>> lattice = [(0, 1, "a", -50.0), (0, 2, "aa", -0.1), (0, 3, "aaa", -0.2)]
    >>> lattice = sorted(lattice + [(i, j, p, lp) for s in range(1, 5) for i, j, p, lp in
    ...     [(s, s + 1, "a", -50.0), (s, s + 2, "aa", -0.1), (s, s + 3, "aaa", -0.2)] if j <= 5]
    ...     + [(5, 6, "b", -0.3)], key=lambda a: (a[0], a[1]))
    >>> [(score, " ".join(p)) for score, p in kbest(lattice, 6, 2)]
    [(-0.6000000000000001, 'aaa aa b'), (-0.6, 'aa aaa b')]
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any, Optional, cast

from subwords._options import MODEL_DEFAULTS
from subwords.errors import SubwordsError

from .spelling import MARKER, ContinuationSpelling, Joints, Piece, RowKey, Spelling, make_spelling
from .tokenizer import Tokenizer
from .pipeline import Data, Unit, choose_alphabet, count_corpus, read_data, size_floor, validate

NEG_INF = -math.inf

#: How two pieces join (the spelling's ``join``).
Join = Callable[[Piece, Piece], Piece]
#: Training runs: runs of symbols (units cut at their unknown symbols) with their counts.
Runs = list[tuple[Unit, int]]
#: One arc of a lattice: ``(start, end, piece, log_prob)``.
Arc = tuple[int, int, Piece, float]
#: Spellings with their scores: ``[(score, (piece, ...))]``.
Spellings = list[tuple[float, tuple[Piece, ...]]]

# ------------------------------------------------------------------------------------------------
# numbers


def logaddexp(a: float, b: float) -> float:
    """``log(exp(a) + exp(b))``, exactly as the Rust engine computes it (commutative bitwise)."""
    if a < b:
        a, b = b, a
    if b == NEG_INF:
        return a
    return a + math.log1p(math.exp(b - a))


class SplitMix64:
    """The sampling generator (Steele, Lea and Flood's SplitMix64), so both engines draw alike.

    ``uniform()`` is ``(next >> 11) * 2**-53``, in ``[0, 1)``.

        >>> g = SplitMix64(0)
        >>> g.next_u64()
        16294208416658607535
    """

    MASK = (1 << 64) - 1

    def __init__(self, seed: int) -> None:
        self.state = seed & self.MASK

    def next_u64(self) -> int:
        self.state = (self.state + 0x9E3779B97F4A7C15) & self.MASK
        z = self.state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & self.MASK
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & self.MASK
        return z ^ (z >> 31)

    def uniform(self) -> float:
        return (self.next_u64() >> 11) * 2.0**-53


# ------------------------------------------------------------------------------------------------
# the table


class Table:
    """Pieces with log-probabilities (``None`` for a symbol the corpus never holds, which only
    the bytes spelling has) and lengths in symbols."""

    def __init__(self, log_probs: dict[Piece, Optional[float]], lengths: dict[Piece, int]) -> None:
        self.log_probs = log_probs
        self.lengths = lengths
        self.max_length = max(lengths.values(), default=1)

    def __len__(self) -> int:
        return len(self.log_probs)

    def lp(self, piece: Piece) -> Optional[float]:
        """The log-probability of a piece, or None when it is not an arc (absent, or no
        probability)."""
        return self.log_probs.get(piece)

    def without(self, drop: set[Piece]) -> Table:
        return Table(
            {p: v for p, v in self.log_probs.items() if p not in drop},
            {p: n for p, n in self.lengths.items() if p not in drop},
        )


# ------------------------------------------------------------------------------------------------
# split_by_script: sentencepiece's rule for which substrings may be pieces


def _script_pattern() -> tuple[Any, dict[str, int]]:
    """One pattern with a group per Unicode script (``s<code>``), read from the ``regex``
    package's tables (the Python standard library has no script property), and the codes by
    name."""
    try:
        import regex
        from regex import _regex_core
    except ImportError:  # pragma: no cover - the test extra has it
        raise SubwordsError("split_by_script in the reference reads scripts through the regex package: pip install regex") from None
    codes: dict[str, int] = dict(_regex_core.PROPERTIES["SCRIPT"][1])
    names = {code: name for name, code in sorted(codes.items())}
    return regex.compile("|".join(f"(?P<s{c}>\\p{{Script={n}}})" for c, n in sorted(names.items()))), codes


_SCRIPTS: list[tuple[Any, dict[str, int]]] = []


def script_class(symbol: Piece, mark: str | None, split_by_number: bool) -> Optional[str]:
    """A symbol's part in the rule: ``"mark"`` (only the spelling's mark: skipped), None (a
    digit without ``split_by_number``: goes with anything, and so does the symbol after it),
    ``"inherited"`` (a combining mark: the script before it), else its script (``s<code>``),
    with Hiragana, Katakana and U+30FC as Han and any character no script lists as Common."""
    t = str(symbol)
    if mark:
        t = t[len(mark):] if t.startswith(mark) else t
        t = t[: -len(mark)] if t.endswith(mark) else t
    if not t:
        return "mark"
    if not _SCRIPTS:
        _SCRIPTS.append(_script_pattern())
    pattern, codes = _SCRIPTS[0]
    c = t[0]
    if "0" <= c <= "9" or "\uff10" <= c <= "\uff19":
        return f"s{codes['COMMON']}" if split_by_number else None
    m = pattern.match(c)
    code = int(m.lastgroup[1:]) if m else codes["UNKNOWN"]
    if code in (codes["HIRAGANA"], codes["KATAKANA"]) or c == "\u30fc":
        code = codes["HAN"]
    elif code == codes["UNKNOWN"]:
        code = codes["COMMON"]
    return "inherited" if code == codes["INHERITED"] else f"s{code}"


def valid_piece(classes: Iterable[Optional[str]]) -> bool:
    """sentencepiece's ``IsValidSentencePiece`` on script (``split_by_unicode_script``): walking
    the symbols' classes (:func:`script_class`) in order, marks skipped, no symbol's script
    differs from the one before it, a missing one (None) matching anything."""
    prev: Optional[str] = None
    for c in classes:
        if c == "mark":
            continue
        cur = prev if c == "inherited" else c
        if cur is not None and prev is not None and cur != prev:
            return False
        prev = cur
    return True


#: a run's symbols -> whether the piece they make may be a seed candidate
Rule = Optional[Callable[[Unit], bool]]


def substrings(run: Unit, join: Join, max_length: int | None) -> Iterator[tuple[int, int, Piece]]:
    """Every ``(start, end, piece)`` of a run of symbols, start then end ascending."""
    n = len(run)
    for i in range(n):
        piece = run[i]
        top = n if max_length is None else min(n, i + max_length)
        for j in range(i + 1, top + 1):
            if j > i + 1:
                piece = join(piece, run[j - 1])
            yield i, j, piece


def seed(
    runs: Runs, join: Join, alphabet: list[Piece], max_piece_length: int | None, seed_size: int | None,
    rule: Rule = None,
) -> Table:
    """The starting table: every substring of every run, counted at every position it occurs
    (overlapping) times the run's count; probability = count / total.

    ``seed_size`` caps the table: every alphabet symbol stays, and the other candidates are
    kept by count descending, then piece text ascending -- the one place a piece is dropped on
    frequency alone. ``total`` sums the counts of the pieces kept. An alphabet symbol the
    corpus never holds (bytes spelling) has no probability. ``rule`` (``split_by_script``): a
    substring of two or more symbols it refuses is no candidate.
    """
    counts: dict[Piece, int] = {s: 0 for s in alphabet}
    lengths: dict[Piece, int] = {s: 1 for s in alphabet}
    for run, c in runs:
        for i, j, piece in substrings(run, join, max_piece_length):
            if j - i > 1 and rule is not None and not rule(run[i:j]):
                continue
            counts[piece] = counts.get(piece, 0) + c
            lengths[piece] = j - i
    if seed_size is not None:
        others = sorted((p for p in counts if lengths[p] > 1), key=lambda p: (-counts[p], p))
        keep = set(alphabet) | set(others[: max(0, seed_size - len(alphabet))])
        counts = {p: c for p, c in counts.items() if p in keep}
        lengths = {p: n for p, n in lengths.items() if p in keep}
    total = sum(counts.values())
    log_probs: dict[Piece, Optional[float]] = {p: (math.log(c / total) if c else None) for p, c in counts.items()}
    return Table(log_probs, lengths)


# ------------------------------------------------------------------------------------------------
# the lattice of one run


def arcs(run: Unit, table: Table, join: Join) -> list[Arc]:
    """The run's lattice: ``(start, end, piece, log_prob)`` for every substring the table gives
    a probability, start then end ascending."""
    out: list[Arc] = []
    for i, j, piece in substrings(run, join, table.max_length):
        lp = table.lp(piece)
        if lp is not None:
            out.append((i, j, piece, lp))
    return out


def scaled(lp: float, scale: float) -> float:
    """``scale * lp``, with ``0 * lp = 0.0`` even for ``lp = -inf`` (alpha 0: all alike)."""
    return 0.0 if scale == 0.0 else scale * lp


def forward(lattice: list[Arc], n: int, scale: float = 1.0) -> list[float]:
    """``alpha[j] = log-sum over arcs (i, j), i ascending, of alpha[i] + scale * lp``."""
    alpha = [NEG_INF] * (n + 1)
    alpha[0] = 0.0
    for i, j, _, lp in sorted(lattice, key=lambda a: (a[1], a[0])):
        alpha[j] = logaddexp(alpha[j], alpha[i] + scaled(lp, scale))
    return alpha


def backward(lattice: list[Arc], n: int) -> list[float]:
    """``beta[i] = log-sum over arcs (i, j), j ascending, of lp + beta[j]``."""
    beta = [NEG_INF] * (n + 1)
    beta[n] = 0.0
    for i, j, _, lp in sorted(lattice, key=lambda a: (-a[0], a[1])):
        beta[i] = logaddexp(beta[i], lp + beta[j])
    return beta


def forward_backward_linear(lattice: list[Arc], n: int, q: dict[Piece, float]) -> tuple[list[float], list[float], list[int]]:
    """``em="sentencepiece"``'s forward and backward in linear space, on ``q[p] = exp(lp)``:
    each position's forward value kept as a mantissa ``a[j]`` in ``[0.5, 1)`` and a binary
    exponent ``E[j]``, so that nothing under- or overflows however long the run. ``a[0] = 1``,
    ``E[0] = 0``; for ``j = 1..n``, over the arcs ending at ``j`` in start order, ``raw`` sums
    ``ldexp(a[i] * q, E[i] - E[j-1])`` from 0.0, then ``a[j], e = frexp(raw)`` and ``E[j] =
    E[j-1] + e``. Backward in the same exponents: ``b[n] = 1``; for starts descending, over the
    start's arcs in end order, ``b[i]`` sums ``ldexp(q * b[j], E[i] - E[j])``. Powers of two
    scale exactly, so these are the plain linear sums with their plain roundings."""
    a, e = [0.0] * (n + 1), [0] * (n + 1)
    a[0] = 1.0
    by_end = sorted(lattice, key=lambda arc: (arc[1], arc[0]))
    k = 0
    for j in range(1, n + 1):
        raw = 0.0
        while k < len(by_end) and by_end[k][1] == j:
            i, _, piece, _ = by_end[k]
            raw += math.ldexp(a[i] * q[piece], e[i] - e[j - 1])
            k += 1
        a[j], shift = math.frexp(raw)
        e[j] = e[j - 1] + shift
    b = [0.0] * (n + 1)
    b[n] = 1.0
    for i, j, piece, _ in sorted(lattice, key=lambda arc: (-arc[0], arc[1])):
        b[i] += math.ldexp(q[piece] * b[j], e[i] - e[j])
    return a, b, e


def expected_counts(runs: Runs, table: Table, join: Join, linear: bool = False) -> dict[Piece, float]:
    """The E-step: each piece's log expected count (pieces on no arc are left out). ``linear``
    (``em="sentencepiece"``, as sentencepiece): the expected count itself, each arc adding its
    ``c * alpha[i] * q * beta[j] / Z`` with ``+`` from 0.0 instead of ``log(c) + post`` with
    :func:`logaddexp`, forward and backward in linear space (:func:`forward_backward_linear`):
    the term is ``ldexp(((a[i] * q) * b[j]) * (c / a[n]), E[i] - E[j])``, and no arc calls
    ``exp`` or ``log1p`` (one ``exp`` per piece a round makes ``q``)."""
    expected: dict[Piece, float] = {}
    q: dict[Piece, float] = {}
    if linear:
        q = {p: math.exp(lp) for p, lp in table.log_probs.items() if lp is not None}
    for run, c in runs:
        n = len(run)
        lattice = arcs(run, table, join)
        if linear:
            a, b, e = forward_backward_linear(lattice, n, q)
            if a[n] == 0.0:
                continue
            w = float(c) / a[n]
            for i, j, piece, _ in lattice:
                t = math.ldexp(((a[i] * q[piece]) * b[j]) * w, e[i] - e[j])
                expected[piece] = expected.get(piece, 0.0) + t
            continue
        alpha, beta = forward(lattice, n), backward(lattice, n)
        log_z = alpha[n]
        if log_z == NEG_INF:
            continue
        log_c = math.log(float(c))
        for i, j, piece, lp in lattice:
            post = alpha[i] + lp + beta[j] - log_z
            expected[piece] = logaddexp(expected.get(piece, NEG_INF), log_c + post)
    return expected


def em_round(runs: Runs, table: Table, join: Join) -> Table:
    """One EM round: expected counts by forward-backward, each over their sum (in logs).

    For each run (in order) and each arc ``(i, j, p)`` of it (start, end ascending), the term
    ``log(count) + (((alpha[i] + lp) + beta[j]) - logZ)`` is folded into ``E[p]`` with
    :func:`logaddexp`; then ``lp'(p) = E[p] - S``, ``S`` folding ``E`` over the pieces in text
    order. Pieces without a probability keep none.

    Log-probabilities of pieces no spelling needs roughly double every round; they stay finite
    for about a thousand rounds, then reach ``-inf``. So a run whose ``logZ`` is ``-inf`` (every
    spelling holds such a piece) adds nothing, and if no run adds anything the table is kept.
    """
    expected = expected_counts(runs, table, join)
    total = NEG_INF
    for piece in sorted(expected):
        total = logaddexp(total, expected[piece])
    if total == NEG_INF:
        return table
    log_probs: dict[Piece, Optional[float]] = {
        p: (expected.get(p, NEG_INF) - total if v is not None else None)
        for p, v in table.log_probs.items()
    }
    return Table(log_probs, table.lengths)


def digamma(x: float) -> float:
    """``psi(x)`` for ``x >= 0`` (``psi(0) = -inf``), as sentencepiece's trainer computes it: the
    recurrence ``psi(x) = psi(x + 1) - 1/x`` until ``x >= 7``, then the asymptotic series in
    ``y = x - 1/2``. The Rust engine (``learners/unigram/em.rs``) runs the same operations in
    the same order, so the doubles agree bit for bit."""
    if x == 0.0:
        return NEG_INF
    result = 0.0
    while x < 7.0:
        result -= 1.0 / x
        x += 1.0
    x -= 0.5
    xx = 1.0 / x
    xx2 = xx * xx
    xx4 = xx2 * xx2
    return (result + math.log(x) + (1.0 / 24.0) * xx2 - (7.0 / 960.0) * xx4
            + (31.0 / 8064.0) * xx4 * xx2 - (127.0 / 30720.0) * xx4 * xx4)


def em_round_bayes(runs: Runs, table: Table, join: Join) -> Table:
    """One EM round with sentencepiece's Bayesian M-step (``em="bayes"``): the expected counts
    ``E[p]`` exactly as :func:`em_round` folds them, then ``lp'(p) = psi(exp(E[p])) - psi(S)``,
    ``S`` the plain sum of ``exp(E[p])`` over the pieces in text order. The sparse prior sends
    pieces no spelling needs far down (``psi(0.1)`` is about -10.4) instead of halving them. No
    piece is dropped by the M-step (pruning removes them, at zero loss); a single symbol scores
    as if its expected count were at least 0.5 (sentencepiece's drop threshold), so no run loses
    every spelling; a table no run reaches (``S = 0``) is kept."""
    expected = expected_counts(runs, table, join)
    with_prob = sorted(p for p, v in table.log_probs.items() if v is not None)
    total = 0.0
    for piece in with_prob:
        total += math.exp(expected.get(piece, NEG_INF))
    if total == 0.0:
        return table
    d_total = digamma(total)

    def count(p: Piece) -> float:
        e = math.exp(expected.get(p, NEG_INF))
        return max(e, 0.5) if table.lengths[p] == 1 else e  # single symbols never drop

    log_probs: dict[Piece, Optional[float]] = {
        # at most 0: near x = 7 the cut series is monotone only to ~1e-11 (as in the Rust engine)
        p: (min(digamma(count(p)) - d_total, 0.0) if v is not None else None)
        for p, v in table.log_probs.items()
    }
    return Table(log_probs, table.lengths)


def em_round_sentencepiece(runs: Runs, table: Table, join: Join) -> Table:
    """One EM round of ``em="sentencepiece"`` (sentencepiece's ``RunMStep`` whole): the expected
    counts ``e`` folded in linear space (:func:`expected_counts` with ``linear``, as
    sentencepiece folds them); a piece of two or more symbols whose expected count ``e`` is
    below 0.5 leaves the table; ``S`` is the plain sum of ``e`` over the
    pieces that stay, in text order (single symbols with their own ``e``); then ``lp'(p) =
    min(psi(e) - psi(S), 0)``, a single symbol scoring as if ``e`` were at least 0.5 (it must
    stay: see :func:`em_round_bayes`). A table no run reaches (``S = 0``) is kept."""
    expected = expected_counts(runs, table, join, linear=True)
    with_prob = sorted(p for p, v in table.log_probs.items() if v is not None)
    total = 0.0
    count: dict[Piece, float] = {}
    for piece in with_prob:
        e = expected.get(piece, 0.0)
        if table.lengths[piece] == 1:
            total += e
            count[piece] = max(e, 0.5)
        elif e >= 0.5:
            total += e
            count[piece] = e
    if total == 0.0:
        return table
    d_total = digamma(total)
    log_probs: dict[Piece, Optional[float]] = {}
    for p, v in table.log_probs.items():
        if v is None:
            log_probs[p] = None
        elif p in count:
            log_probs[p] = min(digamma(count[p]) - d_total, 0.0)
    return Table(log_probs, {p: table.lengths[p] for p in log_probs})


#: The M-steps by the ``em`` option's name (None: the page's).
EM_ROUNDS: dict[str, Callable[[Runs, Table, Join], Table]] = {
    "plain": em_round, "bayes": em_round_bayes, "sentencepiece": em_round_sentencepiece,
}


def log_likelihood(runs: Runs, table: Table, join: Join) -> float:
    """``sum over runs (in order) of count x log P(run)``."""
    out = 0.0
    for run, c in runs:
        out += c * forward(arcs(run, table, join), len(run))[len(run)]
    return out


# ------------------------------------------------------------------------------------------------
# segmenters over one run


#: The fixed-point keys' range: a signed 128-bit whole number, as the Rust engine's ``i128``.
FIXED_MIN, FIXED_MAX = -(2**127), 2**127 - 1


def fixed(lp: float) -> int:
    """A log-probability as an exact comparison key: ``round(lp * 2**64)``, half to even,
    clamped to 128 bits (``-inf`` is :data:`FIXED_MIN`).

    Multiplying by a power of two is exact, and for ``|lp| >= 2**-12`` the product is already a
    whole number (a double's last bit there is worth at least ``2**-64``), so the key *is* the
    double; only a piece likelier than 0.99976 is rounded, once, to a multiple of ``2**-64``.
    """
    x = lp * 2.0**64  # exact, or an infinity when lp is below about -1e289
    if x <= -(2.0**127):
        return FIXED_MIN
    if x >= 2.0**127:
        return FIXED_MAX
    return round(x)


def fixed_add(a: int, b: int) -> int:
    """The saturating 128-bit sum. Every key is at most 0, so it is ``max(FIXED_MIN, a + b)``
    and a spelling's key is the same whatever order its pieces are added in."""
    return max(FIXED_MIN, min(FIXED_MAX, a + b))


def _key(key: int, lengths: tuple[int, ...]) -> tuple[int, int, tuple[int, ...]]:
    """Sort key for spellings: exact key (:func:`fixed`) descending, fewer pieces, longer piece
    first where they differ."""
    return (-key, len(lengths), tuple(-k for k in lengths))


def kbest(lattice: list[Arc], n: int, k: int | None) -> Spellings:
    """The k-best recurrence, from the end: ``best(n) = [(0.0, ())]``; ``best(i)`` = the first
    k of ``{(lp + s, (j - i,) + L) : arc (i, j), (s, L) in best(j)}`` under :func:`_key`, which
    compares the exact keys (``fixed_add(fixed(lp), key(s))``), not the doubles ``lp + s``.

    ``k=1`` is Viterbi; ``k=None`` keeps every spelling. Returns ``[(score, (piece, ...))]``, the
    scores the doubles of the recurrence.
    """
    starting: list[list[tuple[int, Piece, float]]] = [[] for _ in range(n + 1)]
    for i, j, piece, lp in lattice:
        starting[i].append((j, piece, lp))
    # best[i]: (key, score, piece lengths, pieces) of the best walks from i to the end
    best: list[list[tuple[int, float, tuple[int, ...], tuple[Piece, ...]]]] = [[] for _ in range(n + 1)]
    best[n] = [(0, 0.0, (), ())]
    for i in range(n - 1, -1, -1):
        cands = []
        for j, piece, lp in starting[i]:
            q = fixed(lp)
            for key, score, lengths, pieces in best[j] or ():
                cands.append((fixed_add(q, key), lp + score, (j - i,) + lengths, (piece,) + pieces))
        cands.sort(key=lambda c: _key(c[0], c[2]))
        best[i] = cands[:k]
    return [(score, pieces) for _, score, _, pieces in best[0]]


def viterbi(lattice: list[Arc], n: int) -> tuple[float, tuple[Piece, ...]]:
    """The likeliest spelling (the k-best recurrence with k = 1): ``(score, pieces)``."""
    return kbest(lattice, n, 1)[0]


def fewest(lattice: list[Arc], n: int) -> tuple[Piece, ...]:
    """Fewest pieces (every arc costs one; PathPiece's objective), then the longer piece at the
    earliest position where two spellings differ. Probabilities are not consulted."""
    starting: list[list[tuple[int, Piece]]] = [[] for _ in range(n + 1)]
    for i, j, piece, _ in lattice:
        starting[i].append((j, piece))
    best: list[Optional[tuple[Piece, ...]]] = [None] * (n + 1)
    best[n] = ()
    for i in range(n - 1, -1, -1):
        for j, piece in sorted(starting[i], key=lambda a: -a[0]):  # longer first
            rest, here = best[j], best[i]
            if rest is not None and (here is None or 1 + len(rest) < len(here)):
                best[i] = (piece,) + rest
    found = best[0]
    assert found is not None, "every symbol of a run is an arc, so a walk exists"
    return found


def every_spelling(lattice: list[Arc], n: int) -> Spellings:
    """Every walk, scored as the recurrences score it: ``[(score, pieces)]`` in :func:`_key`
    order. Exponential: for short units."""
    return kbest(lattice, n, None)


def sample_walk(lattice: list[Arc], n: int, alpha: float, rng: SplitMix64) -> tuple[Piece, ...]:
    """Draw a spelling with probability ``P(s)**alpha / sum over s' of P(s')**alpha``.

    Forward filtering, backward sampling: ``a`` = :func:`forward` with every log-probability
    times ``alpha``; from ``j = n`` back to 0, the arcs ending at ``j`` (start ascending) weigh
    ``exp((a[i] + alpha * lp) - a[j])``; one ``u = rng.uniform()``, ``t = u * (sum of the
    weights)``; the first arc whose running sum exceeds ``t`` (else the last) is taken.
    """
    a = forward(lattice, n, alpha)
    ending: list[list[tuple[int, Piece, float]]] = [[] for _ in range(n + 1)]
    for i, j, piece, lp in sorted(lattice, key=lambda x: (x[1], x[0])):
        ending[j].append((i, piece, lp))
    out: list[Piece] = []
    j = n
    while j > 0:
        weights = []
        for i, _, lp in ending[j]:
            x = a[i] + scaled(lp, alpha)
            weights.append(0.0 if x == NEG_INF else math.exp(x - a[j]))
        total = 0.0
        for w in weights:
            total += w
        t = rng.uniform() * total
        chosen = len(weights) - 1
        running = 0.0
        for m, w in enumerate(weights):
            running += w
            if t < running:
                chosen = m
                break
        i, piece, _ = ending[j][chosen]
        out.append(piece)
        j = i
    return tuple(reversed(out))


def sample_nbest(lattice: list[Arc], n: int, alpha: float, k: int, rng: SplitMix64) -> tuple[Piece, ...]:
    """Draw among the k best spellings, weights ``exp(alpha * (score - best score))``, in
    n-best order; one ``u``, the same running-sum rule as :func:`sample_walk`. ``alpha = 0``
    weighs every candidate 1; otherwise a candidate of score ``-inf`` weighs 0."""
    cands = kbest(lattice, n, k)
    top = cands[0][0]
    weights = [
        1.0 if alpha == 0.0 else 0.0 if s == NEG_INF else math.exp(alpha * (s - top))
        for s, _ in cands
    ]
    total = 0.0
    for w in weights:
        total += w
    t = rng.uniform() * total
    running = 0.0
    for (_, pieces), w in zip(cands, weights):
        running += w
        if t < running:
            return pieces
    return cands[-1][1]


# ------------------------------------------------------------------------------------------------
# pruning


def losses(runs: Runs, table: Table, join: Join) -> dict[Piece, float]:
    """Each prunable piece's loss: ``sum over runs (in order) whose Viterbi spelling uses p
    of count x (best with - best without)``; 0.0 for the pieces no best spelling uses.

    A piece used twice in one spelling counts once for that run. The table is not
    renormalised when a piece is taken out.
    """
    out = {p: 0.0 for p, n in table.lengths.items() if n > 1}
    for run, c in runs:
        n = len(run)
        lattice = arcs(run, table, join)
        with_p, pieces = viterbi(lattice, n)
        seen: set[Piece] = set()
        for p in pieces:
            if table.lengths[p] == 1 or p in seen:
                continue
            seen.add(p)
            without, _ = viterbi([a for a in lattice if a[2] != p], n)
            if without != with_p:  # (both -inf: nothing to lose)
                out[p] += c * (with_p - without)
    return out


def prune(runs: Runs, table: Table, join: Join, target: int, shrink: float) -> Table:
    """Keep ``max(target, floor(shrink x size))`` pieces: every single symbol, then the
    prunable pieces by loss descending, piece text ascending."""
    size = len(table)
    keep = max(target, math.floor(shrink * size))
    loss = losses(runs, table, join)
    ranked = sorted(loss, key=lambda p: (-loss[p], p))
    singles = size - len(ranked)
    dropped = set(ranked[keep - singles:])
    return table.without(dropped)


def seed_sentencepiece(
    runs: Runs, join: Join, alphabet: list[Piece], max_piece_length: int | None, seed_size: int | None,
    rule: Rule = None,
) -> Table:
    """``em="sentencepiece"``'s seed (sentencepiece's ``MakeSeedSentencePieces``): as
    :func:`seed`, but a substring of two or more symbols is a candidate only if it is
    *right-branching* -- its occurrences have two or more different followers, a run's end
    being one follower (sentencepiece's word boundary); one that only ever ends its run is
    when it occurs at least twice (sentencepiece sees it followed by the next word's mark and
    by the line's end); one of ``max_piece_length`` symbols always is -- and it is scored
    by count x length; single symbols by their count. The cap keeps the highest scores (ties by
    text); probability = score / total score. ``rule`` as in :func:`seed`."""
    counts: dict[Piece, int] = {s: 0 for s in alphabet}
    lengths: dict[Piece, int] = {s: 1 for s in alphabet}
    followers: dict[Piece, set[Optional[Piece]]] = {}
    for run, c in runs:
        for i, j, piece in substrings(run, join, max_piece_length):
            if j - i > 1 and rule is not None and not rule(run[i:j]):
                continue
            counts[piece] = counts.get(piece, 0) + c
            lengths[piece] = j - i
            if j - i > 1:
                followers.setdefault(piece, set()).add(run[j] if j < len(run) else None)

    def branching(p: Piece) -> bool:
        return lengths[p] == max_piece_length or len(followers[p]) > 1 or (
            followers[p] == {None} and counts[p] >= 2)

    score = {p: (counts[p] * lengths[p] if lengths[p] > 1 else counts[p]) for p in counts
             if lengths[p] == 1 or branching(p)}
    others = sorted((p for p in score if lengths[p] > 1), key=lambda p: (-score[p], p))
    if seed_size is not None:
        others = others[: max(0, seed_size - len(alphabet))]
    keep = set(alphabet) | set(others)
    total = sum(score[p] for p in keep)
    log_probs: dict[Piece, Optional[float]] = {
        p: (math.log(score[p] / total) if score[p] else None) for p in sorted(keep)}
    return Table(log_probs, {p: lengths[p] for p in log_probs})


def losses_sentencepiece(
    runs: Runs, table: Table, join: Join, symbols: Mapping[Piece, Unit]
) -> tuple[dict[Piece, float], set[Piece]]:
    """sentencepiece's pruning criterion (``em="sentencepiece"``; its ``PruneSentencePieces``):
    ``(loss, drop)`` over the pieces of two or more symbols.

    * Each piece is spelled on its own (``symbols[p]``, its symbols): if its Viterbi spelling
      is not the piece itself it is in ``drop``; otherwise its Viterbi spelling without it is
      its *replacement* (none: loss ``inf``, kept).
    * The runs' Viterbi spellings give each piece a frequency ``f`` (the run's count per use,
      integers) and ``F`` their sum; a piece with ``f = 0`` is in ``drop``.
    * The others: ``loss = f_p x ((ln f_p - ln F) - sum over the replacement's pieces n, from
      0.0 in order, of (ln(f_n + f_p) - ln(F + f_p x (k - 1))))``, ``k`` the replacement's
      length -- the unigram likelihood lost if every use of ``p`` took its replacement.
      (sentencepiece also divides by the runs' total count, a constant.)
    """
    drop: set[Piece] = set()
    replacement: dict[Piece, tuple[Piece, ...]] = {}
    for p, n in table.lengths.items():
        if n < 2 or table.lp(p) is None:
            continue
        own = symbols[p]
        lattice = arcs(own, table, join)
        best = kbest(lattice, len(own), 1)
        if best and best[0][1] != (p,):
            drop.add(p)
            continue
        rest = kbest([a for a in lattice if a[2] != p], len(own), 1)
        replacement[p] = rest[0][1] if rest else ()
    freq: dict[Piece, int] = {}
    for run, c in runs:
        best = kbest(arcs(run, table, join), len(run), 1)
        for q in best[0][1] if best else ():
            freq[q] = freq.get(q, 0) + c
    total = sum(freq.values())
    loss: dict[Piece, float] = {}
    if total == 0:
        return {p: 0.0 for p, n in table.lengths.items() if n > 1}, set()
    log_total = math.log(float(total))
    for p, alt in replacement.items():
        f = freq.get(p, 0)
        if f == 0:
            drop.add(p)
        elif not alt:
            loss[p] = math.inf
        else:
            log_alt_total = math.log(float(total + f * (len(alt) - 1)))
            with_p = math.log(float(f)) - log_total
            without = 0.0
            for q in alt:
                without += math.log(float(freq.get(q, 0) + f)) - log_alt_total
            loss[p] = f * (with_p - without)
    return loss, drop


def prune_sentencepiece(
    runs: Runs, table: Table, join: Join, symbols: Mapping[Piece, Unit], floor: int, shrink: float
) -> Table:
    """One ``em="sentencepiece"`` pruning round: drop what :func:`losses_sentencepiece` drops,
    then keep ``max(floor, floor(shrink x size))`` pieces (``size`` before the drops): every
    single symbol, then the others by loss descending, piece text ascending."""
    size = len(table)
    keep = max(floor, math.floor(shrink * size))
    loss, drop = losses_sentencepiece(runs, table, join, symbols)
    ranked = sorted((p for p in loss if p not in drop), key=lambda p: (-loss[p], p))
    singles = sum(1 for n in table.lengths.values() if n == 1)
    dropped = drop | set(ranked[max(0, keep - singles):])
    return table.without(dropped)


def final_pick(table: Table, target: int) -> Table:
    """``em="sentencepiece"``'s last step (its ``FinalizeSentencePieces``): every single symbol,
    then the other pieces by log-probability descending, text ascending, up to ``target``."""
    if len(table) <= target:
        return table
    ranked = sorted((p for p, n in table.lengths.items() if n > 1),
                    key=lambda p: (-cast(float, table.log_probs[p]), p))
    singles = len(table) - len(ranked)
    return table.without(set(ranked[max(0, target - singles):]))


def learn(
    runs: Runs, join: Join, alphabet: list[Piece], target: int, *, max_piece_length: int | None,
    seed_size: int | None, shrink: float, em_rounds: int, em: str = "plain", rule: Rule = None,
) -> tuple[Table, list[int]]:
    """Seed, then ``em_rounds`` EM rounds before every size check, pruning until ``target``.

    ``em="sentencepiece"`` runs sentencepiece's loop instead: its M-step may drop pieces; the
    size check stops at ``max(target, floor(1.1 x target))``; pruning is
    :func:`prune_sentencepiece`; then :func:`final_pick` cuts the table to ``target``.

    Returns ``(table, rounds)``: the final table and its size at the start and after each
    pruning round (and after the final pick, when it removes anything).
    """
    if em == "sentencepiece":
        table = seed_sentencepiece(runs, join, alphabet, max_piece_length, seed_size, rule)
    else:
        table = seed(runs, join, alphabet, max_piece_length, seed_size, rule)
    rounds = [len(table)]
    if em == "sentencepiece":
        symbols: dict[Piece, Unit] = {}
        for run, _ in runs:
            for i, j, piece in substrings(run, join, max_piece_length):
                if j - i > 1 and piece in table.lengths and piece not in symbols:
                    symbols[piece] = run[i:j]
        stop_at = max(target, math.floor(target * 1.1))
        while True:
            for _ in range(em_rounds):
                table = em_round_sentencepiece(runs, table, join)
            if len(table) <= stop_at:
                break
            table = prune_sentencepiece(runs, table, join, symbols, stop_at, shrink)
            rounds.append(len(table))
        if len(table) > target:
            table = final_pick(table, target)
            rounds.append(len(table))
        return table, rounds
    while True:
        for _ in range(em_rounds):
            table = EM_ROUNDS[em](runs, table, join)
        if len(table) <= target:
            return table, rounds
        table = prune(runs, table, join, target, shrink)
        rounds.append(len(table))


# ------------------------------------------------------------------------------------------------
# units, runs and the tokenizer


def cut(unit: Unit, has_probability: Callable[[Piece], bool]) -> list[tuple[str, Any]]:
    """A unit as segments: ``("run", symbols)`` for each maximal stretch of symbols with a
    probability, ``("symbol", s)`` for each symbol without one (it stands alone)."""
    out: list[tuple[str, Any]] = []
    for s in unit:
        if has_probability(s):
            if out and out[-1][0] == "run":
                out[-1] = ("run", out[-1][1] + (s,))
            else:
                out.append(("run", (s,)))
        else:
            out.append(("symbol", s))
    return out


class UnigramTokenizer(Tokenizer):
    """A Unigram vocabulary with its spelling: the reference ``Tokenizer`` plus log-probs and
    the segmenters of the Unigram page."""

    def __init__(self, *, table: Table, **kw: Any) -> None:
        super().__init__(model="unigram", merges=[], stage_one=None, **kw)
        self._table = table

    # -- the table -----------------------------------------------------------------------------
    @property
    def log_probs(self) -> list[Optional[float]]:
        """One per row: the piece's natural-log probability, None for rows that are not pieces
        (``[UNK]``, byte-fallback and marker rows, a byte the corpus never held)."""
        return [self._table.lp(k) if isinstance(k, (str, bytes)) else None for k in self._keys]

    def losses(self, data: Data) -> dict[str, float]:
        """What the corpus ``data`` (any form ``train`` takes) would lose without each learned
        piece, on this table: the quantity pruning ranks. Every learned row, in row order.

        A piece no best spelling uses costs exactly 0.0.
        """
        units: dict[Unit, int] = {}
        for t, c in self._reader(data):
            for u in self._spelling.units(t):
                units[u] = units.get(u, 0) + c
        runs: dict[Unit, int] = {}
        for u, c in units.items():
            for kind, what in cut(u, self._has_probability):
                if kind == "run":
                    runs[what] = runs.get(what, 0) + c
        loss = losses(sorted(runs.items()), self._table, self._spelling.join)
        return {
            self._printed[i]: loss[cast(Piece, k)]  # a learned row's key is its piece
            for i, k in enumerate(self._keys)
            if self._kinds[i] == "learned"
        }

    def _has_probability(self, symbol: Piece) -> bool:
        return symbol in self._alphabet and self._table.lp(symbol) is not None

    # -- encoding ------------------------------------------------------------------------------
    def _segment(self, run: Unit, segmenter: str, alpha: float, nbest: Optional[int],
                 rng: Optional[SplitMix64]) -> tuple[Piece, ...]:
        lattice = arcs(run, self._table, self._spelling.join)
        n = len(run)
        if segmenter == "viterbi":
            return viterbi(lattice, n)[1]
        if segmenter == "fewest":
            return fewest(lattice, n)
        assert rng is not None  # _check_segmenter made one for "sample"
        if nbest is None:
            return sample_walk(lattice, n, alpha, rng)
        return sample_nbest(lattice, n, alpha, nbest, rng)

    def _encode_keys(self, text: str, segmenter: str = "viterbi", alpha: Optional[float] = None,
                     nbest: Optional[int] = None, seed: Optional[int] = None) -> list[RowKey]:
        if not isinstance(text, str):
            raise SubwordsError(f"encode takes a str, got {type(text).__name__}")
        rng = _check_segmenter(segmenter, alpha, nbest, seed)
        alpha = 1.0 if alpha is None else float(alpha)
        keys: list[RowKey] = []
        for unit in self._spelling.units(text):
            keys.extend(self._encode_unit(unit, segmenter, alpha, nbest, rng))
        return keys

    def _encode_unit(self, unit: Unit, segmenter: str = "viterbi", alpha: float = 1.0, nbest: Optional[int] = None,
                     rng: Optional[SplitMix64] = None) -> list[RowKey]:
        keys: list[RowKey] = []
        for kind, what in cut(unit, self._has_probability):
            if kind == "run":
                keys.extend(self._segment(what, segmenter, alpha, nbest, rng))
            elif what in self._alphabet:
                keys.append(what)  # a byte the corpus never held: its own row
            else:
                keys.extend(self._unknown(what))
        return keys

    def encode(self, text: str, *, segmenter: str = "viterbi", alpha: Optional[float] = None,
               nbest: Optional[int] = None, seed: Optional[int] = None) -> list[int]:
        """Ids of ``text``. ``segmenter``: ``"viterbi"`` (default), ``"fewest"``, or ``"sample"``
        (needs ``seed``; ``alpha`` default 1.0; ``nbest=k`` draws among the k best)."""
        return [self._id_of[k] for k in self._encode_keys(text, segmenter, alpha, nbest, seed)]

    def encode_pieces(self, text: str, *, segmenter: str = "viterbi", alpha: Optional[float] = None,
                      nbest: Optional[int] = None, seed: Optional[int] = None) -> list[str]:
        keys = self._encode_keys(text, segmenter, alpha, nbest, seed)
        return [self._printed[self._id_of[k]] for k in keys]

    # -- analysis of one unit ------------------------------------------------------------------
    def _unit(self, unit: str) -> Unit:
        if not isinstance(unit, str):
            raise SubwordsError(f"a unit is a str, got {type(unit).__name__}")
        units = self._spelling.units(unit)
        if len(units) != 1:
            raise SubwordsError(f"{unit!r} spells {len(units)} units; pass exactly one")
        for s in units[0]:
            if not self._has_probability(s):
                raise SubwordsError(
                    f"{unit!r} holds the symbol {self._spelling.show(s)!r}, which has no "
                    "probability in this model, so the unit has no spelling"
                )
        return units[0]

    def _lattice(self, unit: str) -> tuple[list[Arc], int]:
        run = self._unit(unit)
        return arcs(run, self._table, self._spelling.join), len(run)

    def _print(self, pieces: Iterable[Piece]) -> list[str]:
        return [self._spelling.show(p) for p in pieces]

    def lattice(self, unit: str) -> list[tuple[int, int, str, float]]:
        """The unit's arcs ``(start, end, piece, log_prob)``, positions counted in symbols,
        start then end ascending."""
        lattice, _ = self._lattice(unit)
        return [(i, j, self._spelling.show(p), lp) for i, j, p, lp in lattice]

    def unit_log_probability(self, unit: str) -> float:
        """``log P(unit)``: the log-sum over all spellings (the forward recurrence)."""
        lattice, n = self._lattice(unit)
        return forward(lattice, n)[n]

    def unit_probability(self, unit: str) -> float:
        """``P(unit)``: the sum over all its spellings."""
        return math.exp(self.unit_log_probability(unit))

    def spellings(self, unit: str) -> list[tuple[list[str], float]]:
        """Every spelling with its share ``exp(score - Z)``, best first (score descending, fewer
        pieces, longer piece first); ``Z`` folds the scores in that order (it is ``log
        P(unit)``, summed over the list). Exponential: for short units."""
        lattice, n = self._lattice(unit)
        every = every_spelling(lattice, n)
        total = NEG_INF  # the fold of the listed scores, so that no share exceeds 1
        for score, _ in every:
            total = logaddexp(total, score)
        return [
            (self._print(p), 0.0 if s == NEG_INF else math.exp(s - total)) for s, p in every
        ]

    def nbest(self, unit: str, k: int) -> list[tuple[list[str], float]]:
        """The k likeliest spellings with their log-probabilities, best first."""
        if isinstance(k, bool) or not isinstance(k, int) or k < 1:
            raise SubwordsError(f"k must be a whole number >= 1, got {k!r}")
        lattice, n = self._lattice(unit)
        return [(self._print(p), s) for s, p in kbest(lattice, n, k)]

    def sample(self, unit: str, *, seed: int, alpha: float = 1.0, nbest: Optional[int] = None) -> list[str]:
        """One spelling drawn with probability ``share**alpha / normaliser`` (from the k best
        with ``nbest=k``), reproducible from ``seed``."""
        rng = _check_segmenter("sample", alpha, nbest, seed)
        assert rng is not None  # made for "sample"
        lattice, n = self._lattice(unit)
        if nbest is None:
            return self._print(sample_walk(lattice, n, float(alpha), rng))
        return self._print(sample_nbest(lattice, n, float(alpha), nbest, rng))

    def fewest(self, unit: str) -> list[str]:
        """The fewest-pieces spelling over this vocabulary (ties: longer piece first)."""
        lattice, n = self._lattice(unit)
        return self._print(fewest(lattice, n))


def _check_segmenter(segmenter: str, alpha: object, nbest: object, seed: object) -> Optional[SplitMix64]:
    """Validate segmenter options; the generator for ``sample``, else None."""
    if segmenter not in ("viterbi", "fewest", "sample"):
        raise SubwordsError(f"segmenter must be 'viterbi', 'fewest' or 'sample', got {segmenter!r}")
    if segmenter != "sample":
        for name, value in (("alpha", alpha), ("nbest", nbest), ("seed", seed)):
            if value is not None:
                raise SubwordsError(f"{name} is only used with segmenter='sample'")
        return None
    if seed is None or isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < 2**64:
        raise SubwordsError("sampling needs an explicit seed (a whole number from 0 to 2**64-1)")
    if alpha is not None and (
        isinstance(alpha, bool)
        or not isinstance(alpha, (int, float))
        or not math.isfinite(alpha)
        or alpha < 0
    ):
        raise SubwordsError(f"alpha must be a finite number >= 0, got {alpha!r}")
    if nbest is not None and (isinstance(nbest, bool) or not isinstance(nbest, int) or nbest < 1):
        raise SubwordsError(f"nbest must be a whole number >= 1, got {nbest!r}")
    return SplitMix64(seed)


# ------------------------------------------------------------------------------------------------
# train


def train_unigram(
    data: Data,
    *,
    spelling: str | None = "end",
    vocab_size: int,
    max_piece_length: int | None = MODEL_DEFAULTS["max_piece_length"]["unigram"],
    seed_size: int | None = MODEL_DEFAULTS["seed_size"]["unigram"],
    shrink: float = 0.75,
    em_rounds: int = 2,
    em: str | None = None,
    split_by_script: bool = False,
    split_by_number: bool = True,
    byte_fallback: bool = False,
    byte_fallback_in_budget: bool = False,
    alphabet_size: int | None = None,
    character_coverage: float | None = None,
    mark: str | None = None,
    split_at_marks: bool = True,
    pre_split: str | None = None,
    joints: Joints = None,
    counts: bool = False,
    threads: int | None = None,
    input_errors: str = "strict",
    **unknown: object,
) -> UnigramTokenizer:
    """Learn a Unigram vocabulary (docs/API.md, "Unigram"); the oracle for the Rust engine.

        >>> tok = train_unigram({"low": 5, "lower": 2, "newest": 6, "widest": 3}, vocab_size=22)
        >>> tok.report["rounds"]
        [49, 36, 27, 21]
        >>> tok.rows[12:16]
        ['newest</w>', 'low</w>', 'widest</w>', 'lower</w>']
        >>> sorted(tok.rows[16:])   # rows are in log-probability order; the page lists them sorted
        ['de', 'des', 'dest</w>', 'er</w>', 'es', 'est</w>']
    """
    if unknown:
        raise SubwordsError(f"unknown option(s) for model='unigram': {', '.join(sorted(unknown))}")
    if spelling is None:  # the model's own spelling: the Unigram page's
        spelling = "end"
    opts = validate(
        dict(
            model="unigram",
            spelling=spelling,
            vocab_size=vocab_size,
            min_count=1,
            byte_fallback=byte_fallback,
            byte_fallback_in_budget=byte_fallback_in_budget,
            mark=mark,
            split_at_marks=split_at_marks,
            pre_split=pre_split,
            joints=joints,
            superword_at=None,
            max_piece_length=max_piece_length,
            alphabet_size=alphabet_size,
            character_coverage=character_coverage,
            counts=counts,
            threads=threads,
            input_errors=input_errors,
        )
    )
    del opts["min_count"], opts["superword_at"]
    if seed_size is not None and (
        isinstance(seed_size, bool) or not isinstance(seed_size, int) or seed_size < 1
    ):
        raise SubwordsError(f"seed_size must be None or a whole number >= 1, got {seed_size!r}")
    if isinstance(shrink, bool) or not isinstance(shrink, (int, float)) or not 0 < shrink < 1:
        raise SubwordsError(f"shrink must be a number strictly between 0 and 1, got {shrink!r}")
    if isinstance(em_rounds, bool) or not isinstance(em_rounds, int) or em_rounds < 0:
        raise SubwordsError(f"em_rounds must be a whole number >= 0, got {em_rounds!r}")
    opts.update(seed_size=seed_size, shrink=float(shrink), em_rounds=em_rounds)
    if em is not None:
        if em not in EM_ROUNDS:
            raise SubwordsError(
                f"em must be 'plain' (the page's M-step), 'bayes' (sentencepiece's) or 'sentencepiece' "
                f"(sentencepiece's whole loop), got {em!r}"
            )
        opts["em"] = em
    if not isinstance(split_by_script, bool) or not isinstance(split_by_number, bool):
        raise SubwordsError("split_by_script and split_by_number are True or False")
    if split_by_script and spelling == "bytes":
        raise SubwordsError("split_by_script reads each symbol's character, and spelling='bytes' has bytes: use spelling='front'")
    if not split_by_number and not split_by_script:
        raise SubwordsError("split_by_number=False only changes split_by_script's rule: add split_by_script=True")
    if split_by_script:
        opts["split_by_script"] = True
    if not split_by_number:
        opts["split_by_number"] = False

    sp: Spelling[Any] = make_spelling(
        spelling, mark=opts["mark"], split_at_marks=split_at_marks, pre_split=pre_split,
        joints=opts["joints"],
    )

    def reader(d: Data) -> list[tuple[str, int]]:
        return read_data(d, input_errors, counts=counts and not isinstance(d, Mapping))

    texts = reader(data)
    if isinstance(sp, ContinuationSpelling):
        for t, _ in texts:
            sp.refuse_word_start(t)
    unit_counts, norms, symbol_counts = count_corpus(texts, sp)

    alphabet = choose_alphabet(symbol_counts, sp, alphabet_size, character_coverage)
    kept = set(alphabet)
    byte_rows, specials, base_rows = size_floor(sp, alphabet, vocab_size, byte_fallback, byte_fallback_in_budget)
    outside = base_rows - len(alphabet)
    if seed_size is not None and seed_size < len(alphabet):
        raise SubwordsError(
            f"seed_size={seed_size} is below the alphabet ({len(alphabet)} symbols), which the "
            f"seed always holds; ask for at least {len(alphabet)}"
        )

    # Training runs: each unit cut at its unknown symbols; equal runs add their counts; in
    # order of their symbol sequences.
    run_counts: dict[Unit, int] = {}
    for u, c in unit_counts.items():
        for kind, what in cut(u, kept.__contains__):
            if kind == "run":
                run_counts[what] = run_counts.get(what, 0) + c
    runs = sorted(run_counts.items())
    target = vocab_size - outside
    classes = {s: script_class(s, sp.mark, split_by_number) for s in alphabet} if split_by_script else {}
    rule: Rule = (lambda piece: valid_piece(classes[s] for s in piece)) if split_by_script else None

    table, rounds = learn(
        runs, sp.join, alphabet, target, max_piece_length=max_piece_length,
        seed_size=seed_size, shrink=float(shrink), em_rounds=em_rounds, em=em or "plain", rule=rule,
    )

    learned = [p for p in table.log_probs if table.lengths[p] > 1]
    learned.sort(key=lambda p: (-cast(float, table.log_probs[p]), p))  # learned pieces have one
    rows = [(k, "special") for k in specials]
    rows += [(k, "marker" if k == MARKER else "byte") for k in byte_rows]
    rows += [(s, "alphabet") for s in alphabet]
    rows += [(p, "learned") for p in learned]
    report: dict[str, Any] = {
        "alphabet_size": len(alphabet),
        "seed_size": rounds[0],
        "rounds": rounds,
        "stop": "size" if len(table) == target else "seed",
        "log_likelihood": log_likelihood(runs, table, sp.join),
    }
    if norms is not None:
        report["normalizations"] = norms
    tok = UnigramTokenizer(
        table=table, spelling=sp, rows=rows, byte_fallback=byte_fallback, report={},
        options=opts, reader=reader,
    )

    def pieces_of(symbol: Piece) -> int:
        return len(tok._unknown(symbol)) if symbol not in kept else 1

    before = sum(c * sum(pieces_of(s) for s in u) for u, c in unit_counts.items())
    after = sum(c * len(tok._encode_unit(u)) for u, c in unit_counts.items())
    report["corpus_pieces_before"] = before
    report["corpus_pieces_after"] = after
    tok._report = report
    return tok
