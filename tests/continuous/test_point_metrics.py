"""Point-distance metrics: hand values, fastdtw reproduced exactly, bad input."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from vlneval.errors import InvalidInputError, UnknownNameError
from vlneval.metrics.continuous import (
    drop_repeats,
    fast_dtw,
    ndtw_from_dtw,
    point_dtw,
    point_ndtw,
    point_path_length,
)

GOLDEN = json.loads((Path(__file__).parent / "fastdtw_golden.json").read_text())


def test_path_length_by_hand() -> None:
    # 3-4-5 triangle step, a repeat (adds 0), a 1 m climb.
    assert point_path_length([[0, 0, 0], [3, 4, 0], [3, 4, 0], [3, 4, 1]]) == 6.0
    assert point_path_length([[1, 2, 3]]) == 0.0
    assert point_path_length(np.zeros((0, 3))) == 0.0


def test_drop_repeats_is_exact_and_consecutive_only() -> None:
    p = [[0, 0, 0], [0, 0, 0], [1e-9, 0, 0], [0, 0, 0]]
    assert drop_repeats(p).tolist() == [[0, 0, 0], [1e-9, 0, 0], [0, 0, 0]]


def test_dtw_by_hand() -> None:
    # R = (0,0),(1,0),(2,0); P = (0,0),(2,0). Costs [[0,2],[1,1],[2,0]] -> accumulated
    # [[0,2],[1,1],[3,1]]: DTW = 1.
    ref = [[0, 0], [1, 0], [2, 0]]
    assert point_dtw(ref, [[0, 0], [2, 0]]) == 1.0
    assert point_dtw([[0, 0], [2, 0]], ref) == 1.0  # symmetric
    assert point_dtw(ref, np.zeros((0, 2))) == math.inf
    # nDTW normalises by the NUMBER of reference points: exp(-1 / (3 * 3)).
    assert point_ndtw(ref + [[2, 0]], [[0, 0], [2, 0]], threshold=3.0) == pytest.approx(
        math.exp(-1 / 12)
    )
    assert ndtw_from_dtw(math.inf, 3) == 0.0


def test_ndtw_drops_repeats_before_dtw() -> None:
    ref = [[0.0, 0, 0], [1, 0, 0], [2, 0, 0]]
    # Without dropping, the repeated (1,0,0) would align twice at cost 0: same here, but a
    # repeated off-path point would cost twice.
    off = [[0.0, 0, 0], [1, 1, 0], [1, 1, 0], [1, 1, 0], [2, 0, 0]]
    once = [[0.0, 0, 0], [1, 1, 0], [2, 0, 0]]
    assert point_ndtw(ref, off) == point_ndtw(ref, once) == pytest.approx(math.exp(-1 / 9))
    assert point_ndtw(ref, np.zeros((0, 3))) == 0.0


@pytest.mark.parametrize("variant", ["compiled", "python"])
def test_fastdtw_reproduces_the_package(variant: str) -> None:
    for case in GOLDEN["cases"]:
        got = fast_dtw(case["x"], case["y"], radius=case["radius"], variant=variant)
        assert got == pytest.approx(case[variant], abs=1e-9), case
        assert got >= case["exact"] - 1e-9
    assert any(abs(c["compiled"] - c["python"]) > 1e-9 for c in GOLDEN["cases"])


def test_fastdtw_against_installed_package() -> None:
    fastdtw = pytest.importorskip("fastdtw")
    compiled = fastdtw.fastdtw.__module__.endswith("_fastdtw")
    rng = np.random.default_rng(7)

    def euclid(a: object, b: object) -> float:
        return float(np.linalg.norm(np.array(b) - np.array(a), ord=2))

    for _ in range(150):
        x = np.cumsum(rng.normal(0, 0.3, (int(rng.integers(1, 60)), 3)), axis=0)
        y = np.cumsum(rng.normal(0, 0.3, (int(rng.integers(1, 60)), 3)), axis=0)
        want = fastdtw.fastdtw(x.tolist(), y.tolist(), radius=1, dist=euclid)[0]
        got = fast_dtw(x, y, radius=1, variant="compiled" if compiled else "python")
        assert got == pytest.approx(want, abs=1e-9)


def test_fastdtw_is_exact_with_a_wide_radius() -> None:
    rng = np.random.default_rng(3)
    x, y = rng.normal(size=(17, 3)), rng.normal(size=(23, 3))
    assert fast_dtw(x, y, radius=30) == pytest.approx(point_dtw(x, y))
    assert fast_dtw(x, y) >= point_dtw(x, y) - 1e-12


def test_bad_input_names_the_problem() -> None:
    with pytest.raises(InvalidInputError, match=r"trajectory\[1\] holds NaN"):
        point_dtw([[0, 0, 0]], [[0, 0, 0], [math.nan, 0, 0]])
    with pytest.raises(InvalidInputError, match="same dimension"):
        point_dtw([[0, 0, 0]], [[0, 0]])
    with pytest.raises(InvalidInputError, match="radius"):
        fast_dtw([[0, 0]], [[0, 0]], radius=0)
    with pytest.raises(UnknownNameError, match="did you mean 'python'"):
        fast_dtw([[0, 0]], [[0, 0]], variant="pyton")
    with pytest.raises(InvalidInputError, match="at least one point"):
        point_dtw(np.zeros((0, 3)), [[0, 0, 0]])
