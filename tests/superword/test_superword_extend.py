"""`extend` on superword models. SuperBPE: every existing merge and id kept, the new merges
learned on the model's own spans (worked by hand below), and the model's limit on the words of a
piece kept. BoundlessBPE: refused with the reason (docs/METHODS.md, BoundlessBPE), before the
new text is read, and nothing written.

Byte-level: the 256 bytes are rows 0..255. SuperBPE's span expression keeps "ab ab ab" whole (a
space followed by text is no match). Ties go to the smaller ``(left, right)`` by bytes.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

import subwords
from subwords import OptionError, _core
from subwords._extend import extend
from superword_cases import A_DELETION_THEN_A_SUPERMERGE, write_corpus


def pieces(tok: subwords.Tokenizer, text: str) -> list[bytes]:
    return [tok.decode_bytes([i]) for i in tok.encode(text)]


def superbpe(words: int) -> subwords.Tokenizer:
    # "ab ab" three times, superword_at=257 (tests/superword/test_superbpe_golden.py works it):
    # merges a+b, " "+ab, ab+" ab", rows 256 ab, 257 " ab", 258 "ab ab" (two words, within 2 and 4)
    tok = subwords.train(["ab ab"] * 3, vocab_size=259, preset="superbpe", superword_at=257, superword_words=words)
    assert [tok.decode_bytes([i]) for i in range(256, 259)] == [b"ab", b" ab", b"ab ab"]
    return tok


# The new text: "ab ab ab" twice, "cd" twice; the units are the model's spans, "ab ab ab" x2 and
# "cd" x2.  The old merges replayed: a b " " a b " " a b -> (a+b) ab " " ab " " ab -> (" "+ab)
# ab " ab" " ab" -> (ab+" ab", the leftmost pair) "ab ab" " ab".  Pieces before: 2 x 2 + 2 x 2 = 8.
# Pairs: ("ab ab", " ab") 2, (c, d) 2.


def test_superbpe_extend_continues_on_the_spans_keeping_every_merge_and_id() -> None:
    # Four words a piece (the default): the pairs tie at 2; "ab ab" < "c" by bytes, so "ab ab ab"
    # (three words) is row 259, then cd row 260 = vocab_size - 1: stop "size".  Pieces after: 1 x 2
    # + 1 x 2 = 4.
    old = superbpe(4)
    ext = extend(old, ["ab ab ab"] * 2 + ["cd"] * 2, vocab_size=261)
    new = ext.tokenizer
    assert (ext.old_size, ext.new_size, ext.merges_learned, ext.stop) == (259, 261, 2, "size")
    assert (ext.pieces_before, ext.pieces_after) == (8, 4)
    assert new.rows[:259] == old.rows and new.merges[:3] == old.merges
    assert [new.decode_bytes([i]) for i in (259, 260)] == [b"ab ab ab", b"cd"]
    assert new.encode("ab ab ab") == [259] and pieces(old, "ab ab ab") == [b"ab ab", b" ab"]
    # "cd ab ab": a+b, " "+ab give c d " ab" " ab"; no ab stands alone for ab+" ab", so the
    # superwords do not apply; c+d: cd " ab" " ab"
    assert pieces(new, "cd ab ab") == [b"cd", b" ab", b" ab"]
    # the old model's ids are the new model's for text the new merges do not touch
    assert new.encode("ab ab") == old.encode("ab ab") == [258]


def test_superbpe_extend_keeps_the_word_limit() -> None:
    # Two words a piece: ("ab ab", " ab") would make three, so it is no candidate; cd is row 259,
    # then no pair is left: stop "no_pairs".  Pieces after: 2 x 2 + 1 x 2 = 6.
    old = superbpe(2)
    ext = extend(old, ["ab ab ab"] * 2 + ["cd"] * 2, vocab_size=261)
    assert (ext.old_size, ext.new_size, ext.merges_learned, ext.stop) == (259, 260, 1, "no_pairs")
    assert (ext.pieces_before, ext.pieces_after) == (8, 6)
    assert ext.tokenizer.rows[:259] == old.rows and ext.tokenizer.decode_bytes([259]) == b"cd"
    assert pieces(ext.tokenizer, "ab ab ab") == [b"ab ab", b" ab"]


# ------------------------------------------------------------------ BoundlessBPE: refused


@pytest.fixture(scope="module")
def boundless() -> subwords.Tokenizer:
    case = A_DELETION_THEN_A_SUPERMERGE
    return subwords.train(case.texts, vocab_size=case.vocab_size, preset="boundless")


def _untouched() -> Iterator[str]:
    raise AssertionError("the new text was read before the model was refused")
    yield ""  # pragma: no cover


def test_boundless_extend_is_refused_with_the_reason_before_reading(boundless: subwords.Tokenizer,
                                                                    tmp_path: Path) -> None:
    out = tmp_path / "out.json"
    with pytest.raises(OptionError) as e:
        extend(boundless, _untouched(), vocab_size=262, output=out)
    message = str(e.value)
    assert "does not continue a BoundlessBPE model" in message
    assert "deletion_threshold" in message and "taking that id away" in message
    assert "preset='boundless'" in message
    assert not out.exists()


def test_the_core_refuses_it_too(boundless: subwords.Tokenizer) -> None:
    # the engine's own check, for a caller that goes past subwords.extend: without it the events
    # would be dropped and plain BPE learned from nothing
    with pytest.raises(OptionError, match="extend does not continue a BoundlessBPE model"):
        _core.model_extended(boundless._model, ["abc abc abd abd"] * 3, 3, 2)


def test_the_cli_refuses_it_and_writes_nothing(boundless: subwords.Tokenizer, tmp_path: Path) -> None:
    model = tmp_path / "b.json"
    model.write_text(boundless.to_json(), encoding="utf-8")
    corpus = write_corpus(tmp_path, ["abc abd abd"] * 3)
    r = subprocess.run([sys.executable, "-m", "subwords", "extend", str(model), str(corpus), "--vocab-size", "262",
                        "-o", str(tmp_path / "out.json")], capture_output=True, text=True)
    assert r.returncode == 2 and "does not continue a BoundlessBPE model" in r.stderr
    assert "Traceback" not in r.stderr
    assert not (tmp_path / "out.json").exists()
