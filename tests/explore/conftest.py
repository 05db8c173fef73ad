"""Fixtures for the explorer's tests: a live server on a free port, the static page, and Debian's
chromium driven headless through chromium-driver (``.ci/run`` installs both; the tests fail,
never skip, when they are missing)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from subwords.explore import widgets as W
from subwords.explore.server import ExplorerServer

SCREENSHOTS = Path(__file__).resolve().parents[2] / ".pytest_cache" / "explore-screenshots"


def _find(*names: str) -> str:
    for name in names:
        found = shutil.which(name)
        if found:
            return found
    pytest.fail(f"none of {', '.join(names)} is installed: the explorer's browser tests need Debian's chromium "
                "and chromium-driver (apt-get install chromium chromium-driver; .ci/run does it)", pytrace=False)


@pytest.fixture(scope="session")
def server():
    srv = ExplorerServer("127.0.0.1", 0)
    thread = threading.Thread(target=srv.serve_forever, daemon=True)
    thread.start()
    yield srv
    srv.shutdown()
    srv.server_close()


@pytest.fixture(scope="session")
def static_page(tmp_path_factory):
    """Written by the command line in a process of its own, so nothing it holds is shared with
    the server these tests compare it with."""
    path = tmp_path_factory.mktemp("explore") / "explore.html"
    r = subprocess.run([sys.executable, "-m", "subwords", "explore", "--html", str(path)],
                       capture_output=True, text=True, timeout=900)
    assert r.returncode == 0, r.stderr
    return path


@pytest.fixture(scope="session")
def browser():
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = _find("chromium", "chromium-browser")
    for arg in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=1280,1000",
                "--disable-gpu", "--allow-file-access-from-files"):
        options.add_argument(arg)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(_find("chromedriver")), options=options)
    driver.set_page_load_timeout(60)
    yield driver
    driver.quit()


@pytest.fixture(scope="session")
def screenshots():
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    return SCREENSHOTS


@pytest.fixture()
def user_corpora():
    """Restores the widget module's user corpora after a test that adds some."""
    before = dict(W.USER_CORPORA)
    yield W.USER_CORPORA
    W.USER_CORPORA.clear()
    W.USER_CORPORA.update(before)
