"""SuperBPE against the pure-Python reference (``subwords.reference.superword``) on random small
corpora: the same merges, in the same order, and the same stage-one count."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

import subwords
from subwords.reference import superword as ref

# few distinct characters, so pairs repeat and ties are common; spaces, digits and punctuation
# runs exercise both pre-splits
texts = st.lists(st.text(alphabet="ab c  1.,!é", min_size=1, max_size=24), min_size=1, max_size=12)


def merges(tok: subwords.Tokenizer) -> list[tuple[bytes, bytes]]:
    as_bytes = lambda piece: tok.decode_bytes([tok.piece_to_id(piece)])  # noqa: E731
    return [(as_bytes(a), as_bytes(b)) for a, b in tok.merges]


@settings(max_examples=150, deadline=None)
@given(texts, st.integers(257, 275), st.integers(0, 30), st.integers(2, 5), st.integers(1, 3))
def test_same_merges_as_reference(corpus: list[str], t: int, extra: int, words: int, min_count: int) -> None:
    size = t + extra
    tok = subwords.train(corpus, vocab_size=size, preset="superbpe", superword_at=t, superword_words=words,
                         min_count=min_count, threads=1)
    want = ref.train(corpus, size, t, superword_words=words, min_count=min_count)
    assert merges(tok) == want["merges"]
    assert tok.report["stage_one_merges"] == want["stage_one"]


def test_reference_pieces_keep_every_character() -> None:
    # the pre-split drops nothing: the pieces put back together are the text
    for text in ["ab  c!! 123 x", "  lead", "x...\ny", "é1,2"]:
        assert "".join(ref.pieces(text, ref.SPANS)) == text
        assert "".join(ref.pieces(text, ref.STAGE_ONE["o200k"])) == text
