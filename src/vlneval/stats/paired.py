"""Paired comparison of two runs (agents, checkpoints, settings) scored on the same episodes.

For every metric, with ``d_i = a_i − b_i`` the per-episode difference:

- the difference is ``mean(a) − mean(b)``; its interval is the paired percentile bootstrap of
  ``mean(d)`` (episodes, or groups then episodes, resampled jointly for a and b);
- the two-sided p-value comes from one of these tests:

  - ``"mcnemar"`` (0/1 outcomes such as SR): McNemar's exact test, the binomial test of the
    discordant pairs ``n10 = #{a=1, b=0}`` against ``n01 = #{a=0, b=1}`` with p = 1/2;
  - ``"sign"``: the exact sign test, the same binomial test on the signs of the non-zero
    ``d_i`` of any metric (on 0/1 data it is McNemar's exact test);
  - ``"permutation"``: the paired permutation (sign-flip) test of ``T = |Σ d_i|``: under the
    null hypothesis a and b are exchangeable within each episode, so every sign pattern
    ``s`` is as likely, and ``p = P(|Σ s_i d_i| >= |Σ d_i|)``. The ``2**m`` patterns of the
    ``m`` non-zero differences are enumerated when ``m <= exact_max``; otherwise
    ``n_permutations`` random patterns give ``p = (1 + hits) / (1 + n_permutations)``.
    With ``groups`` the signs flip per group (group sums of ``d``), the cluster version.
  - ``"auto"`` (default): chosen by what the metric is, never by the values it happens to
    hold: ``"mcnemar"`` for a metric the metric table (:data:`vlneval.metrics.LABELS`) marks
    as a 0/1 outcome per episode (kind ``"rate"``: SR, OSR, TC, ...; named by its label or
    per-episode column), ``"permutation"`` for every other one (TL, SPL, sDTW, a name the
    table does not know), even when all its values are 0 or 1; always ``"permutation"`` with
    ``groups`` (McNemar and the sign test assume independent episodes).

Identical runs give difference 0, a zero-width interval and p = 1. Swapping a and b negates
the difference and the interval and keeps the p-value. scipy is imported only when a binomial
test runs.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
from numpy.typing import ArrayLike

from vlneval.errors import did_you_mean
from vlneval.metrics.info import LABELS

from ._checks import (
    NAN_POLICIES,
    FloatArray,
    Prepared,
    RngLike,
    as_generator,
    check_choice,
    check_confidence,
    check_count,
    fail,
    prepare_columns,
)
from ._resample import (
    bootstrap_distribution,
    exact_sign_flip_p,
    monte_carlo_sign_flip_p,
    percentile_bounds,
)
from .results import Comparison

__all__ = ["CORRECTIONS", "TESTS", "compare_runs", "holm_adjust", "paired_difference"]

TESTS = ("auto", "mcnemar", "sign", "permutation")
CORRECTIONS = ("holm",)
_MAX_EXACT = 20
#: Labels and per-episode columns of the 0/1 outcomes, the metrics "auto" tests with McNemar.
_OUTCOMES = frozenset(
    name for info in LABELS.values() if info.kind == "rate" for name in (info.label, info.column)
)


def paired_difference(
    a: ArrayLike,
    b: ArrayLike,
    *,
    rng: RngLike,
    metric: str = "values",
    test: str = "auto",
    n_resamples: int = 2000,
    n_permutations: int = 10000,
    exact_max: int = 16,
    confidence: float = 0.95,
    groups: ArrayLike | None = None,
    nan_policy: str = "raise",
    two_stage: bool = True,
) -> Comparison:
    """Compares two runs on one metric, episode by episode.

    Args:
        a: per-episode values of run a, shape ``(N,)``.
        b: per-episode values of run b on the same episodes, in the same order.
        rng: a ``numpy.random.Generator``, or an int seed for a fresh one. It draws the
            bootstrap resamples first, then the random sign patterns (if any).
        metric: the metric's name, stored in the result and used in error messages.
        test: ``"auto"``, ``"mcnemar"``, ``"sign"`` or ``"permutation"`` (see the module doc).
        n_resamples: bootstrap resamples for the interval of the difference (>= 1).
        n_permutations: random sign patterns when the permutation test is not exact (>= 1).
        exact_max: enumerate all sign patterns when there are at most this many non-zero
            differences (or group sums); 0 to 20.
        confidence: nominal coverage of the interval, in (0, 1).
        groups: optional label per episode (e.g. scan id): two-stage bootstrap and cluster
            sign-flip test.
        nan_policy: ``"raise"`` refuses NaN and inf; ``"omit"`` drops every episode that is
            non-finite in a or in b, from both.
        two_stage: with ``groups``, the interval resamples groups then episodes (True) or
            whole groups (False); the test flips the signs of group sums either way.

    Returns:
        The :class:`Comparison` of a against b (difference = a − b).

    Raises:
        InvalidInputError: a bad option, empty or non-1-D input, a length mismatch, a
            non-finite value with ``nan_policy="raise"``, McNemar's test (asked for, or chosen
            for a 0/1 outcome) on values other than 0 and 1, or McNemar/sign test with
            ``groups``.

    Example:
        McNemar's exact test with 8 discordant pairs, all in favour of a:

        >>> a = np.array([1, 1, 1, 1, 1, 1, 1, 1, 0, 1], dtype=float)
        >>> b = np.array([0, 0, 0, 0, 0, 0, 0, 0, 0, 1], dtype=float)
        >>> c = paired_difference(a, b, rng=0, metric="SR")
        >>> c.test, round(c.difference, 3), c.p_value  # p = 2 * 0.5**8
        ('mcnemar-exact', 0.8, 0.0078125)

        The same values as SPL, a score that is 0/1 here only by chance, get the exact
        permutation test (on 0/1 differences it gives the same p):

        >>> c = paired_difference(a, b, rng=0, metric="SPL")
        >>> c.test, c.p_value
        ('permutation-exact', 0.0078125)

        An exact sign-flip test on four continuous differences (2, 1, 3, -1): 6 of the 16
        sign patterns have ``|sum| >= 5``:

        >>> c = paired_difference([3.0, 2.0, 4.0, 0.0], [1.0, 1.0, 1.0, 1.0], rng=0)
        >>> c.test, c.difference, c.p_value
        ('permutation-exact', 1.25, 0.375)
    """
    return _compare(
        "paired_difference",
        {metric: a},
        {metric: b},
        rng=rng,
        test=test,
        correction=None,
        n_resamples=n_resamples,
        n_permutations=n_permutations,
        exact_max=exact_max,
        confidence=confidence,
        groups=groups,
        nan_policy=nan_policy,
        two_stage=two_stage,
    )[metric]


def compare_runs(
    metrics_a: Mapping[str, ArrayLike],
    metrics_b: Mapping[str, ArrayLike],
    *,
    rng: RngLike,
    test: str | Mapping[str, str] = "auto",
    correction: str | None = None,
    n_resamples: int = 2000,
    n_permutations: int = 10000,
    exact_max: int = 16,
    confidence: float = 0.95,
    groups: ArrayLike | None = None,
    nan_policy: str = "raise",
    two_stage: bool = True,
) -> dict[str, Comparison]:
    """Compares two runs on every metric of a per-episode table.

    All metrics share the same bootstrap resamples and the same random sign patterns, and a
    metric gets exactly the result :func:`paired_difference` gives it alone with the same
    seed. With ``nan_policy="omit"`` an episode non-finite in any metric of either run is
    dropped everywhere.

    Args:
        metrics_a: metric name -> per-episode values of run a.
        metrics_b: metric name -> per-episode values of run b; the same names and episodes.
        rng: a ``numpy.random.Generator``, or an int seed for a fresh one.
        test: one test for every metric, or a mapping metric name -> test (missing names use
            ``"auto"``).
        correction: None, or ``"holm"`` for Holm's step-down adjustment of the p-values across
            the metrics (stored in ``p_adjusted``; ``p_value`` stays unadjusted).
        n_resamples, n_permutations, exact_max, confidence, groups, nan_policy, two_stage: as
            in :func:`paired_difference`.

    Returns:
        metric name -> :class:`Comparison`, in the order of ``metrics_a``.

    Raises:
        InvalidInputError: as :func:`paired_difference`; also when the two runs have
            different metric names or ``test`` names an unknown metric.

    Example:
        >>> a = {"SR": [1.0, 1.0, 0.0, 1.0, 0.0], "nDTW": [0.9, 0.8, 0.6, 0.7, 0.5]}
        >>> b = {"SR": [1.0, 0.0, 0.0, 1.0, 0.0], "nDTW": [0.8, 0.3, 0.5, 0.6, 0.4]}
        >>> table = compare_runs(a, b, rng=0, correction="holm")
        >>> [(name, c.test, c.p_value, c.p_adjusted) for name, c in table.items()]
        [('SR', 'mcnemar-exact', 1.0, 1.0), ('nDTW', 'permutation-exact', 0.0625, 0.125)]
    """
    return _compare(
        "compare_runs",
        metrics_a,
        metrics_b,
        rng=rng,
        test=test,
        correction=correction,
        n_resamples=n_resamples,
        n_permutations=n_permutations,
        exact_max=exact_max,
        confidence=confidence,
        groups=groups,
        nan_policy=nan_policy,
        two_stage=two_stage,
    )


def holm_adjust(p_values: ArrayLike) -> FloatArray:
    """Holm's step-down adjusted p-values (Holm 1979), controlling the family-wise error rate.

    With the m p-values sorted ascending, ``p_(1) <= ... <= p_(m)``, the adjusted value of the
    i-th is ``min(1, max_{j <= i} (m − j + 1) · p_(j))``; results come back in input order.

    Args:
        p_values: 1-D array of p-values in [0, 1].

    Returns:
        The adjusted p-values, same shape and order.

    Raises:
        InvalidInputError: not 1-D, or a value outside [0, 1] (NaN included).

    Example:
        >>> holm_adjust([0.125, 0.25, 0.0625]).tolist()
        [0.25, 0.25, 0.1875]
    """
    try:
        p = np.asarray(p_values, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise fail("holm_adjust", f"p_values must be numbers ({exc})") from None
    if p.ndim != 1:
        raise fail("holm_adjust", f"p_values must be a 1-D array; got shape {p.shape}")
    if not ((p >= 0.0) & (p <= 1.0)).all():
        raise fail("holm_adjust", f"p_values must lie in [0, 1]; got {p.tolist()}")
    m = p.shape[0]
    order = np.argsort(p, kind="stable")
    stepped = np.maximum.accumulate((m - np.arange(m)) * p[order])
    adjusted = np.empty(m, dtype=np.float64)
    adjusted[order] = np.minimum(1.0, stepped)
    return adjusted


def _compare(
    where: str,
    metrics_a: Mapping[str, ArrayLike],
    metrics_b: Mapping[str, ArrayLike],
    *,
    rng: RngLike,
    test: str | Mapping[str, str],
    correction: str | None,
    n_resamples: int,
    n_permutations: int,
    exact_max: int,
    confidence: float,
    groups: ArrayLike | None,
    nan_policy: str,
    two_stage: bool,
) -> dict[str, Comparison]:
    generator = as_generator(rng, where)
    n_resamples = check_count(where, "n_resamples", n_resamples, minimum=1)
    n_permutations = check_count(where, "n_permutations", n_permutations, minimum=1)
    exact_max = check_count(where, "exact_max", exact_max, minimum=0, maximum=_MAX_EXACT)
    level = check_confidence(where, confidence)
    check_choice(where, "nan_policy", nan_policy, NAN_POLICIES)
    if correction is not None:
        check_choice(where, "correction", correction, CORRECTIONS)
    names = _metric_names(where, metrics_a, metrics_b)
    tests = _tests_by_metric(where, names, test, grouped=groups is not None)

    prepared = prepare_columns(
        where,
        [f"metric {name!r} of run {run}" for run in "ab" for name in names],
        [metrics_a[name] for name in names] + [metrics_b[name] for name in names],
        nan_policy=nan_policy,
        groups=groups,
        first_seen=not two_stage,
    )
    k = len(names)
    runs_a, runs_b = prepared.data[:k], prepared.data[k:]
    with np.errstate(over="ignore"):  # reported just below, with a clearer message
        diffs = runs_a - runs_b
    if not np.isfinite(diffs).all():
        raise fail(where, "a - b overflows to inf; the values are too large to compare")

    resampled = bootstrap_distribution(
        diffs,
        rng=generator,
        n_resamples=n_resamples,
        statistic=np.mean,
        codes=prepared.codes,
        n_groups=prepared.n_groups,
        where=where,
        two_stage=two_stage,
    )
    # np.mean of each 1-D row: the value a user computing the mean of a run gets.
    means_a = np.array([np.mean(row) for row in runs_a])
    means_b = np.array([np.mean(row) for row in runs_b])
    bounds = percentile_bounds(
        resampled,
        means_a - means_b,
        n=prepared.data.shape[1],
        scale=np.abs(prepared.data).reshape(2, k, -1).max(axis=(0, 2)),
        confidence=level,
    )

    p_values, labels = _p_values(
        where, names, tests, runs_a, runs_b, prepared, generator, n_permutations, exact_max
    )
    adjusted = None if correction is None else holm_adjust(p_values)

    result: dict[str, Comparison] = {}
    for j, name in enumerate(names):
        mean_a, mean_b = float(means_a[j]), float(means_b[j])
        result[name] = Comparison(
            metric=str(name),
            mean_a=mean_a,
            mean_b=mean_b,
            difference=mean_a - mean_b,
            ci_low=float(bounds[0, j]),
            ci_high=float(bounds[1, j]),
            p_value=float(p_values[j]),
            test=labels[j],
            n=prepared.data.shape[1],
            confidence=level,
            p_adjusted=None if adjusted is None else float(adjusted[j]),
            correction=correction,
        )
    return result


def _p_values(
    where: str,
    names: Sequence[str],
    tests: Mapping[str, str],
    runs_a: FloatArray,
    runs_b: FloatArray,
    prepared: Prepared,
    rng: np.random.Generator,
    n_permutations: int,
    exact_max: int,
) -> tuple[FloatArray, list[str]]:
    """The p-value and test label of every metric; random draws only for Monte Carlo tests."""
    diffs = runs_a - runs_b
    units = diffs
    if prepared.codes is not None:
        units = np.stack(
            [np.bincount(prepared.codes, weights=row, minlength=prepared.n_groups) for row in diffs]
        )
    p_values = np.ones(len(names), dtype=np.float64)
    labels: list[str] = []
    monte_carlo: list[int] = []
    prefix = "" if prepared.codes is None else "cluster-"
    for j, name in enumerate(names):
        chosen = asked = tests[name]
        if asked == "auto":
            chosen = "mcnemar" if name in _OUTCOMES and prepared.codes is None else "permutation"
        if chosen == "mcnemar" and not (_is_binary(runs_a[j]) and _is_binary(runs_b[j])):
            raise fail(where, _not_binary_message(asked, name, runs_a[j], runs_b[j]))
        if chosen in ("mcnemar", "sign"):
            positive = int(np.count_nonzero(diffs[j] > 0.0))
            negative = int(np.count_nonzero(diffs[j] < 0.0))
            p_values[j] = _binomial_p(positive, negative)
            labels.append(f"{chosen}-exact")
        elif np.count_nonzero(units[j]) <= exact_max:
            p_values[j] = exact_sign_flip_p(units[j])
            labels.append(f"{prefix}permutation-exact")
        else:
            monte_carlo.append(j)
            labels.append(f"{prefix}permutation-monte-carlo")
    if monte_carlo:
        # One set of random sign patterns serves every Monte Carlo metric.
        p_values[monte_carlo] = monte_carlo_sign_flip_p(
            units[monte_carlo], rng=rng, n_permutations=n_permutations
        )
    return p_values, labels


def _metric_names(
    where: str, metrics_a: Mapping[str, ArrayLike], metrics_b: Mapping[str, ArrayLike]
) -> list[str]:
    for run, metrics in (("a", metrics_a), ("b", metrics_b)):
        if not isinstance(metrics, Mapping) or len(metrics) == 0:
            raise fail(
                where, f"run {run} must be a non-empty mapping of name -> per-episode values"
            )
    only_a = [name for name in metrics_a if name not in metrics_b]
    only_b = [name for name in metrics_b if name not in metrics_a]
    if only_a or only_b:
        raise fail(
            where,
            "the runs must have the same metrics; "
            f"only in run a: {only_a}, only in run b: {only_b}",
        )
    return list(metrics_a)


def _tests_by_metric(
    where: str, names: Sequence[str], test: str | Mapping[str, str], *, grouped: bool
) -> dict[str, str]:
    if isinstance(test, Mapping):
        unknown = [name for name in test if name not in names]
        if unknown:
            hint = did_you_mean(str(unknown[0]), [str(name) for name in names])
            suffix = f"; did you mean {hint!r}?" if hint else ""
            raise fail(where, f"test names unknown metric(s) {unknown}{suffix}")
        tests = {name: test.get(name, "auto") for name in names}
    else:
        tests = dict.fromkeys(names, test)
    for name, chosen in tests.items():
        check_choice(where, f"test for metric {name!r}", chosen, TESTS)
        if grouped and chosen in ("mcnemar", "sign"):
            raise fail(
                where,
                f"test={chosen!r} (metric {name!r}) assumes independent episodes; with groups "
                "use test='permutation' (cluster sign-flip) or 'auto'",
            )
    return tests


def _is_binary(values: FloatArray) -> bool:
    return bool(np.isin(values, (0.0, 1.0)).all())


def _not_binary_message(test: str, name: str, run_a: FloatArray, run_b: FloatArray) -> str:
    lead = "test='mcnemar' needs 0/1 values"
    if test == "auto":
        lead = "test='auto' chose McNemar's test (the metric table marks it a 0/1 outcome per "
        lead += "episode), which needs 0/1 values"
    for run, values in (("a", run_a), ("b", run_b)):
        outside = np.flatnonzero(~np.isin(values, (0.0, 1.0)))
        if outside.size:
            i = int(outside[0])
            return (
                f"{lead}, but metric {name!r} of run {run} has "
                f"{float(values[i])!r} at episode index {i} (after omissions); use test='sign' or "
                "'permutation' for a continuous metric"
            )
    return f"{lead} for metric {name!r}"


def _binomial_p(positive: int, negative: int) -> float:
    """Exact two-sided binomial test of ``positive`` vs ``negative`` at p = 1/2 (1.0 if none)."""
    trials = positive + negative
    if trials == 0:
        return 1.0
    from scipy.stats import binomtest  # deferred: scipy

    # The smaller count keeps the result exactly symmetric when a and b are swapped.
    return min(1.0, float(binomtest(min(positive, negative), trials, 0.5).pvalue))
