"""tiktoken's own tests, unmodified, run against ``subwords.compat.tiktoken``.

The source archive of tiktoken is downloaded from PyPI at a pinned version and checked against
its pinned SHA-256; its ``tests/`` folder is unpacked to a temporary folder and run by pytest in a
child process where:

* ``import tiktoken`` finds a two-line package that re-exports ``subwords.compat.tiktoken``
  (it comes first on ``PYTHONPATH``);
* an import hook refuses the real library's compiled core (``tiktoken._tiktoken``), its Python
  modules and its ``tiktoken_ext`` plugins, so no id, pattern or special token can come from it;
* the rank files are OpenAI's, laid out as tiktoken's own cache (``$TIKTOKEN_CACHE_DIR``, each
  under the SHA-1 of its URL), which the face reads without downloading.

The child's results are read from its JUnit XML: the test asserts that exactly the pinned set of
tiktoken's tests ran, that every one of them passed, and that the import hook's report shows only
the face was loaded. No test is deselected or skipped: every test of the archive passes.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import tarfile
import xml.etree.ElementTree as ET
from pathlib import Path

import openai_files
import peers

import subwords

VERSION = "0.14.0"
SDIST_SHA256 = "231dec90efcdccf1b565a1416107736f1e09b1a08fe736ef9d6363e626d03874"
# tiktoken reads this for its hypothesis tests' max_examples (tests/test_helpers.py)
MAX_EXAMPLES = "50"

# Every test in the archive's tests/ folder (pytest node ids), as collected from tiktoken 0.14.0.
EXPECTED = {
    "tests/test_encoding.py::test_simple",
    "tests/test_encoding.py::test_simple_repeated",
    "tests/test_encoding.py::test_large_repeated",
    "tests/test_encoding.py::test_simple_regex",
    "tests/test_encoding.py::test_basic_encode",
    "tests/test_encoding.py::test_encode_empty",
    "tests/test_encoding.py::test_encode_bytes",
    *(f"tests/test_encoding.py::{test}[{enc}]"
      for test in ("test_hyp_encode_bytes", "test_catastrophically_repetitive", "test_basic_roundtrip",
                   "test_hyp_roundtrip", "test_single_token_roundtrip", "test_hyp_special_ordinary",
                   "test_batch_encode", "test_hyp_batch_roundtrip")
      for enc in ("r50k_base", "cl100k_base")),
    "tests/test_encoding.py::test_encode_surrogate_pairs",
    "tests/test_encoding.py::test_special_token",
    "tests/test_misc.py::test_encoding_for_model",
    "tests/test_misc.py::test_optional_blobfile_dependency",
    "tests/test_offsets.py::test_hyp_offsets[cl100k_base]",
    "tests/test_offsets.py::test_basic_offsets",
    "tests/test_pickle.py::test_pickle",
    "tests/test_simple_public.py::test_simple",
    "tests/test_simple_public.py::test_encoding_for_model",
    "tests/test_simple_public.py::test_optional_blobfile_dependency",
}

SHIM = '''"""tiktoken's name for subwords.compat.tiktoken (a test shim)."""
import tiktoken_guard  # noqa: F401  (refuses the real library's modules)
from subwords.compat.tiktoken import *  # noqa: F401,F403
from subwords.compat.tiktoken import __version__  # noqa: F401
'''

GUARD = '''"""Refuses the real tiktoken's modules, and reports at the end of the session what was loaded."""
import importlib.abc
import json
import os
import sys

REAL = ("tiktoken._tiktoken", "tiktoken.core", "tiktoken.registry", "tiktoken.load", "tiktoken.model",
        "tiktoken._educational", "tiktoken_ext")


class Refuse(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name in REAL or name.startswith("tiktoken_ext."):
            raise ImportError(f"{name} is refused: these tests run against subwords.compat.tiktoken only")
        return None


if not any(type(f).__name__ == "Refuse" for f in sys.meta_path):
    sys.meta_path.insert(0, Refuse())


def pytest_sessionfinish(session, exitstatus):
    import tiktoken
    report = {
        "tiktoken_file": tiktoken.__file__,
        "encoding_module": tiktoken.Encoding.__module__,
        "modules": sorted(m for m in sys.modules if m.split(".")[0] in ("tiktoken", "tiktoken_ext")),
    }
    with open(os.environ["TIKTOKEN_GUARD_REPORT"], "w") as f:
        json.dump(report, f)
'''


def _unpack_tests(archive: Path, dest: Path) -> Path:
    top = f"tiktoken-{VERSION}/"
    with tarfile.open(archive, "r:gz") as t:
        members = [m for m in t.getmembers() if m.name.startswith(top + "tests/") and m.isfile()]
        assert members, f"no tests/ folder in {archive}"
        for m in members:
            out = dest / m.name[len(top):]
            out.parent.mkdir(parents=True, exist_ok=True)
            f = t.extractfile(m)
            assert f is not None
            out.write_bytes(f.read())
    return dest


def test_tiktoken_own_tests_pass_against_the_face(tmp_path):
    archives = [a for a in peers.pypi_archives(f"tiktoken=={VERSION}", sdist=True) if a.name.endswith(".tar.gz")]
    assert len(archives) == 1, archives
    digest = hashlib.sha256(archives[0].read_bytes()).hexdigest()
    assert digest == SDIST_SHA256, f"{archives[0]} has sha256 {digest}, not the pinned {SDIST_SHA256}"

    suite = _unpack_tests(archives[0], tmp_path / "suite")
    (suite / "pytest.ini").write_text("[pytest]\n")  # none of the project's options reach the child
    shim = tmp_path / "shim"
    (shim / "tiktoken").mkdir(parents=True)
    (shim / "tiktoken" / "__init__.py").write_text(SHIM)
    (shim / "tiktoken_guard.py").write_text(GUARD)
    cache = openai_files.as_tiktoken_cache(tmp_path / "cache")

    report, junit = tmp_path / "guard.json", tmp_path / "junit.xml"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST", "SUBWORDS_TIKTOKEN", "DATA_GYM"))}
    env.update({
        "PYTHONPATH": os.pathsep.join([str(shim), str(Path(subwords.__file__).parents[1])]),
        "TIKTOKEN_CACHE_DIR": str(cache),
        "TIKTOKEN_MAX_EXAMPLES": MAX_EXAMPLES,
        "TIKTOKEN_GUARD_REPORT": str(report),
        "HYPOTHESIS_STORAGE_DIRECTORY": str(tmp_path / "hypothesis"),
    })
    cmd = [sys.executable, "-m", "pytest", "-p", "tiktoken_guard", "-p", "no:cacheprovider", "-q",
           "--rootdir", str(suite), "-c", str(suite / "pytest.ini"), f"--junitxml={junit}", "tests"]
    r = subprocess.run(cmd, cwd=suite, env=env, capture_output=True, text=True, timeout=1800)
    out = r.stdout[-6000:] + r.stderr[-3000:]

    assert junit.exists(), f"the child pytest wrote no results:\n{out}"
    outcome: dict[str, str] = {}
    for case in ET.parse(junit).getroot().iter("testcase"):
        module = case.get("classname", "").replace(".", "/")
        node = f"{module}.py::{case.get('name')}"
        kinds = [child.tag for child in case if child.tag in ("failure", "error", "skipped")]
        outcome[node] = kinds[0] if kinds else "passed"
    assert set(outcome) == EXPECTED, (f"ran {sorted(set(outcome) - EXPECTED)} not expected, "
                                      f"missed {sorted(EXPECTED - set(outcome))}\n{out}")
    failed = {n: k for n, k in outcome.items() if k != "passed"}
    assert not failed, f"tiktoken's tests that did not pass: {failed}\n{out}"
    assert r.returncode == 0, out

    seen = json.loads(report.read_text())
    assert Path(seen["tiktoken_file"]).resolve() == (shim / "tiktoken" / "__init__.py").resolve(), seen
    assert seen["encoding_module"] == "subwords.compat.tiktoken", seen
    assert seen["modules"] == ["tiktoken"], seen
