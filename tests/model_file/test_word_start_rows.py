"""Words that begin with the continuation mark (``##word``, ``##``, and ``a##b`` beside them).

Under ``continuation`` whether a piece continues a word is a property of its row, not of its
letters: the word ``##word`` starts with a piece that begins with ``##`` as well. Such corpora
train, encode and decode exactly; the model file marks those rows (and the merges whose left
piece is one) with a third field ``"word_start"``, and only those, so every other file is what it
always was (docs/FORMAT.md).
"""

from __future__ import annotations

import json

import pytest

import subwords
from subwords import InputError, ModelFileError

# "##word" twice: its pieces are #, ###, ##w, ##o, ##r, ##d -- the first is word-first, the rest
# continuations; "##" alone and "a##b" (## inside a word) beside them.
CORPUS = ["##word a##b ## ##word", "x ## y ##word", "the ## a##b"] * 2
PROBES = CORPUS + ["##", "##a", "a##", "###", "b##word ##word##", "##wo ##rd"]


@pytest.fixture(scope="module", params=["wordpiece", "bpe"])
def tok(request) -> subwords.Tokenizer:
    return subwords.train(CORPUS, model=request.param, spelling="continuation", vocab_size=60)


def test_such_corpora_train_encode_and_decode_exactly(tok):
    for text in CORPUS:
        assert "[UNK]" not in tok.encode_pieces(text), text
    for text in PROBES:
        ids = tok.encode(text)
        if "[UNK]" not in tok.encode_pieces(text):  # "##a": no row continues with "a"
            assert tok.decode(ids) == " ".join(text.split()), text


def test_the_word_is_one_word_first_piece_and_not_a_continuation(tok):
    # enough room: "##word" is learned whole. Its row is word-first: decoding it after "x" gives
    # "x ##word" (two words), where the continuation row ##word would give "x" + "word".
    (wid,) = tok.encode("##word")
    (xid,) = tok.encode("x")
    assert tok.decode([xid, wid]) == "x ##word"
    rows = json.loads(tok.to_json())["rows"]
    assert rows[wid] == ["##word", "learned", "word_start"]
    # and "b##word" continues with other rows ("b" then continuation pieces): never that one
    assert wid not in tok.encode("b##word")


def test_only_those_rows_and_merges_carry_the_field(tok):
    doc = json.loads(tok.to_json())
    marked = [r[0] for r in doc["rows"] if len(r) == 3]
    # the word-first pieces that begin with "##": "##" (from "#" + "###") and "##word" at least
    assert "##" in marked and "##word" in marked
    assert all(p.startswith("##") for p in marked)
    # "#" + "###" makes the word-first "##"; "#" itself is an ordinary word-first piece
    assert ["#", "###"] in doc["merges"]


def test_a_merge_whose_left_piece_is_such_a_row_says_so():
    # BPE by hand on {"##": 10, "##a": 5}: the symbols are "#" (15), "###" (15), "##a" (5), in
    # code-point order "#" < "###" < "##a" ("#" is 35, "a" 97). Pairs: (#, ###) 15, (###, ##a) 5.
    # Merge 1 joins # + ### into the word-first "##"; then (##, ##a) is seen 5 times: merge 2
    # joins them into the word-first "##a". Rows: [UNK], the three symbols, then those two.
    tok = subwords.train({"##": 10, "##a": 5}, model="bpe", spelling="continuation", vocab_size=10)
    doc = json.loads(tok.to_json())
    assert doc["rows"] == [["[UNK]", "special"], ["#", "alphabet"], ["###", "alphabet"], ["##a", "alphabet"],
                           ["##", "learned", "word_start"], ["##a", "learned", "word_start"]]
    assert doc["merges"] == [["#", "###"], ["##", "##a", "word_start"]]
    assert tok.encode("##a ##") == [5, 4]
    assert tok.decode([5, 4]) == "##a ##"
    assert tok.decode([4, 3]) == "##a"  # the word-first "##", then the continuation "##a" (an "a")


def test_the_file_round_trips(tok, tmp_path):
    path = tmp_path / "m.json"
    tok.save(path)
    again = subwords.load(path)
    assert again.to_json() == tok.to_json()
    for text in PROBES:
        assert again.encode(text) == tok.encode(text)


def test_a_file_without_such_words_has_no_field():
    tok = subwords.train(["a##b c##d", "x## y"] * 3, model="wordpiece", vocab_size=40)
    doc = json.loads(tok.to_json())
    assert all(len(r) == 2 for r in doc["rows"]) and all(len(m) == 2 for m in doc["merges"])


def _doc(tok) -> dict:
    return json.loads(tok.to_json())


@pytest.mark.parametrize("where", ["plain row", "end spelling", "byte row"])
def test_the_field_where_it_does_not_belong_is_refused(where):
    tok = subwords.train(CORPUS, model="wordpiece", vocab_size=60, byte_fallback=where == "byte row")
    doc = _doc(tok)
    if where == "plain row":
        i = next(i for i, r in enumerate(doc["rows"]) if r[0] == "x")
        doc["rows"][i] = ["x", "alphabet", "word_start"]
    elif where == "end spelling":
        doc["spelling"]["scheme"] = "end"
    else:
        i = next(i for i, r in enumerate(doc["rows"]) if r[1] == "byte")
        doc["rows"][i] = [doc["rows"][i][0], "byte", "word_start"]
    with pytest.raises(ModelFileError):
        subwords.Tokenizer.from_json(json.dumps(doc))


def test_an_unknown_third_field_is_refused():
    doc = _doc(subwords.train(CORPUS, model="wordpiece", vocab_size=60))
    doc["rows"][1] = [doc["rows"][1][0], doc["rows"][1][1], "continues"]
    with pytest.raises(ModelFileError):
        subwords.Tokenizer.from_json(json.dumps(doc))


def test_a_merge_naming_the_wrong_row_is_refused():
    doc = _doc(subwords.train({"##": 10, "##a": 5}, model="bpe", spelling="continuation", vocab_size=10))
    # without the field, merge 2's left "##" is the continuation of nothing: no such row
    assert doc["merges"][1] == ["##", "##a", "word_start"]
    doc["merges"][1] = ["##", "##a"]
    with pytest.raises(ModelFileError):
        subwords.Tokenizer.from_json(json.dumps(doc))


@pytest.mark.parametrize("model", ["unigram", "word"])
def test_learners_without_the_property_still_refuse_such_words(model):
    # Unigram's seed and the word model join texts without it: a clear refusal, as before
    with pytest.raises(InputError, match="continuation mark"):
        subwords.train(CORPUS, model=model, spelling="continuation", vocab_size=30)
