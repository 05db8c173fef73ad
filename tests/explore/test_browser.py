"""The explorer in a real browser: Debian's chromium, headless, driven by selenium through
chromium-driver. Every widget renders with no console error, shows its page's numbers, answers
its controls (by keyboard and by pointer), keeps its state in the address, shows errors plainly,
is not blank (screenshots, kept in .pytest_cache/explore-screenshots/), and the static page shows
the same numbers as the server."""

from __future__ import annotations

import json
import struct
import time
import zlib

import pytest
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import Select, WebDriverWait

from subwords.explore import widgets as W

from page_numbers import CASES

ALL_READY = """
return document.body.dataset.built === "1" &&
  [...document.querySelectorAll(".widget")].length === 30 &&
  [...document.querySelectorAll(".widget")].every(w => w.dataset.ready === "1");
"""
NUMBERS = """
const box = document.getElementById("w-" + arguments[0]);
return [...box.querySelectorAll(".numbers > div")].map(d => [d.querySelector("dt").textContent,
                                                            d.querySelector("dd").textContent]);
"""


def wait_ready(browser, timeout=120):
    WebDriverWait(browser, timeout, poll_frequency=0.05).until(lambda d: d.execute_script(ALL_READY))


def wait_widget(browser, wid, timeout=60):
    WebDriverWait(browser, timeout, poll_frequency=0.05).until(
        lambda d: d.execute_script(f'return document.getElementById("w-{wid}").dataset.ready === "1"'))


def severe(browser):
    return [e for e in browser.get_log("browser") if e["level"] == "SEVERE"]


def numbers(browser, wid):
    return dict(browser.execute_script(NUMBERS, wid))


def output_text(browser, wid):
    return browser.execute_script(f'return document.querySelector("#w-{wid} .output").innerText')


def output_html(browser, wid):
    """What is drawn, marks and colours included (a control may change only how pieces are marked)."""
    return browser.execute_script(f'return document.querySelector("#w-{wid} .output").innerHTML')


def open_page(browser, url):
    browser.get("about:blank")
    browser.get_log("browser")  # drop what came before
    browser.get(url)
    wait_ready(browser)


def set_control(browser, wid, name, value):
    """Change one control the way a person would: keys on a slider, a choice in a list, a click
    on a box. Waits for the widget's answer."""
    control = next(c for c in W.WIDGETS[wid].controls if c.name == name)
    element = browser.find_element(By.ID, f"c-{wid}-{name}")
    middle(browser, element)
    browser.execute_script(f'document.getElementById("w-{wid}").dataset.ready = "pending"')
    if control.kind == "range":
        element.send_keys(Keys.HOME)
        for _ in range((value - control.min) // control.step):
            element.send_keys(Keys.ARROW_RIGHT)
        assert element.get_attribute("value") == str(value)
    elif control.kind == "select":
        Select(element).select_by_value(str(value))
    else:
        if element.is_selected() != value:
            element.click()
    WebDriverWait(browser, 60, poll_frequency=0.05).until(
        lambda d: d.execute_script(f'return document.getElementById("w-{wid}").dataset.ready === "1"'))


def middle(browser, element):
    """Scroll an element to the middle of the window, clear of the sticky text bar, as a person
    would before using it (selenium scrolls only far enough to have it under the bar)."""
    browser.execute_script('arguments[0].scrollIntoView({block: "center"})', element)


def unstick(browser):
    """For pictures of single widgets: the text bar and the index scroll away with the page instead
    of lying over the widget's top (they are pictured on their own)."""
    browser.execute_script('document.getElementById("bar").style.position = "static";'
                           'document.getElementById("index").style.position = "static"')


def reset(browser, wid):
    button = browser.find_element(By.CSS_SELECTOR, f"#w-{wid} .controls button")
    middle(browser, button)
    button.click()
    wait_widget(browser, wid)


# ------------------------------------------------------------------------------------------------


def test_every_widget_renders_without_console_errors(browser, server):
    open_page(browser, server.url)
    assert severe(browser) == []
    for wid in W.WIDGETS:
        assert numbers(browser, wid), wid
        assert browser.execute_script(f'return document.querySelector("#w-{wid} .error").hidden'), wid


def test_every_widget_shows_its_pages_numbers(browser, server):
    open_page(browser, server.url)
    by_widget: dict = {}
    for wid, state, label, value, source in CASES:
        by_widget.setdefault(wid, []).append((state, label, value, source))
    checked = 0
    for wid, cases in by_widget.items():
        for state, label, value, source in cases:
            for name, v in state.items():
                set_control(browser, wid, name, v)
            shown = numbers(browser, wid)
            assert shown.get(label) == value, (wid, state, label, source, shown)
            checked += 1
            if state:
                reset(browser, wid)
    assert checked == len(CASES)
    assert severe(browser) == []


@pytest.mark.parametrize("wid", list(W.WIDGETS))
def test_every_control_changes_the_readouts(browser, server, wid):
    if browser.current_url.split("#")[0] != server.url:
        open_page(browser, server.url)
    reset(browser, wid)
    for control in W.WIDGETS[wid].controls:
        before = output_html(browser, wid)
        others = [v for v in control.values() if v != control.default]
        if not others:
            continue  # the corpus list holds one corpus until one is given
        answered = False
        for v in (others[-1], others[0]) if len(others) > 1 else others:
            set_control(browser, wid, control.name, v)
            error = browser.execute_script(f'return document.getElementById("w-{wid}").dataset.error')
            if not error and output_html(browser, wid) != before:
                answered = True
                break
        assert answered, f"{wid}: {control.name} changed nothing on the page"
        reset(browser, wid)
    assert severe(browser) == []


def test_keyboard_reaches_and_moves_a_control(browser, server):
    open_page(browser, server.url)
    target = browser.find_element(By.ID, "c-bpe-walk-merges")
    browser.execute_script("document.activeElement.blur(); window.scrollTo(0, 0)")
    for _ in range(80):  # Tab from the top of the page, past the upload form, the text bar and the index
        ActionChains(browser).send_keys(Keys.TAB).perform()
        if browser.switch_to.active_element == target:
            break
    assert browser.switch_to.active_element == target, "Tab never reached the first widget's slider"
    browser.execute_script('document.getElementById("w-bpe-walk").dataset.ready = "pending"')
    ActionChains(browser).send_keys(Keys.ARROW_LEFT).perform()
    wait_widget(browser, "bpe-walk")
    # BPE page hand table: after nine merges the corpus is 25 pieces (22 + the 3 of w + idest</w>)
    assert numbers(browser, "bpe-walk")["corpus pieces"] == "79 → 25"
    # focus is visible: the style gives focused controls an outline
    outline = browser.execute_script("return getComputedStyle(document.activeElement).outlineStyle")
    assert outline not in ("", "none")


def test_state_lives_in_the_address(browser, server):
    open_page(browser, server.url + "#bpe-walk.merges=3&uni-spellings.word=lower")
    # BPE page hand table: 79 - 9 - 9 - 7 = 54; Unigram page: "lower spelled whole 92.90%"
    assert numbers(browser, "bpe-walk")["corpus pieces"] == "79 → 54"
    assert numbers(browser, "uni-spellings")["its share"] == "92.90%"
    set_control(browser, "sp-walk", "merges", 5)
    assert "sp-walk.merges=5" in browser.current_url and "bpe-walk.merges=3" in browser.current_url
    browser.refresh()
    wait_ready(browser)
    assert browser.find_element(By.ID, "c-sp-walk-merges").get_attribute("value") == "5"
    assert numbers(browser, "sp-walk")["rows"] == "17"  # 12 + 5
    assert numbers(browser, "bpe-walk")["corpus pieces"] == "79 → 54"
    reset(browser, "bpe-walk")
    assert "bpe-walk" not in browser.current_url


def test_errors_are_shown_plainly(browser, server):
    open_page(browser, server.url + "#bpe-walk.merges=300&uni-rounds.bogus=1&bpe-two-stage.room=20")
    for wid, text in (("bpe-walk", "merges must be a whole number from 0 to 10, got 300"),
                      ("uni-rounds", "no control 'bogus'"),
                      ("bpe-two-stage", "room must be a whole number from 1 to 8, got 20")):
        err = browser.find_element(By.CSS_SELECTOR, f"#w-{wid} .error")
        assert err.is_displayed() and text in err.text, (wid, err.text)
        assert err.get_attribute("role") == "alert"
    # the other widgets are unaffected
    assert numbers(browser, "uni-lattice")["arcs"] == "17"
    # reset repairs it
    reset(browser, "bpe-walk")
    assert not browser.find_element(By.CSS_SELECTOR, "#w-bpe-walk .error").is_displayed()


def test_static_page_shows_the_servers_numbers_offline(browser, server, static_page):
    open_page(browser, server.url)
    served = {wid: (numbers(browser, wid), output_text(browser, wid)) for wid in W.WIDGETS}
    open_page(browser, static_page.as_uri())
    assert severe(browser) == []
    # no network at all: every resource is inline, no request was made
    assert browser.execute_script('return performance.getEntriesByType("resource").length') == 0
    assert browser.execute_script('return document.getElementById("upload").hidden')
    for wid in W.WIDGETS:
        assert (numbers(browser, wid), output_text(browser, wid)) == served[wid], wid
    # and a control answers from the precomputed states
    set_control(browser, "bpe-walk", "merges", 1)
    assert numbers(browser, "bpe-walk")["last merge"] == "e + s at 9"  # "The first merge joins e and s at 9"
    set_control(browser, "uni-em", "corpus", "ab")
    set_control(browser, "uni-em", "rounds", 2)
    assert numbers(browser, "uni-em")["p(ab</w>)"] == "0.882"  # "A second round takes the whole spelling to 0.882"
    # a state the page does not hold is an error message, not a blank
    browser.get(static_page.as_uri() + "#bpe-walk.merges=99")
    browser.refresh()
    wait_ready(browser)
    assert "holds no result" in browser.find_element(By.CSS_SELECTOR, "#w-bpe-walk .error").text


def _png_variety(png: bytes) -> tuple[int, int, int]:
    """(width, height, distinct byte values in the image data): a blank picture has almost none."""
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat = 8, b""
    width = height = 0
    while pos < len(png):
        (length,) = struct.unpack(">I", png[pos:pos + 4])
        kind = png[pos + 4:pos + 8]
        data = png[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            width, height = struct.unpack(">II", data[:8])
        elif kind == b"IDAT":
            idat += data
        pos += 12 + length
    raw = zlib.decompress(idat)
    return width, height, len(set(raw))


def test_screenshots_of_every_widget_none_blank(browser, server, screenshots):
    open_page(browser, server.url)
    unstick(browser)
    for page in W.PAGES:
        browser.execute_script(f'document.getElementById("page-{page}").scrollIntoView()')
    # the measure can fail: a blank box of a widget's size scores almost no variety
    blank = browser.execute_script(
        'const d = document.createElement("div"); d.id = "blank-probe";'
        'd.style.cssText = "width:1100px;height:400px;background:#fff;border:1px solid #d5d9e0";'
        'document.getElementById("main").prepend(d); return d;')
    _, _, blank_variety = _png_variety(blank.screenshot_as_png)
    browser.execute_script('document.getElementById("blank-probe").remove()')
    assert blank_variety < 40, blank_variety
    report = {"blank probe": blank_variety}
    for wid in W.WIDGETS:
        element = browser.find_element(By.ID, f"w-{wid}")
        browser.execute_script("arguments[0].scrollIntoView()", element)
        png = element.screenshot_as_png
        (screenshots / f"{wid}.png").write_bytes(png)
        width, height, variety = _png_variety(png)
        box = browser.execute_script(
            'const o = document.querySelector("#w-" + arguments[0] + " .output");'
            'return [o.getBoundingClientRect().height, o.innerText.trim().length, o.querySelectorAll("*").length]', wid)
        report[wid] = (width, height, variety, box)
        assert height > 80 and box[0] > 40 and box[1] > 20 and box[2] > 5, (wid, report[wid])
        assert variety > 4 * blank_variety, (wid, report[wid])  # text, lines and colours, not one flat colour
    (screenshots / "report.json").write_text(json.dumps(report, indent=1))


def test_a_corpus_uploaded_in_the_page_becomes_a_choice(browser, server, tmp_path, user_corpora):
    corpus = tmp_path / "mine.txt"
    corpus.write_text("\n".join(["the low cost of the lower analysis was expected",
                                 "newest and widest reports were rewritten"] * 10), encoding="utf-8")
    open_page(browser, server.url)
    browser.find_element(By.ID, "upload-file").send_keys(str(corpus))
    name = browser.find_element(By.ID, "upload-name")
    name.clear()
    name.send_keys("mine")
    browser.find_element(By.CSS_SELECTOR, "#upload-form button").click()
    WebDriverWait(browser, 60).until(lambda d: "Loaded mine" in d.find_element(By.ID, "upload-status").text)
    assert "20 lines" in browser.find_element(By.ID, "upload-status").text
    wait_ready(browser)
    set_control_value = Select(browser.find_element(By.ID, "c-bpe-curve-corpus"))
    assert "mine" in [o.get_attribute("value") for o in set_control_value.options]
    browser.execute_script('document.getElementById("w-bpe-curve").dataset.ready = "pending"')
    set_control_value.select_by_value("mine")
    wait_widget(browser, "bpe-curve")
    assert "your mine" in output_text(browser, "bpe-curve")
    assert "bpe-curve.corpus=mine" in browser.current_url
    assert severe(browser) == []
