"""The wheel users install: built as the release builds it, installed into a new virtualenv
with no Rust toolchain on the PATH, and used from there.

The release command (docs/DEVELOP.md) is ``maturin build --release --locked --sdist``, which
builds the wheel from the unpacked sdist in a temporary folder: a whole release compile. Here the
two halves run apart: ``maturin build --release --locked`` in the checkout, whose
``target/release`` is the same folder and profile as the README's editable install, so cargo
finds the install's build up to date and only the wheel is packed (seconds, not minutes), and
``maturin sdist``, which only collects files.

Expected values: the four words and their first merges, pieces and total are the BPE page's
(tests/pages/test_pages_bpe.py cites the sentences); the quickstart's sentence is its default,
which the ``front`` spelling keeps byte for byte.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tarfile
import time
import tomllib
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SENTENCE = "Dr. Alvarez didn't expect the low-cost re-analysis."


def cargo_version() -> str:
    """The one version: Cargo's workspace version."""
    return tomllib.loads((ROOT / "Cargo.toml").read_text(encoding="utf-8"))["workspace"]["package"]["version"]


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> tuple[Path, Path]:
    out = tmp_path_factory.mktemp("dist")
    maturin = shutil.which("maturin")
    if maturin is None:
        pytest.fail("maturin is not on PATH: it is in the test extra (pip install -c constraints.txt -e '.[test]')")
    # -i as pip's build of the editable install passes it, so cargo finds that build up to date
    r = subprocess.run([maturin, "build", "--release", "--locked", "-i", sys.executable, "--out", str(out)], cwd=ROOT,
                       capture_output=True, text=True, timeout=1800)
    assert r.returncode == 0, f"maturin build failed:\n{(r.stdout + r.stderr)[-6000:]}"
    r = subprocess.run([maturin, "sdist", "--out", str(out)], cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, f"maturin sdist failed:\n{(r.stdout + r.stderr)[-6000:]}"
    wheels = list(out.glob("*.whl"))
    sdists = list(out.glob("*.tar.gz"))
    assert len(wheels) == 1 and len(sdists) == 1, sorted(p.name for p in out.iterdir())
    return wheels[0], sdists[0]


def no_rust_path() -> str:
    """This PATH without the folders that hold cargo or rustc: what a user without Rust has."""
    keep = [d for d in os.environ.get("PATH", "").split(os.pathsep)
            if d and not any(Path(d, tool).exists() or Path(d, tool + ".exe").exists() for tool in ("cargo", "rustc"))]
    return os.pathsep.join(keep)


def test_wheel_is_abi3_and_holds_the_compiled_core_and_the_stubs(built):
    wheel, _ = built
    version = cargo_version()
    # one wheel for every CPython from 3.9 on: the stable ABI (pyo3's abi3-py39 feature)
    assert re.fullmatch(rf"subwords-{re.escape(version)}-cp39-abi3-[a-z0-9_.]+\.whl", wheel.name), wheel.name
    with zipfile.ZipFile(wheel) as z:
        names = set(z.namelist())
        meta = z.read(f"subwords-{version}.dist-info/METADATA").decode()
    assert "subwords/_core.abi3.so" in names or "subwords/_core.pyd" in names, sorted(names)[:20]
    assert {"subwords/__init__.py", "subwords/_core.pyi", "subwords/py.typed", "subwords/cli.py"} <= names
    assert not any(n.startswith("tests/") or n.startswith("benchmarks/") for n in names)
    assert f"\nVersion: {version}\n" in meta and "\nRequires-Python: >=3.9\n" in meta
    # the licences the metadata names travel with the wheel
    assert "\nLicense-Expression: MIT OR Apache-2.0\n" in meta, meta[:800]
    assert {f"subwords-{version}.dist-info/licenses/LICENSE-MIT",
            f"subwords-{version}.dist-info/licenses/LICENSE-APACHE"} <= names, sorted(n for n in names if "dist-info" in n)


def test_sdist_holds_what_a_build_needs_and_no_binary(built):
    _, sdist = built
    version = cargo_version()
    assert sdist.name == f"subwords-{version}.tar.gz"
    with tarfile.open(sdist) as t:
        names = {n.split("/", 1)[1] for n in t.getnames() if "/" in n}
    assert {"pyproject.toml", "Cargo.toml", "Cargo.lock", "crates/subwords-core/Cargo.toml",
            "crates/subwords-compat/Cargo.toml", "crates/subwords-py/src/lib.rs", "python/subwords/__init__.py",
            "python/subwords/_core.pyi", "README.md", "LICENSE-MIT", "LICENSE-APACHE"} <= names, sorted(names)[:40]
    assert not any(n.endswith((".so", ".pyd")) for n in names), [n for n in names if n.endswith((".so", ".pyd"))]


def test_wheel_installs_and_runs_without_rust(built, tmp_path):
    wheel, _ = built
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
    bindir = venv / ("Scripts" if os.name == "nt" else "bin")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "VIRTUAL_ENV", "CARGO", "RUST"))}
    env["PATH"] = os.pathsep.join([str(bindir), no_rust_path()])
    assert shutil.which("cargo", path=env["PATH"]) is None and shutil.which("rustc", path=env["PATH"]) is None
    py = str(bindir / "python")
    work = tmp_path / "work"  # outside the checkout, so nothing of python/ can be imported by accident
    work.mkdir()

    start = time.monotonic()
    r = subprocess.run([py, "-m", "pip", "install", "--no-index", "--disable-pip-version-check", str(wheel)],
                       cwd=work, env=env, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr
    q = subprocess.run([str(bindir / "subwords"), "quickstart"], cwd=work, env=env, capture_output=True,
                       text=True, timeout=900)
    seconds = time.monotonic() - start
    assert q.returncode == 0, q.stdout + q.stderr
    lines = q.stdout.splitlines()
    assert re.fullmatch(r"training BPE \(front spelling, 8000 rows\) on \d+ standard-library files, [\d.]+ MB \.\.\.",
                        lines[0]), lines[0]
    m = re.fullmatch(r"learned (\d+) merges in [\d.]+s; the corpus went from ([\d,]+) to ([\d,]+) pieces", lines[1])
    assert m, lines[1]
    merges, before, after = int(m[1]), int(m[2].replace(",", "")), int(m[3].replace(",", ""))
    assert 0 < merges < 8000 and after < before
    assert lines[3] == SENTENCE
    assert re.fullmatch(r"  -> \d+ pieces: .+", lines[4]) and lines[4].split(": ", 1)[1].replace(" ", "").replace("▁", "") \
        == SENTENCE.replace(" ", "")
    assert lines[5] == f"  -> decoded: {SENTENCE}"
    print(f"pip install of the wheel to the quickstart's output: {seconds:.1f} s; wheel {wheel.stat().st_size / 1e6:.2f} MB")

    smoke = r'''
import json, sys, pathlib, subwords
assert pathlib.Path(subwords.__file__).resolve().is_relative_to(pathlib.Path(sys.prefix).resolve()), subwords.__file__
four = {"low": 5, "lower": 2, "newest": 6, "widest": 3}
tok = subwords.train(four, model="bpe", spelling="end", vocab_size=22)
ids = tok.encode("lowest newer")
tok.save("four.json")
back = subwords.load("four.json")
print(json.dumps({"version": subwords.__version__, "merges": tok.merges[:3], "pieces": tok.encode_pieces("lowest"),
                  "after": tok.report["corpus_pieces_after"], "decoded": tok.decode(ids),
                  "loaded_ids": back.encode("lowest newer") == ids, "loaded_pieces": back.encode_pieces("lowest")}))
'''
    s = subprocess.run([py, "-c", smoke], cwd=work, env=env, capture_output=True, text=True, timeout=300)
    assert s.returncode == 0, s.stdout + s.stderr
    import json

    got = json.loads(s.stdout)
    assert got == {"version": cargo_version(), "merges": [["e", "s"], ["es", "t</w>"], ["l", "o"]],
                   "pieces": ["lo", "w", "est</w>"], "after": 22, "decoded": "lowest newer",
                   "loaded_ids": True, "loaded_pieces": ["lo", "w", "est</w>"]}
    v = subprocess.run([str(bindir / "subwords"), "--version"], cwd=work, env=env, capture_output=True, text=True,
                       timeout=60)
    assert v.stdout.strip() == f"subwords {cargo_version()}"
