"""The public copy of R2R, R4R and RxR episodes files (see
:mod:`vlneval.tasks.common.public_file`): each reference path cut to its start, the distance 0."""

from __future__ import annotations

from typing import Any

from vlneval.tasks.common.public_file import cut_to_start, map_records

__all__ = ["public_route", "public_r2r"]


def public_route(rec: dict[str, Any]) -> None:
    """Keeps only the public parts of a route record (its start; distance 0).

    Example:
        >>> rec = {"path_id": 1, "path": ["s", "a", "g"], "distance": 9.5}
        >>> public_route(rec); rec
        {'path_id': 1, 'path': ['s'], 'distance': 0.0}
    """
    rec["path"] = cut_to_start(rec.get("path"))
    rec["distance"] = 0.0


public_r2r = map_records(public_route)
