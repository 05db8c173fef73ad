"""BPE-dropout (Provilkov et al. 2020) and the training progress line."""

from __future__ import annotations

import io
import time

import pytest

import subwords
from subwords._progress import ProgressLine

FOUR = {"low": 5, "lower": 2, "newest": 6, "widest": 3}
TEXT = "lowest newest widest lower low"


@pytest.fixture(scope="module")
def tok():
    return subwords.train(FOUR, vocab_size=22)


def test_dropout_zero_is_plain_merge_replay(tok):
    assert tok.encode(TEXT, dropout=0.0, seed=1) == tok.encode(TEXT)


def test_dropout_one_applies_no_merge(tok):
    # every candidate merge is skipped: each word stays in its symbols (l o w</w> ...)
    pieces = [tok.id_to_piece(i) for i in tok.encode(TEXT, dropout=1.0, seed=3)]
    assert pieces == ["l", "o", "w", "e", "s", "t</w>", "n", "e", "w", "e", "s", "t</w>", "w", "i", "d", "e", "s", "t</w>",
                      "l", "o", "w", "e", "r</w>", "l", "o", "w</w>"]


def test_dropout_is_repeatable_with_a_seed_and_varies_across_seeds(tok):
    runs = {seed: tok.encode(TEXT * 3, dropout=0.3, seed=seed) for seed in range(20)}
    assert all(tok.encode(TEXT * 3, dropout=0.3, seed=s) == ids for s, ids in runs.items())
    assert len({tuple(v) for v in runs.values()}) > 1


def test_dropout_segmentations_are_valid_and_between_the_extremes(tok):
    plain = len(tok.encode(TEXT))
    chars = len(tok.encode(TEXT, dropout=1.0, seed=0))
    for seed in range(50):
        ids = tok.encode(TEXT, dropout=0.5, seed=seed)
        assert tok.decode(ids) == TEXT
        assert plain <= len(ids) <= chars


class FakeView:
    def __init__(self, states):
        self.states = list(states)

    def read(self):
        return self.states.pop(0) if len(self.states) > 1 else self.states[0]


def test_progress_line_draws_counters_and_clears_itself():
    out = io.StringIO()
    with ProgressLine(FakeView([("reading", 2_000_000, 4_000_000), ("merging", 5, 10)]), stream=out, interval=0.01):
        time.sleep(0.1)
    text = out.getvalue()
    assert "reading" in text and "2.0/4.0 MB" in text
    assert "merging" in text and "5/10 rows" in text
    assert text.endswith("\r")  # the line is wiped when training ends


def test_progress_is_off_by_default_and_refuses_non_bools(capsys):
    subwords.train(FOUR, vocab_size=22)
    assert capsys.readouterr().err == ""
    with pytest.raises(subwords.SubwordsError):
        subwords.train(FOUR, vocab_size=22, progress="yes")
