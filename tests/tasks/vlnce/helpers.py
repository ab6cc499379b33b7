"""Builders of a tiny synthetic VLN-CE split (two episodes, Habitat frame)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


def episode(eid: int, goal_z: float, gd: float | None = 4.0) -> dict[str, Any]:
    """Start at the origin, goal straight ahead along −z (Habitat's forward)."""
    info = {"geodesic_distance": gd} if gd is not None else {}
    return {
        "episode_id": eid,
        "trajectory_id": 100 + eid,
        "scene_id": f"mp3d/S{eid}/S{eid}.glb",
        "start_position": [0.0, 0.0, 0.0],
        "start_rotation": [0.0, 0.0, 0.0, 1.0],
        "info": info,
        "goals": [{"position": [0.0, 0.0, goal_z], "radius": 3.0}],
        "instruction": {"instruction_text": f"walk {eid}", "instruction_id": f"i{eid}"},
        "reference_path": [[0.0, 0.0, 0.0], [0.0, 0.0, goal_z]],
    }


def write_split(tmp_path: Path) -> tuple[Path, Path]:
    """``val.json`` and ``val_gt.json``: episodes 1 and 2, goals 4 m ahead, dense gt 1 m apart."""
    eps = {"episodes": [episode(1, -4.0), episode(2, -4.0)]}
    gt = {
        str(i): {
            "locations": [[0.0, 0.0, -float(k)] for k in range(5)],
            "actions": [],
            "forward_steps": 4,
        }
        for i in (1, 2)
    }
    ep_path, gt_path = tmp_path / "val.json", tmp_path / "val_gt.json"
    ep_path.write_text(json.dumps(eps))
    gt_path.write_text(json.dumps(gt))
    return ep_path, gt_path


def steps(
    points: list[list[float]], dists: list[Any] | None = None, *, stop: bool = True
) -> list[dict[str, Any]]:
    """An r2r-ce trajectory of ``points`` (STOP at the last when ``stop``)."""
    out = []
    for k, p in enumerate(points):
        s: dict[str, Any] = {"position": p, "heading": 0.0, "stop": stop and k == len(points) - 1}
        if dists is not None:
            s["distance_to_goal"] = dists[k]
        out.append(s)
    return out
