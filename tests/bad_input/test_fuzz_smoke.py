"""A few seconds of coverage-guided fuzzing of every loader, on every CI run.

Rust: where a nightly toolchain is present, the four cargo-fuzz targets are built with
``cargo +nightly build`` and cargo-fuzz's own flags (``fuzz/run.py``: sancov passes, ``--cfg
fuzzing``, AddressSanitizer; the quicker ``smoke`` profile), then each runs for a few seconds
with a per-input timeout and memory limit. Without nightly these tests skip and say so (the
saved corpora still replay on stable: ``crates/subwords-compat/tests/fuzz_corpus.rs``).

Python: the atheris harness (``fuzz/python/fuzz_loaders.py``) runs each Python-side loader for a
few seconds; atheris comes with the ``test`` extra.

Each run keeps what it finds in a temporary folder; a crash, hang or out-of-memory input is
written to ``fuzz/artifacts/TARGET/`` and fails the test with the end of the log.
"""

from __future__ import annotations

import importlib.util
import os
import platform
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SECONDS = 5


def _load(name: str, path: str):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


RUN = _load("fuzz_run", os.path.join(ROOT, "fuzz", "run.py"))

#: where atheris 3.0.0 has wheels (the pin in pyproject.toml carries the same marker)
ATHERIS_PLATFORM = sys.platform == "linux" and platform.machine() == "x86_64" and (3, 11) <= sys.version_info[:2] < (3, 14)


def _check(kind: str, target: str, tmp_path, profile: str = "release") -> None:
    log = tmp_path / "log"
    code, s, wall = RUN.run(kind, target, SECONDS, log_path=str(log), profile=profile, work=str(tmp_path / "work"))
    text = log.read_text(encoding="utf-8", errors="replace")
    found = s["crashes"] + s["timeouts"] + s["ooms"]
    assert code == 0 and found == 0, (
        f"{target}: exit {code}, {s}; the input is in fuzz/artifacts/{target}/ (add it to fuzz/regressions/{target}/ "
        f"once fixed). End of the log:\n{text[-4000:]}")
    assert s["executions"], f"{target}: libFuzzer ran no input:\n{text[-2000:]}"
    print(f"{target}: {s['executions']} executions in {wall:.1f} s, corpus {s['corpus']}")


@pytest.fixture(scope="module")
def rust_targets():
    version = RUN.nightly_available()
    if version is None:
        pytest.skip("no nightly Rust toolchain (`rustup run nightly rustc --version` fails): the cargo-fuzz "
                    "targets need nightly; their corpora and regressions still replay on stable in "
                    "`cargo test -p subwords-compat --release` (tests/fuzz_corpus.rs)")
    RUN.build(asan=True, profile="smoke")
    return version


@pytest.mark.may_skip("cargo-fuzz targets need a nightly toolchain; stable replays their corpora")
@pytest.mark.parametrize("target", RUN.RUST_TARGETS)
def test_rust_target(rust_targets, target, tmp_path):
    _check("rust", target, tmp_path, profile="smoke")


@pytest.mark.may_skip("atheris has wheels only for Linux x86_64, CPython 3.11-3.13")
@pytest.mark.parametrize("target", RUN.PYTHON_TARGETS)
def test_python_target(target, tmp_path):
    if not ATHERIS_PLATFORM:
        pytest.skip(f"atheris 3.0.0 has no wheel for {sys.platform}/{platform.machine()}/Python "
                    f"{sys.version_info[0]}.{sys.version_info[1]}")
    import atheris  # noqa: F401 - the test extra installs it here: missing is a failure, not a skip

    _check("python", target, tmp_path)
