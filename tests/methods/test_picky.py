"""Picky BPE (arXiv 2409.04599): the paper's removal rule worked by hand, and the core's learner
against the pure-Python reference (python/subwords/reference/picky.py) on random small corpora.

The definition both implement: after merging ``x1 + x2``, a token ``x`` of the pair that is not an
alphabet symbol is removed when ``IoS(x) = f_p(x1, x2) / f_t(x) >= T``, ``f_p`` the pair's merged
count and ``f_t(x)`` x's count as a token just before the merge; its occurrences split back into
the tokens it was made of, and a later merge of its text restores it."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from subwords import _core
from subwords.reference import picky as ref

# units "abc" x5, "ab" x1, "bd" x2; two learned tokens; min_count 1 (the reference's docstring)
WORKED = {("a", "b", "c"): 5, ("a", "b"): 1, ("b", "d"): 2}


def core(units: dict[tuple[str, ...], int], new_rows: int, threshold: float, min_count: int):
    events, present, stop, segmented = _core.picky_learn(
        [(list(u), c) for u, c in units.items()], new_rows, threshold, min_count
    )
    ev = [ref.Merge(*a) if kind == "merge" else ref.Remove(a[0], tuple(a[1:])) for kind, a in events]
    return ev, present, stop, segmented


def test_worked_case_by_hand():
    # (a,b) 6 beats (b,c) 5: ab (f_p 6). Then (ab,c) 5: abc (f_p 5); ab stood 6 times before it,
    # IoS(ab) = 5/6 = 0.833 >= 0.8: ab is removed, the unit "ab" becomes a b. Then (b,d) 2 beats
    # (a,b) 1: bd, and two learned tokens are present.
    out = ref.learn(WORKED, new_rows=2, threshold=0.8, min_count=1)
    assert out.events == [
        ref.Merge("a", "b", "ab"),
        ref.Merge("ab", "c", "abc"),
        ref.Remove("ab", ("a", "b")),
        ref.Merge("b", "d", "bd"),
    ]
    assert out.vocabulary == ["abc", "bd"]
    assert out.stop == "size"
    assert out.segmented == {("a", "b", "c"): ["abc"], ("a", "b"): ["a", "b"], ("b", "d"): ["bd"]}
    # encoding replays the events: ab d -> (ab removed) a b d -> a bd; plain BPE keeps ab d
    assert ref.encode("abd", out.events) == ["a", "bd"]
    # IoS reaching the threshold removes (>=): T = 5/6 exactly
    assert ref.learn(WORKED, new_rows=2, threshold=5 / 6, min_count=1).vocabulary == ["abc", "bd"]
    # below it, plain BPE's two merges
    kept = ref.learn(WORKED, new_rows=2, threshold=0.9, min_count=1)
    assert kept.vocabulary == ["ab", "abc"] and all(isinstance(e, ref.Merge) for e in kept.events)
    assert ref.encode("abd", kept.events) == ["ab", "d"]


def test_restore_by_hand():
    # The same units with three learned tokens: after bd, (a,b) 1 is the only pair left; merging it
    # makes "ab" again, which is restored (present again, the same parts).
    out = ref.learn(WORKED, new_rows=3, threshold=0.8, min_count=1)
    assert [str(e) for e in out.events[4:]] == [str(ref.Merge("a", "b", "ab"))]
    assert out.vocabulary == ["abc", "bd", "ab"]
    assert out.segmented[("a", "b")] == ["ab"]


def test_core_worked_case():
    assert core(WORKED, 2, 0.8, 1) == (
        [ref.Merge("a", "b", "ab"), ref.Merge("ab", "c", "abc"), ref.Remove("ab", ("a", "b")),
         ref.Merge("b", "d", "bd")],
        ["abc", "bd"],
        "size",
        [["abc"], ["a", "b"], ["bd"]],
    )
    assert core(WORKED, 3, 0.8, 1)[1] == ["abc", "bd", "ab"]


def test_removed_part_splits_to_present_tokens():
    # "abcd" x4, "abc" x1: ab (5), abc (5: IoS(ab) = 5/5 -> ab removed, nothing left to split),
    # abcd (4: IoS(abc) = 4/5 = 0.8 -> abc removed; the unit "abc" splits through ab, itself
    # removed, to a b c).
    out = ref.learn({tuple("abcd"): 4, tuple("abc"): 1}, new_rows=5, threshold=0.8, min_count=1)
    assert out.events[:5] == [
        ref.Merge("a", "b", "ab"),
        ref.Merge("ab", "c", "abc"),
        ref.Remove("ab", ("a", "b")),
        ref.Merge("abc", "d", "abcd"),
        ref.Remove("abc", ("a", "b", "c")),
    ]
    # left: abcd x4 = abcd, abc x1 = a b c. (a,b) 1 ties (b,c) 1: ab restored; (ab,c) 1: abc
    # restored, and ab (a token once before, merged once: IoS 1) removed again; no pair is left.
    assert out.events[5:] == [
        ref.Merge("a", "b", "ab"),
        ref.Merge("ab", "c", "abc"),
        ref.Remove("ab", ("a", "b")),
    ]
    assert (out.vocabulary, out.stop) == (["abcd", "abc"], "no_pairs")
    assert out.segmented == {tuple("abcd"): ["abcd"], tuple("abc"): ["abc"]}
    assert core({tuple("abcd"): 4, tuple("abc"): 1}, 5, 0.8, 1)[:3] == (out.events, ["abcd", "abc"], "no_pairs")


corpora = st.dictionaries(
    st.lists(st.sampled_from("abcde"), min_size=1, max_size=7).map(tuple),
    st.integers(min_value=1, max_value=9),
    min_size=1,
    max_size=12,
)


@settings(max_examples=300, deadline=None)
@given(
    units=corpora,
    new_rows=st.integers(min_value=0, max_value=14),
    threshold=st.sampled_from([0.3, 0.5, 0.6, 0.75, 0.8, 0.9, 1.0]),
    min_count=st.integers(min_value=1, max_value=3),
)
def test_core_matches_reference(units, new_rows, threshold, min_count):
    want = ref.learn(units, new_rows=new_rows, threshold=threshold, min_count=min_count)
    events, present, stop, segmented = core(units, new_rows, threshold, min_count)
    assert events == want.events
    assert present == want.vocabulary
    assert stop == want.stop
    assert segmented == [want.segmented[u] for u in units]
    # training's segmentation is the replay of the events, unit by unit
    for u in units:
        assert ref.encode(u, events) == want.segmented[u]
    assert len(present) <= new_rows


def test_threshold_outside_range_is_refused():
    for bad in (0.0, -0.5, 1.5, float("nan")):
        try:
            _core.picky_learn([(["a", "b"], 2)], 1, bad, 1)
        except ValueError as e:
            assert "(0, 1]" in str(e)
        else:
            raise AssertionError(f"threshold {bad} was accepted")
