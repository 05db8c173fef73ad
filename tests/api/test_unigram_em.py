"""The Unigram ``em`` option: the page's plain M-step stays the default; ``"bayes"``
is sentencepiece's digamma M-step. Golden values are hand calculations (shown below)."""

from __future__ import annotations

import json
import math

import pytest

import subwords
from subwords import reference
from subwords.errors import OptionError, SubwordsError
from subwords.reference.unigram import digamma

EULER_GAMMA = 0.5772156649015329


def test_digamma_known_values():
    # psi(1) = -gamma; psi(1/2) = -gamma - 2 ln 2; psi(1/4) = -gamma - pi/2 - 3 ln 2;
    # psi(x + 1) = psi(x) + 1/x; psi(0) is -inf (the limit from above). The series is cut after
    # the y^-8 term, so it is good to about 1e-10 (measured: 5e-11 at x = 1), hence 1e-9.
    assert digamma(1.0) == pytest.approx(-EULER_GAMMA, abs=1e-9)
    assert digamma(0.5) == pytest.approx(-EULER_GAMMA - 2 * math.log(2), abs=1e-9)
    assert digamma(0.25) == pytest.approx(-EULER_GAMMA - math.pi / 2 - 3 * math.log(2), abs=1e-9)
    assert digamma(10.0) == pytest.approx(digamma(9.0) + 1 / 9, abs=1e-9)
    assert digamma(0.0) == -math.inf


@pytest.mark.parametrize("engine", ["rust", "reference"])
def test_one_bayes_round_by_hand(engine):
    # {"ab": 1} on the end spelling: pieces a, b</w>, ab</w>, each seeded at count 1 (lp ln 1/3).
    # The spellings [ab</w>] (1/3) and [a, b</w>] (1/9) give Z = 4/9, so the expected counts are
    # ab</w> 3/4, a 1/4, b</w> 1/4, their sum 5/4. The Bayesian step sets lp = psi(E) - psi(5/4):
    # psi(3/4) = -gamma + pi/2 - 3 ln 2 and psi(5/4) = psi(1/4) + 4 = 4 - gamma - pi/2 - 3 ln 2,
    # so lp(ab</w>) = pi - 4. A single symbol scores as if its expected count were at least 1/2:
    # lp(a) = lp(b</w>) = psi(1/2) - psi(5/4) = (-gamma - 2 ln 2) - (4 - gamma - pi/2 - 3 ln 2)
    # = ln 2 + pi/2 - 4. (The plain step would give ln 3/5 and ln 1/5.)
    train = subwords.train if engine == "rust" else reference.train
    tok = train({"ab": 1}, model="unigram", spelling="end", vocab_size=10, em_rounds=1, em="bayes")
    lp = {row: tok.log_probs[i] for i, row in enumerate(tok.rows)}
    assert lp["ab</w>"] == pytest.approx(math.pi - 4, abs=1e-9)
    assert lp["a"] == pytest.approx(math.log(2) + math.pi / 2 - 4, abs=1e-9)
    assert lp["b</w>"] == pytest.approx(math.log(2) + math.pi / 2 - 4, abs=1e-9)
    plain = train({"ab": 1}, model="unigram", spelling="end", vocab_size=10, em_rounds=1)
    lp = {row: plain.log_probs[i] for i, row in enumerate(plain.rows)}
    assert lp["ab</w>"] == pytest.approx(math.log(3 / 5), abs=1e-9)


def test_em_is_saved_and_default_files_keep_their_bytes(tmp_path):
    four = {"low": 5, "lower": 2, "newest": 6, "widest": 3}
    plain = subwords.train(four, model="unigram", vocab_size=16)
    plain.save(tmp_path / "plain.json")
    saved = json.loads((tmp_path / "plain.json").read_text(encoding="utf-8"))
    assert "em" not in saved["options"]  # unset: left out, so older files keep their bytes
    explicit = subwords.train(four, model="unigram", vocab_size=16, em="plain")
    assert explicit.log_probs == plain.log_probs
    bayes = subwords.train(four, model="unigram", vocab_size=16, em="bayes")
    bayes.save(tmp_path / "bayes.json")
    saved = json.loads((tmp_path / "bayes.json").read_text(encoding="utf-8"))
    assert saved["options"]["em"] == "bayes"
    loaded = subwords.load(tmp_path / "bayes.json")
    assert loaded.log_probs == bayes.log_probs


def test_bad_em_values_are_refused():
    with pytest.raises(OptionError, match="em"):
        subwords.train({"ab": 1}, model="unigram", vocab_size=10, em="digamma")
    with pytest.raises(OptionError, match="em applies only to model='unigram'"):
        subwords.train({"ab": 1}, model="bpe", vocab_size=10, em="bayes")
    with pytest.raises(SubwordsError, match="em must be"):
        reference.train({"ab": 1}, model="unigram", vocab_size=10, em="digamma")


@pytest.mark.parametrize("engine", ["rust", "reference"])
def test_sentencepiece_seed_by_hand(engine):
    # em="sentencepiece" seeds only right-branching substrings, scored count x length. A run's
    # end is one follower, and a substring that only ever ends its run is kept once it occurs
    # twice (in sentencepiece's text it is then followed by the next word's mark or by the line's
    # end). {"low": 5, "lower": 2}, end spelling: runs l o w</w> (x5) and l o w e r</w> (x2).
    # * lo: followed by w</w> (5) and w (2): branching, score 7 x 2 = 14;
    # * run ends, counts >= 2: low</w> 5 x 3 = 15, ow</w> 5 x 2 = 10, lower</w> 2 x 5 = 10,
    #   ower</w> 2 x 4 = 8, wer</w> 2 x 3 = 6, er</w> 2 x 2 = 4;
    # * one follower: low, ow (only e); lowe, owe, we (only r</w>): left out.
    # Seed: the six symbols (l 7, o 7, w</w> 5, w 2, e 2, r</w> 2: 25) and those seven: total
    # 25 + 67 = 92.
    train = subwords.train if engine == "rust" else reference.train
    tok = train({"low": 5, "lower": 2}, model="unigram", spelling="end", vocab_size=100, em_rounds=0,
                em="sentencepiece")
    assert tok.report["seed_size"] == 13
    lp = {row: tok.log_probs[i] for i, row in enumerate(tok.rows)}
    assert set(lp) == {"[UNK]", "l", "o", "w</w>", "w", "e", "r</w>", "lo", "low</w>", "ow</w>",
                       "lower</w>", "ower</w>", "wer</w>", "er</w>"}
    assert lp["lo"] == pytest.approx(math.log(14 / 92), abs=1e-12)
    assert lp["low</w>"] == pytest.approx(math.log(15 / 92), abs=1e-12)
    assert lp["w</w>"] == pytest.approx(math.log(5 / 92), abs=1e-12)


@pytest.mark.parametrize("engine", ["rust", "reference"])
def test_sentencepiece_stops_at_the_target(engine):
    # the final pick leaves exactly the target whatever the drops before it (the M-step may drop
    # below 1.1 x the target, never the pick)
    four = {"low": 5, "lower": 2, "newest": 6, "widest": 3}
    train = subwords.train if engine == "rust" else reference.train
    tok = train(four, model="unigram", spelling="end", vocab_size=14, em="sentencepiece")
    assert len(tok.rows) <= 14
    assert tok.report["stop"] in ("size", "seed")
    assert all(r in tok.rows for r in ["l", "o", "w</w>", "e", "r</w>", "n", "s", "t</w>", "i", "d", "w"])


def test_sentencepiece_pruning_loss_by_hand():
    # sentencepiece's pruning criterion (docs/API.md, "em"), on {"ab": 5, "b": 3}, end spelling:
    # symbols a, b</w> and one piece ab</w>. The seed scores count x length: ab</w> 10, a 5,
    # b</w> 8, so ab</w> (ln 10/23) beats a + b</w> (ln 5/23 + ln 8/23), and EM only widens that.
    # The Viterbi frequencies are then ab</w> 5 (the run "ab") and b</w> 3 ("b"), F = 8; a is 0.
    # ab</w>'s replacement is its own best spelling without it, [a, b</w>] (k = 2). Its loss:
    #   f (ln f - ln F) - f * sum over the replacement of (ln(f_n + f) - ln(F + f (k - 1)))
    #   = 5 (ln 5 - ln 8) - 5 ((ln 5 - ln 13) + (ln 8 - ln 13)) = 10 ln(13/8) = 4.8551...
    # At vocab_size 3 (the two symbols and [UNK]) the one round prunes it with that loss.
    from subwords import measure

    t = measure.trace({"ab": 5, "b": 3}, model="unigram", spelling="end", vocab_size=3, em="sentencepiece")
    first = t.rounds[0]
    assert [piece for piece, _ in first.losses] == ["ab</w>"]
    assert first.losses[0][1] == pytest.approx(10 * math.log(13 / 8), rel=1e-12)
    assert [piece for piece, _ in first.pruned] == ["ab</w>"]
    assert t.tokenizer.rows == ["[UNK]", "a", "b</w>"]
    # the same corpus with one piece fewer at stake: {"ab": 5}, F = 5, replacement [a, b</w>]
    # with f_a = f_b = 0: 5 (ln 5 - ln 5) - 5 (2 (ln 5 - ln 10)) = 10 ln 2
    t = measure.trace({"ab": 5}, model="unigram", spelling="end", vocab_size=3, em="sentencepiece")
    assert t.rounds[0].losses[0][1] == pytest.approx(10 * math.log(2), rel=1e-12)


def test_sentencepiece_m_step_drops_are_traced():
    # {"abc": 2}, end spelling, em="sentencepiece": the seed keeps a, b, c</w> (count 2 each),
    # bc</w> and abc</w> (they only end the run, count 2: kept) scored count x length, 4 and 6;
    # "ab" has one follower (c</w>) and is left out. Probabilities x/16. The run's spellings:
    # [abc</w>] 6/16 = 0.375, [a, bc</w>] 2/16 * 4/16 = 0.03125, [a, b, c</w>] (2/16)^3 = 0.00195;
    # Z = 0.40820. bc</w>'s expected count is 2 * 0.03125 / 0.40820 = 0.153, under 0.5: the
    # first M-step drops it. 4 pieces left, under the stop (1.1 x 99): one round, no pruning.
    from subwords import measure

    t = measure.trace({"abc": 2}, model="unigram", spelling="end", vocab_size=100, em="sentencepiece")
    assert [(r.size, r.em_dropped, r.pruned) for r in t.rounds] == [(5, 1, [])]
    assert t.tokenizer.rows == ["[UNK]", "a", "b", "c</w>", "abc</w>"]
    # the page's method drops nothing in its M-step
    plain = measure.trace({"abc": 2}, model="unigram", spelling="end", vocab_size=100)
    assert all(r.em_dropped == 0 for r in plain.rounds)
    # sizes add up: each round starts where the last one's drops and pruning left it
    four = measure.trace({"low": 5, "lower": 2, "newest": 6, "widest": 3}, model="unigram", spelling="end",
                         vocab_size=12, em="sentencepiece")
    assert len(four.rounds) >= 2 and four.rounds[0].em_dropped > 0  # (27, 12 dropped, 3 pruned), then 12
    for a, b in zip(four.rounds, four.rounds[1:]):
        assert b.size == a.size - a.em_dropped - len(a.pruned)
