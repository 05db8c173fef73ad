"""Properties over arbitrary Unicode, on both engines and every spelling.

* ``decode(encode(text)) == normalize(text)`` whenever no ``[UNK]`` was needed (every symbol of
  the text is spellable), and *always* for the bytes spelling and with byte fallback;
* ``decode_bytes`` is the UTF-8 of ``decode`` on what ``encode`` produced;
* a lone surrogate is refused with ``InputError`` (it has no UTF-8 spelling);
* a word holding the ``end`` mark, or beginning with the ``continuation`` mark, is refused with
  ``InputError`` (docs/API.md: its pieces could not be told apart from other words' pieces).
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from subwords.errors import InputError

SPELLINGS = ["end", "continuation", "front", "bytes"]
MARKS = {"end": "</w>", "continuation": "##"}
WHITESPACE = frozenset(
    "\t\n\x0b\x0c\r \x85\xa0\u1680" + "".join(chr(c) for c in range(0x2000, 0x200B))
    + "\u2028\u2029\u202f\u205f\u3000"
)

SETTINGS = settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)

# Arbitrary text (hypothesis excludes surrogates by default), weighted towards short texts that
# share characters, so that some probes are spellable and some are not.
small = st.text(alphabet=st.sampled_from("ab é\t\u2581\u3000#</w>"), max_size=12)
anything = st.text(max_size=12)
texts = st.one_of(small, anything)


def _words(text: str) -> list[str]:
    out, cur = [], ""
    for ch in text:
        if ch in WHITESPACE:
            if cur:
                out.append(cur)
            cur = ""
        else:
            cur += ch
    return out + ([cur] if cur else [])


def _spellable_by_the_spelling(spelling: str, text: str) -> bool:
    """False when docs/API.md refuses the text for this spelling (a mark inside a word)."""
    if spelling == "end":
        return not any(MARKS["end"] in w for w in _words(text))
    if spelling == "continuation":
        return not any(w.startswith(MARKS["continuation"]) for w in _words(text))
    return True


def _train(engine, corpus, spelling, byte_fallback, min_count):
    opts = {"spelling": spelling, "vocab_size": 10**6, "min_count": min_count}
    if byte_fallback:
        opts["byte_fallback"] = True
    try:
        return engine.train(corpus, **opts)
    except InputError:
        assume(False)  # an empty corpus (nothing but whitespace)


# (The bytes spelling has no byte fallback: it is all bytes already.)
@pytest.mark.parametrize(
    "spelling, byte_fallback", [(s, False) for s in SPELLINGS] + [(s, True) for s in SPELLINGS[:3]]
)
@SETTINGS
@given(data=st.data(), corpus=st.lists(texts, min_size=1, max_size=4), min_count=st.integers(1, 3))
def test_round_trip(engine, spelling, byte_fallback, data, corpus, min_count):
    assume(all(_spellable_by_the_spelling(spelling, t) for t in corpus))
    tok = _train(engine, corpus, spelling, byte_fallback, min_count)
    # Probes: the corpus texts, their words shuffled together, and arbitrary text.
    words = [w for t in corpus for w in _words(t)]
    shuffled = data.draw(st.permutations(words)) if words else []
    probes = corpus + [" ".join(shuffled), data.draw(texts)]
    unk = tok.kinds.index("special") if "special" in tok.kinds else None  # by kind: a bytes piece can print as [UNK]
    for text in probes:
        if not _spellable_by_the_spelling(spelling, text):
            continue
        ids = tok.encode(text)
        assert len(tok.encode_pieces(text)) == len(ids)
        decoded = tok.decode(ids)
        assert tok.decode_bytes(ids) == decoded.encode("utf-8")
        if spelling == "bytes":
            assert decoded == text
        if byte_fallback or spelling == "bytes":
            assert unk not in ids
        if unk not in ids:
            assert decoded == tok.normalize(text), text


@pytest.mark.parametrize("spelling", SPELLINGS)
@SETTINGS
@given(
    before=st.text(max_size=5),
    surrogate=st.characters(categories=["Cs"]),
    after=st.text(max_size=5),
)
def test_lone_surrogate_is_refused(engine, spelling, before, surrogate, after):
    tok = engine.train({"ab": 2, "ba": 2}, spelling=spelling, vocab_size=300)
    text = before + surrogate + after
    with pytest.raises(InputError):
        tok.encode(text)
    with pytest.raises(InputError):
        engine.train([text], spelling=spelling, vocab_size=300)


@pytest.mark.parametrize(
    "spelling, word", [("end", "a</w>b"), ("end", "ab</w>")]
)
def test_mark_in_word_is_refused(engine, spelling, word):
    # docs/API.md, spellings: a word holding the end mark would give pieces indistinguishable
    # from other words' pieces.
    tok = engine.train({"ab": 2}, spelling=spelling, vocab_size=10)
    with pytest.raises(InputError):
        tok.encode(f"x {word} y")
    with pytest.raises(InputError):
        engine.train({word: 2}, spelling=spelling, vocab_size=50)


def test_word_beginning_with_the_continuation_mark_round_trips(engine):
    # docs/API.md, spellings: under continuation whether a piece continues a word is a property
    # of its row, so "##ab" trains and encodes, and decodes to itself (it used to be refused).
    tok = engine.train({"##ab": 2, "x": 1}, spelling="continuation", vocab_size=50)
    assert tok.decode(tok.encode("x ##ab x")) == "x ##ab x"
    assert tok.encode_pieces("##ab") == ["##ab"]  # learned whole, as a word-first piece


def test_mark_inside_continuation_word_is_fine(engine):
    # Only a word *beginning* with ## is ambiguous; a##b round-trips.
    tok = engine.train(["a##b c"], spelling="continuation", vocab_size=50, min_count=1)
    assert tok.decode(tok.encode("a##b c")) == "a##b c"
