"""Sampling: reproducible (same inputs, fraction and seed give the same texts, however the inputs
are batched or split into files), and a real sample (the kept share is the fraction)."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from inputs_helpers import cli

import subwords
from subwords import OptionError, inputs


def _by_the_documented_rule(n: int, fraction: float, seed: int) -> list[int]:
    """The positions kept, computed here from the rule as the docs state it (subwords.inputs._sample):
    position i draws the 8 bytes at 8 * (i % 1024) of SHAKE-256(seed as 8 little-endian bytes +
    (i // 1024) as 8 little-endian bytes), 8192 bytes long, read little-endian, and is kept when
    that is below fraction * 2**64."""
    kept = []
    for group in range((n + 1023) // 1024):
        out = hashlib.shake_256(seed.to_bytes(8, "little") + group.to_bytes(8, "little")).digest(8192)
        for i in range(group * 1024, min(n, group * 1024 + 1024)):
            if int.from_bytes(out[8 * (i % 1024): 8 * (i % 1024) + 8], "little") < int(fraction * 2**64):
                kept.append(i)
    return kept


def _write(path: Path, texts: list[str]) -> None:
    path.write_text("".join(t + "\n" for t in texts), encoding="utf-8")


def test_a_sample_is_the_positions_the_rule_keeps(tmp_path):
    # 2,100 records: three groups of draws (0..1023, 1024..2047, 2048..)
    texts = [f"text{i}" for i in range(2100)]
    _write(tmp_path / "c.txt", texts)
    want = _by_the_documented_rule(2100, 0.5, 7)
    got = list(inputs.texts(tmp_path / "c.txt", sample=0.5, seed=7))
    assert got == [texts[i] for i in want]
    assert 0 < len(got) < 2100  # the rule kept some and dropped some for this seed
    assert [i for i in range(2100) if inputs.keep(i, 7, 0.5)] == want
    assert list(inputs.texts(tmp_path / "c.txt", sample=1.0, seed=7)) == texts  # 1 keeps everything


def test_the_kept_share_is_the_fraction(tmp_path):
    # n = 10,000 texts at fraction 1/4: the count kept is binomial, mean n*p = 2,500, standard
    # deviation sqrt(n*p*(1-p)) = sqrt(1,875) = 43.3; six deviations either side is 2,240..2,760
    n = 10_000
    _write(tmp_path / "c.txt", [f"t{i}" for i in range(n)])
    for seed in (0, 1, 2):
        data = inputs.texts(tmp_path / "c.txt", sample=0.25, seed=seed)
        kept = list(data)
        assert 2240 <= len(kept) <= 2760, (seed, len(kept))
        assert data.records == n and data.kept == len(kept)
    a = set(inputs.texts(tmp_path / "c.txt", sample=0.25, seed=0))
    b = set(inputs.texts(tmp_path / "c.txt", sample=0.25, seed=1))
    assert a != b  # another seed, another sample


def test_the_sample_does_not_depend_on_batching_or_on_how_the_inputs_are_split(tmp_path):
    texts = [f"line {i} " + "x" * (i % 17) for i in range(3000)]
    _write(tmp_path / "all.txt", texts)
    (tmp_path / "parts").mkdir()
    _write(tmp_path / "parts" / "1.txt", texts[:1234])
    (tmp_path / "parts" / "2.jsonl").write_text("".join(json.dumps({"text": t}) + "\n" for t in texts[1234:]),
                                                 encoding="utf-8")
    want = list(inputs.texts(tmp_path / "all.txt", sample=0.3, seed=42))
    one_by_one = [t for b in inputs.texts(tmp_path / "all.txt", sample=0.3, seed=42).batches(batch_chars=1) for t in b]
    assert one_by_one == want
    assert list(inputs.texts(tmp_path / "parts", sample=0.3, seed=42)) == want  # a folder: 1.txt then 2.jsonl
    assert list(inputs.texts(iter(texts), sample=0.3, seed=42)) == want  # texts from Python: same positions


def test_positions_count_blank_lines_and_skipped_records(tmp_path):
    # record 0 good, 1 blank, 2 bad, 3.. good: each keeps its own position, so skipping a bad
    # record does not shift the draws of the ones after it
    lines = ['{"text": "r0"}', "", "{broken", *[json.dumps({"text": f"r{i}"}) for i in range(3, 40)]]
    (tmp_path / "c.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    data = inputs.texts(tmp_path / "c.jsonl", sample=0.5, seed=3, skip_bad_records=True)
    got = list(data)
    assert got == [f"r{i}" for i in _by_the_documented_rule(40, 0.5, 3) if i not in (1, 2)]
    assert data.skipped == 1


def test_the_cli_sample_is_reproducible(tmp_path):
    _write(tmp_path / "c.txt", [f"word{i % 50} other{i % 7} low lower newest" for i in range(2000)])
    for out in ("a.json", "b.json"):
        _, err = cli("train", "--vocab-size", "60", "--sample", "0.2", "--seed", "5", "-o", out, "c.txt", cwd=tmp_path)
    assert (tmp_path / "a.json").read_bytes() == (tmp_path / "b.json").read_bytes()
    kept = len(list(inputs.texts(tmp_path / "c.txt", sample=0.2, seed=5)))
    assert f"read 2,000 records, kept {kept:,} texts" in err
    want = subwords.train(inputs.texts(tmp_path / "c.txt", sample=0.2, seed=5), vocab_size=60).to_json()
    assert (tmp_path / "a.json").read_text(encoding="utf-8") == want


def test_max_bytes_keeps_the_first_whole_texts_that_fit(tmp_path):
    # UTF-8 sizes: "aaaa" 4, "bb" 2, "ccc" 3, "é" 2 (line ends not counted)
    _write(tmp_path / "c.txt", ["aaaa", "bb", "ccc", "é"])
    assert list(inputs.texts(tmp_path / "c.txt", max_bytes=6)) == ["aaaa", "bb"]  # 4 + 2 = 6; + 3 would be 9
    assert list(inputs.texts(tmp_path / "c.txt", max_bytes=5)) == ["aaaa"]  # 4 + 2 = 6 > 5: stop there
    assert list(inputs.texts(tmp_path / "c.txt", max_bytes=11)) == ["aaaa", "bb", "ccc", "é"]  # 4+2+3+2 = 11
    assert list(inputs.texts(tmp_path / "c.txt", max_bytes=10)) == ["aaaa", "bb", "ccc"]  # the é's 2 bytes pass 10
    data = inputs.texts(tmp_path / "c.txt", max_bytes=6)
    list(data)
    assert data.stopped_at_max_bytes and data.kept_bytes == 6


def test_max_bytes_stops_reading(tmp_path):
    # reading stops in the block (1 MiB of the decompressed file) where the limit falls: a broken
    # record 1.3 MB further on is never read, so it is never refused
    filler = '{"text": "filler filler filler"}\n' * 40_000
    (tmp_path / "c.jsonl").write_text('{"text": "low lower"}\n{"text": "newest"}\n' + filler + '{broken\n', encoding="utf-8")
    assert list(inputs.texts(tmp_path / "c.jsonl", max_bytes=12)) == ["low lower"]
    cli("train", "--vocab-size", "15", "--max-bytes", "12", "-o", "m.json", "c.jsonl", cwd=tmp_path)
    assert (tmp_path / "m.json").read_text(encoding="utf-8") == subwords.train(["low lower"], vocab_size=15).to_json()
    _, err = cli("train", "--vocab-size", "15", "--max-bytes", "2M", "-o", "n.json", "c.jsonl", cwd=tmp_path, status=2)
    assert "c.jsonl: line 40003: not JSON" in err and not (tmp_path / "n.json").exists()


@pytest.mark.parametrize("kw, says", [
    (dict(sample=0.5), "needs a seed"),
    (dict(seed=1), "only used with sample"),
    (dict(sample=0, seed=1), "fraction in"),
    (dict(sample=1.5, seed=1), "fraction in"),
    (dict(sample=float("nan"), seed=1), "fraction in"),
    (dict(sample=0.5, seed=-1), "seed must be"),
    (dict(sample=0.5, seed=2**64), "seed must be"),
    (dict(max_bytes=0), "max_bytes"),
    (dict(max_bytes=1.5), "max_bytes"),
])
def test_bad_sampling_options(tmp_path, kw, says):
    _write(tmp_path / "c.txt", ["low"])
    with pytest.raises(OptionError, match=says):
        inputs.texts(tmp_path / "c.txt", **kw)


@pytest.mark.parametrize("flags, says", [
    (["--sample", "0.5"], "needs a seed"),
    (["--seed", "3"], "--seed goes with --sample"),
    (["--sample", "2", "--seed", "1"], "fraction in (0, 1]"),
    (["--max-bytes", "lots"], "--max-bytes"),
    (["--max-bytes", "0"], "--max-bytes"),
    (["--counts", "--sample", "0.5", "--seed", "1"], "--counts"),
])
def test_bad_sampling_flags(tmp_path, flags, says):
    _write(tmp_path / "c.txt", ["low lower"])
    _, err = cli("train", "--vocab-size", "15", *flags, "-o", "m.json", "c.txt", cwd=tmp_path, status=2)
    assert says in err
    assert not (tmp_path / "m.json").exists()


def test_a_sample_that_keeps_nothing_is_refused(tmp_path):
    _write(tmp_path / "c.txt", ["low"])
    # the one record, position 0, is kept with seed s only if its hash falls below the fraction;
    # find a seed (by the documented rule) that drops it at fraction 0.01
    seed = next(s for s in range(1000) if not _by_the_documented_rule(1, 0.01, s))
    with pytest.raises(subwords.InputError, match="kept none of them; raise the fraction"):
        subwords.train(inputs.texts(tmp_path / "c.txt", sample=0.01, seed=seed), vocab_size=10)
