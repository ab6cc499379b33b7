"""95 % bootstrap intervals of a result's metrics, computed at scoring time and kept as bounds.

The per-episode rows are resampled (:func:`vlneval.diagnostics.column_intervals`, built on
:func:`vlneval.stats.bootstrap_table`: the same resamples for every metric, a fixed seed so that
rescoring gives the same bounds), whole paths at a time when episodes share one (R2R's three
instructions of a path, :func:`vlneval.diagnostics.path_groups`), and only each metric's ``[low, high]`` is stored: the rows
themselves never leave the worker. A metric whose value is not the mean of its per-episode
column (or that has no column) gets no interval.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from vlneval.diagnostics.context import path_groups
from vlneval.diagnostics.intervals import column_intervals
from vlneval.metrics import LABELS

__all__ = ["metric_intervals", "N_RESAMPLES", "SEED", "CONFIDENCE"]

N_RESAMPLES = 1000
SEED = 0
CONFIDENCE = 0.95


def metric_intervals(result: Any) -> dict[str, list[float]]:
    """label -> ``[low, high]`` for every metric of ``result`` (a :class:`vlneval.Result`) that
    is the mean of a per-episode column.

    Example:
        >>> from vlneval.tasks.common.root import demo_root
        >>> from vlneval.evaluation import evaluate
        >>> res = evaluate("demo", "val", demo_root() / "demo" / "predictions_val.json")
        >>> ci = metric_intervals(res)
        >>> ci["SR"][0] <= res.metrics["SR"] <= ci["SR"][1]
        True
    """
    per = result.per_episode
    columns: dict[str, np.ndarray] = {}
    for label, value in result.metrics.items():
        column = LABELS[label].column if label in LABELS else label
        if isinstance(value, (int, float)) and math.isfinite(value) and column in per:
            columns[label] = np.asarray(per[column], dtype=np.float64)
    if not columns or result.n_episodes == 0:
        return {}
    paths = path_groups(result)
    table = column_intervals(
        columns,
        rng=np.random.default_rng(SEED),
        n_resamples=N_RESAMPLES,
        confidence=CONFIDENCE,
        groups=paths,
        two_stage=paths is None,
        rates=[label for label in columns if label in LABELS and LABELS[label].kind == "rate"],
    )
    out = {}
    for label, ci in table.items():
        value = float(result.metrics[label])
        if ci is not None and math.isclose(ci.estimate, value, rel_tol=1e-9, abs_tol=1e-12):
            out[label] = [float(ci.low), float(ci.high)]
    return out
