"""The public copy of a VLN-CE episodes file and its ``_gt`` file (see
:mod:`vlneval.tasks.common.public_file`): every goal, reference path and dense reference moved
to the episode's start position, the geodesic distance 0. Scene, start and instruction stay.
A test episode, which has no goal, gets the same stand-ins (a goal of radius 3 m at its start)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from vlneval.tasks.common.public_file import read_records, write_records

__all__ = ["public_episode", "public_vlnce", "GOAL_RADIUS"]

GOAL_RADIUS = 3.0  # VLN-CE's success radius


def public_episode(ep: dict[str, Any]) -> None:
    """Keeps only the public parts of a VLN-CE episode.

    Example:
        >>> ep = {"start_position": [1, 2, 3], "goals": [{"position": [9, 9, 9], "radius": 3.0}],
        ...       "reference_path": [[1, 2, 3], [9, 9, 9]], "info": {"geodesic_distance": 8.0}}
        >>> public_episode(ep); ep["goals"], ep["reference_path"], ep["info"]
        ([{'position': [1, 2, 3], 'radius': 3.0}], [[1, 2, 3]], {'geodesic_distance': 0.0})
    """
    start = ep.get("start_position")
    goals = ep.get("goals")
    if isinstance(goals, list) and goals:
        ep["goals"] = [{**g, "position": start} if isinstance(g, dict) else g for g in goals[:1]]
    else:
        ep["goals"] = [{"position": start, "radius": GOAL_RADIUS}]
    ep["reference_path"] = [start]
    info = ep.get("info")
    ep["info"] = {**(info if isinstance(info, dict) else {}), "geodesic_distance": 0.0}


def _gt_name(name: str) -> str:
    return name.replace(".json", "_gt.json")


def public_vlnce(src: Path, dest: Path) -> None:
    """Writes the public copy of ``src`` at ``dest`` (and of its ``_gt`` file beside it)."""
    value, jsonl = read_records(src)
    episodes = value.get("episodes") if isinstance(value, dict) else None
    starts: dict[str, Any] = {}
    for ep in episodes if isinstance(episodes, list) else []:
        if isinstance(ep, dict):
            public_episode(ep)
            starts[str(ep.get("episode_id"))] = ep.get("start_position")
    write_records(dest, value, jsonl)
    gt = src.parent / _gt_name(src.name)
    link = dest.parent / _gt_name(dest.name)
    if link.is_symlink() or link.exists():
        link.unlink()
    if not gt.is_file():
        return
    dense, _ = read_records(gt)
    if isinstance(dense, dict):
        for eid, ref in dense.items():
            if isinstance(ref, dict):
                start = starts.get(str(eid))
                ref.update(locations=[start] if start is not None else [], actions=[0])
                if "forward_steps" in ref:
                    ref["forward_steps"] = 0
    write_records(link, dense, False)
