"""The widgets' computations (no browser): the pages' numbers in the pages' states, every control
changing the readouts, and the stand-in corpus's widgets having the shape the pages describe."""

from __future__ import annotations

import json

import pytest

from subwords.explore import corpora as C
from subwords.explore import widgets as W
from subwords.explore.page import state_key

from page_numbers import CASES

PAGE_COUNTS = {"bpe": 8, "unigram": 7, "wordpiece": 6, "sentencepiece": 9}


def readout(result, label):
    found = [v for k, v in result["numbers"] if k == label]
    assert found, f"no readout {label!r} in {[k for k, _ in result['numbers']]}"
    return str(found[0])


def test_thirty_widgets_on_four_pages():
    # The issue: "30 such places: 8 on the BPE page, 7 on Unigram, 6 on WordPiece and 9 on SentencePiece".
    assert len(W.WIDGETS) == 30
    for page, n in PAGE_COUNTS.items():
        numbers = [w.number for w in W.WIDGETS.values() if w.page == page]
        assert numbers == list(range(1, n + 1)), page


@pytest.mark.parametrize("widget, state, label, value, source", CASES,
                         ids=[f"{c[0]}-{c[2]}-{json.dumps(c[1], ensure_ascii=False)}" for c in CASES])
def test_page_numbers(widget, state, label, value, source):
    assert readout(W.compute(widget, state), label) == value, source


# A small corpus of the user's, so the corpus control has a second choice.
MINE = ["the low cost of the lower analysis was expected", "newest and widest reports were rewritten",
        "a report on the cost was written by the analyst"] * 4


@pytest.mark.parametrize("widget_id", list(W.WIDGETS))
def test_every_state_answers_and_every_control_changes_something(widget_id, user_corpora):
    user_corpora["mine"] = MINE
    w = W.WIDGETS[widget_id]
    default = w.compute(W.validate(w, {}))
    json.dumps(default, allow_nan=False)  # JSON-able, no NaN
    assert default.get("numbers"), "every widget has readouts"
    for c in w.live_controls():
        changed = []
        for v in c.values():
            if v == c.default:
                continue
            r = W.compute(widget_id, {c.name: v})
            json.dumps(r, allow_nan=False)
            changed.append(r != default)
        assert any(changed), f"{widget_id}: control {c.name} changes nothing"


def test_refusals_say_what_to_send():
    with pytest.raises(W.ExploreError, match="from 0 to 10"):
        W.compute("bpe-walk", {"merges": 11})
    with pytest.raises(W.ExploreError, match="no control 'bogus'"):
        W.compute("bpe-walk", {"bogus": 1})
    with pytest.raises(W.ExploreError, match="no widget named"):
        W.compute("nope", {})
    with pytest.raises(W.ExploreError, match="must be one of"):
        W.compute("bpe-curve", {"corpus": "/etc/passwd"})
    with pytest.raises(W.ExploreError, match="from 1 to 8"):
        W.compute("bpe-two-stage", {"stage_one": 24, "room": 20})
    with pytest.raises(W.ExploreError, match="true or false"):
        W.compute("bpe-fallback", {"fallback": "maybe"})


def test_state_key_is_canonical():
    assert state_key({"b": 1, "a": "▁"}) == '{"a":"▁","b":1}'


# ------------------------------------------------------------------------------------------------
# Widgets over the stand-in for the eighteen sentences: the shape the pages describe


def test_curve_has_floor_ceiling_and_falls():
    # BPE page: "The smallest vocabulary that can exist is one row per symbol the corpus is spelled in
    # plus one stand-in row"; "the size asked for is a ceiling and not a promise"; "Both curves fall".
    r = W.compute("bpe-curve", {})
    rows = r["tables"][0]["rows"]
    assert len(rows) == 15
    floor = int(readout(r, "floor (alphabet + [UNK])"))
    ceiling = int(readout(r, "ceiling (no pair twice)"))
    assert rows[0][0] == floor and rows[-1][0] == ceiling
    corpus = [row[1] for row in rows]
    assert all(a > b for a, b in zip(corpus, corpus[1:]))
    # asking past the ceiling gives the ceiling
    assert W.fit(C.OURS, vocab_size=ceiling + 500).vocab_size == ceiling


def test_byte_rows_are_256_plus_merges():
    # BPE page: byte-level BPE has "256 + merges rows and no [UNK]" (DESIGN §2); 341 = 256 + 85.
    for m in (0, 20, 85):
        r = W.compute("bpe-bytes", {"merges": m})
        assert readout(r, "byte rows") == str(256 + int(readout(r, "merges")))


def test_matched_sizes_are_fourteen_and_both_learners_fit_each():
    # Unigram page: "Fit both on the eighteen sentences at fourteen sizes".
    r = W.compute("uni-vs-bpe", {})
    rows = r["tables"][0]["rows"]
    assert len(rows) == 14
    assert all(all(isinstance(x, int) and x > 0 for x in row) for row in rows)


def test_front_against_end_at_fourteen_sizes():
    # SentencePiece page: "both schemes were fitted on the same corpus at fourteen sizes".
    r = W.compute("sp-lengths", {})
    assert len(r["tables"][0]["rows"]) == 14
    # "the fifteen alphabet rows coming back": the front floor is below the end floor
    assert int(readout(r, "floor (front)")) < int(readout(r, "floor (end)"))


def test_no_cut_rows_hold_inner_spaces():
    # SentencePiece page: "nothing in the method forbids a merge from joining a pair with a space
    # between its halves" -- with nothing cut, some of the first forty rows hold an inner mark.
    r = W.compute("sp-no-cut", {})
    assert int(readout(r, "pieces with a space not at the front")) > 0


def test_wordpiece_sizes_one_unmarked_piece_per_word():
    # WordPiece page: "Exactly one piece per word carries no mark, and it is always the first".
    r = W.compute("wp-sizes", {})
    for strip in r["pieces"]:
        pieces = [p[0] for p in strip["pieces"]]
        assert sum(not p.startswith("##") for p in pieces) == 7


def test_user_corpus_replaces_the_stand_in(user_corpora):
    user_corpora["mine"] = ["low lower newest widest"] * 5 + ["low newest"] * 3
    r = W.compute("bpe-curve", {"corpus": "mine"})
    assert "your mine" in r["note"]
    # without it the option does not exist
    del user_corpora["mine"]
    with pytest.raises(W.ExploreError):
        W.compute("bpe-curve", {"corpus": "mine"})


def test_cjk_front_reads_the_new_sentence_in_whole_words():
    # SentencePiece page: the front-marked scheme reads the unseen sentence in pieces that are
    # words of the lines ("student, then research and life together, then origin").
    r = W.compute("sp-cjk", {})
    front = next(s for s in r["pieces"] if s["label"].startswith("front"))
    pieces = [p[0].lstrip("\u2581") for p in front["pieces"]]
    assert "".join(pieces) == C.CJK_HELD_OUT
    assert all(p in "".join(C.CJK_LINES) for p in pieces)


def test_six_readings_on_a_corpus_with_the_pages_words(user_corpora):
    # BPE page: "The vocabulary does hold a row for analysis; handed the word on its own it answers
    # one piece. But ... in the sentence the word ends in a full stop"; "cost, which is one piece
    # alone and the last of four inside low-cost"; "expected is one piece and its own stem is
    # three". A corpus holding analysis, cost and expected (three times each, so a fit to
    # exhaustion makes each one row) and never analysis., low-cost or expect:
    user_corpora["words"] = ["the analysis of the cost was expected", "an analysis of cost as expected",
                             "analysis cost expected"]
    r = W.compute("bpe-fit", {"corpus": "words"})
    readings = {row[0]: row for row in r["tables"][0]["rows"]}
    assert readings["analysis"][1:3] == ["analysis</w>", 1] and readings["analysis"][5] > 1
    assert readings["cost"][1:3] == ["cost</w>", 1] and readings["cost"][5] > 1
    assert readings["expected"][1:3] == ["expected</w>", 1] and readings["expected"][5] > 1


def test_walk_opens_on_the_pages_pair_counts():
    # BPE page: "e + s: 6 + 3 = 9 / s + marked t: 6 + 3 = 9 / w + e: 8 / l + o: 5 + 2 = 7"
    r = W.compute("bpe-walk", {"merges": 0})
    pairs = next(t for t in r["tables"] if t["caption"].startswith("pairs now"))
    assert pairs["rows"][:4] == [["e + s", 9], ["s + t</w>", 9], ["w + e", 8], ["l + o", 7]]


def test_wp_lengths_takes_words_that_begin_with_the_mark(user_corpora):
    # Code and some English hold words that begin with `##`; the continuation belongs to the
    # row, so both rules train on them. Hand count: "x ## y" is 1 + 2 + 1 = 4 symbols,
    # "##include a##b" 9 + 4 = 13, "## ##word the ##word" 2 + 6 + 3 + 6 = 17: 34 a copy, 102 for
    # three. At the top budget every word is one piece: 3 + 2 + 4 = 9 words a copy, 27.
    user_corpora["code"] = ["x ## y", "##include a##b", "## ##word the ##word"] * 3
    rows = W.compute("wp-lengths", {"corpus": "code"})["tables"][0]["rows"]
    assert rows[0][:3] == [0, 102, 102]
    assert rows[-1][1:3] == [27, 27]


@pytest.mark.parametrize("at", [3, 8, 12])
def test_wp_lengths_readouts_follow_the_budget_shown_on_a_large_corpus(at):
    # On a large corpus the count rule can run out of pairs before the score rule's top budget;
    # the readout, the marked line and the highlighted row must all name the budget shown (not the
    # merges the count run happened to learn).
    r = W.compute("wp-lengths", {"corpus": C.DOCSTRINGS, "at": at})
    table = r["tables"][0]
    [row] = [table["rows"][i] for i in table["highlight"]]
    budget = row[0]
    assert readout(r, "merge budget") == str(budget)
    [line] = [v for v in r["charts"][0]["vlines"] if len(v) > 2 and v[2]]
    assert line[0] == budget
    assert readout(r, "count rule: pieces") == str(row[1]) and readout(r, "score rule: pieces") == str(row[2])
    # every series is drawn against the budget, so the marked line meets both curves
    for series in r["charts"][0]["series"]:
        assert budget in [p[0] for p in series["points"]]


def test_uni_vs_bpe_has_a_size_control_that_lowers_the_largest_size():
    full = W.compute("uni-vs-bpe", {})
    fifth = W.compute("uni-vs-bpe", {"upto": 20})
    top_full, top_fifth = int(readout(full, "largest size")), int(readout(fifth, "largest size"))
    floor = full["tables"][0]["rows"][0][0]
    assert fifth["tables"][0]["rows"][0][0] == floor and len(fifth["tables"][0]["rows"]) == 14
    # a fifth of the way from the floor to the ceiling, in whole rows
    assert top_fifth == floor + (top_full - floor) * 20 // 100


def test_typed_text_is_cut_with_ids_and_bytes_from_the_library():
    r = W.compute("bpe-bytes", {"text": "café"})
    [chars, bytes_] = [s for s in r["pieces"] if s["text"]]
    # byte-level pieces: café is 5 UTF-8 bytes, 63 61 66 C3 A9 (é = U+00E9 = C3 A9)
    assert bytes.fromhex(" ".join(p[3] for p in bytes_["pieces"])) == "café".encode("utf-8")
    for s in (chars, bytes_):
        assert s["counts"].startswith(f"{len(s['pieces'])} pieces · 4 characters · 5 bytes")
        for piece, kind, i, hex_, source in s["pieces"]:
            assert isinstance(i, int) and source in "café"
    # the opening state is unchanged by a text equal to the sentence
    assert W.compute("bpe-fit", {"text": C.SENTENCE}) == W.compute("bpe-fit", {})


def test_stand_in_keeps_the_score_rule_longer_at_every_budget():
    # WordPiece page: "The score-driven line is above the count-driven one at every budget on both
    # corpora". On the stand-in, every budget above zero (at zero both are the spelled corpus).
    r = W.compute("wp-lengths", {"corpus": C.DOCSTRINGS})
    rows = r["tables"][0]["rows"]
    assert rows[0][1] == rows[0][2]
    assert all(score > count for _, count, score, _ in rows[1:]), rows
    assert r["conclusion"]["differs"] == []


def test_widgets_say_where_the_stand_in_differs_from_the_page():
    # Unigram page: Unigram's corpus is shorter "everywhere"; SentencePiece page: the front mark
    # "is shorter at every size from 52 rows up". Where a corpus disagrees the widget names the sizes.
    for wid, corpus, a, b in (("uni-vs-bpe", C.DOCSTRINGS, 2, 1), ("sp-lengths", C.OURS, 1, 2)):
        r = W.compute(wid, {"corpus": corpus})
        rows = r["tables"][0]["rows"][1 if wid == "uni-vs-bpe" else 0:]
        where = [row[0] for row in rows if row[a] >= row[b]]
        assert where and all(str(size) in r["conclusion"]["differs"][0] for size in where), (wid, r["conclusion"])


def test_a_long_text_is_counted_in_full_though_drawn_in_part():
    text = " ".join(["The lower cost of the new analysis was not expected by the committee."] * 150)  # 10,649 characters
    r = W.compute("bpe-fit", {"text": text})
    [strip] = [s for s in r["pieces"] if s["text"]]
    assert len(strip["pieces"]) == W.DRAWN < strip["total"]
    assert readout(r, "text pieces") == str(strip["total"])
    assert readout(r, "text words") == str(13 * 150)  # 13 words a sentence, counted by hand
    assert readout(r, "glued back exactly") == "yes"
    sizes = W.compute("wp-sizes", {"text": text})
    assert sizes["tables"][0]["rows"][-1][1] == sizes["pieces"][-1]["total"]


def test_our_eighteen_sentences_have_the_properties_the_page_states():
    # BPE page: "eighteen short sentences", "72 distinct words across 133 occurrences", "The corpus uses
    # 36 distinct characters, and the table comes to 51 rows", "the corpus goes from 133 words to 648
    # pieces"; "Five of the seven are absent ... The corpus does have expected, and lower, and cost, and
    # analysis"; "The corpus does contain the letter z ... What it does not contain is any word ending in z".
    # Counted here with plain Python over the text, not by the library.
    words = [w for line in C.EIGHTEEN for w in line.split()]
    assert len(C.EIGHTEEN) == 18 and len(words) == 133 and len(set(words)) == 72
    assert len(set("".join(words))) == 36
    symbols = {c + ("</w>" if i == len(w) - 1 else "") for w in words for i, c in enumerate(w)}
    assert len(symbols) == 51 and sum(map(len, words)) == 648
    sentence = C.SENTENCE.split()
    assert [w for w in sentence if w in set(words)] == ["Dr.", "the"]
    assert {"expected", "lower", "cost", "analysis"} <= set(words)
    assert set(C.SENTENCE.replace(" ", "")) <= set("".join(words))
    assert any("z" in w for w in words) and not any(w.endswith("z") for w in words)


def test_our_eighteen_sentences_reproduce_the_pages_numbers_that_follow_from_them():
    ours = {"corpus": C.OURS}
    curve = W.compute("bpe-curve", ours)
    # "the table comes to 51 rows" + the stand-in row; "the sentence encodes to 45 pieces ... the
    # corpus goes from 133 words to 648 pieces"
    assert readout(curve, "floor (alphabet + [UNK])") == "52"
    assert curve["tables"][0]["rows"][0] == [52, 648, 45]
    fit = W.compute("bpe-fit", ours)
    cut = [p[0] for p in fit["pieces"][0]["pieces"]]
    # "low-cost comes apart as lo, w, the hyphen on its own, and cost with its marker"
    assert cut[cut.index("lo"):cut.index("lo") + 4] == ["lo", "w", "-", "cost</w>"]
    readings = {row[0]: (row[2], row[5]) for row in fit["tables"][0]["rows"]}
    # "cost, which is one piece alone and the last of four inside low-cost"; "expected is one piece
    # and its own stem is three"; "handed the word on its own it answers one piece" (analysis)
    assert readings["cost"] == (1, 4) and readings["expected"] == (1, 3) and readings["analysis"][0] == 1
    # SentencePiece page: "The front-marked fit returns the sentence exactly"; the other gives
    # "Dr. Alvare[UNK]didn't expect the low-cost re-analysis."
    trip = W.compute("sp-roundtrip", {"corpus": C.OURS, "size": -1})
    assert readout(trip, "front: exact") == "yes"
    assert readout(trip, "end gives") == "Dr. Alvare[UNK]didn't expect the low-cost re-analysis."
    # SentencePiece page: "the very first merge of all joins the letter e to the space that follows it"
    assert readout(W.compute("sp-no-cut", ours), "first merge") == "e + \u2581"
    # WordPiece page: "The pair highest up the chart is o followed by f, which occurs three times";
    # "eighteen never end one"
    best = readout(W.compute("wp-scatter", ours), "best score")
    assert best.startswith("o ##f") and ", 3 times," in best
    assert readout(W.compute("wp-open-end", ours), "never end one") == "18"
    # Unigram page: at the ceiling "it reads it in 133 ... And 133 is the floor, since the corpus
    # [has 133 words]": one piece per word
    rows = W.compute("uni-vs-bpe", ours)["tables"][0]["rows"]
    assert rows[-1][2] == 133


# ------------------------------------------------------------------------------------------------
# The pages' conclusions on the stand-in: each written down with the page's words, and checked on
# the widget's tables and readouts (not on the widget's own verdict, which is checked against it)


def _rows(r, i=0):
    return r["tables"][i]["rows"]


def _fit_readings(r):
    return all(n == 1 and m > 1 for _, _, n, _, _, m in _rows(r))


def _curve_falls(r):
    rows = _rows(r)  # [rows, corpus pieces, sentence pieces]
    falls = all(b[1] < a[1] for a, b in zip(rows, rows[1:]))
    return falls and (1 - rows[-1][2] / rows[0][2]) < (1 - rows[-1][1] / rows[0][1])


def _bytes_longer(r):
    return (int(readout(r, "corpus pieces (bytes)")) > int(readout(r, "corpus pieces (characters)"))
            and all(row[3] == row[4] == "yes" for row in _rows(r)))


def _unigram_shorter(r):
    rows = _rows(r)[1:]  # [asked, BPE corpus, Unigram corpus, BPE sentence, Unigram sentence], above the floor
    return all(u < b for _, b, u, _, _ in rows) and all(us > bs for _, _, _, bs, us in rows)


def _unigram_whole_words(r):
    return int(readout(r, "Unigram learned rows ending a word")) > int(readout(r, "BPE learned rows ending a word"))


def _count_and_score_disagree(r):
    return ", score rank 1" not in readout(r, "commonest") and ", count rank 1" not in readout(r, "best score")


def _one_unmarked_first(r):
    words = len(C.SENTENCE.split())
    return all(sum(not p[0].startswith("##") for p in s["pieces"]) == words and not s["pieces"][0][0].startswith("##")
               for s in r["pieces"])


def _open_end(r):
    # Alvarez, zebra and you under both markings, cut here with the widget's own fits' opening state
    return all(readout(W.compute("wp-open-end", {"corpus": C.OURS, "word": w}), f"{w}, continuation marks") == c
               and readout(W.compute("wp-open-end", {"corpus": C.OURS, "word": w}), f"{w}, end marks") == e
               for w, c, e in (("Alvarez", "7 pieces", "refused ([UNK])"), ("zebra", "refused ([UNK])", "5 pieces"),
                               ("you", "refused ([UNK])", "refused ([UNK])")))


def _score_longer(r):
    return all(score > count for budget, count, score, _ in _rows(r) if budget > 0)


def _extends(r):
    n, of = (int(x) for x in readout(r, "extend a ▁ piece").split(" of "))
    return 1 / 3 <= n / of <= 1 / 2 and int(readout(r, "rows that are another row with ▁ in front")) > 0


def _roundtrip(r):
    return readout(r, "front: exact") == "yes" and readout(r, "end: exact") == "no"


def _front_shorter(r):
    return all(front < end for _, front, end, _, _ in _rows(r))


def _inner_spaces(r):
    return int(readout(r, "pieces with a space not at the front")) > 0 and readout(r, "first merge") == "e + \u2581"


def _some_span(r):
    spans = [row[3] for row in r["tables"][0]["rows"]]
    return "yes" in spans and "no" in spans


def _cjk(r):
    (_, em, _, el, es), (_, fm, _, fl, fs) = _rows(r)
    return fm > em and fl < el and fs < es and readout(r, "end: characters held again with a line-end mark") == "3"


# widget -> (the page's conclusion, in its words, the check, where the stand-in differs: a part of the
# widget's own verdict, or None where it holds in full)
PAGE_CONCLUSIONS = {
    "bpe-fit": ("BPE: 'handed the word on its own it answers one piece' but not inside the sentence", _fit_readings, None),
    "bpe-curve": ("BPE: 'Both curves fall'; the held-out sentence gains far less", _curve_falls, None),
    "bpe-two-stage": ("BPE: 'only two of them produced a row that spans a space' (permitted, not required)",
                      _some_span, "all 9 stage-two rows span a space"),
    "bpe-bytes": ("BPE: bytes spend merges rebuilding letters, both glue back exactly", _bytes_longer, None),
    "uni-vs-bpe": ("Unigram: 'On the corpus the shrunk vocabulary wins everywhere'; 'On the held-out sentence it "
                   "loses everywhere'", _unigram_shorter, None),
    "uni-pieces": ("Unigram: a vocabulary of whole words against merging's fragments", _unigram_whole_words, None),
    "wp-scatter": ("WordPiece: the commonest pair is not the best scored", _count_and_score_disagree, None),
    "wp-sizes": ("WordPiece: 'Exactly one piece per word carries no mark, and it is always the first'",
                 _one_unmarked_first, None),
    "wp-open-end": ("WordPiece: Alvarez passes one marking and fails the other, zebra the reverse, you both", _open_end,
                    None),
    "wp-lengths": ("WordPiece: 'The score-driven line is above the count-driven one at every budget'", _score_longer, None),
    "sp-extends": ("SentencePiece: 'nearly half the learned table is about where words start'", _extends, None),
    "sp-roundtrip": ("SentencePiece: 'The front-marked fit returns the sentence exactly'; the end mark does not",
                     _roundtrip, None),
    "sp-lengths": ("SentencePiece: 'the front-marked fit is shorter at every size from 52 rows up'", _front_shorter,
                   "not shorter at 135 rows (266 against 265)"),
    "sp-no-cut": ("SentencePiece: 'the very first merge of all joins the letter e to the space that follows it'",
                  _inner_spaces, None),
    "sp-cjk": ("SentencePiece: the front scheme finds the words shared across the five lines", _cjk, None),
}


def test_every_stand_in_widget_has_its_pages_conclusion_written_down():
    large = {w.id for w in W.WIDGETS.values() if w.large}
    assert len(large) == 14 and set(PAGE_CONCLUSIONS) == large | {"sp-cjk"} == set(W.CONCLUSIONS)


@pytest.mark.parametrize("wid", list(PAGE_CONCLUSIONS))
def test_the_stand_in_keeps_the_pages_conclusion_or_says_where_not(wid):
    named, check, differs = PAGE_CONCLUSIONS[wid]
    state = {"corpus": C.OURS} if W.WIDGETS[wid].large else {}
    if wid == "sp-roundtrip":
        state["size"] = -1
    r = W.compute(wid, state)
    verdict = r["conclusion"]
    assert verdict["text"] == W.CONCLUSIONS[wid]
    if differs is None:
        assert check(r), f"the stand-in loses the page's conclusion: {named}"
        assert verdict["differs"] == [], f"{wid} says it differs from {named}: {verdict['differs']}"
    else:
        assert not check(r), f"the stand-in now keeps the page's conclusion in full ({named}): drop the exception"
        assert any(differs in d for d in verdict["differs"]), (f"{wid} does not say where it differs from {named}",
                                                               verdict["differs"])


def test_a_widget_says_where_a_corpus_loses_the_pages_conclusion():
    # the docstrings: Unigram is longer than BPE on the corpus at the middle sizes (its table says so)
    r = W.compute("uni-vs-bpe", {"corpus": C.DOCSTRINGS})
    longer = [asked for asked, b, u, _, _ in _rows(r)[1:] if u >= b]
    assert longer and r["conclusion"]["differs"][0] == f"Unigram's corpus not shorter at {', '.join(map(str, longer))} rows"


def test_the_cjk_lines_give_the_pages_numbers():
    # SentencePiece page: "It learns three merges, stops at 17 rows however many it was asked for, reads the five
    # lines in 18 pieces and the new sentence in five. The front-marked scheme learns six merges, reaches 18 rows,
    # reads the lines in 15 pieces and the sentence in three, and those three are student, then research and
    # life together, then origin." "Three of its 17 are a character it already holds".
    r = W.compute("sp-cjk", {"size": 40})
    assert _rows(r) == [["end </w>", 3, 17, 18, 5], ["front ▁", 6, 18, 15, 3]]
    front = next(s for s in r["pieces"] if s["label"].startswith("front"))
    assert [p[0] for p in front["pieces"]] == ["\u2581学生", "研究生命", "起源"]
    assert readout(r, "end: characters held again with a line-end mark") == "3"
    # five lines, the seven words of the page, and never the new sentence
    text = "".join(C.CJK_LINES)
    assert len(C.CJK_LINES) == 5 and all(w in text for w in ("研究", "生命", "起源", "学生", "很", "多", "好"))
    assert not any(C.CJK_HELD_OUT in line for line in C.CJK_LINES)


def test_a_corpus_too_large_for_a_widgets_work_is_sampled_evenly_and_labelled(user_corpora, monkeypatch):
    lines = [f"line {i} of the corpus: the lower cost of analysis number {i * 7 % 13}" for i in range(200)]
    size = sum(len(line.encode("utf-8")) + 1 for line in lines)
    user_corpora["big"] = lines
    user_corpora["every4"] = lines[::4]  # the sample by hand: every 4th line from the first
    monkeypatch.setitem(W.SAMPLE_BYTES, "bpe-curve", size // 4 + 1)  # 4 is the smallest k under it
    r = W.compute("bpe-curve", {"corpus": "big"})
    assert "Corpus: every 4th line of your big (50 of 200 lines" in r["note"] and "60 s bound" in r["note"]
    monkeypatch.setitem(W.SAMPLE_BYTES, "bpe-curve", size)  # the by-hand sample itself is not sampled again
    by_hand = W.compute("bpe-curve", {"corpus": "every4"})
    assert r["tables"] == by_hand["tables"] and r["numbers"] == by_hand["numbers"]
    # under the cap, all of it; a widget that fits once always takes all of it
    assert "Corpus: your big (200 lines)" in W.compute("bpe-curve", {"corpus": "big"})["note"]
    assert "bpe-fit" not in W.SAMPLE_BYTES
    # a corpus uploaded again under the same name is sampled afresh
    monkeypatch.setitem(W.SAMPLE_BYTES, "bpe-curve", size // 4 + 1)
    user_corpora["big"] = list(reversed(lines))
    again = W.compute("bpe-curve", {"corpus": "big"})
    user_corpora["every4"] = list(reversed(lines))[::4]
    monkeypatch.setitem(W.SAMPLE_BYTES, "bpe-curve", size)
    assert again["tables"] == W.compute("bpe-curve", {"corpus": "every4"})["tables"]
