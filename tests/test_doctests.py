"""The worked examples in the reference's and the analysis module's docstrings are tests."""

from __future__ import annotations

import doctest
import importlib

import pytest

MODULES = [
    "subwords.reference",
    "subwords.reference.bpe",
    "subwords.reference.spelling",
    "subwords.reference.tokenizer",
    "subwords.reference.training",
    "subwords.analysis",
]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS)
    assert result.failed == 0
