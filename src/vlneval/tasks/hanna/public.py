"""The public copy of a HANNA file (see :mod:`vlneval.tasks.common.public_file`): every path
to a goal cut to the start (the goals are the paths' ends)."""

from __future__ import annotations

from typing import Any

from vlneval.tasks.common.public_file import cut_to_start, map_records

__all__ = ["public_task", "public_hanna"]


def public_task(rec: dict[str, Any]) -> None:
    """Keeps only the public parts of a HANNA task record.

    Example:
        >>> rec = {"path_id": 1, "paths": [["s", "a", "g"], ["s", "h"]]}
        >>> public_task(rec); rec
        {'path_id': 1, 'paths': [['s']]}
    """
    paths = rec.get("paths")
    first = paths[0] if isinstance(paths, list) and paths else []
    rec["paths"] = [cut_to_start(first)]


public_hanna = map_records(public_task)
