"""A tiny star graph with hand-placed neighbours, as episodes and graphs on disk."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from tests.fixtures import connectivity, write_json
from vlneval.graph.store import GraphStore
from vlneval.tasks.common.episodes import EpisodeTable
from vlneval.tasks.r2r.format import load_r2r


def at(heading_deg: float, dist: float = 2.0, z: float = 0.0) -> tuple[float, float, float]:
    """The point ``dist`` metres away (horizontally) at ``heading_deg`` clockwise from +y."""
    h = math.radians(heading_deg)
    return (dist * math.sin(h), dist * math.cos(h), z)


# C in the middle; neighbours at hand-picked headings (degrees clockwise from +y).
STAR = {
    "C": (0.0, 0.0, 0.0),
    "A": at(10),
    "B": at(39.5),
    "D": at(40.5),
    "E": at(-38),
    "F": at(180),
    "G": at(5, z=1.0),  # 26.565° above the horizontal
}
STAR_EDGES = [("C", v) for v in "ABDEFG"] + [("A", "G"), ("F", "E")]


def star_root(tmp: Path, episodes: list[dict[str, Any]] | None = None) -> Path:
    """A data root with the star graph (scan ``star``) and an R2R split ``val``."""
    write_json(
        tmp / "matterport3d" / "connectivity" / "star_connectivity.json",
        connectivity(STAR, STAR_EDGES),
    )
    if episodes is None:
        episodes = [
            {
                "path_id": 1,
                "scan": "star",
                "path": ["C", "A", "G"],
                "heading": 0.0,
                "instructions": ["go to G"],
            },
            {
                "path_id": 2,
                "scan": "star",
                "path": ["F", "C", "B"],
                "heading": math.pi,
                "instructions": ["go to B", "B please"],
            },
            {
                "path_id": 3,
                "scan": "star",
                "path": ["E", "F"],
                "heading": 0.3,
                "instructions": ["go to F"],
            },
        ]
    write_json(tmp / "r2r" / "R2R_val.json", episodes)
    return tmp


def star(tmp: Path) -> tuple[EpisodeTable, GraphStore]:
    """The star episodes and graphs."""
    root = star_root(tmp)
    return load_r2r(root / "r2r" / "R2R_val.json", split="val"), GraphStore(
        root / "matterport3d" / "connectivity"
    )
