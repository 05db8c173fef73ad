"""Shared fixtures: every engine-facing test runs on the pure-Python reference and on Rust."""

from __future__ import annotations

import importlib
import os

import pytest
from hypothesis import settings

# CI runs the property tests on a fixed set of examples (the same thousands every run), so a
# submission lands or not on its merits, not on the draw; local runs keep exploring.
settings.register_profile("ci", derandomize=True, print_blob=True)
if os.environ.get("CI"):
    settings.load_profile("ci")




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


def pytest_configure(config):
    # hypothesis's failure report imports a module that warns about mypy_extensions.TypedDict;
    # under filterwarnings=error that warning would hide the falsifying example itself.
    config.addinivalue_line(
        "filterwarnings", "ignore:mypy_extensions.TypedDict is deprecated:DeprecationWarning"
    )
