"""Unigram ties that are ties: two spellings made of the same pieces in another order
are tied in arithmetic, whatever order a float sum adds them in, so the tie rule (fewer pieces,
then the longer piece at the first difference) decides, in the Rust engine and in the reference.

The tables are hand-built: runs of ``a`` (pieces ``aa``, ``aaa``, ...) commute, so every
arrangement of a spelling's pieces spells the same unit. The Rust side is a model file holding
the table, read by ``SubwordsTokenizer.from_json``; the reference side runs
``subwords.reference.unigram.kbest`` on the arcs the Rust model lists for the unit (same arcs,
two implementations of the order).
"""

from __future__ import annotations

import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import subwords
from subwords.reference import unigram as ref


def unigram_model(pieces: dict[str, float]) -> subwords.SubwordsTokenizer:
    """A Unigram model over ``pieces`` (text -> log-prob) spelled ``end``: single symbols are the
    alphabet (text order), the rest learned rows in the order given."""
    def single(p: str) -> bool:
        return len(p.removesuffix("</w>")) == 1

    alphabet = sorted(p for p in pieces if single(p))
    learned = [p for p in pieces if not single(p)]
    rows = [["[UNK]", "special"]] + [[p, "alphabet"] for p in alphabet] + [[p, "learned"] for p in learned]
    doc = {
        "format": "subwords", "version": 1, "model": "unigram",
        "spelling": {"scheme": "end", "mark": "</w>", "split_at_marks": True, "pre_split": None,
                     "byte_fallback": False, "clean_text": False, "strip_accents": False, "lowercase": False},
        "stream_merges_from": None, "joints": None, "options": None, "report": None,
        "rows": rows, "merges": [],
        "log_probs": [None] + [pieces[p] for p in alphabet] + [pieces[p] for p in learned],
    }
    return subwords.SubwordsTokenizer.from_json(json.dumps(doc))


def reference_kbest(tok: subwords.SubwordsTokenizer, unit: str, k: int | None) -> list[tuple[list[str], float]]:
    """The reference's k-best recurrence on the arcs the Rust model lists for ``unit``."""
    lattice = [(i, j, p, lp) for i, j, p, lp in tok.lattice(unit)]
    n = max(j for _, j, _, _ in lattice)
    return [(list(p), s) for s, p in ref.kbest(lattice, n, k)]


def recurrence_score(lps: list[float]) -> float:
    """The float score of a spelling as the recurrence adds it: from the last piece."""
    out = 0.0
    for lp in reversed(lps):
        out = lp + out
    return out


# aa -0.1, aaa -0.2, b</w> -0.3; a lone a at -50, so every spelling holding one loses.
AAAAAB = {"a": -50.0, "b</w>": -0.3, "aa": -0.1, "aaa": -0.2}


def test_a_tie_that_float_rounding_used_to_decide():
    # a + b + c != c + b + a in f64 for these doubles (-0.6000000000000001 against -0.6), and the
    # recurrence's two orders differ the same way: aa aaa b</w> = -0.1 + (-0.2 + -0.3) = -0.6,
    # aaa aa b</w> = -0.2 + (-0.1 + -0.3) = -0.6000000000000001. Comparing doubles took
    # aa aaa b</w>; the tie rule (3 pieces each; at the first difference aaa is longer than aa)
    # takes aaa aa b</w>.
    assert -0.1 + -0.2 + -0.3 != -0.3 + -0.2 + -0.1
    assert recurrence_score([-0.1, -0.2, -0.3]) == -0.6
    assert recurrence_score([-0.2, -0.1, -0.3]) == -0.6000000000000001
    tok = unigram_model(AAAAAB)
    assert tok.encode_pieces("aaaaab") == ["aaa", "aa", "b</w>"]
    want = [(["aaa", "aa", "b</w>"], -0.6000000000000001), (["aa", "aaa", "b</w>"], -0.6)]
    assert tok.nbest("aaaaab", 2) == want, "the scores reported are the recurrence's doubles"
    assert reference_kbest(tok, "aaaaab", 2) == want
    assert ref.viterbi([tuple(a) for a in tok.lattice("aaaaab")], 6) == (-0.6000000000000001, ("aaa", "aa", "b</w>"))
    # fewest pieces never looked at the scores, and agrees here
    assert tok.fewest("aaaaab") == ["aaa", "aa", "b</w>"]
    assert tok.spellings("aaaaab")[0][0] == ["aaa", "aa", "b</w>"]


def test_fixed_keys_add_exactly():
    # the keys are the doubles scaled by 2**64: -0.1 is -3602879701896397 * 2**-55, so its key
    # is -3602879701896397 * 2**9
    assert ref.fixed(-0.1) == -3602879701896397 * 2**9
    assert ref.fixed(-1.0) == -(2**64)
    assert ref.fixed(float("-inf")) == ref.FIXED_MIN
    assert ref.fixed(-(2.0**-65)) == 0 and ref.fixed(-3 * 2.0**-65) == -2  # half to even
    x, y, z = (ref.fixed(v) for v in (-0.1, -0.2, -0.3))
    assert ref.fixed_add(x, ref.fixed_add(y, z)) == ref.fixed_add(y, ref.fixed_add(x, z)) == x + y + z


lps = st.floats(min_value=-6.0, max_value=-1e-3, allow_nan=False)


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(aa=lps, aaa=lps, aaaa=lps, b=lps, n=st.integers(2, 13))
def test_permuting_pieces_never_changes_the_winner(aa, aaa, aaaa, b, n):
    # Runs of `a` commute, so each spelling of a^n b</w> ties with every rearrangement of its
    # pieces; among them the rule wants the longest first. So the Viterbi spelling, and the first
    # listed spelling of each multiset of pieces in the n-best list, are in non-increasing
    # length order, in both engines, and the engines list the same spellings with the same
    # doubles.
    tok = unigram_model({"a": -50.0, "b</w>": b, "aa": aa, "aaa": aaa, "aaaa": aaaa})
    unit = "a" * n + "b"

    def lengths(pieces):
        return [len(p.removesuffix("</w>")) for p in pieces[:-1]]

    best = tok.encode_pieces(unit)
    assert best[-1] == "b</w>"
    assert lengths(best) == sorted(lengths(best), reverse=True)
    got = tok.nbest(unit, 30)
    assert got == reference_kbest(tok, unit, 30)
    assert got[0][0] == best
    seen = set()
    for pieces, _ in got:
        multiset = tuple(sorted(lengths(pieces)))
        if multiset not in seen:
            seen.add(multiset)
            assert lengths(pieces) == sorted(lengths(pieces), reverse=True), pieces
