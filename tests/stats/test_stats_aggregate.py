"""Tests of vlneval.stats.aggregate: hand cases, invariants, bad arguments."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vlneval.errors import InvalidInputError
from vlneval.stats import RunSummary, aggregate_runs, aggregate_scores

# t quantile t(0.975, df=2), from a t table.
T_975_DF2 = 4.302652729911275


def test_three_runs_by_hand() -> None:
    s = aggregate_scores([0.5, 0.75, 0.25], metric="SR")
    assert (s.metric, s.mean, s.std, s.min, s.max, s.n_runs) == ("SR", 0.5, 0.25, 0.25, 0.75, 3)
    half = T_975_DF2 * 0.25 / math.sqrt(3)
    assert s.ci_low == pytest.approx(0.5 - half)
    assert s.ci_high == pytest.approx(0.5 + half)
    assert s.confidence == 0.95


def test_one_run_has_no_spread() -> None:
    s = aggregate_scores([0.6])
    assert (s.mean, s.min, s.max, s.n_runs) == (0.6, 0.6, 0.6, 1)
    assert (s.std, s.ci_low, s.ci_high) == (None, None, None)
    assert s.to_dict()["std"] is None


def test_constant_runs_give_zero_width_interval() -> None:
    s = aggregate_scores([0.5, 0.5, 0.5, 0.5])
    assert (s.std, s.ci_low, s.ci_high) == (0.0, 0.5, 0.5)


def test_identical_runs_give_std_zero_exactly() -> None:
    # np.mean of three 0.1s is 0.10000000000000002 and np.std then 1.7e-17, not 0.
    assert np.std([0.1, 0.1, 0.1], ddof=1) != 0.0
    s = aggregate_scores([0.1, 0.1, 0.1])
    assert (s.mean, s.std, s.ci_low, s.ci_high, s.min, s.max) == (0.1, 0.0, 0.1, 0.1, 0.1, 0.1)
    assert aggregate_scores([0.1, 0.2, 0.1]).std == pytest.approx(0.0577350269, rel=1e-9)


def test_runs_of_per_episode_arrays_and_scores() -> None:
    runs: list[dict[str, Any]] = [
        {"SR": [1.0, 0.0, 1.0, 1.0], "NE": 2.0},
        {"SR": np.array([1.0, 0.0]), "NE": 4.0},
    ]
    summary = aggregate_runs(runs, confidence=0.9)
    assert list(summary) == ["SR", "NE"]
    assert summary["SR"].mean == pytest.approx(0.625)
    assert (summary["SR"].min, summary["SR"].max) == (0.5, 0.75)
    assert summary["NE"] == aggregate_scores([2.0, 4.0], metric="NE", confidence=0.9)


def test_omit_averages_the_finite_episodes() -> None:
    runs = [{"SPL": [0.5, np.nan, 1.0]}, {"SPL": [0.25]}]
    assert aggregate_runs(runs, nan_policy="omit")["SPL"].max == 0.75


@settings(max_examples=50, deadline=None)
@given(
    st.lists(st.floats(min_value=-1e6, max_value=1e6, allow_nan=False), min_size=2, max_size=20),
    st.floats(min_value=0.5, max_value=0.999),
)
def test_interval_contains_the_mean_and_lies_between_min_and_max_spread(
    scores: list[float], confidence: float
) -> None:
    s = aggregate_scores(scores, confidence=confidence)
    assert s.ci_low is not None and s.ci_high is not None and s.std is not None
    assert s.ci_low <= s.mean <= s.ci_high
    assert s.min <= s.mean + 1e-9 * max(1.0, abs(s.mean))
    assert s.mean <= s.max + 1e-9 * max(1.0, abs(s.mean))
    assert s.std >= 0.0


def test_to_dict_round_trip() -> None:
    s = aggregate_scores([0.1, 0.2])
    assert RunSummary(**s.to_dict()) == s  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("scores", "message"),
    [
        ([], r"scores of metric 'values' must be a non-empty 1-D array .* got shape \(0,\)"),
        ([[0.1, 0.2]], r"got shape \(1, 2\)"),
        ([0.1, np.nan], r"metric 'values' has a non-finite score \(nan\) for run 1"),
        (["x"], r"must be numbers"),
    ],
)
def test_aggregate_scores_bad_input(scores: object, message: str) -> None:
    with pytest.raises(InvalidInputError, match=message):
        aggregate_scores(scores)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("runs", "kwargs", "message"),
    [
        ([], {}, r"runs must be a non-empty sequence"),
        ({"SR": [1.0]}, {}, r"runs must be a non-empty sequence"),
        ([{"SR": 1.0}, [1.0]], {}, r"run 1 must be a non-empty mapping; got list"),
        (
            [{"SR": 1.0, "SPL": 0.5}, {"SR": 1.0, "NE": 2.0}],
            {},
            r"run 1 does not have the metrics of run 0: missing \['SPL'\], extra \['NE'\]",
        ),
        ([{"SR": [1.0, np.inf]}], {}, r"metric 'SR' of run 0 has 1 non-finite .* index 1"),
        ([{"SR": [np.nan]}], {"nan_policy": "omit"}, r"metric 'SR' of run 0 has no finite value"),
        ([{"SR": np.nan}], {"nan_policy": "omit"}, r"metric 'SR' of run 0 has a non-finite score"),
        ([{"SR": []}], {}, r"metric 'SR' of run 0 must be a number or a non-empty 1-D array"),
        ([{"SR": 1.0}], {"confidence": 1.5}, r"confidence must be in \(0, 1\)"),
        ([{"SR": 1.0}], {"nan_policy": "skip"}, r"nan_policy must be one of"),
    ],
)
def test_aggregate_runs_bad_input(runs: object, kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(InvalidInputError, match=message):
        aggregate_runs(runs, **kwargs)  # type: ignore[arg-type]


def test_bounds_clip_the_interval_and_say_so() -> None:
    """SR 2%, 10%, 30% over three seeds: the t interval [-21.83, 49.83] % is clipped to 0."""
    t = aggregate_scores([0.02, 0.10, 0.30], metric="SR")
    s = aggregate_scores([0.02, 0.10, 0.30], metric="SR", bounds=(0.0, 1.0))
    assert t.ci_low == pytest.approx(-0.2182674358011839) and t.clipped_to is None
    assert (s.ci_low, s.ci_high, s.clipped_to) == (0.0, t.ci_high, "[0, 1]")
    assert (s.mean, s.std) == (t.mean, t.std)
    inside = aggregate_scores([0.4, 0.5, 0.6], metric="SR", bounds=(0.0, 1.0))
    assert inside.clipped_to is None and inside.ci_low == pytest.approx(
        0.5 - T_975_DF2 * 0.1 / math.sqrt(3)
    )
    ne = aggregate_runs([{"NE": 0.5}, {"NE": 6.0}], bounds={"NE": (0.0, math.inf)})["NE"]
    assert ne.ci_low == 0.0 and ne.ci_high is not None and ne.ci_high > 6.0
    assert ne.clipped_to == "[0, inf]" and ne.to_dict()["clipped_to"] == "[0, inf]"


def test_bounds_refuse_a_score_outside_them() -> None:
    with pytest.raises(InvalidInputError) as exc:
        aggregate_runs([{"SR": 0.5}, {"SR": 50.0}], bounds={"SR": (0.0, 1.0)})
    assert str(exc.value) == (
        "error: aggregate_runs: metric 'SR' of run 1 is 50.0, outside its range [0, 1]"
    )
    with pytest.raises(InvalidInputError, match=r"bounds of metric 'SR' must have low < high"):
        aggregate_scores([0.5, 0.6], metric="SR", bounds=(1.0, 0.0))


@pytest.mark.filterwarnings("error::RuntimeWarning")
def test_scores_near_the_largest_float_aggregate_without_overflow() -> None:
    s = aggregate_scores([1e308, 1e308, 11.0], metric="TL", bounds=(0.0, math.inf))
    assert s.mean == pytest.approx(1e308 / 3 * 2) and s.max == 1e308
    assert s.std == pytest.approx(1e308 / math.sqrt(3))
    assert s.ci_low == 0.0 and s.ci_high == math.inf and s.clipped_to == "[0, inf]"
    same = aggregate_scores([1e308, 1e308], metric="TL")
    assert (same.mean, same.std, same.ci_low, same.ci_high) == (1e308, 0.0, 1e308, 1e308)


def test_ordinary_scores_take_the_plain_mean_and_std_bit_for_bit() -> None:
    scores = np.array([0.1, 0.2, 0.7, 0.35])
    s = aggregate_scores(scores, metric="SR")
    assert s.mean == float(np.mean(scores)) and s.std == float(np.std(scores, ddof=1))
