"""The two-stage widget's recipe switch: the page's two-stage BPE against SuperBPE
(``preset="superbpe"``) on the same corpus and sizes. The SuperBPE numbers on the four words come
from the pure-Python reference (``subwords.reference.superword``) and from hand counts written
here, never from the code under test."""

from __future__ import annotations

import pytest
from selenium.webdriver.common.by import By

from subwords.explore import corpora as C
from subwords.explore import widgets as W
from subwords.reference import superword as ref

from test_browser import numbers, open_page, set_control, severe, unstick, wait_widget
from test_server import post_json

WID = "bpe-two-stage"
# The four words as the page's recipe reads the table: each word its count of times, in the
# table's order, single spaces (docs/API.md, two-stage BPE).
FOUR_TEXT = "low low low low low lower lower newest newest newest newest newest newest widest widest widest"


def readout(r, label):
    [v] = [v for k, v in r["numbers"] if k == label]
    return v


def gpt2(piece: bytes) -> str:
    """A byte-level row as its library writes it: the space byte is Ġ (GPT-2's stand-in, U+0120)."""
    return piece.decode("utf-8").replace(" ", "\u0120")


def test_the_corpus_superbpe_reads_is_the_page_recipes_one_text():
    assert W.FOUR_TEXT == FOUR_TEXT
    assert FOUR_TEXT.split().count("newest") == 6 and FOUR_TEXT.split().count("low") == 5


def test_the_recipe_switch_changes_the_result():
    page, sup = W.compute(WID, {}), W.compute(WID, {"recipe": "superbpe"})
    assert page != sup
    # the page's numbers stay (BPE page: three stage-two merges, two spanning a space, 15 pieces)
    assert [readout(page, k) for k in ("stage-two merges", "rows spanning a space", "corpus pieces")] == [3, 2, 15]
    assert readout(page, "transition t (rows)") == 22 and readout(sup, "transition t (rows)") == 256 + 10
    assert [r[1] for r in page["tables"][0]["rows"]] == ["newest</w>newest</w>", "low</w>low</w>", "er</w>"]
    assert all("\u0120" in r[1] for r in sup["tables"][0]["rows"])  # byte-level rows: Ġ is the space byte
    # both recipes side by side, the one shown highlighted
    assert page["tables"][1]["rows"] == sup["tables"][1]["rows"]
    assert page["tables"][1]["highlight"] == [0] and sup["tables"][1]["highlight"] == [1]


@pytest.mark.parametrize("stage_one, room", [(22, 3), (24, 8), (16, 5), (12, 3)])
def test_superbpe_on_the_four_words_is_the_references(stage_one, room):
    # The same merges as the page's recipe: stage one asked for stage_one - 12 merges (the page's
    # floor is 12 rows), so t = 256 bytes + those merges (at least one), and `room` more rows.
    t = 256 + max(stage_one - 12, 1)
    want = ref.train([FOUR_TEXT], vocab_size=t + room, superword_at=t)
    first, second = want["merges"][:want["stage_one"]], want["merges"][want["stage_one"]:]
    r = W.compute(WID, {"recipe": "superbpe", "stage_one": stage_one, "room": room})
    assert readout(r, "transition t (rows)") == t
    assert readout(r, "stage-one merges") == len(first)
    assert [row[1] for row in r["tables"][0]["rows"]] == [gpt2(a + b) for a, b in second]
    assert [row[2] for row in r["tables"][0]["rows"]] == [(a + b).decode().replace(" ", "\u2423") for a, b in second]
    # a row spans a space when a space follows its first non-space byte (its leading space is its word's)
    spanning = [(a + b).decode().replace(" ", "\u2423") for a, b in second if " " in (a + b).decode().lstrip()]
    assert [row[2] for row in r["tables"][0]["rows"] if row[3] == "yes"] == spanning
    assert readout(r, "rows spanning a space") == len(spanning)
    # the corpus's pieces: each span of the text spelled in bytes and every merge replayed by rank
    ranks = {p: k for k, p in enumerate(want["merges"])}
    pieces = sum(len(ref.replay([bytes([b]) for b in s.encode()], ranks)) * n
                 for s, n in ref.spans_of([FOUR_TEXT]).items())
    assert readout(r, "corpus pieces") == pieces
    sentence = sum(len(ref.replay([bytes([b]) for b in s.encode()], ranks)) for s in ref.pieces(C.SENTENCE, ref.SPANS))
    assert readout(r, "sentence pieces") == sentence
    assert r["tables"][1]["rows"][1][1:] == [t, len(first), len(second), len(spanning), pieces, sentence]


def test_superbpe_opening_state_worked_by_hand():
    # The four words' text holds no digit, no two punctuation marks, no space before a space: the span
    # expression matches nothing, so the whole text is one span. After stage one ' newest' is one
    # piece (the reference's stage one, above), and six in a row give 5 adjacent pairs; 'low' then four
    # ' low' give 3 pairs of ' low' + ' low'; ' newest' + ' newest' is the first stage-two merge.
    assert ref.spans_of([FOUR_TEXT]) == {FOUR_TEXT: 1}
    r = W.compute(WID, {"recipe": "superbpe"})
    rows = r["tables"][0]["rows"]
    assert rows[0][1:] == ["\u0120newest\u0120newest", "\u2423newest\u2423newest", "yes"]
    assert rows[1][1:] == ["\u0120low\u0120low", "\u2423low\u2423low", "yes"]
    # 'newest newest low low' (the page's example): 'newest' opens the text with no space, so it is
    # not ' newest' and stays in four pieces n e w est; then ' newest', then ' low low'
    example = r["pieces"][0]
    assert [p[0] for p in example["pieces"]] == ["n", "e", "w", "est", "\u0120newest", "\u0120low\u0120low"]
    assert [p[1] for p in example["pieces"]] == ["", "", "", "", "", "span"]


def test_unknown_recipe_is_refused_with_the_choices():
    with pytest.raises(W.ExploreError, match="recipe must be one of page, superbpe; got 'boundless'"):
        W.compute(WID, {"recipe": "boundless"})


def test_a_bad_recipe_is_a_400_naming_the_choices(server):
    status, data = post_json(server, {"widget": WID, "state": {"recipe": "superbpe!"}})
    assert status == 400 and data["error"] == "recipe must be one of page, superbpe; got 'superbpe!'"
    status, data = post_json(server, {"widget": WID, "state": {"recipe": "superbpe", "corpus": "nope"}})
    assert status == 400 and "corpus must be one of four" in data["error"]
    status, data = post_json(server, {"widget": WID, "state": {"recipe": "superbpe"}})
    assert status == 200 and readout(data, "transition t (rows)") == 266


MINE = ["the cost of the report was lower than the cost of the analysis",
        "the report of the week was expected by the board", "a report on the cost of the week"] * 6


def test_on_a_users_corpus_and_typed_text(user_corpora):
    user_corpora["mine"] = MINE
    text = "the cost of the week"
    for recipe in ("page", "superbpe"):
        r = W.compute(WID, {"corpus": "mine", "recipe": recipe, "text": text})
        assert "your mine" in r["note"]
        [cut] = [s for s in r["pieces"] if s.get("text")]
        assert cut["label"].startswith("your text, ") and readout(r, "text pieces") == cut["total"]
        # every character of the text, once, in order (end-marked pieces leave out the spaces between words)
        sources = "".join(p[4] for p in cut["pieces"])
        assert sources == text if recipe == "superbpe" else sources.replace(" ", "") == text.replace(" ", "")
        assert r["tables"][1]["rows"][0 if recipe == "page" else 1][-1] == cut["total"]
        assert readout(r, "stage-two merges") > 0
    # the same merges asked of both recipes
    page, sup = r["tables"][1]["rows"]
    assert page[2] == sup[2] or "stage one" in r["note"]


def test_a_large_users_corpus_is_sampled_and_says_so(user_corpora, monkeypatch):
    lines = [f"line {i}: the cost of the report of week {i % 7} was lower" for i in range(300)]
    user_corpora["big"] = lines
    monkeypatch.setitem(W.SAMPLE_BYTES, WID, W.corpus_bytes(lines) // 3)
    r = W.compute(WID, {"corpus": "big", "recipe": "superbpe"})
    assert "every 4th line of your big (75 of 300 lines" in r["note"]


def test_the_conclusion_holds_on_the_four_words_and_says_where_it_does_not():
    # BPE page: "only two of them produced a row that spans a space" -- permitted, not required
    r = W.compute(WID, {})
    assert r["conclusion"] == {"text": W.CONCLUSIONS[WID], "differs": []}
    # at t = 257 SuperBPE's stage two learns est, est + the space after it, lo: one of three spans a space
    r = W.compute(WID, {"recipe": "superbpe", "stage_one": 12})
    assert [row[2] for row in r["tables"][0]["rows"]] == ["est", "est\u2423", "lo"] and r["conclusion"]["differs"] == []
    # on our eighteen sentences every one of the page's recipe's stage-two rows spans a space: the widget says so
    r = W.compute(WID, {"corpus": C.OURS})
    rows = r["tables"][0]["rows"]
    assert rows and all(row[3] == "yes" for row in rows)
    assert r["conclusion"]["differs"] == [f"all {len(rows)} stage-two rows span a space"]


# ------------------------------------------------------------------------------------------------
# In the browser


def test_the_switch_in_the_browser_and_on_the_static_page(browser, server, static_page, screenshots):
    open_page(browser, server.url + "#w-" + WID)
    unstick(browser)
    page = numbers(browser, WID)
    assert page["transition t (rows)"] == "22" and page["corpus pieces"] == "15"
    element = browser.find_element(By.ID, f"w-{WID}")
    (screenshots / f"{WID}-page.png").write_bytes(element.screenshot_as_png)
    set_control(browser, WID, "recipe", "superbpe")
    sup = numbers(browser, WID)
    want = W.compute(WID, {"recipe": "superbpe"})
    assert sup == {k: str(v) for k, v in want["numbers"]}
    assert "recipe=superbpe" in browser.current_url
    (screenshots / f"{WID}-superbpe.png").write_bytes(element.screenshot_as_png)
    set_control(browser, WID, "corpus", C.OURS)
    ours = numbers(browser, WID)
    assert ours == {k: str(v) for k, v in W.compute(WID, {"recipe": "superbpe", "corpus": C.OURS})["numbers"]}
    (screenshots / f"{WID}-superbpe-eighteen.png").write_bytes(element.screenshot_as_png)
    assert severe(browser) == []
    # the static page holds every state: the same numbers with no server
    open_page(browser, static_page.as_uri() + f"#{WID}.recipe=superbpe")
    wait_widget(browser, WID)
    assert numbers(browser, WID) == sup
    assert severe(browser) == []


def test_superbpe_on_a_users_corpus_is_the_references(user_corpora):
    # On a corpus of the user's the widget asks both recipes for the merges its note names; SuperBPE's
    # stage-two rows there are the reference's at t = 256 + the stage-one merges asked.
    import re

    user_corpora["mine"] = MINE
    r = W.compute(WID, {"corpus": "mine", "recipe": "superbpe", "stage_one": 18, "room": 4})
    one, two = map(int, re.search(r"stage one asked for (\d+) merges, stage two for (\d+)", r["note"]).groups())
    t = 256 + max(one, 1)
    assert readout(r, "transition t (rows)") == t
    want = ref.train(MINE, vocab_size=t + two, superword_at=t)
    second = want["merges"][want["stage_one"]:]
    assert second and any(" " in (a + b).decode().lstrip() for a, b in second)  # superwords to compare
    assert readout(r, "stage-one merges") == want["stage_one"]
    assert [row[1] for row in r["tables"][0]["rows"]] == [gpt2(a + b) for a, b in second]
