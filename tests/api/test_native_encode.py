"""``encode(text)`` as one native call (``_core.FaceCall``) on our own models, on a
``tokenizer.json`` and on a ``.tiktoken`` rank file: the plain call (one ``str``, no keyword)
runs in the core; every other call goes to the Python method with the same arguments; the call
answers ``help``, ``inspect`` and ``isroutine`` as the method; a copy or unpickled object gets a
call of its own; a subclass that overrides ``encode`` keeps it; the tokenizer is freed as soon
as it is let go (no reference cycle).

Golden ids are worked out by hand on files written here (each case says how), and checked
against the peer library (tokenizers, tiktoken) where it reads the same file.
"""

from __future__ import annotations

import base64
import copy
import gc
import inspect
import json
import pickle
import pydoc
import weakref

import pytest
import subwords
from byte_rows import CHARS
from byte_rows import o200k_spelling as _o200k_spelling
from byte_rows import show as _show
from subwords import SubwordsTokenizer, _core
from subwords.errors import InputError, StateError, TextTypeError

# a model file written by hand: the special <|x|> (id 0), the 256 bytes (byte b is id 1 + b),
# then ab 257, bc 258, abc 259, aa 260, aaa 261, with the merges in this rank order
LEARNED = ["ab", "bc", "abc", "aa", "aaa"]
MERGES = [("a", "b"), ("b", "c"), ("ab", "c"), ("a", "a"), ("aa", "a")]
SP, X, LT, BAR, GT = (1 + ord(c) for c in " x<|>")


def toy(options: dict | None = None) -> SubwordsTokenizer:
    rows = [["<|x|>", "special"]] + [[c, "alphabet"] for c in CHARS] + [[_show(t), "learned"] for t in LEARNED]
    doc = {"format": "subwords", "version": 1, "model": "bpe", "spelling": _o200k_spelling(),
           "stream_merges_from": None, "joints": None, "template": None, "options": options, "report": None,
           "rows": rows, "merges": [[_show(a), _show(b)] for a, b in MERGES]}
    return SubwordsTokenizer.from_json(json.dumps(doc))


# worked out by hand (o200k cuts "abcaaa<|x|>aaaaa bc" into abcaaa, <|, x, |>, aaaaa, " bc"):
# abcaaa: (a, b) -> ab c a a a; (ab, c) -> abc a a a; (a, a) left to right -> abc aa a;
# (aa, a) -> abc aaa. aaaaa: aa aa a, then (aa, a) at the right -> aa aaa. " bc": space, bc
TEXT = "abcaaa<|x|>aaaaa bc"
IDS = [259, 261, LT, BAR, X, BAR, GT, 260, 261, SP, 258]
IDS_ALLOWED = [259, 261, 0, 260, 261, SP, 258]
# past the length below which the GIL is kept: " abcaaa" is space, abc, aaa
LONG = "abcaaa" + " abcaaa" * 499
LONG_IDS = [259, 261] + [SP, 259, 261] * 499


def _checks_of_the_call(tok, method, text, ids):
    """What every native encode call answers, whatever the tokenizer."""
    call = tok.encode
    assert isinstance(call, _core.FaceCall) and "encode" in vars(tok)
    assert call(text) == ids
    assert call(text=text) == ids  # a keyword: the Python method
    with pytest.raises(TextTypeError):
        call(text.encode())

    class Text(str):
        pass

    assert call(Text(text)) == ids  # not exactly a str: the Python method
    # inspect and help show the method, not the call's class
    params = list(inspect.signature(call).parameters)
    assert params == list(inspect.signature(method).parameters)[1:]
    assert inspect.isroutine(call) and call.__name__ == "encode" and call.__doc__ == method.__doc__
    shown = pydoc.render_doc(call, renderer=pydoc.plaintext)
    assert "encode(text" in shown and method.__doc__.split()[0] in shown and "sentencepiece(" not in shown


def _freed_at_once(make, text, ids):
    """No reference cycle: the tokenizer goes when let go; a call kept still encodes a plain
    text (its encoder is its own), and any other call says the tokenizer is gone."""
    gc.disable()
    try:
        tok = make()
        kept = tok.encode
        ref = weakref.ref(tok)
        del tok
        assert ref() is None
    finally:
        gc.enable()
    assert kept(text) == ids
    with pytest.raises(StateError, match="keep a reference"):
        kept(text, allowed_special="all")


def _copies(tok, text, ids):
    """A copy (shallow, deep, pickled) has a call of its own, which outlives the original."""
    gc.disable()
    try:
        copies = [copy.copy(tok), copy.deepcopy(tok), pickle.loads(pickle.dumps(tok))]
        for c in copies:
            assert isinstance(c.encode, _core.FaceCall) and c.encode is not tok.encode
        del tok
        for c in copies:
            assert c.encode(text) == ids
            assert c.encode(text, add_special_tokens=False) == ids  # the general path, on the copy
    finally:
        gc.enable()


# -- our own model -----------------------------------------------------------------------------

def test_own_model_plain_call_ids_by_hand():
    tok = toy()
    assert tok._model.rank_fast()
    _checks_of_the_call(tok, SubwordsTokenizer.encode, TEXT, IDS)
    assert tok.encode(TEXT, allowed_special=["<|x|>"]) == IDS_ALLOWED
    assert tok.encode(LONG) == LONG_IDS
    assert tok.encode("") == []
    # a lone surrogate: the method's error, as before
    with pytest.raises(InputError):
        tok.encode("ab\ud800")


def test_own_model_user_symbols_match_in_the_plain_call():
    # a user-defined symbol matches whatever a call allows (docs/SPECIALS.md): <|x|> is one
    options = json.loads(subwords.train(["a b"], vocab_size=257, spelling="bytes", pre_split="o200k",
                                        user_symbols=["<|x|>"]).to_json())["options"]
    assert options["user_symbols"] == ["<|x|>"]
    tok = toy(options)
    assert tok.encode(TEXT) == IDS_ALLOWED
    assert tok.encode(LONG + TEXT) == LONG_IDS + IDS_ALLOWED


def test_own_model_with_a_template(tmp_path):
    # a BERT vocab.txt: [CLS] (2) and [SEP] (3) go around the text, by default and in the plain
    # call; "hello world" is hello (5), world (6)
    path = tmp_path / "vocab.txt"
    path.write_text("[PAD]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\nhello\nworld\n##s\n", encoding="utf-8")
    tok = subwords.bert(path)
    assert tok.encode("hello worlds") == [2, 5, 6, 7, 3]
    assert tok.encode("hello worlds", add_special_tokens=False) == [5, 6, 7]
    _checks_of_the_call(tok, SubwordsTokenizer.encode, "hello world", [2, 5, 6, 3])
    assert tok.encode(" hello" * 200) == [2] + [5] * 200 + [3]


def test_own_model_freed_copied_and_subclassed():
    _freed_at_once(toy, TEXT, IDS)
    _copies(toy(), TEXT, IDS)

    class Marked(SubwordsTokenizer):
        def encode(self, text, **kw):  # type: ignore[override]
            return [-1] + super().encode(text, **kw)

    tok = toy()
    mine = Marked(tok._model)
    assert "encode" not in vars(mine) and mine.encode(TEXT) == [-1] + IDS

    class Same(SubwordsTokenizer):
        pass

    same = Same(tok._model)
    assert isinstance(same.encode, _core.FaceCall) and same.encode(TEXT) == IDS


def test_own_unigram_model_takes_the_native_call_too():
    tok = subwords.train(["the lower newest widest"] * 20, vocab_size=40, model="unigram")
    assert type(tok).__name__ == "UnigramTokenizer" and isinstance(tok.encode, _core.FaceCall)
    # the pieces join back to the text (Viterbi; no golden ids for a trained model)
    assert tok.decode(tok.encode("the newest")) == "the newest"
    assert tok.encode("the newest") == tok.encode("the newest", segmenter="viterbi")


# -- tokenizer.json ------------------------------------------------------------------------------

def _hf_doc(template: bool) -> dict:
    """A byte-level BPE tokenizer.json written by hand: <s> 0, </s> 1, a 2, b 3, c 4, Ġ 5,
    ab 6, abc 7; merges (a, b), (ab, c); with ``template``, <s> A </s> around the text."""
    added = [{"id": i, "content": t, "single_word": False, "lstrip": False, "rstrip": False,
              "normalized": False, "special": True} for i, t in enumerate(["<s>", "</s>"])]
    post = None
    if template:
        s, e = ({"SpecialToken": {"id": t, "type_id": 0}} for t in ("<s>", "</s>"))
        a, b = ({"Sequence": {"id": x, "type_id": 0}} for x in ("A", "B"))
        post = {"type": "TemplateProcessing", "single": [s, a, e], "pair": [s, a, e, b, e],
                "special_tokens": {t: {"id": t, "ids": [i], "tokens": [t]} for i, t in enumerate(["<s>", "</s>"])}}
    return {
        "version": "1.0", "truncation": None, "padding": None, "added_tokens": added, "normalizer": None,
        "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": True},
        "post_processor": post,
        "decoder": {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True, "use_regex": True},
        "model": {"type": "BPE", "dropout": None, "unk_token": None, "continuing_subword_prefix": None,
                  "end_of_word_suffix": None, "fuse_unk": False, "byte_fallback": False, "ignore_merges": False,
                  "vocab": {"<s>": 0, "</s>": 1, "a": 2, "b": 3, "c": 4, "Ġ": 5, "ab": 6, "abc": 7},
                  "merges": ["a b", "ab c"]},
    }


def _hf(tmp_path, template: bool):
    path = tmp_path / f"tokenizer{int(template)}.json"
    path.write_text(json.dumps(_hf_doc(template)), encoding="utf-8")
    return path, subwords.load(path)


@pytest.mark.parametrize("template", [False, True])
def test_tokenizer_json_plain_call_ids_by_hand(tmp_path, template):
    from subwords.formats.huggingface.read import HuggingFace

    path, tok = _hf(tmp_path, template)
    # ByteLevel cuts "abc ab" into abc, Ġab: abc 7; Ġ 5, ab 6
    ids = [7, 5, 6]
    around = [0, *ids, 1] if template else ids
    _checks_of_the_call(tok, HuggingFace.encode, "abc ab", around)
    assert tok.encode("abc ab", add_special_tokens=False) == ids
    assert tok.encode("<s>abc", allowed_special="all") == ([0, 0, 7, 1] if template else [0, 7])
    long = "abc" + " ab" * 300  # past the length below which the GIL is kept
    long_ids = [7] + [5, 6] * 300
    assert tok.encode(long) == ([0, *long_ids, 1] if template else long_ids)
    with pytest.raises(InputError):
        tok.encode("ab\ud800")
    tokenizers = pytest.importorskip("tokenizers")
    peer = tokenizers.Tokenizer.from_file(str(path))
    for text in ("abc ab", long):
        assert tok.encode(text) == peer.encode(text).ids


def test_tokenizer_json_freed_copied_and_subclassed(tmp_path):
    from subwords.formats.huggingface.read import HuggingFace

    path, tok = _hf(tmp_path, True)
    _freed_at_once(lambda: subwords.load(path), "abc ab", [0, 7, 5, 6, 1])
    # a shallow copy has a call of its own, which outlives the original
    gc.disable()
    try:
        c = copy.copy(tok)
        assert isinstance(c.encode, _core.FaceCall) and c.encode is not tok.encode
        ref = weakref.ref(tok)
        del tok
        assert ref() is None
        assert c.encode("abc ab") == [0, 7, 5, 6, 1]
        assert c.encode("abc ab", add_special_tokens=False) == [7, 5, 6]
    finally:
        gc.enable()

    class Marked(HuggingFace):
        def encode(self, text, **kw):  # type: ignore[override]
            return [-1] + super().encode(text, **kw)

    mine = Marked(_hf_doc(True), str(path))
    assert "encode" not in vars(mine) and mine.encode("abc ab") == [-1, 0, 7, 5, 6, 1]
    # a deep copy is read again from the document and the tables, as the subclass it was
    deep = copy.deepcopy(mine)
    assert type(deep) is Marked and "encode" not in vars(deep) and deep.encode("abc ab") == [-1, 0, 7, 5, 6, 1]


@pytest.mark.parametrize("template", [False, True])
def test_tokenizer_json_pickled_and_deep_copied(tmp_path, template):
    # the vocab and merges read from the file's bytes (the document holds {} and [] for them):
    # the pickle carries them beside the document; ids as worked out in the test above
    path, tok = _hf(tmp_path, template)
    for c in (copy.deepcopy(tok), pickle.loads(pickle.dumps(tok))):
        assert isinstance(c.encode, _core.FaceCall) and c.encode is not tok.encode
        assert c.encode("abc ab") == ([0, 7, 5, 6, 1] if template else [7, 5, 6])
        assert c.encode("abc ab", add_special_tokens=False) == [7, 5, 6]
        assert c.encode("<s>abc", allowed_special="all") == ([0, 0, 7, 1] if template else [0, 7])
    back = pickle.loads(pickle.dumps(subwords.load(path)))
    assert back.decode([7, 5, 6]) == "abc ab" and back.id_to_piece(7) == "abc"
    assert back.piece_to_id("ab") == 6 and back.vocab_size == 8


def test_vocab_merges_pickled(tmp_path):
    # GPT-2's two files: "ab" merged first, then "ab c"; "abc ab" is abc, Ġ, ab (ids by hand)
    (tmp_path / "vocab.json").write_text(json.dumps({"a": 0, "b": 1, "c": 2, "Ġ": 3, "ab": 4, "abc": 5}),
                                         encoding="utf-8")
    (tmp_path / "merges.txt").write_text("#version: 0.2\na b\nab c\n", encoding="utf-8")
    tok = subwords.load(tmp_path / "vocab.json", format="vocab-merges")
    assert tok.encode("abc ab") == [5, 3, 4]
    _copies(tok, "abc ab", [5, 3, 4])


# -- a .tiktoken rank file -----------------------------------------------------------------------

def test_rank_file_call_answers_as_the_method(tmp_path):
    from subwords.formats import tiktoken as tk
    from subwords.formats.tiktoken.read import TiktokenTokenizer

    # the 256 bytes (rank = byte), then ab 256, abc 257: "abc ab" under r50k's pattern is
    # abc, " ab": abc 257; space 32, ab 256
    ranks = [bytes([b]) for b in range(256)] + [b"ab", b"abc"]
    path = tmp_path / "toy.tiktoken"
    path.write_bytes(b"".join(base64.b64encode(t) + b" %d\n" % i for i, t in enumerate(ranks)))
    tok = tk.load(path, pattern="r50k_base", special_tokens={})
    _checks_of_the_call(tok, TiktokenTokenizer.encode, "abc ab", [257, 32, 256])
    _freed_at_once(lambda: tk.load(path, pattern="r50k_base", special_tokens={}), "abc ab", [257, 32, 256])
    tiktoken = pytest.importorskip("tiktoken")
    from tiktoken_ext import openai_public

    pat = openai_public.r50k_pat_str
    peer = tiktoken.Encoding("toy", pat_str=pat, mergeable_ranks={t: i for i, t in enumerate(ranks)},
                             special_tokens={})
    assert tok.encode("abc ab") == peer.encode("abc ab")
