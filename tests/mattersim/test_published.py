"""Numbers the simulator itself publishes: the motion tables of its C++ tests
(``src/test/main.cpp``), the example state of its README, the "Robot Relative Coords" invariant,
and random starts recorded from a compiled build (peteanderson80/Matterport3DSimulator 589d091,
GCC 12)."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

import MatterSim

SCANS = ["2t7WUuJeko7", "17DRP5sb8fy"]
VIEWPOINTS = ["cc34e9176bfe47ebb23c58c165203134", "5b9b2794954e4694a45fc424a8643081"]
# src/test/main.cpp: start (10°, 10°), then these changes; the expected discrete states.
HEADING = [10, 350, 350, 1, 90, 180, 90, 270, 90, 270]
HEADING_CHANGE = [-20, -360, 371, 89, 90, -90, -180, -180, -180, 0]
DISCRETE_HEADING = [0, 330, 300, 330, 0, 30, 0, 330, 300, 270]
ELEVATION = [10, 10, -26, -40, -40, -40, 50, 50, 40, 0]
ELEVATION_CHANGE = [0, -36, -30, -10, 0, 90, 5, -10, -40, 0]
DISCRETE_ELEVATION = [0, 0, -30, -30, -30, -30, 0, 30, 0, -30]
VIEW_INDEX = [12, 23, 10, 11, 0, 1, 12, 35, 22, 9]


def _radians(deg: float) -> float:
    return deg * math.pi / 180.0


def _test_simulator(
    connectivity: Path, discretized: bool, limits: tuple[float, float]
) -> MatterSim.Simulator:
    sim = MatterSim.Simulator()
    sim.setNavGraphPath(str(connectivity))
    sim.setCameraResolution(200, 100)
    sim.setCameraVFOV(_radians(45))
    sim.setRenderingEnabled(False)
    sim.setBatchSize(len(SCANS))
    sim.setDiscretizedViewingAngles(discretized)
    assert sim.setElevationLimits(_radians(limits[0]), _radians(limits[1]))
    sim.initialize()
    sim.newEpisode(SCANS, VIEWPOINTS, [_radians(HEADING[0])] * 2, [_radians(ELEVATION[0])] * 2)
    return sim


@pytest.mark.parametrize("discretized", [False, True], ids=["continuous", "discrete"])
def test_motion_tables_of_the_cpp_tests(connectivity: Path, discretized: bool) -> None:
    # Continuous motion uses limits (-40°, 50°); discrete motion sets (-10°, 10°), which it ignores.
    sim = _test_simulator(connectivity, discretized, (-10, 10) if discretized else (-40, 50))
    for t in range(10):
        for i, st in enumerate(sim.getState()):
            assert (st.scanId, st.step, st.location.viewpointId) == (SCANS[i], t, VIEWPOINTS[i])
            assert np_shape(st.rgb) == (100, 200, 3)
            if discretized:
                assert st.heading == pytest.approx(_radians(DISCRETE_HEADING[t]))
                assert st.elevation == pytest.approx(_radians(DISCRETE_ELEVATION[t]))
                assert st.viewIndex == VIEW_INDEX[t]
            else:
                assert st.heading == pytest.approx(_radians(HEADING[t]))
                assert st.elevation == pytest.approx(_radians(ELEVATION[t]))
                assert st.viewIndex == 0
        sim.makeAction(
            [0, 0], [_radians(HEADING_CHANGE[t])] * 2, [_radians(ELEVATION_CHANGE[t])] * 2
        )


def np_shape(image: object) -> tuple[int, ...]:
    return tuple(image.shape)  # type: ignore[attr-defined]


def test_robot_relative_coords(connectivity: Path) -> None:
    """Every candidate sits at location + rel_distance · (sin h cos e, cos h cos e, sin e)."""
    sim = _test_simulator(connectivity, False, (-40, 50))
    checked = 0
    for t in range(10):
        actions = []
        for st in sim.getState():
            nav = st.navigableLocations
            last = 0.0
            for loc in nav[1:]:
                angle = math.hypot(loc.rel_heading, loc.rel_elevation)
                assert angle >= last
                last = angle
                h, e = st.heading + loc.rel_heading, st.elevation + loc.rel_elevation
                d = loc.rel_distance
                here = st.location
                assert loc.x == pytest.approx(here.x + math.sin(h) * math.cos(e) * d, abs=1e-5)
                assert loc.y == pytest.approx(here.y + math.cos(h) * math.cos(e) * d, abs=1e-5)
                assert loc.z == pytest.approx(here.z + math.sin(e) * d, abs=1e-5)
                checked += 1
            actions.append(t % len(nav))
        sim.makeAction(
            actions, [_radians(HEADING_CHANGE[t])] * 2, [_radians(ELEVATION_CHANGE[t])] * 2
        )
    assert checked > 10


def test_readme_example_state(connectivity: Path) -> None:
    """README: scan 2t7WUuJeko7, viewpoint 1e6b606b… at heading 0 (printed to 12 digits)."""
    sim = MatterSim.Simulator()
    sim.setNavGraphPath(str(connectivity))
    sim.setRenderingEnabled(False)
    sim.initialize()
    sim.newEpisode(["2t7WUuJeko7"], ["1e6b606b44df4a6086c0f97e826d4d15"], [0], [0])
    st = sim.getState()[0]
    loc = st.location
    assert (loc.viewpointId, loc.ix) == ("1e6b606b44df4a6086c0f97e826d4d15", 5)
    assert (loc.x, loc.y, loc.z) == (3.597759962081909, -0.8373559713363647, 1.6888400316238403)
    assert (
        f"{loc.x:.12g} {loc.y:.12g} {loc.z:.12g}" == "3.59775996208 -0.837355971336 1.68884003162"
    )
    nav = st.navigableLocations
    assert nav[0] is loc and (loc.rel_heading, loc.rel_elevation, loc.rel_distance) == (0, 0, 0)
    v = nav[1]
    assert (v.viewpointId, v.ix) == ("1e3a672fa1d24d668866455162e5b58a", 14)
    assert f"{v.x:.12g} {v.y:.12g} {v.z:.12g}" == "4.03619003296 1.11550998688 1.65892004967"
    assert f"{v.rel_heading:.12g}" == "0.220844170027"
    assert f"{v.rel_elevation:.12g}" == "-0.0149478448723"
    assert f"{v.rel_distance:.12g}" == "2.00169944763"


def test_random_episodes_follow_the_compiled_simulator(connectivity: Path) -> None:
    """libstdc++'s minstd_rand0 and distributions: the process-wide engine seeded by the first
    simulator (here seed 7), headings from a fresh engine on every call."""
    MatterSim._GRAPH_ENGINE.clear()  # as in a fresh process
    sim = MatterSim.Simulator()
    sim.setNavGraphPath(str(connectivity))
    sim.setRenderingEnabled(False)
    sim.setBatchSize(3)
    sim.setSeed(7)
    sim.initialize()
    scans = ["2t7WUuJeko7", "17DRP5sb8fy", "2t7WUuJeko7"]
    expected = [
        [
            ("529f006f8293406da0b506defd2891a5", 0),
            ("5efaa5e4a30e481f9dadc1bac5e56a21", 44),
            ("cc34e9176bfe47ebb23c58c165203134", 10),
        ],
        [
            ("7b017f053981438a9c075e599f2c5866", 7),
            ("d65b6505904448d1940e679c9a098047", 35),
            ("53937db036374126830e0f1203b04ead", 19),
        ],
    ]
    headings = [0.8264762952590881, 2.881783770664272, 1.3757611416822468]
    try:
        for want in expected:
            sim.newRandomEpisode(scans)
            states = sim.getState()
            assert [(s.location.viewpointId, s.location.ix) for s in states] == want
            assert [s.heading for s in states] == headings
            assert all(s.elevation == 0.0 for s in states)
    finally:
        MatterSim._GRAPH_ENGINE.clear()
