"""A tiny Touchdown world: a street graph, three routes and SDR locations, worked out by hand.

Panoramas p0 - p1 - p2 - p3 - p4 along a street, p2 - p5 - p6 down a side street, and one
one-way link p6 -> p4 (so p4 and p6 are one hop apart for the scorers, which use the undirected
graph). ``z`` has no link. Hops: p0-p4 4, p0-p5 3, p0-p6 4, p3-p5 2, p3-p6 2, p2-p5 1.

Routes: 1 = p0 p1 p2 p3 p4 (main location (0.5, 0.5), post (0.01, 0.5), no pre);
2 = p0 p1 p2 p5 (main (0.995, 0.25)); 3 = p3 p2 p5 p6 (no known location).
SDR frame: 3680 x 800 px.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

NODES = ["p0,10,40.700,-74.000", "p1,10,40.701,-74.000", "p2,10,40.702,-74.000", "p3,10,40.703,-74.000",
         "p4,10,40.704,-74.000", "p5,100,40.702,-74.001", "p6,100,40.702,-74.002", "z,0,40.8,-74.1"]  # fmt: skip
LINKS = [
    "p0,0,p1", "p1,180,p0", "p1,0,p2", "p2,180,p1", "p2,0,p3", "p3,180,p2", "p3,0,p4", "p4,180,p3",
    "p2,270,p5", "p5,90,p2", "p5,270,p6", "p6,90,p5", "p6,30,p4",
]  # fmt: skip
NONE = '{"x": -1, "y": -1}'


def route(
    rid: int, panos: list[str], main: str = NONE, pre: str = NONE, post: str = NONE
) -> dict[str, Any]:
    """A route record in the official schema (centers as JSON text, as the files have them)."""
    return {
        "city": "nyc", "route_id": rid, "route_panoids": panos, "start_heading": 90.0,
        "end_heading": 0.0, "navigation_text": f"walk route {rid}", "td_location_text": "the bear is on the bin",
        "main_pano": panos[-1], "pre_pano": panos[0], "post_pano": "p6",
        "main_static_center": main, "pre_static_center": pre, "post_static_center": post,
    }  # fmt: skip


ROUTES = [
    route(
        1, ["p0", "p1", "p2", "p3", "p4"], main='{"x": 0.5, "y": 0.5}', post='{"x": 0.01, "y": 0.5}'
    ),
    route(2, ["p0", "p1", "p2", "p5"], main='{"x": 0.995, "y": 0.25}'),
    route(3, ["p3", "p2", "p5", "p6"]),
]

#: The navigation predictions of the hand values.
RUNS = {1: ["p0", "p1", "p2", "p3", "p4"], 2: ["p0", "p1", "p1", "p2", "p3"], 3: ["p3", "p4", "p6"]}


def make_root(
    tmp: Path, routes: list[dict[str, Any]] | None = None, version: str = "touchdown_unseen_split"
) -> Path:
    """A data root with ``touchdown/graph/{nodes,links}.txt`` and ``touchdown/<version>/dev.json``."""
    graph = tmp / "touchdown" / "graph"
    graph.mkdir(parents=True, exist_ok=True)
    (graph / "nodes.txt").write_text("\n".join(NODES) + "\n")
    (graph / "links.txt").write_text("\n".join(LINKS) + "\n")
    split = tmp / "touchdown" / version
    split.mkdir(parents=True, exist_ok=True)
    (split / "dev.json").write_text(
        "\n".join(json.dumps(r) for r in (ROUTES if routes is None else routes)) + "\n"
    )
    return tmp


def write(tmp: Path, body: Any, name: str = "td_preds.json") -> Path:
    """Writes a predictions file."""
    path = tmp / name
    path.write_text(json.dumps(body))
    return path


def nav(tmp: Path, runs: dict[Any, list[Any]] | None = None) -> Path:
    """A navigation predictions file ``[{route_id, trajectory: [pano, ...]}]``."""
    return write(
        tmp, [{"route_id": k, "trajectory": v} for k, v in (RUNS if runs is None else runs).items()]
    )


#: SDR predictions: 30 px off, across the seam (3623.2 px unwrapped, 56.8 px wrapped), 80 px off.
SDR = [
    {"route_id": 1, "pano": "main", "x": 1870.0, "y": 400.0},
    {"route_id": 1, "pano": "post", "x": 3660.0, "y": 400.0},
    {"route_id": 2, "x": 0.995 * 3680, "y": 280.0},
]
