"""A tiny HANNA benchmark in the official schema, every distance worked out by hand.

Scan ``flat``: S(0,0) - A(0,2) - B(0,4) - D(0,6) - C(0,8), B - E(2,4), and a shortcut S - E of
sqrt(20) = 4.4721 m. Distances (m): S-A 2, S-B 4, S-D 6, S-E 4.4721, S-C 8, A-B 2, A-D 4, A-E 4,
A-C 6, B-D 2, B-E 2, B-C 4, D-E 4, D-C 2, E-C 6. From B, goals D and E are both 2 m away; from
A, both 4 m away (ties); from S they are 6 and 4.4721 m away (so the tie rule changes SPL).

Tasks (``hanna_val_unseen.json``): 10: goals D then E, two instructions; 11: goals E then D;
12: one goal C, starting at A.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.fixtures import connectivity, write_json

POS = {
    "S": (0.0, 0.0, 0.0),
    "A": (0.0, 2.0, 0.0),
    "B": (0.0, 4.0, 0.0),
    "D": (0.0, 6.0, 0.0),
    "C": (0.0, 8.0, 0.0),
    "E": (2.0, 4.0, 0.0),
}
EDGES = [("S", "A"), ("A", "B"), ("B", "D"), ("D", "C"), ("B", "E"), ("S", "E")]
SQRT20 = 20**0.5


def task(path_id: int, paths: list[list[str]], instructions: list[str]) -> dict[str, Any]:
    """One HANNA task record as ``hanna_<split>.json`` holds it."""
    return {
        "path_id": path_id,
        "scan": "flat",
        "paths": paths,
        "heading": 0.5,
        "instructions": instructions,
        "end_regions": ["kitchen"],
        "target": "mug",
    }


TASKS = [
    task(10, [["S", "A", "B", "D"], ["S", "E"]], ["find the mug", "look for the mug"]),
    task(11, [["S", "E"], ["S", "A", "B", "D"]], ["find the mug (goals reversed)"]),
    task(12, [["A", "B", "D", "C"]], ["one goal"]),
]

#: instr_id -> (visited viewpoints, agent_ask) for the hand values.
RUNS = {
    "10_0": (["S", "A", "B", "A", "B"], [0, 1, 1, 0]),
    "10_1": (["S", "E", "S", "A"], [1, 0, 0]),
    "11_0": (["S", "A", "B", "A", "B"], [0, 0, 0, 0]),
    "12_0": (["A", "B", "D", "C", "C"], [0, 0, 0, 0]),
}


def record(instr_id: str, viewpoints: list[str], asks: list[int] | None) -> dict[str, Any]:
    """A prediction record as the HANNA agents write it (poses after the start carry a time)."""
    poses: list[list[Any]] = [[viewpoints[0], 0.0, 0.0]]
    poses += [[v, 0.5236, 0.0, t] for t, v in enumerate(viewpoints[1:], start=1)]
    rec: dict[str, Any] = {
        "instr_id": instr_id,
        "scan": "flat",
        "agent_pose": poses,
        "agent_nav": [1] * (len(viewpoints) - 1),
    }
    if asks is not None:
        rec["agent_ask"] = asks
    return rec


def make_root(tmp: Path, tasks: list[dict[str, Any]] | None = None) -> Path:
    """A data root with the scan and ``hanna/hanna_val_unseen.json``."""
    write_json(
        tmp / "matterport3d" / "connectivity" / "flat_connectivity.json", connectivity(POS, EDGES)
    )
    write_json(tmp / "hanna" / "hanna_val_unseen.json", TASKS if tasks is None else tasks)
    return tmp


def predictions(
    tmp: Path, runs: dict[str, tuple[list[str], list[int] | None]] | None = None
) -> Path:
    """A predictions file of :func:`record` entries."""
    body = [record(k, v, a) for k, (v, a) in (RUNS if runs is None else runs).items()]
    path = tmp / "hanna_preds.json"
    path.write_text(json.dumps(body))
    return path
