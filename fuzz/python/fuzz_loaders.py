#!/usr/bin/env python3
"""Coverage-guided fuzzing (atheris, libFuzzer) of the loaders written in Python.

    python fuzz/python/fuzz_loaders.py TARGET [libFuzzer flags] [corpus dirs]

TARGET is one of ``tokenizer_json``, ``vocab_merges``, ``subword_nmt``, ``vocab_txt`` (or, for
the Python wrappers of the Rust parsers, ``model_json``, ``sentencepiece_model``,
``tiktoken_ranks``). Each input
is written to a file and read with ``subwords.formats.load(path, format=...)``, the public entry;
a loaded tokenizer then encodes and decodes a few fixed texts. A ``SubwordsError`` (any of its
subclasses) is a clean refusal; every other exception is a bug and stops the run with the input
saved. ``vocab_merges`` inputs are ``vocab.json \\xFF merges.txt`` (0xFF never occurs in UTF-8).

The subwords Python modules are instrumented for coverage; the Rust core they call is fuzzed by
the cargo-fuzz targets instead. ``tests/bad_input/test_fuzz_corpus.py`` replays the saved corpora and
regressions through :func:`one_input`, the same code.
"""

from __future__ import annotations

import json
import os
import random
import sys
import tempfile

TARGETS = ("tokenizer_json", "vocab_merges", "subword_nmt", "vocab_txt")
#: The formats whose parser is in Rust (fuzzed by cargo-fuzz), read here through their Python
#: wrappers: the same corpus names as the Rust targets, so their seeds replay through both.
WRAPPED = ("model_json", "sentencepiece_model", "tiktoken_ranks")

TEXTS = (
    "Hello, wörld! It's 2024.",
    "  two  spaces\tand a tab\nnew line ",
    "漢字かな交じり ▁x ##ab </w> <0x41> <|endoftext|> [CLS] <s> <unk>",
    "e\u0301 \ufb01 \u2460 \u216b \U0001f468\u200d\U0001f469",
    "",
)

_DIR = None


def _dir() -> str:
    global _DIR
    if _DIR is None:
        base = "/dev/shm" if os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK) else None
        _DIR = tempfile.mkdtemp(prefix="subwords-fuzz-", dir=base)
    return _DIR


def _write(path: str, data: bytes) -> None:
    with open(path, "wb") as f:
        f.write(data)


def _use(tok, target: str, SubwordsError) -> None:
    """Encodes and decodes the fixed texts; SubwordsError is allowed, nothing else."""
    for text in TEXTS:
        try:
            ids = tok.encode(text)
        except SubwordsError:
            continue
        assert all(isinstance(i, int) and i >= 0 for i in ids), ids
        for call in (lambda: tok.decode(ids), lambda: [tok.id_to_piece(i) for i in ids[:50]]):
            try:
                call()
            except SubwordsError:
                pass
        try:
            if target == "tokenizer_json" or target == "vocab_merges":
                tok.encode(text, allowed_special="all", add_special_tokens=True, pair="low er")
                tok.decode(ids, skip_special_tokens=False)
                tok.normalize(text)
            elif target == "subword_nmt":
                tok.segment(text)
                tok.process_line(" " + text + "\n")
            elif target in ("tiktoken_ranks", "sentencepiece_model"):
                tok.encode(text, allowed_special="all")
            else:
                tok.encode(text, pair="low er")
                tok.encode_pieces(text)
        except SubwordsError:
            pass
    try:
        tok.encode_batch(list(TEXTS[:2]), threads=1)
    except SubwordsError:
        pass
    n = tok.vocab_size
    assert isinstance(n, int) and n >= 0


def one_input(target: str, data: bytes) -> bool:
    """Loads one input as ``target``; True if it loaded. Raises anything but a SubwordsError."""
    from subwords.errors import SubwordsError
    from subwords.formats import load

    d = os.path.join(_dir(), target)
    os.makedirs(d, exist_ok=True)
    for name in os.listdir(d):
        os.unlink(os.path.join(d, name))
    if target == "tokenizer_json":
        path = os.path.join(d, "tokenizer.json")
        _write(path, data)
        fmt = "hf"
    elif target == "vocab_merges":
        vocab, _, merges = data.partition(b"\xff")
        _write(os.path.join(d, "vocab.json"), vocab)
        _write(os.path.join(d, "merges.txt"), merges)
        path, fmt = d, "vocab-merges"
    elif target == "subword_nmt":
        path = os.path.join(d, "codes")
        _write(path, data)
        fmt = "subword-nmt"
    elif target == "vocab_txt":
        path = os.path.join(d, "vocab.txt")
        _write(path, data)
        fmt = "vocab-txt"
    elif target in WRAPPED:
        name, fmt = {"model_json": ("model.json", "subwords"), "sentencepiece_model": ("m.model", "sentencepiece"),
                     "tiktoken_ranks": ("cl100k_base.tiktoken", "tiktoken")}[target]
        path = os.path.join(d, name)
        _write(path, data)
    else:
        raise ValueError(f"unknown target {target!r}; one of {', '.join(TARGETS)}")
    try:
        tok = load(path, format=fmt)
    except SubwordsError as e:
        if target == "subword_nmt":
            _same_in_python(path, ("error", type(e), str(e)))
        return False
    if target == "subword_nmt":
        _same_in_python(path, tok)
    _use(tok, target, SubwordsError)
    return True


def _same_in_python(path: str, got) -> None:
    """subword-nmt codes: the core's reader (crates/subwords-compat/src/subword_nmt.rs) against
    the Python reader it stands in for, which reads the file again with the core's turned off:
    the same version, merges and model, or the same error."""
    import types

    from subwords.errors import SubwordsError
    from subwords.formats.subword_nmt import read as snmt_read

    core = snmt_read._core
    snmt_read._core = types.SimpleNamespace(SnmtCodes=types.SimpleNamespace(read=lambda *a: None))
    try:
        try:
            want = snmt_read.load(path)
        except SubwordsError as e:
            want = ("error", type(e), str(e))
    finally:
        snmt_read._core = core
    if isinstance(got, tuple) or isinstance(want, tuple):
        assert got == want, (got, want)
        return
    assert (got.version, got.codes) == (want.version, want.codes)
    assert (got.tokenizer is None) == (want.tokenizer is None)
    if got.tokenizer is not None:
        assert got.tokenizer.to_json() == want.tokenizer.to_json()


# -- a structure-aware mutator for the JSON targets -------------------------------------------
# Byte mutations almost always break JSON, so most inputs stop at the parser. Half the time this
# mutator parses the input, changes one node (a value from the pool below, a deleted or doubled
# entry, a key the format knows, a value copied from elsewhere in the document, or a byte
# mutation of one string) and writes it back; the other half, and for input that does not
# parse, libFuzzer mutates the bytes.

JSON_TARGETS = ("tokenizer_json", "vocab_merges", "model_json")

KEYS = (
    "version", "truncation", "padding", "added_tokens", "normalizer", "pre_tokenizer", "post_processor", "decoder",
    "model", "type", "normalizers", "pretokenizers", "decoders", "processors", "vocab", "merges", "unk_token",
    "unk_id", "continuing_subword_prefix", "end_of_word_suffix", "fuse_unk", "byte_fallback", "ignore_merges",
    "dropout", "max_input_chars_per_word", "id", "content", "special", "single_word", "lstrip", "rstrip",
    "normalized", "pattern", "String", "Regex", "prepend", "replacement", "prepend_scheme", "split",
    "add_prefix_space", "trim_offsets", "use_regex", "individual_digits", "behavior", "precompiled_charsmap",
    "strip_left", "strip_right", "clean_text", "handle_chinese_chars", "strip_accents", "lowercase", "single",
    "pair", "special_tokens", "ids", "tokens", "SpecialToken", "Sequence", "type_id", "cls", "sep", "prefix",
    "cleanup", "suffix", "start", "stop", "format", "spelling", "scheme", "mark", "split_at_marks", "pre_split",
    "rows", "log_probs", "template", "joints", "options", "report", "stream_merges_from",
)
VALUES = (
    None, True, False, 0, 1, -1, 2, 100, 255, 256, (1 << 24) - 1, 1 << 24, 1 << 31, 1 << 32, 1 << 64, 0.5, -0.0,
    1e308, float("inf"), float("nan"), "", " ", "a", "ab", "\u2581", "##", "</w>", "<0x41>", "<unk>", "[UNK]", "\u0120",
    "\ud800", "\x00", "1.0", "0.2", "A", "B", "always", "first", "never", "Isolated", "Contiguous", "\\s+", " {2,}",
    "BPE", "WordPiece", "Unigram", "WordLevel", "Sequence", "ByteLevel", "Metaspace", "BertNormalizer",
    "BertPreTokenizer", "Whitespace", "WhitespaceSplit", "Digits", "Punctuation", "Split", "Lowercase", "NFC",
    "NFD", "NFKC", "NFKD", "Strip", "StripAccents", "Prepend", "Replace", "Precompiled", "RobertaProcessing",
    "BertProcessing", "TemplateProcessing", "WordPiece", "BPEDecoder", "ByteFallback", "Fuse", "subwords", "bpe",
    "wordpiece", "unigram", "end", "continuation", "front", "bytes", "gpt2", "bert", "special", "alphabet",
    "learned", "byte", "-inf", [], {}, ["a", "b"], ["a", 0], [[0, 1]], {"type": "Sequence"}, {"String": "a"},
    {"Regex": "\\s+"}, {"id": "A"},
)


def _nodes(doc, limit: int = 4000) -> list:
    """(container, key) of every value below the root, breadth first, at most ``limit``."""
    out, queue = [], [doc]
    while queue and len(out) < limit:
        node = queue.pop(0)
        items = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else ()
        for k, v in items:
            out.append((node, k))
            if isinstance(v, (dict, list)):
                queue.append(v)
    return out


def _mutate_json(doc, rng, atheris) -> None:
    nodes = _nodes(doc)
    if not nodes:
        return
    parent, key = nodes[rng.randrange(len(nodes))]
    op = rng.randrange(7)
    if op == 0:
        parent[key] = json.loads(json.dumps(rng.choice(VALUES)))
    elif op == 1:
        del parent[key]
    elif op == 2 and isinstance(parent, list):
        parent.insert(key, json.loads(json.dumps(parent[key])))
    elif op == 3 and isinstance(parent, dict):
        parent[rng.choice(KEYS)] = json.loads(json.dumps(rng.choice(VALUES)))
    elif op == 4:
        other, k2 = nodes[rng.randrange(len(nodes))]
        parent[key] = json.loads(json.dumps(other[k2]))
    elif op == 5 and isinstance(parent[key], str):
        raw = atheris.Mutate(parent[key].encode("utf-8", "surrogatepass"), 64)
        parent[key] = raw.decode("utf-8", "replace")
    elif op == 6 and isinstance(parent, dict) and isinstance(key, str):
        parent[key + rng.choice(("", "x", "\u2581"))] = parent.pop(key)
    else:
        parent[key] = json.loads(json.dumps(rng.choice(VALUES)))


def json_mutator(data: bytes, max_size: int, seed: int) -> bytes:
    import atheris

    rng = random.Random(seed)
    head, sep, tail = data.partition(b"\xff")
    if rng.random() < 0.5:
        return atheris.Mutate(data, max_size)
    try:
        doc = json.loads(head.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        return atheris.Mutate(data, max_size)
    for _ in range(1 + (rng.random() < 0.3)):
        _mutate_json(doc, rng, atheris)
    if sep and rng.random() < 0.3:
        tail = atheris.Mutate(tail, max(1, max_size - len(head) - 1))
    out = json.dumps(doc, ensure_ascii=rng.random() < 0.5).encode("utf-8", "surrogatepass") + sep + tail
    return out if len(out) <= max_size else atheris.Mutate(data, max_size)


def main(argv: list[str]) -> None:
    # libFuzzer re-runs argv[0] with its flags only (-minimize_crash, -jobs): the target then
    # comes from the environment, set on the first run
    if len(argv) > 1 and argv[1] in TARGETS + WRAPPED:
        target, flags = argv[1], argv[2:]
    else:
        target, flags = os.environ.get("SUBWORDS_FUZZ_TARGET", ""), argv[1:]
    if target not in TARGETS + WRAPPED:
        sys.exit(f"usage: {argv[0]} TARGET [libFuzzer flags and corpus dirs]; TARGET one of {', '.join(TARGETS + WRAPPED)}")
    os.environ["SUBWORDS_FUZZ_TARGET"] = target
    import atheris

    with atheris.instrument_imports(include=["subwords"]):
        import subwords  # noqa: F401
        import subwords._api  # noqa: F401
        import subwords.formats  # noqa: F401
        import subwords.formats.huggingface  # noqa: F401
        import subwords.formats.subword_nmt  # noqa: F401
        import subwords.formats.vocab_txt  # noqa: F401
        import subwords.formats.sentencepiece  # noqa: F401
        import subwords.formats.tiktoken  # noqa: F401

    def test_one(data: bytes) -> None:
        one_input(target, data)

    if target in JSON_TARGETS:
        atheris.Setup([argv[0]] + flags, test_one, custom_mutator=json_mutator)
    else:
        atheris.Setup([argv[0]] + flags, test_one)
    atheris.Fuzz()


if __name__ == "__main__":
    main(sys.argv)
