"""Fixtures for the MatterSim module: the real connectivity folder and a fresh simulator."""

from __future__ import annotations

import math
import os
from pathlib import Path
from typing import Any

import pytest

# The tests exercise vlneval's module even when a compiled simulator happens to be on sys.path.
os.environ.setdefault("VLNEVAL_MATTERSIM", "shim")

import MatterSim  # noqa: E402


@pytest.fixture(scope="session")
def connectivity(data_root: Path) -> Path:
    """The real Matterport3D connectivity folder (``.json.gz`` files)."""
    path = data_root / "matterport3d" / "connectivity"
    if not path.is_dir():
        pytest.fail(f"no connectivity folder at {path}")
    return path


@pytest.fixture(scope="session")
def scans(connectivity: Path) -> list[str]:
    """The 90 scan ids."""
    return (connectivity / "scans.txt").read_text().split()


def r2r_simulator(connectivity: Path, batch: int = 1, **settings: Any) -> Any:
    """A master-API simulator set up as R2R code sets it (60° VFOV, 640×480, discretised)."""
    sim = MatterSim.Simulator()
    sim.setNavGraphPath(str(connectivity))
    sim.setRenderingEnabled(False)
    sim.setDiscretizedViewingAngles(settings.get("discretized", True))
    sim.setCameraResolution(*settings.get("resolution", (640, 480)))
    sim.setCameraVFOV(settings.get("vfov", math.radians(60)))
    sim.setBatchSize(batch)
    if settings.get("initialize", True):
        sim.initialize()
    return sim
