"""Diagnostics of a scored run: why episodes fail, where, and what a path budget allows.

- :func:`score_run`: score a predictions file as ``vlneval score`` does, keeping the executed
  trajectories and the graphs (for plots and shortest distances).
- :func:`diagnose`: bootstrap intervals of every metric, the outcome class of every episode
  (:mod:`~vlneval.diagnostics.failures` defines them), budgeted success
  (:mod:`~vlneval.diagnostics.budget`), and metric means by scan, reference length and
  instruction length.
- :func:`graph_floors`: the floors of a building from its navigation graph.

Example:
    >>> from vlneval.evaluation import Scorer
    >>> from vlneval.tasks.common.root import demo_root
    >>> from vlneval.diagnostics import diagnose, score_run
    >>> run = score_run(Scorer("demo"), demo_root() / "demo" / "predictions_val.json")
    >>> d = diagnose(run, n_resamples=200, rng=0)
    >>> [row["name"] for row in d.to_dict()["failures"]["classes"]][:2]
    ['success', 'passed_goal']
"""

from __future__ import annotations

from vlneval.diagnostics.breakdowns import GroupRow, breakdown, quantile_bins
from vlneval.diagnostics.budget import (
    DEFAULT_BUDGETS,
    budgeted_success,
    length_ratio,
    within_budget,
)
from vlneval.diagnostics.context import (
    EpisodeContext,
    episode_context,
    path_groups,
    shortest_distances,
)
from vlneval.diagnostics.diagnose import Diagnostics, diagnose, metric_columns
from vlneval.diagnostics.failures import (
    CLASS_LABELS,
    FAILURE_CLASSES,
    FailureBreakdown,
    classify_outcomes,
    failure_breakdown,
    step_limit_from_card,
)
from vlneval.diagnostics.floors import Floors, cluster_floors, graph_floors
from vlneval.diagnostics.intervals import column_intervals, resampling_text, resampling_unit
from vlneval.diagnostics.scored import ScoredRun, run_label, score_run
from vlneval.diagnostics.selection import sample_episodes, worst_episodes

__all__ = [
    "CLASS_LABELS",
    "DEFAULT_BUDGETS",
    "Diagnostics",
    "EpisodeContext",
    "FAILURE_CLASSES",
    "FailureBreakdown",
    "Floors",
    "GroupRow",
    "ScoredRun",
    "breakdown",
    "budgeted_success",
    "classify_outcomes",
    "cluster_floors",
    "column_intervals",
    "diagnose",
    "episode_context",
    "failure_breakdown",
    "graph_floors",
    "length_ratio",
    "metric_columns",
    "path_groups",
    "quantile_bins",
    "resampling_text",
    "resampling_unit",
    "run_label",
    "sample_episodes",
    "score_run",
    "shortest_distances",
    "step_limit_from_card",
    "within_budget",
    "worst_episodes",
]
