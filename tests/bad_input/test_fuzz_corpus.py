"""Replays the saved fuzz inputs of the Python-side loaders on every run (no atheris needed).

Every file of ``fuzz/corpus/<target>/`` and ``fuzz/regressions/<target>/`` goes through
``fuzz/python/fuzz_loaders.py``'s ``one_input``, the code the atheris harness fuzzes: it is read
with ``subwords.formats.load`` and, if it loads, encoded and decoded. Each must load or raise a
``SubwordsError``; any other exception fails the test. The Rust-parsed formats' corpora
(``model_json``, ``sentencepiece_model``, ``tiktoken_ranks``) replay here too, through their
Python wrappers; ``cargo test -p subwords-core --release`` replays them through the Rust targets.
"""

from __future__ import annotations

import importlib.util
import os
import traceback

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FUZZ = os.path.join(ROOT, "fuzz")

#: a corpus smaller than this means it is missing: the test must not pass on nothing
MIN_CORPUS = 8
#: and this many of its inputs must load, so the code past the loader runs too
MIN_LOADED = 4


def _harness():
    spec = importlib.util.spec_from_file_location("fuzz_loaders", os.path.join(FUZZ, "python", "fuzz_loaders.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


HARNESS = _harness()


def _files(kind: str, target: str) -> list[str]:
    d = os.path.join(FUZZ, kind, target)
    if not os.path.isdir(d):
        return []
    return sorted(os.path.join(d, n) for n in os.listdir(d) if not n.startswith(".") and os.path.isfile(os.path.join(d, n)))


@pytest.mark.parametrize("target", HARNESS.TARGETS + HARNESS.WRAPPED)
def test_replay(target):
    corpus = _files("corpus", target)
    regressions = _files("regressions", target)
    assert len(corpus) >= MIN_CORPUS, f"fuzz/corpus/{target} holds {len(corpus)} files: the corpus is missing"
    failures = []
    loaded = 0
    for path in corpus + regressions:
        with open(path, "rb") as f:
            data = f.read()
        try:
            loaded += HARNESS.one_input(target, data) and path in corpus
        except Exception:  # noqa: BLE001 - anything but a SubwordsError is the failure reported
            failures.append(f"{os.path.relpath(path, ROOT)}:\n{traceback.format_exc()}")
    assert not failures, f"{len(failures)} of {len(corpus) + len(regressions)} inputs failed:\n" + "\n".join(failures)
    assert loaded >= MIN_LOADED, f"only {loaded} of the {target} seeds load; they no longer reach past the loader"


def test_every_python_target_has_a_corpus():
    assert set(HARNESS.TARGETS) == {"tokenizer_json", "vocab_merges", "subword_nmt", "vocab_txt"}
    for t in HARNESS.TARGETS + HARNESS.WRAPPED:
        assert os.path.isdir(os.path.join(FUZZ, "corpus", t)), t


@pytest.mark.parametrize("fmt, name", [("vocab-txt", "vocab.txt"), ("vocab-merges", "merges.txt")])
def test_oversized_side_files_are_refused_before_reading(tmp_path, fmt, name):
    """vocab.txt and merges.txt have a size limit like every other reader (no unbounded read)."""
    from subwords.errors import ModelFileError
    from subwords.formats import load

    (tmp_path / "vocab.json").write_text('{"a": 0}', encoding="utf-8")
    (tmp_path / "merges.txt").write_text("", encoding="utf-8")
    with open(tmp_path / name, "wb") as f:
        f.truncate((1 << 30) + 1)  # sparse: takes no disk
    with pytest.raises(ModelFileError, match="refusing"):
        load(tmp_path, format=fmt)


def test_a_sparse_vocabulary_does_not_make_an_int_per_id(tmp_path):
    """An 82-byte tokenizer.json naming one token at id 2**24 - 1 made the binding build a Python
    int for every id up to it on the first encode (600 MB, seconds); the table now follows the
    vocabulary's size. (fuzz/regressions/tokenizer_json/sparse-id-16777215.json)"""
    import tracemalloc

    from subwords.formats import load

    src = os.path.join(FUZZ, "regressions", "tokenizer_json", "sparse-id-16777215.json")
    tok = load(src, format="hf")
    tracemalloc.start()
    try:
        assert tok.encode("a") == [16777215]
        assert tok.encode("b") == [0]
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 16 << 20, f"the first encode took {peak >> 20} MB"
