"""The worked examples in subwords.inputs' docstrings are tests (as tests/api does for the API)."""

from __future__ import annotations

import doctest
import hashlib

import subwords.inputs


def test_docstring_examples():
    result = doctest.testmod(subwords.inputs, optionflags=doctest.ELLIPSIS)
    assert result.failed == 0 and result.attempted > 0


def test_the_keep_example_follows_the_documented_rule():
    # the docstring's [0, 1, 2, 3, 5] of positions 0..5 at seed 1, fraction 0.5, from the rule
    # computed here with hashlib: position i draws bytes 8i..8i+8 (little-endian) of
    # SHAKE-256(1 as 8 LE bytes + 0 as 8 LE bytes), kept when below 2**63 = 9223372036854775808.
    # (The draws: 0 -> 5434214039249284092, 1 -> 5488103364119187264, 2 -> 2441880152387816462,
    # 3 -> 378027477163929707, 4 -> 14582281813627808431, 5 -> 5951239246042753399.)
    out = hashlib.shake_256((1).to_bytes(8, "little") + (0).to_bytes(8, "little")).digest(8192)
    kept = [i for i in range(6) if int.from_bytes(out[8 * i: 8 * i + 8], "little") < 2**63]
    assert kept == [0, 1, 2, 3, 5]
