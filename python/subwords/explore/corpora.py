"""The explorer's built-in corpora: the ones the pages print in full, and stand-ins for the ones
they do not.

Printed in full by the pages (their numbers are exact here): the four words, report/taste/state,
undo/untie/redo/retie, ``ab``, ``café`` and the running sentence. The eighteen sentences are not
printed, so widgets that need "a larger corpus" read, in this order: a corpus given on the command
line or uploaded in the page, else a stand-in built from text every Python install carries (the
docstrings of a fixed list of standard-library modules, the way ``subwords quickstart`` and the
benchmarks build corpora from installed packages). Nothing third-party is committed. Its numbers
depend on the Python version and are not the page's; the widgets say so in their captions.

The five Chinese lines of the SentencePiece page are not printed either; the stand-in below is
written for this project out of the seven words the page names (research 研究, life 生命, origin
起源, student 学生, very 很, many 多, good 好), with the same property the page relies on: the
words recur across lines with nothing between them.
"""

from __future__ import annotations

import importlib
import inspect
import re
from functools import lru_cache

# BPE page: "The word low occurs five times, lower twice, newest six times and widest three."
FOUR = {"low": 5, "lower": 2, "newest": 6, "widest": 3}
# BPE page: "Take three words, report twice, taste eight times and state ten times".
RTS = {"report": 2, "taste": 8, "state": 10}
# BPE page: "Take a corpus of undo, untie, redo and retie, ten times each."
UNDO = {"undo": 10, "untie": 10, "redo": 10, "retie": 10}
JOINTS = {"undo": ["un", "do"], "untie": ["un", "tie"], "redo": ["re", "do"], "retie": ["re", "tie"]}
# Unigram page: "One word ab, seen once".
AB = {"ab": 1}
SENTENCE = "Dr. Alvarez didn't expect the low-cost re-analysis."
CAFE = "café"
# A text in a script the English corpora never hold (our own Greek sentence; the BPE page's is not
# printed): "the small dog is sleeping under the table".
GREEK = "Ο μικρός σκύλος κοιμάται κάτω από το τραπέζι."
# The "accented sentence" of the BPE page's byte comparison (not printed): our own.
ACCENTED = "Le café de la gare a été fermé."
# The seven words of the SentencePiece page, run together: student, research, life, origin.
CJK_HELD_OUT = "学生研究生命起源"
CJK_LINES = [
    "学生很好",
    "研究生命起源",
    "很多学生研究生命",
    "生命起源很好",
    "学生研究很多",
]
# A stand-in for the eighteen sentences' alphabet property the BPE page relies on (z occurs inside
# a word, no word ends in z): the same corpus tests/pages uses.
STAND_IN = {"Dr.": 2, "Alvares": 2, "didn't": 2, "size": 2, "expected": 2, "the": 2, "lower": 2,
            "cost": 2, "analysis.": 2, "re-run": 2}

# Modules whose docstrings make the stand-in corpus: English prose present in every CPython.
_MODULES = ("textwrap", "json", "csv", "argparse", "collections", "difflib", "heapq", "bisect",
            "shlex", "string", "fractions", "statistics", "calendar", "random", "glob", "fnmatch")
_LIMIT = 6000  # words: enough for curves to bend, small enough for every control to answer fast


@lru_cache(maxsize=1)
def docstring_sentences() -> tuple[str, ...]:
    """Sentences from standard-library docstrings, deterministic for a given Python."""
    out: list[str] = []
    words = 0
    for name in _MODULES:
        try:
            module = importlib.import_module(name)
        except ImportError:  # a trimmed Python: the corpus is just smaller
            continue
        docs = [inspect.getdoc(module) or ""]
        for attr in sorted(vars(module)):
            if attr.startswith("_"):
                continue
            obj = getattr(module, attr)
            if (inspect.isfunction(obj) or inspect.isclass(obj)) and getattr(obj, "__module__", "") == name:
                docs.append(inspect.getdoc(obj) or "")
        for doc in docs:
            for para in re.split(r"\n\s*\n", doc):
                line = " ".join(para.split())
                # prose only: no doctest lines, no tables of symbols
                if not line or ">>>" in line or sum(c.isalpha() for c in line) < 0.7 * len(line):
                    continue
                for sentence in re.split(r"(?<=[.!?])\s+", line):
                    n = len(sentence.split())
                    if 4 <= n <= 40:
                        out.append(sentence)
                        words += n
                        if words >= _LIMIT:
                            return tuple(out)
    return tuple(out)


DOCSTRINGS = "docstrings"
BUILT_IN_LARGE = {DOCSTRINGS: "standard-library docstrings (a stand-in for the eighteen sentences)"}
