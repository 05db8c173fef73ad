"""``subwords.compat.tiktoken`` beyond what tiktoken's own tests check: where rank files are
found, what a missing one says, and the calls tiktoken's suite leaves out (``encode_with_unstable``,
``_encode_bytes`` on broken UTF-8, custom patterns, the exact error texts), each compared with
the real ``tiktoken.Encoding`` built from the same rank file with the pattern and special tokens
of tiktoken's own ``tiktoken_ext.openai_public``.
"""

from __future__ import annotations

import hashlib
import os
import pickle
import tempfile

import openai_files
import peers
import pytest
import tiktoken
from hypothesis import given, settings
from hypothesis import strategies as st
from tiktoken.load import load_tiktoken_bpe

import subwords.compat.tiktoken as face
from subwords.errors import MissingFileError, OptionError

R50K_URL = "https://openaipublic.blob.core.windows.net/encodings/r50k_base.tiktoken"


@pytest.fixture
def fresh_registry(monkeypatch):
    """The face's registry emptied, and its environment variables cleared, for one test."""
    monkeypatch.setattr(face, "_ENCODINGS", {})
    for var in ("SUBWORDS_TIKTOKEN_DIR", "TIKTOKEN_CACHE_DIR", "DATA_GYM_CACHE_DIR"):
        monkeypatch.delenv(var, raising=False)
    return monkeypatch


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    return openai_files.as_folder(tmp_path_factory.mktemp("openai"))


@pytest.fixture(scope="module", params=["r50k_base", "cl100k_base"])
def pair(request, files):
    """(face, tiktoken) for one encoding, from the same rank file."""
    name = request.param
    with pytest.MonkeyPatch.context() as m:
        m.setenv("SUBWORDS_TIKTOKEN_DIR", str(files))
        m.setattr(face, "_ENCODINGS", {})
        ours = face.get_encoding(name)
    spec = peers.tiktoken_spec(name, load_tiktoken_bpe(str(files / f"{name}.tiktoken")))
    theirs = tiktoken.Encoding(name, pat_str=spec["pat_str"], mergeable_ranks=spec["mergeable_ranks"],
                               special_tokens=spec["special_tokens"])
    return ours, theirs


# ====================
# Finding rank files
# ====================

def test_a_folder_named_by_subwords_tiktoken_dir_is_read(fresh_registry, files, tmp_path):
    fresh_registry.setenv("SUBWORDS_TIKTOKEN_DIR", os.pathsep.join([str(tmp_path / "empty"), str(files)]))
    fresh_registry.setenv("TIKTOKEN_CACHE_DIR", "")
    enc = face.get_encoding("r50k_base")
    # tiktoken's own README: "hello world" is [31373, 995] in GPT-2's encoding
    assert enc.encode("hello world") == [31373, 995]
    assert face.get_encoding("r50k_base") is enc


@pytest.mark.parametrize("var", ["TIKTOKEN_CACHE_DIR", "DATA_GYM_CACHE_DIR"])
def test_tiktoken_cache_is_read_under_the_sha1_of_the_url(fresh_registry, tmp_path, var):
    key = hashlib.sha1(R50K_URL.encode()).hexdigest()
    (tmp_path / key).write_bytes(openai_files.data("r50k_base.tiktoken"))
    fresh_registry.setenv(var, str(tmp_path))
    assert face.get_encoding("r50k_base").encode("hello world") == [31373, 995]


def test_tiktoken_cache_dir_wins_over_data_gym_cache_dir(fresh_registry, tmp_path):
    fresh_registry.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path / "empty"))
    good = openai_files.as_tiktoken_cache(tmp_path / "good")
    fresh_registry.setenv("DATA_GYM_CACHE_DIR", str(good))
    with pytest.raises(MissingFileError):
        face.get_encoding("r50k_base")


def test_default_cache_is_data_gym_cache_in_the_temporary_folder(fresh_registry, tmp_path):
    fresh_registry.setattr(tempfile, "tempdir", str(tmp_path))
    openai_files.as_tiktoken_cache(tmp_path / "data-gym-cache")
    assert face.get_encoding("gpt2").encode("hello world") == [31373, 995]


def test_a_missing_file_says_where_to_put_it(fresh_registry, tmp_path):
    fresh_registry.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path))
    with pytest.raises(FileNotFoundError) as e:
        face.get_encoding("r50k_base")
    assert isinstance(e.value, MissingFileError)
    msg = str(e.value)
    assert R50K_URL in msg and "SUBWORDS_TIKTOKEN_DIR" in msg and "r50k_base.tiktoken" in msg
    assert os.path.join(str(tmp_path), hashlib.sha1(R50K_URL.encode()).hexdigest()) in msg


def test_an_empty_tiktoken_cache_dir_turns_the_cache_off(fresh_registry, tmp_path):
    fresh_registry.setenv("TIKTOKEN_CACHE_DIR", "")
    with pytest.raises(MissingFileError, match="cache is off"):
        face.get_encoding("cl100k_base")


def test_a_file_with_other_content_is_refused_by_its_hash(fresh_registry, tmp_path):
    (tmp_path / "r50k_base.tiktoken").write_bytes(openai_files.data("p50k_base.tiktoken"))
    fresh_registry.setenv("SUBWORDS_TIKTOKEN_DIR", str(tmp_path))
    fresh_registry.setenv("TIKTOKEN_CACHE_DIR", "")
    with pytest.raises(MissingFileError, match="another content"):
        face.get_encoding("r50k_base")


def test_gpt2_from_vocab_bpe_has_r50k_base_ranks(fresh_registry, files):
    # tiktoken builds gpt2 from GPT-2's merges file; its ranks are r50k_base's, token for token
    fresh_registry.setenv("SUBWORDS_TIKTOKEN_DIR", str(files))
    gpt2, r50k = face.get_encoding("gpt2"), face.get_encoding("r50k_base")
    assert gpt2._mergeable_ranks == r50k._mergeable_ranks
    assert gpt2.n_vocab == 50257


def test_encoder_json_that_disagrees_with_the_merges_is_refused(tmp_path, files):
    import json

    table = json.loads(openai_files.data("encoder.json"))
    table["hello"] += 1
    (tmp_path / "encoder.json").write_text(json.dumps(table))
    with pytest.raises(ValueError, match="does not match"):
        face.data_gym_to_mergeable_bpe_ranks(str(files / "vocab.bpe"), str(tmp_path / "encoder.json"))


def test_unknown_names_raise_tiktoken_errors():
    with pytest.raises(ValueError, match="Unknown encoding"):
        face.get_encoding("nope")
    with pytest.raises(ValueError, match="Expected a string"):
        face.get_encoding(3)
    with pytest.raises(KeyError):
        face.encoding_for_model("not-a-model")
    assert face.encoding_name_for_model("gpt-4o-2024-05-13") == "o200k_base"
    assert face.list_encoding_names() == ["gpt2", "r50k_base", "p50k_base", "p50k_edit", "cl100k_base",
                                          "o200k_base", "o200k_harmony"]


def test_load_tiktoken_bpe_reads_a_local_file(files):
    assert face.load_tiktoken_bpe(str(files / "r50k_base.tiktoken")) == load_tiktoken_bpe(
        str(files / "r50k_base.tiktoken"))


# ====================
# The same answers as tiktoken
# ====================

TEXTS = ["hello world", "hello fanta", "hello wor", "today\n ", "today\n \n", "  !", "x = 1\n\n", "日本語のテキスト",
         "<|endoftext|> and <|fim_prefix|>", "a\u2003", "ab\t", " \x850", "naïve café", ""]


def test_encode_with_unstable_matches_tiktoken(pair):
    ours, theirs = pair
    for text in TEXTS[:-2]:
        for kw in ({"disallowed_special": ()}, {"allowed_special": "all"}):
            s1, c1 = ours.encode_with_unstable(text, **kw)
            s2, c2 = theirs.encode_with_unstable(text, **kw)
            assert s1 == s2, text
            assert sorted(map(tuple, c1)) == sorted(map(tuple, c2)), text


@settings(max_examples=200, deadline=None)
@given(data=st.binary(max_size=12))
def test_encode_bytes_matches_tiktoken(pair, data):
    ours, theirs = pair
    assert ours._encode_bytes(data) == theirs._encode_bytes(data)


@settings(max_examples=200, deadline=None)
@given(text=st.text(max_size=30))
def test_encode_pieces_and_offsets_match_tiktoken(pair, text):
    ours, theirs = pair
    assert ours.encode(text, allowed_special="all") == theirs.encode(text, allowed_special="all")
    if text:  # tiktoken panics on an empty piece (PanicException); the face returns []
        assert ours.encode_single_piece(text) == theirs._encode_single_piece(text)
    ids = theirs.encode(text, disallowed_special=())
    assert ours.decode_with_offsets(ids) == theirs.decode_with_offsets(ids)
    assert ours.encode_to_numpy(text, disallowed_special=()).tolist() == ids


def test_errors_match_tiktoken(pair):
    ours, theirs = pair
    for kw in ({}, {"disallowed_special": {"<|endoftext|>"}}):
        with pytest.raises(ValueError) as a:
            ours.encode("x <|endoftext|>", **kw)
        with pytest.raises(ValueError) as b:
            theirs.encode("x <|endoftext|>", **kw)
        assert str(a.value) == str(b.value)
    with pytest.raises(ValueError):
        ours.encode_batch(["fine", "not <|endoftext|>"])
    for call in (lambda e: e.encode_single_token(b"\xff\xfe not a token"), lambda e: e.decode_single_token_bytes(10**6),
                 lambda e: e.decode_bytes([1, 10**6])):
        with pytest.raises(KeyError) as a:
            call(ours)
        with pytest.raises(KeyError) as b:
            call(theirs)
        assert a.value.args == b.value.args
    with pytest.raises(OptionError):
        ours.encode_ordinary_batch(["a"], num_threads=0)


def test_tables_match_tiktoken(pair):
    ours, theirs = pair
    assert ours.token_byte_values() == theirs.token_byte_values()
    assert (ours.n_vocab, ours.max_token_value, ours.eot_token) == (theirs.n_vocab, theirs.max_token_value,
                                                                    theirs.eot_token)
    assert ours.special_tokens_set == theirs.special_tokens_set
    assert ours._pat_str == theirs._pat_str
    assert ours._mergeable_ranks == theirs._mergeable_ranks
    assert ours.encode_ordinary_batch(TEXTS, num_threads=2) == theirs.encode_ordinary_batch(TEXTS)
    batch = ours.encode_batch(TEXTS, allowed_special="all")
    assert batch == theirs.encode_batch(TEXTS, allowed_special="all")
    assert ours.decode_batch(batch) == theirs.decode_batch(batch)
    assert ours.decode_bytes_batch(batch) == theirs.decode_bytes_batch(batch)
    assert ours.decode_tokens_bytes(batch[0]) == theirs.decode_tokens_bytes(batch[0])


def test_a_pattern_of_our_own_runs_on_the_regex_engine(pair):
    # tiktoken keeps only the pattern's matches: the text between them is dropped
    _, theirs = pair
    spec = dict(pat_str=r"[a-z]+|\d", mergeable_ranks=theirs._mergeable_ranks, special_tokens={"<|x|>": theirs.n_vocab})
    ours, peer = face.Encoding("mine", **spec), tiktoken.Encoding("mine", **spec)
    for text in ["hello, world 42!", "NO lower case", "a<|x|>b", "ümlaut 7"]:
        assert ours.encode(text, allowed_special="all") == peer.encode(text, allowed_special="all"), text
    back = pickle.loads(pickle.dumps(ours))
    assert back.encode("a<|x|>b", allowed_special="all") == peer.encode("a<|x|>b", allowed_special="all")


def test_a_bad_pattern_is_a_value_error(pair):
    _, theirs = pair
    with pytest.raises(ValueError, match="not a valid regular expression"):
        face.Encoding("bad", pat_str="(unclosed", mergeable_ranks=theirs._mergeable_ranks, special_tokens={})


def test_encode_on_one_text_is_a_native_call_with_the_methods_whole_behaviour():
    """``encode(text)`` and ``encode_ordinary(text)`` are ``_core.FaceCall`` (no Python frame);
    the native path hands a text holding the specials' first characters to the Python method,
    wherever they are in it. The encoding is the class docstring's: single bytes, ab 256,
    abc 257, <|end|> 260, split on whitespace."""
    import gc
    import inspect
    import weakref

    from subwords import _core

    ranks = {**{bytes([b]): b for b in range(256)}, b"ab": 256, b"abc": 257}
    enc = face.Encoding("toy", pat_str=r"\S+|\s+", special_tokens={"<|end|>": 260}, mergeable_ranks=ranks)
    assert type(enc.encode) is _core.FaceCall and type(enc.encode_ordinary) is _core.FaceCall
    assert enc.encode("abc ab ba") == [257, 32, 256, 32, 98, 97]
    for k in range(20):  # the special at every place of an 8-byte word and of the tail
        with pytest.raises(ValueError, match="disallowed special token"):
            enc.encode("b" * k + "<|end|>")
        assert enc.encode("b" * k + "<|end|>", allowed_special="all") == [98] * k + [260]
        assert enc.encode_ordinary("b" * k + "<|end|>") == [98] * k + [60, 124, 101, 110, 100, 124, 62]
        assert enc.encode("b" * k + "<|en") == [98] * k + [60, 124, 101, 110]
        assert enc.encode("<" + "b" * k) == [60] + [98] * k
    assert enc.encode(text="ab") == [256]
    assert "allowed_special" in inspect.signature(enc.encode).parameters

    class Mine(face.Encoding):
        def encode(self, text, **kwargs):
            return "mine"

    mine = Mine("toy", pat_str=r"\S+|\s+", special_tokens={}, mergeable_ranks=ranks)
    assert mine.encode("ab") == "mine" and "encode" not in vars(mine)
    assert mine.encode_ordinary("ab") == [256]

    # the call holds its encoding, as a bound method does (a cycle the collector frees)
    encode = face.Encoding("toy", pat_str=r"\S+|\s+", special_tokens={"<|end|>": 260}, mergeable_ranks=ranks).encode
    assert encode("ab<|end|>", allowed_special="all") == [256, 260]
    assert face.Encoding.encode(enc, "ab") == [256]
    ref = weakref.ref(enc)
    del enc
    gc.collect()
    assert ref() is None



def test_registered_encodings_pickle_by_name(pair):
    ours, _ = pair
    assert pickle.loads(pickle.dumps(ours)).encode("hello world") == ours.encode("hello world")


def test_docstring_examples_run():
    import doctest

    result = doctest.testmod(face, optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0 and result.failed == 0


BYTES = {bytes([b]): b for b in range(256)}


@pytest.mark.parametrize("kw, match", [
    ({"mergeable_ranks": [1]}, "must be a dict"),
    ({"mergeable_ranks": {"a": 1}}, "must map bytes -> int"),
    ({"mergeable_ranks": {5: 1}}, "must map bytes -> int"),
    ({"mergeable_ranks": {b"a": -1}}, "must map bytes -> int"),
    ({"mergeable_ranks": {b"a": 1}}, "0x00 has no rank"),
    ({"special_tokens": {"<|x|>": 3}}, "used twice"),
    ({"pat_str": None}, "pat_str must be a str"),
    ({"explicit_n_vocab": 300}, "explicit_n_vocab=300"),
])
def test_a_bad_encoding_is_a_value_error_naming_the_problem(kw, match):
    args = {"pat_str": r"\S+|\s+", "mergeable_ranks": BYTES, "special_tokens": {}, **kw}
    with pytest.raises(ValueError, match=match):
        face.Encoding("bad", **args)


def test_bad_calls_raise_the_builtin_a_caller_catches():
    enc = face.Encoding("toy", pat_str=r"\S+|\s+", mergeable_ranks=BYTES, special_tokens={"<|x|>": 256})
    with pytest.raises(TypeError):
        enc.encode(123)
    with pytest.raises(TypeError):
        enc.encode_ordinary(b"bytes")
    with pytest.raises(ValueError, match="not one str"):
        enc.encode_ordinary_batch("one text")
    with pytest.raises(TypeError):
        enc.decode_bytes(["a"])
    with pytest.raises(OverflowError):
        enc.decode_bytes([-1])
    with pytest.raises(ValueError, match="int id"):  # tiktoken fails an assert here
        enc.is_special_token("256")


def test_o200k_harmony_has_tiktokens_special_tokens_but_one_alias(fresh_registry, files):
    fresh_registry.setenv("SUBWORDS_TIKTOKEN_DIR", str(files))
    ours = face.get_encoding("o200k_harmony")
    theirs = peers.tiktoken_spec("o200k_harmony", {})["special_tokens"]
    # tiktoken names id 200018 twice; the face keeps the name o200k_base gives it (docs/COMPAT.md)
    assert theirs["<|endofprompt|>"] == theirs["<|reserved_200018|>"] == 200018
    assert ours._special_tokens == {s: i for s, i in theirs.items() if s != "<|reserved_200018|>"}
    assert ours.n_vocab == 201088
