"""transformers' own tokenizer tests, unmodified, run with ``subwords.compat.transformers``
installed.

The source archive of the pinned transformers release is downloaded from PyPI (kept in the
download cache, ``tests/support/peers.py``) and its sha256 checked. It ships the shared test
mixins of its tokenizer tests, ``tests/test_tokenization_common.py`` (``TokenizerTesterMixin``,
60 tests), ``tests/test_tokenizers_backend_mixin.py`` (``TokenizersBackendTesterMixin``, the fast
tokenizers' own tests) and ``tests/test_sentencepiece_backend_mixin.py`` (imported by the
first); the per-model files that instantiate them load checkpoints from the Hugging Face Hub,
so they are not in the archive. Here the mixins are instantiated the way those files do it, on
three tokenizers trained on the multilingual corpus and saved with ``save_pretrained`` into a
temporary folder (``from_pretrained_id`` is that folder), each loaded by the generic
``PreTrainedTokenizerFast`` and by its model class (``BertTokenizer``, ``RobertaTokenizer``,
``XLMRobertaTokenizer``). The mixins' integration tests read the expected tokens, ids and
decoded text from class attributes: they are stock transformers' answers, computed in this
process before anything is installed. ``fixtures/sample_text.txt`` (read by the mixin's setup;
not in the archive) is lines of the multilingual corpus.

pytest runs them in a subprocess whose test module calls ``install()`` before transformers makes
any tokenizer and counts the batches the backend served itself and those it left to the real
tokenizer. Every collected test is in ``PASSING`` or in ``NOT_RUN`` (deselected by name, with
the reason; docs/COMPAT.md lists them too).
"""

from __future__ import annotations

import ast
import hashlib
import json
import os
import subprocess
import sys
import tarfile
import xml.etree.ElementTree as ET
from pathlib import Path

import peers
from transformers_models import BUILDERS

from transformers import BertTokenizer, PreTrainedTokenizerFast, RobertaTokenizer, XLMRobertaTokenizer

import subwords.compat.transformers as backend

VERSION = "5.23.0"
SDIST_SHA256 = "19d647a4d5d903a7c644ca5cde2d86efc3dde7d8c687ae7988806ff2205efa71"
FILES = ("test_tokenization_common.py", "test_tokenizers_backend_mixin.py", "test_sentencepiece_backend_mixin.py")

#: class name -> (model folder, tokenizer class)
CLASSES = {
    "WordPieceFast": ("wordpiece", PreTrainedTokenizerFast),
    "Bert": ("wordpiece", BertTokenizer),
    "ByteBpeFast": ("byte_bpe", PreTrainedTokenizerFast),
    "Roberta": ("byte_bpe", RobertaTokenizer),
    "UnigramFast": ("unigram", PreTrainedTokenizerFast),
    "XLMRoberta": ("unigram", XLMRobertaTokenizer),
}

TORCH = "needs PyTorch (not installed: the backend needs no torch)"
#: test name (in every TokenizerTesterMixin class) -> why it is deselected
COMMON_NOT_RUN = {
    "test_batch_encode_dynamic_overflowing": TORCH,
    "test_chat_template_return_assistant_tokens_mask": TORCH,
    "test_empty_input_string": TORCH + " (or MLX)",
    "test_prepare_seq2seq_batch": TORCH,
    "test_chat_template_save_loading": "skips itself for a tokenizer whose template takes no chat input (all three)",
}
NOT_RUN = {f"test_run.py::{c}Common::{t}": why for c in CLASSES for t, why in COMMON_NOT_RUN.items()}
#: deselected because they fail with stock transformers too (checked by the second test below)
FAIL_STOCK = {
    "test_run.py::ByteBpeFastBackend::test_rust_tokenizer_add_prefix_space_0":
        "the generic PreTrainedTokenizerFast does not pass add_prefix_space to a ByteLevel pre-tokenizer "
        "(RobertaTokenizer does, and passes)",
    **{f"test_run.py::{c}Common::test_integration_from_extractor":
       "the generic PreTrainedTokenizerFast rebuilt from the extracted vocabulary is a plain BPE model without "
       "the file's normalizer, pre-tokenizer or model type (the model classes' runs of this test pass)"
       for c in ("WordPieceFast", "ByteBpeFast", "UnigramFast")},
    "test_run.py::XLMRobertaBackend::test_add_bos_token_without_bos_token":
        "XLMRobertaTokenizer's own __init__ raises TypeError with bos_token=None",
}
NOT_RUN.update(FAIL_STOCK)

RUNNER = '''
import atexit
import json
import os

import subwords.compat.transformers as backend

if os.environ.get("SUBWORDS_STOCK") != "1":
    backend.install()
counts = {"served": 0, "calls": 0}
_batch, _encode_batch = backend.Backend._batch, backend.Backend.encode_batch


def batch(self, *a, **k):
    # every batch of texts the backend is asked for, from __call__ or from encode_batch
    got = _batch(self, *a, **k)
    counts["calls"] += 1
    counts["served"] += got is not None
    return got


def encode_batch(self, input, is_pretokenized=False, add_special_tokens=True):
    if is_pretokenized:
        counts["calls"] += 1
    return _encode_batch(self, input, is_pretokenized=is_pretokenized, add_special_tokens=add_special_tokens)


backend.Backend._batch = batch
backend.Backend.encode_batch = encode_batch
atexit.register(lambda: open(os.environ["SUBWORDS_COUNTS"], "w").write(json.dumps(counts)))
'''

#: deselects by exact name (pytest's --deselect takes every test whose name starts with the one given)
CONFTEST = '''
import json
import os


def pytest_collection_modifyitems(config, items):
    names = set(json.loads(os.environ.get("SUBWORDS_DESELECT", "[]")))
    keep = [i for i in items if i.nodeid.removeprefix("tests/") not in names]
    gone = [i for i in items if i.nodeid.removeprefix("tests/") in names]
    if gone:
        config.hook.pytest_deselected(items=gone)
        items[:] = keep
'''

MODULE = '''
import json
import os
import unittest

from . import subwords_runner  # noqa: F401  (installs the backend first)
from transformers import BertTokenizer, RobertaTokenizer, TokenizersBackend, XLMRobertaTokenizer

import subwords.compat.transformers as backend

from .test_tokenization_common import TokenizerTesterMixin
from .test_tokenizers_backend_mixin import TokenizersBackendTesterMixin

HERE = os.path.dirname(os.path.abspath(__file__))
EXPECTED = json.load(open(os.path.join(HERE, "expected.json"), encoding="utf-8"))
CLASSES = {classes}


def _make(name, folder, cls):
    path = os.path.join(HERE, "models", folder)
    want = EXPECTED[name]
    common = type(name + "Common", (TokenizerTesterMixin, unittest.TestCase), dict(
        tokenizer_class=cls, from_pretrained_id=path, integration_expected_tokens=want["tokens"],
        integration_expected_token_ids=want["ids"], integration_expected_decoded_text=want["decoded"]))
    fast = type(name + "Backend", (TokenizersBackendTesterMixin, unittest.TestCase), dict(
        tokenizer_class=cls, from_pretrained_id=path))
    return common, fast


for _name, (_folder, _cls) in CLASSES.items():
    _common, _fast = _make(_name, _folder, globals()[_cls])
    globals()[_common.__name__] = _common
    globals()[_fast.__name__] = _fast
del _common, _fast
'''


def _archive() -> Path:
    archives = [a for a in peers.pypi_archives(f"transformers=={VERSION}", sdist=True) if a.name.endswith(".tar.gz")]
    assert len(archives) == 1, archives
    digest = hashlib.sha256(archives[0].read_bytes()).hexdigest()
    assert digest == SDIST_SHA256, f"{archives[0]} has sha256 {digest}, not the pinned {SDIST_SHA256}"
    return archives[0]


def _integration_string(path: Path) -> str:
    """``TokenizerTesterMixin.integration_test_input_string``, read from the file's source."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef) and node.name == "TokenizerTesterMixin":
            for item in node.body:
                if (isinstance(item, ast.Assign) and len(item.targets) == 1
                        and getattr(item.targets[0], "id", None) == "integration_test_input_string"):
                    return ast.literal_eval(item.value)
    raise AssertionError("the mixin no longer has integration_test_input_string")


def _prepare(dest: Path) -> Path:
    tests = dest / "tests"
    (tests / "fixtures").mkdir(parents=True)
    top = f"transformers-{VERSION}/tests/"
    with tarfile.open(_archive(), "r:gz") as t:
        for name in FILES:
            f = t.extractfile(top + name)
            assert f is not None
            (tests / name).write_bytes(f.read())
    (tests / "__init__.py").write_text("")
    texts = list(peers.multilingual_texts())
    (tests / "fixtures" / "sample_text.txt").write_text("\n".join(texts[::97][:300]), encoding="utf-8")
    train = texts[1::7]
    for folder, build in BUILDERS.items():
        build(train).save_pretrained(tests / "models" / folder)
    # stock transformers' answers for the mixin's integration string (nothing installed here)
    assert not backend.is_installed()
    text = _integration_string(tests / "test_tokenization_common.py")
    expected = {}
    for name, (folder, cls) in CLASSES.items():
        tok = cls.from_pretrained(tests / "models" / folder)
        ids = tok.encode(text, add_special_tokens=False)
        expected[name] = {"tokens": tok.tokenize(text), "ids": ids,
                          "decoded": tok.decode(ids, clean_up_tokenization_spaces=False)}
    (tests / "expected.json").write_text(json.dumps(expected, ensure_ascii=False), encoding="utf-8")
    (tests / "subwords_runner.py").write_text(RUNNER)
    (tests / "conftest.py").write_text(CONFTEST)
    classes = {name: (folder, cls.__name__) for name, (folder, cls) in CLASSES.items()}
    (tests / "test_run.py").write_text(MODULE.replace("{classes}", repr(classes)))
    return tests


def _run(tests: Path, args: list[str], counts: Path, stock: bool = False,
         deselect: tuple[str, ...] = ()) -> subprocess.CompletedProcess[str]:
    import subwords

    env = dict(os.environ)
    env["PYTHONPATH"] = str(Path(subwords.__file__).resolve().parents[1])
    env["HF_HUB_OFFLINE"] = "1"
    env["RUN_SLOW"] = "1"
    env["SUBWORDS_COUNTS"] = str(counts)
    env["SUBWORDS_STOCK"] = "1" if stock else "0"
    env["SUBWORDS_DESELECT"] = json.dumps(sorted(deselect))
    env.pop("PYTEST_ADDOPTS", None)
    cmd = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "--rootdir", str(tests.parent), *args]
    return subprocess.run(cmd, cwd=tests.parent, env=env, capture_output=True, text=True, timeout=1800)


def test_transformers_tokenizer_tests_pass_with_the_backend(tmp_path: Path) -> None:
    tests = _prepare(tmp_path)
    counts = tmp_path / "counts.json"
    listed = _run(tests, ["--collect-only", "-q", "tests/test_run.py"], counts)
    collected = {line.strip().removeprefix("tests/") for line in listed.stdout.splitlines() if "::" in line}
    assert collected, listed.stdout[-3000:] + listed.stderr[-3000:]
    assert set(NOT_RUN) <= collected, sorted(set(NOT_RUN) - collected)
    passing = collected - set(NOT_RUN)
    report = tmp_path / "report.xml"
    run = _run(tests, ["-q", "--junitxml", str(report), "tests/test_run.py"], counts, deselect=tuple(NOT_RUN))
    outcomes: dict[str, str] = {}
    for case in ET.parse(report).iter("testcase"):
        name = f"test_run.py::{case.get('classname', '').split('.')[-1]}::{case.get('name')}"
        kids = [c.tag for c in case]
        outcomes[name] = next((k for k in kids if k in ("failure", "error", "skipped")), "passed")
    bad = {k: v for k, v in outcomes.items() if v != "passed"}
    assert not bad, f"{json.dumps(bad, indent=1)}\n{run.stdout[-20000:]}\n{run.stderr[-3000:]}"
    assert set(outcomes) == passing, (sorted(passing - set(outcomes)), sorted(set(outcomes) - passing))
    assert run.returncode == 0, run.stdout[-5000:]
    assert len(passing) >= 190
    # the backend served the encoding calls (the rest: pre-tokenized input and what tokenizers
    # itself refuses, answered by the real tokenizer)
    got = json.loads(counts.read_text())
    assert got["served"] >= 0.9 * got["calls"] and got["served"] > 1000, got


def test_the_tests_left_out_for_failing_fail_with_stock_transformers(tmp_path: Path) -> None:
    """What ``FAIL_STOCK`` says: each of those tests fails without the backend too."""
    tests = _prepare(tmp_path)
    report = tmp_path / "report.xml"
    run = _run(tests, ["-q", "--junitxml", str(report), *("tests/" + n for n in sorted(FAIL_STOCK))],
               tmp_path / "counts.json", stock=True)
    outcomes = {f"test_run.py::{c.get('classname', '').split('.')[-1]}::{c.get('name')}": [k.tag for k in c]
                for c in ET.parse(report).iter("testcase")}
    assert set(outcomes) == set(FAIL_STOCK), run.stdout[-3000:]
    assert all("failure" in kids or "error" in kids for kids in outcomes.values()), outcomes
    assert json.loads((tmp_path / "counts.json").read_text())["calls"] == 0
