"""The worked examples of spec/metrics.md, through both the single-episode and batch APIs."""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
import pytest

from vlneval.metrics import cls, dtw, ndtw, path_length, score_batch, sdtw, spl, success

S, A, B, G = 0, 1, 2, 3
REFERENCE = [S, A, B, G]
EXECUTED = {"along": [S, A, B, G], "shortcut": [S, G]}


def test_example_1_single_episode_values(square: np.ndarray) -> None:
    along, shortcut = EXECUTED["along"], EXECUTED["shortcut"]
    assert path_length(along, distances=square) == 12.0
    assert path_length(shortcut, distances=square) == 4.0
    assert spl(1, 4.0, 12.0) == 4.0 / 12.0
    assert spl(1, 4.0, 4.0) == 1.0
    assert cls(along, REFERENCE, distances=square) == 1.0
    assert ndtw(REFERENCE, along, distances=square) == 1.0
    assert dtw(REFERENCE, shortcut, distances=square) == 8.0
    assert ndtw(REFERENCE, shortcut, distances=square) == math.exp(-8 / 12)
    assert round(ndtw(REFERENCE, shortcut, distances=square), 4) == 0.5134


def test_example_1_cls_intermediate_values(square: np.ndarray) -> None:
    pc = (2 + 2 * math.exp(-4 / 3)) / 4
    epl = pc * 12
    ls = epl / (epl + abs(epl - 4))
    assert round(pc, 4) == 0.6318 and round(epl, 4) == 7.5816 and round(ls, 4) == 0.6792
    value = cls(EXECUTED["shortcut"], REFERENCE, distances=square)
    assert value == pytest.approx(pc * ls, rel=1e-15)
    assert round(value, 4) == 0.4291


def _batch(square: np.ndarray, **options: object) -> dict[str, np.ndarray]:
    along, shortcut = EXECUTED["along"], EXECUTED["shortcut"]
    return score_batch(
        square.ravel(),
        np.array([0]),
        np.array([4]),
        np.array([0, 0]),
        np.array(along + shortcut),
        np.array([0, 4, 6]),
        np.array(REFERENCE * 2),
        np.array([0, 4, 8]),
        np.array([G, G]),
        np.array([0, 1, 2]),
        **options,  # type: ignore[arg-type]
    )


@pytest.mark.parametrize("collapse", [True, False])
def test_example_1_batch(square: np.ndarray, collapse: bool) -> None:
    out = _batch(square, collapse_repeats=collapse)
    assert out["path_length"].tolist() == [12.0, 4.0]
    assert out["shortest_length"].tolist() == [4.0, 4.0]
    assert out["reference_length"].tolist() == [12.0, 12.0]
    assert out["spl"].tolist() == [4.0 / 12.0, 1.0]
    assert out["dtw"].tolist() == [0.0, 8.0]
    assert out["ndtw"].tolist() == [1.0, math.exp(-8 / 12)]
    assert out["cls"][0] == 1.0
    assert out["cls"][1] == cls(EXECUTED["shortcut"], REFERENCE, distances=square)
    assert out["nav_error"].tolist() == [0.0, 0.0]
    assert out["success"].tolist() == [1.0, 1.0]
    assert out["sdtw"].tolist() == out["ndtw"].tolist()
    assert out["steps"].tolist() == [3.0, 1.0]
    assert out["repeats"].tolist() == [0.0, 0.0]


def test_example_1_r2r_duet_spl(square: np.ndarray) -> None:
    out = _batch(square, spl_reference="reference", spl_floor=0.01, collapse_repeats=False)
    assert out["shortest_length"].tolist() == [12.0, 12.0]
    assert out["spl"].tolist() == [1.0, 1.0]
    assert spl(1, 12.0, 12.0, floor=0.01) == 1.0
    assert spl(1, 12.0, 4.0, floor=0.01) == 1.0


def test_example_2_sr_and_spl(line: Callable[[int, float], np.ndarray]) -> None:
    # Line 0-1-...-7, 1 m edges; start 0, goal 2 (shortest 2 m); paths 1x, 2x, 2x, a failure.
    table = line(8, 1.0)
    paths = [[0, 1, 2], [0, 1, 0, 1, 2], [0, 1, 2, 3, 2], [0, 1, 2, 3, 4, 5]]
    tl = [path_length(p, distances=table) for p in paths]
    assert tl == [2.0, 4.0, 4.0, 5.0]
    sr = [success(table[p[-1], 2]) for p in paths]
    spls = [spl(s, 2.0, t) for s, t in zip(sr, tl, strict=True)]
    assert np.mean(sr) == 0.75 and np.mean(spls) == 0.50

    lens = np.cumsum([0] + [len(p) for p in paths])
    out = score_batch(
        table.ravel(), np.array([0]), np.array([8]), np.zeros(4, np.int32),
        np.concatenate(paths), lens, np.array([0, 1, 2] * 4), np.arange(0, 13, 3),
        np.full(4, 2), np.arange(5),
    )  # fmt: skip
    assert out["success"].mean() == 0.75 and out["spl"].mean() == 0.50


def test_example_3_sdtw_is_a_mean_of_products() -> None:
    # Node 0 is the reference and goal of episode 0; 1 and 2 sit off it so that nDTW is exactly
    # 0.9 and 0.7 (m = 1, δ = 3); episode 1's goal is node 3, 10 m away: it fails.
    x1, x2 = -3 * math.log(0.9), -3 * math.log(0.7)
    pos = np.array([0.0, x1, -x2, 10.0])
    table = np.abs(pos[:, None] - pos[None, :])
    nd = [ndtw([0], [1], distances=table), ndtw([0], [2], distances=table)]
    assert nd == pytest.approx([0.9, 0.7], rel=1e-12)
    per_episode = [
        sdtw([0], [1], distances=table, success=True),
        sdtw([0], [2], distances=table, success=False),
    ]
    assert np.mean(per_episode) == pytest.approx(0.45, rel=1e-12)

    out = score_batch(
        table.ravel(), np.array([0]), np.array([4]), np.zeros(2, np.int32),
        np.array([1, 2]), np.arange(3), np.array([0, 0]), np.arange(3),
        np.array([0, 3]), np.arange(3),
    )  # fmt: skip
    assert out["success"].tolist() == [1.0, 0.0]
    assert out["sdtw"].mean() == pytest.approx(0.45, rel=1e-12)
    assert out["success"].mean() * out["ndtw"].mean() == pytest.approx(0.40, rel=1e-12)
