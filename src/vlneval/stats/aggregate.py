"""Aggregation of several runs (seeds) of the same setting.

For one metric with per-run scores ``x_1..x_r``: mean ``x̄``, sample standard deviation
``s`` (``ddof=1``), min, max, and the Student-t interval of the mean across runs,
``x̄ ± t_{(1+c)/2, r−1} · s / √r``. The interval describes run-to-run (seed) variation only,
not the episode sampling of each run: use :mod:`vlneval.stats.bootstrap` for that. scipy is
imported only to compute the t quantile.

A bounded metric (a rate in [0, 1], a distance ≥ 0) has its interval clipped to its range,
and the result says so (``clipped_to``). Over few seeds the t interval of a rate easily
reaches below 0 (SR 2%, 10%, 30% over 3 seeds: [-21.83, 49.83] %), which no rate can be. Why
clipping and not another interval:

* Clipping keeps the t interval's coverage exactly: the true mean lies in the range, so it
  lies in the clipped interval whenever it lies in the t interval. A clipped end also tells
  the reader that the seeds were too few or too spread to locate the mean on that side.
* Wilson or Clopper-Pearson intervals are for one binomial count (successes of n episodes);
  the spread over seeds is not binomial (the same episodes, another training run), so they
  would answer another question, episode sampling, which the bootstrap already answers.
* A percentile bootstrap over 3-5 seeds cannot reach past the smallest and largest score and
  covers far less than its nominal level; a t interval on the logit scale is undefined when a
  seed scores exactly 0 or 1, which happens (SR 0 of a broken checkpoint).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from ._checks import NAN_POLICIES, FloatArray, check_choice, check_confidence, fail
from .results import RunSummary

__all__ = ["aggregate_runs", "aggregate_scores"]


def aggregate_scores(
    scores: ArrayLike,
    *,
    metric: str = "values",
    confidence: float = 0.95,
    bounds: tuple[float, float] | None = None,
) -> RunSummary:
    """Summarises one metric over runs, from one score per run.

    Args:
        scores: one finite score per run (e.g. the SR of each seed), shape ``(R,)``.
        metric: the metric's name, stored in the result and used in error messages.
        confidence: nominal coverage of the t interval, in (0, 1).
        bounds: the metric's range ``(low, high)``: the interval is clipped to it (see the
            module's note); None: unbounded.

    Returns:
        The :class:`RunSummary`; ``std`` and the interval are None when ``R == 1``.

    Raises:
        InvalidInputError: empty or non-1-D ``scores``, a non-finite score, a bad
            ``confidence``, bad ``bounds`` or a score outside them.

    Example:
        >>> s = aggregate_scores([0.5, 0.75, 0.25], metric="SR")
        >>> s.mean, s.std, s.min, s.max
        (0.5, 0.25, 0.25, 0.75)
        >>> round(s.ci_low, 4), round(s.ci_high, 4)  # 0.5 ± t(0.975, 2) · 0.25 / √3
        (-0.121, 1.121)
        >>> s = aggregate_scores([0.5, 0.75, 0.25], metric="SR", bounds=(0.0, 1.0))
        >>> s.ci_low, s.ci_high, s.clipped_to
        (0.0, 1.0, '[0, 1]')
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
    return _summarise(metric, values, level, _check_bounds(where, metric, values, bounds))


def aggregate_runs(
    runs: Sequence[Mapping[str, ArrayLike]],
    *,
    confidence: float = 0.95,
    nan_policy: str = "raise",
    bounds: Mapping[str, tuple[float, float]] | None = None,
) -> dict[str, RunSummary]:
    """Summarises every metric over several runs of the same setting.

    Each run maps metric name -> either its score (a number) or its per-episode values (a
    1-D array, reduced to its mean). Runs may have scored different numbers of episodes.

    Args:
        runs: one mapping per run (seed); all with the same metric names.
        confidence: nominal coverage of the t intervals, in (0, 1).
        nan_policy: for per-episode arrays, ``"raise"`` refuses NaN and inf and ``"omit"``
            averages the finite values. A non-finite score (number) is always refused.
        bounds: metric name -> its range; the metric's interval is clipped to it (see
            :func:`aggregate_scores`). Metrics not named are unbounded.

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
    out = {}
    for name in names:
        scores = [_run_score(where, i, name, run[name], nan_policy) for i, run in enumerate(runs)]
        values = np.array(scores)
        given = (bounds or {}).get(name)
        out[name] = _summarise(name, values, level, _check_bounds(where, name, values, given))
    return out


def _check_bounds(
    where: str, name: str, scores: FloatArray, bounds: tuple[float, float] | None
) -> tuple[float, float] | None:
    """``bounds`` as floats, once checked: ``low < high`` and every score inside."""
    if bounds is None:
        return None
    try:
        low, high = (float(b) for b in bounds)
    except (TypeError, ValueError):
        raise fail(where, f"bounds of metric {name!r} must be two numbers (low, high)") from None
    if not low < high:
        raise fail(where, f"bounds of metric {name!r} must have low < high; got {bounds!r}")
    outside = np.flatnonzero((scores < low) | (scores > high))
    if outside.size:
        k = int(outside[0])
        raise fail(
            where,
            f"metric {name!r} of run {k} is {float(scores[k])}, outside its range "
            f"[{low:g}, {high:g}]",
        )
    return low, high


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


def _summarise(
    name: str, scores: FloatArray, level: float, bounds: tuple[float, float] | None = None
) -> RunSummary:
    n = int(scores.shape[0])
    same = bool((scores == scores[0]).all())
    # Identical runs: their value, std 0 (np.mean and np.std round to 1e-17 off them).
    mean = float(scores[0]) if same else _no_overflow(np.mean, scores)
    std = low = high = None
    clipped = None
    if n > 1:
        from scipy.stats import t  # deferred: scipy

        std = 0.0 if same else _no_overflow(lambda x: np.std(x, ddof=1), scores)
        half = float(t.ppf(0.5 + level / 2.0, df=n - 1)) * std / math.sqrt(n)
        low, high = mean - half, mean + half
        if bounds is not None and (low < bounds[0] or high > bounds[1]):
            low, high = max(low, bounds[0]), min(high, bounds[1])
            clipped = f"[{bounds[0]:g}, {bounds[1]:g}]"
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
        clipped_to=clipped,
    )


def _no_overflow(stat: Callable[[FloatArray], Any], scores: FloatArray) -> float:
    """``stat`` of finite ``scores`` (a mean or a std: linear in the scale); when its sums pass
    the largest float (TL = 1e308 in two runs), taken again on the scores divided by the
    largest magnitude, so that it is finite. Other scores take the plain path, bit for bit.

    Example:
        >>> _no_overflow(np.mean, np.array([1e308, 1e308]))
        1e+308
    """
    with np.errstate(over="ignore", invalid="ignore"):
        value = float(stat(scores))
        if math.isfinite(value):
            return value
        scale = float(np.max(np.abs(scores)))
        return scale * float(stat(scores / scale))
