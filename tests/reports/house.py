"""A tiny two-floor house with six R2R episodes whose outcomes are known by hand.

Floor 0 (camera z 1.5 m, elevation 0): F0..F5 on the x axis, 4 m apart, a chain.
Stairs: S at (20, 2, 2.8), joined to F5 and U0 (elevation 1.3 m, nearer floor 0).
Floor 1 (camera z 4.5 m, elevation 3): U0 (20, 4), U1 (16, 4), U2 (12, 4), U3 (8, 4), a chain.

| id  | reference (goal last) | executed           | d*   | TL | NE | outcome                  |
|-----|-----------------------|--------------------|------|----|----|--------------------------|
| 1_0 | F0 F1 F2              | F0 F1 F2           | 8    | 8  | 0  | success                  |
| 2_0 | F0 F1 F2 F3           | F0 F1 F2 F3 F4     | 12   | 16 | 4  | passed_goal              |
| 3_0 | F0 F1 F2 F3 F4        | F0 F1              | 16   | 4  | 12 | stopped_early            |
| 4_0 | F2 F1 F0              | F2 F3 F4 F5        | 8    | 12 | 20 | wandered                 |
| 5_0 | F4 F5 S U0 U1         | F4 F5 S U0 U1      | 4+a+b+4 | same | 0 | success (two floors) |
| 6_0 | F0 F1 F2              | F0 F0 F0 F0 F0 F0  | 8    | 0  | 8  | stopped_early; step_limit with T = 5 |

a = |F5 S| = sqrt(4 + 1.3²) = sqrt(5.69), b = |S U0| = sqrt(4 + 1.7²) = sqrt(6.89).
SR = 2/6, OSR = 3/6 (2_0 passes F3), SR@1 = 2/6 (both successes walk exactly d*).
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from tests.fixtures import connectivity, write_json

POSITIONS = {
    **{f"F{k}": (4.0 * k, 0.0, 1.5) for k in range(6)},
    "S": (20.0, 2.0, 2.8),
    "U0": (20.0, 4.0, 4.5),
    "U1": (16.0, 4.0, 4.5),
    "U2": (12.0, 4.0, 4.5),
    "U3": (8.0, 4.0, 4.5),
}
EDGES = [(f"F{k}", f"F{k + 1}") for k in range(5)] + [
    ("F5", "S"),
    ("S", "U0"),
    ("U0", "U1"),
    ("U1", "U2"),
    ("U2", "U3"),
]
REFERENCES = {
    1: ["F0", "F1", "F2"],
    2: ["F0", "F1", "F2", "F3"],
    3: ["F0", "F1", "F2", "F3", "F4"],
    4: ["F2", "F1", "F0"],
    5: ["F4", "F5", "S", "U0", "U1"],
    6: ["F0", "F1", "F2"],
}
EXECUTED = {
    "1_0": ["F0", "F1", "F2"],
    "2_0": ["F0", "F1", "F2", "F3", "F4"],
    "3_0": ["F0", "F1"],
    "4_0": ["F2", "F3", "F4", "F5"],
    "5_0": ["F4", "F5", "S", "U0", "U1"],
    "6_0": ["F0"] * 6,
}
STAIRS = 4.0 + math.sqrt(5.69) + math.sqrt(6.89) + 4.0
SHORTEST = {"1_0": 8.0, "2_0": 12.0, "3_0": 16.0, "4_0": 8.0, "5_0": STAIRS, "6_0": 8.0}
OUTCOMES = {
    "1_0": "success",
    "2_0": "passed_goal",
    "3_0": "stopped_early",
    "4_0": "wandered",
    "5_0": "success",
    "6_0": "stopped_early",
}
INSTRUCTION = "Walk down the hall <b>&</b> stop by the stairs."


def house_root(tmp: Path) -> Path:
    """A data root with scan ``house`` and the R2R split ``val`` (one instruction per path)."""
    conn = connectivity(POSITIONS, EDGES)
    write_json(tmp / "matterport3d" / "connectivity" / "house_connectivity.json", conn)
    episodes = [
        {
            "path_id": k,
            "scan": "house",
            "path": path,
            "heading": 0.0,
            "instructions": [f"{INSTRUCTION} (episode {k})"],
            "distance": 0.0,
        }
        for k, path in REFERENCES.items()
    ]
    write_json(tmp / "r2r" / "R2R_val.json", episodes)
    return tmp


def predictions(entries: dict[str, list[str]] | None = None) -> list[dict[str, Any]]:
    """R2R triples for the executed paths (default: the table above)."""
    entries = EXECUTED if entries is None else entries
    return [
        {"instr_id": k, "trajectory": [[v, 0.0, 0.0] for v in vps]} for k, vps in entries.items()
    ]


def write_predictions(path: Path, entries: dict[str, list[str]] | None = None) -> Path:
    """Writes :func:`predictions` to ``path``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(predictions(entries)))
    return path
