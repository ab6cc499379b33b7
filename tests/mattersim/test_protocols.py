"""The two ways R2R-family code moves to a panoramic candidate, through MatterSim, follow every
validation path: turn-then-move (R2R-EnvDrop, Recurrent-VLN-BERT, VLN-SIG, HAMT) and teleport
(DUET, ScaleVLN, NaviLLM, MapGPT)."""

from __future__ import annotations

import gzip
import json
import math
from pathlib import Path
from typing import Any

from tests.mattersim.conftest import r2r_simulator

ROW = math.radians(30)


def _candidates(sim: Any, scan: str, vp: str) -> dict[str, tuple[int, int]]:
    """The family's ``make_candidate`` sweep: neighbour -> (view, list index) of its best view."""
    best: dict[str, tuple[float, int, int]] = {}
    sim.newEpisode([scan], [vp], [0], [-ROW])
    for k in range(36):
        if k:
            sim.makeAction([0], [1], [1 if k in (12, 24) else 0])
        st = sim.getState()[0]
        assert st.viewIndex == k
        for idx, loc in enumerate(st.navigableLocations[1:], start=1):
            offset = math.sqrt(loc.rel_heading**2 + loc.rel_elevation**2)
            if loc.viewpointId not in best or offset < best[loc.viewpointId][0]:
                best[loc.viewpointId] = (offset, k, idx)
    return {v: (k, idx) for v, (_, k, idx) in best.items()}


def _turn_then_move(sim: Any, target: str, view: int, idx: int) -> None:
    st = sim.getState()[0]
    while st.viewIndex // 12 < view // 12:
        sim.makeAction([0], [0], [1])
    while st.viewIndex // 12 > view // 12:
        sim.makeAction([0], [0], [-1])
    while st.viewIndex != view:
        sim.makeAction([0], [1], [0])
    assert st.navigableLocations[idx].viewpointId == target
    sim.makeAction([idx], [0], [0])


def _teleport_view(sim: Any, scan: str, here: str, target: str, view: int, idx: int) -> None:
    sim.newEpisode([scan], [here], [(view % 12) * math.radians(30)], [(view // 12 - 1) * ROW])
    st = sim.getState()[0]
    assert st.viewIndex == view
    assert st.navigableLocations[idx].viewpointId == target
    sim.newEpisode([scan], [target], [st.heading], [st.elevation])


def test_both_protocols_follow_every_validation_path(data_root: Path, connectivity: Path) -> None:
    sweep, walker, jumper = (r2r_simulator(connectivity) for _ in range(3))
    cache: dict[tuple[str, str], dict[str, tuple[int, int]]] = {}
    moves = 0
    for split in ("val_seen", "val_unseen"):
        with gzip.open(data_root / "r2r" / f"R2R_{split}.json.gz", "rt") as fh:
            episodes = json.load(fh)
        for ep in episodes:
            scan, path = ep["scan"], ep["path"]
            walker.newEpisode([scan], [path[0]], [ep["heading"]], [0])
            for here, target in zip(path, path[1:], strict=False):
                key = (scan, here)
                if key not in cache:
                    cache[key] = _candidates(sweep, scan, here)
                view, idx = cache[key][target]
                _turn_then_move(walker, target, view, idx)
                assert walker.getState()[0].location.viewpointId == target
                _teleport_view(jumper, scan, here, target, view, idx)
                assert jumper.getState()[0].location.viewpointId == target
                moves += 1
    assert moves > 4000
