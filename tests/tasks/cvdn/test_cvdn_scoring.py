"""NDH scoring rules on the hand-worked fixture (see tests/tasks/cvdn/fixture.py for the distances)."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from tests.tasks.cvdn.fixture import (
    INSTANCES,
    TRAJECTORIES,
    instance,
    make_root,
    predictions,
    stringify,
)
from vlneval.errors import InvalidInputError
from vlneval.evaluation import evaluate


def _score(tmp: Path, trajectories=None, instances=None, **kw):  # type: ignore[no-untyped-def]
    root = make_root(tmp / "root", instances)
    return evaluate("ndh", "val_seen", predictions(tmp, trajectories), root=root, **kw)


def _rows(result) -> dict[str, dict]:  # type: ignore[no-untyped-def]
    return {str(row["inst_idx"]): row for row in result.rows()}


def test_the_api_rows_write_ndh_ids_as_json_integers(tmp_path: Path) -> None:
    """``Result.rows()`` gives the ids as ``score --per-episode`` writes them: NDH's as the
    integers its predictions files hold."""
    assert [row["inst_idx"] for row in _score(tmp_path).rows()][:3] == [1, 2, 3]


def test_no_dtw_is_computed_for_metrics_ndh_never_reports(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from vlneval.metrics import _kernels

    def refused(*args: object) -> None:
        raise AssertionError("DTW computed for a profile that reports no path fidelity")

    monkeypatch.setattr(_kernels, "dtw_batch", refused)
    r = _score(tmp_path)
    assert r.metrics["SPL"] == pytest.approx(2 / 3) and r.metrics["GP"] == pytest.approx(8 / 3)
    assert not {"dtw", "ndtw", "sdtw", "cls"} & set(r.per_episode)


def test_planner_path_hand_values(tmp_path: Path) -> None:
    r = _score(tmp_path)
    rows = _rows(r)
    # 1: stops on the planner goal B: NE 0, TL 6 = d(S, B), SPL 1; GP = d(S,{C,D}) 9 - d(B,{C,D}) 3.
    assert rows["1"]["nav_error"] == 0 and rows["1"]["path_length"] == 6 and rows["1"]["spl"] == 1
    assert rows["1"]["goal_progress"] == 6.0
    # 2: the plan is not to move and the agent does not: shortest length 0, TL 0 -> SPL 1.
    assert (
        rows["2"]["shortest_length"] == 0
        and rows["2"]["spl"] == 1
        and rows["2"]["goal_progress"] == 0
    )
    # 3: ends at D, 4 m from the planner goal C after passing it: SR 0, OSR 1; GP 9 - 7 = 2.
    assert (
        rows["3"]["nav_error"] == 4
        and rows["3"]["success"] == 0
        and rows["3"]["oracle_success"] == 1
    )
    assert rows["3"]["path_length"] == 10 and rows["3"]["goal_progress"] == 2
    m = r.metrics
    assert m["TL"] == pytest.approx(16 / 3) and m["NE"] == pytest.approx(4 / 3)
    assert m["SR"] == pytest.approx(2 / 3) and m["OSR"] == 1.0 and m["SPL"] == pytest.approx(2 / 3)
    assert m["GP"] == pytest.approx(8 / 3) and m["OPSR"] == 1.0
    assert list(m) == ["TL", "NE", "OSR", "SR", "SPL", "GP", "OPSR"]
    assert r.to_dict()["path_type"] == "planner_path" and all(
        c["holds"] for c in r.to_dict()["checks"]
    )
    assert any("trusted_path" in w for w in r.warnings)


def test_trusted_path_hand_values(tmp_path: Path) -> None:
    r = _score(tmp_path, options={"path_type": "trusted_path"})
    rows = _rows(r)
    # 1: trusted = player (B is on the player's path after its start); goal C is exactly 3 m from
    # the final B: strict < 3 fails, and no visited viewpoint is closer.
    assert (
        rows["1"]["nav_error"] == 3
        and rows["1"]["success"] == 0
        and rows["1"]["oracle_success"] == 0
    )
    # 2: the planner goal S is only the player's start: trusted = planner, goal S.
    assert rows["2"]["nav_error"] == 0 and rows["2"]["spl"] == 1
    # 3: trusted = player, goal E: NE d(D, E) = 7, nearest visited C is 3 m away: OSR 0.
    assert rows["3"]["nav_error"] == 7 and rows["3"]["oracle_error"] == 3
    m = r.metrics
    assert m["SR"] == pytest.approx(1 / 3) and m["OSR"] == pytest.approx(1 / 3)
    assert m["SPL"] == pytest.approx(1 / 3) and m["NE"] == pytest.approx(10 / 3)
    # Goal progress and the planner oracle do not depend on the path type.
    assert m["GP"] == pytest.approx(8 / 3) and m["OPSR"] == 1.0
    assert not any("trusted_path" in w for w in r.warnings)


def test_player_path_hand_values(tmp_path: Path) -> None:
    r = _score(tmp_path, options={"path_type": "player_path"})
    rows = _rows(r)
    assert (
        rows["2"]["nav_error"] == 3 and rows["2"]["success"] == 0
    )  # player goal A, agent stayed on S
    m = r.metrics
    assert (
        m["SR"] == 0
        and m["OSR"] == 0
        and m["NE"] == pytest.approx(13 / 3)
        and m["GP"] == pytest.approx(8 / 3)
    )


def test_zero_distance_spl_rule(tmp_path: Path) -> None:
    """ℓ = 0: SPL is 1 only if the agent did not move (TL = 0), although NE = 0 both times."""
    r = _score(tmp_path, {1: ["S", "A", "B"], 2: ["S", "A", "S"], 3: ["A", "B", "C", "D"]})
    row = _rows(r)["2"]
    assert (
        row["success"] == 1
        and row["shortest_length"] == 0
        and row["path_length"] == 6
        and row["spl"] == 0
    )
    assert row["goal_progress"] == 0  # back on the start, which is in the end region


def test_negative_goal_progress_and_repeats(tmp_path: Path) -> None:
    # 3 walks away from the end region E: d(A, E) 9 -> d(S, E) 12; turning in place repeats A.
    r = _score(tmp_path, {1: ["S", "A", "B"], 2: ["S"], 3: ["A", "A", "S"]})
    row = _rows(r)["3"]
    assert (
        row["goal_progress"] == -3 and row["path_length"] == 3 and row["repeated_viewpoints"] == 1
    )


def test_oracle_planner_success_uses_the_planner_goal(tmp_path: Path) -> None:
    # 1 walks S, A and back: 6 m from B (planner goal) at best -> OPSR 0 for it; C is 6 m away too.
    r = _score(
        tmp_path,
        {1: ["S", "A", "S"], 2: ["S"], 3: ["A", "B", "C", "D"]},
        options={"path_type": "player_path"},
    )
    row = _rows(r)["1"]
    assert (
        row["oracle_plan_error"] == 3 and row["oracle_plan_success"] == 0
    )  # nearest visited A is 3 m from B
    assert r.metrics["OPSR"] == pytest.approx(2 / 3)


def test_string_valued_file_scores_the_same(tmp_path: Path) -> None:
    native = _score(tmp_path / "a").metrics
    r = _score(tmp_path / "b", instances=stringify(INSTANCES))
    assert r.metrics == native
    assert any("ast.literal_eval" in w for w in r.warnings)


def test_subset_reports_partial(tmp_path: Path) -> None:
    r = _score(tmp_path, {1: ["S", "A", "B"], 3: ["A", "B", "C", "D"]}, subset=True)
    assert r.partial and (
        r.protocol["episodes"],
        r.protocol["n_expected"],
        r.protocol["partial"],
    ) == (2, 3, True)
    assert r.metrics["GP"] == pytest.approx(4.0)


def test_unknown_ids_are_a_warning(tmp_path: Path) -> None:
    trajs = {1: ["S", "A", "B"], 2: ["S"], 3: ["A", "B", "C", "D"], 99: ["S"]}
    r = _score(tmp_path, trajs)
    assert any("not in the split" in w and "99" in w for w in r.warnings)


def test_end_region_off_the_graph_is_an_error(tmp_path: Path) -> None:
    instances = [*INSTANCES[:2], instance(3, ["A", "B", "C"], ["A", "B", "C", "E"], ["X"])]
    with pytest.raises(
        InvalidInputError,
        match="inst_idx 3: end_panos: viewpoint X is included in scan lane but has no",
    ):
        _score(tmp_path, instances=instances)


def test_unreachable_end_region_is_counted_not_averaged(tmp_path: Path) -> None:
    """An end region in another component: GP is undefined (inf - inf), left out of the mean."""
    instances = [*INSTANCES[:2], instance(3, ["A", "B", "C"], ["A", "B", "C", "E"], ["F"])]
    r = _score(tmp_path, instances=instances)
    row = _rows(r)["3"]
    assert math.isnan(row["goal_progress"]) and row["unreachable"] == 1
    assert r.metrics["GP"] == pytest.approx(3.0)  # (6 + 0) / 2
    assert any(w.startswith("GP: 1 episode(s)") for w in r.warnings)
    # GP has no success: the warning says nothing of it
    assert (
        "GP: 1 episode(s) have an infinite value (a viewpoint of the trajectory has no path to "
        "the goal); GP averages the other 2" in r.warnings
    )
    assert r.to_dict()["averaged_over"]["GP"] == 2


def test_numpy_integer_ids_are_the_ints_they_hold(tmp_path: Path) -> None:
    """An agent's ``np.int64`` ids (records built from arrays) score as the integers they hold,
    as the R2R family reads them; one not in the split is named bare, and an id of another
    numpy type is refused as the Python value it holds."""
    root = make_root(tmp_path / "root")
    plain = [{"inst_idx": k, "trajectory": [[v, 0.0, 0.0] for v in vps]}
             for k, vps in TRAJECTORIES.items()]  # fmt: skip
    records = [{**r, "inst_idx": np.int64(r["inst_idx"])} for r in plain]
    got = evaluate("ndh", "val_seen", records, root=root)
    assert got.metrics == evaluate("ndh", "val_seen", plain, root=root).metrics
    assert isinstance(records[0]["inst_idx"], np.int64)  # the caller's records kept
    stray = evaluate("ndh", "val_seen", [*records, {**plain[0], "inst_idx": np.int64(99)}],
                     root=root)  # fmt: skip
    assert "1 prediction(s) with ids not in the split were ignored (first: 99)" in stray.warnings
    bad = [*records[:2], {**plain[2], "inst_idx": np.float64(3.5)}]
    with pytest.raises(InvalidInputError) as exc:
        evaluate("ndh", "val_seen", bad, root=root)
    assert (
        str(exc.value)
        == "error: <records>: record 2: inst_idx must be a JSON integer, got float 3.5"
    )


def test_the_summary_gives_no_percent_unit_for_a_fraction(tmp_path: Path) -> None:
    summary = _score(tmp_path).to_dict()
    assert "units" not in summary and 0.0 <= summary["metrics"]["OPSR"] <= 1.0
