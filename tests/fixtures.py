"""Tiny synthetic benchmarks written to a temporary folder (connectivity, episodes, predictions)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

# The worked example of spec/metrics.md: a 4 m square S-A-B-G-S (the diagonals are walls).
SQUARE = {"S": (0.0, 0.0, 0.0), "A": (0.0, 4.0, 0.0), "B": (4.0, 4.0, 0.0), "G": (4.0, 0.0, 0.0)}
SQUARE_EDGES = [("S", "A"), ("A", "B"), ("B", "G"), ("S", "G")]


def connectivity(
    positions: dict[str, tuple[float, float, float]],
    edges: list[tuple[str, str]],
    isolated: tuple[str, ...] = (),
) -> list[dict[str, Any]]:
    """Connectivity records for ``positions`` joined by ``edges`` (plus isolated viewpoints)."""
    names = list(positions) + list(isolated)
    pos = dict(positions)
    for k, name in enumerate(isolated):
        pos[name] = (100.0 + k, 100.0, 0.0)
    index = {n: i for i, n in enumerate(names)}
    unob = [[False] * len(names) for _ in names]
    for a, b in edges:
        unob[index[a]][index[b]] = unob[index[b]][index[a]] = True
    out = []
    for n in names:
        x, y, z = pos[n]
        out.append(
            {
                "image_id": n,
                "pose": [1, 0, 0, x, 0, 1, 0, y, 0, 0, 1, z, 0, 0, 0, 1],
                "included": True,
                "visible": unob[index[n]],
                "unobstructed": unob[index[n]],
                "height": 1.5,
            }
        )
    return out


def write_json(path: Path, value: Any) -> Path:
    """Writes ``value`` as JSON, creating folders."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(value))
    return path


def square_root(tmp: Path, episodes: list[dict[str, Any]] | None = None) -> Path:
    """A data root with the square graph (scan ``sq``) and an R2R split ``val``."""
    write_json(
        tmp / "matterport3d" / "connectivity" / "sq_connectivity.json",
        connectivity(SQUARE, SQUARE_EDGES, isolated=("X",)),
    )
    if episodes is None:
        episodes = [
            {
                "path_id": 1,
                "scan": "sq",
                "path": ["S", "A", "B", "G"],
                "heading": 0.0,
                "instructions": ["go round", "walk the long way", "third", "fourth"],
                "distance": 12.0,
            }
        ]
    write_json(tmp / "r2r" / "R2R_val.json", episodes)
    return tmp


def preds(entries: dict[str, list[str]]) -> list[dict[str, Any]]:
    """R2R triples for ``{instr_id: [viewpoints]}``."""
    return [
        {"instr_id": k, "trajectory": [[v, 0.0, 0.0] for v in vps]} for k, vps in entries.items()
    ]
