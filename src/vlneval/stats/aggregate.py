"""Aggregation of several runs (seeds) of the same setting.

For one metric with per-run scores ``x_1..x_r``: mean ``x̄``, sample standard deviation
``s`` (``ddof=1``), min, max, and the Student-t interval of the mean across runs,
``x̄ ± t_{(1+c)/2, r−1} · s / √r``. The interval describes run-to-run (seed) variation only,
not the episode sampling of each run: use :mod:`vlneval.stats.bootstrap` for that. scipy is
imported only to compute the t quantile.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np
from numpy.typing import ArrayLike

from ._checks import NAN_POLICIES, FloatArray, check_choice, check_confidence, fail
from .results import RunSummary

__all__ = ["aggregate_runs", "aggregate_scores"]


def aggregate_scores(
    scores: ArrayLike, *, metric: str = "values", confidence: float = 0.95
) -> RunSummary:
    """Summarises one metric over runs, from one score per run.

    Args:
        scores: one finite score per run (e.g. the SR of each seed), shape ``(R,)``.
        metric: the metric's name, stored in the result and used in error messages.
        confidence: nominal coverage of the t interval, in (0, 1).

    Returns:
        The :class:`RunSummary`; ``std`` and the interval are None when ``R == 1``.

    Raises:
        InvalidInputError: empty or non-1-D ``scores``, a non-finite score, or a bad
            ``confidence``.

    Example:
        >>> s = aggregate_scores([0.5, 0.75, 0.25], metric="SR")
        >>> s.mean, s.std, s.min, s.max
        (0.5, 0.25, 0.25, 0.75)
        >>> round(s.ci_low, 4), round(s.ci_high, 4)  # 0.5 ± t(0.975, 2) · 0.25 / √3
        (-0.121, 1.121)
    """
    where = "aggregate_scores"
    level = check_confidence(where, confidence)
    try:
        values = np.asarray(scores, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise fail(where, f"scores of metric {metric!r} must be numbers ({exc})") from None
    if values.ndim != 1 or values.size == 0:
        raise fail(
            where,
            f"scores of metric {metric!r} must be a non-empty 1-D array with one score per run; "
            f"got shape {values.shape}",
        )
    bad = np.flatnonzero(~np.isfinite(values))
    if bad.size:
        raise fail(
            where,
            f"metric {metric!r} has a non-finite score ({float(values[bad[0]])}) "
            f"for run {int(bad[0])}",
        )
    return _summarise(metric, values, level)


def aggregate_runs(
    runs: Sequence[Mapping[str, ArrayLike]],
    *,
    confidence: float = 0.95,
    nan_policy: str = "raise",
) -> dict[str, RunSummary]:
    """Summarises every metric over several runs of the same setting.

    Each run maps metric name -> either its score (a number) or its per-episode values (a
    1-D array, reduced to its mean). Runs may have scored different numbers of episodes.

    Args:
        runs: one mapping per run (seed); all with the same metric names.
        confidence: nominal coverage of the t intervals, in (0, 1).
        nan_policy: for per-episode arrays, ``"raise"`` refuses NaN and inf and ``"omit"``
            averages the finite values. A non-finite score (number) is always refused.

    Returns:
        metric name -> :class:`RunSummary`, in the order of the first run.

    Raises:
        InvalidInputError: no runs, a run that is not a mapping, runs with different metric
            names, an empty or non-1-D value, or a non-finite value that is not omitted.

    Example:
        >>> runs = [
        ...     {"SR": [1.0, 0.0, 1.0, 1.0], "NE": 2.5},
        ...     {"SR": [1.0, 0.0, 0.0, 1.0], "NE": 3.5},
        ... ]
        >>> summary = aggregate_runs(runs)
        >>> summary["SR"].mean, summary["SR"].min, summary["NE"].std
        (0.625, 0.5, 0.7071067811865476)
        >>> summary["NE"].to_dict()["n_runs"]
        2
    """
    where = "aggregate_runs"
    level = check_confidence(where, confidence)
    check_choice(where, "nan_policy", nan_policy, NAN_POLICIES)
    if isinstance(runs, (Mapping, str)) or not isinstance(runs, Sequence) or len(runs) == 0:
        raise fail(
            where,
            "runs must be a non-empty sequence (list) with one mapping metric -> score or "
            "per-episode values per run",
        )
    for i, run in enumerate(runs):
        if not isinstance(run, Mapping) or len(run) == 0:
            raise fail(where, f"run {i} must be a non-empty mapping; got {type(run).__name__}")
    names = list(runs[0])
    for i, run in enumerate(runs[1:], start=1):
        missing = [name for name in names if name not in run]
        extra = [name for name in run if name not in runs[0]]
        if missing or extra:
            raise fail(
                where,
                f"run {i} does not have the metrics of run 0: missing {missing}, extra {extra}",
            )
    return {
        name: _summarise(
            name,
            np.array(
                [_run_score(where, i, name, run[name], nan_policy) for i, run in enumerate(runs)]
            ),
            level,
        )
        for name in names
    }


def _run_score(where: str, run: int, name: str, value: ArrayLike, nan_policy: str) -> float:
    try:
        values = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise fail(where, f"metric {name!r} of run {run} must be numbers ({exc})") from None
    if values.ndim == 0:
        if not np.isfinite(values):
            raise fail(
                where, f"metric {name!r} of run {run} has a non-finite score ({float(values)})"
            )
        return float(values)
    if values.ndim != 1 or values.size == 0:
        raise fail(
            where,
            f"metric {name!r} of run {run} must be a number or a non-empty 1-D array of "
            f"per-episode values; got shape {values.shape}",
        )
    finite = np.isfinite(values)
    if not finite.all():
        if nan_policy == "raise":
            raise fail(
                where,
                f"metric {name!r} of run {run} has {int((~finite).sum())} non-finite value(s) "
                f"(NaN or inf), first at episode index {int(np.flatnonzero(~finite)[0])}; clean "
                "the input or pass nan_policy='omit'",
            )
        if not finite.any():
            raise fail(where, f"metric {name!r} of run {run} has no finite value")
        values = values[finite]
    return float(np.mean(values))


def _summarise(name: str, scores: FloatArray, level: float) -> RunSummary:
    n = int(scores.shape[0])
    mean = float(np.mean(scores))
    std = low = high = None
    if n > 1:
        from scipy.stats import t

        std = float(np.std(scores, ddof=1))
        half = float(t.ppf(0.5 + level / 2.0, df=n - 1)) * std / math.sqrt(n)
        low, high = mean - half, mean + half
    return RunSummary(
        metric=str(name),
        mean=mean,
        std=std,
        min=float(np.min(scores)),
        max=float(np.max(scores)),
        ci_low=low,
        ci_high=high,
        confidence=level,
        n_runs=n,
    )
