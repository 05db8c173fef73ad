"""StochasTok (Sims et al., ICLR 2026): ``encode(..., stochastok=p, seed=s)``, ``encode_batch``
and ``subwords encode --stochastok P --seed S``.

The paper's rule (its Algorithm 1 and released code): encode; then for an encoding of ``n`` ids,
``floor(p * n)`` times pick a position uniformly among the current ids and, if that id can be
split into two ids of the vocabulary whose texts join to it, replace it by one such pair chosen
uniformly (otherwise the attempt does nothing)."""

from __future__ import annotations

import math
import random
import subprocess
import sys
from collections import Counter

import pytest

import peers
import subwords
from subwords.errors import OptionError


def run(*args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "subwords", *args], input=stdin, capture_output=True, text=True,
                          encoding="utf-8")


@pytest.fixture(scope="module")
def abc():
    # {abc: 9, abd: 1}, min_count 2: merges a+b, ab+c</w>; rows a b c</w> d</w> ab abc</w>
    tok = subwords.train({"abc": 9, "abd": 1}, vocab_size=50, min_count=2)
    assert tok.merges == [("a", "b"), ("ab", "c</w>")]
    return tok


def test_split_table_by_hand(abc):
    p = abc.piece_to_id
    from subwords import _stochastok

    t = _stochastok.table(abc)
    # abc</w> = ab + c</w> (a + bc</w> has no row bc</w>); ab = a + b; the letters do not split
    assert t.splits(p("abc</w>")) == [(p("ab"), p("c</w>"))]
    assert t.splits(p("ab")) == [(p("a"), p("b"))]
    assert t.splits(p("a")) == [] and t.splits(p("c</w>")) == []
    assert t.splits(p("[UNK]")) == []


def test_golden_two_words(abc):
    # "abc abc" is [X, X] with X = abc</w>; p = 1 gives floor(1 * 2) = 2 attempts.
    # attempt 1: either X (1/2 each) -> [ab c X] or [X ab c]
    # attempt 2, uniform over 3 positions:
    #   [ab c X]: ab -> [a b c X]; c</w> does not split -> [ab c X]; X -> [ab c ab c]
    #   [X ab c]: X -> [ab c ab c]; ab -> [X a b c]; c</w> -> [X ab c]
    # so [ab c ab c] has probability 2 * 1/6 = 1/3 and the four others 1/6 each.
    p = abc.piece_to_id
    a, b, ab, c, x = p("a"), p("b"), p("ab"), p("c</w>"), p("abc</w>")
    expected = {(a, b, c, x): 1 / 6, (ab, c, x): 1 / 6, (ab, c, ab, c): 1 / 3, (x, a, b, c): 1 / 6, (x, ab, c): 1 / 6}
    k = 3000
    seen = Counter(tuple(ids) for ids in abc.encode_batch(["abc abc"] * k, stochastok=1.0, seed=11))
    assert set(seen) <= set(expected)
    for outcome, prob in expected.items():
        sd = math.sqrt(k * prob * (1 - prob))
        assert abs(seen[outcome] - k * prob) < 5 * sd, (outcome, seen[outcome], k * prob)
    # one word, p = 1: one attempt on the one id, which always splits
    assert {tuple(abc.encode("abc", stochastok=1.0, seed=s)) for s in range(50)} == {(ab, c)}
    # floor(0.4 * 2) = 0 attempts: the exact encoding
    assert abc.encode("abc abc", stochastok=0.4, seed=3) == [x, x]


def test_split_table_matches_brute_force():
    texts = list(peers.multilingual_texts())[:400]
    for kw in (dict(vocab_size=400, spelling="bytes", pre_split="gpt2"), dict(vocab_size=300),
               dict(vocab_size=300, model="wordpiece"), dict(vocab_size=300, spelling="front")):
        tok = subwords.train(texts, **kw)
        from subwords import _stochastok

        t = _stochastok.table(tok)
        rows, kinds = tok.rows, tok.kinds
        ok = [i for i, k in enumerate(kinds) if k in ("alphabet", "learned")]
        by_piece = {}
        for i in ok:
            by_piece.setdefault(rows[i], i)
        # the brute force: every pair of rows whose pieces join, in the model's spelling, to a row
        want = {}
        for a in ok:
            for b in ok:
                c = by_piece.get(_join(tok, rows[a], rows[b]))
                if c is not None:
                    want.setdefault(c, set()).add((a, b))
                    assert tok.decode([a, b]) == tok.decode([c])
        for c in range(len(rows)):
            assert set(t.splits(c)) == want.get(c, set()), rows[c]


def _join(tok, a, b):
    """Pieces a, b joined in the model's spelling (None when they cannot be neighbours in a word)."""
    sp = tok.spelling
    if sp["scheme"] == "continuation":
        m = sp["mark"]
        return a + b[len(m):] if b.startswith(m) else None
    if sp["scheme"] == "front" and b.startswith(sp["mark"]):
        return None
    return a + b


def test_same_seed_same_ids_on_one_and_two_threads():
    texts = list(peers.multilingual_texts())[:3000]
    tok = subwords.train(texts, vocab_size=2000, spelling="bytes", pre_split="gpt2")
    one = tok.encode_batch(texts, threads=1, stochastok=0.3, seed=42)
    two = tok.encode_batch(texts, threads=2, stochastok=0.3, seed=42)
    assert one == two
    assert tok.encode_batch(texts, threads=2, stochastok=0.3, seed=42) == one  # repeatable
    assert tok.encode_batch(texts, threads=2, stochastok=0.3, seed=43) != one
    # text k is drawn as text k: a single text is text 0
    assert tok.encode(texts[0], stochastok=0.3, seed=42) == one[0]
    # the split text decodes to the text, and is longer by the splits made
    exact = tok.encode_batch(texts)
    assert [tok.decode(ids) for ids in one] == texts
    assert sum(map(len, one)) > sum(map(len, exact))


@pytest.mark.parametrize("kw", [dict(vocab_size=600), dict(vocab_size=600, model="wordpiece"),
                                dict(vocab_size=600, model="unigram"), dict(vocab_size=600, spelling="front"),
                                dict(vocab_size=600, byte_fallback=True)])
def test_decode_exact_in_every_spelling(kw):
    texts = list(peers.multilingual_texts())[:600]
    tok = subwords.train(texts, **kw)
    split = tok.encode_batch(texts, stochastok=0.5, seed=5)
    exact = tok.encode_batch(texts)
    assert [tok.decode(ids) for ids in split] == [tok.decode(ids) for ids in exact]
    assert sum(map(len, split)) > sum(map(len, exact))


def test_split_rate_within_bounds():
    # One row ab</w> = a + b</w>, and neither part splits. A text of n words "ab" is n such ids.
    # With p, N = floor(p n) attempts; after S splits the sequence has n + S ids of which n - S
    # split, so an attempt succeeds with probability q(S) = (n - S) / (n + S).
    # (1) The exact law of S, by that recursion (the definition worked forward), gives its mean
    #     and variance; the mean over K independent texts must be within 5 standard errors.
    # (2) The binomial bound: q(S) >= q(N) = (n - N) / (n + N) at every attempt, so S dominates
    #     Binomial(N, q(N)), and S <= N. Every draw must satisfy S <= N, and the total over K
    #     texts must not fall below K N q(N) - 5 sqrt(K N q(N) (1 - q(N))).
    tok = subwords.train({"ab": 10}, vocab_size=20, min_count=2)
    assert tok.merges == [("a", "b</w>")]
    n, p, k = 200, 0.25, 400
    big = tok.piece_to_id("ab</w>")
    attempts = math.floor(p * n)
    text = " ".join(["ab"] * n)
    assert tok.encode(text) == [big] * n
    draws = [len(ids) - n for ids in tok.encode_batch([text] * k, stochastok=p, seed=2024)]
    law = [1.0]  # law[s] = P(S = s) after j attempts
    for _ in range(attempts):
        nxt = [0.0] * (len(law) + 1)
        for s, pr in enumerate(law):
            q = (n - s) / (n + s)
            nxt[s + 1] += pr * q
            nxt[s] += pr * (1 - q)
        law = nxt
    mean = sum(s * pr for s, pr in enumerate(law))
    var = sum((s - mean) ** 2 * pr for s, pr in enumerate(law))
    observed = sum(draws) / k
    assert abs(observed - mean) < 5 * math.sqrt(var / k), (observed, mean)
    assert max(draws) <= attempts
    q_low = (n - attempts) / (n + attempts)
    floor_total = k * attempts * q_low - 5 * math.sqrt(k * attempts * q_low * (1 - q_low))
    assert sum(draws) >= floor_total
    # the split rate asked is p: splits per original id; it lies within these bounds
    assert q_low * p - 0.01 <= observed / n <= p


@pytest.mark.parametrize("p", [-0.1, 1.1, math.nan, math.inf, True, "0.5"])
def test_bad_p_is_refused(abc, p):
    with pytest.raises(OptionError, match="stochastok"):
        abc.encode("abc", stochastok=p, seed=1)
    with pytest.raises(OptionError, match="stochastok"):
        abc.encode_batch(["abc"], stochastok=p, seed=1)


def test_bad_combinations(abc):
    with pytest.raises(OptionError, match="seed"):
        abc.encode("abc", stochastok=0.5)
    with pytest.raises(OptionError, match="seed"):
        abc.encode_batch(["abc"], stochastok=0.5)
    with pytest.raises(OptionError, match="dropout"):
        abc.encode("abc", stochastok=0.5, seed=1, dropout=0.1)
    with pytest.raises(OptionError, match="seed"):
        abc.encode_batch(["abc"], seed=1)


def test_cli(tmp_path, abc):
    model = tmp_path / "m.json"
    abc.save(model)
    lines = "abc abc\nabc\nabd abc\n"
    r = run("encode", "-m", str(model), "--stochastok", "1", "--seed", "7", "--ids", stdin=lines)
    assert r.returncode == 0, r.stderr
    got = [list(map(int, l.split())) for l in r.stdout.splitlines()]
    assert got == abc.encode_batch(lines.splitlines(), stochastok=1.0, seed=7)
    for bad in (["--stochastok", "1.5", "--seed", "1"], ["--stochastok", "nan", "--seed", "1"],
                ["--stochastok", "-1", "--seed", "1"], ["--stochastok", "0.5"]):
        r = run("encode", "-m", str(model), *bad, stdin=lines)
        assert r.returncode != 0 and r.stdout == "" and ("--stochastok" in r.stderr or "--seed" in r.stderr), bad
