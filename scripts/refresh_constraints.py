#!/usr/bin/env python3
"""Refresh constraints.txt: the exact versions of every package the test and bench extras pull in.

    python scripts/refresh_constraints.py          # rewrite constraints.txt
    python scripts/refresh_constraints.py --check  # exit 1 if it would change (nothing written)

The README's install command (`pip install -c constraints.txt -e ".[test]"`) installs exactly
these versions, so a fresh machine gets what CI was green with. This asks pip's resolver for the
newest versions that fit pyproject.toml's ranges (`pip install --dry-run --report`: nothing is
installed), for this Python and platform, and writes every package of the resolution, transitive
ones included. After refreshing, run the whole suite before committing the new pins.
"""

from __future__ import annotations

import argparse
import json
import platform
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "constraints.txt"
EXTRAS = "test,bench"
# Packages outside the extras that the README's other commands install with these pins.
BY_HAND = {
    # benchmarks/requirements-youtokentome.txt: an sdist that builds only without isolation
    "youtokentome": "1.0.6",
    "cython": "0.29.37",
}


def resolve() -> dict[str, str]:
    with tempfile.TemporaryDirectory() as tmp:
        report = Path(tmp) / "report.json"
        cmd = [sys.executable, "-m", "pip", "install", "--dry-run", "--ignore-installed", "--quiet",
               "--report", str(report), f"{ROOT}[{EXTRAS}]"]
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode != 0:
            sys.exit(f"pip could not resolve the extras {EXTRAS}:\n{r.stderr[-3000:]}")
        data = json.loads(report.read_text(encoding="utf-8"))
    pins = {}
    for item in data["install"]:
        meta = item["metadata"]
        name = meta["name"].lower().replace("_", "-")
        if name != "subwords":
            pins[name] = meta["version"]
    return pins


def render(pins: dict[str, str]) -> str:
    lines = [
        "# Exact versions of everything the test and bench extras install (transitive included).",
        "# Used by the README's install command: pip install -c constraints.txt -e \".[test]\"",
        f"# Resolved for CPython {platform.python_version()} on {platform.machine()} {platform.system()}.",
        "# Refresh: python scripts/refresh_constraints.py (then run the whole suite).",
    ]
    lines += [f"{n}=={v}" for n, v in sorted(pins.items())]
    lines += ["# by hand (see scripts/refresh_constraints.py BY_HAND)"]
    lines += [f"{n}=={v}" for n, v in sorted(BY_HAND.items()) if n not in pins]
    return "\n".join(lines) + "\n"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--check", action="store_true", help="only report whether the pins are current")
    args = ap.parse_args()
    text = render(resolve())
    old = OUT.read_text(encoding="utf-8") if OUT.exists() else ""
    body = lambda s: [l for l in s.splitlines() if not l.startswith("#")]  # noqa: E731
    if args.check:
        changed = body(old) != body(text)
        print("constraints.txt would change" if changed else "constraints.txt is current")
        sys.exit(1 if changed else 0)
    tmp = OUT.with_suffix(".tmp")
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(OUT)
    print(f"wrote {OUT.name}: {len(body(text))} pins")


if __name__ == "__main__":
    main()
