"""The project's files describe the product as it is: no work-period, session or issue numbers in
code, comments, docs or tests (the story of how a choice was made belongs in commit messages)."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CITATION = re.compile(r"\b(session|issue)s? [0-9]+|work period", re.IGNORECASE)


def test_no_file_cites_a_session_or_an_issue_number():
    files = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True).stdout.split()
    hits = []
    for name in files:
        if name.endswith(".lock") or name == "tests/docs/test_no_history.py":  # this file spells the pattern
            continue
        try:
            text = (ROOT / name).read_text(encoding="utf-8")
        except (UnicodeDecodeError, FileNotFoundError, IsADirectoryError):
            continue
        hits += [f"{name}:{n}: {line.strip()[:100]}" for n, line in enumerate(text.splitlines(), 1)
                 if CITATION.search(line)]
    assert not hits, "history in the files (say what holds now):\n" + "\n".join(hits[:40])


def test_the_pattern_finds_a_citation():
    assert CITATION.search("a prefetch (issue 15: 32.0 -> 38.5 ms)")
    assert CITATION.search("Session 40 measured it")
    assert not CITATION.search("issue)s? [0-9]+ and the issues tracker")
