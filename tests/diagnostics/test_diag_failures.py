"""Outcome classes and budgeted success: hand-worked cases, identities and bad input."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from tests.reports.house import OUTCOMES, SHORTEST
from vlneval.diagnostics import (
    FAILURE_CLASSES,
    ScoredRun,
    budgeted_success,
    classify_outcomes,
    diagnose,
    failure_breakdown,
    length_ratio,
    step_limit_from_card,
    within_budget,
)
from vlneval.errors import InvalidInputError


def _names(codes: np.ndarray) -> list[str]:
    return [FAILURE_CLASSES[c] for c in codes]


def test_each_class_by_hand() -> None:
    # success; passed; stopped short; wandered; step limit; TL == d* exactly is "wandered"
    codes = classify_outcomes(
        [1, 0, 0, 0, 0, 0],
        [1, 1, 0, 0, 0, 0],
        [9.0, 12.0, 3.0, 15.0, 20.0, 8.0],
        [8.0] * 6,
        steps=[4, 6, 1, 5, 20, 3],
        step_limit=20,
    )
    assert _names(codes) == [
        "success",
        "passed_goal",
        "stopped_early",
        "wandered",
        "step_limit",
        "wandered",
    ]


def test_step_limit_never_overrides_success_or_passing() -> None:
    codes = classify_outcomes(
        [1, 0], [1, 1], [30.0, 30.0], [8.0, 8.0], steps=[20, 20], step_limit=20
    )
    assert _names(codes) == ["success", "passed_goal"]
    b = failure_breakdown([1, 0], [1, 1], [30.0, 30.0], [8.0, 8.0], steps=[20, 20], step_limit=20)
    assert b.passed_goal_at_limit == 1 and b.counts["step_limit"] == 0


def test_without_step_limit_the_class_is_absent() -> None:
    b = failure_breakdown([0, 0], [0, 0], [1.0, 9.0], [8.0, 8.0], steps=[20, 20])
    assert b.counts == {
        "success": 0,
        "passed_goal": 0,
        "step_limit": None,
        "stopped_early": 1,
        "wandered": 1,
    }
    assert b.to_dict()["classes"][2] == {
        "name": "step_limit",
        "label": "hit the step limit",
        "count": None,
        "share": None,
    }


def test_unreachable_episode_is_classed_by_length() -> None:
    codes = classify_outcomes([0, 0], [0, 0], [2.0, 12.0], [8.0, 8.0])
    assert _names(codes) == ["stopped_early", "wandered"]


def test_passed_share_is_osr_minus_sr_on_random_data() -> None:
    rng = np.random.default_rng(3)
    n = 500
    success = (rng.random(n) < 0.4).astype(float)
    oracle = np.maximum(success, (rng.random(n) < 0.3).astype(float))
    b = failure_breakdown(success, oracle, rng.random(n) * 20, rng.random(n) * 10 + 1)
    assert b.shares["passed_goal"] == pytest.approx(oracle.mean() - success.mean(), abs=1e-15)
    assert sum(v for v in b.counts.values() if v is not None) == n


def test_bad_input_is_one_clear_error() -> None:
    with pytest.raises(InvalidInputError, match="one length"):
        classify_outcomes([1, 0], [1], [1.0, 2.0], [1.0, 2.0])
    with pytest.raises(InvalidInputError, match="d\\* is unknown"):
        classify_outcomes([0], [0], [1.0], [np.nan])
    with pytest.raises(InvalidInputError, match="needs the steps"):
        classify_outcomes([0], [0], [1.0], [2.0], step_limit=5)


def test_step_limit_from_card() -> None:
    assert step_limit_from_card({"inference_budget": 20}) == 20
    assert step_limit_from_card({"inference_budget": {"step_limit": 15}}) == 15
    assert step_limit_from_card({"inference_budget": {"max_episode_len": 30}}) == 30
    for value in ("not declared (offline predictions file)", True, 0, {"beam": 3}, None):
        assert step_limit_from_card({"inference_budget": value}) is None


def test_budgets_by_hand() -> None:
    success, tl, d = [1, 1, 1, 0], [10.0, 12.0, 20.0, 5.0], [10.0] * 4
    assert budgeted_success(success, tl, d, [1.0, 1.2, 1.5, 2.0, 100.0]) == {
        1.0: 0.25,
        1.2: 0.5,
        1.5: 0.5,
        2.0: 0.75,
        100.0: 0.75,
    }
    # A path equal to d* up to rounding (sums in another order) is within budget 1.
    assert within_budget([1], [0.1 + 0.2], [0.3], 1.0).tolist() == [1.0]
    assert np.isnan(length_ratio([3.0], [0.0])).all()


def test_budget_is_monotone_and_reaches_sr() -> None:
    rng = np.random.default_rng(0)
    s = (rng.random(300) < 0.5).astype(float)
    d = rng.random(300) * 10 + 2
    tl = d * (1 + rng.random(300) * 3)
    values = list(budgeted_success(s, tl, d, np.linspace(1, 5, 30)).values())
    assert values == sorted(values) and values[-1] == s.mean()


def test_budget_bad_input() -> None:
    with pytest.raises(InvalidInputError, match="positive"):
        within_budget([1], [1.0], [1.0], 0.0)
    with pytest.raises(InvalidInputError, match="finite, non-negative"):
        within_budget([1], [1.0], [np.inf], 1.5)


def test_house_outcomes(house_run: ScoredRun) -> None:
    d = diagnose(house_run, n_resamples=200)
    ids = house_run.episode_ids
    assert d.failures is not None
    assert dict(zip(ids, _names(d.failures.codes), strict=True)) == OUTCOMES
    assert dict(zip(ids, d.context.shortest.tolist(), strict=True)) == pytest.approx(SHORTEST)
    assert {b: ci.estimate for b, ci in d.budgets.items()} == pytest.approx(
        {1.0: 2 / 6, 1.25: 2 / 6, 1.5: 2 / 6, 2.0: 2 / 6, 3.0: 2 / 6}
    )
    with_limit = diagnose(house_run, n_resamples=200, step_limit=5)
    assert with_limit.failures is not None
    assert _names(with_limit.failures.codes)[-1] == "step_limit"
    assert with_limit.failures.counts["stopped_early"] == 1


def test_house_step_limit_from_declared_card(house_run: ScoredRun) -> None:
    card = dict(house_run.evaluation.protocol, inference_budget={"max_steps": 5})
    declared = dataclasses.replace(house_run.evaluation, protocol=card)  # a Result is frozen
    d = diagnose(dataclasses.replace(house_run, evaluation=declared), n_resamples=100)
    assert d.settings["step_limit"] == 5
    assert d.failures is not None and d.failures.counts["step_limit"] == 1


def test_step_notes_name_a_cap_nobody_gave_and_steps_past_the_limit() -> None:
    """Without T, many episodes ending at the largest step count is named with the option to
    pass; with T, an episode longer than T is named (the limit cannot be the run's)."""
    b = failure_breakdown([0, 0, 0], [0, 0, 0], [1.0, 9.0, 9.0], [8.0] * 3, steps=[20, 20, 4])
    assert b.notes == (
        "2 of 3 episodes (66.7%) end at exactly 20 steps, the run's largest count: a step "
        "limit? without one they are classed as stopped short or wandered; pass --step-limit 20",
    )
    assert b.to_dict()["notes"] == list(b.notes)
    b = failure_breakdown(
        [0, 0], [0, 0], [1.0, 9.0], [8.0] * 2, steps=[2, 9], step_limit=3, episode_ids=["e0", "e1"]
    )
    assert b.notes == (
        "warning: 1 episode(s) have more steps than the step limit T = 3 (first: e1, 9 steps): "
        "the run cannot have had that limit, or its steps count something else; check "
        "--step-limit",
    )
    few = failure_breakdown([0] * 20, [0] * 20, [1.0] * 20, [8.0] * 20, steps=[*range(29), 28])
    assert few.notes == ()  # 2 of 30 at the maximum: no cap
