"""A NaN turn gives the same result at batch size 1 (the one-slot fast path) as in a batch
(spec/mattersim.md 3.6): the C++ ``makeAction`` replaces only a positive or negative delta by
one 30° step, so a NaN reaches ``setHeadingElevation`` (elevation NaN: the level row). A NaN
heading, which C ``lround`` cannot snap, is refused before any slot changes."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pytest

from tests.mattersim.conftest import r2r_simulator

SCAN, START = "2t7WUuJeko7", "1e6b606b44df4a6086c0f97e826d4d15"
NAN = float("nan")


def _turn(connectivity: Path, batch: int, dh: float, de: float) -> Any:
    sim = r2r_simulator(connectivity, batch)
    sim.newEpisode([SCAN] * batch, [START] * batch, [math.radians(60)] * batch,
                   [math.radians(30)] * batch)  # fmt: skip
    try:
        sim.makeAction([0] * batch, [dh] * batch, [de] * batch)
    except ValueError as exc:
        return str(exc)
    st = sim.getState()[0]
    return st.heading, st.elevation, st.viewIndex, st.step


@pytest.mark.parametrize(("dh", "de"), [(NAN, 0.0), (0.0, NAN), (NAN, NAN), (1.0, -1.0)])
def test_batch_size_one_equals_a_batch(connectivity: Path, dh: float, de: float) -> None:
    assert _turn(connectivity, 1, dh, de) == _turn(connectivity, 2, dh, de)


def test_a_nan_turn_follows_set_heading_elevation(connectivity: Path) -> None:
    assert _turn(connectivity, 1, 0.0, NAN) == (math.radians(60), 0.0, 14, 1)
    assert _turn(connectivity, 1, NAN, 0.0) == "MatterSim: heading must be a finite number, got nan"


def _snapshot(sim: Any) -> list[Any]:
    return [
        (st.location.viewpointId, st.step, st.heading, st.elevation, st.viewIndex,
         [v.viewpointId for v in st.navigableLocations])
        for st in sim.getState()
    ]  # fmt: skip


@pytest.mark.parametrize("batch", [1, 2])
def test_a_refused_nan_heading_leaves_every_slot_unchanged(connectivity: Path, batch: int) -> None:
    sim = r2r_simulator(connectivity, batch)
    sim.newEpisode([SCAN] * batch, [START] * batch, [math.radians(60)] * batch, [0.0] * batch)
    before = _snapshot(sim)
    assert len(before[0][5]) > 1  # a move is possible, so a premature move would show
    with pytest.raises(ValueError, match="^MatterSim: heading must be a finite number, got nan$"):
        sim.makeAction([1] * batch, [0.0] * (batch - 1) + [NAN], [0.0] * batch)
    assert _snapshot(sim) == before
    with pytest.raises(ValueError, match="got inf$"):  # newEpisode: fmod(inf) is NaN
        sim.newEpisode([SCAN] * batch, [START] * batch, [0.0] * (batch - 1) + [math.inf],
                       [0.0] * batch)  # fmt: skip
    assert _snapshot(sim) == before


def test_a_refused_nan_heading_in_the_v01_api_leaves_the_state_unchanged(
    connectivity: Path,
) -> None:
    sim = r2r_simulator(connectivity, initialize=False)
    sim.init()
    sim.newEpisode(SCAN, START, math.radians(60), 0.0)
    st = sim.getState()
    before = (st.location.viewpointId, st.step, st.heading, st.viewIndex)
    with pytest.raises(ValueError, match="got nan$"):
        sim.makeAction(1, NAN, 0.0)
    st = sim.getState()
    assert (st.location.viewpointId, st.step, st.heading, st.viewIndex) == before
