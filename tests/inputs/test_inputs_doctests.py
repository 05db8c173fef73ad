"""The worked examples in subwords.inputs' docstrings are tests (as tests/api does for the API)."""

from __future__ import annotations

import doctest
import hashlib

import subwords.inputs


def test_docstring_examples():
    result = doctest.testmod(subwords.inputs, optionflags=doctest.ELLIPSIS)
    assert result.failed == 0 and result.attempted > 0


def test_the_keep_example_follows_the_documented_rule():
    # the docstring's [2, 3, 4] of positions 0..5 at seed 1, fraction 0.5, from the rule computed
    # here with hashlib: kept when the keyed blake2b's 8 bytes, little-endian, are below 2**63.
    # (The digests, little-endian: 0 -> 9893371227655206336, 1 -> 11413500521199574151,
    # 2 -> 6575807232144248487, 3 -> 6706956379384142388, 4 -> 2587263377137022336,
    # 5 -> 14953037645823496141; 2**63 = 9223372036854775808.)
    kept = []
    for i in range(6):
        h = hashlib.blake2b(i.to_bytes(8, "little"), digest_size=8, key=(1).to_bytes(8, "little")).digest()
        if int.from_bytes(h, "little") < 2**63:
            kept.append(i)
    assert kept == [2, 3, 4]
