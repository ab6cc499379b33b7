"""Tests of vlneval.stats.bootstrap: hand cases, invariants, bad arguments."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from vlneval.errors import InvalidInputError
from vlneval.stats import _resample, bootstrap_ci, bootstrap_table

finite = st.floats(min_value=-1e6, max_value=1e6, allow_nan=False, allow_infinity=False)
value_arrays = arrays(np.float64, st.integers(1, 40), elements=finite)


# ---------------------------------------------------------------- hand-checked cases


def test_constant_array_gives_zero_width_interval() -> None:
    ci = bootstrap_ci(np.full(7, 0.5), rng=0)
    assert (ci.estimate, ci.low, ci.high) == (0.5, 0.5, 0.5)
    assert ci.method == "bootstrap-percentile"
    assert (ci.n, ci.n_resamples, ci.confidence) == (7, 2000, 0.95)


def test_constant_array_with_groups_gives_zero_width_interval() -> None:
    ci = bootstrap_ci(np.full(6, 0.25), rng=0, groups=["a", "a", "b", "c", "c", "c"])
    assert (ci.estimate, ci.low, ci.high) == (0.25, 0.25, 0.25)
    assert ci.method == "bootstrap-percentile-two-stage"


@pytest.mark.parametrize("n", [2, 3, 6, 9, 17, 100])
@pytest.mark.parametrize("grouped", [False, True])
def test_constant_not_representable_gives_zero_width_interval(n: int, grouped: bool) -> None:
    # np.mean of n copies of 0.1 is not always 0.1, and a 1-D mean and the row means of a
    # matrix round differently: the interval must still be exactly the estimate.
    groups = np.arange(n) % 3 if grouped else None
    ci = bootstrap_ci(np.full(n, 0.1), rng=0, groups=groups)
    assert ci.low == ci.estimate == ci.high == float(np.mean(np.full(n, 0.1)))


def test_single_episode_gives_zero_width_interval() -> None:
    ci = bootstrap_ci([3.0], rng=1)
    assert (ci.estimate, ci.low, ci.high, ci.n) == (3.0, 3.0, 3.0, 1)


def test_two_stage_resamples_groups_then_episodes_within_them() -> None:
    # Group "a" has 1 episode (value 0), group "b" has 3 (values 10, 11, 12). A two-stage
    # resample draws 2 groups, then as many episodes as each drawn group has, from that group.
    values = np.array([0.0, 10.0, 11.0, 12.0])
    groups = np.array(["a", "b", "b", "b"])
    sizes = bootstrap_distribution_of(values, groups, statistic=lambda x: float(x.size))
    assert set(np.unique(sizes)) == {2.0, 4.0, 6.0}
    from_b = bootstrap_distribution_of(values, groups, statistic=lambda x: float((x >= 10).sum()))
    assert set(np.unique(from_b)) == {0.0, 3.0, 6.0}
    # Same seed, same resamples: each drawn "a" adds 1 episode, each drawn "b" adds 3.
    drawn_a = sizes - from_b
    assert set(np.unique(drawn_a)) == {0.0, 1.0, 2.0}
    assert np.array_equal(from_b, 3.0 * (2.0 - drawn_a))


def bootstrap_distribution_of(
    values: np.ndarray, groups: np.ndarray, *, statistic: Callable[[np.ndarray], float]
) -> np.ndarray:
    codes = np.unique(groups, return_inverse=True)[1]
    return _resample.bootstrap_distribution(
        np.asarray(values, dtype=np.float64)[None, :],
        rng=np.random.default_rng(0),
        n_resamples=400,
        statistic=statistic,
        codes=codes,
        n_groups=int(codes.max()) + 1,
        where="test",
    )[0]


def test_interval_matches_normal_approximation_for_a_large_sample() -> None:
    data = np.random.default_rng(3).normal(10.0, 2.0, size=400)
    ci = bootstrap_ci(data, rng=4, n_resamples=4000)
    half = 1.96 * data.std(ddof=1) / np.sqrt(data.size)
    assert ci.high - ci.low == pytest.approx(2 * half, rel=0.1)
    assert (ci.low + ci.high) / 2 == pytest.approx(ci.estimate, abs=0.1 * half)


def test_clustered_data_get_a_wider_interval_with_groups() -> None:
    rng = np.random.default_rng(5)
    group_means = rng.normal(0.0, 1.0, size=10)
    groups = np.repeat(np.arange(10), 30)
    values = group_means[groups] + rng.normal(0.0, 0.05, size=groups.size)
    plain = bootstrap_ci(values, rng=0)
    clustered = bootstrap_ci(values, rng=0, groups=groups)
    assert clustered.high - clustered.low > 3 * (plain.high - plain.low)


def test_statistic_with_and_without_axis_give_the_same_interval() -> None:
    data = np.random.default_rng(6).exponential(3.0, size=50)
    fast = bootstrap_ci(data, rng=2, statistic=np.median, n_resamples=300)
    slow = bootstrap_ci(data, rng=2, statistic=lambda x: float(np.median(x)), n_resamples=300)
    assert fast == slow
    assert fast.estimate == float(np.median(data))


def test_confidence_level_orders_the_intervals() -> None:
    data = np.random.default_rng(7).random(60)
    wide = bootstrap_ci(data, rng=0, confidence=0.99)
    narrow = bootstrap_ci(data, rng=0, confidence=0.5)
    assert wide.low <= narrow.low <= narrow.high <= wide.high


def test_small_chunks_still_give_every_resample(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_resample, "MAX_CHUNK_ELEMENTS", 7)
    data = np.arange(10, dtype=float)
    ci = bootstrap_ci(data, rng=0, n_resamples=101, groups=np.arange(10) % 3)
    assert ci.low <= ci.estimate <= ci.high
    dist = bootstrap_distribution_of(data, np.arange(10) % 3, statistic=lambda x: float(x.size))
    assert dist.shape == (400,) and np.all(dist > 0)


# ---------------------------------------------------------------- invariants


@settings(max_examples=60, deadline=None)
@given(values=value_arrays, seed=st.integers(0, 2**32 - 1))
def test_interval_contains_the_mean(values: np.ndarray, seed: int) -> None:
    ci = bootstrap_ci(values, rng=seed, n_resamples=200)
    assert ci.low <= ci.estimate <= ci.high


@settings(max_examples=40, deadline=None)
@given(values=value_arrays, seed=st.integers(0, 2**32 - 1), data=st.data())
def test_interval_contains_the_mean_with_groups(
    values: np.ndarray, seed: int, data: st.DataObject
) -> None:
    groups = data.draw(arrays(np.int64, values.shape, elements=st.integers(0, 3)))
    ci = bootstrap_ci(values, rng=seed, n_resamples=200, groups=groups)
    assert ci.low <= ci.estimate <= ci.high


def test_fixed_seed_gives_identical_output() -> None:
    data = np.random.default_rng(8).random(30)
    assert bootstrap_ci(data, rng=11) == bootstrap_ci(data, rng=11)
    assert bootstrap_ci(data, rng=11) == bootstrap_ci(data, rng=np.random.default_rng(11))
    assert bootstrap_ci(data, rng=11) != bootstrap_ci(data, rng=12)


def test_global_numpy_rng_is_not_touched() -> None:
    before = np.random.get_state()[1].copy()  # type: ignore[index]
    bootstrap_table({"x": np.arange(20.0)}, rng=0, groups=np.arange(20) % 4)
    assert np.array_equal(np.random.get_state()[1], before)  # type: ignore[index]


def test_generator_is_advanced_so_repeated_calls_differ() -> None:
    rng = np.random.default_rng(0)
    data = np.random.default_rng(1).random(25)
    assert bootstrap_ci(data, rng=rng) != bootstrap_ci(data, rng=rng)


@pytest.mark.parametrize("groups", [None, np.arange(40) % 5])
def test_table_uses_the_same_resamples_as_single_metric(groups: np.ndarray | None) -> None:
    rng = np.random.default_rng(9)
    metrics = {"SR": (rng.random(40) < 0.6).astype(float), "NE": rng.exponential(3.0, 40)}
    table = bootstrap_table(metrics, rng=5, groups=groups)
    assert list(table) == ["SR", "NE"]
    for name, values in metrics.items():
        assert table[name] == bootstrap_ci(values, rng=5, groups=groups, metric=name)


@pytest.mark.parametrize("groups", [None, np.arange(200) % 7])
def test_table_keeps_paired_structure(groups: np.ndarray | None) -> None:
    # SPL <= SR on every episode, so on every shared resample; the quantiles keep the order.
    rng = np.random.default_rng(10)
    sr = (rng.random(200) < 0.5).astype(float)
    spl = 0.999 * sr
    table = bootstrap_table({"SR": sr, "SPL": spl}, rng=0, groups=groups)
    assert table["SPL"].low <= table["SR"].low
    assert table["SPL"].high <= table["SR"].high


# ---------------------------------------------------------------- NaN and inf


def test_nan_is_refused_with_the_metric_name_and_index() -> None:
    with pytest.raises(InvalidInputError, match=r"metric 'spl' has 1 non-finite .* index 2"):
        bootstrap_table({"sr": [1.0, 0.0, 1.0], "spl": [0.5, 0.0, np.nan]}, rng=0)


def test_every_metric_with_nan_or_inf_is_reported() -> None:
    with pytest.raises(InvalidInputError) as info:
        bootstrap_table({"a": [np.inf, 1.0], "b": [1.0, 2.0], "c": [np.nan, -np.inf]}, rng=0)
    messages = [p.message for p in info.value.problems]
    assert len(messages) == 2
    assert "metric 'a' has 1 non-finite" in messages[0]
    assert "metric 'c' has 2 non-finite value(s) (NaN or inf) at episode index 0, 1" in messages[1]
    assert "nan_policy='omit'" in messages[0]


def test_omit_drops_the_episode_from_every_metric() -> None:
    table = bootstrap_table(
        {"sr": [1.0, 0.0, 1.0, 1.0], "spl": [0.5, np.nan, 1.0, 0.75]}, rng=0, nan_policy="omit"
    )
    assert table["sr"].n == table["spl"].n == 3
    assert table["sr"].estimate == 1.0
    assert table["spl"].estimate == 0.75


def test_omit_drops_the_group_labels_too() -> None:
    ci = bootstrap_ci([1.0, np.nan, 2.0], rng=0, groups=["x", "y", "x"], nan_policy="omit")
    assert ci.n == 2 and ci.estimate == 1.5


def test_omit_with_nothing_left_is_refused() -> None:
    with pytest.raises(InvalidInputError, match="no episode left: all 2 episodes"):
        bootstrap_ci([np.nan, np.inf], rng=0, nan_policy="omit")


# ---------------------------------------------------------------- bad arguments


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"rng": None}, r"rng must be a numpy.random.Generator or an int seed .*got NoneType"),
        ({"rng": np.random.RandomState(0)}, r"got RandomState"),
        ({"rng": True}, r"got bool"),
        ({"rng": -1}, r"rng seed must be a non-negative int; got -1"),
        ({"n_resamples": 0}, r"n_resamples must be >= 1; got 0"),
        ({"n_resamples": 10.0}, r"n_resamples must be an int; got float"),
        ({"confidence": 1.0}, r"confidence must be in \(0, 1\), e.g. 0.95; got 1.0"),
        ({"confidence": 95}, r"confidence must be in \(0, 1\)"),
        ({"confidence": "0.95"}, r"confidence must be a float in \(0, 1\); got str"),
        ({"nan_policy": "ignore"}, r"nan_policy must be one of 'raise', 'omit'; got 'ignore'"),
        ({"statistic": "mean"}, r"statistic must be callable"),
        ({"groups": [0, 1]}, r"length mismatch: groups has 2 entries but there are 3 episodes"),
        ({"groups": [[0, 1, 2]]}, r"groups must be a 1-D array"),
        ({"statistic": lambda x, axis=None: np.stack([x, x])}, r"statistic must reduce"),
    ],
)
def test_bad_arguments_are_refused(kwargs: dict[str, object], message: str) -> None:
    arguments: dict[str, object] = {"rng": 0, **kwargs}
    with pytest.raises(InvalidInputError, match=message):
        bootstrap_ci([1.0, 2.0, 3.0], **arguments)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("values", "message"),
    [
        ([], r"metric 'values' is empty; need at least one episode"),
        ([[1.0, 2.0]], r"must be a 1-D array with one value per episode; got shape \(1, 2\)"),
        (1.0, r"got shape \(\)"),
        (["a", "b"], r"metric 'values' must hold numbers"),
    ],
)
def test_bad_values_are_refused(values: object, message: str) -> None:
    with pytest.raises(InvalidInputError, match=message):
        bootstrap_ci(values, rng=0)  # type: ignore[arg-type]


def test_length_mismatch_names_both_metrics() -> None:
    with pytest.raises(
        InvalidInputError,
        match=r"length mismatch: metric 'sr' has 3 episodes but metric 'spl' has 2",
    ):
        bootstrap_table({"sr": [1.0, 0.0, 1.0], "spl": [0.5, 0.0]}, rng=0)


def test_empty_table_is_refused() -> None:
    with pytest.raises(InvalidInputError, match="metrics must be a non-empty mapping"):
        bootstrap_table({}, rng=0)


def test_error_names_the_function_called() -> None:
    with pytest.raises(InvalidInputError, match=r"^error: bootstrap_table: "):
        bootstrap_table({"x": []}, rng=0)
    with pytest.raises(InvalidInputError, match=r"^error: bootstrap_ci: "):
        bootstrap_ci([], rng=0)


def test_non_finite_statistic_is_refused() -> None:
    with pytest.raises(InvalidInputError, match="non-finite estimate"):
        bootstrap_ci([1.0, 2.0], rng=0, statistic=lambda x: float("nan"))
