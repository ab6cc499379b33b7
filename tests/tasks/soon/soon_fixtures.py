"""A tiny SOON benchmark in the official schema (hand-built: no real SOON file is available).

Graph (scan ``sq``): the square S-A-B-G-S of spec/metrics.md (4 m edges) plus N, 2 m from G.
Box corners are in radians in the file, as in the official release; normalised they are
``CENTRE_BOX`` = [0.4, 0.6] x [0.4, 0.6], and ``SEAM_BOX`` straddles heading 0: its left edge at
6.1 rad (0.9709) and its right edge at 0.2 rad (0.0318), elevations ±0.3 rad (0.5477, 0.4523).

Instructions: "1" has two start paths, [S, G] and [A, B], boxes at G and at B; "2" and "3"
go S -> G with the seam box at G; "4" goes S -> G with the centre box at G.
"""

from __future__ import annotations

import copy
import json
import math
from pathlib import Path
from typing import Any

from tests.fixtures import connectivity, write_json

NODES = {
    "S": (0.0, 0.0, 0.0),
    "A": (0.0, 4.0, 0.0),
    "B": (4.0, 4.0, 0.0),
    "G": (4.0, 0.0, 0.0),
    "N": (4.0, -2.0, 0.0),
}
EDGES = [("S", "A"), ("A", "B"), ("B", "G"), ("S", "G"), ("G", "N")]

TAU = 2 * math.pi
# normalised [0.4, 0.6] x [0.4, 0.6] in radians: heading 0.4τ..0.6τ, elevation ±0.2τ
CENTRE = {
    "left_top": (0.4 * TAU, 0.1 * TAU),
    "right_top": (0.6 * TAU, 0.1 * TAU),
    "right_bottom": (0.6 * TAU, -0.1 * TAU),
    "left_bottom": (0.4 * TAU, -0.1 * TAU),
    "center": (0.5 * TAU, 0.0),
}
SEAM = {
    "left_top": (6.1, 0.3),
    "right_top": (0.2, 0.3),
    "right_bottom": (0.2, -0.3),
    "left_bottom": (6.1, -0.3),
    "center": (0.0, 0.0),
}


def box(image_id: str, corners: dict[str, tuple[float, float]]) -> dict[str, Any]:
    """One bbox record of the official schema."""
    target = {k: {"heading": h, "elevation": e} for k, (h, e) in corners.items()}
    c = corners["center"]
    return {
        "image_id": image_id,
        "scan": "sq",
        "obj_name": "cup",
        "heading": c[0],
        "elevation": c[1],
        "target": target,
        "mouse_left_top": {"x": 1, "y": 2},
        "mouse_right_bottom": {"x": 30, "y": 40},
    }


def instr(text: str) -> list[list[str]]:
    """An instruction group: attribute, relation, region, nearby region, full sentence."""
    return [["red", "on the table", "kitchen", "hall", text]]


EPISODES = [
    {
        "instr_id": "1",
        "path": [["S", "G"], ["A", "B"]],
        "bboxes": [box("G", CENTRE), box("B", CENTRE)],
        "instructions": instr("find the red cup on the kitchen table"),
    },
    {
        "instr_id": "2",
        "path": [["S", "G"]],
        "bboxes": [box("G", SEAM)],
        "instructions": instr("mug"),
    },
    {
        "instr_id": "3",
        "path": [["S", "G"]],
        "bboxes": [box("G", SEAM)],
        "instructions": instr("mug 2"),
    },
    {
        "instr_id": "4",
        "path": [["S", "G"]],
        "bboxes": [box("G", CENTRE)],
        "instructions": instr("bowl"),
    },
]


def soon_root(tmp: Path, episodes: list[dict[str, Any]] | None = None) -> Path:
    """A data root with the graph and the split ``val`` (and a hidden ``test``)."""
    write_json(
        tmp / "matterport3d" / "connectivity" / "sq_connectivity.json", connectivity(NODES, EDGES)
    )
    write_json(tmp / "soon" / "val.json", EPISODES if episodes is None else episodes)
    test = [{"instr_id": "9", "scan": "sq", "path": [["S"]], "instructions": instr("x")}]
    write_json(tmp / "soon" / "test.json", test)
    return tmp


def entry(vps: list[str], h: float, e: float) -> dict[str, Any]:
    """One per-start prediction entry, R2R triples, angles as one-element lists."""
    return {"path": [[v, 0.0, 0.0] for v in vps], "obj_heading": [h], "obj_elevation": [e]}


# instr_id -> per-start entries (the hand-worked example of test_soon_scoring.py)
HAND = {
    "1": [entry(["S", "A", "B"], 0.5, 0.5), entry(["A", "S"], 0.5, 0.5)],
    "2": [entry(["S", "G"], 0.99, 0.5)],
    "3": [entry(["S", "G"], 0.01, 0.5)],
    "4": [entry(["S", "G", "N"], 0.5, 0.5)],
}


def soon_preds(entries: dict[str, list[dict[str, Any]]] = HAND) -> list[dict[str, Any]]:
    """Submission records (deep copies: tests may edit them)."""
    return [{"instr_id": k, "trajectory": copy.deepcopy(v)} for k, v in entries.items()]


def dump(path: Path, value: Any) -> Path:
    """Writes JSON."""
    path.write_text(json.dumps(value))
    return path
