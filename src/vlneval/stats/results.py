"""Result records of the statistics functions: small frozen dataclasses with ``to_dict()``.

``to_dict()`` returns plain Python ``float``/``int``/``str``/``None`` values only, so that any
JSON writer (``json``, ``orjson``) serialises it without numpy support.
"""

from __future__ import annotations

from dataclasses import dataclass, fields

import numpy as np

__all__ = ["Comparison", "Interval", "JSONScalar", "RunSummary"]

JSONScalar = float | int | str | None


def _plain(value: object) -> JSONScalar:
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, (bool, np.bool_)):
        raise TypeError("result fields are never booleans")
    if isinstance(value, (int, np.integer)):
        return int(value)
    return float(value)  # type: ignore[arg-type]


class _Record:
    def to_dict(self) -> dict[str, JSONScalar]:
        """The fields as a ``{name: plain value}`` dict, in declaration order."""
        return {f.name: _plain(getattr(self, f.name)) for f in fields(self)}  # type: ignore[arg-type]


@dataclass(frozen=True)
class Interval(_Record):
    """A point estimate with a bootstrap confidence interval.

    Attributes:
        estimate: the statistic on the (kept) episodes.
        low: lower end of the interval.
        high: upper end of the interval.
        confidence: nominal coverage, e.g. 0.95.
        n_resamples: number of bootstrap resamples.
        method: ``"bootstrap-percentile"``, ``"bootstrap-percentile-two-stage"`` (groups, then
            episodes) or ``"bootstrap-percentile-cluster"`` (whole groups).
        n: number of episodes used (after ``nan_policy="omit"``).
        n_units: number of independent units the bounds rest on: the groups resampled (paths,
            or scans in the two-stage bootstrap), else ``n``; a Clopper-Pearson interval is
            over them (0 of ``n_units`` or ``n_units`` of ``n_units``). None where unknown.

    Example:
        >>> Interval(0.5, 0.25, 0.75, 0.95, 2000, "bootstrap-percentile", 40, 40).to_dict()["high"]
        0.75
    """

    estimate: float
    low: float
    high: float
    confidence: float
    n_resamples: int
    method: str
    n: int
    n_units: int | None = None


@dataclass(frozen=True)
class Comparison(_Record):
    """Paired comparison of two runs on the same episodes, for one metric.

    Attributes:
        metric: the metric's name.
        mean_a: mean of run a.
        mean_b: mean of run b.
        difference: ``mean_a - mean_b``.
        ci_low: lower end of the paired-bootstrap interval of the difference.
        ci_high: upper end of that interval.
        p_value: two-sided p-value of the test named by ``test`` (not adjusted).
        test: ``"mcnemar-exact"``, ``"sign-exact"``, ``"permutation-exact"``,
            ``"permutation-monte-carlo"``, ``"cluster-permutation-exact"`` or
            ``"cluster-permutation-monte-carlo"``.
        n: number of paired episodes used.
        confidence: nominal coverage of the interval.
        p_adjusted: the p-value after the correction across metrics, or None.
        correction: the correction applied (``"holm"``), or None.
    """

    metric: str
    mean_a: float
    mean_b: float
    difference: float
    ci_low: float
    ci_high: float
    p_value: float
    test: str
    n: int
    confidence: float
    p_adjusted: float | None = None
    correction: str | None = None


@dataclass(frozen=True)
class RunSummary(_Record):
    """One metric aggregated over several runs (seeds) of the same setting.

    ``std`` is the sample standard deviation (``ddof=1``); the interval is the Student-t
    interval of the mean over runs, clipped to the metric's range when given (see
    :func:`~vlneval.stats.aggregate_scores`). With a single run neither exists: they are None.

    Attributes:
        metric: the metric's name.
        mean: mean of the per-run scores.
        std: sample standard deviation of the per-run scores, or None for one run.
        min: smallest per-run score.
        max: largest per-run score.
        ci_low: lower end of the t interval of the mean, or None for one run.
        ci_high: upper end of the t interval of the mean, or None for one run.
        confidence: nominal coverage of the interval.
        n_runs: number of runs.
        clipped_to: the range (e.g. ``[0, 1]``) an end of the t interval was clipped to, or
            None when the interval lay inside it (or no range was given).
    """

    metric: str
    mean: float
    std: float | None
    min: float
    max: float
    ci_low: float | None
    ci_high: float | None
    confidence: float
    n_runs: int
    clipped_to: str | None = None
