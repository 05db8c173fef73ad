"""The model file (DESIGN §4): one canonical, versioned JSON file; save/load/pickle round trips;
atomic saves; truncated, corrupt and hostile files refused with ``ModelFileError`` (never a crash);
byte-identical files whatever the thread count, input order or chunking. (Whatever the hash-map
order too, but that is the Rust core's to show: ``crates/subwords-core/tests/determinism.rs``,
run with ``--features randomized-hash``.)
"""

from __future__ import annotations

import copy
import json
import os
import pickle
import random
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

import subwords
import subwords._api as api
from subwords import ModelFileError, SubwordsError

FOUR = {"low": 5, "lower": 2, "newest": 6, "widest": 3}
TEXTS = ["the lowest newer widest", "café déjà vu, naïve", "  spaced\tout  ", "Ωμέγα 𝄞 x\x00y", ""]

# One model of each kind the file has to carry.
MODELS = {
    "end": dict(vocab_size=22),
    "continuation": dict(spelling="continuation", vocab_size=22),
    "front": dict(spelling="front", vocab_size=27),
    "front-underscore-mark": dict(spelling="front", mark="_", vocab_size=27),
    "bytes": dict(spelling="bytes", vocab_size=270),
    "bytes-gpt2": dict(spelling="bytes", pre_split="gpt2", vocab_size=270),
    "end-byte-fallback": dict(vocab_size=22, byte_fallback=True),
    "continuation-byte-fallback": dict(spelling="continuation", vocab_size=22, byte_fallback=True),
    "front-byte-fallback-in-budget": dict(spelling="front", vocab_size=300, byte_fallback=True,
                                          byte_fallback_in_budget=True),
    "superword": dict(vocab_size=25, superword_at=22),
    "joints": dict(vocab_size=22, joints={"lower": ["low", "er"]}),
    "max-piece-length": dict(vocab_size=22, max_piece_length=3),
    "alphabet-size": dict(vocab_size=22, alphabet_size=8),
    "word": dict(model="word", vocab_size=4),
}


@pytest.fixture(scope="module", params=list(MODELS))
def tok(request) -> subwords.Tokenizer:
    return subwords.train(FOUR, **MODELS[request.param])


@pytest.fixture(scope="module")
def four() -> subwords.Tokenizer:
    return subwords.train(FOUR, vocab_size=22)


@pytest.fixture(scope="module")
def four_json(four) -> dict:
    return json.loads(four.to_json())


@pytest.fixture(scope="module")
def fallback_json() -> dict:
    return json.loads(subwords.train(FOUR, vocab_size=22, byte_fallback=True).to_json())


def encodings(t: subwords.Tokenizer) -> list:
    return [(t.encode(x), t.encode_with_offsets(x), t.decode(t.encode(x)), t.normalize(x)) for x in TEXTS]


# -- round trips ------------------------------------------------------------------------------------


def test_save_load_round_trip(tok, tmp_path: Path):
    path = tmp_path / "m.json"
    tok.save(path)
    back = subwords.load(path)
    assert back.to_json() == tok.to_json()
    assert back == tok
    assert encodings(back) == encodings(tok)
    assert (back.rows, back.kinds, back.merges, back.report, back.options, back.spelling) == (
        tok.rows, tok.kinds, tok.merges, tok.report, tok.options, tok.spelling)
    # The file is the JSON, as UTF-8, and saving what was loaded writes the same bytes.
    assert path.read_bytes() == tok.to_json().encode("utf-8")
    back.save(tmp_path / "again.json")
    assert (tmp_path / "again.json").read_bytes() == path.read_bytes()
    # load accepts str paths too.
    assert subwords.load(str(path)) == tok


def test_from_json_round_trip(tok):
    back = subwords.Tokenizer.from_json(tok.to_json())
    assert back.to_json() == tok.to_json()
    assert encodings(back) == encodings(tok)


@pytest.mark.parametrize("protocol", range(pickle.HIGHEST_PROTOCOL + 1))
def test_pickle_round_trip(tok, protocol: int):
    back = pickle.loads(pickle.dumps(tok, protocol=protocol))
    assert isinstance(back, subwords.Tokenizer)
    assert back == tok and back.to_json() == tok.to_json()
    assert encodings(back) == encodings(tok)


def test_the_file_is_self_describing(four_json):
    assert four_json["format"] == "subwords" and four_json["version"] == 1
    assert four_json["model"] == "bpe"
    assert four_json["options"]["vocab_size"] == 22
    assert four_json["rows"][0] == ["[UNK]", "special"] and len(four_json["rows"]) == 22
    assert four_json["merges"][:2] == [["e", "s"], ["es", "t</w>"]]


# -- atomic saves -----------------------------------------------------------------------------------


def test_save_is_atomic_and_leaves_no_temporary_files(four, tmp_path: Path):
    other = subwords.train(FOUR, vocab_size=15)
    path = tmp_path / "m.json"
    for t in (four, other, four, other):
        t.save(path)
        assert subwords.load(path) == t
        assert sorted(p.name for p in tmp_path.iterdir()) == ["m.json"]
    # Overwriting keeps the file whole, and saving into a folder with other files touches only ours.
    (tmp_path / "keep.txt").write_text("x")
    four.save(path)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["keep.txt", "m.json"]


def test_a_failed_save_leaves_the_old_file_and_no_temporary(four, tmp_path: Path):
    path = tmp_path / "m.json"
    four.save(path)
    good = path.read_bytes()
    with pytest.raises(OSError):
        four.save(tmp_path / "missing" / "m.json")
    with pytest.raises(OSError):
        four.save(tmp_path)  # a directory
    assert path.read_bytes() == good
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.json"]


# -- files that are not model files -----------------------------------------------------------------


def load_text(tmp_path: Path, text: str | bytes) -> subwords.Tokenizer:
    path = tmp_path / "m.json"
    path.write_bytes(text.encode("utf-8") if isinstance(text, str) else text)
    return subwords.load(path, format="subwords")  # our reader, whatever the bytes look like


def refused(tmp_path: Path, text: str | bytes, *words: str) -> str:
    """Loading ``text`` raises ModelFileError naming the file, with ``words`` in the message."""
    with pytest.raises(ModelFileError) as e:
        load_text(tmp_path, text)
    msg = str(e.value)
    assert "m.json" in msg, msg
    for w in words:
        assert w in msg, (w, msg)
    if isinstance(text, str):
        with pytest.raises(ModelFileError):
            subwords.Tokenizer.from_json(text)
    return msg


def test_truncated_files_are_refused(four, tmp_path: Path):
    text = four.to_json().rstrip()
    for cut in sorted({*range(0, 40), *range(40, len(text), max(1, len(text) // 60)), len(text) - 1}):
        refused(tmp_path, text[:cut])


def test_corrupt_json_is_refused(four, tmp_path: Path):
    text = four.to_json()
    for bad in [
        "",
        "   \n",
        "hello",
        "null",
        "42",
        '"a model"',
        "{}",
        text.replace(":", "=", 1),
        text.replace('"rows"', "rows", 1),
        text.replace("[", "(", 1),
        text + "x",
        text + text,
        "\ufeff" + text,  # a byte-order mark is not JSON
        text.replace('"version": 1', '"version": NaN'),
        text.replace('"version": 1', '"version": 1, "version": 1'),  # duplicate key
    ]:
        refused(tmp_path, bad)


def test_a_non_utf8_file_is_refused(four, tmp_path: Path):
    refused(tmp_path, b"\xff\xfe" + four.to_json().encode("utf-16-le"), "UTF-8")
    refused(tmp_path, four.to_json().encode("utf-8").replace(b"widest", b"wid\xe9st"), "UTF-8")


def test_unreadable_paths_are_os_errors(tmp_path: Path):
    with pytest.raises(FileNotFoundError, match="missing.json"):
        subwords.load(tmp_path / "missing.json")
    with pytest.raises(IsADirectoryError):
        subwords.load(tmp_path, format="subwords")
    # detected, an empty folder is no model of any format
    with pytest.raises(ModelFileError, match="a folder with no tokenizer.json"):
        subwords.load(tmp_path)


def test_an_oversized_file_is_refused_before_it_is_read(four, tmp_path: Path, monkeypatch):
    monkeypatch.setattr(api, "MAX_MODEL_FILE_BYTES", 100)
    (tmp_path / "m.json").write_text(four.to_json(), encoding="utf-8")
    with pytest.raises(ModelFileError, match="larger"):
        subwords.load(tmp_path / "m.json")


def test_a_file_that_grew_after_its_size_was_taken_is_read_whole_or_refused(four, tmp_path: Path, monkeypatch):
    # read_limited reads the size it was told and a byte more; a file that grew in between is
    # read to its end when still under the limit, and refused when the growth passes the limit
    import subwords._io as io

    text = four.to_json()
    (tmp_path / "m.json").write_text(text, encoding="utf-8")
    real = len(text.encode("utf-8"))
    monkeypatch.setattr(io.os.path, "getsize", lambda p: 10)
    assert subwords.load(tmp_path / "m.json").to_json() == text
    monkeypatch.setattr(api, "MAX_MODEL_FILE_BYTES", real - 1)
    with pytest.raises(ModelFileError, match="larger"):
        subwords.load(tmp_path / "m.json")


def test_from_json_wants_text():
    for bad in (b"{}", None, 5, {"format": "subwords"}):
        with pytest.raises(ModelFileError):
            subwords.Tokenizer.from_json(bad)  # type: ignore[arg-type]


@pytest.mark.parametrize("version", [0, 2, 99, -1, "1", 1.0, 1.5, None, 10**30, True])
def test_wrong_versions_are_refused(four_json, tmp_path: Path, version):
    d = copy.deepcopy(four_json)
    d["version"] = version
    refused(tmp_path, json.dumps(d))


def test_a_newer_version_says_to_upgrade(four_json, tmp_path: Path):
    d = copy.deepcopy(four_json)
    d["version"] = 2
    refused(tmp_path, json.dumps(d), "version 2", "upgrade")


@pytest.mark.parametrize("section", [None, "options", "report", "spelling"])
def test_unknown_keys_are_refused(four_json, tmp_path: Path, section):
    d = copy.deepcopy(four_json)
    (d if section is None else d[section])["colour"] = "blue"
    refused(tmp_path, json.dumps(d), "colour")


@pytest.mark.parametrize("key", ["format", "version", "model", "spelling", "rows", "merges"])
def test_missing_keys_are_refused(four_json, tmp_path: Path, key):
    d = copy.deepcopy(four_json)
    del d[key]
    refused(tmp_path, json.dumps(d), key)


def test_another_format_is_refused(four_json, tmp_path: Path):
    d = copy.deepcopy(four_json)
    d["format"] = "tokenizers"
    refused(tmp_path, json.dumps(d), "tokenizers")
    # A Hugging Face tokenizer.json or a tiktoken file is not ours either.
    refused(tmp_path, json.dumps({"version": "1.0", "model": {"type": "BPE", "vocab": {}, "merges": []}}))
    refused(tmp_path, "bG93 0\nd2Vy 1\n")


# -- hostile files ----------------------------------------------------------------------------------


def swap(xs: list, i: int, j: int) -> None:
    xs[i], xs[j] = xs[j], xs[i]


HOSTILE = {
    # rows
    "unknown kind": lambda d: d["rows"][3].__setitem__(1, "weird"),
    "kind not a string": lambda d: d["rows"][3].__setitem__(1, 7),
    "a second special row": lambda d: d["rows"][3].__setitem__(1, "special"),
    "two [UNK] rows": lambda d: d["rows"].append(["[UNK]", "special"]),
    "no [UNK] row": lambda d: d["rows"].pop(0),
    "a marker row without byte fallback": lambda d: d["rows"].append(["</w>", "marker"]),
    "a byte row without byte fallback": lambda d: d["rows"].append(["<0x41>", "byte"]),
    "duplicate piece": lambda d: d["rows"].__setitem__(3, ["d", "alphabet"]),
    "duplicate learned piece": lambda d: d["rows"].append(["es", "learned"]),
    "empty piece": lambda d: d["rows"].__setitem__(3, ["", "alphabet"]),
    "huge piece": lambda d: d["rows"].__setitem__(3, ["x" * 70_000, "alphabet"]),
    "row with three fields": lambda d: d["rows"].__setitem__(3, ["i", "alphabet", 1]),
    "row with one field": lambda d: d["rows"].__setitem__(3, ["i"]),
    "row as object": lambda d: d["rows"].__setitem__(3, {"piece": "i", "kind": "alphabet"}),
    "piece not a string": lambda d: d["rows"].__setitem__(3, [105, "alphabet"]),
    "rows not a list": lambda d: d.__setitem__("rows", {"i": 3}),
    # merges
    "merge naming a missing row": lambda d: d["merges"].append(["q", "r"]),
    "merge whose joined piece has no row": lambda d: d["rows"].__setitem__(12, ["zz", "learned"]),
    "merge whose joined piece was removed": lambda d: d["rows"].pop(),
    "the same merge twice": lambda d: d["merges"].append(["e", "s"]),
    "merge with three pieces": lambda d: d["merges"].__setitem__(0, ["e", "s", "t"]),
    "merge with one piece": lambda d: d["merges"].__setitem__(0, ["es"]),
    "merge of a piece with itself, no row": lambda d: d["merges"].append(["es", "es"]),
    "word model with merges": lambda d: d.__setitem__("model", "word"),
    # spelling, options, numbers
    "unknown scheme": lambda d: d["spelling"].__setitem__("scheme", "sideways"),
    "unknown model": lambda d: d.__setitem__("model", "unigram"),
    "byte_fallback claimed, no byte rows": lambda d: d["spelling"].__setitem__("byte_fallback", True),
    "empty mark": lambda d: d["spelling"].__setitem__("mark", ""),
    "whitespace mark": lambda d: d["spelling"].__setitem__("mark", " "),
    "huge vocab_size option": lambda d: d["options"].__setitem__("vocab_size", 10**40),
    "negative vocab_size option": lambda d: d["options"].__setitem__("vocab_size", -22),
    "huge report number": lambda d: d["report"].__setitem__("texts", 10**400),
    "negative report number": lambda d: d["report"].__setitem__("texts", -1),
    "float report number": lambda d: d["report"].__setitem__("texts", 16.5),
    "stream merges beyond the merges": lambda d: d.__setitem__("stream_merges_from", 10**18),
    "negative stream start": lambda d: d.__setitem__("stream_merges_from", -1),
    "bad option value": lambda d: d["options"].__setitem__("spelling", "sideways"),
    "coverage out of range": lambda d: d["options"].__setitem__("character_coverage", 7.0),
    # row order (docs/API.md): [UNK], byte rows, marker, alphabet, learned pieces in merge order
    "[UNK] not at id 0": lambda d: swap(d["rows"], 0, 1),
    "an alphabet row after the learned rows": lambda d: d["rows"].append(["z", "alphabet"]),
    "a learned row no merge builds": lambda d: d["rows"].append(["zz", "learned"]),
    "a unit row in a BPE model": lambda d: d["rows"].append(["lowx", "unit"]),
    # serde reads a struct from the sequence of its fields too: an undocumented second form.
    "the file as a JSON array": lambda d: d.__setitem__("__array__", True),
}


@pytest.mark.parametrize("name", list(HOSTILE))
def test_hostile_files_are_refused(four_json, tmp_path: Path, name: str):
    d = copy.deepcopy(four_json)
    HOSTILE[name](d)
    if d.pop("__array__", False):
        d = list(d.values())
    msg = refused(tmp_path, json.dumps(d))
    assert len(msg) < 2000  # a message, not a dump of the file


HOSTILE_BYTES = {
    "byte rows out of order": lambda d: swap(d["rows"], 1, 2),
    "a byte row missing": lambda d: d["rows"].pop(66),
    "a byte row's piece is another byte": lambda d: d["rows"].__setitem__(66, ["<0x42>", "byte"]),
    "a byte row that is not <0xNN>": lambda d: d["rows"].__setitem__(66, ["A", "byte"]),
    "byte rows not contiguous": lambda d: d["rows"].insert(100, ["zz", "alphabet"]),
    "no bare marker row": lambda d: d["rows"].pop(257),
    "a wrong bare marker row": lambda d: d["rows"].__setitem__(257, ["##", "marker"]),
    # A hole in the byte rows: byte fallback for "A" would emit id 66, whose piece is the literal
    # text "<0x41>", so decode(encode("A")) gave "<0x41>".
    "a byte row re-kinded as alphabet": lambda d: d["rows"][66].__setitem__(1, "alphabet"),
}


@pytest.mark.parametrize("name", list(HOSTILE_BYTES))
def test_hostile_byte_fallback_files_are_refused(fallback_json, tmp_path: Path, name: str):
    assert fallback_json["rows"][1] == ["<0x00>", "byte"] and fallback_json["rows"][257] == ["</w>", "marker"]
    d = copy.deepcopy(fallback_json)
    HOSTILE_BYTES[name](d)
    refused(tmp_path, json.dumps(d))


# Files the engine still accepts: the rows are out of the documented order (alphabet in code-point
# order, learned pieces in merge order) but consistent, so nothing decodes wrongly; a trained model
# never looks like this, and the contract (DESIGN §4: one canonical file) says refuse.
ENGINE_ACCEPTS = {
    "alphabet rows out of code-point order": lambda d: swap(d["rows"], 1, 2),
    "learned rows not in merge order": lambda d: swap(d["rows"], 12, 13),
    "a merge naming a row that only a later merge builds": lambda d: swap(d["merges"], 0, 1),
}


@pytest.mark.parametrize("name", list(ENGINE_ACCEPTS))
def test_out_of_order_files_are_refused(four_json, tmp_path: Path, name: str):
    d = copy.deepcopy(four_json)
    ENGINE_ACCEPTS[name](d)
    refused(tmp_path, json.dumps(d))


@pytest.mark.parametrize("depth", [1_000, 100_000])
def test_deeply_nested_json_is_refused_without_a_crash(four_json, tmp_path: Path, depth: int):
    refused(tmp_path, "[" * depth + "]" * depth)
    refused(tmp_path, "{" + '"a":{' * depth + "}" * depth + "}")
    d = copy.deepcopy(four_json)
    d["report"]["normalizations"] = "NEST"
    refused(tmp_path, json.dumps(d).replace('"NEST"', "[" * depth + "]" * depth))


def test_huge_numbers_are_refused(four_json, tmp_path: Path):
    text = json.dumps(four_json)
    refused(tmp_path, text.replace('"version": 1', '"version": 1' + "0" * 5000))
    refused(tmp_path, text.replace('"version": 1', '"version": 1e999999'))
    refused(tmp_path, text.replace('"vocab_size": 22', '"vocab_size": 18446744073709551616'))


def test_hostile_files_through_the_cli(four_json, tmp_path: Path):
    d = copy.deepcopy(four_json)
    d["merges"].append(["q", "r"])
    (tmp_path / "m.json").write_text(json.dumps(d), encoding="utf-8")
    (tmp_path / "empty.json").write_bytes(b"")
    for args in (["inspect", "m.json"], ["encode", "-m", "m.json"], ["inspect", "empty.json"], ["inspect", "."]):
        p = subprocess.run([sys.executable, "-m", "subwords", *args], input=b"low\n", capture_output=True,
                           cwd=tmp_path, timeout=60)
        assert p.returncode == 2
        assert b"Traceback" not in p.stderr and p.stderr.startswith(b"subwords: error: ")


# -- determinism ------------------------------------------------------------------------------------

# A real corpus: a few of this Python's own standard-library sources (every machine has them).
STDLIB = Path(sysconfig.get_paths()["stdlib"])
CORPUS_FILES = ["argparse.py", "typing.py", "textwrap.py", "string.py", "shlex.py", "fnmatch.py"]
DETERMINISM_CASES = {
    "end": dict(vocab_size=3000),
    # Python sources hold words that begin with "##" ("####" rules) or "@@" (difflib), refused
    # under those marks.
    "continuation": dict(spelling="continuation", mark="··", vocab_size=3000),
    "front-byte-fallback": dict(spelling="front", vocab_size=3000, byte_fallback=True),
    "bytes-gpt2": dict(spelling="bytes", pre_split="gpt2", vocab_size=3000),
    "superword": dict(spelling="front", vocab_size=3000, superword_at=2500),
    "word": dict(model="word", vocab_size=2000),
}


@pytest.fixture(scope="module")
def corpus_files() -> list[Path]:
    files = [STDLIB / n for n in CORPUS_FILES]
    if not all(f.is_file() for f in files):
        pytest.skip("standard-library sources not installed")
    return files


@pytest.mark.parametrize("case", list(DETERMINISM_CASES))
def test_identical_files_across_thread_counts_and_chunking(corpus_files, tmp_path: Path, monkeypatch, case: str):
    kw = DETERMINISM_CASES[case]
    one = subwords.train(corpus_files, threads=1, **kw)
    two = subwords.train(corpus_files, threads=2, **kw)
    one.save(tmp_path / "1.json")
    two.save(tmp_path / "2.json")
    assert (tmp_path / "1.json").read_bytes() == (tmp_path / "2.json").read_bytes()
    assert len(one.merges) > 100 or case == "word"
    # The file's lines given as texts: the same vocabulary; and the same file whether they reach
    # the engine in one batch or in many small ones.
    lines = [line.rstrip("\r") for f in corpus_files for line in f.read_text(encoding="utf-8").split("\n")]
    whole = subwords.train(lines, threads=2, **kw)
    assert (whole.rows, whole.merges) == (one.rows, one.merges)
    monkeypatch.setattr(api, "_BATCH_CHARS", 4096)
    chunked = subwords.train(lines, threads=2, **kw)
    assert chunked.to_json() == whole.to_json()


def test_a_file_and_its_lines_give_the_same_file(tmp_path: Path):
    # report["texts"] once counted the blank lines of an iterable but not of a file.
    (tmp_path / "c.txt").write_text("low lower\n\nnewest\n", encoding="utf-8")
    from_file = subwords.train(tmp_path / "c.txt", vocab_size=12)
    from_lines = subwords.train(["low lower", "", "newest"], vocab_size=12)
    assert from_file.to_json() == from_lines.to_json()


def test_joints_keep_the_text_count():
    # report["texts"] is the number of texts trained on; the joints path (units cut on the Python
    # side, then handed back) once reported 0. Three texts are given; the blank one is skipped,
    # as a file's blank lines are (the test above), so both count 2.
    texts = ["low lower", "", "newest lower"]
    plain = subwords.train(texts, vocab_size=22)
    cut = subwords.train(texts, vocab_size=22, joints={"lower": ["low", "er"]})
    assert plain.report["texts"] == 2
    assert cut.report["texts"] == 2


# Every learner, and the spellings and options whose units or streams depend on the order texts
# arrive in (two-stage BPE reads each text as one stream).
ORDER_CASES = {
    **{k: DETERMINISM_CASES[k] for k in ("end", "continuation", "bytes-gpt2", "superword", "word")},
    "wordpiece": dict(model="wordpiece", spelling="continuation", mark="··", vocab_size=2000),
    "unigram": dict(model="unigram", spelling="front", vocab_size=1000),
}


@pytest.mark.parametrize("case", list(ORDER_CASES))
def test_identical_files_whatever_the_input_order(corpus_files, monkeypatch, case: str):
    """The same texts in other orders, pushed in other batches, on other thread counts, give the
    same file: what the Python layer decides (batching, threads, iterables) cannot reach the model.

    What this does not cover, and why no ``PYTHONHASHSEED`` appears here: Python's hash seed only
    changes the iteration order of Python sets (and of dicts built from them), and the training
    path iterates none (texts and count tables are passed on in the order given); it never reaches
    the Rust core, whose maps hash with their own hasher. Hash-map order in the core is tested in
    Rust, with every map seeded at random (``cargo test -p subwords-core --release --features
    randomized-hash --test determinism``).
    """
    kw = ORDER_CASES[case]
    lines = [line.rstrip("\r") for f in corpus_files[:3] for line in f.read_text(encoding="utf-8").split("\n")]
    want = subwords.train(lines, threads=1, **kw).to_json()
    batch_chars = api._BATCH_CHARS
    for seed, chars, threads in ((1, batch_chars, 2), (2, 4096, 3), (3, 250, 1), (4, 1 << 16, 2)):
        shuffled = lines[:]
        random.Random(seed).shuffle(shuffled)
        monkeypatch.setattr(api, "_BATCH_CHARS", chars)
        # a generator, so nothing can look at the whole list first
        got = subwords.train((t for t in shuffled), threads=threads, **kw).to_json()
        assert got == want, f"{case}: shuffle {seed}, batches of {chars} characters, {threads} threads"


@pytest.mark.parametrize("case", ["end", "front-unigram", "end-wordpiece"])
def test_a_count_table_in_any_order_gives_the_same_file(corpus_files, case: str):
    kw = {"end": dict(vocab_size=2000), "front-unigram": dict(model="unigram", spelling="front", vocab_size=1000),
          "end-wordpiece": dict(model="wordpiece", spelling="end", vocab_size=2000)}[case]
    counts: dict[str, int] = {}
    for f in corpus_files[:3]:
        for word in f.read_text(encoding="utf-8").split():
            if "</w>" not in word:
                counts[word] = counts.get(word, 0) + 1
    items = list(counts.items())
    want = subwords.train(dict(items), **kw).to_json()
    for seed in (1, 2):
        random.Random(seed).shuffle(items)
        assert subwords.train(dict(items), threads=2, **kw).to_json() == want, f"{case}: shuffle {seed}"


def test_retraining_gives_the_same_file(corpus_files):
    kw = DETERMINISM_CASES["end"]
    assert subwords.train(corpus_files, **kw).to_json() == subwords.train(corpus_files, **kw).to_json()


@pytest.mark.parametrize("content", [b"{not json", b'{"format": "subwords", "version": 999}', b"\xff\xfe", b""])
def test_a_bad_model_file_is_caught_as_a_value_error_naming_the_file(tmp_path: Path, content: bytes):
    """DESIGN §4: the one hierarchy. A broken file raised from `load` is a ModelFileError that a
    caller can catch as SubwordsError or as ValueError, and its message names the file."""
    path = tmp_path / "broken.json"
    path.write_bytes(content)
    for catch in (ModelFileError, SubwordsError, ValueError):
        with pytest.raises(catch) as info:
            subwords.load(path)
        assert type(info.value) is ModelFileError
        assert "broken.json" in str(info.value)


def test_every_format_is_written_with_an_ordinary_file_mode(tmp_path: Path):
    """Every writer (model file and each export) gives the file an ordinary new file's mode,
    0666 less the umask, never the 0600 of a temporary file (tokenizer.json exports once were)."""
    import stat

    from subwords import formats

    text = ["low lower newest widest", "lowest newer wider", "the cat sat on the mat"] * 5
    made = {
        "bytes": subwords.train(text, spelling="bytes", pre_split="gpt2", vocab_size=270),
        "front": subwords.train(text, spelling="front", vocab_size=40),
        "end": subwords.train(text, spelling="end", vocab_size=40),
        "wordpiece": subwords.train(text, preset="bert", vocab_size=60),
    }
    jobs = [("bytes", "subwords", "m.json"), ("bytes", "hf", "tokenizer.json"), ("bytes", "vocab-merges", "vm"),
            ("bytes", "tiktoken", "r.tiktoken"), ("front", "sentencepiece", "m.model"),
            ("end", "subword-nmt", "codes.bpe"), ("wordpiece", "vocab-txt", "vocab.txt")]
    old = os.umask(0o022)
    try:
        for model, fmt, name in jobs:
            target = tmp_path / name
            if fmt == "vocab-merges":
                target.mkdir()
            formats.export(made[model], target, fmt)
            files = sorted(target.iterdir()) if target.is_dir() else [target]
            assert files, fmt
            for f in files:
                assert stat.S_IMODE(f.stat().st_mode) == 0o644, (fmt, f.name, oct(f.stat().st_mode))
        assert not [p.name for p in tmp_path.rglob(".subwords-*")]  # no temporary file left behind
    finally:
        os.umask(old)


def test_rows_without_merges_build_the_model_their_file_would():
    """``from_parts`` hands rows with no merges to the core as they are (``_core.Tokenizer.from_rows``),
    not as a JSON document: the model is the one a file of the same rows gives, and bad rows are
    refused as a file of them is. Rows by hand: a BERT-style vocabulary of six rows."""
    from subwords._api import from_parts

    spelling = {"scheme": "continuation", "mark": "##", "pre_split": "bert", "lowercase": True}
    rows = [("[UNK]", "special"), ("[CLS]", "special"), ("[SEP]", "special"), ("un", "piece"),
            ("##aff", "piece"), ("##able", "piece")]
    tok = from_parts("wordpiece", spelling, rows, template=("[CLS]", "[SEP]"))
    again = subwords.SubwordsTokenizer.from_json(tok.to_json())
    assert again == tok
    # ids by hand: [CLS] un ##aff ##able [SEP], and [UNK] for a word no piece starts
    assert tok.encode("Unaffable", add_special_tokens=True) == [1, 3, 4, 5, 2]
    assert tok.encode("zz", add_special_tokens=False) == [0]
    with pytest.raises(ModelFileError, match="appears twice"):
        from_parts("wordpiece", spelling, rows + [("un", "piece")])
    with pytest.raises(ModelFileError, match="template"):
        from_parts("wordpiece", spelling, rows, template=("[CLS]", "[END]"))
    with pytest.raises(ModelFileError, match="unknown row kind"):
        from_parts("wordpiece", spelling, [("[UNK]", "special"), ("un", "token")])
