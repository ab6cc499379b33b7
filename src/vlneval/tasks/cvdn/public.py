"""The public copy of an NDH file (see :mod:`vlneval.tasks.common.public_file`): the planner's
and the player's paths and the end panoramas replaced by the start panorama, the per-game
R2R statistics dropped. The dialog and navigation history are the agent's input: they stay."""

from __future__ import annotations

import ast
from typing import Any

from vlneval.tasks.common.public_file import map_records

__all__ = ["public_instance", "public_ndh"]

HIDDEN_STATS = ("R2R_spl", "R2R_success", "R2R_oracle_spl", "R2R_oracle_success")


def public_instance(rec: dict[str, Any]) -> None:
    """Keeps only the public parts of an NDH instance; the three hidden fields are always set
    (a test split's instances have none: its copy is then scorable, so the scorer checks it),
    as strings in a file that stores its values as strings.

    Example:
        >>> rec = {"start_pano": {"pano": "s"}, "planner_path": ["s", "g"],
        ...        "player_path": ["s", "a"], "end_panos": ["g"], "R2R_spl": 0.5}
        >>> public_instance(rec); rec
        {'start_pano': {'pano': 's'}, 'planner_path': ['s'], 'player_path': ['s'], 'end_panos': ['s']}
        >>> rec = {"start_pano": "{'pano': 's'}", "planner_path": "['s', 'g']"}
        >>> public_instance(rec); rec["planner_path"], rec["end_panos"]
        ("['s']", "['s']")
    """
    strings = isinstance(rec.get("start_pano"), str)
    start = _literal(rec.get("start_pano"))
    pano = start.get("pano") if isinstance(start, dict) else None
    planner = _literal(rec.get("planner_path"))
    if pano is None and isinstance(planner, list) and planner:
        pano = planner[0]
    stand_in = [pano] if pano is not None else []
    for key in ("planner_path", "player_path", "end_panos"):
        rec[key] = repr(stand_in) if strings else list(stand_in)
    for key in HIDDEN_STATS:
        rec.pop(key, None)


def _literal(value: Any) -> Any:
    """A value as the NDH reader reads it: a string holding a Python literal is parsed
    (literals only); anything unreadable is None."""
    if not isinstance(value, str):
        return value
    try:
        return ast.literal_eval(value)
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return None


public_ndh = map_records(public_instance)
