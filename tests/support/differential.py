"""The comparison the differential tests share: two engines, one corpus, every observable."""

from __future__ import annotations

import os

import pytest
from hypothesis import strategies as st

# node id -> [examples compared, examples both engines refused]. A refusal on both sides is an
# agreement about the input, not a comparison of the engines: conftest fails a test that compared
# fewer than MIN_COMPARED examples, or fewer than a quarter of them. (The most refused test,
# test_word_model, compares about 57%: vocab_size=1 is always refused for a word model. At 200
# examples a quarter is far below anything chance gives it, so the rule is not flaky.)
TALLY: dict[str, list[int]] = {}
MIN_COMPARED = 20


def tally(compared: bool) -> None:
    node = os.environ.get("PYTEST_CURRENT_TEST", "").rsplit(" (", 1)[0]
    TALLY.setdefault(node, [0, 0])[0 if compared else 1] += 1


def tally_problem(node: str) -> str | None:
    """Why the examples of ``node`` were too few to count, or None."""
    compared, refused = TALLY.pop(node, (None, None))
    if compared is None:
        return None
    if compared < MIN_COMPARED or 4 * compared < compared + refused:
        return (f"only {compared} examples compared the engines ({refused} were refused by both): "
                f"widen the strategy or the options so most examples reach a model")
    return None


def train_both(reference, rust, data, **opts):
    """(reference model, Rust model) trained with the same options, or None when the reference
    refuses them -- and then the Rust engine must refuse them too, with the same class."""
    try:
        ref = reference.train(data, **opts)
    except Exception as e:  # the engines must refuse the same things, with the same class
        with pytest.raises(type(e)):
            rust.train(data, **opts)
        tally(False)
        return None
    tally(True)
    return ref, rust.train(data, **opts)


def assert_same(reference, rust, data, probe_texts, report_keys, **opts):
    """Train both engines with the same options; everything observable must agree."""
    both = train_both(reference, rust, data, **opts)
    if both is None:
        return
    ref, got = both
    assert got.rows == ref.rows
    assert got.kinds == ref.kinds
    assert got.merges == ref.merges
    assert got.vocab_size == ref.vocab_size
    for key in report_keys:
        assert got.report.get(key) == ref.report.get(key), key
    assert got.count_pieces(data) == ref.count_pieces(data)
    for text in probe_texts:
        ids = ref.encode(text)
        assert got.encode(text) == ids, text
        assert got.encode_pieces(text) == ref.encode_pieces(text), text
        assert got.decode(ids) == ref.decode(ids), text
        assert got.decode_bytes(ids) == ref.decode_bytes(ids), text
        assert got.normalize(text) == ref.normalize(text), text
        unk = ref.kinds.index("special") if "special" in ref.kinds else None  # by kind: a bytes piece can print as [UNK]
        if unk not in ids:  # every symbol spellable: the round trip is exact on normalized text
            assert ref.decode(ids) == ref.normalize(text), text


# Random small count tables over a few letters (one of them outside ASCII).
letters = st.sampled_from(["ab", "abc", "abcé", "xyz"])


@st.composite
def count_tables(draw):
    alphabet = draw(letters)
    word = st.text(alphabet=alphabet, min_size=1, max_size=7)
    return draw(st.dictionaries(word, st.integers(1, 7), min_size=1, max_size=6))
