"""Navigation graphs: Matterport3D connectivity, geodesic distance tables, geometry."""

from __future__ import annotations

from vlneval.graph.geometry import direction, view_index
from vlneval.graph.matterport import NavGraph, load_connectivity, parse_connectivity
from vlneval.graph.store import GraphStore

__all__ = [
    "NavGraph",
    "GraphStore",
    "load_connectivity",
    "parse_connectivity",
    "direction",
    "view_index",
]
