"""The documentation site builds in strict mode and reads as a person sees it.

``mkdocs build --strict`` (mkdocs.yml) fails on a broken link, a missing anchor, a page left out
of the navigation, a docstring cross-reference that does not resolve, or a relative link that
leaves docs/ for a file that does not exist (scripts/docs_site.py). The built pages are then
opened in Debian's headless chromium (as tests/explore does), the explorer's static page too,
embedded in its page, and their screenshots kept in .pytest_cache/site-screenshots/ for a person
to look at.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCREENSHOTS = ROOT / ".pytest_cache" / "site-screenshots"


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("site")
    r = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(out)], cwd=ROOT,
                       capture_output=True, text=True, timeout=900, env={**os.environ, "NO_MKDOCS_2_WARNING": "1"})
    assert r.returncode == 0, f"mkdocs build --strict failed:\n{r.stderr[-6000:]}"
    return out


def test_strict_build_has_every_page(site: Path):
    for page in ["index.html", "start/ship/index.html", "start/compare/index.html", "start/learn/index.html",
                 "API/index.html", "CLI/index.html", "DEVELOP/index.html", "changelog/index.html", "FORMATS/index.html", "PRESETS/index.html", "SPECIALS/index.html",
                 "HANDOFF/index.html", "EXTEND/index.html", "SCALE/index.html", "MEASURE/index.html",
                 "EXPLORE/index.html", "ARCHITECTURE/index.html", "reference/subwords/index.html",
                 "reference/tokenizers/index.html", "reference/core/index.html", "benchmarks/index.html",
                 "about/index.html", "explorer/index.html", "explorer.html"]:
        assert (site / page).is_file(), page
    # the API reference is generated: signatures from the sources, types from the stubs
    ref = (site / "reference" / "subwords" / "index.html").read_text(encoding="utf-8")
    train = ref[ref.index('id="subwords.train"'):ref.index('id="subwords.load"')]
    assert "Learns a vocabulary" in train and "doc-signature" in train
    # its doctest is a code block (scripts/docs_griffe.py), not prose with a [list] read as a link
    assert re.search(r'<div class="highlight"><pre>.*?&gt;&gt;&gt;.*?tok.*?merges', train, re.S)
    core = (site / "reference" / "core" / "index.html").read_text(encoding="utf-8")
    assert 'id="subwords._core.Trainer"' in core and "feed_texts" in core
    # the compiled module has no annotations: these come from _core.pyi
    feed = core[core.index('id="subwords._core.Trainer.feed_texts"'):][:3000]
    assert re.search(r"texts.*?Sequence.*?str", re.sub(r"<[^>]+>", "", feed), re.S)
    # the benchmarks page is benchmarks/README.md with a chart under each table of ratios, drawn
    # from the table's cells: the headline table's 3 corpora x 5 ratios, 2.52× its first bar
    bench = (site / "benchmarks" / "index.html").read_text(encoding="utf-8")
    first = bench[bench.index('<svg class="bench-plot"'):]
    first = first[:first.index("</svg>")]
    assert first.count('class="bar"') == 15 and ">2.52×</text>" in first and ">16.16×</text>" in first
    # the home page is README.md, its links into docs/ made site links
    home = (site / "index.html").read_text(encoding="utf-8")
    assert 'href="API/' in home and 'href="docs/API.md"' not in home


def test_a_broken_link_fails_the_build(tmp_path: Path):
    """The strict build is what catches drift: a page linking to a missing guide fails it."""
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "index.md").write_text("# Home\n\nSee [the guide](NOPE.md).\n", encoding="utf-8")
    (tmp_path / "mkdocs.yml").write_text("site_name: t\nstrict: true\n", encoding="utf-8")
    r = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict"], cwd=tmp_path, capture_output=True,
                       text=True, timeout=300)
    assert r.returncode != 0 and "NOPE.md" in r.stderr


ALL_READY = """
return document.body.dataset.built === "1" &&
  [...document.querySelectorAll(".widget")].length === 30 &&
  [...document.querySelectorAll(".widget")].every(w => w.dataset.ready === "1");
"""


def _find(*names: str) -> str:
    for name in names:
        found = shutil.which(name)
        if found:
            return found
    pytest.fail(f"none of {', '.join(names)} is installed: the site's browser test needs Debian's chromium "
                "and chromium-driver (.ci/run installs them)", pytrace=False)


def test_pages_as_a_reader_sees_them(site: Path):
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    options = webdriver.ChromeOptions()
    options.binary_location = _find("chromium", "chromium-browser")
    for arg in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=1280,1000",
                "--disable-gpu", "--allow-file-access-from-files"):
        options.add_argument(arg)
    driver = webdriver.Chrome(service=Service(_find("chromedriver")), options=options)
    driver.set_page_load_timeout(60)
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    try:
        for name, page, heading, text in [
            ("home", "index.html", "subwords", "Set-up"),
            ("guide-ship", "start/ship/index.html", "Train a tokenizer to ship", "to_transformers"),
            ("api-reference", "reference/subwords/index.html", "subwords", "vocab_size"),
        ]:
            driver.get((site / page).as_uri())
            h1 = driver.find_element(By.CSS_SELECTOR, "article h1")
            assert h1.is_displayed() and heading in h1.text, (page, h1.text)
            body = driver.find_element(By.CSS_SELECTOR, "article").text
            assert text in body, (page, body[:500])
            nav = driver.find_element(By.CSS_SELECTOR, "nav.md-nav--primary").text
            assert "Getting started" in nav and "API reference" in nav, nav[:300]
            # the theme's stylesheet applied: the header bar is drawn, not unstyled HTML
            header = driver.find_element(By.CSS_SELECTOR, "header.md-header")
            assert header.is_displayed() and header.size["height"] > 30
            assert driver.save_screenshot(str(SCREENSHOTS / f"{name}.png"))
        # long signatures are wrapped one parameter a line (ruff formats them), so none scrolls sideways
        for page in sorted(site.glob("reference/*/index.html")):
            driver.get(page.as_uri())
            wide = driver.execute_script(
                "return [...document.querySelectorAll('.doc-signature code, .doc-signature pre')]"
                ".filter(e => e.scrollWidth > e.clientWidth + 1).map(e => e.textContent.slice(0, 80));")
            shown = driver.execute_script("return document.querySelectorAll('.doc-signature').length;")
            assert wide == [], (page.parent.name, wide)
            assert shown > 0 or page.parent.name == "errors", (page.parent.name, "no signature found")
        # the explorer's static page, embedded: its 30 widgets come up inside the frame with the
        # BPE page's first merge ("The first merge joins e and s at 9", as tests/explore checks)
        driver.get((site / "explorer" / "index.html").as_uri())
        frame = driver.find_element(By.CSS_SELECTOR, "article iframe")
        assert frame.is_displayed() and frame.size["height"] > 400
        driver.switch_to.frame(frame)
        WebDriverWait(driver, 120, poll_frequency=0.1).until(lambda d: d.execute_script(ALL_READY))
        walk = driver.find_element(By.ID, "w-bpe-walk")
        assert walk.is_displayed() and "w + idest</w> at 3" in walk.text  # the page's state: ten merges
        driver.execute_script('document.getElementById("c-bpe-walk-merges").value = "1";'
                              'document.getElementById("c-bpe-walk-merges").dispatchEvent(new Event("input"));')
        WebDriverWait(driver, 60).until(lambda d: "e + s at 9" in d.find_element(By.ID, "w-bpe-walk").text)
        driver.switch_to.default_content()
        assert driver.save_screenshot(str(SCREENSHOTS / "explorer-embedded.png"))
    finally:
        driver.quit()


def test_links_that_leave_docs_are_checked_and_rewritten():
    """scripts/docs_site.py: README.md's and the guides' links to repository files resolve or fail."""
    sys.path.insert(0, str(ROOT / "scripts"))
    try:
        import docs_site
        from mkdocs.exceptions import PluginError
    finally:
        sys.path.pop(0)
    docs = ROOT / "docs"
    readme = ROOT / "README.md"
    out = docs_site._rewrite("[the API](docs/API.md#errors) and [bench](benchmarks/README.md)", readme, docs, docs,
                             "index.md")
    assert out == "[the API](API.md#errors) and bench (`benchmarks/README.md`)"
    guide = docs / "start" / "ship.md"
    assert docs_site._rewrite("[x](../API.md)", guide, guide.parent, docs, "start/ship.md") == "[x](../API.md)"
    assert docs_site._rewrite("`[x](gone.md)`", readme, docs, docs, "index.md") == "`[x](gone.md)`"  # code is text
    with pytest.raises(PluginError, match="docs/GONE.md, which does not exist"):
        docs_site._rewrite("[x](docs/GONE.md)", readme, docs, docs, "index.md")
    with pytest.raises(PluginError, match="does not exist"):
        docs_site._rewrite("[x](../crates/nothing.rs)", guide.parent / "x.md", guide.parent, docs, "start/x.md")
