"""The public copy of a Touchdown routes file (see :mod:`vlneval.tasks.common.public_file`):
each route cut to its start panorama, the end heading the start heading, the target panoramas
the start, and every target location (``*_center``) the panorama's centre, an absent one
(``{"x": -1, "y": -1}``: the target is not in that panorama) too. Which panoramas show the
target is a label: the public copy asks for every (route, pre|main|post), and the scorer
ignores the predictions for panoramas without the target (a server says nothing of them)."""

from __future__ import annotations

import json
from typing import Any

from vlneval.tasks.common.public_file import cut_to_start, map_records
from vlneval.tasks.touchdown.format import SDR_KINDS

__all__ = ["public_route", "public_touchdown"]


def _centre(value: Any) -> Any:
    """A target location, known or absent, replaced by the panorama's centre (a malformed
    one too: never copied)."""
    centre = {"x": 0.5, "y": 0.5}
    return json.dumps(centre) if isinstance(value, str) else centre


def public_route(rec: dict[str, Any]) -> None:
    """Keeps only the public parts of a Touchdown route.

    Example:
        >>> rec = {"route_panoids": ["s", "a", "g"], "start_heading": 10.0, "end_heading": 99.0,
        ...        "main_pano": "g", "main_static_center": '{"x": 0.1, "y": 0.9}',
        ...        "pre_static_center": '{"x": -1, "y": -1}'}
        >>> public_route(rec); rec["route_panoids"], rec["end_heading"], rec["main_pano"]
        (['s'], 10.0, 's')
        >>> rec["main_static_center"], rec["pre_static_center"]
        ('{"x": 0.5, "y": 0.5}', '{"x": 0.5, "y": 0.5}')
    """
    route: Any = rec.get("route_panoids")
    text = isinstance(route, str)
    if text:
        try:
            route = json.loads(route.replace("'", '"'))
        except json.JSONDecodeError:
            route = []
    start = cut_to_start(route)
    rec["route_panoids"] = json.dumps(start) if text else start
    if "start_heading" in rec:
        rec["end_heading"] = rec["start_heading"]
    for kind in SDR_KINDS:
        if f"{kind}_pano" in rec:  # an unreadable route: a stand-in, never the hidden pano
            rec[f"{kind}_pano"] = start[0] if start else ""
        for key in (f"{kind}_center", f"{kind}_static_center"):
            if key in rec:
                rec[key] = _centre(rec[key])


public_touchdown = map_records(public_route)
