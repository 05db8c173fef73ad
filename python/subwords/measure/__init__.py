"""Measure every choice: training traces, tie branches, greedy against optimal, size curves,
matched comparisons and metrics for any tokenizer (docs/MEASURE.md).

Every function returns plain dataclasses (``to_dict()`` gives JSON-ready dicts); the CLI verbs
``subwords trace``, ``subwords curve`` and ``subwords compare`` print the same objects.
"""

from __future__ import annotations

from .compare import COMPARISONS, MatchedPoint, compare_models, matched
from .curve import CurvePoint, curve, models_at, parse_sizes
from .metrics import LanguageMetrics, Metrics, metrics, renyi_efficiency
from .trace import (Branch, EmStep, GreedyGap, MergeStep, MergeTrace, UnigramRound, UnigramTrace, greedy_vs_optimal,
                    tie_branches, trace)

__all__ = [
    "COMPARISONS", "Branch", "CurvePoint", "EmStep", "GreedyGap", "LanguageMetrics", "MatchedPoint", "MergeStep",
    "MergeTrace", "Metrics", "UnigramRound", "UnigramTrace", "compare_models", "curve", "greedy_vs_optimal",
    "matched", "metrics", "models_at", "parse_sizes", "renyi_efficiency", "tie_branches", "trace",
]
