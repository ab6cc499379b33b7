"""API conformance: both call styles, batches, setters, errors, images, liveness, arguments."""

from __future__ import annotations

import math
import pickle
import random
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import MatterSim
from tests.mattersim.conftest import r2r_simulator

SCAN, START = "2t7WUuJeko7", "1e6b606b44df4a6086c0f97e826d4d15"


def _v01(connectivity: Path) -> MatterSim.Simulator:
    sim = MatterSim.Simulator()
    sim.setNavGraphPath(str(connectivity))
    sim.setRenderingEnabled(False)
    sim.setDiscretizedViewingAngles(True)
    sim.setCameraResolution(640, 480)
    sim.setCameraVFOV(math.radians(60))
    sim.init()
    return sim


def _walk(rng: random.Random, state: Any) -> tuple[int, int, int]:
    n = len(state.navigableLocations)
    return rng.choice([(0, 1, 0), (0, -1, 0), (0, 0, 1), (0, 0, -1), (rng.randrange(n), 0, 0)])


def _key(state: Any) -> tuple[Any, ...]:
    return (
        state.scanId,
        state.step,
        state.location.viewpointId,
        state.heading,
        state.elevation,
        state.viewIndex,
        [
            (v.viewpointId, v.ix, v.rel_heading, v.rel_elevation, v.rel_distance)
            for v in state.navigableLocations
        ],
    )


def test_v01_and_master_calls_give_the_same_trajectories(connectivity: Path) -> None:
    old, new = _v01(connectivity), r2r_simulator(connectivity)
    rng = random.Random(3)
    for _ in range(20):
        heading = rng.uniform(0, 2 * math.pi)
        old.newEpisode(SCAN, START, heading, 0.0)
        new.newEpisode([SCAN], [START], [heading], [0.0])
        for _ in range(15):
            a, b = old.getState(), new.getState()[0]
            assert _key(a) == _key(b)
            assert a.location.point == [b.location.x, b.location.y, b.location.z]
            i, h, e = _walk(rng, b)
            old.makeAction(i, h, e)
            new.makeAction([i], [h], [e])


def test_batch_slots_equal_separate_simulators(connectivity: Path, scans: list[str]) -> None:
    rng = random.Random(5)
    batch = 4
    picks = [(s, MatterSim._world(str(connectivity), s)) for s in rng.sample(scans, batch)]
    starts = [
        rng.choice([v for v, inc in zip(w.ids, w.included, strict=True) if inc]) for _, w in picks
    ]
    many = r2r_simulator(connectivity, batch=batch)
    ones = [r2r_simulator(connectivity) for _ in range(batch)]
    headings = [rng.uniform(-7, 7) for _ in range(batch)]
    many.newEpisode([s for s, _ in picks], starts, headings, [0] * batch)
    for k, sim in enumerate(ones):
        sim.newEpisode([picks[k][0]], [starts[k]], [headings[k]], [0])
    for _ in range(40):
        states = many.getState()
        assert [_key(s) for s in states] == [_key(sim.getState()[0]) for sim in ones]
        actions = [_walk(rng, s) for s in states]
        many.makeAction(*[list(col) for col in zip(*actions, strict=True)])
        for sim, (i, h, e) in zip(ones, actions, strict=True):
            sim.makeAction([i], [h], [e])


def test_live_states_and_v01_snapshots(connectivity: Path) -> None:
    sim = r2r_simulator(connectivity)
    sim.newEpisode([SCAN], [START], [0], [0])
    live = sim.getState()[0]
    assert sim.getState()[0] is live and sim.getState() is not sim.getState()
    sim.makeAction([0], [1], [0])
    assert live.step == 1 and live.viewIndex == 13
    assert live.navigableLocations is not live.navigableLocations
    assert live.navigableLocations[0] is live.location
    old = _v01(connectivity)
    old.newEpisode(SCAN, START, 0.0, 0.0)
    snap = old.getState()
    old.makeAction(0, 1, 0)
    assert (snap.step, snap.viewIndex) == (0, 12) and old.getState().viewIndex == 13
    assert snap.rgb is None
    with pytest.raises(AttributeError):
        live.heading = 1.0  # type: ignore[misc]
    with pytest.raises(AttributeError):
        live.location.x = 1.0  # type: ignore[misc]


def test_moving_makes_the_chosen_viewpoint_the_location(connectivity: Path) -> None:
    sim = r2r_simulator(connectivity)
    sim.newEpisode([SCAN], [START], [0], [0])
    st = sim.getState()[0]
    target = st.navigableLocations[1]
    sim.makeAction([1], [0], [0])
    loc = st.location
    assert (loc.viewpointId, loc.ix, loc.x, loc.y, loc.z) == (
        target.viewpointId,
        target.ix,
        target.x,
        target.y,
        target.z,
    )
    assert (loc.rel_heading, loc.rel_elevation, loc.rel_distance) == (0.0, 0.0, 0.0)


def test_elevation_saturates_and_heading_wraps(connectivity: Path) -> None:
    sim = r2r_simulator(connectivity)
    sim.newEpisode([SCAN], [START], [-0.1], [0.2])  # snaps to heading 0, elevation 0
    st = sim.getState()[0]
    assert (st.heading, st.elevation, st.viewIndex) == (0.0, 0.0, 12)
    for _ in range(3):
        sim.makeAction([0], [0], [1])
    assert (st.elevation, st.viewIndex) == (math.radians(30), 24)
    sim.makeAction([0], [-1], [-1])
    assert (st.heading, st.viewIndex) == (11 * (math.pi * 2.0 / 12), 23)
    sim.newEpisode([SCAN], [START], [math.radians(15)], [-math.radians(15)])  # halves: away from 0
    assert (st.viewIndex, st.elevation) == (13, 0.0)
    cont = r2r_simulator(connectivity, discretized=False)
    cont.newEpisode([SCAN], [START], [7.0], [2.0])
    cs = cont.getState()[0]
    assert (cs.heading, cs.elevation, cs.viewIndex) == (math.fmod(7.0, 2 * math.pi), 0.94, 0)
    assert cont.setElevationLimits(-0.5, 0.5) and not cont.setElevationLimits(0.1, 0.5)
    cont.makeAction([0], [0], [-3])
    assert cs.elevation == -0.5


def test_camera_settings_stay_live_and_guarded_setters_are_ignored(connectivity: Path) -> None:
    sim = r2r_simulator(connectivity)
    sim.setDiscretizedViewingAngles(False)  # ignored after initialize
    sim.setBatchSize(3)
    sim.setNavGraphPath("/nowhere")
    sim.newEpisode([SCAN], [START], [0], [0])
    st = sim.getState()[0]
    assert len(sim.getState()) == 1 and st.viewIndex == 12
    wide = len(st.navigableLocations)
    sim.setCameraVFOV(math.radians(20))  # live: narrower field of view from the next step
    sim.makeAction([0], [0], [0])
    assert len(st.navigableLocations) < wide
    free = r2r_simulator(connectivity, initialize=False)
    free.setRestrictedNavigation(False)
    free.initialize()
    free.newEpisode([SCAN], [START], [0], [0])
    world = MatterSim._world(str(connectivity), SCAN)
    assert len(free.getState()[0].navigableLocations) == 1 + len(world.data.neighbours(5).ix)


def test_isolated_viewpoints_are_valid_starts(connectivity: Path, scans: list[str]) -> None:
    sim = r2r_simulator(connectivity)
    found = 0
    for scan in scans:
        world = MatterSim._world(str(connectivity), scan)
        for vp in sorted(world.data.graph.isolated):
            sim.newEpisode([scan], [vp], [0], [0])
            for _ in range(12):
                st = sim.getState()[0]
                assert [v.viewpointId for v in st.navigableLocations] == [vp]
                sim.makeAction([0], [1], [0])
            found += 1
    assert found == 8


def test_errors_follow_the_original(connectivity: Path, scans: list[str], tmp_path: Path) -> None:
    sim = r2r_simulator(connectivity)
    with pytest.raises(RuntimeError, match="newEpisode must be called before makeAction"):
        MatterSim.Simulator().makeAction([0], [0], [0])
    with pytest.raises(ValueError, match="Could not find viewpointId: nope, is viewpoint id valid"):
        sim.newEpisode([SCAN], ["nope"], [0], [0])
    worlds = [MatterSim._world(str(connectivity), s) for s in scans]
    world = next(w for w in worlds if not all(w.included))
    excluded = world.ids[world.included.index(False)]
    with pytest.raises(ValueError, match=f"ViewpointId: {excluded}, is excluded"):
        sim.newEpisode([world.key[1]], [excluded], [0], [0])
    with pytest.raises(IndexError, match="map::at"):
        sim.newEpisode(["notAScan"], [START], [0], [0])
    with pytest.raises(IndexError):
        sim.newEpisode([SCAN], [START], [], [0])
    sim.newEpisode([SCAN], [START], [0], [0])
    n = len(sim.getState()[0].navigableLocations)
    with pytest.raises(ValueError, match=f"Invalid action index: {n} in environment 0 of 1"):
        sim.makeAction([n], [0], [0])
    for bad in ([-1], [0.0], ["0"]):
        with pytest.raises(TypeError, match="incompatible function arguments"):
            sim.makeAction(bad, [0], [0])
    with pytest.raises(TypeError):
        sim.newEpisode(SCAN, [START], [0], [0])
    with pytest.raises(TypeError):
        sim.setCameraResolution(640.0, 480)
    batched = r2r_simulator(connectivity, batch=2)
    with pytest.raises(TypeError):
        batched.makeAction(0, 0, 0)
    old = _v01(connectivity)
    old.newEpisode(SCAN, START, 0.0, 0.0)
    with pytest.raises(ValueError, match="Invalid action index: -1"):
        old.makeAction(-1, 0, 0)
    lost = MatterSim.Simulator()
    lost.setNavGraphPath(str(tmp_path / "missing"))
    with pytest.raises(ValueError, match="missing is not a folder.*setNavGraphPath.*VLNEVAL_DATA"):
        lost.newEpisode([SCAN], [START], [0], [0])
    empty = MatterSim.Simulator()
    empty.setNavGraphPath(str(tmp_path))
    with pytest.raises(ValueError, match=f"{SCAN}_connectivity.json"):
        empty.newEpisode(SCAN, START, 0.0, 0.0)


def test_numpy_and_integer_arguments(connectivity: Path) -> None:
    sim = r2r_simulator(connectivity)
    sim.newEpisode(np.array([SCAN]), (START,), np.array([0.0]), [np.int64(0)])
    sim.makeAction(np.array([0]), [np.float32(1.0)], (np.int64(0),))
    assert sim.getState()[0].viewIndex == 13
    old = _v01(connectivity)
    old.newEpisode(SCAN, START, np.float64(0.0), 0)
    old.makeAction(np.int64(0), np.sign(np.float64(-3.0)), 0)
    assert old.getState().viewIndex == 23


def test_images(connectivity: Path) -> None:
    sim = r2r_simulator(connectivity)
    sim.newEpisode([SCAN], [START], [0], [0])
    st = sim.getState()[0]
    rgb, depth = np.array(st.rgb, copy=False), np.array(st.depth, copy=False)
    assert (rgb.shape, rgb.dtype, depth.shape, depth.dtype) == (
        (480, 640, 3),
        np.uint8,
        (480, 640, 1),
        np.uint16,
    )
    assert not rgb.any() and not depth.any()
    rendering = MatterSim.Simulator()
    rendering.setNavGraphPath(str(connectivity))
    rendering.newEpisode([SCAN], [START], [0], [0])  # navigation works with rendering left on
    with pytest.raises(NotImplementedError, match="Matterport3DSimulator"):
        _ = rendering.getState()[0].rgb
    with pytest.raises(NotImplementedError, match="real Matterport3D simulator"):
        MatterSim.cbf(None, None, None, None)


def test_pickle_and_cheap_construction(connectivity: Path) -> None:
    sim = r2r_simulator(connectivity)
    sim.newEpisode([SCAN], [START], [0], [0])
    sim.makeAction([1], [1], [0])
    copy = pickle.loads(pickle.dumps(sim))
    assert _key(copy.getState()[0]) == _key(sim.getState()[0])
    copy.makeAction([0], [1], [0])
    sim.makeAction([0], [1], [0])
    assert _key(copy.getState()[0]) == _key(sim.getState()[0])
    import time

    t = time.perf_counter()
    for _ in range(200):
        fresh = r2r_simulator(connectivity)
        fresh.newEpisode([SCAN], [START], [0], [0])
    assert (time.perf_counter() - t) / 200 < 0.002  # the graph is cached for the process
