"""The simulator's own R2R simple agents, run on vlneval's MatterSim, reproduce the trajectories
the compiled simulator wrote (``tasks/R2R/eval.py`` ``eval_simple_agents``): every record, every
heading and elevation, in the same order."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import pytest

from tests.mattersim.r2r_protocol import Graphs, new_simulator, simple_agents

SIMPLE = "predictions/r2r/simple_agents_sadanand1120"
WEB = "predictions/r2r/matterport3dsimulator_web/val_unseen_shortest_agent.json.gz"


def _load(path: Path) -> Any:
    with gzip.open(path, "rt") as fh:
        return json.load(fh)


@pytest.fixture(scope="module")
def runs(data_root: Path, connectivity: Path) -> dict[tuple[str, str], list[dict[str, Any]]]:
    graphs = Graphs(connectivity)
    out = {}
    for split in ("val_seen", "val_unseen"):
        sim = new_simulator(connectivity)
        for agent, records in simple_agents(sim, data_root, split, graphs):
            out[(split, agent)] = records
    return out


@pytest.mark.parametrize("split", ["val_seen", "val_unseen"])
@pytest.mark.parametrize("agent", ["stop", "shortest", "random"])
def test_simple_agent_reproduces_reference_file(
    runs: dict[tuple[str, str], list[dict[str, Any]]], data_root: Path, split: str, agent: str
) -> None:
    reference = _load(data_root / SIMPLE / f"{split}_{agent}_agent.json.gz")
    ours = runs[(split, agent)]
    assert len(ours) == len(reference) == {"val_seen": 1021, "val_unseen": 2349}[split]
    assert [r["instr_id"] for r in ours] == [r["instr_id"] for r in reference]
    bad = [r["instr_id"] for r, o in zip(reference, ours, strict=True) if r != o]
    assert not bad, f"{len(bad)} trajectories differ, first {bad[:3]}"


def test_web_app_shortest_agent_matches_by_id(
    runs: dict[tuple[str, str], list[dict[str, Any]]], data_root: Path
) -> None:
    web = {r["instr_id"]: r["trajectory"] for r in _load(data_root / WEB)}
    ours = {r["instr_id"]: r["trajectory"] for r in runs[("val_unseen", "shortest")]}
    assert web.keys() == ours.keys()
    assert [k for k in web if web[k] != ours[k]] == []
