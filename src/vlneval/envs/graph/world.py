"""The world of the graph family: navigation graphs with their candidate tables built once.

vlneval has two kinds of world, named apart: a :class:`GraphWorld` (here) is the set of
Matterport3D navigation graphs the graph environments move on; a
:class:`vlneval.continuous.world.World` is the occupancy grid of one building that the
continuous environments move in.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from vlneval.graph.store import GraphStore
from vlneval.graph.tables import ScanTables, build_tables

__all__ = ["GraphWorld"]


class GraphWorld:
    """Graphs of a folder of connectivity files, their candidate tables and distance tables.

    Several environments may share one world (the tables are immutable).

    Args:
        graphs: a :class:`GraphStore` or a folder of ``<scan>_connectivity.json[.gz]`` files.
    """

    def __init__(self, graphs: GraphStore | str | Path) -> None:
        self.store = graphs if isinstance(graphs, GraphStore) else GraphStore(graphs)
        self._tables: dict[str, ScanTables] = {}

    def tables(self, scan: str) -> ScanTables:
        """The candidate tables of ``scan``."""
        hit = self._tables.get(scan)
        if hit is None:
            hit = self._tables[scan] = build_tables(self.store.graph(scan))
        return hit

    def distances(self, scan: str) -> np.ndarray:
        """The geodesic distance table of ``scan`` (only the privileged channel reads it)."""
        return self.store.distances(scan)

    def __contains__(self, scan: object) -> bool:
        return scan in self.store
