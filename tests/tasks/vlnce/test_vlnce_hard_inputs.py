"""Hard inputs to continuous scoring: overflowing positions, the DTW guard, and a result whose
mean overflows anyway (built past the parser), which is null with its reason, never "inf"."""

from __future__ import annotations

import json
from pathlib import Path
from typing import cast

import numpy as np
import pytest

from tests.tasks.vlnce.helpers import steps
from vlneval.errors import InvalidInputError
from vlneval.io import to_json_bytes
from vlneval.metrics.continuous import check_dtw_costs, fast_dtw, point_dtw
from vlneval.reports.terminal import metric_cell, unavailable_notices
from vlneval.tasks.common.result import Result
from vlneval.tasks.profiles import get_profile
from vlneval.tasks.vlnce.format import ContinuousPredictions, load_vlnce, parse_ce_predictions
from vlneval.tasks.vlnce.profiles import ContinuousProfile
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


# ----- moves longer than one action allows -------------------------------------------------

TELEPORT = [[0.0, 0.0, 0.0], [0.0, 0.0, -0.25], [500.0, 0.0, -500.25]]  # 707.11 m in one step


def _score(
    split: tuple[Path, Path], tmp_path: Path, preds: object, profile: str, name: str = "p.json"
) -> Result:
    eps = load_vlnce(split[0], gt_path=split[1], task="r2r-ce", split="val")
    path = tmp_path / name
    path.write_text(preds if isinstance(preds, str) else json.dumps(preds))
    parsed = parse_ce_predictions(path, eps)
    carried = DistanceSource("carried", "carried")
    return score_continuous(eps, parsed, get_profile(profile), carried, show_progress=False)


@pytest.mark.parametrize("profile", ["vlnce", "vlnce-exact"])
def test_a_teleport_is_scored_with_a_warning_naming_episode_step_and_length(
    split: tuple[Path, Path], tmp_path: Path, profile: str
) -> None:
    preds = {"1": steps(TELEPORT, [4.0, 3.75, "inf"]), "2": steps(STRAIGHT, [4, 3, 2, 1, 0])}
    result = _score(split, tmp_path, preds, profile)
    assert result.per_episode["jumps"].tolist() == [1.0, 0.0]
    assert result.rows()[0]["jumps"] == 1  # an integer flag column, as spec/outputs.md asks
    warning = next(w for w in result.warnings if "longer than one action" in w)
    assert warning == (
        f"1 move(s) in 1 episode(s) are longer than one action allows (1 m, profile {profile}): "
        'episode_id "1" [2].position moves 707.11 m; TL counts each as a straight line '
        "(--profile vlnce-strict refuses such files)"
    )
    assert result.metrics["TL"] == pytest.approx((0.25 + 500 * 2**0.5 + 4.0) / 2)


def test_the_strict_profile_refuses_every_teleport(
    split: tuple[Path, Path], tmp_path: Path
) -> None:
    two = [[0.0, 0.0, 0.0], [0.0, 0.0, -1.5], [0.0, 0.0, -1.5], [0.0, 0.0, -4.0]]
    preds = {"1": steps(TELEPORT, [4.0, 3.75, "inf"]), "2": steps(two, [4, 2.5, 2.5, 0])}
    with pytest.raises(InvalidInputError) as info:
        _score(split, tmp_path, preds, "vlnce-strict")
    lines = str(info.value).replace(f"{tmp_path}/", "").splitlines()
    assert lines == [
        'error: p.json: episode_id "1": [2].position: moves 707.11 m from the previous position: '
        "one action moves at most 1 m (profile vlnce-strict refuses such moves; --profile vlnce "
        "scores them with a warning)",
        'error: p.json: episode_id "2": [1].position: moves 1.50 m from the previous position: '
        "one action moves at most 1 m (profile vlnce-strict refuses such moves; --profile vlnce "
        "scores them with a warning)",
        'error: p.json: episode_id "2": [3].position: moves 2.50 m from the previous position: '
        "one action moves at most 1 m (profile vlnce-strict refuses such moves; --profile vlnce "
        "scores them with a warning)",
    ]


def test_a_move_of_exactly_max_step_is_one_action(split: tuple[Path, Path], tmp_path: Path) -> None:
    line = [[0.0, 0.0, -float(k)] for k in range(5)]  # 1.0 m steps: allowed (<=)
    bumped = [[0.0, 0.0, -z] for z in (0.0, 1.0000001, 2.0000001, 3.0, 4.0)]  # the first: 1e-7 over
    preds = {"1": steps(line, [4, 3, 2, 1, 0]), "2": steps(bumped, [4, 3, 2, 1, 0])}
    result = _score(split, tmp_path, preds, "vlnce")
    assert result.per_episode["jumps"].tolist() == [0.0, 1.0]
    with pytest.raises(InvalidInputError, match=r'episode_id "2": \[1\].position: moves 1.00 m'):
        _score(split, tmp_path, preds, "vlnce-strict")


def test_the_rxr_form_names_the_path_point_of_a_teleport(
    split: tuple[Path, Path], tmp_path: Path
) -> None:
    lines = [
        {"instruction_id": "i1", "path": TELEPORT, "distance_to_goal": [4, 3.75, "inf"]},
        {"instruction_id": "i2", "path": STRAIGHT, "distance_to_goal": [4, 3, 2, 1, 0]},
    ]
    text = "\n".join(json.dumps(x) for x in lines) + "\n"
    with pytest.raises(InvalidInputError, match=r'p.jsonl: instruction_id "i1": path\[2\]: moves'):
        _score(split, tmp_path, text, "vlnce-strict", name="p.jsonl")


def test_the_cli_exits_2_on_a_teleport_under_the_strict_profile(
    split: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from vlneval.cli.main import main

    path = tmp_path / "p.json"
    path.write_text(json.dumps({"1": steps(TELEPORT), "2": steps(STRAIGHT)}))
    args = ["score", "--task", "r2r-ce", "--split", "val", "--episodes", str(split[0]),
            "--predictions", str(path)]  # fmt: skip
    assert main([*args, "--profile", "vlnce-strict"]) == 2
    assert 'p.json: episode_id "1": [2].position: moves 707.11 m' in capsys.readouterr().err
    assert main(args) == 0
    assert "warning: 1 move(s) in 1 episode(s) are longer" in capsys.readouterr().err


# ----- unreachable goals ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("policy", "metrics", "over"),
    [
        ("failure", {"NE": 0.5, "OSR": 1.0, "SR": 0.5, "SPL": 0.5, "sDTW": 0.5}, {"NE": 1}),
        ("exclude", {"NE": 0.5, "OSR": 1.0, "SR": 1.0, "SPL": 1.0, "sDTW": 1.0},
         {label: 1 for label in ("NE", "OSR", "SR", "SPL", "sDTW")}),
    ],
)  # fmt: skip
def test_an_episode_that_passed_the_goal_then_left_the_map(
    split: tuple[Path, Path], tmp_path: Path, policy: str, metrics: dict[str, float],
    over: dict[str, int],
) -> None:  # fmt: skip
    """Episode 1 comes within 1 m of the goal (an oracle success), then ends where the goal is
    unreachable: under ``failure`` it fails SR, SPL and sDTW but keeps its oracle success (OSR is
    over the path, spec/metrics.md and VLN-CE's OracleSuccess); NE averages episode 2 alone and
    says so."""
    import dataclasses

    eps = load_vlnce(split[0], gt_path=split[1], task="r2r-ce", split="val")
    path = tmp_path / "p.json"
    near = [[0.0, 0.0, -float(k)] for k in range(4)] + [[0.0, 0.0, -3.5]]
    path.write_text(json.dumps({"1": steps(near, [4, 3, 2, 1, "inf"]),
                                "2": steps(STRAIGHT, [4, 3, 2, 1, 0.5])}))  # fmt: skip
    prof = dataclasses.replace(
        cast(ContinuousProfile, get_profile("vlnce-exact")), unreachable=policy
    )
    s = score_continuous(
        eps, parse_ce_predictions(path, eps), prof, DistanceSource("carried", "carried"),
        show_progress=False,
    ).to_dict()  # fmt: skip
    assert {k: s["metrics"][k] for k in metrics} == pytest.approx(metrics)
    assert s["averaged_over"] == over
    assert s["distance"]["unreachable"]["reachable"] == 1
    assert metric_cell(s, "NE") == "0.50 (1 of 2)"
    assert metric_cell(s, "TL") == "3.75"  # path metrics keep every episode


def test_numpy_positions_and_stops_are_read_as_the_lists_and_bools(
    split: tuple[Path, Path],
) -> None:
    eps = load_vlnce(split[0], gt_path=split[1], task="r2r-ce", split="val")
    plain = {"1": steps(STRAIGHT), "2": steps(STRAIGHT[:3], stop=False)}
    arrays = {
        k: [{**s, "position": np.array(s["position"]), "stop": np.bool_(s["stop"])} for s in v]
        for k, v in plain.items()
    }
    want, got = parse_ce_predictions(plain, eps), parse_ce_predictions(arrays, eps)
    assert np.array_equal(got.positions, want.positions)
    assert got.stopped.tolist() == want.stopped.tolist() == [True, False]
    rxr = [{"instruction_id": "i1", "path": np.array(STRAIGHT)}]
    by_list = [{"instruction_id": "i1", "path": STRAIGHT}]
    assert np.array_equal(
        parse_ce_predictions(rxr, eps).positions, parse_ce_predictions(by_list, eps).positions
    )


def test_rxr_form_names_a_repeated_instruction_once_with_its_count(
    split: tuple[Path, Path], tmp_path: Path
) -> None:
    eps = load_vlnce(split[0], gt_path=split[1], task="r2r-ce", split="val")
    path = tmp_path / "p.jsonl"
    line = json.dumps({"instruction_id": "i1", "path": [[0, 0, 0]]})
    path.write_text("\n".join([line] * 4) + "\n")
    with pytest.raises(InvalidInputError) as exc:
        parse_ce_predictions(path, eps)
    dup = [p for p in exc.value.problems if "duplicate" in p.message]
    assert [(p.episode, p.message) for p in dup] == [
        (
            'line 2: instruction_id "i1"',
            "duplicate id: the file has 4 predictions for it (first on line 1)",
        )
    ]
