"""sentencepiece's own Python tests, unmodified, run against ``subwords.compat.sentencepiece``.

The source archive of the pinned sentencepiece release is downloaded from PyPI (kept in the
download cache, ``tests/support/peers.py``) and its sha256 checked. Its ``test/`` folder (the test
files and the models and text they read) and ``tools/`` are unpacked into a temporary folder, and
pytest runs them in a subprocess where ``import sentencepiece`` is a shim package re-exporting our
face: the shim is first on ``sys.path`` and a meta-path finder refuses the real compiled module
(``_sentencepiece``), so no expected value can come from the real library (the subprocess checks
both before the tests start).

Every test of the archive is either in ``PASSING`` (it must pass) or in ``NOT_OFFERED`` (deselected
by its exact name, with the reason; docs/COMPAT.md lists them too). The run fails if the two sets
do not cover exactly the collected tests, or if any test does not pass.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import tarfile
import textwrap
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

import peers

VERSION = "0.2.3"
SDIST = f"sentencepiece-{VERSION}.tar.gz"
URL = ("https://files.pythonhosted.org/packages/54/83/0664683546ffca8e36653d39d6217c361d931953f40ce28210b56927a9b6/"
       + SDIST)
SHA256 = "21618ad31f0453a1ebf5ec58defed99758d54af0b670546ecac639ddd8b86fbd"

S = "sentencepiece_test.py::TestSentencepieceProcessor::"
N = "numpy_test.py::TestNumpyIntegration::"
G = "gen_stubs_test.py::GenStubsTest::"

#: the tests that must pass
PASSING = {S + name for name in """
test_load test_decode_invalid_ids test_decode_empty_input test_decode_batch_with_leading_empty_sequence
test_decode_batch_with_unstable_len test_roundtrip test_ja_load test_ja_roundtrip test_train
test_special_tokens_combinations test_train_iterator test_train_kwargs test_serialized_proto test_decode_bytes
test_proto test_new_api test_new_api_proto test_new_api_init test_classmethod_factories test_sampling test_nbest
test_nbest_timeout test_pretokenizer_and_delimiter_mutually_exclusive test_valid_range test_batch test_parallel
test_pickle test_pickle_keeps_options test_unpickle_model_only_state test_global_params test_normalize
test_normalizer test_normalizer_default_flags_follow_spec test_normalizer_rule test_normalizer_map
test_trainer_with_normalizer test_offset_mapping_empty_batch test_offset_mapping test_decode_offset_mapping
test_decode_return_type_bytes test_legacy_out_type_compat test_normalizer_rule_tsv test_normalizer_model_proto
test_normalizer_normalizer_spec test_encode_return_type_explicit test_native_batch_piece_to_id
test_native_batch_id_to_piece test_native_batch_other_id_methods
""".split()} | {N + name for name in """
test_encode_numpy_single test_encode_numpy_batch test_return_type_validation_and_compat
test_decode_numpy_single_32 test_decode_numpy_single_64 test_decode_numpy_batch_list test_decode_numpy_batch_2d
test_decode_numpy_non_contiguous test_decode_numpy_invalid_types test_parallel_encode_numpy
test_nbest_encode_numpy test_numpy_memory_safety test_numpy_empty_input test_decode_invalid_ids_numpy
test_decode_numpy_batch_mixed test_native_batch_id_to_piece_numpy test_native_batch_other_id_methods_numpy
""".split()} | {"gil_release_test.py::test_gil_release"}

#: the tests that cannot pass, each with the reason (deselected by exact name)
NOT_OFFERED = {
    S + "test_word_model_user_defined_symbol":
        "trains model_type=word, which subwords' .model engine does not reproduce (refused by name)",
    S + "test_train_with_pretokenizer":
        "trains with a Python pre-tokenizer (pretokenizer=), which subwords' trainer does not offer (refused)",
    S + "test_inconsistent_pretokenizer": "a Python pre-tokenizer for training (pretokenizer=) is not offered",
    S + "test_pretokenizer_exception": "a Python pre-tokenizer for training (pretokenizer=) is not offered",
    S + "test_complex_regex_pretokenizer": "a Python pre-tokenizer for training (pretokenizer=) is not offered",
    S + "test_convert_to_flatbuffer": "ConvertToFlatbuffer (sentencepiece-lite's FlatBuffer format) is not offered",
    G + "test_committed_stub_in_sync": "checks sentencepiece's own committed .pyi against its stub generator",
    G + "test_added_method": "checks sentencepiece's own committed .pyi against its stub generator",
    G + "test_removed_method": "checks sentencepiece's own committed .pyi against its stub generator",
    G + "test_added_property": "checks sentencepiece's own stub generator on its own binding",
    G + "test_leaked_module_level_import_ignored": "checks sentencepiece's own stub generator on its own binding",
    G + "test_determinism": "checks sentencepiece's own stub generator on its own binding",
}

SHIM = '''\
"""sentencepiece, as subwords' face (a test shim)."""
from subwords.compat.sentencepiece import *  # noqa: F401,F403
from subwords.compat.sentencepiece import (  # noqa: F401
    __version__, SentencePieceProcessor, SentencePieceTrainer, SentencePieceNormalizer, ThreadPool,
    SetRandomGeneratorSeed, SetMinLogLevel, SetNBestTimeout, SetDataDir, set_random_generator_seed,
    set_min_log_level, set_nbest_timeout, set_data_dir, ConvertToFlatbuffer, convert_to_flatbuffer,
)
'''

PB2 = '''\
from subwords.compat.sentencepiece import _pb_classes
_c = _pb_classes()
{names}
'''

RUNNER = '''\
import importlib.abc, os, sys
SHIM = sys.argv[1]
sys.path.insert(0, SHIM)


class Block(importlib.abc.MetaPathFinder):
    """Refuses the real library's compiled core wherever it is asked for."""
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[-1] in ("_sentencepiece", "_sentencepiece_pybind") :
            raise ImportError(f"{name} is blocked: these tests run against subwords' face")
        return None


sys.meta_path.insert(0, Block())
import sentencepiece
assert os.path.dirname(sentencepiece.__file__) == os.path.join(SHIM, "sentencepiece"), sentencepiece.__file__
try:
    import _sentencepiece  # noqa: F401
except ImportError:
    pass
else:
    raise SystemExit("the real _sentencepiece loaded")
import pytest
sys.exit(pytest.main(sys.argv[2:]))
'''


def _archive() -> Path:
    path = peers._fetch(URL, peers.cache_dir() / SDIST)
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    assert digest == SHA256, f"{path} has sha256 {digest}, not the pinned {SHA256}; delete it to fetch again"
    return path


def _unpack(archive: Path, dest: Path) -> Path:
    top = f"sentencepiece-{VERSION}/"
    with tarfile.open(archive, "r:gz") as t:
        for m in t.getmembers():
            if not m.isfile() or not m.name.startswith(top):
                continue
            rel = m.name[len(top):]
            if not (rel.startswith("test/") or rel.startswith("tools/")) or ".." in rel.split("/"):
                continue
            out = dest / rel
            out.parent.mkdir(parents=True, exist_ok=True)
            f = t.extractfile(m)
            assert f is not None
            out.write_bytes(f.read())
    return dest / "test"


def _shim(dest: Path) -> Path:
    pkg = dest / "shim" / "sentencepiece"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text(SHIM)
    (pkg / "sentencepiece_pb2.py").write_text(PB2.format(names="SentencePieceText = _c['SentencePieceText']\n"
                                                              "NBestSentencePieceText = _c['NBestSentencePieceText']"))
    (pkg / "sentencepiece_model_pb2.py").write_text(PB2.format(names="ModelProto = _c['ModelProto']\n"
                                                                    "TrainerSpec = _c['TrainerSpec']\n"
                                                                    "NormalizerSpec = _c['NormalizerSpec']"))
    (dest / "runner.py").write_text(RUNNER)
    (dest / "pytest.ini").write_text("[pytest]\nmarkers =\n    thread_unsafe: sentencepiece's marker\n")
    return dest / "shim"


def _run(dest: Path, shim: Path, args: list[str]) -> subprocess.CompletedProcess[str]:
    import subwords

    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(shim), str(Path(subwords.__file__).resolve().parents[1])])
    env.pop("PYTEST_ADDOPTS", None)
    cmd = [sys.executable, str(dest / "runner.py"), str(shim), "-c", str(dest / "pytest.ini"),
           "--rootdir", str(dest / "test"), "-p", "no:cacheprovider", *args]
    return subprocess.run(cmd, cwd=dest / "test", env=env, capture_output=True, text=True, timeout=1800)


def test_sentencepiece_suite_runs_on_the_face(tmp_path: Path) -> None:
    dest = tmp_path
    tests = _unpack(_archive(), dest)
    shim = _shim(dest)
    files = ["sentencepiece_test.py", "numpy_test.py", "gil_release_test.py", "gen_stubs_test.py"]
    found = sorted(p.name for p in tests.glob("*_test.py"))
    assert found == sorted(files), f"the archive's test files changed: {found}"

    listed = _run(dest, shim, ["--collect-only", "-q", *files])
    collected = {line.strip() for line in listed.stdout.splitlines() if "::" in line}
    assert collected, listed.stdout + listed.stderr
    assert collected == PASSING | set(NOT_OFFERED), (
        f"tests neither expected to pass nor listed: {sorted(collected - PASSING - set(NOT_OFFERED))}; "
        f"listed but not collected: {sorted((PASSING | set(NOT_OFFERED)) - collected)}")

    report = dest / "report.xml"
    deselect = [a for name in sorted(NOT_OFFERED) for a in ("--deselect", name)]
    run = _run(dest, shim, ["-q", "--junitxml", str(report),
                            *deselect, *files])
    outcomes: dict[str, str] = {}
    for case in ET.parse(report).iter("testcase"):
        module = case.get("classname", "").split(".")
        file = module[0] + ".py"
        name = f"{file}::{'::'.join(module[1:] + [case.get('name', '')])}" if len(module) > 1 else f"{file}::{case.get('name')}"
        kids = [c.tag for c in case]
        outcomes[name] = next((k for k in kids if k in ("failure", "error", "skipped")), "passed")
    bad = {k: v for k, v in outcomes.items() if v != "passed"}
    assert not bad, f"{json.dumps(bad, indent=1)}\n{run.stdout[-20000:]}\n{run.stderr[-3000:]}"
    assert set(outcomes) == PASSING, (sorted(PASSING - set(outcomes)), sorted(set(outcomes) - PASSING))
    assert run.returncode == 0, run.stdout[-5000:]


def test_the_suite_cannot_reach_the_real_library(tmp_path: Path) -> None:
    """The shim and the blocker hold: inside the run, ``sentencepiece`` is the face, and the real
    compiled core refuses to import."""
    shim = _shim(tmp_path)
    (tmp_path / "test").mkdir()
    (tmp_path / "test" / "probe_test.py").write_text(textwrap.dedent('''
        import importlib, pytest, sentencepiece

        def test_probe():
            assert sentencepiece.SentencePieceProcessor.__module__ == "subwords.compat.sentencepiece"
            for name in ("_sentencepiece", "sentencepiece._sentencepiece"):
                with pytest.raises(ImportError, match="blocked"):
                    importlib.import_module(name)
    '''))
    run = _run(tmp_path, shim, ["-q", "probe_test.py"])
    assert run.returncode == 0, run.stdout + run.stderr
    assert "1 passed" in run.stdout


def test_models_the_face_trains_load_in_sentencepiece(tmp_path: Path) -> None:
    """What SentencePieceTrainer writes is a model sentencepiece itself reads, with the same ids
    as the face on every line of sentencepiece's own test corpus (the peer here is the real
    library, in this process)."""
    import sentencepiece as real

    from subwords.compat import sentencepiece as face

    corpus = _unpack(_archive(), tmp_path) / "botchan.txt"
    lines = corpus.read_text(encoding="utf-8").splitlines()
    for name, flags in (("uni", dict(user_defined_symbols=["foo", "<sep>"], control_symbols=["<cls>"])),
                        ("bpe", dict(model_type="bpe", byte_fallback=True, pad_id=3))):
        prefix = tmp_path / name
        face.SentencePieceTrainer.train(input=str(corpus), model_prefix=str(prefix), vocab_size=1000, **flags)
        theirs = real.SentencePieceProcessor(model_file=f"{prefix}.model")
        ours = face.SentencePieceProcessor(model_file=f"{prefix}.model")
        assert theirs.vocab_size() == ours.vocab_size() == 1000
        assert [theirs.id_to_piece(i) for i in range(1000)] == [ours.id_to_piece(i) for i in range(1000)]
        assert (theirs.unk_id(), theirs.bos_id(), theirs.eos_id(), theirs.pad_id()) == \
            (ours.unk_id(), ours.bos_id(), ours.eos_id(), ours.pad_id())
        extra = ["I saw a girl with a telescope. foo<sep><cls> ＡＢＣ 藤 ①"]
        assert theirs.encode(lines + extra) == ours.encode(lines + extra)
        assert theirs.encode(extra, out_type=str) == ours.encode(extra, out_type=str)
