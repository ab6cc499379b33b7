"""A tiny NDH benchmark: one scan, three instances, every distance worked out by hand.

Scan ``lane``: S(0,0) - A(0,3) - B(0,6) - C(0,9), C - D(4,9) and C - E(0,12); X is included but
has no edge. Geodesic distances (m): S-A 3, S-B 6, S-C 9, S-D 13, S-E 12, A-B 3, A-C 6, A-D 10,
A-E 9, B-C 3, B-D 7, B-E 6, C-D 4, C-E 3, D-E 7. F - G (3 m) is a second component.

Instances:
1. planner S,A,B; player S,A,B,C (passes B after its start: trusted = player); end C, D.
2. planner S (the plan is not to move); player S,A (trusted = planner); end S, E.
3. planner A,B,C; player A,B,C,E (trusted = player); end E.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.fixtures import connectivity, write_json

POS = {
    "S": (0.0, 0.0, 0.0),
    "A": (0.0, 3.0, 0.0),
    "B": (0.0, 6.0, 0.0),
    "C": (0.0, 9.0, 0.0),
    "D": (4.0, 9.0, 0.0),
    "E": (0.0, 12.0, 0.0),
    "F": (20.0, 0.0, 0.0),
    "G": (20.0, 3.0, 0.0),
}
EDGES = [("S", "A"), ("A", "B"), ("B", "C"), ("C", "D"), ("C", "E"), ("F", "G")]

DIALOG = [
    {"nav_idx": 0, "role": "navigator", "message": "Where now?"},
    {"nav_idx": 0, "role": "oracle", "message": "Up the corridor."},
]


def instance(
    idx: int, planner: list[str], player: list[str], ends: list[str], **extra: Any
) -> dict[str, Any]:
    """One NDH instance in the official schema."""
    rec = {
        "inst_idx": idx,
        "scan": "lane",
        "target": "towel",
        "game_idx": 10 + idx,
        "start_pano": {"heading": 1.5, "elevation": 17.5, "pano": planner[0]},
        "nav_camera": [],
        "dialog_history": DIALOG if idx != 2 else [],
        "nav_history": [],
        "end_panos": ends,
        "planner_path": planner,
        "player_path": player,
        "R2R_success": 0,
    }
    rec.update(extra)
    return rec


INSTANCES = [
    instance(1, ["S", "A", "B"], ["S", "A", "B", "C"], ["C", "D"]),
    instance(2, ["S"], ["S", "A"], ["S", "E"]),
    instance(3, ["A", "B", "C"], ["A", "B", "C", "E"], ["E"]),
]

#: The predictions the hand values below are worked out for.
TRAJECTORIES = {1: ["S", "A", "B"], 2: ["S"], 3: ["A", "B", "C", "D"]}


def stringify(records: list[dict[str, Any]]) -> list[dict[str, str]]:
    """The string-valued form some copies of NDH use: every value as its Python repr."""
    return [{k: v if isinstance(v, str) else repr(v) for k, v in r.items()} for r in records]


def make_root(
    tmp: Path, instances: list[dict[str, Any]] | None = None, split: str = "val_seen"
) -> Path:
    """A data root with the scan and ``cvdn/NDH/<split>.json``."""
    write_json(
        tmp / "matterport3d" / "connectivity" / "lane_connectivity.json",
        connectivity(POS, EDGES, ("X",)),
    )
    write_json(
        tmp / "cvdn" / "NDH" / f"{split}.json", INSTANCES if instances is None else instances
    )
    return tmp


def predictions(
    tmp: Path, trajectories: dict[Any, list[str]] | None = None, name: str = "preds.json"
) -> Path:
    """An NDH predictions file ``[{inst_idx, trajectory: [[vp, heading, elevation], ...]}]``."""
    trajs = TRAJECTORIES if trajectories is None else trajectories
    body = [{"inst_idx": k, "trajectory": [[v, 0.0, 0.0] for v in vps]} for k, vps in trajs.items()]
    path = tmp / name
    path.write_text(json.dumps(body))
    return path
