"""The public copy of a REVERIE episodes file (see :mod:`vlneval.tasks.common.public_file`):
each path cut to its start, the distance 0, the target object ``-1`` (an object no viewpoint
sees): no public check needs it, and a labelled test file's target must not reach a public
scorer. A record's ``id`` is kept as the file has it (it is what predictions name)."""

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
        {'id': '5_12', 'objId': -1, 'path': ['s'], 'distance': 0.0}
    """
    rec["path"] = cut_to_start(rec.get("path"))
    rec["objId"] = NO_OBJECT
    if "distance" in rec:
        rec["distance"] = 0.0


public_reverie = map_records(public_episode)
