"""Hard inputs to continuous scoring: overflowing positions, the DTW guard, and a result whose
mean overflows anyway (built past the parser), which is null with its reason, never "inf"."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from tests.vlnce.helpers import steps
from vlneval.errors import InvalidInputError
from vlneval.io import to_json_bytes
from vlneval.metrics.continuous import check_dtw_costs, fast_dtw, point_dtw
from vlneval.reports.terminal import unavailable_notices
from vlneval.tasks.profiles import get_profile
from vlneval.tasks.vlnce.format import ContinuousPredictions, load_vlnce, parse_ce_predictions
from vlneval.tasks.vlnce.score import DistanceSource, score_continuous

STRAIGHT = [[0.0, 0.0, -float(k)] for k in range(5)]
FAR = [[0.0, 0.0, 0.0], [1e200, 0.0, 0.0], [0.0, 0.0, -4.0]]
REF = [[0.0, 0.0, -float(k)] for k in range(5)]


@pytest.mark.parametrize("variant", ["compiled", "python"])
def test_fastdtw_refuses_overflowing_points_instead_of_crashing(variant: str) -> None:
    # Unguarded, the kernel follows an infinite-cost path out of its window (a segfault).
    with pytest.raises(InvalidInputError, match=r"x and y hold a coordinate of 1e\+200 m"):
        fast_dtw(FAR, REF, variant=variant)
    with pytest.raises(InvalidInputError, match="their DTW overflows a 64-bit float"):
        point_dtw(REF, FAR)


def test_the_dtw_guard_bound_is_exact_enough() -> None:
    # 1e150 m apart, 8 points: the bound 1e150 * 8 is finite, the DTW is computed.
    assert fast_dtw([[0.0, 0, 0], [1e150, 0, 0], [0, 0, -4]], REF) == 1e150
    check_dtw_costs(np.zeros((1, 3)), np.full((1, 3), 1e153))  # diagonal √3e153, finite
    with pytest.raises(InvalidInputError, match="bounding box is inf m across"):
        check_dtw_costs(np.zeros((1, 3)), np.full((1, 3), 1e155))  # its square overflows


@pytest.mark.parametrize(
    ("record", "message"),
    [
        ({"1": steps(FAR)}, r'p.json: episode_id "1": \[1\].position: position \[1e\+200, 0.0, '
         r"0.0\] has a coordinate beyond ±1e\+06 m"),
        ({"1": steps(STRAIGHT, [4, 3, 2, 1, 1e300])}, r'episode_id "1": \[4\].distance_to_goal: '
         r"distance_to_goal must be a number >= 0 or Infinity \(finite ones at most 1e\+06 m\)"),
    ],
)  # fmt: skip
def test_overflowing_values_are_refused_by_the_reader(
    split: tuple[Path, Path], tmp_path: Path, record: object, message: str
) -> None:
    eps = load_vlnce(split[0], gt_path=split[1], task="r2r-ce", split="val")
    path = tmp_path / "p.json"
    path.write_text(json.dumps(record))
    with pytest.raises(InvalidInputError, match=message):
        parse_ce_predictions(path, eps)


def test_rxr_form_names_the_path_point(split: tuple[Path, Path], tmp_path: Path) -> None:
    eps = load_vlnce(split[0], gt_path=split[1], task="r2r-ce", split="val")
    path = tmp_path / "p.jsonl"
    path.write_text(json.dumps({"instruction_id": "i1", "path": [[0, 0, 0], [0, -2e6, 0]]}))
    with pytest.raises(InvalidInputError, match=r'instruction_id "i1": path\[1\]: position'):
        parse_ce_predictions(path, eps)


@pytest.mark.filterwarnings("ignore:overflow encountered")
def test_a_mean_that_overflows_past_the_reader_is_null_with_its_reason(
    split: tuple[Path, Path],
) -> None:
    """Predictions built in memory skip the reader's bound: TL overflows; the result says
    null and why, writes no string, and lists TL as not finite (validate refuses it)."""
    eps = load_vlnce(split[0], task="r2r-ce", split="val")  # no _gt: no DTW to guard
    pos = np.array(FAR + STRAIGHT, dtype=np.float64)
    preds = ContinuousPredictions(
        "mem", "r2r-ce", np.array([0, 1]), pos, np.array([0, 3, 8]), np.array([True, True]),
        np.array([4.0, 4.0, 0.0, 4, 3, 2, 1, 0.5]),
    )  # fmt: skip
    result = score_continuous(
        eps, preds, get_profile("vlnce-exact"), DistanceSource("carried", "carried"),
        show_progress=False,
    )  # fmt: skip
    s = result.to_dict()
    assert result.non_finite == ("TL",)
    assert s["metrics"]["TL"] is None
    assert 'path_length not finite in 1 episode(s) (first: "1")' in s["unavailable"]["TL"]
    assert any(w.startswith("TL: the mean is inf") for w in s["warnings"])
    assert any(n.startswith("TL is n/a: the mean is inf") for n in unavailable_notices(s))
    text = to_json_bytes(s).decode()
    assert '"inf"' not in text and "Infinity" not in text
    assert s["metrics"]["NE"] == 0.25 and s["metrics"]["SR"] == 1.0
