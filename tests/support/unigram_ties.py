"""Comparing our Unigram ids with tokenizers' (docs/HANDOFF.md): tokenizers always fuses a run
of unknown characters into one unknown id, and breaks exact Viterbi ties its own way."""

from __future__ import annotations

import subwords


def fused_unknowns(ids: list[int], unk: int) -> list[int]:
    """``ids`` with every run of the unknown id made one, as tokenizers' Unigram gives it
    (docs/HANDOFF.md: its ``fuse_unk`` is always on)."""
    out: list[int] = []
    for i in ids:
        if not (i == unk and out and out[-1] == unk):
            out.append(i)
    return out


def assert_same_ids(name: str, tok: subwords.SubwordsTokenizer, want: list[list[int]], got: list[list[int]],
                    rounding: list[tuple[list[int], list[int]]] | None = None) -> int:
    """``got == want``, except, for Unigram, on exact Viterbi ties (docs/HANDOFF.md): the same
    pieces in another order, where subwords' rule (the longer piece at the first position where
    the spellings differ) and tokenizers' (the first best path into each position) choose
    differently. Returns how many texts were such ties. With ``rounding`` (a list), a tie our
    rule should have won the other way is put there instead of failing: the float sums of the
    two orders differed in the last bit, and rounding chose (a tie that is a tie, decided by rounding)."""
    assert len(got) == len(want)
    ties = 0
    for ours, theirs in zip(want, got):
        if ours == theirs:
            continue
        assert name.startswith("unigram"), (ours, theirs)
        assert sorted(ours) == sorted(theirs), (ours, theirs)  # the same pieces: an exact tie
        k = next(k for k, (a, b) in enumerate(zip(ours, theirs)) if a != b)
        if rounding is not None and len(tok.id_to_piece(ours[k])) < len(tok.id_to_piece(theirs[k])):
            rounding.append((ours, theirs))
            continue
        assert len(tok.id_to_piece(ours[k])) > len(tok.id_to_piece(theirs[k])), (ours, theirs)
        ties += 1
    return ties
