"""Golden tests: every number the Unigram page (``002_…``) computes on a corpus it prints in full,
and the SentencePiece page's (``004_…``) comparison of the two learners at 30 rows, on both
engines.

Expected values come from the pages or from the hand calculations written next to them, never from
running the code. The eighteen sentences are not printed, so their numbers (866 candidates, the
losses 339.32 and on, 745 of 815 at zero, ...) cannot be checked and are not.

"Unigram page" is ``seeds/002_ad436c4a3737638a.txt``; "SentencePiece page" is
``seeds/004_97ea450ab60bffef.txt``. Rounded numbers on the pages are checked to the digits printed.
"""

from __future__ import annotations

import importlib
import math
from collections import Counter
from fractions import Fraction
from functools import lru_cache

import pytest

from subwords.errors import SubwordsError
from subwords.reference import unigram


@pytest.fixture(scope="module", params=["reference", "rust"])
def engine(request):
    return importlib.import_module("subwords.reference" if request.param == "reference" else "subwords")


def train(engine, data, **options):
    return engine.train(data, model="unigram", **options)


def probabilities(tok) -> dict[str, float]:
    return {r: math.exp(lp) for r, lp in zip(tok.rows, tok.log_probs) if lp is not None}


# Unigram page: "low five times, lower twice, newest six times and widest three".
FOUR = {"low": 5, "lower": 2, "newest": 6, "widest": 3}
EVERYTHING = 10**6  # a size no corpus here reaches: no pruning, the table is the seed (+ EM)

# The seed by hand ("end" spelling: low = l o w</w>, so w</w> is one symbol). Substrings of each
# word, counted at every position, times the word's count:
#   low    x5: l o w</w> lo ow</w> low</w>                                          6 x 5 = 30
#   lower  x2: l o w e r</w> lo ow we er</w> low owe wer</w> lowe ower</w> lower</w>  15 x 2 = 30
#   newest x6: n e w e s t</w> ne ew we es st</w> new ewe wes est</w> newe ewes west</w> newes
#              ewest</w> newest</w>                                                 21 x 6 = 126
#   widest x3: w i d e s t</w> wi id de es st</w> wid ide des est</w> wide ides dest</w> wides
#              idest</w> widest</w>                                                 21 x 3 = 63
# Total 249. Distinct: 6 + 12 new in lower + 17 new in newest + 14 new in widest = 49.
SEED_COUNTS = {
    # from low (and lower)
    "l": 7, "o": 7, "w</w>": 5, "lo": 7, "ow</w>": 5, "low</w>": 5,
    # new in lower (w: 2 + 6 + 3; e: 2 + 2x6 + 3; we: 2 + 6)
    "w": 11, "e": 17, "r</w>": 2, "ow": 2, "we": 8, "er</w>": 2, "low": 2, "owe": 2, "wer</w>": 2,
    "lowe": 2, "ower</w>": 2, "lower</w>": 2,
    # new in newest (s, t</w>, es, st</w>, est</w>: 6 + 3)
    "n": 6, "s": 9, "t</w>": 9, "ne": 6, "ew": 6, "es": 9, "st</w>": 9, "new": 6, "ewe": 6,
    "wes": 6, "est</w>": 9, "newe": 6, "ewes": 6, "west</w>": 6, "newes": 6, "ewest</w>": 6,
    "newest</w>": 6,
    # new in widest
    "i": 3, "d": 3, "wi": 3, "id": 3, "de": 3, "wid": 3, "ide": 3, "des": 3, "wide": 3, "ides": 3,
    "dest</w>": 3, "wides": 3, "idest</w>": 3, "widest</w>": 3,
}
ALPHABET = ["d", "e", "i", "l", "n", "o", "r</w>", "s", "t</w>", "w", "w</w>"]


# An independent computation of the seed table and of every spelling, by hand rules only (no
# code of the library): the Unigram page's seed counts every substring of every unit at every
# position it occurs, times the unit's count, and a spelling's probability is the product of
# its pieces' probabilities. Exact fractions, so ties are ties.
def _end_symbols(word: str) -> list[str]:
    return list(word[:-1]) + [word[-1] + "</w>"]


@lru_cache(maxsize=None)
def hand_seed() -> dict[str, Fraction]:
    counts: Counter = Counter()
    for word, n in FOUR.items():
        syms = _end_symbols(word)
        for i in range(len(syms)):
            for j in range(i + 1, len(syms) + 1):
                counts["".join(syms[i:j])] += n
    total = sum(counts.values())
    return {piece: Fraction(c, total) for piece, c in counts.items()}


def hand_spellings(word: str) -> list[tuple[list[str], Fraction]]:
    """Every spelling with its exact probability, in the order of the page's rules: likelier
    first; ties to fewer pieces, then to the longer piece at the earliest position they differ."""
    table, syms = hand_seed(), _end_symbols(word)

    def walk(i: int) -> list[list[str]]:
        if i == len(syms):
            return [[]]
        return [[p] + rest for j in range(i + 1, len(syms) + 1)
                if (p := "".join(syms[i:j])) in table for rest in walk(j)]

    out = [(sp, math.prod((table[p] for p in sp), start=Fraction(1))) for sp in walk(0)]
    return sorted(out, key=lambda e: (-e[1], len(e[0]), [-len(p) for p in e[0]]))


def test_the_hand_seed_is_the_pages():
    # "49 candidates", "e = 17/249", "28 spellings of lowest": the hand computation is the page's.
    assert len(hand_seed()) == 49 and hand_seed()["e"] == Fraction(17, 249)
    assert len(hand_spellings("lowest")) == 28


@pytest.fixture(scope="module")
def seed(engine):
    return train(engine, FOUR, vocab_size=EVERYTHING, em_rounds=0)


# ------------------------------------------------------------------------------------------------
# Part 2: the table


def test_seed_candidates(seed):
    # "On the four words that gives 49 candidates ... The commonest is e, which occurs 17 times
    # and gets probability 0.068. The pieces es, est with its mark, s, st with its mark and t with
    # its mark all occur 9 times and all get 0.036."
    assert len(SEED_COUNTS) == 49 and sum(SEED_COUNTS.values()) == 249
    assert seed.report["seed_size"] == 49
    assert seed.report["rounds"] == [49]
    p = probabilities(seed)
    assert set(p) == set(SEED_COUNTS)
    for piece, count in SEED_COUNTS.items():
        assert p[piece] == pytest.approx(count / 249, rel=1e-12), piece
    assert max(p, key=p.get) == "e" and round(p["e"], 3) == 0.068
    nine = sorted(k for k, c in SEED_COUNTS.items() if c == 9)
    assert nine == ["es", "est</w>", "s", "st</w>", "t</w>"]
    assert all(round(p[k], 3) == 0.036 for k in nine)
    # "candidate count = 6 + 3 = 9 / coverage score = 9 × 3 = 27": est with its mark occurs once
    # in newest (x6) and once in widest (x3), and spans 3 symbols (e s t</w>).
    assert SEED_COUNTS["est</w>"] == 6 + 3
    (span,) = [j - i for i, j, piece, _ in seed.lattice("lowest") if piece == "est</w>"]
    assert SEED_COUNTS["est</w>"] * span == 27


def test_seed_rows(seed):
    # Row order (docs/API.md): [UNK], the alphabet in code-point order, then the other pieces by
    # probability descending, then text. By hand from SEED_COUNTS: 9s (es, est</w>, st</w>),
    # 8 (we), 7 (lo), 6s (ew, ewe, ewes, ewest</w>, ne, new, newe, newes, newest</w>, wes,
    # west</w>), 5s (low</w>, ow</w>), 3s (de, des, dest</w>, id, ide, ides, idest</w>, wi, wid,
    # wide, wides, widest</w>), 2s (er</w>, low, lowe, lower</w>, ow, owe, ower</w>, wer</w>).
    assert seed.rows[:12] == ["[UNK]"] + ALPHABET
    assert seed.kinds == ["special"] + ["alphabet"] * 11 + ["learned"] * 38
    assert seed.rows[12:] == [
        "es", "est</w>", "st</w>", "we", "lo",
        "ew", "ewe", "ewes", "ewest</w>", "ne", "new", "newe", "newes", "newest</w>", "wes",
        "west</w>",
        "low</w>", "ow</w>",
        "de", "des", "dest</w>", "id", "ide", "ides", "idest</w>", "wi", "wid", "wide", "wides",
        "widest</w>",
        "er</w>", "low", "lowe", "lower</w>", "ow", "owe", "ower</w>", "wer</w>",
    ]
    assert seed.log_probs[0] is None
    assert all(lp is not None and lp < 0 for lp in seed.log_probs[1:])


# ------------------------------------------------------------------------------------------------
# Part 2: a word has many spellings


def shares(tok, unit):
    return [(" ".join(pieces), share) for pieces, share in tok.spellings(unit)]


def test_lowest_has_28_spellings(seed):
    # "Take lowest ... ask the starting table for every spelling of it. There are 28. The likeliest
    # is lo followed by west with the mark, which takes 46.81% ... Next come low with est, and
    # lowe with st, at 20.06% each, and those two are tied exactly ... The row worth looking at is
    # the fourth ... lo, then w, then est with its mark ... holding 3.10% of the word."
    # By hand, in counts over 249 per piece: lo west</w> = 7 x 6 = 42; low est</w> = 2 x 9 = 18 =
    # lowe st</w> = 2 x 9; lo w est</w> = 7 x 11 x 9 / 249. So lo west : low est = 42 : 18, and
    # lo w est : lo west = 693 / (249 x 42) = 0.0663 (46.81% x 0.0663 = 3.10%).
    got = shares(seed, "lowest")
    assert len(got) == 28
    assert got[0][0] == "lo west</w>" and f"{100 * got[0][1]:.2f}" == "46.81"
    # The exact tie: equal doubles, ordered by the tie rule (same number of pieces; the longer
    # piece at the first place they differ, lowe over low).
    assert [s for s, _ in got[1:3]] == ["lowe st</w>", "low est</w>"]
    assert got[1][1] == got[2][1] and f"{100 * got[1][1]:.2f}" == "20.06"
    assert got[3][0] == "lo w est</w>" and f"{100 * got[3][1]:.2f}" == "3.10"
    assert got[0][1] / got[2][1] == pytest.approx(42 / 18, rel=1e-12)
    assert got[3][1] / got[0][1] == pytest.approx(693 / (249 * 42), rel=1e-12)
    # "the shares over a word's spellings add to one"; every share below the first is smaller.
    assert sum(s for _, s in got) == pytest.approx(1.0, rel=1e-12)
    assert all(a[1] >= b[1] for a, b in zip(got, got[1:]))
    # "one of them is fifteen times as probable" (42 x 249 / 693 = 15.09)
    assert int(got[0][1] / got[3][1]) == 15


def test_merging_cut_of_lowest_is_fourth(engine, seed):
    # "Merging the same four words to a vocabulary of 22 rows cuts lowest as lo, then w, then est
    # with its mark, and that cut is here, ranked fourth"
    bpe = engine.train(FOUR, vocab_size=22)
    cut = " ".join(bpe.encode_pieces("lowest"))
    assert cut == "lo w est</w>"
    assert [s for s, _ in shares(seed, "lowest")].index(cut) == 3


def test_lower_and_newest(engine, seed):
    # "The starting table gives lower spelled whole 92.90% of the word, and the merged vocabulary's
    # four-piece cut ranks twelfth of sixteen ... newest, which merging does learn whole, and the
    # two agree at 85.45%".
    bpe = engine.train(FOUR, vocab_size=22)
    lower = shares(seed, "lower")
    assert len(lower) == 16
    assert lower[0][0] == "lower</w>" and f"{100 * lower[0][1]:.2f}" == "92.90"
    cut = " ".join(bpe.encode_pieces("lower"))
    assert cut == "lo w e r</w>"
    assert [s for s, _ in lower].index(cut) == 11  # twelfth
    newest = shares(seed, "newest")
    assert bpe.encode_pieces("newest") == ["newest</w>"]
    assert newest[0][0] == "newest</w>" and f"{100 * newest[0][1]:.2f}" == "85.45"


def test_total_is_the_sum_over_spellings(seed):
    # "P(word) = Σ over spellings s of the word P(s)"; "The total is never below the maximum".
    for word in ("lowest", "lower", "newest", "low"):
        total = seed.unit_probability(word)
        best_pieces, best_score = seed.nbest(word, 1)[0]
        assert total > math.exp(best_score)
        share_of_best = seed.spellings(word)[0][1]
        assert math.exp(best_score) / total == pytest.approx(share_of_best, rel=1e-12)
        assert total == pytest.approx(sum(math.exp(s) for _, s in seed.nbest(word, 100)), rel=1e-12)
    # "... and the two are equal exactly when the word has one spelling only": a one-symbol word
    # (r</w>, 2/249) and a two-symbol one whose only pieces are its symbols (d w</w>: "dw</w>" is
    # no substring of the four words), 3/249 x 5/249.
    assert seed.spellings("r") == [(["r</w>"], 1.0)]
    assert seed.unit_probability("r") == pytest.approx(2 / 249, rel=1e-12)
    assert seed.spellings("dw") == [(["d", "w</w>"], 1.0)]
    assert seed.unit_probability("dw") == pytest.approx(15 / 249**2, rel=1e-12)


# ------------------------------------------------------------------------------------------------
# Part 3: the lattice


def test_lowest_lattice_17_arcs_28_walks(seed):
    # "Seventeen pieces of the starting table span a pair of these positions, and those seventeen
    # steps admit exactly 28 walks."
    # By hand, positions 0..6 around l o w e s t</w>: singles l o w e s t</w> (6); lo ow we es
    # st</w> (5); low owe wes est</w> (4); lowe west</w> (2); no 5- or 6-symbol piece (owest</w>,
    # lowes, lowest</w> are not substrings of the four words). 6 + 5 + 4 + 2 = 17.
    arcs = seed.lattice("lowest")
    assert len(arcs) == 17
    assert [(i, j, p) for i, j, p, _ in arcs] == [
        (0, 1, "l"), (0, 2, "lo"), (0, 3, "low"), (0, 4, "lowe"),
        (1, 2, "o"), (1, 3, "ow"), (1, 4, "owe"),
        (2, 3, "w"), (2, 4, "we"), (2, 5, "wes"), (2, 6, "west</w>"),
        (3, 4, "e"), (3, 5, "es"), (3, 6, "est</w>"),
        (4, 5, "s"), (4, 6, "st</w>"),
        (5, 6, "t</w>"),
    ]
    for _, _, piece, lp in arcs:
        assert lp == pytest.approx(math.log(SEED_COUNTS[piece] / 249), rel=1e-12)
    # Walks by hand: W(6) = 1, W(5) = 1, W(4) = W(5) + W(6) = 2, W(3) = W(4) + W(5) + W(6) = 4,
    # W(2) = W(3) + W(4) + W(5) + W(6) = 8, W(1) = W(2) + W(3) + W(4) = 14,
    # W(0) = W(1) + W(2) + W(3) + W(4) = 28.
    assert len(seed.spellings("lowest")) == 28


def test_viterbi_on_the_seed(seed):
    # "best(i) = max over pieces p starting at i [ log P(p) + best(end of p) ]": on the seed
    # lowest is lo west</w>, score ln(7/249) + ln(6/249) = -7.30 (the first number of section 11).
    assert seed.encode_pieces("lowest") == ["lo", "west</w>"]
    pieces, score = seed.nbest("lowest", 1)[0]
    assert pieces == ["lo", "west</w>"]
    assert score == pytest.approx(math.log(7 / 249) + math.log(6 / 249), rel=1e-12)
    assert f"{score:.2f}" == "-7.30"


def test_viterbi_tie_longer_piece_first(seed):
    # "The second [rule], for a tie that survives the first, is the longer piece at the earliest
    # position where two spellings differ": low est</w> and lowe st</w> tie exactly (2 pieces each,
    # 18/249² each); at position 0 lowe is the longer piece.
    top = seed.nbest("lowest", 3)
    assert [p for p, _ in top] == [["lo", "west</w>"], ["lowe", "st</w>"], ["low", "est</w>"]]
    assert top[1][1] == top[2][1]


def test_nbest_is_the_head_of_the_spellings(seed):
    # n-best is the head of every spelling, ranked by the page's rules: checked against the
    # independent enumeration above (pieces, and scores as natural logs of the exact products).
    for word in ("lowest", "lower", "newest", "widest"):
        every = hand_spellings(word)
        for k in (1, 5, len(every), len(every) + 3):
            got = seed.nbest(word, k)
            assert [p for p, _ in got] == [p for p, _ in every[:k]], (word, k)
            assert [s for _, s in got] == pytest.approx([math.log(q) for _, q in every[:k]], rel=1e-12)
        assert got[0][0] == seed.encode_pieces(word)


def test_fewest_pieces(seed):
    # "give every one of them a cost of one instead of a log probability, and the same recurrence
    # answers ... the fewest pieces this vocabulary can spell the word in" (same tie rules).
    # By hand: lowest has no 1-piece spelling; its 2-piece spellings are lo|west</w>, low|est</w>,
    # lowe|st</w>; the longer first piece is lowe. Viterbi differs: "two common pieces can
    # outscore one rare one".
    assert seed.fewest("lowest") == ["lowe", "st</w>"]
    assert seed.encode_pieces("lowest") == ["lo", "west</w>"]
    assert seed.fewest("lower") == ["lower</w>"]
    assert seed.encode_pieces("lowest newest", segmenter="fewest") == [
        "lowe", "st</w>", "newest</w>"]


# ------------------------------------------------------------------------------------------------
# Part 4: re-estimation


def test_ab_panel(engine):
    # "One word ab, seen once, with the three pieces a, b and ab all at a third. The word can be
    # spelled whole at a third or in two pieces at a ninth, so the word's own probability is four
    # ninths and the one-piece spelling holds three quarters of it. The expected counts are
    # therefore 0.75 for ab and 0.25 each for a and b, adding to 1.25, and the division gives 0.6,
    # 0.2 and 0.2. A second round takes the whole spelling to 0.882."
    # By hand, round two: whole 0.6 vs 0.2 x 0.2 = 0.04, share 0.6 / 0.64 = 0.9375; expected
    # counts 0.9375, 0.0625, 0.0625, sum 1.0625; 0.9375 / 1.0625 = 15/17 = 0.882.
    seed = train(engine, {"ab": 1}, vocab_size=10, em_rounds=0)
    p = probabilities(seed)
    assert p == pytest.approx({"a": 1 / 3, "b</w>": 1 / 3, "ab</w>": 1 / 3}, rel=1e-12)
    assert seed.unit_probability("ab") == pytest.approx(4 / 9, rel=1e-12)
    assert shares(seed, "ab") == [("ab</w>", pytest.approx(0.75, rel=1e-12)),
                                  ("a b</w>", pytest.approx(0.25, rel=1e-12))]
    one = probabilities(train(engine, {"ab": 1}, vocab_size=10, em_rounds=1))
    # expected counts are the new probabilities times their sum 1.25
    assert {k: v * 1.25 for k, v in one.items()} == pytest.approx(
        {"ab</w>": 0.75, "a": 0.25, "b</w>": 0.25}, rel=1e-12)
    assert one == pytest.approx({"ab</w>": 0.6, "a": 0.2, "b</w>": 0.2}, rel=1e-12)
    two = probabilities(train(engine, {"ab": 1}, vocab_size=10, em_rounds=2))
    assert two["ab</w>"] == pytest.approx(15 / 17, rel=1e-12) and round(two["ab</w>"], 3) == 0.882


def test_four_words_em_trajectories(engine):
    # "Low spelled whole goes from 0.020 to 0.265 to 0.312 and then stops, at exactly five
    # sixteenths, which is the share of the corpus that word occupies. Meanwhile lo, which no
    # occurrence needs, goes from 0.028 to 0.011 to 0.000134 and keeps falling. The likeliest
    # spelling of lowest never changes, and its score falls from −7.30 to −9.45 to −18.39 to −36.75
    # to −73.50, roughly doubling every round."
    # By hand: the seed gives low</w> 5/249 = 0.020 and lo 7/249 = 0.028; the limit is 5 of the
    # 16 word occurrences. (No pruning here: the size asked for is above the seed.)
    tables = [train(engine, FOUR, vocab_size=EVERYTHING, em_rounds=k) for k in range(5)]
    low = [probabilities(t)["low</w>"] for t in tables]
    assert [f"{x:.3f}" for x in low[:3]] == ["0.020", "0.265", "0.312"]
    assert low[0] == pytest.approx(5 / 249, rel=1e-12)
    assert low[3] == pytest.approx(5 / 16, abs=1e-6) and low[4] == pytest.approx(5 / 16, abs=1e-12)
    lo = [probabilities(t)["lo"] for t in tables]
    assert [f"{lo[0]:.3f}", f"{lo[1]:.3f}", f"{lo[2]:.6f}"] == ["0.028", "0.011", "0.000134"]
    assert lo[0] == pytest.approx(7 / 249, rel=1e-12)
    assert lo[0] > lo[1] > lo[2] > lo[3] > lo[4]  # "and keeps falling"
    best = [t.nbest("lowest", 1)[0] for t in tables]
    assert all(pieces == ["lo", "west</w>"] for pieces, _ in best)  # "never changes"
    assert [f"{score:.2f}" for _, score in best] == ["-7.30", "-9.45", "-18.39", "-36.75", "-73.50"]


def test_likelihood_never_falls(engine):
    # "Each round raises the corpus's likelihood or leaves it alone". At the limit every word is
    # one piece with its share of the 16 occurrences: Σ count x ln(count / 16).
    ll = [train(engine, FOUR, vocab_size=EVERYTHING, em_rounds=k).report["log_likelihood"]
          for k in range(6)]
    assert all(b >= a - 1e-12 for a, b in zip(ll, ll[1:]))
    limit = sum(c * math.log(c / 16) for c in FOUR.values())
    assert ll[-1] == pytest.approx(limit, abs=1e-6)


# ------------------------------------------------------------------------------------------------
# Part 5: pruning


def test_pruning_losses(engine):
    # "Dropping newest costs 91.26 nats of likelihood, low costs 85.04, widest 45.63 and lower
    # 34.02, and those four are the four words themselves ... On the four words, 34 of the 38
    # pieces the pruning is allowed to touch cost exactly zero."
    # The first size check: the seed after two EM rounds (38 = 49 - 11 single symbols).
    table = train(engine, FOUR, vocab_size=EVERYTHING, em_rounds=2)
    loss = table.losses(FOUR)
    assert len(loss) == 38
    nonzero = {p: f"{v:.2f}" for p, v in loss.items() if v != 0.0}
    assert nonzero == {"newest</w>": "91.26", "low</w>": "85.04", "widest</w>": "45.63",
                       "lower</w>": "34.02"}
    assert sum(1 for v in loss.values() if v == 0.0) == 34


def test_asking_22_keeps_the_first_six_alphabetically(engine):
    # "Ask the four words for 22 tokens and the six pieces kept above the four words themselves are
    # de, des, dest, er, es and est, which are the first six in alphabetical order among 34
    # candidates the objective could not tell apart."
    # By hand: 22 rows = [UNK] + 11 symbols + 10 pieces; the 34 zero-loss pieces sorted by code
    # point begin de, des, dest</w>, er</w>, es, est</w>, ew, ... (d < e; "er</w>" < "es" as r < s).
    zero = sorted(p for p, c in SEED_COUNTS.items() if len(p.replace("</w>", "")) > 1
                  and p not in {"low</w>", "lower</w>", "newest</w>", "widest</w>"})
    assert len(zero) == 34
    assert zero[:6] == ["de", "des", "dest</w>", "er</w>", "es", "est</w>"]
    tok = train(engine, FOUR, vocab_size=22)
    assert tok.vocab_size == 22
    assert tok.rows[:12] == ["[UNK]"] + ALPHABET
    assert sorted(tok.rows[12:]) == sorted(
        ["low</w>", "lower</w>", "newest</w>", "widest</w>"] + zero[:6])
    # 49 -> 36 -> 27 -> max(21, floor(0.75 x 27) = 20) = 21
    assert tok.report["rounds"] == [49, 36, 27, 21]
    # the four words carry the corpus: one piece each
    assert tok.report["corpus_pieces_after"] == 16


def test_rounds_to_the_final_size(engine):
    # "Each round keeps three quarters of what is there, or the size asked for if that is larger ...
    # The four words go 49, 36, 27, 20, 15 in four rounds." By hand: floor(0.75 x 49) = 36,
    # floor(0.75 x 36) = 27, floor(0.75 x 27) = 20, floor(0.75 x 20) = 15 = the 11 symbols + the
    # four words; 15 pieces + [UNK] = 16 rows.
    tok = train(engine, FOUR, vocab_size=16)
    assert tok.report["rounds"] == [49, 36, 27, 20, 15]
    assert tok.report["stop"] == "size"
    assert tok.rows == ["[UNK]"] + ALPHABET + ["newest</w>", "low</w>", "widest</w>", "lower</w>"]
    # rows above the alphabet by probability: the words' shares of the 16 occurrences, 6 > 5 > 3 > 2
    lp = dict(zip(tok.rows, tok.log_probs))
    for word, count in FOUR.items():
        assert math.exp(lp[word + "</w>"]) == pytest.approx(count / 16, abs=1e-6)
    # "single symbols are never a candidate for removal"
    assert tok.kinds[1:12] == ["alphabet"] * 11


def test_refuses_below_the_alphabet(engine):
    # "Asking for fewer rows than the alphabet has is therefore refused rather than approximated."
    # 11 symbols + [UNK] = 12 is the smallest table.
    with pytest.raises(SubwordsError):
        train(engine, FOUR, vocab_size=11)
    tok = train(engine, FOUR, vocab_size=12)
    assert tok.rows == ["[UNK]"] + ALPHABET


def test_round_trip(engine):
    # "Gluing pieces back is mechanical. Concatenate them, then turn every end-of-word mark into a
    # space."
    tok = train(engine, FOUR, vocab_size=22)
    for text in ("lowest newest", "low lower widest", "nest sow"):
        assert tok.decode(tok.encode(text)) == text
    # a word-final letter the corpus never wrote: the stand-in carries no mark (section 14)
    assert tok.encode_pieces("lowz low") == ["l", "o", "w", "[UNK]", "low</w>"]
    assert tok.decode(tok.encode("lowz low")) == "low[UNK]low"


def test_decay_past_the_doubles(engine):
    # Not a page number: the rule docs/API.md adds for "lo ... keeps falling". A piece no spelling
    # needs roughly doubles its log-probability every round; after about a thousand rounds it
    # overflows to -inf. Training, pruning, encoding and the analyses must stay defined (no NaN).
    # Corpus aab 3, ab 1, bba 2, b 1: the single symbol b (inside words only) is needed by no best
    # spelling, and every spelling of bba without its whole piece goes through b.
    table = {"aab": 3, "ab": 1, "bba": 2, "b": 1}
    tok = train(engine, table, vocab_size=8, em_rounds=1100, shrink=0.9)
    lp = dict(zip(tok.rows, tok.log_probs))
    assert lp["b"] == -math.inf
    assert not any(x is not None and math.isnan(x) for x in tok.log_probs)
    assert {"aab</w>", "ab</w>", "bba</w>"} <= set(tok.rows)
    assert tok.encode_pieces("aab ab bba b") == ["aab</w>", "ab</w>", "bba</w>", "b</w>"]
    loss = tok.losses(table)
    assert loss["bba</w>"] == math.inf  # without it, bba has only spellings of probability 0
    assert not any(math.isnan(v) for v in loss.values())
    assert not math.isnan(tok.report["log_likelihood"])
    shares = tok.spellings("bba")
    assert shares[0] == (["bba</w>"], 1.0) and all(s == 0.0 for _, s in shares[1:])
    assert tok.sample("bba", seed=1) == ["bba</w>"]
    assert len(tok.sample("bba", seed=1, alpha=0.0)) >= 1


# ------------------------------------------------------------------------------------------------
# SentencePiece page, section 13: both learners on the ▁-marked four words at 30 rows

# BPE's 27 rows (test_pages_bpe.test_front_four_words, by hand there).
BPE_FRONT = ["[UNK]", "d", "e", "i", "l", "n", "o", "r", "s", "t", "w", "\u2581",
             "es", "est", "lo", "low", "\u2581low", "ew", "ewest", "newest", "\u2581newest",
             "dest", "idest", "widest", "\u2581widest", "er", "\u2581lower"]


def test_bpe_and_unigram_at_30_rows(engine):
    # "Asked for 30 rows on the four words, the merging learner stops at 27 when no pair occurs
    # twice any more, and the shrinking one lands on 30 exactly. They share 23 rows. The seven the
    # shrinking one holds alone are pieces of widest and newest such as id, ide and ewe, and the
    # four the merging one holds alone are lo, low, newest and widest. And yet both spell the
    # unseen word lowest identically, as ▁low followed by est."
    # By hand: 29 pieces = 11 symbols + the four ▁words (the only pieces with a loss) + the first
    # 14 zero-loss pieces by code point (▁ is 9601, after every letter): de des dest er es est ew
    # ewe ewes ewest id ide ides idest. Not in BPE's table: de des ewe ewes id ide ides (7).
    # BPE's lo, low, newest, widest are not among them (4). Shared: 27 - 4 = 23.
    bpe = engine.train(FOUR, spelling="front", vocab_size=30)
    assert bpe.rows == BPE_FRONT
    uni = train(engine, FOUR, spelling="front", vocab_size=30)
    assert uni.vocab_size == 30 and uni.report["stop"] == "size"
    assert len(set(uni.rows) & set(bpe.rows)) == 23
    assert sorted(set(uni.rows) - set(bpe.rows)) == ["de", "des", "ewe", "ewes", "id", "ide", "ides"]
    assert sorted(set(bpe.rows) - set(uni.rows)) == ["lo", "low", "newest", "widest"]
    assert uni.encode_pieces("lowest") == bpe.encode_pieces("lowest") == ["\u2581low", "est"]
    # The front seed by hand: ▁low, ▁lower, ▁newest, ▁widest hold 10, 21, 28, 28 substrings;
    # distinct, each adding what the ones before lack: 10; + 11 (every substring of ▁low is in
    # ▁lower); + 27 - 4 (▁newest's 27 distinct less ▁, e, w, we) = 23; + 28 - 8 (less ▁, w, e, s,
    # t, es, st, est) = 20; 10 + 11 + 23 + 20 = 64. Rounds: 48 = floor(0.75 x 64), 36, then
    # max(29, 27) = 29.
    assert uni.report["seed_size"] == 64
    assert uni.report["rounds"] == [64, 48, 36, 29]
    assert uni.decode(uni.encode("lowest newest")) == "lowest newest"


# ------------------------------------------------------------------------------------------------
# Sampling (Part 2: "drawing a spelling in proportion to its share is exactly how a model gets to
# see several cuts of one word")

# A generous chi-square bound: df + 8 sqrt(2 df) lies above the p = 1e-6 critical value for the
# degrees of freedom here (about 14 to 27), so a correct sampler fails it about never, and a
# sampler drawing the wrong distribution (6000 draws) fails it by far.


def _chi_square(observed: dict, expected: dict) -> tuple[float, int]:
    # Pool the bins whose expected count is below 5 into one.
    big = [k for k in expected if expected[k] >= 5]
    stat = sum((observed.get(k, 0) - expected[k]) ** 2 / expected[k] for k in big)
    small_e = sum(v for k, v in expected.items() if k not in big)
    small_o = sum(v for k, v in observed.items() if k not in big)
    bins = len(big)
    if small_e > 0:
        stat += (small_o - small_e) ** 2 / small_e
        bins += 1
    return stat, bins - 1


@pytest.mark.parametrize("alpha", [1.0, 0.5, 0.0])
def test_sampling_matches_the_shares(seed, alpha):
    draws = 6000
    # The expected shares come from the hand enumeration, not from the model's own spellings.
    weights = {" ".join(p): float(q) ** alpha for p, q in hand_spellings("lowest")}
    norm = sum(weights.values())
    expected = {k: draws * w / norm for k, w in weights.items()}
    pieces = seed.encode_pieces(" ".join(["lowest"] * draws), segmenter="sample", alpha=alpha,
                                seed=2024)
    # each unit is a walk from l to t</w>; cut the stream back into units
    observed: dict = {}
    current: list = []
    for p in pieces:
        current.append(p)
        if p.endswith("</w>"):
            key = " ".join(current)
            observed[key] = observed.get(key, 0) + 1
            current = []
    assert sum(observed.values()) == draws and set(observed) <= set(expected)
    stat, df = _chi_square(observed, expected)
    assert stat < df + 8 * math.sqrt(2 * df), (stat, df)


def test_sampling_is_reproducible(seed):
    text = " ".join(["lowest", "lower", "newest"] * 20)
    a = seed.encode(text, segmenter="sample", seed=7)
    assert seed.encode(text, segmenter="sample", seed=7) == a
    assert seed.encode(text, segmenter="sample", seed=8) != a
    assert seed.decode(a) == text
    assert seed.sample("lowest", seed=7) == seed.sample("lowest", seed=7)
    with pytest.raises(SubwordsError):
        seed.encode(text, segmenter="sample")  # no seed: refused
    with pytest.raises(SubwordsError):
        seed.encode(text, seed=7)  # a seed without sampling means nothing


def test_sampling_among_the_nbest(seed):
    # nbest=k: draws only among the k likeliest spellings, in proportion to their shares.
    top = {" ".join(p) for p, _ in seed.nbest("lowest", 3)}
    got = {" ".join(seed.sample("lowest", seed=s, nbest=3)) for s in range(200)}
    assert got == top
    assert seed.sample("lowest", seed=3, nbest=1) == ["lo", "west</w>"]


# ------------------------------------------------------------------------------------------------
# The reference's recurrences on hand-made lattices (exact doubles, so ties are exact)


def test_reference_tie_rules_on_exact_lattices():
    # log-probs that are exact in binary: a = b = -1, ab = -2, so "a b" and "ab" tie at -2.
    # "The first rule is fewer pieces": ab.
    arcs = [(0, 1, "a", -1.0), (0, 2, "ab", -2.0), (1, 2, "b", -1.0)]
    assert unigram.viterbi(arcs, 2) == (-2.0, ("ab",))
    assert unigram.kbest(arcs, 2, 2) == [(-2.0, ("ab",)), (-2.0, ("a", "b"))]
    # Three symbols, x y z: "xy z" and "x yz" tie (-3 each, two pieces): the longer piece at the
    # earliest difference is xy (position 0).
    arcs = [(0, 1, "x", -2.0), (0, 2, "xy", -2.0), (1, 2, "y", -4.0), (1, 3, "yz", -1.0),
            (2, 3, "z", -1.0)]
    assert unigram.viterbi(arcs, 3) == (-3.0, ("xy", "z"))
    assert unigram.fewest(arcs, 3) == ("xy", "z")
    # Probabilities do not enter fewest: a likelier 3-piece spelling loses to a 2-piece one.
    arcs = [(0, 1, "x", -0.1), (1, 2, "y", -0.1), (2, 3, "z", -0.1), (0, 2, "xy", -9.0),
            (1, 3, "yz", -8.0)]
    assert unigram.viterbi(arcs, 3)[1] == ("x", "y", "z")
    assert unigram.fewest(arcs, 3) == ("xy", "z")


def test_splitmix64_reference_values():
    # SplitMix64 (Steele, Lea, Flood 2014), seed 0: the published first outputs.
    g = unigram.SplitMix64(0)
    assert [g.next_u64() for _ in range(3)] == [
        0xE220A8397B1DCDAF, 0x6E789E6AA1B965F4, 0x06C45D188009454F]
