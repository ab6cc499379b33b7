"""The consistency checks of spec/metrics.md fire on bugs only, and only on reported metrics."""

from __future__ import annotations

import numpy as np

from vlneval.tasks.common.checks import consistency_checks
from vlneval.tasks.profiles import get_profile


def _failed(per: dict[str, np.ndarray], profile: str = "r2r") -> list[str]:
    return [c.name for c in consistency_checks({}, per, get_profile(profile)) if not c.holds]


def test_ndtw_underflowed_to_zero_for_a_finite_dtw_is_no_violation() -> None:
    """A 20,002-step trajectory: DTW 40004 m, exp(-40004 / 12) is 0.0 in float64."""
    per = {"ndtw": np.array([0.0, 0.5]), "dtw": np.array([40004.0, 4.0]), "cls": np.ones(2)}
    assert _failed(per) == []


def test_ndtw_zero_of_an_unreachable_goal_is_no_violation() -> None:
    per = {"ndtw": np.array([0.0]), "dtw": np.array([np.inf]), "unreachable": np.array([1])}
    assert _failed(per) == []


def test_ndtw_zero_with_infinite_dtw_and_a_reachable_goal_still_fires() -> None:
    per = {"ndtw": np.array([0.0]), "dtw": np.array([np.inf]), "unreachable": np.array([0])}
    assert _failed(per) == ["0 < nDTW <= 1"]
    assert _failed({"ndtw": np.array([1.5]), "dtw": np.array([0.0])}) == ["0 < nDTW <= 1"]


def test_a_goal_task_has_no_ndtw_or_cls_check() -> None:
    """REVERIE's profile reports no nDTW or CLS: their columns are not checked."""
    per = {"ndtw": np.array([0.0]), "dtw": np.array([np.inf]), "cls": np.array([2.0])}
    names = [c.name for c in consistency_checks({}, per, get_profile("reverie"))]
    assert "0 < nDTW <= 1" not in names and "0 <= CLS <= 1" not in names
    assert _failed(per) == ["0 < nDTW <= 1", "0 <= CLS <= 1"]
