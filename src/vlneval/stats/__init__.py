"""Uncertainty for per-episode metrics: bootstrap intervals, paired comparisons, seed summaries.

Every function takes per-episode arrays (float64, shape ``(N,)``, one per metric) and, when it
is random, an explicit ``rng`` (a ``numpy.random.Generator`` or an int seed); the global numpy
RNG is never used. Results are small frozen dataclasses with ``to_dict()`` for JSON.
Importing this package does not import scipy.

Example:
    >>> import numpy as np
    >>> from vlneval.stats import bootstrap_ci, paired_difference
    >>> ci = bootstrap_ci(np.array([1.0, 0.0, 1.0, 1.0]), rng=0)
    >>> ci.estimate
    0.75
    >>> paired_difference([1.0, 0.0], [1.0, 0.0], rng=0).p_value
    1.0
"""

from __future__ import annotations

from .aggregate import aggregate_runs, aggregate_scores
from .bootstrap import bootstrap_ci, bootstrap_table
from .paired import compare_runs, holm_adjust, paired_difference
from .results import Comparison, Interval, RunSummary

__all__ = [
    "Comparison",
    "Interval",
    "RunSummary",
    "aggregate_runs",
    "aggregate_scores",
    "bootstrap_ci",
    "bootstrap_table",
    "compare_runs",
    "holm_adjust",
    "paired_difference",
]
