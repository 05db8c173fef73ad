"""SuperBPE's stage two on tiny corpora, worked by hand (the rules: docs/METHODS.md, SuperBPE).

Every corpus is byte-level: the 256 bytes are rows 0..255, so ``vocab_size=257`` allows one merge.
Stage one cuts by o200k (a word takes the space before it: ``"ab ab"`` -> ``ab``, `` ab``);
stage two cuts by the paper's span expression, which keeps ``"ab ab"`` whole (a space followed by
text is no match). Ties go to the smaller ``(left, right)`` by bytes; the space 0x20 sorts before
every letter.
"""

from __future__ import annotations

import subwords


def merges(tok: subwords.Tokenizer) -> list[tuple[bytes, bytes]]:
    as_bytes = lambda piece: tok.decode_bytes([tok.piece_to_id(piece)])  # noqa: E731
    return [(as_bytes(a), as_bytes(b)) for a, b in tok.merges]


def test_stage_two_first_merges_cross_the_space() -> None:
    # "ab ab" three times.
    # Stage one, units: ab x3, " ab" x3.  Pairs: (a,b) 3+3 = 6, (" ",a) 3.  superword_at=257:
    #   one merge, a+b (6).
    # Stage two, spans: "ab ab" x3, spelled a b " " a b, stage one replayed: ab " " ab.
    #   Pairs: (ab," ") 3, (" ",ab) 3: a tie; " " (0x20) < "ab", so " "+ab -> " ab" (3).
    #   Then ab " ab": (ab," ab") 3 -> "ab ab", two words, under the limit of four.
    tok = subwords.train(["ab ab"] * 3, vocab_size=259, preset="superbpe", superword_at=257)
    assert merges(tok) == [(b"a", b"b"), (b" ", b"ab"), (b"ab", b" ab")]
    assert tok.report["stage_one_merges"] == 1
    assert [tok.decode([i]) for i in tok.encode("ab ab")] == ["ab ab"]
    # plain BPE on the same pre-split never joins across the space
    plain = subwords.train(["ab ab"] * 3, vocab_size=259, preset="o200k")
    assert [tok.decode([i]) for i in plain.encode("ab ab")] == ["ab", " ab"]


def test_word_limit_stops_a_superword() -> None:
    # "x y z" twice.
    # Stage one, units: x x2, " y" x2, " z" x2.  Pairs (" ",y) 2, (" ",z) 2: tie, y < z, so
    #   " y" first, then " z" (superword_at=258: two merges).
    # Stage two, span "x y z" x2 -> x " y" " z".  Pairs (x," y") 2, (" y"," z") 2: tie,
    #   " y" < "x" (0x20 first), so " y z" (two words).  Next x+" y z" = "x y z", three words:
    #   with superword_words=2 it is no candidate, nothing is left ("no_pairs"); with the
    #   default of four it is the fourth merge.
    two = subwords.train(["x y z"] * 2, vocab_size=261, preset="superbpe", superword_at=258, superword_words=2)
    assert merges(two) == [(b" ", b"y"), (b" ", b"z"), (b" y", b" z")]
    assert two.report["stop"] == "no_pairs"
    four = subwords.train(["x y z"] * 2, vocab_size=261, preset="superbpe", superword_at=258)
    assert merges(four) == [(b" ", b"y"), (b" ", b"z"), (b" y", b" z"), (b"x", b" y z")]


def test_spans_stop_at_digits_and_punctuation_runs() -> None:
    # "go 12 go" twice.  Spans: "go " x2, "12" x2, " go" x2 (digits stand alone, so the spaces
    # around them stay in the spans beside them).  Stage one (superword_at=257): units go x2,
    # " " x2 (o200k: a space before digits is a unit of its own), 12 x2, " go" x2.
    # Pairs: (g,o) 2+2 = 4, (1,2) 2, (" ",g) 2 -> g+o.  Stage two on the spans: "go " -> go " ",
    # "12" -> 1 2, " go" -> " " go.  Pairs: (go," ") 2, (1,2) 2, (" ",go) 2: the smallest is
    # (" ", go) -> " go"; then (1, 2) and (go, " ") tie at 2, "1" (0x31) < "g": "12", then "go ".
    # No span joins 12 to a word.
    tok = subwords.train(["go 12 go"] * 2, vocab_size=264, preset="superbpe", superword_at=257)
    assert merges(tok) == [(b"g", b"o"), (b" ", b"go"), (b"1", b"2"), (b"go", b" ")]
    assert tok.report["stop"] == "no_pairs"
