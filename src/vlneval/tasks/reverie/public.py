"""The public copy of a REVERIE episodes file (see :mod:`vlneval.tasks.common.public_file`):
each path cut to its start, the distance 0. The target object's id stays: it is part of the
public episode id (``<path_id>_<objId>``); a test row, which has none, gets ``-1``, an object
no viewpoint sees."""

from __future__ import annotations

from typing import Any

from vlneval.tasks.common.public_file import cut_to_start, map_records

__all__ = ["public_episode", "public_reverie", "NO_OBJECT"]

NO_OBJECT = -1


def public_episode(rec: dict[str, Any]) -> None:
    """Keeps only the public parts of a REVERIE record.

    Example:
        >>> rec = {"id": "5_12", "objId": 12, "path": ["s", "g"], "distance": 4.0}
        >>> public_episode(rec); rec
        {'id': '5_12', 'objId': 12, 'path': ['s'], 'distance': 0.0}
    """
    rec["path"] = cut_to_start(rec.get("path"))
    rec.setdefault("objId", NO_OBJECT)
    if "distance" in rec:
        rec["distance"] = 0.0


public_reverie = map_records(public_episode)
