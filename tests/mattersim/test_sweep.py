"""The R2R-EnvDrop-family 36-view sweep through MatterSim, at every included viewpoint of the 90
scans, shows exactly the lists of vlneval's candidate tables; the per-location rule (used for
other cameras and continuous angles) gives the same lists."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from tests.mattersim.conftest import r2r_simulator
from vlneval.graph.simscan import COS_HALF_HFOV, load_sim_scan


def _sweep_targets() -> list[tuple[int, int, int]]:
    """The family's sweep: view 0 at heading 0 looking down, then right turns, looking up at the
    start of rows 1 and 2."""
    return [(0, 1, 1 if k in (12, 24) else 0) for k in range(1, 36)]


def test_sweep_equals_tables_on_all_scans(connectivity: Path, scans: list[str]) -> None:
    sim = r2r_simulator(connectivity)
    moves = _sweep_targets()
    problems: list[str] = []
    lists = pairs = isolated = 0
    for scan in scans:
        data = load_sim_scan(connectivity / f"{scan}_connectivity.json.gz", scan)
        tables = data.tables()
        ids = data.graph.ids
        for ix in np.flatnonzero(data.included).tolist():
            vp = data.ids[ix]
            node = int(data.node_of[ix])
            sim.newEpisode([scan], [vp], [0], [math.radians(-30)])
            best: dict[str, tuple[float, int]] = {}
            for k in range(36):
                if k:
                    sim.makeAction(*([m] for m in moves[k - 1]))
                st = sim.getState()[0]
                nav = st.navigableLocations
                if st.viewIndex != k or nav[0] is not st.location or st.location.ix != ix:
                    problems.append(f"{scan}/{vp} view {k}: viewIndex {st.viewIndex}")
                    break
                lists += 1
                if node < 0:
                    isolated += k == 0
                    if len(nav) != 1:
                        problems.append(f"{scan}/{vp}: isolated viewpoint with {len(nav)} entries")
                    continue
                n = int(tables.ego_count[node, k])
                want = [ids[j] for j in tables.ego_node[node, k, :n].tolist()]
                if [v.viewpointId for v in nav] != want:
                    problems.append(
                        f"{scan}/{vp} view {k}: {[v.viewpointId for v in nav]} != {want}"
                    )
                    continue
                for e, v in enumerate(nav[1:], start=1):
                    x, y, z = data.xyz[v.ix]
                    if (v.x, v.y, v.z) != (x, y, z) or data.ids[v.ix] != v.viewpointId:
                        problems.append(f"{scan}/{vp} view {k}: position of {v.viewpointId}")
                    if v.rel_distance != tables.ego_distance[node, k, e]:
                        problems.append(f"{scan}/{vp} view {k}: rel_distance of {v.viewpointId}")
                    if abs(v.rel_elevation - tables.ego_rel_elevation[node, k, e]) > 1e-12:
                        problems.append(f"{scan}/{vp} view {k}: rel_elevation of {v.viewpointId}")
                    if abs(v.rel_heading - tables.ego_rel_heading[node, k, e]) > 1e-7:
                        problems.append(f"{scan}/{vp} view {k}: rel_heading of {v.viewpointId}")
                    offset = math.sqrt(v.rel_heading**2 + v.rel_elevation**2)
                    if v.viewpointId not in best or offset < best[v.viewpointId][0]:
                        best[v.viewpointId] = (offset, k)
            if node >= 0:
                count = int(tables.pano_count[node, 0])
                pano = {
                    ids[j]: int(view)
                    for j, view in zip(
                        tables.pano_node[node, 0, 1:count].tolist(),
                        tables.pano_view[node, 0, 1:count].tolist(),
                        strict=True,
                    )
                }
                pairs += len(best)
                if {vp_: view for vp_, (_, view) in best.items()} != pano:
                    problems.append(f"{scan}/{vp}: sweep candidates differ from pano_view")
        assert len(problems) < 20, problems
    assert problems == []
    assert (lists, pairs, isolated) == (380_412, 42_936, 8)


def test_rule_equals_tables_on_all_scans(connectivity: Path, scans: list[str]) -> None:
    """SimScan.candidates (the rule, per location) against the tables, three views per location
    in rotation so every view is checked on a third of the locations."""
    bad = []
    for scan in scans:
        data = load_sim_scan(connectivity / f"{scan}_connectivity.json.gz", scan)
        for ix in np.flatnonzero(data.included).tolist():
            for view in (ix % 12, 12 + (ix + 4) % 12, 24 + (ix + 8) % 12):
                table = data.table_candidates(ix, view)
                heading = (view % 12) * (math.pi * 2.0 / 12)
                elevation = (view // 12 - 1) * (math.pi / 6.0)
                rule = data.candidates(ix, heading, elevation, COS_HALF_HFOV)
                if rule != table:
                    bad.append((scan, data.ids[ix], view))
    assert bad == []
