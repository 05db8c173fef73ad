"""Shared fixtures: every engine-facing test runs on the pure-Python reference and on Rust."""

from __future__ import annotations

import importlib

import pytest


def _importable(name: str) -> bool:
    try:
        importlib.import_module(name)
    except ImportError:
        return False
    return True


# Once the Rust build lands, make this line `RUST_SKIP = ()` so a broken build fails instead of skipping.
RUST_SKIP = pytest.mark.skipif(not _importable("subwords._core"), reason="subwords._core not built")


def _module(name: str):
    if name == "reference":
        return importlib.import_module("subwords.reference")
    return importlib.import_module("subwords")


@pytest.fixture(scope="session", params=["reference", pytest.param("rust", marks=RUST_SKIP)])
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
