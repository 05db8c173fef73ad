"""The worked examples in the docstrings (public API, reference, analysis) are tests."""

from __future__ import annotations

import doctest
import importlib

import pytest

MODULES = [
    "subwords",
    "subwords._api",
    "subwords.reference",
    "subwords.reference.bpe",
    "subwords.reference.tokenizer",
    "subwords.reference.training",
    "subwords.reference.wordpiece",
    "subwords.reference.unigram",
    "subwords.analysis",
    "subwords._options",
    "subwords.formats.subword_nmt.read",
    "subwords.formats.tiktoken.read",
    "subwords._extend",
    "subwords._trim",
]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS)
    assert result.failed == 0
    assert result.attempted > 0, f"{name} has no examples to run"
