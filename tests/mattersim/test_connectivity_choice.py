"""MatterSim reads the connectivity file scoring reads: when ``.json`` and ``.json.gz`` of a
scan both exist and differ, it refuses (a ValueError, as for a malformed file) instead of
picking one silently."""

from __future__ import annotations

import gzip
import json
import math
from pathlib import Path

import pytest

import MatterSim
from tests.fixtures import SQUARE, SQUARE_EDGES, connectivity


def _simulator(folder: Path) -> MatterSim.Simulator:
    sim = MatterSim.Simulator()
    sim.setNavGraphPath(str(folder))
    sim.setRenderingEnabled(False)
    sim.setCameraResolution(640, 480)
    sim.setCameraVFOV(math.radians(60))
    sim.initialize()
    return sim


def test_both_files_differing_are_refused(tmp_path: Path) -> None:
    (tmp_path / "sq_connectivity.json").write_text(json.dumps(connectivity(SQUARE, SQUARE_EDGES)))
    zipped = tmp_path / "sq_connectivity.json.gz"
    zipped.write_bytes(gzip.compress(json.dumps(connectivity(SQUARE, SQUARE_EDGES[:3])).encode()))
    with pytest.raises(ValueError) as exc:
        _simulator(tmp_path).newEpisode(["sq"], ["S"], [0.0], [0.0])
    assert str(exc.value) == (
        f"MatterSim: error: {tmp_path / 'sq_connectivity.json'} and {zipped} both hold scan "
        "sq's graph but differ: remove one, or make them the same file"
    )


def test_both_files_alike_read_the_plain_one(tmp_path: Path) -> None:
    text = json.dumps(connectivity(SQUARE, SQUARE_EDGES))
    (tmp_path / "sq_connectivity.json").write_text(text)
    (tmp_path / "sq_connectivity.json.gz").write_bytes(gzip.compress(text.encode()))
    sim = _simulator(tmp_path)
    sim.newEpisode(["sq"], ["S"], [0.0], [0.0])  # facing A, 4 m north
    state = sim.getState()[0]
    assert [v.viewpointId for v in state.navigableLocations] == ["S", "A"]
