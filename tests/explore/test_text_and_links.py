"""The page as a reader uses it, in headless chromium: the text box cut by every widget that
shows a cut (typed, and pasted), state links that open at their widget and an address edited
by hand, chart ticks at round values, a corpus named on the command line opening every
large-corpus widget, and screenshots of every widget at two window sizes."""

from __future__ import annotations

import math
import os
import subprocess
import sys
import time

import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

from subwords.explore import widgets as W

from test_browser import numbers, open_page, severe, unstick, wait_ready

TEXT_WIDGETS = [w.id for w in W.WIDGETS.values() if w.text]

# What a person types or pastes. The CJK line: our own, "students research the origin of life"
# (学生 student, 研究 research, 生命 life, 起源 origin; the SentencePiece page's words).
CAFE = "café"
CJK = "学生研究生命的起源"
SENTENCE = "Dr. Alvarez didn't expect the low-cost re-analysis."
# About 10 KB of ordinary English prose of our own (no model mark such as </w> in it).
PARAGRAPH = ("The committee met on a wet Tuesday to read the quarterly report. Costs had risen in two of the "
             "three regions, and the analysis of the lower estimates was expected to take another week. "
             "Nobody disputed the figures; what they disputed was what the figures were for. ")
PASTED = (PARAGRAPH * (10_240 // len(PARAGRAPH) + 1))[:10_240]

YOURS = """
return [...document.querySelectorAll("#w-" + arguments[0] + " .strip.yours")].map(s => ({
  label: s.querySelector(".label .name").textContent,
  counts: (s.querySelector(".counts") || {}).textContent,
  pieces: [...s.querySelectorAll(".piece")].map(p => p.dataset.piece),
  hex: [...s.querySelectorAll(".piece .hex")].map(h => h.textContent)}));
"""


def text_widgets_ready(browser):
    return browser.execute_script(
        "return arguments[0].every(id => document.getElementById('w-' + id).dataset.ready === '1')", TEXT_WIDGETS)


def put_text(browser, text, typed):
    """Type the text key by key (``typed``) or paste it at once, then wait for every widget that
    cuts it to have answered."""
    box = browser.find_element(By.ID, "text")
    browser.execute_script("for (const id of arguments[0]) document.getElementById('w-' + id).dataset.ready = 'pending'",
                           TEXT_WIDGETS)
    if typed:
        box.clear()
        box.send_keys(text)
    else:  # a paste: the value arrives at once, with one input event
        browser.execute_script("const b = arguments[0]; b.value = arguments[1];"
                               "b.dispatchEvent(new Event('input', {bubbles: true}))", box, text)
    WebDriverWait(browser, 120, poll_frequency=0.05).until(text_widgets_ready)
    assert browser.find_element(By.ID, "text").get_attribute("value") == text


def library_cuts(wid, text):
    """The cuts the library gives for the typed text (the strips marked as the text box's)."""
    state = {"text": text} if text != SENTENCE else {}
    return [[p[0] for p in s["pieces"]] for s in W.compute(wid, state).get("pieces", []) if s.get("text")]


def test_every_text_widget_is_declared_and_cuts_the_sentence_at_first(browser, server):
    # the widgets whose page shows a cut: at least every one that cut the running sentence before
    assert {"bpe-fit", "bpe-fallback", "bpe-bytes", "uni-pieces", "wp-sizes", "sp-stream", "sp-roundtrip"} <= set(TEXT_WIDGETS)
    open_page(browser, server.url)
    assert browser.find_element(By.ID, "text").get_attribute("value") == SENTENCE
    for wid in TEXT_WIDGETS:
        shown = browser.execute_script(YOURS, wid)
        assert shown, f"{wid} shows no cut of the text box"
        assert [s["pieces"] for s in shown] == library_cuts(wid, SENTENCE), wid


@pytest.mark.parametrize("text,typed", [(SENTENCE.replace("low-cost", "high-cost"), True), (CAFE, True), (CJK, True),
                                        (PASTED, False)], ids=["sentence", "cafe", "cjk", "pasted-10KB"])
def test_typing_recuts_every_widget_that_shows_a_cut(browser, server, text, typed):
    if browser.current_url.split("#")[0] != server.url:
        open_page(browser, server.url)
    before = {wid: browser.execute_script(YOURS, wid) for wid in TEXT_WIDGETS}
    put_text(browser, text, typed)
    assert severe(browser) == []
    n_bytes = len(text.encode("utf-8"))
    for wid in TEXT_WIDGETS:
        err = browser.find_element(By.CSS_SELECTOR, f"#w-{wid} .error")
        assert not err.is_displayed(), (wid, err.text)
        shown = browser.execute_script(YOURS, wid)
        assert shown and shown != before[wid], f"{wid}: the cut did not change when the text did"
        # what is drawn is the library's cut of what was typed, piece for piece
        assert [s["pieces"] for s in shown] == library_cuts(wid, text), wid
        for s in shown:  # the counts are of the typed text (Python's own len, not the page's)
            assert s["label"].startswith("your text"), (wid, s["label"])
            total = int(s["label"].rsplit("(", 1)[1].split()[0])
            said = f"{total} piece" if total == 1 else f"{total} pieces"
            assert f"{said} · {len(text)} characters · {n_bytes} bytes" in s["counts"], (wid, s["counts"])
            # a long text is drawn up to W.DRAWN pieces a strip, and says so
            assert len(s["pieces"]) == min(total, W.DRAWN), (wid, total)
            assert (total > W.DRAWN) == (f"the first {W.DRAWN:,} drawn" in s["counts"]), (wid, s["counts"])
    # the byte-level vocabulary's pieces are bytes: in hex they spell the text's UTF-8, byte for byte
    # (café: 63 61 66 C3 A9, é being the two bytes C3 A9)
    bytes_strip = next(s for s in browser.execute_script(YOURS, "bpe-bytes") if ", bytes (" in s["label"])
    drawn = bytes.fromhex(" ".join(bytes_strip["hex"]))
    assert text.encode("utf-8").startswith(drawn) and (len(bytes_strip["pieces"]) == W.DRAWN or drawn == text.encode("utf-8"))
    if text == CAFE:
        assert " ".join(bytes_strip["hex"]).split() == ["63", "61", "66", "C3", "A9"]


def test_bytes_as_hex_and_ids_are_toggles(browser, server):
    open_page(browser, server.url)
    put_text(browser, CAFE, True)
    piece = browser.find_elements(By.CSS_SELECTOR, "#w-bpe-bytes .strip.yours .piece")[-1]
    shown = piece.text
    browser.find_element(By.ID, "show-hex").click()
    assert piece.text != shown and all(c in "0123456789ABCDEF " for c in piece.text.split("\n")[0]), piece.text
    browser.find_element(By.ID, "show-hex").click()
    assert piece.text == shown
    browser.find_element(By.ID, "show-ids").click()
    ids = browser.find_elements(By.CSS_SELECTOR, "#w-bpe-bytes .strip.yours .piece .id")
    assert ids and all(i.is_displayed() and i.text.isdigit() for i in ids)
    browser.find_element(By.ID, "show-ids").click()


def test_text_box_bounds_and_refusals(server):
    from test_server import post_json

    status, answer = post_json(server, {"widget": "bpe-fit", "state": {"text": "x" * (W.MAX_TEXT + 1)}})
    assert status == 400 and "up to 16,000" in answer["error"]
    status, answer = post_json(server, {"widget": "uni-lattice", "state": {"text": "low"}})
    assert status == 400 and "cuts no text of yours" in answer["error"]
    status, answer = post_json(server, {"widget": "bpe-fit", "state": {"text": 5}})
    assert status == 400 and "text must be a string" in answer["error"]


def _top(browser, wid):
    return browser.execute_script(f'return document.getElementById("w-{wid}").getBoundingClientRect().top')


def _bar(browser):
    return browser.execute_script('return document.getElementById("bar").getBoundingClientRect().bottom')


def _wait_top(browser, wid):
    """The widget's top edge sits just under the sticky bar (the page scrolled to it)."""
    WebDriverWait(browser, 30, poll_frequency=0.1).until(
        lambda d: 0 <= _top(d, wid) - _bar(d) <= 40 and d.execute_script("return window.scrollY") > 500)


@pytest.mark.parametrize("where", ["server", "static"])
def test_a_state_link_opens_at_its_widget_and_the_address_can_be_edited(browser, server, static_page, where):
    base = server.url if where == "server" else static_page.as_uri()
    open_page(browser, base + "#uni-em.rounds=4")
    _wait_top(browser, "uni-em")
    # Unigram page: "−36.75 to −73.50" after four rounds
    assert numbers(browser, "uni-em")["best spelling of lowest"] == "lo west</w> at -73.50"
    assert browser.execute_script("return document.body.dataset.shown") == "uni-em"
    # editing the address (no reload): the widget takes the new state
    marker = browser.execute_script("window.__same = 1; return 1")
    browser.execute_script('document.getElementById("w-uni-em").dataset.ready = "pending"; location.hash = "#uni-em.rounds=1"')
    WebDriverWait(browser, 30, poll_frequency=0.05).until(
        lambda d: d.execute_script('return document.getElementById("w-uni-em").dataset.ready === "1"'))
    assert browser.execute_script("return window.__same") == marker  # the same page: not reloaded
    assert numbers(browser, "uni-em")["p(low</w>)"] == "0.265"  # Unigram page: "to 0.265" after one round
    assert browser.find_element(By.ID, "c-uni-em-rounds").get_attribute("value") == "1"
    # another widget named by the address: the page scrolls to it
    browser.execute_script('location.hash = "#w-uni-lattice"')
    _wait_top(browser, "uni-lattice")
    # and a widget named in a state link scrolls too, with its state applied
    browser.execute_script('document.getElementById("w-sp-walk").dataset.ready = "pending"; location.hash = "#sp-walk.merges=5"')
    _wait_top(browser, "sp-walk")
    WebDriverWait(browser, 30, poll_frequency=0.05).until(
        lambda d: d.execute_script('return document.getElementById("w-sp-walk").dataset.ready === "1"'))
    assert numbers(browser, "sp-walk")["rows"] == "17"  # 12 + 5 merges
    assert severe(browser) == []


def test_the_index_lists_every_widget_and_its_links_scroll(browser, server):
    open_page(browser, server.url)
    links = browser.find_elements(By.CSS_SELECTOR, "#index a[data-index]")
    assert [a.get_attribute("data-index") for a in links] == list(W.WIDGETS)
    assert browser.execute_script('return getComputedStyle(document.getElementById("index")).position') == "sticky"
    browser.execute_script("window.scrollTo(0, 0)")
    links[20].click()
    _wait_top(browser, list(W.WIDGETS)[20])
    # the index stays on screen after the scroll
    assert browser.find_element(By.ID, "index").is_displayed()
    assert 0 <= browser.execute_script('return document.getElementById("index").getBoundingClientRect().top') < 200


def _round(values, scale):
    """Whether tick values are round: on a linear axis, whole multiples of one step that is 1, 2
    or 5 times a power of ten; on a log axis, each 1, 2, 3 or 5 times a power of ten."""
    if scale == "log":
        for v in values:
            m = v / 10 ** math.floor(math.log10(v) + 1e-9)
            if not any(abs(m - k) < 1e-6 for k in (1, 2, 3, 5)):
                return False
        return True
    if len(values) < 2:
        return True
    step = values[1] - values[0]
    m = step / 10 ** math.floor(math.log10(step) + 1e-9)
    if not any(abs(m - k) < 1e-6 for k in (1, 2, 5)):
        return False
    return all(abs(v / step - round(v / step)) < 1e-6 for v in values)


TICKS = """
return [...document.querySelectorAll("svg.chart")].map(svg => ({
  widget: svg.closest(".widget").id, title: svg.getAttribute("aria-label"),
  ticks: [...svg.querySelectorAll("text.tick")].map(t => [t.dataset.axis, t.dataset.scale, Number(t.dataset.value), t.textContent])}));
"""


@pytest.mark.parametrize("hash_", ["", "#wp-scatter.corpus=docstrings&uni-vs-bpe.upto=20&bpe-curve.at=7&uni-em.corpus=ab",
                                   "#bpe-curve.corpus=docstrings&sp-lengths.corpus=docstrings&wp-lengths.corpus=docstrings"
                                   "&uni-vs-bpe.corpus=docstrings&uni-rounds.size=40&uni-spellings.word=newest"])
def test_chart_ticks_are_round_numbers(browser, server, hash_):
    open_page(browser, server.url + hash_)
    charts = browser.execute_script(TICKS)
    assert len(charts) >= 12
    checked = 0
    for c in charts:
        for axis in ("x", "y"):
            ticks = [t for t in c["ticks"] if t[0] == axis]
            if not ticks:
                continue
            values = sorted(t[2] for t in ticks)
            assert _round(values, ticks[0][1]), (c["widget"], c["title"], axis, values)
            # the label shows the value itself (thousands separated), not a rounded neighbour
            for _, _, v, label in ticks:
                assert float(label.replace(",", "")) == pytest.approx(v), (c["widget"], label, v)
            checked += 1
    assert checked >= 20


CORPUS_LINES = [
    "The quarterly report was expected on Monday, but the analysis of costs took longer.",
    "Lower costs in the north offset higher costs in the south.",
    "A second analysis of the report found the estimates were sound.",
    "The committee asked for a shorter report with fewer tables.",
    "Costs, reports and analyses: the work of every quarter.",
]


def _serve_cli(tmp_path, *files):
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    proc = subprocess.Popen([sys.executable, "-m", "subwords", "explore", "--no-browser", "--port", "0", *files],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        if "serving on" in line:
            return proc, line.split("serving on ", 1)[1].split()[0]
    proc.kill()
    raise AssertionError("the explorer did not start: " + proc.stderr.read())


def test_a_corpus_named_on_the_command_line_opens_every_large_corpus_widget(browser, tmp_path):
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("\n".join(CORPUS_LINES * 8) + "\n", encoding="utf-8")
    proc, url = _serve_cli(tmp_path, str(corpus))
    try:
        open_page(browser, url)
        large = [w.id for w in W.WIDGETS.values() if w.large]
        assert len(large) == 14
        for wid in large:
            select = browser.find_element(By.ID, f"c-{wid}-corpus")
            assert select.get_attribute("value") == "corpus.txt", wid
            assert "Corpus: your corpus.txt (40 lines)" in browser.find_element(By.CSS_SELECTOR, f"#w-{wid} .output").text, wid
        # the address stays clean: the opening corpus is the widgets' opening state
        assert "corpus=" not in browser.current_url
        # one choice for the page sets every large-corpus widget at once
        pick = browser.find_element(By.ID, "page-corpus")
        assert pick.is_displayed()
        browser.execute_script("arguments[0].value = 'docstrings'; arguments[0].dispatchEvent(new Event('change'))", pick)
        wait_ready(browser)
        for wid in large:
            assert browser.find_element(By.ID, f"c-{wid}-corpus").get_attribute("value") == "docstrings", wid
        assert severe(browser) == []
    finally:
        proc.terminate()
        proc.communicate(timeout=30)


SHOT_DIR = os.environ.get("EXPLORE_SHOTS")  # where to keep the screenshots (a temporary folder otherwise)


# 1400 px wide and tall enough for a whole widget in one picture; 1280×720 as a laptop shows it
# (a widget taller than the window is pictured down to the window's foot)
@pytest.mark.parametrize("size", [(1400, 2400), (1280, 720)], ids=["1400", "1280x720"])
def test_screenshots_of_every_widget_at_two_sizes(browser, server, tmp_path_factory, size):
    from pathlib import Path

    out = Path(SHOT_DIR) if SHOT_DIR else tmp_path_factory.mktemp("shots")
    out = out / f"{size[0]}x{size[1]}"
    out.mkdir(parents=True, exist_ok=True)
    browser.set_window_size(*size)
    try:
        open_page(browser, server.url)
        (out / "top.png").write_bytes(browser.get_screenshot_as_png())
        unstick(browser)
        inner = browser.execute_script("return window.innerWidth")
        for wid in W.WIDGETS:
            element = browser.find_element(By.ID, f"w-{wid}")
            browser.execute_script("arguments[0].scrollIntoView()", element)
            (out / f"{wid}.png").write_bytes(element.screenshot_as_png)
            # nothing drawn wider than the window: no sideways scrolling for a widget
            right = browser.execute_script(
                'return Math.max(...[...document.querySelectorAll("#w-" + arguments[0] + " svg.chart")]'
                '.map(s => s.getBoundingClientRect().right), 0)', wid)
            assert right <= inner, (wid, right, inner)
    finally:
        browser.set_window_size(1280, 1000)


def test_old_output_is_greyed_while_new_work_runs(browser, server):
    open_page(browser, server.url)
    # in one script: change a control, then look before the answer can have come back
    during = browser.execute_script("""
      const out = document.querySelector("#w-bpe-walk .output");
      const slider = document.getElementById("c-bpe-walk-merges");
      slider.value = "3"; slider.dispatchEvent(new Event("input"));
      return [out.classList.contains("stale"), out.getAttribute("aria-busy"), getComputedStyle(out).transitionDelay];""")
    assert during[0] and during[1] == "true", during
    WebDriverWait(browser, 30, poll_frequency=0.05).until(
        lambda d: d.execute_script('return document.getElementById("w-bpe-walk").dataset.ready === "1"'))
    after = browser.execute_script('const o = document.querySelector("#w-bpe-walk .output");'
                                   'return [o.classList.contains("stale"), o.getAttribute("aria-busy")]')
    assert after == [False, None], after
    # the style greys a stale output (after a short delay, so a quick answer does not flicker)
    css = browser.execute_script('const o = document.querySelector("#w-bpe-walk .output"); o.classList.add("stale");'
                                 'o.style.transition = "none"; const v = getComputedStyle(o).opacity;'
                                 'o.classList.remove("stale"); o.style.transition = ""; return v')
    assert float(css) < 0.6, css
    assert numbers(browser, "bpe-walk")["corpus pieces"] == "79 → 54"  # BPE page hand table: 79 − 9 − 9 − 7


def test_a_model_on_the_command_line_is_compared_on_the_typed_text_with_its_own_ids(browser, tmp_path):
    import tokenizers

    import subwords
    from subwords import formats

    # a byte-level model of ours, written as a Hugging Face tokenizer.json: the ids the page shows
    # must be the ones the tokenizers library itself gives for the typed text
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("\n".join(CORPUS_LINES * 8) + "\n", encoding="utf-8")
    model = subwords.train(CORPUS_LINES * 8, vocab_size=320, spelling="bytes", pre_split="gpt2")
    path = tmp_path / "tokenizer.json"
    formats.export(model, path, "hf")
    proc, url = _serve_cli(tmp_path, str(corpus), str(path))
    try:
        open_page(browser, url)
        WebDriverWait(browser, 60).until(lambda d: d.execute_script(
            'const b = document.getElementById("compare"); return b && b.dataset.ready === "1"'))
        text = "café costs less"
        box = browser.find_element(By.ID, "text")
        browser.execute_script('document.getElementById("compare").dataset.ready = "pending"')
        box.clear()
        box.send_keys(text)
        WebDriverWait(browser, 60).until(lambda d: d.execute_script(
            'return document.getElementById("compare").dataset.ready === "1"'))
        strips = browser.execute_script("""
          return [...document.querySelectorAll("#compare .strip")].map(s => ({
            label: s.querySelector(".label .name").textContent,
            ids: [...s.querySelectorAll(".piece .id")].map(i => Number(i.textContent)),
            pieces: [...s.querySelectorAll(".piece")].map(p => p.dataset.piece)}))""")
        labels = [s["label"] for s in strips]
        assert labels[0].startswith("ours: BPE fitted to corpus.txt"), labels
        theirs = next(s for s in strips if s["label"].startswith("model: tokenizer.json"))
        assert theirs["ids"] == tokenizers.Tokenizer.from_file(str(path)).encode(text).ids
        assert theirs["pieces"] == tokenizers.Tokenizer.from_file(str(path)).encode(text).tokens
        # the side-by-side table: pieces and bytes per piece for each model
        rows = browser.execute_script('return [...document.querySelectorAll("#compare tbody tr")].map('
                                      'r => [...r.cells].map(c => c.textContent))')
        mine = next(r for r in rows if r[0] == "model: tokenizer.json")
        n = len(theirs["ids"])
        assert mine[1] == str(n) and mine[3] == f"{len(text.encode('utf-8')) / n:.2f}"
        # and the model is a choice of the fitted-vocabulary widget
        options = [o.get_attribute("value") for o in browser.find_elements(By.CSS_SELECTOR, "#c-bpe-fit-corpus option")]
        assert "tokenizer.json" in options
        assert severe(browser) == []
    finally:
        proc.terminate()
        proc.communicate(timeout=30)


def _three_models(tmp_path):
    """A model of ours in each of the three other libraries' formats, fitted to CORPUS_LINES: a
    byte-level one as a Hugging Face tokenizer.json and as a tiktoken rank file (named for the
    GPT-2 pattern it was fitted under), a front-marked one as a SentencePiece .model."""
    import subwords
    from subwords import formats

    byte_level = subwords.train(CORPUS_LINES * 8, vocab_size=320, spelling="bytes", pre_split="gpt2")
    front = subwords.train(CORPUS_LINES * 8, vocab_size=90, spelling="front")
    paths = {"tokenizer.json": tmp_path / "tokenizer.json", "sp.model": tmp_path / "sp.model",
             "gpt2.tiktoken": tmp_path / "gpt2.tiktoken"}
    formats.export(byte_level, paths["tokenizer.json"], "hf")
    formats.export(front, paths["sp.model"], "sentencepiece")
    formats.export(byte_level, paths["gpt2.tiktoken"], "tiktoken")
    return paths


def _their_ids(name, path, text):
    """The ids the library that reads the format gives for ``text`` (not subwords)."""
    if name.endswith(".json"):
        import tokenizers

        return tokenizers.Tokenizer.from_file(str(path)).encode(text).ids
    if name.endswith(".model"):
        import sentencepiece

        return sentencepiece.SentencePieceProcessor(model_file=str(path)).encode(text)
    import tiktoken
    from tiktoken.load import load_tiktoken_bpe
    from tiktoken_ext.openai_public import r50k_pat_str  # GPT-2's pattern, as tiktoken spells it

    enc = tiktoken.Encoding("gpt2-of-ours", pat_str=r50k_pat_str, mergeable_ranks=load_tiktoken_bpe(str(path)),
                            special_tokens={})
    return enc.encode(text)


STRIP_IDS = """
return [...document.querySelectorAll(arguments[0] + " .strip.yours")].map(s => ({
  label: s.querySelector(".label .name").textContent,
  ids: [...s.querySelectorAll(".piece .id")].map(i => Number(i.textContent))}));
"""


def test_a_model_on_the_command_line_is_in_every_fitted_vocabulary_widget_with_its_own_ids(browser, tmp_path):
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("\n".join(CORPUS_LINES * 8) + "\n", encoding="utf-8")
    models = _three_models(tmp_path)
    proc, url = _serve_cli(tmp_path, str(corpus), *(str(p) for p in models.values()))
    fitted = [w.id for w in W.WIDGETS.values() if w.fitted]
    # every widget that cuts the text box with a vocabulary fitted to a large corpus
    assert set(fitted) == {"bpe-fit", "bpe-bytes", "uni-pieces", "wp-sizes", "wp-open-end", "sp-extends",
                           "sp-no-cut", "sp-roundtrip"}
    text = "café costs less than the lower analysis"
    try:
        open_page(browser, url)
        browser.execute_script('document.getElementById("compare").dataset.ready = "pending"')
        put_text(browser, text, True)
        WebDriverWait(browser, 60).until(lambda d: d.execute_script(
            'return document.getElementById("compare").dataset.ready === "1"'))
        # the first model named opens every fitted-vocabulary widget; the others keep the corpus
        for wid in W.WIDGETS:
            if W.WIDGETS[wid].large:
                value = browser.find_element(By.ID, f"c-{wid}-corpus").get_attribute("value")
                assert value == ("tokenizer.json" if wid in fitted else "corpus.txt"), (wid, value)
        pick = browser.find_element(By.ID, "page-corpus")
        for name, path in models.items():
            if name != "tokenizer.json":  # the page's one selector puts the model in every fitted widget
                browser.execute_script("for (const id of arguments[0]) document.getElementById('w-' + id).dataset.ready = 'x'",
                                       fitted)
                browser.execute_script("arguments[0].value = arguments[1]; arguments[0].dispatchEvent(new Event('change'))",
                                       pick, name)
                wait_ready(browser)
            theirs = _their_ids(name, path, text)
            for wid in fitted:
                assert browser.find_element(By.ID, f"c-{wid}-corpus").get_attribute("value") == name, wid
                strips = browser.execute_script(STRIP_IDS, f"#w-{wid}")
                assert [s["ids"] for s in strips] == [theirs], (wid, name)
                assert strips[0]["label"].startswith(f"your text, model {name}"), strips[0]["label"]
                assert f"Model: your {name}" in browser.find_element(By.CSS_SELECTOR, f"#w-{wid} .output").text
            if SHOT_DIR:  # pictures of the model in each fitted-vocabulary widget, to look at
                from pathlib import Path

                out = Path(SHOT_DIR) / "models"
                out.mkdir(parents=True, exist_ok=True)
                unstick(browser)
                for wid in fitted:
                    element = browser.find_element(By.ID, f"w-{wid}")
                    browser.execute_script("arguments[0].scrollIntoView()", element)
                    (out / f"{wid}-{name}.png").write_bytes(element.screenshot_as_png)
            # the side-by-side comparison: each model with the ids its own library gives
            compared = {s["label"].split(" (")[0]: s["ids"] for s in browser.execute_script(STRIP_IDS, "#compare")}
            assert compared[f"model: {name}"] == theirs, name
        assert any(label.startswith("ours: BPE fitted to corpus.txt") for label in compared)
        assert severe(browser) == []
    finally:
        proc.terminate()
        proc.communicate(timeout=30)


def test_a_model_uploaded_through_the_pages_one_selector(browser, server, tmp_path):
    models = _three_models(tmp_path)
    before = dict(W.USER_MODELS)
    try:
        open_page(browser, server.url)
        pick = browser.find_element(By.ID, "page-corpus")
        # the selector's last choice leads to the upload form
        assert pick.find_elements(By.TAG_NAME, "option")[-1].text == "upload a corpus or a model…"
        browser.execute_script("arguments[0].value = '(upload)'; arguments[0].dispatchEvent(new Event('change'))", pick)
        assert browser.execute_script("return document.activeElement.id") == "upload-file"
        browser.find_element(By.ID, "upload-file").send_keys(str(models["sp.model"]))
        browser.find_element(By.CSS_SELECTOR, "#upload-form button").click()
        WebDriverWait(browser, 60).until(lambda d: "Loaded the model sp.model" in d.find_element(By.ID, "upload-status").text)
        wait_ready(browser)
        pick = browser.find_element(By.ID, "page-corpus")
        values = [o.get_attribute("value") for o in pick.find_elements(By.TAG_NAME, "option")]
        assert "sp.model" in values
        fitted = [w.id for w in W.WIDGETS.values() if w.fitted]
        browser.execute_script("for (const id of arguments[0]) document.getElementById('w-' + id).dataset.ready = 'x';"
                               "arguments[1].value = 'sp.model'; arguments[1].dispatchEvent(new Event('change'))", fitted, pick)
        wait_ready(browser)
        theirs = _their_ids("sp.model", models["sp.model"], SENTENCE)
        for wid in fitted:
            assert [s["ids"] for s in browser.execute_script(STRIP_IDS, f"#w-{wid}")] == [theirs], wid
        # the curves keep their corpus: a model is no corpus to fit at fifteen sizes
        assert browser.find_element(By.ID, "c-bpe-curve-corpus").get_attribute("value") == "eighteen"
        assert browser.find_element(By.ID, "compare").is_displayed()
        assert severe(browser) == []
    finally:
        W.USER_MODELS.clear()
        W.USER_MODELS.update(before)


CONCLUSION = """
const p = document.querySelector("#w-" + arguments[0] + " .output .conclusion");
return p && {text: p.textContent, holds: p.classList.contains("holds"), shown: p.getBoundingClientRect().height > 0};
"""


def test_every_stand_in_widget_states_its_pages_conclusion_and_whether_it_holds(browser, server):
    from test_widgets import PAGE_CONCLUSIONS

    hash_ = "&".join(f"{wid}.corpus=eighteen" for wid in PAGE_CONCLUSIONS
                     if W.WIDGETS[wid].large and W.validate(W.WIDGETS[wid], {})["corpus"] != "eighteen")
    open_page(browser, server.url + "#" + hash_ + "&sp-roundtrip.size=-1")
    for wid, (named, _, differs) in PAGE_CONCLUSIONS.items():
        shown = browser.execute_script(CONCLUSION, wid)
        assert shown and shown["shown"], f"{wid} does not show the page's conclusion ({named})"
        assert shown["text"].startswith("The page's conclusion: " + W.CONCLUSIONS[wid]), (wid, shown["text"])
        if differs is None:
            assert shown["holds"] and shown["text"].endswith("It holds here."), f"{named}: {shown['text']}"
        else:  # where our sentences lose it, the widget says where, in words
            assert not shown["holds"] and "Here it differs: " in shown["text"] and differs in shown["text"], \
                f"{named}: {shown['text']}"
    assert severe(browser) == []
