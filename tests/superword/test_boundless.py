"""BoundlessBPE on tiny corpora, worked by hand (the rules: docs/METHODS.md, BoundlessBPE).

Byte-level: the 256 bytes are rows 0..255, so ``vocab_size=259`` leaves room for three more rows.
The pre-split is o200k: a word takes the space before it (``"abc abc"`` -> ``abc``, `` abc``).
Ties go to the smaller ``(left, right)`` by bytes; the space 0x20 sorts before every letter.
The expected values below are the hand calculations in the comments, not the code's output.
"""

from __future__ import annotations

import re
import string
from typing import Optional

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from subwords.reference import boundless
from superword_cases import A_DELETION_THEN_A_SUPERMERGE, WITHOUT_DELETIONS, Case


@pytest.mark.parametrize("case", [A_DELETION_THEN_A_SUPERMERGE, WITHOUT_DELETIONS], ids=["deletion", "no_deletion"])
def test_the_hand_worked_abc_cases(case: Case) -> None:
    # the hand calculation is written beside the cases, in tests/support/superword_cases.py
    model = boundless.train(case.texts, case.vocab_size, **case.options)
    assert model["events"] == case.events
    assert model["rows"][256:] == case.rows
    assert model["stop"] == case.stop
    for text, pieces in case.pieces.items():
        assert boundless.encode(text, model) == pieces


def test_the_superword_is_listed() -> None:
    # A_DELETION_THEN_A_SUPERMERGE's step 4 joins abc and " abc": the model's one superword
    model = boundless.train(A_DELETION_THEN_A_SUPERMERGE.texts, A_DELETION_THEN_A_SUPERMERGE.vocab_size)
    assert model["superwords"] == [(b"abc", b" abc")]


def test_a_supermerge_between_merges() -> None:
    # "a b" four times and "cd" three times.  Units: a x4, " b" x4, cd x3; spans (a, " b") x4.
    # Step 1.  Merges (" ",b) 4, (c,d) 3.  Supermerge (a, " b"): " b" is two tokens, none.
    #   Merge " "+b (4).
    # Step 2.  Merges (c,d) 3.  Supermerge (a, " b") 4: a and " b" are each one token.
    #   4 > 3: the superword "a b" comes before cd.
    # Step 3.  Merges (c,d) 3, nothing else: cd.  Rows 259.
    model = boundless.train(["a b"] * 4 + ["cd"] * 3, 259)
    assert model["events"] == [("merge", b" ", b"b"), ("super", b"a", b" b"), ("merge", b"c", b"d")]
    assert model["stop"] == "size"


def test_supermerges_only_join_eligible_pretokens() -> None:
    # "a 12" three times: units a x3, " " x3, 12 x3 (o200k puts the space before digits on its
    # own).  Merge (1,2) 3 first.  With the default superword_pieces="letters" neither " " nor 12
    # is a word, so the text holds no span: nothing is left ("no_pairs").
    letters = boundless.train(["a 12"] * 3, 260)
    assert letters["events"] == [("merge", b"1", b"2")]
    assert letters["stop"] == "no_pairs"
    # With "any" every pretoken may join: the span (a, " ", 12) x3.  After 1+2, supermerges
    # (a, " ") 3 and (" ", 12) 3 tie; " " < a: the superword " 12" first, joined in the span,
    # which is now (a, " 12"): " " is inside a superword there, so (a, " ") is no candidate
    # any more: "no_pairs" at 258 rows.
    anything = boundless.train(["a 12"] * 3, 260, superword_pieces="any")
    assert anything["events"] == [("merge", b"1", b"2"), ("super", b" ", b"12")]
    assert anything["stop"] == "no_pairs"
    # Counted on pairs, the spans are (a, " ") x3 and (" ", 12) x3 on their own: joining " 12"
    # leaves (a, " ") whole, and it is the next supermerge.
    pairs = boundless.train(["a 12"] * 3, 260, superword_pieces="any", count_on="pairs")
    assert pairs["events"] == [("merge", b"1", b"2"), ("super", b" ", b"12"), ("super", b"a", b" ")]


def test_the_span_tables() -> None:
    # "x y, z w v" : pretokens x, " y", ",", " z", " w", " v"; the comma is no word, so the
    # runs of words are (x, " y") and (" z", " w", " v"); as pairs, (x, " y"), (" z", " w"),
    # (" w", " v").
    units, runs = boundless.tables(["x y, z w v"])
    assert units == {b"x": 1, b" y": 1, b",": 1, b" z": 1, b" w": 1, b" v": 1}
    assert runs == {(b"x", b" y"): 1, (b" z", b" w", b" v"): 1}
    _, pairs = boundless.tables(["x y, z w v"], count_on="pairs")
    assert pairs == {(b"x", b" y"): 1, (b" z", b" w"): 1, (b" w", b" v"): 1}


def test_a_pretoken_inside_a_superword_is_not_deleted() -> None:
    # "ab cd" three times and "abe" twice, deletion_threshold=0.3.
    # Units: ab x3, " cd" x3, abe x2.  Spans: (ab, " cd") x3.
    # Step 1.  Merges (a,b) 3+2 = 5, (" ",c) 3, (c,d) 3, (b,e) 2: a+b (bytes are never deleted).
    # Step 2.  Merges (" ",c) 3, (c,d) 3, (ab,e) 2; supermerge (ab, " cd") needs " cd" in one
    #   token: none.  (" ",c) and (c,d) tie; " " < c: " c".
    # Step 3.  Merges (" c",d) 3, (ab,e) 2: " cd".  IoS(" c") = 3/3 = 1 >= 0.3: " c" deleted.
    # Step 4.  Merges (ab,e) 2; supermerge (ab, " cd") 3: the superword "ab cd".
    # Step 5.  Merges (ab,e) 2: abe.  IoS(ab) = f(ab,e) / f(ab) = 2 / (3 + 2) = 0.4 >= 0.3, but ab
    #   is a pretoken of the superword "ab cd": kept.  Rows 256 + ab, " cd", "ab cd", abe = 260.
    model = boundless.train(["ab cd"] * 3 + ["abe"] * 2, 260, deletion_threshold=0.3)
    assert model["events"] == [
        ("merge", b"a", b"b"),
        ("merge", b" ", b"c"),
        ("merge", b" c", b"d"),
        ("delete", b" c", b""),
        ("super", b"ab", b" cd"),
        ("merge", b"ab", b"e"),
    ]
    assert model["rows"][256:] == [b"ab", b" cd", b"ab cd", b"abe"]
    assert boundless.encode("ab cd abe", model) == [b"ab cd", b" ", b"abe"]



def learn_on_texts(texts: list[str], size: int, threshold: Optional[float]) -> list[tuple[str, bytes, bytes]]:
    """The same rules written on the texts themselves (every text kept, no tables), to check that
    the span table of runs loses nothing."""
    import regex
    from subwords.reference.superword import STAGE_ONE, pieces

    word = regex.compile(boundless.ELIGIBLE["letters"])
    docs = [[(p.encode(), False) for p in pieces(t, STAGE_ONE["o200k"]) if p] for t in texts]
    seg = {p: [bytes([c]) for c in p] for d in docs for p, _ in d}
    rows = {bytes([i]) for i in range(256)}
    made: dict[bytes, tuple[bytes, bytes]] = {}
    kept: set[bytes] = set()
    events: list[tuple[str, bytes, bytes]] = []
    while len(rows) < size:
        count: dict[tuple[int, bytes, bytes], int] = {}
        for d in docs:
            for p, joined in d:
                if not joined:
                    for a, b in zip(seg[p], seg[p][1:]):
                        count[(0, a, b)] = count.get((0, a, b), 0) + 1
            for (p, jp), (q, jq) in zip(d, d[1:]):
                if not jp and not jq and word.search(p.decode()) and word.search(q.decode()) \
                        and seg[p] == [p] and seg[q] == [q] and p + q not in rows:
                    count[(1, p, q)] = count.get((1, p, q), 0) + 1
        if not count:
            break
        (kind, a, b), n = min(count.items(), key=lambda kv: (-kv[1], kv[0][1], kv[0][2], kv[0][0]))
        if n < 2:
            break
        if kind == 1:
            events.append(("super", a, b))
            rows.add(a + b)
            kept.update((a, b))
            for k, d in enumerate(docs):
                out, i = [], 0
                while i < len(d):
                    if i + 1 < len(d) and d[i] == (a, False) and d[i + 1] == (b, False):
                        out.append((a + b, True))
                        i += 2
                    else:
                        out.append(d[i])
                        i += 1
                docs[k] = out
            continue
        freq: dict[bytes, int] = {}
        for d in docs:
            for p, joined in d:
                for t in [] if joined else seg[p]:
                    freq[t] = freq.get(t, 0) + 1
        for p in seg:
            s, out, i = seg[p], [], 0
            while i < len(s):
                if i + 1 < len(s) and (s[i], s[i + 1]) == (a, b):
                    out.append(a + b)
                    i += 2
                else:
                    out.append(s[i])
                    i += 1
            seg[p] = out
        events.append(("merge", a, b))
        if a + b not in rows:
            rows.add(a + b)
            made[a + b] = (a, b)
        for x in dict.fromkeys((a, b)):
            if threshold is not None and len(x) > 1 and x in rows and x not in kept and n / freq[x] >= threshold:
                rows.discard(x)
                events.append(("delete", x, b""))

                def spell(t: bytes) -> list[bytes]:
                    return [t] if t in rows else spell(made[t][0]) + spell(made[t][1])

                for p in seg:
                    seg[p] = [u for t in seg[p] for u in (spell(t) if t == x else [t])]
    return events


words = st.text(alphabet="abc", min_size=1, max_size=4)
corpora = st.lists(st.lists(words, min_size=1, max_size=4).map(" ".join), min_size=1, max_size=6)


@settings(max_examples=60, deadline=None)
@given(corpora, st.integers(min_value=257, max_value=275), st.sampled_from([None, 0.5, 0.9]),
       st.sampled_from(["runs", "pairs"]))
def test_encoding_the_training_texts_gives_rows_that_spell_them(texts: list[str], size: int,
                                                                  threshold: Optional[float], count_on: str) -> None:
    model = boundless.train(texts, size, deletion_threshold=threshold, min_count=1, count_on=count_on)
    rows = set(model["rows"])
    assert len(rows) <= size
    assert len(model["rows"]) == len(rows)
    deleted = {a for kind, a, _ in model["events"] if kind == "delete"}
    if threshold is None:
        assert not deleted
    cache: dict[str, list[bytes]] = {}
    for text in texts:
        tokens = boundless.encode(text, model)
        assert b"".join(tokens) == text.encode()
        assert set(tokens) <= rows, (text, tokens)
        assert boundless.encode(text, model, cache=cache) == tokens
        assert boundless.encode(text, model, cache=cache) == tokens  # now from the cache


def test_the_letters_eligibility_pattern() -> None:
    # the eligibility pattern: a word after at most one space, nothing else
    import regex

    pattern = regex.compile(boundless.ELIGIBLE["letters"])
    assert pattern.search(" word") and pattern.search("mot") and pattern.search(" él")
    assert not pattern.search("  two") and not pattern.search(" 12") and not pattern.search(string.punctuation)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.lists(st.sampled_from(["ab", "ba", "a", "b", "ab,", "12"]), min_size=1, max_size=5).map(" ".join),
                min_size=1, max_size=8),
       st.integers(min_value=257, max_value=272), st.sampled_from([None, 0.5, 0.9]))
def test_the_span_table_of_runs_learns_what_the_texts_do(texts: list[str], size: int,
                                                         threshold: Optional[float]) -> None:
    assert boundless.train(texts, size, deletion_threshold=threshold)["events"] == \
        learn_on_texts(texts, size, threshold)


@pytest.mark.parametrize(("options", "says"), [
    ({"vocab_size": 256}, "at least 257"),
    ({"deletion_threshold": 0.0}, "(0, 1]"),
    ({"deletion_threshold": 1.5}, "(0, 1]"),
    ({"count_on": "texts"}, "'runs' or 'pairs'"),
])
def test_bad_options_say_what_works(options: dict, says: str) -> None:
    kw = {"vocab_size": 260, **options}
    with pytest.raises(ValueError, match=re.escape(says)):
        boundless.train(["ab ab"], **kw)
