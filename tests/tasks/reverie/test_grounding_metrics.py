"""The pure object metrics: hand values, agreement with the SPL kernel, bad arguments."""

from __future__ import annotations

import math

import numpy as np
import pytest

from vlneval.errors import InvalidInputError
from vlneval.metrics import spl
from vlneval.metrics.grounding import (
    INFO,
    duet_normalised,
    length_weighted,
    localisation_success,
    official_normalised,
    point_in_polygon,
    remote_grounding_success,
    visibility_success,
)

SQUARE = [(0.0, 0.0), (1.0, 0.0), (1.0, 1.0), (0.0, 1.0)]


def test_rgs_is_string_equality() -> None:
    got = remote_grounding_success([1, "1", 2, None, "01"], ["1", 1, "3", "None", "1"])
    assert got.tolist() == [1.0, 1.0, 0.0, 0.0, 0.0]
    with pytest.raises(InvalidInputError, match="2 predictions for 1 targets"):
        remote_grounding_success([1, 2], ["1"])


def test_length_weighted_agrees_with_the_spl_kernel() -> None:
    rng = np.random.default_rng(7)
    n = 400
    s = rng.integers(0, 2, n).astype(float)
    ell = rng.choice([0.0, 1.0, 2.5, 7.0, math.inf], n)
    tl = rng.choice([0.0, 0.5, 2.5, 9.0, math.inf], n)
    for floor in (0.0, 0.01):
        got = length_weighted(s, ell, tl, floor=floor)
        want = [spl(a, b, c, floor=floor) for a, b, c in zip(s, ell, tl, strict=True)]
        assert got.tolist() == want


@pytest.mark.parametrize(
    ("args", "kw", "match"),
    [
        (([1, 2], [1.0, 1.0], [1.0, 1.0]), {}, "success must be 0 or 1"),
        (([1], [1.0, 2.0], [1.0]), {}, "1-D of one length"),
        (([1], [-1.0], [1.0]), {}, "shortest_length must be >= 0"),
        (([1], [1.0], [math.nan]), {}, "path_length must be >= 0"),
        (([1], [1.0], [1.0]), {"floor": -1.0}, "floor must be finite"),
    ],
)
def test_length_weighted_bad_arguments(args, kw, match) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(InvalidInputError, match=match):
        length_weighted(*args, **kw)


def test_visibility_success_hand_values_and_errors() -> None:
    s, o = visibility_success([True, False, False, True, True], [0, 2, 3, 5])
    assert s.tolist() == [0.0, 0.0, 1.0] and o.tolist() == [1.0, 0.0, 1.0]
    s, o = visibility_success([], [0])
    assert s.tolist() == [] and o.tolist() == []
    with pytest.raises(InvalidInputError, match="at least one position"):
        visibility_success([True], [0, 0, 1])
    with pytest.raises(InvalidInputError, match="offsets must run from 0"):
        visibility_success([True, False], [0, 1])


def test_point_in_polygon_is_strict() -> None:
    assert point_in_polygon(0.5, 0.5, SQUARE)
    for x, y in [(0.0, 0.5), (1.0, 1.0), (0.5, 0.0), (1.5, 0.5), (math.nan, 0.5)]:
        assert not point_in_polygon(x, y, SQUARE)
    concave = [(0, 0), (4, 0), (4, 4), (2, 1), (0, 4)]  # a notch from the top
    assert point_in_polygon(1.0, 1.0, concave) and not point_in_polygon(2.0, 3.0, concave)
    with pytest.raises(InvalidInputError, match=r"expected \(k >= 3, 2\) vertices"):
        point_in_polygon(0.0, 0.0, [(0, 0), (1, 1)])


def test_localisation_wrap_rules() -> None:
    seam = [(0.97, 0.55), (0.03, 0.55), (0.03, 0.45), (0.97, 0.45)]
    # official: the polygon spans x in [0.03, 0.97], the wrong side of the panorama
    assert [localisation_success(x, 0.5, seam) for x in (0.99, 0.01, 0.5)] == [False, False, True]
    assert [localisation_success(x, 0.5, seam, wrap=True) for x in (0.99, 0.01, 0.5)] == [
        True,
        True,
        False,
    ]
    plain = [(0.4, 0.6), (0.6, 0.6), (0.6, 0.4), (0.4, 0.4)]
    # away from the seam, wrap only adds the point's copies one turn away
    assert [localisation_success(x, 0.5, plain, wrap=True) for x in (0.5, 0.39, 1.5, -0.5)] == [
        True, False, True, True
    ]  # fmt: skip
    assert localisation_success(0.5, 0.5, plain) and not localisation_success(1.5, 0.5, plain)
    with pytest.raises(InvalidInputError, match="expected 4 corners"):
        localisation_success(0.5, 0.5, SQUARE[:3])


def test_angle_normalisations() -> None:
    h, e = official_normalised([0.0, math.pi, 7.0], [-math.pi / 2, 0.0, math.pi / 2])
    assert h.tolist() == pytest.approx([0.0, 0.5, 7.0 / (2 * math.pi)])
    assert e.tolist() == pytest.approx([0.25, 0.5, 0.75])
    h, e = duet_normalised([7.0, -math.pi / 2], [-math.pi, 3 * math.pi / 2])
    assert h.tolist() == pytest.approx([(7.0 - 2 * math.pi) / (2 * math.pi), 0.75])
    # DUET wraps elevation to (-π, π]: -π -> π -> 1.0; 3π/2 -> -π/2 -> 0.25
    assert e.tolist() == pytest.approx([1.0, 0.25])


def test_metadata() -> None:
    labels = {i.label: i for i in INFO}
    assert set(labels) == {"RGS", "RGSPL", "SR", "det_SR", "det_SPL"}
    assert all(i.higher_is_better and i.unit == "fraction" for i in INFO)
