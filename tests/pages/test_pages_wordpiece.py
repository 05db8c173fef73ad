"""Golden tests: every number the WordPiece page (``seeds/003_…``, "the page" below) computes on a
corpus it prints in full -- the four words low/lower/newest/widest -- on both engines.

Expected values come from the page or from the hand calculations written next to them, never
from running the code. The page's eighteen-sentence corpus is not printed, so its numbers (87
candidate pairs, h+e at 32, o+f, 648 -> 504/614 pieces, 84 and 107 merges, the vocabulary-130
table, 1.91/2.38/4.14 pieces per word, Alvarez in six pieces, 35 characters of which 13 never
open a word and 18 never end one) cannot be checked; where the page states a *property* of that
corpus (which letters open or end words), a small corpus with that property is built here and
the property is asserted.

The four words are spelled ``continuation`` (the page: "low is l, then ##o, then ##w"):

    low    ×5   l ##o ##w                      3 symbols × 5 = 15
    lower  ×2   l ##o ##w ##e ##r              5 symbols × 2 = 10
    newest ×6   n ##e ##w ##e ##s ##t          6 symbols × 6 = 36
    widest ×3   w ##i ##d ##e ##s ##t          6 symbols × 3 = 18     79 symbols

Symbol counts (everywhere, page: "how often each half occurs anywhere"):
    l 7, ##o 7, ##w 5+2+6 = 13, ##e 2+12+3 = 17, ##r 2, n 6, ##s 9, ##t 9, w 3, ##i 3, ##d 3.
The 11 pairs, count, score = count / (count(a) count(b)):
    l ##o     7   7/(7·7)   = 1/7        ##e ##s   9   9/(17·9)  = 1/17
    ##o ##w   7   7/(7·13)  = 1/13       ##s ##t   9   9/(9·9)   = 1/9
    ##w ##e   8   8/(13·17) = 8/221      w ##i     3   3/(3·3)   = 1/3
    ##e ##r   2   2/(17·2)  = 1/17       ##i ##d   3   3/(3·3)   = 1/3
    n ##e     6   6/(6·17)  = 1/17       ##d ##e   3   3/(3·17)  = 1/17
    ##e ##w   6   6/(17·13) = 6/221

The score run by hand (default min_count 2; tie rule of DESIGN §2: the smaller joined text in the
spelling where a word-first piece carries ▁ and a continuation is bare):
     1  ##i ##d   1/3  (ties w ##i at 1/3: "id" < "▁wi")              saves 3 -> 76
     2  w ##id    3/(3·3) = 1/3                                       saves 3 -> 73
     3  l ##o     1/7                                                 saves 7 -> 66
     4  ##s ##t   1/9                                                 saves 9 -> 57
     5  lo ##w    7/(7·13) = 1/13                                     saves 7 -> 50
        now ##w 6, low 7; six pairs tie at 1/17: ##e ##r "er", ##e ##st "est", ##e ##w "ew",
        ##w ##e "we", n ##e "▁ne", wid ##e "▁wide" (and low ##e is 2/(7·17))
     6  ##e ##r   1/17, count 2                                       saves 2 -> 48
     7  low ##er  2/(7·2) = 1/7                                       saves 2 -> 46
        ##e 15: n ##e, ##e ##w, ##w ##e, ##e ##st, wid ##e all 1/15; "est" smallest
     8  ##e ##st  9/(15·9) = 1/15                                     saves 9 -> 37
     9  ##e ##w   6/(6·6) = 1/6 (ties n ##e: "ew" < "▁ne")            saves 6 -> 31
    10  n ##ew    6/(6·6) = 1/6                                       saves 6 -> 25
    11  new ##est 6/(6·9) = 1/9 (ties wid ##est: "▁newest" < "▁widest") saves 6 -> 19
    12  wid ##est 3/(3·3) = 1/3                                       saves 3 -> 16, no pair left

The count run (BPE on the same spelling; ties: smallest (left, right) by code point, '#' = 35
sorts before letters):
     1 ##e ##s 9 -> 70   2 ##es ##t 9 -> 61   3 ##o ##w 7 (before l ##o) -> 54   4 l ##ow 7 -> 47
     5 ##e ##w 6 -> 41   6 ##ew ##est 6 -> 35  7 n ##ewest 6 -> 29   8 ##d ##est 3 -> 26
     9 ##i ##dest 3 -> 23  10 w ##idest 3 -> 20  11 ##e ##r 2 -> 18  12 low ##er 2 -> 16
"""

from __future__ import annotations

import doctest
import importlib
import math
from fractions import Fraction

import pytest

from subwords.analysis import can_divide, greedy_vs_exhaustive, wordpiece_candidates
from subwords.errors import SubwordsError
from subwords.reference import wordpiece
from subwords.reference.spelling import make_spelling


@pytest.fixture(
    scope="module",
    params=[
        "reference",
        "rust",
    ],
)
def engine(request):
    """``subwords.reference`` or ``subwords`` (the Rust engine)."""
    if request.param == "reference":
        return importlib.import_module("subwords.reference")
    return importlib.import_module("subwords")


def wp(engine, data, **options):
    options.setdefault("spelling", "continuation")
    return engine.train(data, model="wordpiece", **options)


def bpe(engine, data, **options):
    return engine.train(data, model="bpe", spelling="continuation", **options)


# The page: "The word low occurs five times, lower twice, newest six times and widest three".
FOUR = {"low": 5, "lower": 2, "newest": 6, "widest": 3}
# The 11 symbols in code-point order ('#' is 35, before every letter).
FOUR_ALPHABET = ["##d", "##e", "##i", "##o", "##r", "##s", "##t", "##w", "l", "n", "w"]
# The hand runs in the module docstring.
SCORE_MERGES = [
    ("##i", "##d"), ("w", "##id"), ("l", "##o"), ("##s", "##t"), ("lo", "##w"), ("##e", "##r"),
    ("low", "##er"), ("##e", "##st"), ("##e", "##w"), ("n", "##ew"), ("new", "##est"),
    ("wid", "##est"),
]
SCORE_LENGTHS = [79, 76, 73, 66, 57, 50, 48, 46, 37, 31, 25, 19, 16]
COUNT_LENGTHS = [79, 70, 61, 54, 47, 41, 35, 29, 26, 23, 20, 18, 16]


# ------------------------------------------------------------------------------------------------
# The four words: symbols, pairs, scores


def test_four_words_symbols_pairs_and_length(engine):
    # The page: "sixteen occurrences in all, spelled in eleven distinct symbols. Eleven pairs of
    # adjacent symbols exist across them"; "the corpus is 79 symbols long".
    tok = wp(engine, FOUR, vocab_size=12)  # 11 symbols + [UNK]: no room for a merge
    assert tok.report["alphabet_size"] == 11
    assert tok.rows == ["[UNK]"] + FOUR_ALPHABET
    assert tok.report["corpus_pieces_before"] == 79
    assert tok.report["merges_learned"] == 0
    assert tok.count_pieces(FOUR) == 79
    pairs = {(r.left, r.right) for r in wordpiece_candidates(FOUR)}
    assert len(pairs) == 11
    assert pairs == {
        ("l", "##o"), ("##o", "##w"), ("##w", "##e"), ("##e", "##r"), ("n", "##e"),
        ("##e", "##w"), ("##e", "##s"), ("##s", "##t"), ("w", "##i"), ("##i", "##d"),
        ("##d", "##e"),
    }


def test_low_is_l_then_o_then_w(engine):
    # The page: "A piece that continues a word is written with two leading hashes and a piece
    # that starts one is written plainly, so low is l, then ##o, then ##w."
    tok = wp(engine, FOUR, vocab_size=12)
    assert tok.encode_pieces("low") == ["l", "##o", "##w"]
    assert tok.decode(tok.encode("low lower")) == "low lower"


def test_scores_of_e_s_and_i_d():
    # The page: "score(e, s) = 9 / (17 × 9) = 1/17 ≈ 0.0588 / score(i, d) = 3 / (3 × 3) = 1/3".
    rows = {(r.left, r.right): r for r in wordpiece_candidates(FOUR)}
    es, id_ = rows[("##e", "##s")], rows[("##i", "##d")]
    assert es.count == 9 and es.score == Fraction(9, 17 * 9) == Fraction(1, 17)
    assert id_.count == 3 and id_.score == Fraction(3, 3 * 3) == Fraction(1, 3)
    units = wordpiece.spell(FOUR)
    counts = wordpiece.symbol_counts(units)
    # "e and s, which occur seventeen and nine times and are adjacent nine of those times";
    # "i, d and the word-initial w each occur three times"
    assert (counts["##e"], counts["##s"]) == (17, 9)
    assert (counts["##i"], counts["##d"], counts["w"]) == (3, 3, 3)
    # The whole table, by hand (module docstring).
    assert {p: r.score for p, r in rows.items()} == {
        ("l", "##o"): Fraction(1, 7), ("##o", "##w"): Fraction(1, 13),
        ("##w", "##e"): Fraction(8, 221), ("##e", "##r"): Fraction(1, 17),
        ("n", "##e"): Fraction(1, 17), ("##e", "##w"): Fraction(6, 221),
        ("##e", "##s"): Fraction(1, 17), ("##s", "##t"): Fraction(1, 9),
        ("w", "##i"): Fraction(1, 3), ("##i", "##d"): Fraction(1, 3),
        ("##d", "##e"): Fraction(1, 17),
    }


def test_count_and_score_swap_ends():
    # The page: "Ordered by the count, e followed by s is at the top and i followed by d is near
    # the bottom. Ordered by the score they swap ends."
    rows = wordpiece_candidates(FOUR)
    by_count = sorted(rows, key=lambda r: -r.count)
    assert by_count[0].count == 9 and ("##e", "##s") in {
        (r.left, r.right) for r in rows if r.count == 9}
    # i,d at 3: seven pairs occur more often (7, 7, 8, 6, 6, 9, 9), only e,r (2) less often.
    assert sum(r.count > 3 for r in rows) == 7
    assert (rows[0].left, rows[0].right) == ("##i", "##d")  # first by score
    # e,s at 1/17: five pairs score higher (1/3, 1/3, 1/7, 1/9, 1/13).
    es = next(r for r in rows if (r.left, r.right) == ("##e", "##s"))
    assert sum(r.score > es.score for r in rows) == 5


def test_perfectly_bound_pairs_score_one_over_their_count():
    # The page: "score = c / (c × c) = 1 / c ... Two symbols bound together nine times score one
    # ninth; two symbols bound together twice score one half." A one-word corpus binds a, ##b.
    for c, expected in ((9, Fraction(1, 9)), (2, Fraction(1, 2))):
        (row,) = wordpiece_candidates({"ab": c})
        assert (row.left, row.right, row.count, row.score) == ("a", "##b", c, expected)
    # and on the four words, ##i ##d is bound 3 times: 1/3 (above).


# ------------------------------------------------------------------------------------------------
# The first merge, the tie, and wi


def test_first_merge_counting_takes_es_score_takes_id(engine):
    # The page: "On the four words the two part at the very first merge, counting taking e
    # followed by s and the score taking i followed by d." (Count: e,s and s,t tie at 9;
    # ("##e", "##s") < ("##s", "##t").)
    assert bpe(engine, FOUR, vocab_size=13).merges == [("##e", "##s")]
    assert bpe(engine, FOUR, vocab_size=13).rows[-1] == "##es"
    assert wp(engine, FOUR, vocab_size=13).merges == [("##i", "##d")]
    assert wp(engine, FOUR, vocab_size=13).rows[-1] == "##id"


def test_tie_goes_to_id_and_wi_is_never_learned(engine):
    # The page: "The mark is at 9601 and i is at 105, so i comes first, and the vocabulary
    # contains ##id and does not contain wi." w,i and i,d both score 1/3 (table above).
    assert (ord("\u2581"), ord("i")) == (9601, 105)
    rows = wordpiece_candidates(FOUR)
    assert [(r.left, r.right, r.score) for r in rows[:2]] == [
        ("##i", "##d", Fraction(1, 3)), ("w", "##i", Fraction(1, 3))]
    for size in range(13, 25):  # every size up to exhaustion (24 rows, hand run)
        tok = wp(engine, FOUR, vocab_size=size)
        assert "##id" in tok.rows
        assert "wi" not in tok.rows
        assert ("w", "##i") not in tok.merges


def test_score_run_by_hand(engine):
    # Module docstring: 12 merges, then no pair is left; 11 + 1 + 12 = 24 rows; corpus 16.
    tok = wp(engine, FOUR, vocab_size=100)
    assert tok.merges == SCORE_MERGES
    assert tok.rows == ["[UNK]"] + FOUR_ALPHABET + [
        "##id", "wid", "lo", "##st", "low", "##er", "lower", "##est", "##ew", "new", "newest",
        "widest"]
    assert tok.kinds == ["special"] + ["alphabet"] * 11 + ["learned"] * 12
    assert tok.report["stop"] == "no_pairs"
    assert tok.report["corpus_pieces_after"] == 16


# ------------------------------------------------------------------------------------------------
# min_count: filter against the winner test


def test_min_count_three_winner_test_stops_after_five(engine):
    # The page: "Set the minimum to three on the four words and measure both. The second
    # reading stops at five merges, on a candidate seen twice, and leaves ##est, ##ew, new,
    # newest and widest unlearned". By hand: merges 1-5 as in the score run (winners seen 3, 3,
    # 7, 9, 7 times); then ##e ##r is first of six pairs at 1/17 ("er" is the smallest joined
    # text) and it is seen twice -> stop, and the stop is reported.
    tok = wp(engine, FOUR, vocab_size=100, min_count=3, min_count_rule="stop")
    assert tok.report["merges_learned"] == 5
    assert tok.merges == SCORE_MERGES[:5]
    assert tok.report["stop"] == "min_count"
    assert tok.report["winner_failed"] == ["##e", "##r", 2]
    for piece in ("##est", "##ew", "new", "newest", "widest"):
        assert piece not in tok.rows
    assert tok.vocab_size == 11 + 1 + 5
    assert tok.report["corpus_pieces_after"] == 50  # 79 - 3 - 3 - 7 - 9 - 7


def test_min_count_three_filtering_learns_all_ten(engine):
    # The page: "Filtering the candidates gets all ten." By hand: merges 1-5 as above; the pairs
    # seen twice (##e ##r, low ##e) are no candidates; ##e ##st "est" wins the 1/17 tie; then
    # (##e 8) ##e ##w 6/(8·6) = 1/8 ties n ##e, "ew" < "▁ne"; n ##ew 1/6; new ##est and wid ##est
    # tie at 1/9, "▁newest" first; wid ##est 1/3. Only pairs seen twice are left: stop.
    tok = wp(engine, FOUR, vocab_size=100, min_count=3)
    assert tok.rows[12:] == ["##id", "wid", "lo", "##st", "low", "##est", "##ew", "new",
                             "newest", "widest"]
    assert tok.report["merges_learned"] == 10
    assert tok.report["stop"] == "min_count"
    assert "winner_failed" not in tok.report
    # 11 symbols + [UNK] + 10 learned = 22 rows (DESIGN §2 size accounting).
    assert tok.vocab_size == 22
    # "each of them comes from a pair occurring three times or more": every merge saves its count.
    lengths = [wp(engine, FOUR, vocab_size=12 + k, min_count=3).report["corpus_pieces_after"]
               for k in range(11)]
    assert lengths == [79, 76, 73, 66, 57, 50, 41, 35, 29, 23, 20]
    assert all(a - b >= 3 for a, b in zip(lengths, lengths[1:]))


def test_min_count_readings_coincide_under_counting(engine):
    # The page: "Under counting the two readings coincide, since the winner always has the
    # largest count." Under the score with min_count 2 they coincide too on the four words,
    # since every pair there is seen at least twice.
    a = wp(engine, FOUR, vocab_size=100)
    b = wp(engine, FOUR, vocab_size=100, min_count_rule="stop")
    assert a.merges == b.merges == SCORE_MERGES
    assert a.report["stop"] == b.report["stop"] == "no_pairs"


# ------------------------------------------------------------------------------------------------
# Total gain


def test_total_gains():
    # The page: "On the four words, where the corpus is 79 symbols long, that total is largest
    # for the pair s followed by t, at 19.55. The pair the score takes, i followed by d, gains
    # 9.81, and the pair counting takes, e followed by s, gains 13.83."
    # By hand: 9·ln(79/9) = 19.550, 3·ln(79/3) = 9.813, 9·ln(79/17) = 13.826.
    rows = {(r.left, r.right): r for r in wordpiece_candidates(FOUR)}
    assert round(rows[("##s", "##t")].gain, 2) == 19.55
    assert round(rows[("##i", "##d")].gain, 2) == 9.81
    assert round(rows[("##e", "##s")].gain, 2) == 13.83
    assert math.isclose(rows[("##s", "##t")].gain, 9 * math.log(79 / 9))
    best = max(rows.values(), key=lambda r: r.gain)
    assert (best.left, best.right) == ("##s", "##t")
    # "the pair that does is ranked fourth by the score (1/3, 1/3, 1/7, 1/9) and joint first by
    # the count (9, with e,s), losing that tie on alphabetical order".
    ranked = wordpiece_candidates(FOUR)
    assert [(r.left, r.right) for r in ranked].index(("##s", "##t")) == 3
    assert rows[("##s", "##t")].count == rows[("##e", "##s")].count == 9
    assert max(r.count for r in ranked) == 9
    assert ("##e", "##s") < ("##s", "##t")  # the count rule's tie order
    # "Section 4 derived the score as the likelihood gain one occurrence of a merge produces":
    # log(N·score) = log p(ab) − log p(a) − log p(b) with p = count / N. For s,t: 9/79 each.
    p = Fraction(9, 79)
    per_occurrence = rows[("##s", "##t")].gain / 9
    assert math.isclose(per_occurrence, math.log(p) - math.log(p) - math.log(p))


def test_tie_rule_second_key():
    # docs/API.md: equal joined text -> the smaller (left, right) in the tie-break spelling.
    # (l, ##ow) and (lo, ##w) both join to "▁low"; "▁l" < "▁lo".
    join = make_spelling("continuation").join
    a = wordpiece.tie_key(("l", "##ow"), join, "##")
    b = wordpiece.tie_key(("lo", "##w"), join, "##")
    assert a == ("\u2581low", "\u2581l", "ow") and b == ("\u2581low", "\u2581lo", "w")
    assert a < b


# ------------------------------------------------------------------------------------------------
# The price of the score


@pytest.mark.parametrize("merges", range(1, 12))
def test_score_run_longer_than_count_run(engine, merges):
    # The page: "The score-driven line is above the count-driven one at every budget on both
    # corpora". Same corpus, same spelling, same number of merges (vocab 12 + merges; no merge
    # is interned on the way), only the choice of pair differs. Lengths by hand (docstring);
    # at 12 merges both reach 16, one piece a word.
    score = wp(engine, FOUR, vocab_size=12 + merges).report
    count = bpe(engine, FOUR, vocab_size=12 + merges).report
    assert score["merges_learned"] == count["merges_learned"] == merges
    assert score["corpus_pieces_after"] == SCORE_LENGTHS[merges]
    assert count["corpus_pieces_after"] == COUNT_LENGTHS[merges]
    assert score["corpus_pieces_after"] > count["corpus_pieces_after"]


def test_both_runs_finish_at_sixteen(engine):
    # By hand (docstring): both take 12 merges to make every word one piece.
    assert wp(engine, FOUR, vocab_size=100).report["corpus_pieces_after"] == 16
    assert bpe(engine, FOUR, vocab_size=100).report["corpus_pieces_after"] == 16
    assert bpe(engine, FOUR, vocab_size=100).report["merges_learned"] == 12


# ------------------------------------------------------------------------------------------------
# Greedy against exhaustive


@pytest.mark.parametrize("size", [12, 17, 22, 100])
def test_greedy_never_disagrees_with_exhaustive_search(engine, size):
    # The page: "The greedy rule therefore refuses nothing that a search would have found. All
    # 1,578 of the later refusals are words containing an l or an n after the first character".
    # By hand: the ten letters d e i l n o r s t w; only l, n, w open a word, and l, n have no
    # continuation form. Strings of length 1-4: 10 + 100 + 1000 + 10000 = 11,110. Refused at the
    # first character: 7 × (1 + 10 + 100 + 1000) = 7,777. Refused later: first letter l, n or w
    # and an l or n among the other L-1 letters: 3 × ((10 - 8) + (100 - 64) + (1000 - 512)) =
    # 3 × 526 = 1,578. Spelled: 3 × (1 + 8 + 64 + 512) = 1,755. This is about the alphabet, so it
    # holds at every size (alphabet only, the winner-test size, the filter size, exhaustion).
    tok = wp(engine, FOUR, vocab_size=size)
    check = greedy_vs_exhaustive(tok, "delnorstwi", 4)
    assert check.strings == 11_110
    assert check.refused_later == 1_578
    assert check.refused_first == 7_777
    assert check.spelled == 1_755
    assert check.disagreements == ()


def test_greedy_can_fail_when_the_alphabet_is_not_complete():
    # The page: "Where a real vocabulary caps its alphabet and drops rare single characters,
    # that guarantee is gone and the greedy failure becomes reachable". Rows a, ab, ##bc and no
    # ##c: the greedy cut takes ab and cannot go on; a + ##bc divides the word.
    join = make_spelling("continuation").join
    pieces = {"a", "ab", "##b", "##bc"}
    symbols = ("a", "##b", "##c")
    assert wordpiece.longest_match(symbols, pieces, join) == (["ab"], 2)
    assert can_divide(symbols, pieces, join)


# ------------------------------------------------------------------------------------------------
# Which end to mark: Alvarez, zebra, you

# The page: "Marking continuations means the first character of a word must have been seen
# starting some word of the corpus, and the rest must have been seen inside one. Marking ends
# means the last character must have been seen ending some word." and "Alvarez, which ends in a z
# and no word of the corpus ends in z ... The word zebra, which begins with a z and no word of
# the corpus begins with z ... The word you defeats both, since no word here starts with y or
# ends with u." The eighteen sentences are not printed, so this corpus is built to have exactly
# those properties: the running sentence's other words (so only Alvarez can fail in it), and
# words putting A at a word's start; l, v, a, r, e, z inside words (z only inside: hazard);
# z, e, b, r inside and a at an end for zebra under `end` (hazard, herb, above, data); y and u
# only inside (Analysis, found).
MARKING = {
    "Dr.": 2, "didn't": 1, "expect": 2, "the": 4, "low-cost": 1, "re-analysis.": 1,
    "Analysis": 1, "hazard": 2, "above": 1, "data": 2, "found": 1, "herb": 1,
}
SENTENCE = "Dr. Alvarez didn't expect the low-cost re-analysis."


def test_marking_corpus_has_the_pages_properties():
    words = list(MARKING)
    assert not any(w.endswith("z") for w in words)
    assert not any(w.startswith("z") for w in words)
    assert not any(w.startswith("y") for w in words)
    assert not any(w.endswith("u") for w in words)
    assert "Alvarez" not in words and "zebra" not in words and "you" not in words


@pytest.mark.parametrize("extra", [0, 5, 20, 1000])
def test_alvarez_zebra_you(engine, extra):
    floor = wp(engine, MARKING, vocab_size=10**6).report["alphabet_size"] + 1
    cont = wp(engine, MARKING, vocab_size=floor + extra)
    floor_end = wp(engine, MARKING, vocab_size=10**6, spelling="end").report["alphabet_size"] + 1
    end = wp(engine, MARKING, vocab_size=floor_end + extra, spelling="end")
    # Alvarez: spelled under continuation (A ##l ##v ##a ##r ##e ##z all rows), refused under end
    # (no z</w>).
    assert "[UNK]" not in cont.encode_pieces("Alvarez")
    assert cont.decode(cont.encode("Alvarez")) == "Alvarez"
    assert end.encode_pieces("Alvarez") == ["[UNK]"]
    # zebra: refused under continuation (no plain z), spelled under end (z e b r inside, a</w>).
    assert cont.encode_pieces("zebra") == ["[UNK]"]
    assert "[UNK]" not in end.encode_pieces("zebra")
    assert end.decode(end.encode("zebra")) == "zebra"
    # you: no plain y, no u</w>: both refuse.
    assert cont.encode_pieces("you") == ["[UNK]"]
    assert end.encode_pieces("you") == ["[UNK]"]


@pytest.mark.parametrize("extra", [0, 5, 20, 1000])
def test_running_sentence_under_both_markings(engine, extra):
    # The page: "At every one of those sizes the continuation-marked fit reads it with nothing
    # unspellable and gives it back exactly, and ... the end-marked fit leaves one piece of it
    # unspellable and never gives the sentence back exactly, because of the z at the end of
    # Alvarez."
    floor = wp(engine, MARKING, vocab_size=10**6).report["alphabet_size"] + 1
    cont = wp(engine, MARKING, vocab_size=floor + extra)
    ids = cont.encode(SENTENCE)
    assert "[UNK]" not in cont.encode_pieces(SENTENCE)
    assert cont.decode(ids) == SENTENCE
    floor_end = wp(engine, MARKING, vocab_size=10**6, spelling="end").report["alphabet_size"] + 1
    end = wp(engine, MARKING, vocab_size=floor_end + extra, spelling="end")
    assert end.encode_pieces(SENTENCE).count("[UNK]") == 1
    assert end.decode(end.encode(SENTENCE)) != SENTENCE


@pytest.mark.parametrize("extra", [0, 5, 20, 1000])
def test_one_unmarked_piece_per_word_and_it_is_first(engine, extra):
    # The page: "Exactly one piece per word carries no mark, and it is always the first".
    floor = wp(engine, MARKING, vocab_size=10**6).report["alphabet_size"] + 1
    tok = wp(engine, MARKING, vocab_size=floor + extra)
    for word in SENTENCE.split():
        pieces = tok.encode_pieces(word)
        assert not pieces[0].startswith("##")
        assert all(p.startswith("##") for p in pieces[1:])


# ------------------------------------------------------------------------------------------------
# A cut that fails partway


def test_failed_cut_is_one_stand_in_or_keeps_lo(engine):
    # The page: "So the whole word is thrown away and replaced by a single stand-in token." and
    # "Handing on lo tells a model something". lol = l ##o ##l: the longest match at the start is
    # lo (no row low... with ##l), and ##l has no row.
    tok = wp(engine, FOUR, vocab_size=100)
    assert tok.encode_pieces("lol") == ["[UNK]"]
    assert tok.encode_pieces("lol low") == ["[UNK]", "low"]
    rest = wp(engine, FOUR, vocab_size=100, unknown="rest")
    assert rest.encode_pieces("lol") == ["lo", "[UNK]"]
    assert rest.encode_pieces("lol low") == ["lo", "[UNK]", "low"]
    # [UNK] carries no mark: under continuation it reads as a word of its own.
    assert rest.decode(rest.encode("lol")) == "lo [UNK]"


# ------------------------------------------------------------------------------------------------
# Rules DESIGN §2 and docs/API.md pin (not page numbers; hand calculations)


def test_size_floor_is_alphabet_plus_one(engine):
    # DESIGN §2: asking below alphabet + 1 (11 + 1) is refused.
    with pytest.raises(SubwordsError):
        wp(engine, FOUR, vocab_size=11)


def test_default_spelling_is_continuation(engine):
    # docs/API.md: without a spelling, WordPiece is spelled continuation.
    tok = engine.train(FOUR, model="wordpiece", vocab_size=13)
    assert tok.merges == [("##i", "##d")]


def test_refuses_front_and_bytes(engine):
    for spelling in ("front", "bytes"):
        with pytest.raises(SubwordsError):
            wp(engine, FOUR, vocab_size=100, spelling=spelling)


def test_end_spelling_by_hand(engine):
    # Not on the page; pins the tie rule under `end` (pieces compared as spelled). By hand:
    # counts l 7, o 7, w</w> 5, w 11, e 17, r</w> 2, n 6, s 9, t</w> 9, i 3, d 3.
    #  1 i d 3/(3·3) = 1/3;  2 l o 1/7 ties o w</w> 5/(7·5): "lo" < "ow</w>";  3 lo w</w> 5/(7·5);
    #  4 s t</w> 1/9;  5 lo w 2/(2·11) ties w id 3/(11·3): "low" < "wid";  6 w id 3/(9·3) = 1/9;
    #  7 e r</w> 1/17, first of five at 1/17 ("er</w>" < "est</w>" < "lowe" < "ne" < "wide");
    #  8 low er</w> 2/(2·2);  9 e st</w> 1/15 ("est</w>" < "ew" < "ne" < "we" < "wide");
    # 10 e w 1/6 ("ew" < "ne");  11 n ew 1/6;  12 new est</w> 1/9 ("newest</w>" < "widest</w>");
    # 13 wid est</w> 1/3.  11 + 1 + 13 = 25 rows, every word one piece.
    tok = wp(engine, FOUR, vocab_size=100, spelling="end")
    assert tok.merges == [
        ("i", "d"), ("l", "o"), ("lo", "w</w>"), ("s", "t</w>"), ("lo", "w"), ("w", "id"),
        ("e", "r</w>"), ("low", "er</w>"), ("e", "st</w>"), ("e", "w"), ("n", "ew"),
        ("new", "est</w>"), ("wid", "est</w>"),
    ]
    assert tok.vocab_size == 25
    assert tok.report["corpus_pieces_after"] == 16
    # Longest match: only a marked piece finishes a word. lowlow = l o w l o w</w>: low, low</w>.
    assert tok.encode_pieces("lowlow") == ["low", "low</w>"]


def test_max_word_length(engine):
    # docs/API.md: a unit of more than max_word_length characters is one [UNK] (default 100).
    word = "l" + "o" * 100  # 101 characters, every symbol has a row
    tok = wp(engine, FOUR, vocab_size=100)
    assert tok.encode_pieces(word) == ["[UNK]"]
    assert tok.encode_pieces(word[:100]) == ["lo"] + ["##o"] * 98
    short = wp(engine, FOUR, vocab_size=100, max_word_length=3)
    assert short.encode_pieces("low lower") == ["low", "[UNK]"]
    unlimited = wp(engine, FOUR, vocab_size=100, max_word_length=None)
    assert unlimited.encode_pieces(word) == ["lo"] + ["##o"] * 99


def test_byte_fallback_goes_on_after_an_unknown_symbol(engine):
    # docs/API.md: with byte fallback a symbol with no row becomes its fallback rows and the cut
    # goes on. lol: lo, then ##l -> the bare ## row and <0x6C>. 11 + 1 + 257 + 12 merges.
    tok = wp(engine, FOUR, vocab_size=100, byte_fallback=True)
    assert tok.vocab_size == 24 + 257
    assert tok.encode_pieces("lol lowl") == ["lo", "##", "<0x6C>", "low", "##", "<0x6C>"]
    assert tok.decode(tok.encode("lol lowl")) == "lol lowl"


def test_encoded_corpus_is_count_pieces(engine):
    tok = wp(engine, MARKING, vocab_size=60)
    assert tok.report["corpus_pieces_encoded"] == tok.count_pieces(MARKING)
    tok = wp(engine, FOUR, vocab_size=100)
    assert tok.report["corpus_pieces_encoded"] == 16  # every word is one row


def test_reference_docstring_examples():
    result = doctest.testmod(wordpiece, optionflags=doctest.ELLIPSIS)
    assert result.failed == 0 and result.attempted > 0
