"""Percentile bootstrap confidence intervals for per-episode metrics.

The interval of a statistic ``T`` (the mean unless told otherwise) at confidence ``c`` is
``[q(α/2), q(1 − α/2)]``, ``α = 1 − c``, where ``q`` are the quantiles (numpy's default linear
interpolation) of ``T`` over ``n_resamples`` bootstrap resamples (Efron and Tibshirani 1993,
ch. 13). Episodes are resampled with replacement; with ``groups`` (e.g. the scan of each
episode) the two-stage cluster bootstrap is used instead (Davison and Hinkley 1997, §3.8):
groups are resampled with replacement, then episodes within every drawn group. With
``two_stage=False`` whole groups are resampled (e.g. the R2R path shared by three
instructions) and the statistic, the mean, stays the mean over the drawn episodes.

Randomness comes only from the ``rng`` argument (a ``numpy.random.Generator`` or an int seed).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from ._checks import (
    NAN_POLICIES,
    RngLike,
    as_generator,
    check_callable,
    check_choice,
    check_confidence,
    check_count,
    fail,
    prepare_columns,
)
from ._resample import bootstrap_distribution, percentile_bounds
from .results import Interval

__all__ = ["bootstrap_ci", "bootstrap_table"]


def bootstrap_ci(
    values: ArrayLike,
    *,
    rng: RngLike,
    n_resamples: int = 2000,
    confidence: float = 0.95,
    statistic: Callable[..., Any] = np.mean,
    groups: ArrayLike | None = None,
    nan_policy: str = "raise",
    metric: str = "values",
    two_stage: bool = True,
) -> Interval:
    """Percentile bootstrap confidence interval of one per-episode metric.

    Args:
        values: one value per episode, shape ``(N,)``.
        rng: a ``numpy.random.Generator``, or an int seed for a fresh one.
        n_resamples: number of bootstrap resamples (>= 1).
        confidence: nominal coverage in (0, 1).
        statistic: reduces a 1-D array to a number. A statistic that accepts ``axis`` (like
            ``np.mean``, ``np.median``) is applied to all resamples at once; others row by row.
        groups: optional label per episode (e.g. scan id) for the two-stage cluster bootstrap.
        nan_policy: ``"raise"`` refuses NaN and inf; ``"omit"`` drops those episodes.
        metric: name used in error messages.
        two_stage: with ``groups``, resample groups then episodes in them (True), or whole
            groups (False; the statistic must be ``np.mean``).

    Returns:
        The estimate on all (kept) episodes and its interval.

    Raises:
        InvalidInputError: a bad option, an empty or non-1-D array, a length mismatch with
            ``groups``, or a non-finite value with ``nan_policy="raise"``.

    Example:
        >>> sr = np.array([1, 0, 1, 1, 0, 1, 1, 0, 1, 1], dtype=float)
        >>> ci = bootstrap_ci(sr, rng=0, n_resamples=1000)
        >>> ci.estimate, ci.low <= ci.estimate <= ci.high, ci.method
        (0.7, True, 'bootstrap-percentile')
        >>> bootstrap_ci(np.full(5, 0.5), rng=0).to_dict()["high"]  # constant: zero width
        0.5
        >>> bootstrap_ci(sr, rng=0, groups=[0, 0, 1, 1, 2, 2, 3, 3, 4, 4], two_stage=False).method
        'bootstrap-percentile-cluster'
    """
    return _bootstrap(
        "bootstrap_ci",
        {metric: values},
        rng=rng,
        n_resamples=n_resamples,
        confidence=confidence,
        statistic=statistic,
        groups=groups,
        nan_policy=nan_policy,
        two_stage=two_stage,
    )[metric]


def bootstrap_table(
    metrics: Mapping[str, ArrayLike],
    *,
    rng: RngLike,
    n_resamples: int = 2000,
    confidence: float = 0.95,
    statistic: Callable[..., Any] = np.mean,
    groups: ArrayLike | None = None,
    nan_policy: str = "raise",
    two_stage: bool = True,
) -> dict[str, Interval]:
    """Percentile bootstrap intervals of several metrics measured on the same episodes.

    Every metric is evaluated on the SAME resamples, so their paired structure is kept (e.g.
    ``SPL <= SR`` holds on every resample). A metric in a table gets exactly the interval that
    :func:`bootstrap_ci` gives it alone with the same seed. With ``nan_policy="omit"`` an episode
    that is non-finite in any metric is dropped from all of them, so that every interval
    describes the same episodes.

    Args:
        metrics: metric name -> one value per episode; all of the same length.
        rng, n_resamples, confidence, statistic, groups, nan_policy, two_stage: as in
            :func:`bootstrap_ci`.

    Returns:
        metric name -> :class:`Interval`, in the order of ``metrics``.

    Raises:
        InvalidInputError: as :func:`bootstrap_ci`; also for an empty mapping or metrics of
            different lengths.

    Example:
        >>> table = bootstrap_table(
        ...     {"SR": [1.0, 1.0, 0.0, 1.0], "SPL": [0.5, 1.0, 0.0, 0.5]},
        ...     rng=np.random.default_rng(7),
        ...     groups=["scanA", "scanA", "scanB", "scanB"],
        ... )
        >>> [(name, round(ci.estimate, 3)) for name, ci in table.items()]
        [('SR', 0.75), ('SPL', 0.5)]
        >>> table["SR"].method
        'bootstrap-percentile-two-stage'
    """
    return _bootstrap(
        "bootstrap_table",
        metrics,
        rng=rng,
        n_resamples=n_resamples,
        confidence=confidence,
        statistic=statistic,
        groups=groups,
        nan_policy=nan_policy,
        two_stage=two_stage,
    )


def _bootstrap(
    where: str,
    metrics: Mapping[str, ArrayLike],
    *,
    rng: RngLike,
    n_resamples: int,
    confidence: float,
    statistic: Callable[..., Any],
    groups: ArrayLike | None,
    nan_policy: str,
    two_stage: bool,
) -> dict[str, Interval]:
    generator = as_generator(rng, where)
    n_resamples = check_count(where, "n_resamples", n_resamples, minimum=1)
    level = check_confidence(where, confidence)
    check_callable(where, "statistic", statistic)
    check_choice(where, "nan_policy", nan_policy, NAN_POLICIES)
    if not isinstance(metrics, Mapping) or len(metrics) == 0:
        raise fail(where, "metrics must be a non-empty mapping of name -> per-episode values")
    names = list(metrics)
    prepared = prepare_columns(
        where,
        [f"metric {name!r}" for name in names],
        list(metrics.values()),
        nan_policy=nan_policy,
        groups=groups,
        first_seen=not two_stage,
    )
    estimates = [
        _estimate(where, name, statistic, row)
        for name, row in zip(names, prepared.data, strict=True)
    ]
    resampled = bootstrap_distribution(
        prepared.data,
        rng=generator,
        n_resamples=n_resamples,
        statistic=statistic,
        codes=prepared.codes,
        n_groups=prepared.n_groups,
        where=where,
        two_stage=two_stage,
    )
    for name, row in zip(names, resampled, strict=True):
        if not np.isfinite(row).all():
            raise fail(where, f"statistic gave a non-finite value on a resample of metric {name!r}")
    bounds = percentile_bounds(
        resampled,
        np.asarray(estimates),
        n=prepared.data.shape[1],
        scale=np.abs(prepared.data).max(axis=1),
        confidence=level,
    )
    method = "bootstrap-percentile"
    if prepared.codes is not None:
        method += "-two-stage" if two_stage else "-cluster"
    n = prepared.data.shape[1]
    return {
        name: Interval(
            estimate=estimate,
            low=float(bounds[0, j]),
            high=float(bounds[1, j]),
            confidence=level,
            n_resamples=n_resamples,
            method=method,
            n=n,
            n_units=n if prepared.codes is None else prepared.n_groups,
        )
        for j, (name, estimate) in enumerate(zip(names, estimates, strict=True))
    }


def _estimate(where: str, name: str, statistic: Callable[..., Any], values: np.ndarray) -> float:
    result = np.asarray(statistic(values), dtype=np.float64)
    if result.size != 1:
        raise fail(
            where, f"statistic must reduce one array to one number; got shape {result.shape}"
        )
    estimate = float(result.reshape(()))
    if not np.isfinite(estimate):
        raise fail(where, f"statistic gave a non-finite estimate ({estimate}) for metric {name!r}")
    return estimate
