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
the cargo-fuzz targets instead. ``tests/test_fuzz_corpus.py`` replays the saved corpora and
regressions through :func:`one_input`, the same code.
"""

from __future__ import annotations

import os
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
    except SubwordsError:
        return False
    _use(tok, target, SubwordsError)
    return True


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

    atheris.Setup([argv[0]] + flags, test_one)
    atheris.Fuzz()


if __name__ == "__main__":
    main(sys.argv)
