"""Candidate lists on a tiny star graph, worked out by hand from spec/graphs.md.

Neighbours of C (2 m away, headings clockwise from +y): A 10°, B 39.5°, D 40.5°, E −38°, F 180°,
and G at 5° but 1 m up (elevation atan2(1, 2) = 26.565°). The camera's horizontal half-angle is
40° (the simulator's ``vfov · 640 / 480 / 2``), so at heading 0 B (39.5°) is in view and D
(40.5°) is not. Egocentric lists are sorted by ``sqrt(rel_heading² + rel_elevation²)``.
"""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from tests.envs.graph.helpers import star
from vlneval.graph.tables import COS_HALF_HFOV, ScanTables, build_tables

G_ELEV = math.degrees(math.atan2(1.0, 2.0))  # 26.565°


@pytest.fixture(scope="module")
def tables(tmp_path_factory: pytest.TempPathFactory) -> ScanTables:
    _, graphs = star(tmp_path_factory.mktemp("star"))
    return build_tables(graphs.graph("star"))


def names(t: ScanTables, panoramic: bool, h: int, e: int, at: str = "C") -> list[str]:
    node = t.graph.index[at]
    return [c.viewpoint for c in t.candidates(panoramic, node, h, e)]


def test_half_field_of_view_is_the_simulators_linear_40_degrees() -> None:
    assert math.isclose(COS_HALF_HFOV, math.cos(math.radians(40)), rel_tol=1e-12)


@pytest.mark.parametrize(
    ("h", "e", "expected"),
    [
        # heading 0, level: A 10°, G sqrt(5² + 26.565²) = 27.03°, E 38°, B 39.5°; D, F out of view
        (0, 1, ["C", "A", "G", "E", "B"]),
        # looking up 30°: G sqrt(5² + 3.435²) = 6.07°, A sqrt(10² + 30²) = 31.6°, E 48.4°, B 49.6°
        (0, 2, ["C", "G", "A", "E", "B"]),
        # looking down 30°: A 31.6°, E 48.4°, B 49.6°, G sqrt(5² + 56.565²) = 56.8°
        (0, 0, ["C", "A", "E", "B", "G"]),
        # heading 30°: B 9.5°, D 10.5°, A −20°, G sqrt(25² + 26.565²) = 36.5°; E (−68°) out
        (1, 1, ["C", "B", "D", "A", "G"]),
        # heading 180°: only F
        (6, 1, ["C", "F"]),
    ],
)
def test_egocentric_lists(tables: ScanTables, h: int, e: int, expected: list[str]) -> None:
    assert names(tables, False, h, e) == expected


def test_egocentric_geometry(tables: ScanTables) -> None:
    c = tables.candidates(False, tables.graph.index["C"], 1, 1)
    assert c[0] == ("C", 0.0, 0.0, 0.0, 13)
    rel = {
        x.viewpoint: (math.degrees(x.rel_heading), math.degrees(x.rel_elevation), x.distance)
        for x in c[1:]
    }
    assert rel["B"] == pytest.approx((9.5, 0.0, 2.0), abs=1e-5)
    assert rel["A"] == pytest.approx((-20.0, 0.0, 2.0), abs=1e-5)
    assert rel["G"] == pytest.approx((-25.0, G_ELEV, math.sqrt(5.0)), abs=1e-5)
    assert all(x.view_index == 13 for x in c)


def test_egocentric_relative_elevation_follows_the_camera(tables: ScanTables) -> None:
    up = {x.viewpoint: math.degrees(x.rel_elevation) for x in tables.candidates(False, 0, 0, 2)}
    assert up["G"] == pytest.approx(G_ELEV - 30.0, abs=1e-5)
    assert up["A"] == pytest.approx(-30.0, abs=1e-5)


def test_panoramic_list_sorted_by_absolute_relative_heading(tables: ScanTables) -> None:
    # every neighbour is a candidate: |rel heading| G 5, A 10, E 38, B 39.5, D 40.5, F 180
    assert names(tables, True, 0, 1) == ["C", "G", "A", "E", "B", "D", "F"]
    # facing 30°: B 9.5, D 10.5, A 20, G 25, E 68, F 150
    assert names(tables, True, 1, 1) == ["C", "B", "D", "A", "G", "E", "F"]


def test_panoramic_candidates_keep_their_closest_view(tables: ScanTables) -> None:
    cands = tables.candidates(True, tables.graph.index["C"], 0, 1)
    views = {c.viewpoint: c.view_index for c in cands}
    # G: heading column 0, looking up (6.07° off); E: column 11 (330°, 8° off); B and D: column 1
    assert views == {"C": 12, "G": 24, "A": 12, "E": 23, "B": 13, "D": 13, "F": 18}
    rel = {c.viewpoint: (math.degrees(c.rel_heading), math.degrees(c.rel_elevation)) for c in cands}
    assert rel["G"] == pytest.approx((5.0, G_ELEV), abs=1e-5)
    assert rel["E"] == pytest.approx((-38.0, 0.0), abs=1e-5)
    assert abs(rel["F"][0]) == pytest.approx(180.0, abs=1e-5)


def test_panoramic_relative_elevation_is_from_the_agents_elevation(tables: ScanTables) -> None:
    down = {c.viewpoint: math.degrees(c.rel_elevation) for c in tables.candidates(True, 0, 0, 0)}
    assert down["G"] == pytest.approx(G_ELEV + 30.0, abs=1e-5)
    assert down["A"] == pytest.approx(30.0, abs=1e-5)


def test_lists_are_shared_and_immutable(tables: ScanTables) -> None:
    first = tables.candidates(True, 0, 0, 1)
    assert tables.candidates(True, 0, 0, 1) is first
    assert isinstance(first, tuple)
    with pytest.raises(AttributeError):
        first[1].viewpoint = "X"  # type: ignore[misc]


def test_unreachable_candidates_never_listed(tmp_path: Path, tables: ScanTables) -> None:
    # A's neighbours are C and G only
    for h in range(12):
        assert set(names(tables, True, h, 1, at="A")) == {"A", "C", "G"}
        assert set(names(tables, False, h, 1, at="A")) <= {"A", "C", "G"}
