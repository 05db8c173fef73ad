"""The pages' measurements through ``subwords.measure``: each loop tests/pages writes by hand is
one call here. Every expected number is a page sentence (quoted) or the hand calculation in
tests/pages next to it (cited by test name); none is computed by the code under test.

"BPE page" is ``seeds/000_d9e1551f40487b74.txt``, "Unigram page" ``002_…``, "WordPiece page"
``003_…``, "SentencePiece page" ``004_…``.
"""

from __future__ import annotations

import json
import math

import pytest

from subwords import measure

# BPE page: "The word low occurs five times, lower twice, newest six times and widest three."
FOUR = {"low": 5, "lower": 2, "newest": 6, "widest": 3}
# 79 minus each merge's count, by hand (tests/pages/test_pages_bpe.py, FOUR_LENGTHS)
FOUR_LENGTHS = [79, 70, 61, 54, 48, 42, 36, 31, 28, 25, 22]
RTS = {"report": 2, "taste": 8, "state": 10}
UNDO = {"undo": 10, "untie": 10, "redo": 10, "retie": 10}
JOINTS = {"undo": ["un", "do"], "untie": ["un", "tie"], "redo": ["re", "do"], "retie": ["re", "tie"]}


def test_four_word_walk_as_a_curve_from_12_to_22_rows():
    # BPE page: "the corpus is 79 pieces long" with the alphabet and [UNK] (12 rows); ten merges
    # later, at 22 rows, 22 pieces. One training for all eleven sizes.
    points = measure.curve(FOUR, range(12, 23))
    assert [p.size for p in points] == list(range(12, 23))
    assert [p.rows for p in points] == list(range(12, 23))
    assert [p.corpus_pieces for p in points] == FOUR_LENGTHS
    assert [p.merges for p in points] == list(range(11))


TEXTS = ["the lowest of the new and the newest", "widest roads are the lowest", "a café, a naïve façade",
         "lower newer wider", "the the the low low"]


@pytest.mark.parametrize("options, sizes", [
    ({}, [30, 35, 45, 60]),
    ({"model": "wordpiece"}, [70, 80, 100]),
    ({"spelling": "front"}, [30, 40, 60]),
    ({"spelling": "bytes", "pre_split": "gpt2"}, [256, 260, 270, 300]),
    ({"spelling": "front", "byte_fallback": True}, [30, 40]),
    ({"spelling": "front", "byte_fallback": True, "byte_fallback_in_budget": True}, [300, 310]),
    ({"superword_at": 35}, [36, 40, 50]),
])
def test_curve_points_are_the_trainings_at_each_size(options, sizes):
    # The prefix argument (measure/curve.py): the model at each size is the one a training at
    # that size gives, rows and merges alike, and so are its corpus length and its encodings --
    # checked against separate trainings, on several learners and spellings.
    import subwords

    got = list(measure.models_at(TEXTS, sizes, min_count=1, **options))
    assert [s for s, _, _ in got] == sizes
    for size, tok, point in got:
        alone = subwords.train(TEXTS, vocab_size=size, min_count=1, **options)
        assert tok.rows == alone.rows and tok.merges == alone.merges, size
        assert point.rows == alone.vocab_size
        assert point.corpus_pieces == alone.report["corpus_pieces_after"], size
        for t in TEXTS + ["an unseen wider text, über"]:
            assert tok.encode(t) == alone.encode(t)


def test_cuts_of_one_model_in_any_order_share_its_parse_without_changing_it():
    # The cuts of one curve share one parse of the full model (measure/curve.py, _prefix_model):
    # asked largest first, then smaller, then larger again, each cut is still its own. Hand
    # calculation on the four words (end marks): lowest is l o w e s t</w>, 6 pieces, at 12 rows;
    # merge 1 e+s (9) makes it l o w es t</w>, 5; merge 2 es+t</w> (9), l o w est</w>, 4; merge 3
    # l+o (7: low 5 + lower 2, tied with o+w and taken by the tie rule), lo w est</w>, 3 -- the
    # page's "lo w est</w>" for lowest, which no later merge changes (lo+w</w> and lo+w never
    # meet w followed by est</w>).
    got = {size: tok.encode_pieces("lowest") for size, tok, _ in measure.models_at(FOUR, [15, 12, 14, 13, 22, 15])}
    assert got == {12: ["l", "o", "w", "e", "s", "t</w>"], 13: ["l", "o", "w", "es", "t</w>"],
                   14: ["l", "o", "w", "est</w>"], 15: ["lo", "w", "est</w>"], 22: ["lo", "w", "est</w>"]}


def test_trace_steps_and_the_two_tie_points():
    # BPE page: "e + s: 6 + 3 = 9 / s + marked t: 6 + 3 = 9" (the first tie) and "The second tie,
    # three pairs at 6" -- four merges later, (e,w), (n,e), (w,est</w>) by hand
    # (test_second_tie_three_branches_all_22_one_cuts_lowest_in_two).
    t = measure.trace(FOUR, vocab_size=22)
    assert t.corpus_lengths() == FOUR_LENGTHS
    assert [s.count for s in t.steps] == [9, 9, 7, 6, 6, 6, 5, 3, 3, 3]
    assert t.steps[0].ties == [("e", "s"), ("s", "t</w>")]
    assert t.steps[3].ties == [("e", "w"), ("n", "e"), ("w", "est</w>")]
    assert [s.rows for s in t.steps] == list(range(13, 23))
    # tie points by hand (the FOUR_MERGES comments): steps 1, 4, 5, 8, 9
    assert [s.step for s in t.tie_points()] == [1, 4, 5, 8, 9]
    json.dumps(t.to_dict())


def test_both_first_tie_branches_end_at_22_pieces_sharing_9_of_10_rows():
    # BPE page: "Taking either branch and finishing the fit leaves the corpus at 22 pieces, and
    # nine of the ten rows are identical; the branches differ in one row, es on one side against st
    # with its marker on the other, and the word lowest comes out as the same three pieces".
    first, other = measure.tie_branches(FOUR, 1, vocab_size=22, word="lowest")
    assert (first.choice, other.choice) == (("e", "s"), ("s", "t</w>"))
    assert first.corpus_pieces == other.corpus_pieces == 22
    assert first.rows_learned == other.rows_learned == 10
    assert other.shared_learned == 9
    assert (other.only_here, other.only_first) == (["st</w>"], ["es"])
    assert first.cut == other.cut == ["lo", "w", "est</w>"]


def test_second_tie_three_branches_all_22_one_cuts_lowest_in_two():
    # BPE page: "all three branches again leave the corpus at 22 pieces and one of them cuts
    # lowest as two pieces rather than three."
    branches = measure.tie_branches(FOUR, 4, vocab_size=22, word="lowest")
    assert [b.choice for b in branches] == [("e", "w"), ("n", "e"), ("w", "est</w>")]
    assert [b.corpus_pieces for b in branches] == [22, 22, 22]
    assert [len(b.cut) for b in branches] == [3, 3, 2]


def test_report_taste_state_102_84_then_74_against_66():
    # BPE page: "102 pieces spelled in characters ... one merge leaves the corpus at 84 ... the
    # branch beginning with t followed by a is two merges from a corpus of 66 while the branch
    # beginning with s followed by t cannot do better than 74"; "Eight pieces ... held steady out
    # to four merges" (greedy 102, 84, 74, 64, 54 by hand in test_report_taste_state_gap_...).
    t = measure.trace(RTS, vocab_size=14)
    assert t.corpus_pieces_before == 102
    assert t.steps[0].ties == [("s", "t"), ("t", "a"), ("t", "e</w>")]  # "Three pairs tie ... at 18"
    gaps = measure.greedy_vs_optimal(RTS, 4)
    assert [(g.greedy, g.optimal, g.gap) for g in gaps] == [(84, 84, 0), (74, 66, 8), (64, 56, 8), (54, 46, 8)]
    assert gaps[1].optimal_merges == [[("t", "a"), ("t", "e</w>")], [("t", "e</w>"), ("t", "a")]]
    assert gaps[1].greedy_merges == [("s", "t"), ("a", "t")]


def test_undo_19_rows_and_40_pieces_against_15_rows_and_80():
    # BPE page: "The unconstrained one learns nine merges, ends at 19 rows, and reads the forty
    # words of the corpus as 40 pieces ... The constrained one ... stops, at 15 rows ... as 80
    # pieces, two per word."
    (p,) = measure.matched(UNDO, [30], "joints", joints=JOINTS)
    # side a: with joints; side b: none
    assert (p.a.rows, p.a.corpus_pieces) == (15, 80)
    assert (p.b.rows, p.b.corpus_pieces) == (19, 40)
    # "learns the same first five merges": the constrained table is inside the other
    # (by hand: 10 rows + un, re, do</w>, ie</w>, tie</w>; the other adds four whole words)
    assert p.shared == 15 and p.only_a == 0 and p.only_b == 4


def test_front_four_words_95_to_16_over_15_merges_and_27_rows_under_each_mark_18_shared():
    # SentencePiece page: "the sixteen word occurrences come to 95 pieces in all ... Fifteen
    # merges later every word is a single piece and the corpus is 16 pieces"; "Both tables hold
    # 27 rows and 18 of them agree once the mark is written the same way".
    t = measure.trace(FOUR, spelling="front", vocab_size=30)
    assert t.corpus_pieces_before == 95
    assert len(t.steps) == 15 and t.steps[-1].corpus_pieces == 16
    (p,) = measure.matched(FOUR, [30], "marks")
    assert (p.a.rows, p.b.rows, p.shared) == (27, 27, 18)
    assert (p.a.corpus_pieces, p.b.corpus_pieces) == (16, 16)


def test_front_mark_among_the_tied_eleven_times_taken_three():
    # SentencePiece page: "Across the whole run of fifteen merges a pair beginning with the mark was
    # among the tied candidates eleven times, and it was taken three times, each of those being a
    # step where it was the only candidate left at that count."
    t = measure.trace(FOUR, spelling="front", vocab_size=30)
    among = [s for s in t.steps if any(l == "\u2581" for l, _ in s.ties)]
    assert len(among) == 11
    taken = [s for s in among if s.left == "\u2581"]
    assert [s.step for s in taken] == [5, 9, 13]
    assert all(s.tie_count == 1 for s in taken)


@pytest.mark.parametrize("merges", range(1, 12))
def test_wordpiece_score_run_longer_than_count_run_at_every_budget(merges):
    # WordPiece page: "The score-driven line is above the count-driven one at every budget".
    # Lengths by hand: tests/pages/test_pages_wordpiece.py SCORE_LENGTHS / COUNT_LENGTHS.
    score = [79, 76, 73, 66, 57, 50, 48, 46, 37, 31, 25, 19, 16]
    count = [79, 70, 61, 54, 47, 41, 35, 29, 26, 23, 20, 18, 16]
    (p,) = measure.matched(FOUR, [12 + merges], "count-score")
    assert p.a.merges == p.b.merges == merges
    assert (p.a.corpus_pieces, p.b.corpus_pieces) == (count[merges], score[merges])
    assert p.b.corpus_pieces > p.a.corpus_pieces


def test_wordpiece_curves_in_one_call():
    # the same numbers as one matched curve over the eleven budgets
    points = measure.matched(FOUR, range(13, 24), "count-score")
    assert [p.a.corpus_pieces for p in points] == [70, 61, 54, 47, 41, 35, 29, 26, 23, 20, 18]
    assert [p.b.corpus_pieces for p in points] == [76, 73, 66, 57, 50, 48, 46, 37, 31, 25, 19]


def test_unigram_rounds_and_34_of_38_losses_exactly_zero():
    # Unigram page: "The four words go 49, 36, 27, 20, 15 in four rounds"; "On the four words, 34
    # of the 38 pieces the pruning is allowed to touch cost exactly zero"; "Dropping newest costs
    # 91.26 nats of likelihood, low costs 85.04, widest 45.63 and lower 34.02".
    t = measure.trace(FOUR, model="unigram", vocab_size=16)
    assert t.sizes == [49, 36, 27, 20, 15]
    first = t.rounds[0]
    assert (first.candidates, first.zero_losses) == (38, 34)
    assert {p: f"{v:.2f}" for p, v in first.losses if v != 0} == {
        "newest</w>": "91.26", "low</w>": "85.04", "widest</w>": "45.63", "lower</w>": "34.02"}
    # each round removes what the next size says: 49 - 36 = 13, 9, 7, 5
    assert [len(r.pruned) for r in t.rounds] == [13, 9, 7, 5, 0]
    # "Each round raises the corpus's likelihood or leaves it alone"
    ll = [r.log_likelihood for r in t.rounds]
    assert all(b >= a - 1e-12 for a, b in zip(ll, ll[1:]))
    # at the end every word is one piece with its share of the 16 occurrences (by hand)
    assert ll[-1] == pytest.approx(sum(c * math.log(c / 16) for c in FOUR.values()), abs=1e-6)


def test_unigram_em_trajectories():
    # Unigram page: "Low spelled whole goes from 0.020 to 0.265 to 0.312 ... Meanwhile lo ... goes
    # from 0.028 to 0.011 to 0.000134" (no pruning: a size above the seed).
    t = measure.trace(FOUR, model="unigram", vocab_size=10**6, em_steps=True, em_rounds=2)
    low = [math.exp(e.log_probs["low</w>"]) for e in t.em]
    lo = [math.exp(e.log_probs["lo"]) for e in t.em]
    assert [f"{x:.3f}" for x in low] == ["0.020", "0.265", "0.312"]
    assert [f"{lo[0]:.3f}", f"{lo[1]:.3f}", f"{lo[2]:.6f}"] == ["0.028", "0.011", "0.000134"]


def test_bpe_and_unigram_at_30_rows_share_23():
    # SentencePiece page: "Asked for 30 rows on the four words, the merging learner stops at 27 ...
    # and the shrinking one lands on 30 exactly. They share 23 rows. The seven the shrinking one
    # holds alone are pieces of widest and newest such as id, ide and ewe, and the four the
    # merging one holds alone are lo, low, newest and widest."
    (p,) = measure.matched(FOUR, [30], "bpe-unigram", spelling="front")
    assert (p.a.rows, p.b.rows, p.shared) == (27, 30, 23)
    assert p.only_a_rows == ["lo", "low", "newest", "widest"]
    assert p.only_b_rows == ["de", "des", "ewe", "ewes", "id", "ide", "ides"]
    assert {"id", "ide", "ewe"} <= set(p.only_b_rows)


def test_two_stages_four_words():
    # BPE page: "The second stage learned three merges" (25 rows, stage one at 22); the stream
    # after is 15 pieces by hand (test_two_stage_four_words).
    (p,) = measure.matched(FOUR, [25], "stages", superword_at=22)
    assert (p.a.rows, p.b.rows) == (25, 25)
    assert p.b.corpus_pieces == 15
    # By hand, one stage past the 22-row table: units low</w> x5, (lo w e r</w>) x2, newest</w>,
    # widest</w>; pairs (e,r</w>), (lo,w), (w,e) at 2, "e" first -> er</w>; then (lo,w) -> low;
    # then low + er</w> -> lower</w>: 22 - 2 - 2 - 2 = 16 pieces. Stage two's rows are
    # newest</w>newest</w>, low</w>low</w>, er</w> (test_two_stage_four_words): er</w> is shared.
    assert p.a.corpus_pieces == 16
    assert (p.shared, p.only_a_rows, p.only_b_rows) == (23, ["low", "lower</w>"], ["low</w>low</w>", "newest</w>newest</w>"])
