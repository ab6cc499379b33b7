"""The public copy of an NDH file (see :mod:`vlneval.tasks.common.public_file`): the planner's
and the player's paths and the end panoramas replaced by the start panorama, the per-game
R2R statistics dropped. The dialog and navigation history are the agent's input: they stay."""

from __future__ import annotations

from typing import Any

from vlneval.tasks.common.public_file import map_records

__all__ = ["public_instance", "public_ndh"]

HIDDEN_STATS = ("R2R_spl", "R2R_success", "R2R_oracle_spl", "R2R_oracle_success")


def public_instance(rec: dict[str, Any]) -> None:
    """Keeps only the public parts of an NDH instance.

    Example:
        >>> rec = {"start_pano": {"pano": "s"}, "planner_path": ["s", "g"],
        ...        "player_path": ["s", "a"], "end_panos": ["g"], "R2R_spl": 0.5}
        >>> public_instance(rec); rec
        {'start_pano': {'pano': 's'}, 'planner_path': ['s'], 'player_path': ['s'], 'end_panos': ['s']}
    """
    start = rec.get("start_pano")
    pano = start.get("pano") if isinstance(start, dict) else None
    if pano is None and isinstance(rec.get("planner_path"), list) and rec["planner_path"]:
        pano = rec["planner_path"][0]
    stand_in = [pano] if pano is not None else []
    for key in ("planner_path", "player_path", "end_panos"):
        if key in rec:
            rec[key] = list(stand_in)
    for key in HIDDEN_STATS:
        rec.pop(key, None)


public_ndh = map_records(public_instance)
