"""The explorer's built-in corpora: the ones the pages print in full, and stand-ins for the ones
they do not.

Printed in full by the pages (their numbers are exact here): the four words, report/taste/state,
undo/untie/redo/retie, ``ab``, ``café`` and the running sentence. The eighteen sentences are not
printed, so widgets that need "a larger corpus" read, in this order: a corpus given on the command
line or uploaded in the page, else eighteen sentences written for this project with the properties
the page states for its own (``EIGHTEEN``), or, as a larger choice, text every Python install
carries (the docstrings of a fixed list of standard-library modules, the way ``subwords
quickstart`` and the benchmarks build corpora from installed packages). Nothing third-party is
committed. Neither is the page's text, so only the page's numbers that follow from the stated
properties are reproduced; the widgets say which corpus they show in their captions.

The five Chinese lines of the SentencePiece page are not printed either; the stand-in below is
written for this project out of the seven words the page names (research 研究, life 生命, origin
起源, student 学生, very 很, many 多, good 好), with the same property the page relies on: the
words recur across lines with nothing between them. It was chosen among five-line sets of short
phrases of those words as the one that gives every number the page states for its lines (see
``CJK_LINES``).
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
# "the students are very good", "research the origin of life", "students research life", "the
# origins are many", "life research". Both schemes asked for 40 rows give the page's numbers: the
# end-marked one learns three merges, stops at 17 rows, reads the lines in 18 pieces and the new
# sentence in five, three of its rows a character held again with the line-end mark; the
# front-marked one learns six, reaches 18 rows, reads the lines in 15 and the new sentence in
# three, student, research and life together, origin.
CJK_LINES = [
    "学生很好",
    "研究生命起源",
    "学生研究生命",
    "起源很多",
    "生命研究",
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


# Eighteen sentences of our own with the properties the BPE page states for its corpus (which it
# does not print): ordinary English about reports, costs and analyses; 133 words, 72 distinct; 36
# characters, 51 symbols under end marks (648 of them in all); every character of the running
# sentence, z inside a word and never at its end; of the sentence's seven words only Dr. and the,
# with expected, lower, cost and analysis present. docs/EXPLORE.md lists the page's numbers it
# reproduces.
EIGHTEEN = (
    'Dr. Dean reviewed the quarterly report.',
    'The report was shorter; costs were lower.',
    'Another careful analysis of the costs took a week.',
    'The analysis was expected to show why costs rose.',
    'Our team rechecked the quarterly report twice.',
    'The lower estimate was right; nobody expected it.',
    'Costs rose in the north.',
    'The second analysis changed the size of the estimate.',
    'The board asked Dr. Dean to review the analysis again.',
    'The cost model was sound.',
    'The quarterly report lists the cost.',
    'The board expected a report with fewer tables.',
    'We reduced the cost of the follow-up.',
    'The analysis showed that travel was the largest cost.',
    'The board doubted the analysis, not the estimate.',
    'The shorter report saved a week.',
    'The final analysis reached the board.',
    "The lower costs mean the report can't wait.",
)

DOCSTRINGS = "docstrings"
OURS = "eighteen"
BUILT_IN_LARGE = {OURS: "eighteen sentences of our own with the page's stated properties",
                  DOCSTRINGS: "standard-library docstrings (about 6,000 words)"}
