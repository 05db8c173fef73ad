"""Two-stage BPE's stage two streams its texts (issue: beyond one machine): a file, a list or any
re-iterable input is read a second time for stage two instead of every text being kept in memory,
and the model bytes are those of training with the texts kept (as a one-pass generator still is).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import subwords
from subwords import InputError, _core
from subwords._options import from_keywords, resolved
from peers import multilingual_texts

TWO_STAGE = [
    dict(model="bpe", spelling="front", vocab_size=500, superword_at=400),
    dict(model="bpe", spelling="end", vocab_size=500, superword_at=420, special_tokens=["the"]),
    dict(model="bpe", spelling="bytes", vocab_size=500, superword_at=400, pre_split="gpt2"),
]


def texts(n: int = 1200) -> list[str]:
    return list(multilingual_texts(400_000)[:n])


class Passes:
    """A re-iterable input that allows only what a stream allows: each pass is a one-shot
    generator, a pass may not start before the one before it has ended, and at most two passes
    are made (one to count, one for stage two)."""

    def __init__(self, items: list[str]) -> None:
        self.items = items
        self.started = 0
        self.open = False

    def __iter__(self):
        assert not self.open, "a second pass started while the first was still being read"
        self.started += 1
        assert self.started <= 2, "the input was read more than twice"
        self.open = True

        def one_pass():
            yield from self.items
            self.open = False
        return one_pass()


def held_path(corpus: list[str], options: dict) -> str:
    """The model trained from a one-pass generator: the trainer keeps the texts (as before)."""
    return subwords.train((t for t in corpus), **options).to_json()


@pytest.mark.parametrize("options", TWO_STAGE)
def test_a_re_iterable_input_is_read_twice_and_gives_the_model_bytes_of_keeping_the_texts(options):
    corpus = texts()
    source = Passes(corpus)
    assert subwords.train(source, **options).to_json() == held_path(corpus, options)
    assert source.started == 2 and not source.open
    # a list is read again as well (not copied into the engine a second time)
    assert subwords.train(corpus, **options).to_json() == held_path(corpus, options)


@pytest.mark.parametrize("options", TWO_STAGE)
def test_files_are_read_again_by_the_engine(tmp_path, options):
    corpus = texts()
    a, b = tmp_path / "a.txt", tmp_path / "b.txt"
    # blank lines and CRLF line ends: the second read must cut the texts as the first did
    a.write_text("\n".join(corpus[:500]) + "\n\n", encoding="utf-8")
    b.write_text("\r\n".join(corpus[500:]), encoding="utf-8")
    want = held_path(corpus, options)
    assert subwords.train([a, b], **options).to_json() == want
    assert subwords.train(subwords.inputs.Texts([a, b]), **options).to_json() == want


def test_json_lines_are_read_again_through_their_reader(tmp_path):
    corpus = texts(600)
    p = tmp_path / "c.jsonl"
    p.write_text("".join(json.dumps({"text": t}) + "\n" for t in corpus), encoding="utf-8")
    options = TWO_STAGE[0]
    assert subwords.train(subwords.inputs.Texts(p), **options).to_json() == held_path(corpus, options)


def trainer(options: dict) -> _core.Trainer:
    return _core.Trainer(resolved(from_keywords(options)), 1)


def test_stage_two_holds_no_text_when_it_reads_the_input_again(tmp_path):
    corpus = texts(800)
    path = tmp_path / "c.txt"
    path.write_text("\n".join(corpus) + "\n", encoding="utf-8")
    options = TWO_STAGE[0]

    keeping = trainer(options)
    keeping.feed_file(str(path))
    # the texts kept today: every non-empty line, as UTF-8 (no special tokens to cut them)
    assert keeping.held_stream_bytes() == sum(len(t.encode("utf-8")) for t in corpus if t) > 0

    streaming = trainer(options)
    reads = []

    def again():
        reads.append(1)
        yield str(path)
    streaming.stream_again(again)
    streaming.feed_file(str(path))
    assert streaming.held_stream_bytes() == 0
    assert reads == []  # not read again before stage two
    model = streaming.train()
    assert reads == [1]
    assert model.to_json() == keeping.train().to_json()


def test_an_input_that_changes_between_the_reads_is_refused(tmp_path):
    corpus = texts(300)

    class Shrinking:
        def __init__(self) -> None:
            self.n = 0

        def __iter__(self):
            self.n += 1
            return iter(corpus if self.n == 1 else corpus[:-10])
    with pytest.raises(InputError, match="must not change while it trains"):
        subwords.train(Shrinking(), **TWO_STAGE[0])

    path = tmp_path / "c.txt"
    path.write_text("\n".join(corpus) + "\n", encoding="utf-8")
    t = trainer(TWO_STAGE[0])

    def again():
        path.write_text("\n".join(corpus[:5]) + "\n", encoding="utf-8")  # the file is cut short meanwhile
        yield str(path)
    t.stream_again(again)
    t.feed_file(str(path))
    counted = len([x for x in corpus if x])
    with pytest.raises(InputError, match=f"gave 5 texts when read again .* but {counted} when counted"):
        t.train()


def test_one_stage_trainings_ignore_stream_again():
    t = trainer(dict(model="bpe", vocab_size=22))
    t.stream_again(lambda: iter(()))
    t.feed_texts(["low low lower"])
    assert t.held_stream_bytes() == 0
    t.train()
