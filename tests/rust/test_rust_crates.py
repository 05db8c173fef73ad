"""The Rust crates' own tests (`cargo test`), run by the README's one test command.

They build the core and compat crates in the `rust-tests` profile (Cargo.toml: release code without
link-time optimisation) with the versions in Cargo.lock (`--locked`), so the first run compiles for a
minute or two; later runs reuse `target/`.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def cargo_test(*args: str) -> int:
    """Run ``cargo test`` with ``args``; fail with its output unless every test passed. Returns
    how many tests ran, so a caller can tell a run that tested nothing from one that passed."""
    cargo = shutil.which("cargo")
    if cargo is None:
        pytest.fail("cargo is not on PATH: the README's set-up needs Rust (cargo) to build the core")
    r = subprocess.run([cargo, "test", "--locked", *args], cwd=ROOT, capture_output=True, text=True,
                       timeout=1800)
    out = r.stdout + r.stderr
    if r.returncode != 0:
        pytest.fail(f"cargo test {' '.join(args)} failed (exit {r.returncode}):\n{out[-6000:]}", pytrace=False)
    results = re.findall(r"test result: ok\. (\d+) passed; (\d+) failed", out)
    assert results, out[-3000:]
    assert all(failed == "0" for _, failed in results)
    return sum(int(passed) for passed, _ in results)


def test_core_crate():
    assert cargo_test("-p", "subwords-core", "--profile", "rust-tests") >= 30  # 33 when this was written


def test_compat_crate():
    assert cargo_test("-p", "subwords-compat", "--profile", "rust-tests") >= 10  # 13 when this was written


def test_model_files_do_not_depend_on_hash_order():
    """DESIGN §4: no hash-map iteration order reaches ids, ties or output. With randomized-hash
    every map of the core gets its own random seed; determinism.rs trains every learner on every
    spelling from shuffled, re-batched and re-threaded input and demands identical files."""
    assert cargo_test("-p", "subwords-core", "--profile", "rust-tests", "--features", "randomized-hash",
                      "--test", "determinism") >= 2


def _cargo(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    cargo = shutil.which("cargo")
    if cargo is None:
        pytest.fail("cargo is not on PATH: the README's set-up needs Rust (cargo) to build the core")
    return subprocess.run([cargo, *args], cwd=cwd, capture_output=True, text=True, timeout=1800)


@pytest.mark.parametrize("where", [".", "fuzz"])
def test_rust_sources_are_formatted(where: str):
    """Every crate, and the fuzz targets, in the layout of rustfmt.toml (`cargo fmt` applies it)."""
    r = _cargo("fmt", "--all", "--check", cwd=ROOT / where)
    assert r.returncode == 0, f"cargo fmt --check in {where} (run `cargo fmt --all` there):\n{(r.stdout + r.stderr)[-4000:]}"


def test_clippy_has_no_warnings():
    """The workspace's lints (Cargo.toml's [workspace.lints]) and clippy's defaults, as errors."""
    r = _cargo("clippy", "--locked", "--workspace", "--all-targets", "--", "-D", "warnings")
    assert r.returncode == 0, f"cargo clippy --all-targets -- -D warnings:\n{(r.stdout + r.stderr)[-6000:]}"


def test_the_bindings_unsafe_code_is_in_raw_rs_with_a_safety_comment():
    """docs/ARCHITECTURE.md: every `unsafe` site of the binding is in `raw.rs`, each after a
    `SAFETY:` comment (on the lines just above it, or on the block's first line)."""
    src = ROOT / "crates" / "subwords-py" / "src"
    sites = []
    for path in sorted(src.glob("*.rs")):
        lines = path.read_text(encoding="utf-8").splitlines()
        for i, line in enumerate(lines):
            code = line.split("//", 1)[0]
            if re.search(r"\bunsafe\b", code):
                sites.append((path.name, i + 1))
                assert path.name == "raw.rs", f"{path.name}:{i + 1}: unsafe code outside raw.rs"
                above = "\n".join(lines[max(0, i - 8):i + 2])
                assert "SAFETY:" in above, f"raw.rs:{i + 1}: an unsafe site without a SAFETY: comment"
    assert len(sites) >= 10, sites  # the check sees the sites it is about
