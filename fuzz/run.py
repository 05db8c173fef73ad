"""Builds and runs the fuzz targets without the cargo-fuzz binary (see README.md).

    python fuzz/run.py build [--smoke]          # nightly, sanitizer coverage + ASan, all 5 Rust targets
    python fuzz/run.py rust TARGET SECONDS      # fuzz one Rust target
    python fuzz/run.py python TARGET SECONDS    # fuzz one Python loader with atheris
    python fuzz/run.py list

The Rust targets are built with ``cargo +nightly build`` and the flags cargo-fuzz passes
(sancov passes, ``--cfg fuzzing``, ASan, debug assertions, overflow checks), into
``target/fuzz/`` of the repository. A run keeps what it discovers in ``fuzz/work/TARGET/`` (not
committed) next to the seeds of ``fuzz/corpus/TARGET/`` and the inputs of
``fuzz/regressions/TARGET/`` (read only), with the format's words from ``fuzz/dicts/TARGET.dict``
as a libFuzzer dictionary, writes any crash, hang (``-timeout``) or out-of-memory
(``-rss_limit_mb``) input to ``fuzz/artifacts/TARGET/``, and exits non-zero when it found one.
``tests/bad_input/test_fuzz_smoke.py`` uses the functions below.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from typing import Optional

FUZZ = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(FUZZ)
TARGET_DIR = os.path.join(ROOT, "target", "fuzz")
TRIPLE = "x86_64-unknown-linux-gnu"

RUST_TARGETS = ("model_json", "sentencepiece_model", "tiktoken_ranks", "hf_pipeline", "hf_tables")
PYTHON_TARGETS = ("tokenizer_json", "vocab_merges", "subword_nmt", "vocab_txt")
#: the Rust-parsed formats read through their Python wrappers (atheris too; not in the smoke run)
PYTHON_WRAPPED = ("model_json", "sentencepiece_model", "tiktoken_ranks")

#: what cargo-fuzz 0.13.2 passes for `cargo fuzz build` (sanitizer=address, release; checked with
#: `cargo fuzz build -v`), plus overflow checks spelled out (rustc ties them to debug assertions)
RUSTFLAGS = [
    "-Cpasses=sancov-module",
    "-Cllvm-args=-sanitizer-coverage-level=4",
    "-Cllvm-args=-sanitizer-coverage-inline-8bit-counters",
    "-Cllvm-args=-sanitizer-coverage-pc-table",
    "-Cllvm-args=-sanitizer-coverage-trace-compares",
    "-Cllvm-args=-sanitizer-coverage-stack-depth",
    "-Cllvm-args=-simplifycfg-branch-fold-threshold=0",
    "--cfg", "fuzzing",
    "-Cdebug-assertions",
    "-Coverflow-checks",
]
ASAN = ["-Zsanitizer=address"]

#: per-input limits of every run (libFuzzer's defaults are 1200 s and 2048 MB)
TIMEOUT_S = 10
RSS_LIMIT_MB = 2048
#: the Python harness stays near 50 MB: a load that takes 1 GB is a finding, not noise
PYTHON_RSS_LIMIT_MB = 1024
MAX_LEN = 64 * 1024


def nightly_available() -> Optional[str]:
    """`rustc --version` of the nightly toolchain, or None when there is none."""
    try:
        out = subprocess.run(["rustup", "run", "nightly", "rustc", "--version"], capture_output=True, text=True,
                             timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return out.stdout.strip() if out.returncode == 0 else None


def build(asan: bool = True, jobs: int = 2, profile: str = "release") -> None:
    """``profile="smoke"`` (Cargo.toml) builds faster for the CI smoke run."""
    env = dict(os.environ)
    env["RUSTFLAGS"] = " ".join(RUSTFLAGS + (ASAN if asan else []))
    env.pop("CARGO_TARGET_DIR", None)
    cmd = ["cargo", "+nightly", "build", "--profile", profile, "--manifest-path", os.path.join(FUZZ, "Cargo.toml"),
           "--target", TRIPLE, "--target-dir", TARGET_DIR, "--bins", "--locked", "-j", str(jobs)]
    subprocess.run(cmd, env=env, check=True)


def binary(target: str, profile: str = "release") -> str:
    return os.path.join(TARGET_DIR, TRIPLE, profile, target)


def _dirs(target: str, work: Optional[str] = None, kind: str = "rust") -> tuple[str, str, list[str]]:
    # the Python wrappers of a Rust-parsed format keep their finds apart from the Rust target's
    name = f"py-{target}" if kind == "python" and target in RUST_TARGETS else target
    work = work or os.path.join(FUZZ, "work", name)
    artifacts = os.path.join(FUZZ, "artifacts", name) + os.sep
    os.makedirs(work, exist_ok=True)
    os.makedirs(artifacts, exist_ok=True)
    seeds = [d for d in (os.path.join(FUZZ, "corpus", target), os.path.join(FUZZ, "regressions", target))
             if os.path.isdir(d)]
    return work, artifacts, seeds


def inherited_peak_mb() -> int:
    """This process's peak RSS in MB. Linux hands a process's peak RSS on to its children, across
    fork and exec, and libFuzzer measures the peak, so a fuzzer started from a large process (the
    test suite, hundreds of tests in) would count its parent's memory as its own and report an
    out-of-memory on its first input. The limit is therefore this much above the inherited peak."""
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024


def libfuzzer_args(target: str, seconds: int, work: Optional[str] = None, kind: str = "rust") -> list[str]:
    work, artifacts, seeds = _dirs(target, work, kind)
    words = os.path.join(FUZZ, "dicts", f"{target}.dict")
    extra = [f"-dict={words}"] if os.path.isfile(words) else []
    rss = (PYTHON_RSS_LIMIT_MB if kind == "python" else RSS_LIMIT_MB) + inherited_peak_mb()
    return [f"-max_total_time={seconds}", f"-timeout={TIMEOUT_S}", f"-rss_limit_mb={rss}",
            f"-max_len={MAX_LEN}", f"-artifact_prefix={artifacts}", "-print_final_stats=1", *extra, work, *seeds]


def summary(log: str) -> dict:
    """Executions, corpus size and findings from a libFuzzer log."""
    runs = re.findall(r"stat::number_of_executed_units:\s*(\d+)", log)
    corp = re.findall(r"corp: (\d+)/", log)
    return {
        "executions": int(runs[-1]) if runs else None,
        "corpus": int(corp[-1]) if corp else None,
        "crashes": len(re.findall(r"==\d+== ERROR: libFuzzer: deadly signal|panicked at|ERROR: AddressSanitizer|"
                                  r"Uncaught Python exception", log)),
        "timeouts": len(re.findall(r"ERROR: libFuzzer: timeout", log)),
        "ooms": len(re.findall(r"ERROR: libFuzzer: out-of-memory", log)),
    }


def run(kind: str, target: str, seconds: int, log_path: Optional[str] = None,
        profile: str = "release", work: Optional[str] = None) -> tuple[int, dict, float]:
    """Fuzzes one target; returns (exit code, summary, wall seconds). ``work``: the folder for
    what the run discovers (default ``fuzz/work/TARGET``)."""
    if kind == "rust":
        cmd = [binary(target, profile)]
    else:
        cmd = [sys.executable, os.path.join(FUZZ, "python", "fuzz_loaders.py"), target]
    cmd += libfuzzer_args(target, seconds, work, kind)
    t0 = time.monotonic()
    p = subprocess.run(cmd, capture_output=True, text=True, errors="replace", cwd=ROOT)
    wall = time.monotonic() - t0
    log = p.stdout + p.stderr
    if log_path:
        with open(log_path, "w", encoding="utf-8") as f:
            f.write(" ".join(cmd) + "\n" + log)
    return p.returncode, summary(log), wall


def main(argv: list[str]) -> int:
    if not argv or argv[0] not in ("build", "rust", "python", "list"):
        print(__doc__)
        return 2
    if argv[0] == "list":
        print("rust:", *RUST_TARGETS)
        print("python:", *PYTHON_TARGETS, "(wrappers:", *PYTHON_WRAPPED, ")")
        return 0
    if argv[0] == "build":
        build(asan="--no-asan" not in argv, profile="smoke" if "--smoke" in argv else "release")
        return 0
    kind, target, seconds = argv[0], argv[1], int(argv[2])
    names = RUST_TARGETS if kind == "rust" else PYTHON_TARGETS + PYTHON_WRAPPED
    if target not in names:
        print(f"unknown {kind} target {target!r}; one of {', '.join(names)}")
        return 2
    log = os.path.join(FUZZ, "work", f"{kind}-{target}.log")
    code, s, wall = run(kind, target, seconds, log)
    print(f"{target}: exit {code}, {wall:.0f} s, {s['executions']} executions, corpus {s['corpus']}, "
          f"crashes {s['crashes']}, timeouts {s['timeouts']}, ooms {s['ooms']} (log: {os.path.relpath(log, ROOT)})")
    return code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
