"""tiktoken rank files: the same ids as tiktoken itself, built from the same file.

The rank files are OpenAI's, fetched at test time: cl100k_base and o200k_base from the
``bpe-openai`` crate, GPT-2's (r50k_base's ranks) from the ``openai-whisper`` sdist. The peer is
``tiktoken.Encoding`` built with the pattern and special tokens of tiktoken's own
``tiktoken_ext.openai_public`` (its downloader swapped for the fetched file), so the patterns
and special ids are tiktoken's, not copies of ours.
"""

from __future__ import annotations

import base64
import gzip
import unicodedata

import pytest

import tiktoken
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

import subwords  # noqa: E402
from subwords import _core  # noqa: E402
from subwords.errors import InputError, ModelFileError, UnknownPieceError  # noqa: E402
from subwords.formats import tiktoken as tk  # noqa: E402

import peers  # noqa: E402

FILES = {
    "cl100k_base": lambda: gzip.decompress(peers.crate_member("bpe-openai", "0.2.1", "data/cl100k_base.tiktoken.gz")),
    "o200k_base": lambda: gzip.decompress(peers.crate_member("bpe-openai", "0.2.1", "data/o200k_base.tiktoken.gz")),
    "gpt2": lambda: peers.pypi_member("openai-whisper==20250625", "whisper/assets/gpt2.tiktoken"),
}
# tiktoken's constructor for each file's encoding (gpt2's ranks are r50k_base's)
CONSTRUCTOR = {"cl100k_base": "cl100k_base", "o200k_base": "o200k_base", "gpt2": "r50k_base"}


@pytest.fixture(scope="module", params=list(FILES))
def pair(request, tmp_path_factory):
    """(ours, tiktoken's) for one rank file."""
    name = request.param
    data = FILES[name]()
    path = tmp_path_factory.mktemp("ranks") / f"{name}.tiktoken"
    path.write_bytes(data)
    peer = peers.tiktoken_peer(data, CONSTRUCTOR[name], name)
    ours = subwords.formats.load(path)
    assert isinstance(ours, tk.TiktokenTokenizer)
    return ours, peer


EDGE = [
    "", " ", "  ", "\n", "\n\n\n", "\r\n", "\r\n\r\n  ", " \n \n ", "\t\tx", "a  \n  ", "x   ", "hello  world",
    "Hello, world! It's 2024.", "I'M YOU'RE we'Ll THEY'VE she'D it'S", "'s 's'S 'ſ x'ſ", "don't'll've",
    "12345678901", "٣٤٥٦٧ 1٢3", "Ⅻ½²", "café cafe\u0301 CAFE\u0301", "ǅemal ǅ", "ʰʰa", "中文文本，测试。", "日本語のテキスト",
    "한국어 텍스트", "Привет, МИР! ПриветМир", "مرحبا بالعالم", "עברית", "ελληνικά ΕΛΛΗΝΙΚΑ", "😀😀 👍🏽 🇩🇪",
    "\U0001d400\U0001d41a", "a\u200db", "\x00\x01\x7f", "\ufeffBOM", "x\u0301\u0301\u0301!", "\u20dd\u20dd",
    "http://example.com/a/b?c=d", "!!//\n\n//x", " ?!/\r\n/", "def f(x):\n    return x  # hi\n", "<|endoftext|>",
    "a<|endoftext|>b<|endofprompt|>", "<|fim_prefix|>x<|fim_suffix|>", "\u00a0\u00a0word\u3000word\u2028",
    "\x85\x85x", "word\u0301's", "HELLOworld", "helloWORLD", "ABCdefGHI", "aA'S", "\u0301abc", "x" * 300,
    "ab" * 400, "Ωμέγα" * 100, " " * 700 + "x",
]


def test_edge_cases(pair):
    ours, peer = pair
    for text in EDGE:
        ids = ours.encode(text)
        assert ids == peer.encode(text, disallowed_special=()), text
        assert ours.decode(ids) == peer.decode(ids) == text
        # the pieces are tiktoken's tokens (their bytes, spelled with GPT-2's byte table)
        pieces = ours.encode_pieces(text)
        assert [tk.piece_bytes(p) for p in pieces] == [peer.decode_single_token_bytes(i) for i in ids], text
        assert ours.decode_pieces(pieces) == text


def test_offsets_match_tiktoken(pair):
    # tiktoken's decode_with_offsets gives each token's start in code points (a token that starts
    # inside a character starts at that character); ours gives the same starts
    ours, peer = pair
    for text in EDGE + list(peers.multilingual_texts())[:300:7]:
        ids = ours.encode(text)
        _, starts = peer.decode_with_offsets(ids)
        spans = ours.encode_with_offsets(text)
        assert [i for i, _, _ in spans] == ids
        assert [start for _, start, _ in spans] == starts, text
        assert "".join(text[a:b] for _, a, b in spans) == text  # the spans tile the text


def test_multilingual_corpus_batch(pair):
    ours, peer = pair
    texts = list(peers.multilingual_texts())
    expected = peer.encode_batch(texts, disallowed_special=())
    assert ours.encode_batch(texts, threads=2) == expected
    assert ours.encode_batch(texts[:2000], threads=1) == expected[:2000]
    joined = "\n".join(texts[:3000])
    assert ours.encode(joined) == peer.encode(joined, disallowed_special=())


def test_vocabulary_facts(pair):
    ours, peer = pair
    assert ours.vocab_size == peer.n_vocab
    assert ours.special_tokens == peer._special_tokens
    for i in [0, 1, 32, 255, 256, 1000, 5000, peer.n_vocab - 1]:
        if i in peer._special_tokens.values():
            continue
        assert ours.token_bytes(i) == peer.decode_single_token_bytes(i)
        assert ours.piece_to_id(ours.id_to_piece(i)) == i
    world = peer.encode(" world")
    assert len(world) == 1 and ours.id_to_piece(world[0]) == "Ġworld"
    eot = peer._special_tokens["<|endoftext|>"]
    assert ours.id_to_piece(eot) == "<|endoftext|>" and ours.piece_to_id("<|endoftext|>") == eot
    with pytest.raises(UnknownPieceError):
        ours.piece_to_id("no such piece \u4e00\u4e01\u4e02\u4e03")
    with pytest.raises(UnknownPieceError):
        ours.id_to_piece(peer.n_vocab + 10)


def test_pickle(pair):
    import pickle

    ours, peer = pair
    back = pickle.loads(pickle.dumps(ours))
    text = "Pickled " + EDGE[12] + "<|endoftext|>"
    assert back.encode(text, allowed_special="all") == ours.encode(text, allowed_special="all") \
        == peer.encode(text, allowed_special="all")
    assert back.vocab_size == ours.vocab_size and back.special_tokens == ours.special_tokens


def test_allowed_special(pair):
    ours, peer = pair
    specials = sorted(peer._special_tokens)
    text = "a " + " x".join(specials) + "<|endoftext|><|endoftext|>end"
    assert ours.encode(text) == peer.encode(text, disallowed_special=())
    assert ours.encode(text, allowed_special="all") == peer.encode(text, allowed_special="all")
    one = {"<|endoftext|>"}
    assert ours.encode(text, allowed_special=one) == peer.encode(text, allowed_special=one, disallowed_special=())
    assert ours.encode_batch([text] * 3, allowed_special="all") == [peer.encode(text, allowed_special="all")] * 3
    with pytest.raises(InputError):
        ours.encode(text, allowed_special={"<|nope|>"})
    with pytest.raises(InputError):
        ours.encode(text, allowed_special="none")
    ids = ours.encode(text, allowed_special="all")
    assert ours.decode(ids) == peer.decode(ids) == text


def test_decode_invalid_utf8_and_bytes(pair):
    ours, peer = pair
    ids = peer.encode("中文😀 ñ")
    pieces = [i for i in range(256)]  # single bytes, most of them not UTF-8 on their own
    for seq in (ids[:1], ids[1:], pieces[128:140], pieces[::-1], [ids[0], 200, 201] + ids):
        assert ours.decode_bytes(seq) == peer.decode_bytes(seq)
        assert ours.decode(seq) == peer.decode(seq, errors="replace")
    with pytest.raises(UnknownPieceError):
        ours.decode([peer.n_vocab + 5])
    with pytest.raises(UnknownPieceError):
        ours.decode([-1])
    with pytest.raises(InputError):
        ours.decode(["1"])


def test_surrogates_and_types(pair):
    ours, peer = pair
    text = "a\ud800b\udfffc"
    assert ours.encode(text) == peer.encode(text, disallowed_special=())
    assert ours.encode_batch([text, "x"]) == [peer.encode(text, disallowed_special=()), peer.encode("x")]
    with pytest.raises(InputError):
        ours.encode(b"bytes")
    with pytest.raises(InputError):
        ours.encode_batch("one string")
    with pytest.raises(subwords.OptionError):  # a bad thread count is an option error in every family
        ours.encode_batch(["x"], threads=0)


def test_long_chunks(pair):
    """Chunks past the scan limit merge with a heap: same ids as tiktoken's scan."""
    ours, peer = pair
    import random

    rng = random.Random(7)
    for alphabet in ("ab", "abcdefgh", "eéè", "th e"):
        text = "".join(rng.choice(alphabet) for _ in range(2500))
        assert ours.encode(text) == peer.encode(text, disallowed_special=()), alphabet


def test_hostile_lengths_stay_fast(pair):
    ours, _ = pair
    import time

    start = time.perf_counter()
    ours.encode("a" * 1_000_000)
    ours.encode("ab" * 500_000)
    ours.encode(" " * 1_000_000)
    ours.encode("1" * 1_000_000)
    ours.encode("\u0301" + "A" * 1_000_000)
    ours.encode("\u0301A" * 300_000 + "a")
    ours.encode("x" + "  \n" * 300_000)
    ours.encode("'" * 1_000_000)
    assert time.perf_counter() - start < 30


# --- adversarial text -------------------------------------------------------------------------

PIECES = (
    list(" \t\n\r\x0b\x0c\x85\xa0\u1680\u2000\u2028\u2029\u202f\u3000\u200b")
    + list("aAzZsStTdDmMlLvVeErRkK'’/!?.,-_#<|>") + ["'s", "'S", "'t", "'LL", "'ll", "'lL", "'Re", "'VE", "'d", "'M"]
    + ["ſ", "'ſ", "ǅ", "ʰ", "ˆ", "中", "ا", "\u0301", "\u0903", "\u20dd", "1", "٣", "Ⅻ", "½", "é", "ß", "Σ", "ς",
       "😀", "\U0001d400", "\r\n", "  ", " '", "//", "\n/", "<|endoftext|>"]
)


def assigned(c: str) -> bool:
    """Assigned as of Python's Unicode tables (14.0): the `regex` module (Unicode 17) and the
    Rust tables (tiktoken's and ours, Unicode 16) give these the same categories."""
    return unicodedata.category(c) not in ("Cn", "Cs")


adversarial = st.lists(
    st.one_of(st.sampled_from(PIECES), st.characters(codec="utf-8").filter(assigned)), max_size=40
).map("".join)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=adversarial)
def test_ids_equal_tiktoken_on_adversarial_text(pair, text):
    ours, peer = pair
    assert ours.encode(text) == peer.encode(text, disallowed_special=())
    assert ours.encode(text, allowed_special="all") == peer.encode(text, allowed_special="all")


REGEXES = [("r50k", tk.R50K_PATTERN), ("r50k", tk.GPT2_PATTERN), ("cl100k", tk.CL100K_PATTERN), ("o200k", tk.O200K_PATTERN)]

# The splitters' oracle is tiktoken itself: its Rust core carries its own, fixed character
# tables, unlike the `regex` module, whose tables move with every release. tiktoken has no
# call that returns its chunks, so `tiktoken_splits_as_ours` makes them visible. It builds a
# rank table that holds every byte, every prefix of each of our chunks, and the join of each
# pair of adjacent chunks. Under that table each chunk tiktoken forms that equals one of ours
# becomes one token (the leftmost token can always grow by its neighbour, since every prefix is
# ranked). A chunk of tiktoken's that spans two of ours cannot end as those two tokens (their
# join is ranked, so BPE would go on), and a chunk that cuts one of ours cannot produce it whole.
# So tiktoken's tokens equal "one rank per chunk of ours" exactly when its chunks equal ours.
TIKTOKEN_UNICODE = "16.0.0"  # tiktoken 0.14.0 (pinned in constraints.txt): regex-syntax 0.8's tables


def _revealing_ranks(splits: list[list[str]]) -> dict[bytes, int]:
    ranks = {bytes([b]): b for b in range(256)}
    for pieces in splits:
        bs = [p.encode("utf-8") for p in pieces]
        for p in bs:
            for k in range(2, len(p) + 1):
                ranks.setdefault(p[:k], len(ranks))
        for a, b in zip(bs, bs[1:]):
            ranks.setdefault(a + b, len(ranks))
    return ranks


def tiktoken_disagreements(name: str, pattern: str, texts: list[str]) -> list[tuple[str, list[str], list[str]]]:
    """(text, our chunks, tiktoken's chunks) for every text where the two split differently."""
    ours = [_core.split_pattern(name, t) for t in texts]
    ranks = _revealing_ranks(ours)
    peer = tiktoken.Encoding("splits", pat_str=pattern, mergeable_ranks=ranks, special_tokens={})
    got = [peer.encode_ordinary(t) for t in texts]  # the batch call's thread pool costs 5x here
    return [(t, o, [peer.decode_single_token_bytes(x).decode("utf-8", "replace") for x in g])
            for t, o, g in zip(texts, ours, got) if g != [ranks[p.encode("utf-8")] for p in o]]


def test_the_split_oracle_sees_a_wrong_split():
    """The construction above catches a splitter that joins or cuts one chunk too many."""
    text = "x中1 中中!A中's\n"
    ours = _core.split_pattern("cl100k", text)
    assert ours == ["x中", "1", " 中中", "!A中", "'s", "\n"]
    for wrong in (ours[:1] + ["".join(ours[1:3])] + ours[3:], ours[:2] + [" 中", "中"] + ours[3:]):
        ranks = _revealing_ranks([wrong])
        peer = tiktoken.Encoding("splits", pat_str=tk.CL100K_PATTERN, mergeable_ranks=ranks, special_tokens={})
        assert peer.encode_ordinary(text) != [ranks[p.encode()] for p in wrong]


def test_unicode_tables_are_tiktokens():
    """The pre-split patterns classify characters by general category (`\\p{L}`, `\\p{N}`);
    ours and tiktoken's are both Unicode 16.0 (unicode-general-category 1.1.0 pinned in
    Cargo.lock), and `test_splitter_every_code_point` checks every code point against tiktoken."""
    assert _core.unicode_versions()["general_category"] == TIKTOKEN_UNICODE
    assert tiktoken.__version__ == "0.14.0", "a new tiktoken may carry new tables: re-check TIKTOKEN_UNICODE"


def test_patterns_are_tiktokens():
    import tiktoken_ext.openai_public as public

    src = {name: getattr(public, name) for name in ("r50k_base", "cl100k_base", "o200k_base")}
    original = public.load_tiktoken_bpe
    public.load_tiktoken_bpe = lambda *a, **k: {}
    try:
        assert src["r50k_base"]()["pat_str"] == tk.R50K_PATTERN
        assert src["cl100k_base"]()["pat_str"] == tk.CL100K_PATTERN
        assert src["o200k_base"]()["pat_str"] == tk.O200K_PATTERN
        for name, (pattern_name, specials) in tk.ENCODINGS.items():
            if name == "gpt2":
                continue
            spec = getattr(public, name)()
            assert spec["special_tokens"] == specials, name
            assert spec["pat_str"] in tk.PATTERNS[pattern_name], name
    finally:
        public.load_tiktoken_bpe = original


@pytest.mark.parametrize("name,pattern", REGEXES)
@settings(max_examples=600, deadline=None)
@given(text=adversarial)
def test_splitter_equals_tiktoken(name, pattern, text):
    assert tiktoken_disagreements(name, pattern, [text]) == []


@pytest.mark.parametrize("name,pattern", REGEXES)
def test_splitter_equals_tiktoken_on_corpus(name, pattern):
    texts = list(peers.multilingual_texts()[::5])
    assert len(texts) > 1000
    assert tiktoken_disagreements(name, pattern, texts)[:5] == []


@pytest.mark.parametrize("corpus", ["english", "code", "multilingual"])
@pytest.mark.parametrize("name,pattern", REGEXES[2:])
def test_splitter_equals_tiktoken_on_benchmark_corpora(name, pattern, corpus):
    """The benchmark corpora as the encoding benchmark feeds them: lines, and runs of 40 lines
    with their line breaks (indentation, blank lines and line ends inside one text)."""
    lines = list(peers.corpus_texts(corpus, 1_000_000))
    texts = lines + ["\n".join(lines[k:k + 40]) + "\n" for k in range(0, len(lines), 40)]
    assert len(texts) > 5000
    assert tiktoken_disagreements(name, pattern, texts)[:5] == []


@pytest.mark.parametrize("name,pattern", REGEXES[1:])
def test_splitter_every_code_point(name, pattern):
    """Every code point but the surrogates, assigned or not, in a context that exercises each
    alternative of the pattern: our chunks equal tiktoken's, with no exception. Both sides
    classify by Unicode 16.0 (`test_unicode_tables_are_tiktokens`)."""
    compared, disagree = 0, []
    for lo in range(0, 0x110000, 8192):
        texts = ["x" + c + "1 " + c + c + "!A" + c + "'s\n" + c for c in map(chr, range(lo, min(lo + 8192, 0x110000)))
                 if not 0xD800 <= ord(c) < 0xE000]
        disagree += tiktoken_disagreements(name, pattern, texts)[:3]
        compared += len(texts)
    assert compared == 0x110000 - 0x800
    assert disagree == []


# --- bad files --------------------------------------------------------------------------------

def rank_file(extra: bytes = b"", skip_byte: int = -1) -> bytes:
    lines = [base64.b64encode(bytes([b])) + b" " + str(b).encode() for b in range(256) if b != skip_byte]
    return b"\n".join(lines) + b"\n" + extra


@pytest.mark.parametrize("data,message", [
    (rank_file(skip_byte=65), "0x41"),
    (rank_file(b"YWI= 256\nYWI= 257\n"), "twice"),
    (rank_file(b"YWI= 256\nYWM= 256\n"), "twice"),
    (rank_file(b"YWI=256\n"), "line 257"),
    (rank_file(b"YWI= x\n"), "line 257"),
    (rank_file(b"YWI= -1\n"), "line 257"),
    (rank_file(b"Y!I= 256\n"), "base64"),
    (rank_file(b"YWI 256\n"), "base64"),
    (rank_file(b"YWI= 99999999\n"), "sparse"),
    (rank_file(b"YWI= 99999999999\n"), "line 257"),
    (b"", "0x00"),
    (b"\x00\xff garbage", "line 1"),
])
def test_bad_files_refused(tmp_path, data, message):
    path = tmp_path / "cl100k_base.tiktoken"
    path.write_bytes(data)
    with pytest.raises(ModelFileError, match=message):
        tk.load(path, special_tokens={})
    if message != "sparse":  # the named encoding's special ids need not be sparse
        with pytest.raises(ModelFileError):
            tk.load(path)


def test_options_refused(tmp_path):
    path = tmp_path / "mine.tiktoken"
    path.write_bytes(rank_file(b"YWI= 256\n"))
    with pytest.raises(InputError, match="pattern"):
        tk.load(path)
    with pytest.raises(InputError, match="not one of OpenAI's patterns"):
        tk.load(path, pattern=r"\w+|\s+")
    tok = tk.load(path, pattern=tk.CL100K_PATTERN)
    assert tok.special_tokens == {} and tok.encode("ab ab") == [256, 32, 256]
    tok = tk.load(path, pattern="cl100k_base", special_tokens={"<|x|>": 300})
    assert tok.encode("ab<|x|>", allowed_special="all") == [256, 300]
    with pytest.raises(ModelFileError, match="id 256"):
        tk.load(path, pattern="r50k_base", special_tokens={"<|x|>": 256})
    with pytest.raises(InputError):
        tk.load(path, pattern="r50k_base", special_tokens={"<|x|>": -3})
    gz = tmp_path / "p50k_base.tiktoken.gz"
    gz.write_bytes(gzip.compress(rank_file(b"YWI= 256\n")))
    assert tk.load(gz).encode("ab") == [256]
    broken = tmp_path / "o200k_base.tiktoken"
    broken.write_bytes(gzip.compress(rank_file())[:100])
    with pytest.raises(ModelFileError, match="gzip"):
        tk.load(broken)


# --- export -----------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def trained():
    text = peers.multilingual_texts()[::3]
    return subwords.train(list(text), model="bpe", vocab_size=3000, spelling="bytes", pre_split="gpt2")


def test_export_round_trip_through_tiktoken(trained, tmp_path):
    from tiktoken.load import load_tiktoken_bpe

    path = tmp_path / "mine.tiktoken"
    subwords.formats.export(trained, path, "tiktoken")
    ranks = load_tiktoken_bpe(str(path))
    assert len(ranks) == trained.vocab_size
    pat = peers.tiktoken_spec("r50k_base", ranks)["pat_str"]
    peer = tiktoken.Encoding("mine", pat_str=pat, mergeable_ranks=ranks, special_tokens={})
    texts = list(peers.multilingual_texts()) + EDGE + ["aaaaaaa", "aaaa bbbbb", "\n\n\n  \t x"]
    ours = trained.encode_batch(texts)
    assert ours == peer.encode_ordinary_batch(texts)
    back = tk.load(path, pattern="r50k_base", special_tokens={})
    assert back.encode_batch(texts) == ours
    assert [back.id_to_piece(i) for i in range(trained.vocab_size)] == trained.rows


class FakeModel:
    """Just what export reads, to build models training never makes."""

    model = "bpe"
    options: dict = {}

    def __init__(self, extra, merges, kinds=None, spelling=None):
        self.rows = [tk.piece_text(bytes([b])) for b in range(256)] + extra
        self.kinds = kinds or ["alphabet"] * 256 + ["learned"] * len(extra)
        self.merges = merges
        self.spelling = spelling or {"scheme": "bytes", "pre_split": "gpt2"}


def test_export_refuses(trained, tmp_path):
    path = tmp_path / "x.tiktoken"
    with pytest.raises(InputError, match="spelling='bytes'"):
        tk.export(subwords.train(["a b c"] * 5, model="bpe", vocab_size=10), path)
    with pytest.raises(InputError, match="normalizes"):
        tk.export(FakeModel([], [], spelling={"scheme": "bytes", "pre_split": "gpt2", "lowercase": True}), path)
    # "abc" is made from "ab" + "c", but its own bytes replay to "a" + "bc": tiktoken would differ
    with pytest.raises(InputError, match="does not encode to itself"):
        tk.export(FakeModel(["bc", "ab", "abc"], [("b", "c"), ("a", "b"), ("ab", "c")]), path)
    with pytest.raises(InputError, match="same bytes"):
        tk.export(FakeModel(["ab", "ab"], [("a", "b"), ("a", "b")]), path)
    with pytest.raises(InputError, match="earlier rows"):
        tk.export(FakeModel(["abc", "ab"], [("ab", "c"), ("a", "b")]), path)
    with pytest.raises(InputError, match="'special'"):
        tk.export(FakeModel(["[UNK]"], [], kinds=["alphabet"] * 256 + ["special"]), path)
    assert not path.exists()
    # the minimal valid one writes exactly the bytes and ranks
    tk.export(FakeModel(["ab", "abc"], [("a", "b"), ("ab", "c")]), path)
    lines = path.read_bytes().splitlines()
    assert lines[256:] == [b"YWI= 256", b"YWJj 257"] and lines[0] == b"AA== 0" and len(lines) == 258


def test_native_encode_call(tmp_path):
    """``encode(text)`` is one native call (``_core.FaceCall``); every other call goes to the
    Python method with the same arguments. Golden ids: OpenAI's cookbook "How to count tokens
    with tiktoken" gives cl100k_base's ids of "tiktoken is great!" as [83, 1609, 5963, 374, 2294, 0]."""
    import gc
    import inspect
    import weakref

    from subwords.errors import StateError, TextTypeError

    path = tmp_path / "cl100k_base.tiktoken"
    path.write_bytes(FILES["cl100k_base"]())
    tok = tk.load(path)
    assert isinstance(tok.encode, _core.FaceCall)
    golden = [83, 1609, 5963, 374, 2294, 0]
    assert tok.encode("tiktoken is great!") == golden
    assert tok.encode("tiktoken is great!", allowed_special="all") == golden
    assert tok.encode(text="tiktoken is great!") == golden
    # a lone surrogate (the native path hands it back) is read as U+FFFD, as tiktoken does
    assert tok.encode("x\ud800y") == tok.encode("x\ufffdy")
    with pytest.raises(TextTypeError):
        tok.encode(b"tiktoken")
    assert "allowed_special" in inspect.signature(tok.encode).parameters
    # no reference cycle: the tokenizer is freed as soon as it is let go, not by the collector
    gc.disable()
    try:
        second = tk.load(path)
        kept = second.encode
        ids = second.encode("tiktoken is great!")
        ref = weakref.ref(second)
        del second
        assert ref() is None
    finally:
        gc.enable()
    # its lists and the call kept stay valid: the ints are the process's, not the tokenizer's
    assert ids == golden and kept("tiktoken is great!") == golden
    with pytest.raises(StateError, match="keep a reference"):
        kept("tiktoken is great!", allowed_special="all")
    o200k = tk.load(_write(tmp_path, "o200k_base"))
    assert tok.encode("tiktoken is great!") == golden and ids == golden
    assert o200k.encode("hello world") == o200k.encode_batch(["hello world"], threads=1)[0]


def _write(folder, name):
    path = folder / f"{name}.tiktoken"
    path.write_bytes(FILES[name]())
    return path
