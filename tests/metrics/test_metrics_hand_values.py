"""Hand-worked values on tiny graphs: a line graph, repeats, and unreachable nodes."""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
import pytest

from vlneval.metrics import (
    cls,
    collapse_repeats,
    dtw,
    navigation_error,
    ndtw,
    oracle_error,
    oracle_success,
    path_length,
    score_batch,
    sdtw,
    spl,
    success,
)

INF = math.inf
Line = Callable[[int, float], np.ndarray]


def _one(table: np.ndarray, traj: list[int], ref: list[int], goals: list[int], **kw: object):  # type: ignore[no-untyped-def]
    out = score_batch(
        table.ravel(), np.array([0]), np.array([table.shape[0]]), np.array([0]),
        np.array(traj, dtype=np.int64), np.array([0, len(traj)]),
        np.array(ref), np.array([0, len(ref)]), np.array(goals), np.array([0, len(goals)]),
        **kw,  # type: ignore[arg-type]
    )  # fmt: skip
    return {k: float(v[0]) for k, v in out.items()}


def test_line_graph_stopping_exactly_at_the_threshold(line: Line) -> None:
    # Nodes 0..4, 1.5 m apart. Reference 0..4 (6 m), goal 4; the agent stops at 2, 3.0 m short.
    table, traj, ref = line(5, 1.5), [0, 1, 2], [0, 1, 2, 3, 4]
    assert navigation_error(traj, [4], distances=table) == 3.0
    assert oracle_error(traj, [4], distances=table) == 3.0
    assert success(3.0) == 0.0 and success(3.0, inclusive=True) == 1.0
    assert oracle_success(3.0) == 0.0 and oracle_success(3.0, inclusive=True) == 1.0
    assert path_length(traj, distances=table) == 3.0
    assert spl(0, 6.0, 3.0) == 0.0 and spl(1, 6.0, 3.0) == 1.0
    # Accumulated DTW rows r = 0..4 over p = 0, 1, 2 end in [15, 9, 4.5].
    assert dtw(ref, traj, distances=table) == 4.5
    assert ndtw(ref, traj, distances=table) == math.exp(-4.5 / 15)
    assert sdtw(ref, traj, distances=table, success=False) == 0.0
    pc = (3 + math.exp(-0.5) + math.exp(-1.0)) / 5
    epl = pc * 6.0
    assert cls(traj, ref, distances=table) == pytest.approx(pc * epl / (epl + abs(epl - 3.0)))

    strict = _one(table, traj, ref, [4])
    inclusive = _one(table, traj, ref, [4], success_inclusive=True, sdtw_inclusive=True)
    assert strict["success"] == strict["oracle_success"] == strict["spl"] == strict["sdtw"] == 0
    assert inclusive["success"] == inclusive["oracle_success"] == inclusive["spl"] == 1.0
    assert inclusive["sdtw"] == math.exp(-0.3)
    # sDTW's comparison is its own: inclusive sDTW with a strict SR (google-research r4r).
    assert _one(table, traj, ref, [4], sdtw_inclusive=True)["sdtw"] == math.exp(-0.3)
    assert _one(table, traj, ref, [4], success_inclusive=True)["sdtw"] == 0.0


def test_repeats_change_dtw_only_when_not_collapsed(line: Line) -> None:
    table, ref, traj = line(3, 1.5), [0, 2], [0, 1, 1, 2]
    assert collapse_repeats(traj).tolist() == [0, 1, 2]
    assert dtw(ref, traj, distances=table) == 3.0
    assert dtw(ref, collapse_repeats(traj), distances=table) == 1.5
    collapsed = _one(table, traj, ref, [2])
    raw = _one(table, traj, ref, [2], collapse_repeats=False)
    assert collapsed["ndtw"] == math.exp(-0.25) and raw["ndtw"] == math.exp(-0.5)
    assert collapsed["cls"] == raw["cls"] == cls(traj, ref, distances=table)
    for out in (collapsed, raw):
        assert out["path_length"] == 3.0 and out["steps"] == 3.0 and out["repeats"] == 1.0


def test_shortest_length_is_from_the_reference_start_to_the_nearest_goal(line: Line) -> None:
    out = _one(line(6, 1.0), [1, 2, 3], [1, 2, 3, 4], [0, 4, 5])
    assert out["shortest_length"] == 1.0 and out["reference_length"] == 3.0
    assert out["nav_error"] == 1.0 and out["oracle_error"] == 1.0


# Nodes 0 - 1 (2 m) and an island, node 2, that nothing reaches.
UNREACHABLE = np.array([[0, 2, INF], [2, 0, INF], [INF, INF, 0]], dtype=np.float64)


def test_unreachable_goal() -> None:
    out = _one(UNREACHABLE, [0, 1], [0, 1], [2])
    assert out["nav_error"] == out["oracle_error"] == out["shortest_length"] == INF
    assert out["success"] == out["oracle_success"] == out["spl"] == out["sdtw"] == 0.0
    assert out["ndtw"] == 1.0 and out["cls"] == 1.0  # fidelity ignores the goal
    assert navigation_error([0, 1], [2], distances=UNREACHABLE) == INF
    assert success(INF) == 0.0 and spl(0, INF, 2.0) == 0.0


def test_trajectory_in_another_component_than_the_reference() -> None:
    out = _one(UNREACHABLE, [0, 1], [2], [2])
    assert out["dtw"] == INF and out["ndtw"] == 0.0 and out["cls"] == 0.0
    assert ndtw([2], [0, 1], distances=UNREACHABLE) == 0.0
    assert cls([0, 1], [2], distances=UNREACHABLE) == 0.0


def test_reference_with_an_unreachable_hop() -> None:
    out = _one(UNREACHABLE, [0, 1], [0, 2], [2], spl_reference="reference")
    assert out["reference_length"] == INF and out["spl"] == 0.0
    assert out["dtw"] == INF and out["ndtw"] == 0.0 and out["cls"] == 0.0
    assert cls([0, 1], [0, 2], distances=UNREACHABLE) == 0.0


def test_trajectory_jumping_to_an_unreachable_goal() -> None:
    out = _one(UNREACHABLE, [0, 2], [0, 2], [2])
    assert out["path_length"] == INF and out["nav_error"] == 0.0 and out["success"] == 1.0
    assert out["spl"] == 0.0  # ℓ = d(0, 2) = inf
    assert _one(UNREACHABLE, [2, 0], [2], [2])["spl"] == 0.0  # ℓ = 0, TL = inf
    assert spl(1, 4.0, INF) == 0.0 and spl(1, INF, INF) == 0.0


def test_no_nan_anywhere_with_unreachable_pairs() -> None:
    cases = [
        ([0, 1], [0, 1], [2]),
        ([0, 1], [2], [2]),
        ([0, 1], [0, 2], [2]),
        ([0, 2], [0, 2], [2]),
    ]
    cases += [([], [0, 2], [2]), ([2, 2], [2, 0], [0, 1])]
    for traj, ref, goals in cases:
        for mode in ("shortest", "reference"):
            for floor in (0.0, 0.01):
                out = _one(UNREACHABLE, traj, ref, goals, spl_reference=mode, spl_floor=floor)
                assert not any(math.isnan(v) for v in out.values()), (traj, ref, goals, out)


def test_empty_trajectory() -> None:
    out = _one(UNREACHABLE, [], [0, 1], [1])
    assert out["nav_error"] == out["oracle_error"] == out["dtw"] == INF
    for key in ("success", "oracle_success", "path_length", "spl", "ndtw", "sdtw", "cls"):
        assert out[key] == 0.0, key
    assert out["steps"] == 0.0 and out["repeats"] == 0.0
    assert ndtw([0, 1], [], distances=UNREACHABLE) == 0.0
    assert dtw([0, 1], [], distances=UNREACHABLE) == INF
    assert cls([], [0, 1], distances=UNREACHABLE) == 0.0
    assert path_length([], distances=UNREACHABLE) == 0.0


def test_spl_edge_cases() -> None:
    assert spl(True, 0.0, 0.0) == 1.0  # CVDN rule: already at the goal, did not move
    assert spl(False, 0.0, 0.0) == 0.0
    assert spl(True, 0.0, 2.0) == 0.0
    assert spl(True, 0.0, 0.0, floor=0.01) == 0.0  # the EnvDrop/DUET formula
    assert spl(True, 2.0, 1.0) == 1.0  # a shortcut never scores above 1
    assert spl(1, 0.005, 0.002, floor=0.01) == 0.5


def test_single_node_reference_and_trajectory(line: Line) -> None:
    table = line(3, 1.0)
    assert cls([1], [1], distances=table) == 1.0  # EPL + |EPL - L(P)| = 0: LS = 1
    assert ndtw([1], [1], distances=table) == 1.0
    assert cls([1], [2], distances=table) == math.exp(-1 / 3)


def test_empty_batch_and_unchecked_batch_agree(kit, score_world) -> None:  # type: ignore[no-untyped-def]
    world = kit.random_world(7, episodes=40)
    assert all(v.shape == (0,) for v in score_world(kit.World(world.tables)).values())
    checked, unchecked = score_world(world), score_world(world, validate=False)
    for key in checked:
        np.testing.assert_array_equal(checked[key], unchecked[key])
