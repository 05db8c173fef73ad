"""Shared fixtures: every engine-facing test runs on the pure-Python reference and on Rust."""

from __future__ import annotations

import importlib
import os
import signal
import sys
from pathlib import Path

import pytest
from hypothesis import settings

# The tests are grouped by kind in folders; what they share (peers, differential) is in support/.
sys.path.insert(0, str(Path(__file__).resolve().parent / "support"))

# CI runs the property tests on a fixed set of examples (the same thousands every run), so a
# submission lands or not on its merits, not on the draw; local runs keep exploring.
settings.register_profile("ci", derandomize=True, print_blob=True)
if os.environ.get("CI"):
    settings.load_profile("ci")

# The suite's own SIGINT handling, whatever started it. A suite started as a background job of a
# shell without job control (`cmd &` in a script, under `nohup`) inherits SIGINT ignored; the
# programs the tests start then inherit it too, and Python keeps an ignored SIGINT ignored, so a
# test that interrupts a training (tests/bad_input) saw it run to its end, and the explorer's
# server tests waited 30 s each for a server that ignored its stop (a CI run launched that way,
# 2026-12-04). Python's own handler here is reset to the default action in every child at exec.
signal.signal(signal.SIGINT, signal.default_int_handler)


def _module(name: str):
    if name == "reference":
        return importlib.import_module("subwords.reference")
    return importlib.import_module("subwords")


# No skip for the Rust engine: a broken build fails the tests.
@pytest.fixture(scope="session", params=["reference", "rust"])
def engine(request):
    """A module-like object with ``train``: ``subwords.reference`` or ``subwords`` (Rust).

    Session-scoped: the engines are stateless modules, and hypothesis tests may then use it.
    """
    return _module(request.param)


@pytest.fixture(scope="session")
def reference():
    return _module("reference")


@pytest.fixture(scope="session")
def rust():
    """The Rust engine alone (differential tests compare it with ``reference``)."""
    return _module("rust")


def pytest_addoption(parser):
    parser.addoption("--fetch-cache", metavar="DIR", default=None,
                     help="where the interop tests keep the reference files they download "
                          "(default: $SUBWORDS_TEST_CACHE, else the pytest cache)")


def pytest_configure(config):
    import peers

    chosen = config.getoption("--fetch-cache") or os.environ.get("SUBWORDS_TEST_CACHE")
    if chosen:
        peers.CACHE = Path(chosen)
    elif getattr(config, "cache", None) is not None:
        peers.CACHE = config.cache.mkdir("subwords-downloads")
    else:  # -p no:cacheprovider: the same place the cache would be
        peers.CACHE = Path(config.rootpath, ".pytest_cache", "d", "subwords-downloads")
    config.addinivalue_line(
        "markers", "may_skip(reason): this test may skip in CI, for the reason given (the only "
        "skips CI accepts; any other skip fails the run there)")
    # hypothesis's failure report imports a module that warns about mypy_extensions.TypedDict;
    # under filterwarnings=error that warning would hide the falsifying example itself.
    config.addinivalue_line(
        "filterwarnings", "ignore:mypy_extensions.TypedDict is deprecated:DeprecationWarning"
    )


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """Under CI a skip is a failure, unless the test is marked ``may_skip``: a missing peer, a
    missing file or an unreachable download must not turn into a green run."""
    outcome = yield
    report = outcome.get_result()
    if call.when == "call" and report.passed:
        import differential

        problem = differential.tally_problem(item.nodeid)
        if problem:
            report.outcome = "failed"
            report.longrepr = problem
    if report.skipped and os.environ.get("CI") and item.get_closest_marker("may_skip") is None \
            and not hasattr(report, "wasxfail"):
        reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
        report.outcome = "failed"
        report.longrepr = f"skipped under CI, which accepts no skip not marked may_skip: {reason}"
