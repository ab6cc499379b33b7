"""Once a simulator is in master mode (``initialize()``, or a first ``newEpisode`` with lists),
scalar ``newEpisode`` arguments are refused with TypeError, as the master binding takes lists
only (spec/mattersim.md 2.4 and 6.2); nothing changes. Before either, a scalar call picks the
v0.1 API."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

import MatterSim
from tests.mattersim.conftest import r2r_simulator

SCAN, START = "2t7WUuJeko7", "1e6b606b44df4a6086c0f97e826d4d15"
MESSAGE = (
    "newEpisode(): incompatible function arguments. The following argument types are "
    "supported:\n"
    "    1. (self: MatterSim.Simulator, arg0: list[str], arg1: list[str], arg2: list[float], "
    "arg3: list[float]) -> None\n\n"
    f"Invoked with: <MatterSim.Simulator object>, '{SCAN}', '{START}', 0.0, 0.0"
)


def test_scalars_after_initialize_are_a_type_error(connectivity: Path) -> None:
    sim = r2r_simulator(connectivity)  # initialize()d
    with pytest.raises(TypeError) as exc:
        sim.newEpisode(SCAN, START, 0.0, 0.0)
    assert str(exc.value) == MESSAGE
    assert sim.getState()[0].location is None  # no episode was started
    assert isinstance(sim.getState(), list)  # still the master API


def test_scalars_after_a_list_episode_are_a_type_error(connectivity: Path) -> None:
    sim = r2r_simulator(connectivity, initialize=False)
    sim.newEpisode([SCAN], [START], [math.radians(30)], [0.0])
    before = sim.getState()[0].heading
    with pytest.raises(TypeError) as exc:
        sim.newEpisode(SCAN, START, 0.0, 0.0)
    assert str(exc.value) == MESSAGE
    assert sim.getState()[0].heading == before


def test_scalars_before_either_pick_the_v01_api(connectivity: Path) -> None:
    sim = r2r_simulator(connectivity, initialize=False)
    sim.newEpisode(SCAN, START, 0.0, 0.0)
    state = sim.getState()
    assert isinstance(state, MatterSim.SimState) and state.location.viewpointId == START
