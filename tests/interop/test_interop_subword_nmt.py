"""subword-nmt codes files, checked against the library that reads them.

* Codes learned by subword-nmt's own ``learn_bpe`` on the multilingual sample: every line
  segmented by ``subwords.formats.load`` must equal ``apply_bpe.BPE.segment`` (tabs, no-break
  spaces and unknown characters included), and the ids must be those of apply_bpe's pieces.
* A subwords BPE model (``end`` spelling) exported as codes: apply_bpe must cut every word as
  subwords does.
* (BERT vocab.txt has its own module: test_interop_vocab_txt.py.)
* Bad codes files are refused naming the line; options and models that cannot be reproduced are
  refused naming the feature.
"""

from __future__ import annotations

import io
import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import subwords
from subwords import InputError, ModelFileError
from subwords.formats import detect, export, load
from subwords.formats.subword_nmt import SubwordNmt

import peers
from edge_texts import EDGE_TEXTS

from subword_nmt import apply_bpe as apply_bpe
from subword_nmt import learn_bpe as learn_bpe

# Unicode White_Space: what subwords' spellings split words on
WHITE_SPACE = re.compile("[\t\n\x0b\x0c\r \x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]+")



def reference(codes: Path, **kw) -> "apply_bpe.BPE":
    with open(codes, encoding="utf-8") as f:
        return apply_bpe.BPE(f, **kw)


def expected_ids(bpe: "apply_bpe.BPE", ours: SubwordNmt, line: str) -> list[int]:
    """The ids of apply_bpe's pieces: each word's last piece with ``</w>`` (our rows' spelling),
    a piece that is no row -> [UNK] (id 0)."""
    first = {}
    for i, row in enumerate(ours.rows):
        first.setdefault(row, i)
    out = []
    for word in line.strip("\r\n ").split(" "):
        if not word:
            continue
        printed = bpe.segment_tokens([word])
        pieces = [p[: -len(bpe.separator)] for p in printed[:-1]] + [printed[-1]]
        pieces[-1] += "</w>"
        out += [first.get(p, 0) for p in pieces]
    return out


@pytest.fixture(scope="module")
def texts() -> tuple[str, ...]:
    return peers.multilingual_texts()


@pytest.fixture(scope="module")
def learned(texts, tmp_path_factory) -> Path:
    """Codes learned by subword-nmt on the whole multilingual sample."""
    out = io.StringIO()
    learn_bpe.learn_bpe(io.StringIO("\n".join(texts)), out, 2000, min_frequency=2)
    path = tmp_path_factory.mktemp("snmt") / "codes.bpe"
    path.write_text(out.getvalue(), encoding="utf-8")
    return path


# -- reading codes -----------------------------------------------------------------------------

def test_learned_codes_segment_the_sample_as_apply_bpe(learned: Path, texts):
    assert detect(learned) == "subword-nmt"
    ours = load(learned)
    assert isinstance(ours, SubwordNmt) and ours.tokenizer is not None
    bpe = reference(learned)
    for t in texts:
        assert ours.segment(t) == bpe.segment(t), t
    # the pieces are apply_bpe's, separator and all, and they read back as the words
    for t in texts[::9]:
        want = bpe.segment(t).split(" ") if bpe.segment(t) else []
        assert ours.encode_pieces(t) == want, t
        # subword-nmt splits on ' ' alone: the words are what lies between the spaces
        assert ours.decode_pieces(want) == " ".join(w for w in t.strip("\r\n ").split(" ") if w)
    # the sample has tabs and no-break spaces inside lines: both encoding paths are exercised
    assert any("\t" in t for t in texts) and any("\xa0" in t for t in texts)


def test_learned_codes_give_the_ids_of_apply_bpes_pieces(learned: Path, texts):
    ours = load(learned)
    bpe = reference(learned)
    batch = ours.encode_batch(texts)
    for t, ids in zip(texts, batch):
        assert ids == expected_ids(bpe, ours, t), t
    assert [ours.encode(t) for t in texts[:2000]] == batch[:2000]


def test_edge_cases_as_apply_bpe(learned: Path):
    ours = load(learned, format="subword-nmt")
    bpe = reference(learned)
    for t in EDGE_TEXTS:
        assert ours.segment(t) == bpe.segment(t), repr(t)
        assert ours.process_line(t) == bpe.process_line(t), repr(t)
        if "</w>" in t:
            with pytest.raises(InputError, match="end mark"):
                ours.encode(t)
        else:
            assert ours.encode(t) == expected_ids(bpe, ours, t), repr(t)
    assert ours.segment_tokens(["lowest", "", "x"]) == bpe.segment_tokens(["lowest", "", "x"])


def test_unknown_characters_pass_through_as_text_and_unk_as_ids(learned: Path):
    ours = load(learned)
    assert "☃" not in "".join(ours.rows)
    assert ours.segment("☃☃ a☃") == reference(learned).segment("☃☃ a☃")
    assert "☃" in ours.segment("☃☃ a☃")
    assert 0 in ours.encode("☃☃")


def test_decode_gives_back_the_words(learned: Path, texts):
    ours = load(learned)
    checked = 0
    for t in texts[:2000]:
        ids = ours.encode(t)
        if 0 not in ids:  # tabs and no-break spaces inside words come back too
            assert ours.decode(ids) == " ".join(w for w in t.split(" ") if w)
            checked += 1
    assert checked > 1000


@pytest.mark.parametrize("merges", [0, 1, 50, 1999, 5000])
def test_merges_option_as_apply_bpe(learned: Path, texts, merges: int):
    if merges == 0:
        with pytest.raises(ModelFileError, match="no merges"):
            load(learned, merges=0)
        return
    ours = load(learned, merges=merges)
    bpe = reference(learned, merges=merges)
    for t in texts[::20]:
        assert ours.segment(t) == bpe.segment(t)


def test_separator_option(learned: Path, texts):
    ours = load(learned, separator="~~")
    bpe = reference(learned, separator="~~")
    for t in texts[::50]:
        assert ours.segment(t) == bpe.segment(t)


@pytest.mark.parametrize("header", ["#version: 0.1\n", "", "#version: 0.2.0\n"])
def test_other_headers_read_as_apply_bpe(learned: Path, texts, tmp_path: Path, header: str):
    """Version 0.1 (and a file without the header, which apply_bpe reads as 0.1): the end mark is
    a symbol of its own. The learned merges, read that way, still segment like apply_bpe."""
    body = learned.read_text(encoding="utf-8").split("\n", 1)[1]
    path = tmp_path / "codes.bpe"
    path.write_text(header + body, encoding="utf-8")
    ours = load(path, format="subword-nmt")
    bpe = reference(path)
    assert ours.version == bpe.version
    checked = 0
    for t in [*texts[::10], *EDGE_TEXTS]:
        assert ours.segment(t) == bpe.segment(t), repr(t)
        if "</w>" in t:
            continue
        ids = ours.encode(t)
        if ours.version == (0, 2):
            assert ids == expected_ids(bpe, ours, t), repr(t)
        elif 0 not in ids:
            # 0.1: a word's last piece may or may not have taken in the separate </w> symbol;
            # either way the pieces, read back into words, are apply_bpe's
            words: list[list[str]] = [[]]
            for piece in map(ours.id_to_piece, ids):
                if piece.removesuffix("</w>"):
                    words[-1].append(piece.removesuffix("</w>"))
                if piece.endswith("</w>"):
                    words.append([])
            assert [" ".join(w) for w in words if w] == [
                " ".join(p.removesuffix(bpe.separator) for p in bpe.segment_tokens([w])) for w in t.strip("\r\n ").split(" ") if w
            ], repr(t)
            checked += 1
    assert ours.version == (0, 2) or checked > 1000


def test_hand_codes_overlaps_and_ties(tmp_path: Path):
    """``a a`` on ``aaaaa``: left to right without overlap; a pair listed twice counts at its
    first line; a merge whose parts appear only later still applies once they exist."""
    codes = "#version: 0.2\na a\nb c</w>\na a\naa a</w>\nx yz</w>\ny z</w>\n"
    path = tmp_path / "codes"
    path.write_text(codes, encoding="utf-8")
    ours, bpe = load(path, format="subword-nmt"), reference(path)
    for word in ["aaaaa", "aaaa", "aaa", "aa", "a", "bc", "abc", "xyz", "xyzxyz", "yzx"]:
        assert ours.segment(word) == bpe.segment(word), word
        assert ours.encode(word) == expected_ids(bpe, ours, word), word
    # a a a a a</w>: (a, a) at 0, 1, 2 -> merged at 0 and 2 (1 overlaps) -> aa aa a</w>;
    # then (aa, a</w>) -> aa aaa</w>
    assert ours.segment("aaaaa") == "aa@@ aaa"
    # "x yz</w>" comes before "y z</w>": apply_bpe applies it once yz exists; no subwords model has such
    # an order, so these codes encode on the pure-Python path
    assert ours.segment("xyz") == "xyz" and ours.tokenizer is None


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.tuples(st.text("ab", min_size=1, max_size=3), st.text("ab", min_size=1, max_size=3), st.booleans(),
                       st.sampled_from([False] * 9 + [True])), min_size=1, max_size=12),
    # U+001C and U+180E are not White_Space (subwords keeps them in words, as apply_bpe does);
    # tab, U+0085, U+00A0, U+2028 are (apply_bpe still keeps them in words)
    st.lists(st.text("ab \t\xa0\x85\u2028\x1c\u180e\n\r", max_size=12), min_size=1, max_size=5),
)
def test_random_codes_segment_as_apply_bpe(tmp_path_factory, codes, lines):
    # now and then a left part ending in </w>: no merge of the end spelling (the pure-Python path)
    text = "#version: 0.2\n" + "".join(f"{a}{'</w>' if odd else ''} {b}{'</w>' if end else ''}\n" for a, b, end, odd in codes)
    path = tmp_path_factory.mktemp("codes") / "codes"
    path.write_text(text, encoding="utf-8")
    ours, bpe = load(path, format="subword-nmt"), reference(path)
    for line in lines:
        assert ours.segment(line) == bpe.segment(line)
        assert ours.encode(line) == expected_ids(bpe, ours, line)
        assert ours._encode_slow(line) == ours.encode(line)


@settings(max_examples=300, deadline=None)
@given(st.data())
def test_random_learned_style_codes_encode_in_rust_as_apply_bpe(tmp_path_factory, data):
    """Codes as learn_bpe writes them (each part a symbol or an earlier line's piece), so they
    load as a subwords model and the Rust path is taken for space-separated text."""
    inner, final = ["a", "b", "c"], ["a</w>", "b</w>", "c</w>"]
    lines = []
    for _ in range(data.draw(st.integers(1, 12))):
        left = data.draw(st.sampled_from(inner))
        right = data.draw(st.sampled_from(inner + final))
        lines.append(f"{left} {right}")
        (final if right.endswith("</w>") else inner).append(left + right)
    path = tmp_path_factory.mktemp("codes") / "codes"
    path.write_text("#version: 0.2\n" + "\n".join(lines) + "\n", encoding="utf-8")
    ours, bpe = load(path, format="subword-nmt"), reference(path)
    assert ours.tokenizer is not None
    for line in data.draw(st.lists(st.text("abcd   \n", max_size=16), min_size=1, max_size=5)):
        assert ours.segment(line) == bpe.segment(line)
        assert ours.encode(line) == ours._encode_slow(line) == expected_ids(bpe, ours, line)
        # the Rust-backed segment and the pure-Python one
        assert ours.segment(line) == " ".join(ours.segment_tokens(line.strip("\r\n ").split(" ")))


@pytest.mark.parametrize("content, message", [
    ("#version: 0.2\n", "no merges"),
    ("#version: 0.2\na b\nc d e\n", "line 3"),
    ("#version: 0.2\na b\n\nc d\n", "line 3: an empty line"),
    ("#version: 0.2\na b\nc\n", "line 3"),
    ("#version: 0.2\na  b\n", "line 2"),
    ("#version: 0.3\na b\n", "version '0.3'"),
    ("a b\nc\n", "line 2"),
    ("\ufeff#version: 0.2\na b\n", "byte-order mark"),
    ("#version: 0.2\na\rb c\n", "carriage return"),
])
def test_bad_codes_files_are_refused_naming_the_line(tmp_path: Path, content: str, message: str):
    path = tmp_path / "codes"
    path.write_bytes(content.encode("utf-8"))
    with pytest.raises(ModelFileError, match=re.escape(message)):
        load(path, format="subword-nmt")


def test_apply_bpe_refuses_the_same_broken_lines(tmp_path: Path):
    path = tmp_path / "codes"
    path.write_text("#version: 0.2\na b\nc d e\n", encoding="utf-8")
    with pytest.raises(SystemExit):
        reference(path)


def test_non_utf8_and_missing_codes(tmp_path: Path):
    path = tmp_path / "codes"
    path.write_bytes(b"#version: 0.2\na b\n\xff c\n")
    with pytest.raises(ModelFileError, match="line 3: invalid UTF-8"):
        load(path, format="subword-nmt")
    with pytest.raises(FileNotFoundError, match="cannot read codes file"):
        load(tmp_path / "nothing", format="subword-nmt")


@pytest.mark.parametrize("option", ["vocab", "glossaries", "dropout", "vocabulary_threshold", "colour"])
def test_unsupported_options_are_refused(learned: Path, option: str):
    with pytest.raises(InputError, match=option):
        load(learned, **{option: 1})


def test_no_special_tokens(learned: Path):
    ours = load(learned)
    assert ours.special_tokens == {}
    assert ours.encode("a b", allowed_special="all") == ours.encode("a b")
    with pytest.raises(InputError, match="not a special token"):
        ours.encode("a", allowed_special={"<s>"})


# -- writing codes -----------------------------------------------------------------------------

def words_of(text: str) -> list[str]:
    return [w for w in WHITE_SPACE.split(text) if w]


def subwords_segment(tok: subwords.Tokenizer, line: str) -> str:
    """subwords' pieces of a line of single-space-separated words, printed in apply_bpe's form
    (the surfaces each piece stands for, so an unknown character prints as itself)."""
    words: list[list[str]] = []
    last_end = None
    for _, s, e in tok.encode_with_offsets(line):
        if last_end is None or s != last_end:
            words.append([])
        words[-1].append(line[s:e])
        last_end = e
    return " ".join("@@ ".join(w) for w in words)


@pytest.mark.parametrize("size, alphabet", [(600, None), (4000, None), (1000, 150)])
def test_exported_codes_cut_as_subwords(texts, tmp_path: Path, size: int, alphabet):
    """With ``alphabet_size`` the dropped symbols are [UNK] to subwords and mentioned by no
    merge in the codes, so apply_bpe leaves them as they are: the same cut."""
    train, held = texts[: len(texts) * 4 // 5], texts[len(texts) * 4 // 5:]
    tok = subwords.train(list(train), vocab_size=size, alphabet_size=alphabet)
    path = tmp_path / "codes.bpe"
    export(tok, path, "subword-nmt")
    assert path.read_text(encoding="utf-8").startswith("#version: 0.2\n")
    bpe = reference(path)
    for t in [*held, *train[::10], *(e for e in EDGE_TEXTS if "</w>" not in e)]:
        line = " ".join(words_of(t))
        assert bpe.segment(line) == subwords_segment(tok, line), t
    back = load(path)
    for t in held[:2000]:
        line = " ".join(words_of(t))
        # a codes file holds no alphabet: a character no merge mentions is [UNK] read back, and a
        # character read back has both its plain and its final row, where the model may lack one
        ours, theirs = [back.id_to_piece(i) for i in back.encode(line)], tok.encode_pieces(line)
        assert len(ours) == len(theirs) and all(a == b or "[UNK]" in (a, b) for a, b in zip(ours, theirs)), [(a, b) for a, b in zip(ours, theirs) if a != b]


def test_codes_read_then_written_are_the_same_file(learned: Path, tmp_path: Path):
    export(load(learned), tmp_path / "again.bpe", "subword-nmt")
    assert (tmp_path / "again.bpe").read_bytes() == learned.read_bytes()


@pytest.mark.parametrize("kw, feature", [
    ({"model": "wordpiece"}, "wordpiece model"),
    ({"spelling": "front"}, "front spelling"),
    ({"spelling": "bytes"}, "bytes spelling"),
    ({"byte_fallback": True}, "byte fallback"),
    ({"mark": "@"}, "end mark"),
    ({"superword_at": 20}, "two-stage"),
    ({"joints": {"lower": ["low", "er"]}}, "joints"),
    ({"lowercase": True}, "lowercase"),
])
def test_export_refuses_what_codes_cannot_say(tmp_path: Path, kw: dict, feature: str):
    tok = subwords.train({"low": 5, "lower": 2, "newest": 6, "widest": 3}, vocab_size=300, **kw)
    with pytest.raises(InputError, match=feature):
        export(tok, tmp_path / "codes", "subword-nmt")
    assert not (tmp_path / "codes").exists()


# -- the core's reader against the Python reader -----------------------------------------------
# A plainly well-formed codes file is read in the core (crates/subwords-compat/src/subword_nmt.rs,
# for load time); every other file, and the same files here with the core's reader turned
# off, go through the Python reader. Both must give the same object, or the same error.

def _python_only(monkeypatch: pytest.MonkeyPatch) -> None:
    import types

    import subwords.formats.subword_nmt.read as snmt_read

    monkeypatch.setattr(snmt_read, "_core", types.SimpleNamespace(SnmtCodes=types.SimpleNamespace(read=lambda *a: None)))


def _loaded(path: Path, **kw):
    try:
        return SubwordNmt(path, **kw)
    except ModelFileError as e:
        return ("error", str(e))


def _same(core, python, texts) -> None:
    if isinstance(python, tuple) or isinstance(core, tuple):
        assert core == python
        return
    assert (core.version, core.codes, core.rows, core.vocab_size) == (python.version, python.codes, python.rows, python.vocab_size)
    assert (core.tokenizer is None) == (python.tokenizer is None)
    if core.tokenizer is not None:
        assert core.tokenizer.to_json() == python.tokenizer.to_json()
        assert core.vocab_size == len(core.rows) == core.tokenizer.vocab_size
    for t in texts:
        assert core.segment(t) == python.segment(t)
        assert _ids(core, t) == _ids(python, t)


def _ids(codes: SubwordNmt, text: str):
    try:
        return codes.encode(text)
    except InputError as e:  # a word holding </w> has no ids, on either path
        return ("error", str(e))


def _variants(learned: Path) -> dict[str, str]:
    body = learned.read_text(encoding="utf-8")
    lines = body.split("\n")
    return {
        "learned": body,
        "crlf": body.replace("\n", "\r\n"),
        "version 0.2.0": "#version: 0.2.0\n" + "\n".join(lines[1:]),
        "version 0.1": "#version: 0.1\n" + "\n".join(lines[1:]),
        "no header": "\n".join(lines[1:]),
        "a pair twice": "\n".join(lines[:50] + lines[1:3] + lines[50:]),
        "spaces around": "\n".join(["  " + l + " " if 0 < i < 40 and l else l for i, l in enumerate(lines)]),
        "a part no earlier line made": "#version: 0.2\nes t</w>\ne s\n",
        "[UNK] made": "#version: 0.2\n[ U\n[U N\n[UN K\n[UNK ]\n",
        "one merge": "#version: 0.2\ne s\n",
        "a piece made twice": "#version: 0.2\na b\nb c\nab c\na bc\n",
        "not a model on a late line": "#version: 0.2\ne s\nes t</w>\nxy z\n",
        "[UNK] made, then not a model": "#version: 0.2\n[ U\n[U N\n[UN K\n[UNK ]\nxy z\n",
        "the end mark inside a part": "#version: 0.2\ne s</w>t\n",
        "the end mark on a left part": "#version: 0.2\ne</w> s\n",
        "a bare end mark": "#version: 0.2\ne </w>\n",
        "unicode": "#version: 0.2\nн е\nне т</w>\n日 本</w>\nö l\n",
        "a bad line": "#version: 0.2\ne s\nes t u\n",
        "a bad header": "#version: 0.3\ne s\n",
        "a header of other whitespace": "#version:\x0b0.2\ne s\n",
        "no merges": "#version: 0.2\n\n\n",
        "an empty line inside": "#version: 0.2\ne s\n\nl o\n",
        "a carriage return inside": "#version: 0.2\ne\rs\n",
    }


@pytest.mark.parametrize("name", [
    "learned", "crlf", "version 0.2.0", "version 0.1", "no header", "a pair twice", "spaces around",
    "a part no earlier line made", "[UNK] made", "one merge", "a piece made twice", "not a model on a late line",
    "[UNK] made, then not a model", "the end mark inside a part", "the end mark on a left part", "a bare end mark", "unicode", "a bad line", "a bad header",
    "a header of other whitespace", "no merges", "an empty line inside", "a carriage return inside"])
def test_core_reader_equals_the_python_reader(learned: Path, texts, tmp_path: Path, monkeypatch, name: str):
    path = tmp_path / "codes"
    path.write_bytes(_variants(learned)[name].encode("utf-8"))
    sample = [*texts[::200], *EDGE_TEXTS]
    for kw in ({}, {"merges": 3}):
        core = _loaded(path, **kw)
        with monkeypatch.context() as m:
            _python_only(m)
            python = _loaded(path, **kw)
        _same(core, python, sample)


def test_core_reader_reads_the_learned_codes(learned: Path):
    """The learned codes take the core's path (its model built there), not the Python reader's."""
    ours = SubwordNmt(learned)
    assert ours._core_codes is not None and ours.tokenizer is not None
    assert len(ours._core_codes) == len(learned.read_text(encoding="utf-8").rstrip("\n").split("\n")) - 1


def test_more_merges_than_any_file_reads_them_all(learned: Path):
    """merges= beyond the core's 64-bit integer is every line, as a smaller excess is."""
    every = SubwordNmt(learned)
    for n in (10**6, 10**30):
        assert SubwordNmt(learned, merges=n).codes == every.codes
