"""Golden tests: every number the BPE page (``000_…``) and the SentencePiece page (``004_…``)
compute on a corpus they print in full, on both engines.

Expected values come from the pages or from the hand calculations written next to them, never from
running the code. Where a page's corpus is not printed (the eighteen sentences), a small corpus
with the stated property is built here and the property is said.

"BPE page" is ``seeds/000_d9e1551f40487b74.txt``; "SentencePiece page" is
``seeds/004_97ea450ab60bffef.txt``.
"""

from __future__ import annotations

import pytest

from subwords.analysis import corpus_lengths, optimal_merges
from subwords.errors import SubwordsError
from subwords.reference import bpe
from subwords.reference.spelling import make_spelling

# BPE page: "The word low occurs five times, lower twice, newest six times and widest three."
FOUR = {"low": 5, "lower": 2, "newest": 6, "widest": 3}

# Hand-spelled under `end` (BPE page: "low = l o w</w>"):
#   low    l o w</w>            3 symbols x 5 = 15
#   lower  l o w e r</w>        5 symbols x 2 = 10
#   newest n e w e s t</w>      6 symbols x 6 = 36
#   widest w i d e s t</w>      6 symbols x 3 = 18      total 79 pieces
# distinct symbols: d e i l n o r</w> s t</w> w w</w>  -> 11
FOUR_SPELLED = {
    ("l", "o", "w</w>"): 5,
    ("l", "o", "w", "e", "r</w>"): 2,
    ("n", "e", "w", "e", "s", "t</w>"): 6,
    ("w", "i", "d", "e", "s", "t</w>"): 3,
}

# The ten merges by hand (count = the pieces it saves), tie rule: smallest (left, right) by code
# point.
#  1 e+s        9  (tie with s+t</w> at 9: "e" < "s")
#  2 es+t</w>   9
#  3 l+o        7
#  4 e+w        6  (three pairs at 6: (e,w) < (n,e) < (w,est</w>))
#  5 ew+est</w> 6  (tie with n+ew at 6: "ew" < "n")
#  6 n+ewest</w> 6
#  7 lo+w</w>   5
#  8 d+est</w>  3  (three pairs at 3: (d,est</w>) < (i,d) < (w,i))
#  9 i+dest</w> 3  (tie with w+i: "i" < "w")
# 10 w+idest</w> 3
FOUR_MERGES = [
    ("e", "s"),
    ("es", "t</w>"),
    ("l", "o"),
    ("e", "w"),
    ("ew", "est</w>"),
    ("n", "ewest</w>"),
    ("lo", "w</w>"),
    ("d", "est</w>"),
    ("i", "dest</w>"),
    ("w", "idest</w>"),
]
# 79 minus the savings above, merge by merge.
FOUR_LENGTHS = [79, 70, 61, 54, 48, 42, 36, 31, 28, 25, 22]
FOUR_ALPHABET = ["d", "e", "i", "l", "n", "o", "r</w>", "s", "t</w>", "w", "w</w>"]


class _Branch:
    """A ``choose`` for ``bpe.learn`` that takes a given pair at given merge numbers (1-based) and
    the default tie rule everywhere else; it records every tie it sees."""

    def __init__(self, overrides: dict[int, tuple[str, str]] | None = None) -> None:
        self.overrides = overrides or {}
        self.step = 0
        self.seen: list[tuple[int, list, int]] = []

    def __call__(self, tied, count):
        self.step += 1
        self.seen.append((self.step, list(tied), count))
        return self.overrides.get(self.step, tied[0])


def _encode_with(learned: bpe.Learned, word_symbols) -> list[str]:
    return bpe.replay(word_symbols, bpe.ranks_of(learned.merges))


LOWEST = ["l", "o", "w", "e", "s", "t</w>"]


# ------------------------------------------------------------------------------------------------
# The four words (BPE page, sections 3-8)


def test_four_words_symbols_and_pieces(engine):
    # BPE page: "Counted this way the four words are spelled in 11 distinct symbols and the corpus
    # is 79 pieces long." With no room for a merge (11 symbols + [UNK] = 12 rows) nothing is learned.
    tok = engine.train(FOUR, vocab_size=12)
    assert tok.report["alphabet_size"] == 11
    assert tok.report["corpus_pieces_before"] == 79
    assert tok.report["corpus_pieces_after"] == 79
    assert tok.report["merges_learned"] == 0
    assert tok.rows == ["[UNK]"] + FOUR_ALPHABET
    assert tok.count_pieces(FOUR) == 79


def test_four_words_floor_is_alphabet_plus_one(engine):
    # DESIGN §2 / BPE page: "The smallest vocabulary that can exist is one row per symbol the corpus
    # is spelled in plus one stand-in row": 11 + 1 = 12; asking 11 is refused.
    with pytest.raises(SubwordsError):
        engine.train(FOUR, vocab_size=11)


def test_four_words_first_pair_counts():
    # BPE page: "e + s: 6 + 3 = 9 / s + marked t: 6 + 3 = 9 / w + e: 2 + 6 = 8 / l + o: 5 + 2 = 7".
    # The engines do not expose raw pair counts; the reference's counting verb does.
    sp = make_spelling("end")
    units = {}
    for word, count in FOUR.items():
        (unit,) = sp.units(word)
        units[unit] = count
    assert units == FOUR_SPELLED
    counts = bpe.count_pairs(units.items())
    assert counts[("e", "s")] == 9
    assert counts[("s", "t</w>")] == 9
    assert counts[("w", "e")] == 8
    assert counts[("l", "o")] == 7
    assert max(counts.values()) == 9


def test_four_words_each_merge_saves_its_count(engine):
    # BPE page: "Joining a pair that occurs nine times removes nine pieces from the corpus,
    # exactly". Corpus length after k merges (vocab 12 + k), from the hand table above.
    for k, expected in enumerate(FOUR_LENGTHS):
        tok = engine.train(FOUR, vocab_size=12 + k)
        assert tok.report["corpus_pieces_after"] == expected, k
        assert tok.report["merges_learned"] == k


def test_four_words_merge_order(engine):
    # BPE page: "The first merge joins e and s at 9; the second joins that new es to the marked t,
    # also at 9 ... By the seventh merge the whole word low with its marker is one piece."
    tok = engine.train(FOUR, vocab_size=22)
    assert tok.merges == FOUR_MERGES
    assert tok.merges[0] == ("e", "s")
    assert tok.merges[1] == ("es", "t</w>")
    assert tok.merges[6] == ("lo", "w</w>")


def test_four_words_22_row_table(engine):
    # BPE page: "the twenty-two-row table": 11 symbols + [UNK] + 10 merges (DESIGN §2).
    tok = engine.train(FOUR, vocab_size=22)
    learned = ["es", "est</w>", "lo", "ew", "ewest</w>", "newest</w>", "low</w>",
               "dest</w>", "idest</w>", "widest</w>"]
    assert tok.rows == ["[UNK]"] + FOUR_ALPHABET + learned
    assert tok.kinds == ["special"] + ["alphabet"] * 11 + ["learned"] * 10
    assert tok.vocab_size == 22
    assert tok.report["stop"] == "size"
    assert tok.report["corpus_pieces_after"] == 22


def test_four_words_known_slip_lower_is_four_pieces(engine):
    # BPE page says "by the tenth every one of the four words is a single piece"; DESIGN's known
    # slip: lower is still lo w e r</w> (5 + 2*4 + 6 + 3 = 22 pieces, the page's own total).
    tok = engine.train(FOUR, vocab_size=22)
    assert tok.encode_pieces("lower") == ["lo", "w", "e", "r</w>"]
    assert [tok.encode_pieces(w) for w in ("low", "newest", "widest")] == [
        ["low</w>"], ["newest</w>"], ["widest</w>"]]


def test_four_words_lowest(engine):
    # BPE page: "the word lowest comes out as the same three pieces either way" (replay by hand:
    # e+s, es+t</w>, l+o apply; w+est</w> was never learned).
    tok = engine.train(FOUR, vocab_size=22)
    assert tok.encode_pieces("lowest") == ["lo", "w", "est</w>"]
    assert tok.decode(tok.encode("lowest")) == "lowest"


def test_four_words_size_is_a_ceiling(engine):
    # BPE page: "the size asked for is a ceiling and not a promise". Past 22 rows only lower is
    # left to build, by hand: e+r</w> (2; ties (lo,w), (w,e) at 2: "e" first), lo+w (2), then
    # low+er</w> (2) -> 25 rows, every word one piece (16), and no pair at all is left.
    tok = engine.train(FOUR, vocab_size=100)
    assert tok.merges[10:] == [("e", "r</w>"), ("lo", "w"), ("low", "er</w>")]
    assert tok.vocab_size == 25
    assert tok.report["stop"] == "no_pairs"
    assert tok.report["corpus_pieces_after"] == 16


def test_min_count_stop(engine):
    # BPE page: the loop stops "earlier if no pair is left that occurs at least twice". Here every
    # pair occurs once.
    tok = engine.train({"ab": 1, "cd": 1}, vocab_size=50)
    assert tok.report["stop"] == "min_count"
    assert tok.report["merges_learned"] == 0


# ------------------------------------------------------------------------------------------------
# The two tie branches (BPE page, "Go back to the very first merge on the four words")
# These walk branches the default tie rule does not take, so they use the reference's learner
# with a `choose`; the engines need only match the default branch.


def test_first_tie_both_branches_end_at_22_pieces_sharing_9_of_10_rows():
    # BPE page: "Taking either branch and finishing the fit leaves the corpus at 22 pieces, and
    # nine of the ten rows are identical; the branches differ in one row, es on one side against st
    # with its marker on the other, and the word lowest comes out as the same three pieces".
    # By hand, branch s+t</w> first: st</w> (9), e+st</w> (9) -> est</w>, then as the default.
    default = bpe.learn(FOUR_SPELLED, 22)
    other_choice = _Branch({1: ("s", "t</w>")})
    other = bpe.learn(FOUR_SPELLED, 22, choose=other_choice)
    assert other_choice.seen[0][1:] == ([("e", "s"), ("s", "t</w>")], 9)
    assert bpe.corpus_length(default.units) == 22
    assert bpe.corpus_length(other.units) == 22
    assert len(default.rows) == len(other.rows) == 10
    assert len(set(default.rows) & set(other.rows)) == 9
    assert set(default.rows) - set(other.rows) == {"es"}
    assert set(other.rows) - set(default.rows) == {"st</w>"}
    assert _encode_with(default, LOWEST) == ["lo", "w", "est</w>"]
    assert _encode_with(other, LOWEST) == ["lo", "w", "est</w>"]


def test_second_tie_three_branches_all_22_one_cuts_lowest_in_two():
    # BPE page: "The second tie, three pairs at 6 ... all three branches again leave the corpus at
    # 22 pieces and one of them cuts lowest as two pieces rather than three."
    # By hand the tie is at the fourth merge: (e,w), (n,e), (w,est</w>) all at 6.
    probe = _Branch()
    bpe.learn(FOUR_SPELLED, 22, choose=probe)
    step, tied, count = probe.seen[3]
    assert (step, count) == (4, 6)
    assert tied == [("e", "w"), ("n", "e"), ("w", "est</w>")]
    cuts = []
    for pair in tied:
        learned = bpe.learn(FOUR_SPELLED, 22, choose=_Branch({4: pair}))
        assert bpe.corpus_length(learned.units) == 22, pair
        cuts.append(_encode_with(learned, LOWEST))
    # Branch (w, est</w>) learns west</w>, and lowest replays to lo + west</w>.
    assert cuts == [["lo", "w", "est</w>"], ["lo", "w", "est</w>"], ["lo", "west</w>"]]


# ------------------------------------------------------------------------------------------------
# report / taste / state (BPE page, "the method is a greedy one")

RTS = {"report": 2, "taste": 8, "state": 10}


def test_report_taste_state_greedy(engine):
    # BPE page: "Take three words, report twice, taste eight times and state ten times, which is
    # 102 pieces spelled in characters. Three pairs tie for first place at 18 ... one merge leaves
    # the corpus at 84 ... after s + t: best pair left scores 10, 84 - 10 = 74".
    # By hand: report r e p o r t</w> (6x2=12), taste t a s t e</w> (5x8=40), state s t a t e</w>
    # (5x10=50) -> 102; alphabet r e p o t</w> t a s e</w> = 9 symbols, so 10 rows hold no merge.
    # Pairs at 18: (s,t) 8+10, (t,a) 8+10, (t,e</w>) 8+10; the tie rule takes (s,t).
    tok0 = engine.train(RTS, vocab_size=10)
    assert tok0.report["alphabet_size"] == 9
    assert tok0.report["corpus_pieces_before"] == 102
    tok1 = engine.train(RTS, vocab_size=11)
    assert tok1.merges == [("s", "t")]
    assert tok1.report["corpus_pieces_after"] == 84
    tok2 = engine.train(RTS, vocab_size=12)
    # After st: pairs at 10 are (a,t), (st,a), (t,e</w>); "a" sorts first.
    assert tok2.merges == [("s", "t"), ("a", "t")]
    assert tok2.report["corpus_pieces_after"] == 74


def test_report_taste_state_optimum():
    # BPE page: "the branch beginning with t followed by a is two merges from a corpus of 66 while
    # the branch beginning with s followed by t cannot do better than 74":
    # "after t + a: t + marked e scores 8 + 10 = 18, 84 - 18 = 66".
    assert optimal_merges(RTS, 1) == (84, [(("s", "t"),), (("t", "a"),), (("t", "e</w>"),)])
    best, sequences = optimal_merges(RTS, 2)
    assert best == 66
    # By hand: only t+a and t+e</w> are both worth 18 after one another (s+t after t+e</w> is 10).
    assert sequences == [(("t", "a"), ("t", "e</w>")), (("t", "e</w>"), ("t", "a"))]
    assert optimal_merges(RTS, 1, after=[("s", "t")])[0] == 74
    assert optimal_merges(RTS, 1, after=[("t", "a")]) == (66, [(("t", "e</w>"),)])


def test_report_taste_state_gap_of_eight_out_to_four_merges(reference):
    # BPE page: "Eight pieces on a corpus of 102 is about eight per cent, held steady out to four
    # merges". Greedy by hand: s+t (18) -> 84; a+t (10) -> 74; then (at,e</w>) and (st,at) tie at
    # 10, "at" first -> 64; st+ate</w> (10) -> 54. So the optimum is 74-8, 64-8, 54-8 = 66, 56, 46,
    # e.g. t+a, t+e</w>, ta+te</w> (10) -> 56, s+tate</w> (10) -> 46.
    tok = reference.train(RTS, vocab_size=14)
    greedy = corpus_lengths(RTS, tok.merges[:4])
    assert greedy == [102, 84, 74, 64, 54]
    assert tok.merges[:4] == [("s", "t"), ("a", "t"), ("at", "e</w>"), ("st", "ate</w>")]
    assert corpus_lengths(RTS, [("t", "a"), ("t", "e</w>"), ("ta", "te</w>"), ("s", "tate</w>")]) == [
        102, 84, 66, 56, 46]
    for k in (2, 3, 4):
        assert greedy[k] - optimal_merges(RTS, k)[0] == 8, k
    # Restricting the search to pairs the learner could take (count >= 2) changes nothing here.
    for k in (1, 2, 3, 4):
        assert optimal_merges(RTS, k, min_count=2) == optimal_merges(RTS, k)


def test_report_taste_state_greedy_matches_engine(engine, reference):
    # The learner's own first four merges are the greedy sequence computed by hand above.
    tok = engine.train(RTS, vocab_size=14)
    assert tok.merges == [("s", "t"), ("a", "t"), ("at", "e</w>"), ("st", "ate</w>")]
    assert tok.report["corpus_pieces_after"] == 54


# ------------------------------------------------------------------------------------------------
# undo / untie / redo / retie (BPE page, "The third variant")

UNDO = {"undo": 10, "untie": 10, "redo": 10, "retie": 10}
JOINTS = {"undo": ["un", "do"], "untie": ["un", "tie"], "redo": ["re", "do"], "retie": ["re", "tie"]}


def test_undo_unconstrained(engine):
    # BPE page: "Both fits were asked for thirty rows. The unconstrained one learns nine merges,
    # ends at 19 rows, and reads the forty words of the corpus as 40 pieces, one per word."
    # By hand: alphabet u n d o</w> t i e</w> r e = 9 (+[UNK] = 10). Pairs at 20: (d,o</w>),
    # (i,e</w>), (r,e), (t,i), (u,n); in code-point order do</w>, ie</w>, re, then tie</w> (t <
    # u), un; then the four pairs at 10 (un|re + do</w>|tie</w>): 10 + 9 = 19 rows.
    tok = engine.train(UNDO, vocab_size=30)
    assert tok.report["alphabet_size"] == 9
    assert tok.merges[:5] == [("d", "o</w>"), ("i", "e</w>"), ("r", "e"), ("t", "ie</w>"), ("u", "n")]
    assert tok.report["merges_learned"] == 9
    assert tok.vocab_size == 19
    assert tok.count_pieces(UNDO) == 40
    assert tok.report["corpus_pieces_after"] == 40
    assert tok.report["stop"] == "no_pairs"
    assert tok.encode_pieces("undo") == ["undo</w>"]


def test_undo_constrained_by_joints(engine):
    # BPE page: "The constrained one learns the same first five merges and then stops, at 15 rows,
    # because every part is by then a single symbol ... It reads the same forty words as 80
    # pieces, two per word." By hand: units un (20, unmarked), re (20), do</w> (20), tie</w> (20);
    # same five merges, 10 + 5 = 15 rows, 40 words x 2 parts = 80.
    tok = engine.train(UNDO, vocab_size=30, joints=JOINTS)
    assert tok.merges == [("d", "o</w>"), ("i", "e</w>"), ("r", "e"), ("t", "ie</w>"), ("u", "n")]
    assert tok.vocab_size == 15
    assert tok.count_pieces(UNDO) == 80
    assert tok.report["corpus_pieces_after"] == 80
    # "the un in undo is the same row as the un in untie, and the do in undo the same row as the
    # do in redo"
    assert tok.encode_pieces("undo") == ["un", "do</w>"]
    assert tok.encode_pieces("untie") == ["un", "tie</w>"]
    assert tok.encode_pieces("redo") == ["re", "do</w>"]
    assert tok.decode(tok.encode("undo retie")) == "undo retie"


# ------------------------------------------------------------------------------------------------
# Byte fallback (BPE page, sections 11-12)

# A stand-in for the eighteen sentences' alphabet (not printed): 51 symbols, as the pages count
# them -- 34 plain symbols (a-z and A-H, all inside the long word) and 17 word-final ones (a-p at
# the ends of Aa..Ap, and the full stop, which only ever ends a word). The long word occurs twice,
# so its 34 pairs are worth 2 each and merges are available.
FIFTY_ONE = {"abcdefghijklmnopqrstuvwxyzABCDEFGH.": 2}
FIFTY_ONE.update({"A" + c: 1 for c in "abcdefghijklmnop"})


def test_byte_fallback_adds_257_rows_outside_the_budget(engine):
    # BPE page: "It is 257 rows in all" (256 byte rows and one bare marker row), outside the budget.
    # Four words at 22: 22 + 257 = 279.
    tok = engine.train(FOUR, vocab_size=22, byte_fallback=True)
    assert tok.vocab_size == 22 + 257
    assert tok.rows[0] == "[UNK]"
    assert tok.rows[1:257] == [f"<0x{b:02X}>" for b in range(256)]
    assert tok.rows[257] == "</w>"
    assert tok.kinds[:258] == ["special"] + ["byte"] * 256 + ["marker"]
    assert tok.rows[258:] == engine.train(FOUR, vocab_size=22).rows[1:]


def test_byte_fallback_asking_54_gives_311(engine):
    # BPE page: "asking for 54 gives a table of 311 rows", on a corpus spelled in 51 symbols whose
    # floor is 52 ("one row per symbol ... plus one stand-in row, which is 52 here").
    tok = engine.train(FIFTY_ONE, vocab_size=52)
    assert tok.report["alphabet_size"] == 51
    with pytest.raises(SubwordsError):
        engine.train(FIFTY_ONE, vocab_size=51)
    tok = engine.train(FIFTY_ONE, vocab_size=54, byte_fallback=True)
    assert tok.report["merges_learned"] == 2
    assert tok.vocab_size == 311


def test_byte_fallback_in_budget_raises_the_floor(engine):
    # BPE page: counting the 257 inside the budget (SentencePiece's convention) puts "a hard floor
    # of 257 on every vocabulary, which would make the twenty-two-row table ... impossible".
    with pytest.raises(SubwordsError):
        engine.train(FOUR, vocab_size=22, byte_fallback=True, byte_fallback_in_budget=True)
    # 11 + [UNK] + 257 = 269 is the floor; 279 leaves room for the same ten merges.
    tok = engine.train(FOUR, vocab_size=279, byte_fallback=True, byte_fallback_in_budget=True)
    assert tok.vocab_size == 279
    assert tok.merges == FOUR_MERGES


# café: the corpus holds c, a and f inside words but never é, and never the pairs c+a or a+f, so
# no merge can touch the first three letters of café in any spelling.
CAFE_CORPUS = {"face": 3, "fact": 2}


def test_cafe_four_pieces_without_fallback(engine):
    # BPE page: "The word café goes from four pieces, the last a stand-in with the accent gone for
    # good". By hand: c a f é</w>; é</w> has no row -> [UNK].
    tok = engine.train(CAFE_CORPUS, vocab_size=20)
    assert tok.encode_pieces("café") == ["c", "a", "f", "[UNK]"]
    assert tok.decode(tok.encode("café")) == "caf[UNK]"


def test_cafe_six_pieces_with_byte_fallback(engine):
    # BPE page: "... to six, the accented e written as the two byte rows for 195 and 169".
    # By hand: é</w> is unknown and final, é has no plain row, so its bytes C3 A9 then the bare
    # </w> row.
    tok = engine.train(CAFE_CORPUS, vocab_size=20, byte_fallback=True)
    assert tok.encode_pieces("café") == ["c", "a", "f", "<0xC3>", "<0xA9>", "</w>"]
    assert tok.decode(tok.encode("café")) == "café"
    assert tok.decode_bytes(tok.encode("café")) == "café".encode()


def test_cafe_five_pieces_in_bytes(engine):
    # BPE page: "on a single word with no space after it the byte fit is the shorter reading, since
    # café is five pieces there against six". By hand: 63 61 66 C3 A9, no learned pair among them.
    tok = engine.train(CAFE_CORPUS, spelling="bytes", vocab_size=270)
    assert len(tok.encode("café")) == 5
    assert tok.encode("café") == list("café".encode())
    assert tok.decode(tok.encode("café")) == "café"


# ------------------------------------------------------------------------------------------------
# The space lost after [UNK] (BPE page section 11; SentencePiece page)

# A stand-in for the eighteen sentences (not printed). Like them it holds every character of the
# running sentence and every symbol of it except one: z occurs inside a word (size) but no word
# ends in z. The word-final symbols the sentence needs are .</w> (Dr., analysis.), t</w> (didn't,
# cost) and e</w> (the); every inner letter occurs inside some word.
SENTENCE = "Dr. Alvarez didn't expect the low-cost re-analysis."
STAND_IN = {"Dr.": 2, "Alvares": 2, "didn't": 2, "size": 2, "expected": 2, "the": 2, "lower": 2,
            "cost": 2, "analysis.": 2, "re-run": 2}


def test_running_sentence_in_characters(engine):
    # BPE page: "Cut on its spaces the sentence is seven words ... the sentence encodes to 45 pieces
    # where a word vocabulary needed 7" (51 characters less 6 spaces: one symbol each), and "One of
    # those 45 pieces has no row" (z</w>). No merges: vocab_size = alphabet + 1.
    floor = engine.train(STAND_IN, vocab_size=10**6).report["alphabet_size"] + 1
    tok = engine.train(STAND_IN, vocab_size=floor)
    pieces = tok.encode_pieces(SENTENCE)
    assert len(pieces) == 45
    assert pieces.count("[UNK]") == 1
    # "a fit that has made no merge at all reads the sentence in 46 pieces" -- with section 12's
    # byte fallback underneath: z</w> becomes z and the bare </w>.
    tok = engine.train(STAND_IN, vocab_size=floor, byte_fallback=True)
    assert len(tok.encode_pieces(SENTENCE)) == 46
    words = engine.train(STAND_IN, model="word", vocab_size=100)
    assert len(words.encode(SENTENCE)) == 7


def test_running_sentence_marked_in_front(engine):
    # SentencePiece page: "The sentence is 51 characters of which six are spaces, and it becomes a
    # stream of 52 symbols, the six spaces replaced by six marks and one more put at the front. Cut
    # at the marks it is seven units".
    assert len(SENTENCE) == 51 and SENTENCE.count(" ") == 6
    floor = engine.train(STAND_IN, spelling="front", vocab_size=10**6).report["alphabet_size"] + 1
    tok = engine.train(STAND_IN, spelling="front", vocab_size=floor)
    pieces = tok.encode_pieces(SENTENCE)
    assert len(pieces) == 52
    assert pieces.count("\u2581") == 7
    assert tok.decode(tok.encode(SENTENCE)) == SENTENCE


def test_space_lost_after_unk(engine):
    # BPE page: "Dr. Alvarez didn't -> Dr. Alvare[UNK]didn't ... the space is gone because a
    # stand-in carries no marker"; SentencePiece page: "Dr. Alvare[UNK]didn't expect the low-cost
    # re-analysis."
    tok = engine.train(STAND_IN, vocab_size=60)
    ids = tok.encode(SENTENCE)
    assert tok.encode_pieces(SENTENCE).count("[UNK]") == 1
    assert tok.decode(ids) == "Dr. Alvare[UNK]didn't expect the low-cost re-analysis."


def test_byte_fallback_repair_costs_one_piece_and_no_byte_row(engine):
    # BPE page: "On the running sentence the repair costs exactly one piece, 26 against 25, and
    # ... not one of the 26 is a byte row. The letter z has a row already ... So the fit writes the
    # ordinary z and then the marker on its own". (The page's 25/26 need its corpus; the
    # difference of one holds at any size.)
    for size in (45, 60, 80):
        plain = engine.train(STAND_IN, vocab_size=size)
        repaired = engine.train(STAND_IN, vocab_size=size, byte_fallback=True)
        pieces = repaired.encode_pieces(SENTENCE)
        assert len(pieces) == len(plain.encode_pieces(SENTENCE)) + 1, size
        assert not any(p.startswith("<0x") for p in pieces)
        k = pieces.index("</w>")
        assert pieces[k - 1] == "z"
        assert repaired.decode(repaired.encode(SENTENCE)) == SENTENCE


def test_front_returns_the_sentence_exactly(engine):
    # SentencePiece page: "The front-marked fit returns the sentence exactly, character for
    # character, spaces included." (z is an ordinary symbol under front.)
    tok = engine.train(STAND_IN, spelling="front", vocab_size=60)
    assert "[UNK]" not in tok.encode_pieces(SENTENCE)
    assert tok.decode(tok.encode(SENTENCE)) == SENTENCE


def test_front_unseen_script_is_a_mark_and_stand_ins(engine):
    # SentencePiece page: "Handed the Chinese sentence ... the fit learned from our eighteen English
    # sentences answers a mark followed by eight stand-in rows". Student, research, life, origin:
    # eight characters the English corpus never holds.
    tok = engine.train(STAND_IN, spelling="front", vocab_size=60)
    assert tok.encode_pieces("学生研究生命起源") == ["\u2581"] + ["[UNK]"] * 8


# ------------------------------------------------------------------------------------------------
# The ▁-marked four words (SentencePiece page, sections 9-11) and the _ mark (section 21)

FRONT_LEARNED = ["es", "est", "lo", "low", "\u2581low", "ew", "ewest", "newest", "\u2581newest",
                 "dest", "idest", "widest", "\u2581widest", "er", "\u2581lower"]


def test_front_four_words(engine):
    # SentencePiece page: "Marked, each is its characters with one mark in front, so low is four
    # symbols rather than three and the sixteen word occurrences come to 95 pieces in all ...
    # Fifteen merges later every word is a single piece and the corpus is 16 pieces".
    # By hand: 4x5 + 6x2 + 7x6 + 7x3 = 95; alphabet ▁ d e i l n o r s t w = 11; 12 + 15 = 27 rows.
    # Merges by hand: es, est (9 each); at 7 (l,o) < (o,w) < (▁,l) -> lo; (lo,w) < (▁,lo) -> low;
    # ▁low; at 6 (e,w) -> ew, ewest, newest, ▁newest; at 3 dest, idest, widest, ▁widest; at 2
    # (e,r) < (▁low,e) -> er, then ▁lower.
    tok = engine.train(FOUR, spelling="front", vocab_size=30)
    assert tok.report["corpus_pieces_before"] == 95
    assert tok.report["alphabet_size"] == 11
    assert tok.report["merges_learned"] == 15
    assert tok.report["corpus_pieces_after"] == 16
    assert tok.vocab_size == 27
    # "Asked for 30 rows on the four words, the merging learner stops at 27 when no pair occurs
    # twice any more" -- here no pair is left at all.
    assert tok.report["stop"] == "no_pairs"
    assert tok.rows == ["[UNK]", "d", "e", "i", "l", "n", "o", "r", "s", "t", "w", "\u2581"] + FRONT_LEARNED
    # "The first two build the ending est ... The third and fourth build the word low ... Only
    # then, at the fifth merge and still at a count of 7, does the mark join anything"
    assert tok.merges[:5] == [("e", "s"), ("es", "t"), ("l", "o"), ("lo", "w"), ("\u2581", "low")]
    # "the vocabulary ends up holding ▁low and ▁newest rather than ▁l and ▁n"; "both spell the
    # unseen word lowest identically, as ▁low followed by est".
    assert "\u2581l" not in tok.rows and "\u2581n" not in tok.rows
    assert tok.encode_pieces("lowest") == ["\u2581low", "est"]


def test_front_four_words_mark_loses_ties():
    # SentencePiece page: "Across the whole run of fifteen merges a pair beginning with the mark was
    # among the tied candidates eleven times, and it was taken three times, each of those being a
    # step where it was the only candidate left at that count." (A pair "beginning with the mark"
    # has the bare mark as its left piece: merges 3-13 by hand, taken at 5, 9, 13.)
    sp = make_spelling("front")
    units = {sp.units(w)[0]: c for w, c in FOUR.items()}
    probe = _Branch()
    learned = bpe.learn(units, 27, join=sp.join, choose=probe)
    assert len(learned.merges) == 15
    among = [(step, tied) for step, tied, _ in probe.seen if any(l == "\u2581" for l, _ in tied)]
    assert len(among) == 11
    taken = [step for step, tied in among if learned.merges[step - 1][0] == "\u2581"]
    assert taken == [5, 9, 13]
    assert all(len(tied) == 1 for step, tied in among if step in taken)


def test_underscore_mark_four_words(engine):
    # SentencePiece page: "Both tables hold 27 rows and 18 of them agree once the mark is written
    # the same way ... Under the early-sorting one they are the mark with l, that with o, and that
    # with w ... both fits cut as the marked low followed by est."
    # By hand under _ (95 < letters): es, est, _l, _lo, _low, _n, _ne, _new, _newest, _w, _wi,
    # _wid, _widest, _lowe, _lower. Shared with the ▁ table: [UNK], the 11 symbols, es, est, ▁low,
    # ▁newest, ▁widest, ▁lower = 18.
    under = engine.train(FOUR, spelling="front", mark="_", vocab_size=30)
    usual = engine.train(FOUR, spelling="front", vocab_size=30)
    assert under.vocab_size == 27
    assert under.merges[2:5] == [("_", "l"), ("_l", "o"), ("_lo", "w")]
    assert usual.merges[2:5] == [("l", "o"), ("lo", "w"), ("\u2581", "low")]
    as_usual = {r.replace("_", "\u2581") for r in under.rows}
    assert len(as_usual & set(usual.rows)) == 18
    assert under.encode_pieces("lowest") == ["_low", "est"]
    assert under.decode(under.encode("lowest low")) == "lowest low"


# ------------------------------------------------------------------------------------------------
# Two-stage (superword) BPE on the four words (BPE page, "The second variant")


def test_two_stage_four_words(engine):
    # BPE page: "The second stage learned three merges and only two of them produced a row that
    # spans a space, since the third joined an e to a marked r inside lower."
    # By hand. Stage one = the 22-row table. Stage two reads the table as one stream: low</w> x5,
    # (lo w e r</w>) x2, newest</w> x6, widest</w> x3. Pair counts across the stream:
    #   (newest</w>, newest</w>) 5, (low</w>, low</w>) 4, (widest</w>, widest</w>) 2,
    #   (lo,w) 2, (w,e) 2, (e,r</w>) 2, and pairs at 1 across the word changes.
    # Merge 11: newest</w>newest</w> (5): six newests become three pieces.
    # Merge 12: low</w>low</w> (4): five lows become lowlow lowlow low.
    # Merge 13: now five pairs tie at 2 -- (e,r</w>) < (lo,w) < (newest</w>newest</w>, same) <
    #   (w,e) < (widest</w>, widest</w>) -- so e + r</w>. 25 rows: stop.
    # Stream after: 3 (low) + 2x3 (lo w er</w>) + 3 + 3 = 15 pieces (22 - 3 - 2 - 2).
    tok = engine.train(FOUR, vocab_size=25, superword_at=22)
    assert tok.merges[:10] == FOUR_MERGES
    assert tok.merges[10:] == [("newest</w>", "newest</w>"), ("low</w>", "low</w>"), ("e", "r</w>")]
    assert tok.rows[22:] == ["newest</w>newest</w>", "low</w>low</w>", "er</w>"]
    assert tok.report["stage_one_merges"] == 10
    assert tok.report["merges_learned"] == 13
    assert tok.report["corpus_pieces_after"] == 15
    assert tok.report["stop"] == "size"
    # Two of the three span a space (they decode with a space inside).
    spanning = [r for r in tok.rows[22:] if " " in tok.decode([tok.piece_to_id(r)]).strip()]
    assert spanning == ["newest</w>newest</w>", "low</w>low</w>"]
    assert tok.encode_pieces("newest newest low") == ["newest</w>newest</w>", "low</w>"]
    assert tok.decode(tok.encode("newest newest low")) == "newest newest low"
    assert tok.count_pieces(FOUR) == 15


# ------------------------------------------------------------------------------------------------
# The three normalisations (SentencePiece page, section 16)


def test_front_marking(engine):
    # SentencePiece page: "hello  world -> ▁hello▁world".
    tok = engine.train({"hello": 2, "world": 2}, spelling="front", vocab_size=20)
    assert "".join(tok.encode_pieces("hello  world")) == "\u2581hello\u2581world"


@pytest.mark.parametrize(
    "text, expected",
    [
        # "A run of whitespace of any length and of any kind becomes one mark, so two spaces come
        # back as one and so does a tab"
        ("hello  world", "hello world"),
        ("hello\tworld", "hello world"),
        # "Whitespace at the two ends of the text is dropped entirely."
        ("  hello world ", "hello world"),
        # "the last row went in with one space, one mark and one space and came back with three
        # spaces"
        ("hello \u2581 world", "hello   world"),
    ],
)
def test_three_normalizations(engine, text, expected):
    tok = engine.train({"hello": 2, "world": 2}, spelling="front", vocab_size=20)
    assert tok.normalize(text) == expected
    assert tok.decode(tok.encode(text)) == expected


def test_normalizations_are_reported(engine):
    # SentencePiece page: "rather than call the round trip exact and leave those unsaid, here they
    # are" -- the report names which normalizations changed the training text.
    texts = ["hello  world", " hello world", "hello \u2581 world"]
    for k, expected in enumerate(
        [["whitespace_runs"], ["stripped_ends"], ["mark_in_text"]]
    ):
        tok = engine.train([texts[k]], spelling="front", vocab_size=20)
        assert tok.report["normalizations"] == expected, texts[k]
    tok = engine.train(["hello world"], spelling="front", vocab_size=20)
    assert tok.report["normalizations"] == []


# ------------------------------------------------------------------------------------------------
# The word vocabulary (BPE page, section 1): one row per distinct word, [UNK] for the rest


def test_word_vocabulary(engine):
    # BPE page: "Suppose we make the vocabulary out of the words the corpus contains ... there is
    # nothing the vocabulary can do about [the others] except hand back a single row". By hand:
    # [UNK] then newest (6), low (5), widest (3), lower (2).
    tok = engine.train(FOUR, model="word", vocab_size=100)
    assert tok.rows == ["[UNK]", "newest</w>", "low</w>", "widest</w>", "lower</w>"]
    assert tok.kinds == ["special"] + ["unit"] * 4
    assert tok.encode_pieces("low lowest") == ["low</w>", "[UNK]"]
