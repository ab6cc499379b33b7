"""Searches from one cell towards a few: the waypoint executor's planner.

:class:`TargetSearch` answers what ``World.search`` (scipy's Dijkstra over everything within
``limit``) answers for the cells around a waypoint target, with the same floats and the same
path, but stops as soon as those cells are settled: a waypoint a few metres away settles a
few thousand cells instead of every cell within ``limit``. Where a path's predecessor would
depend on the order scipy's heap returns two cells of equal distance (a tie), the path comes
from scipy's own search (``World.search``), so the result never differs from it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from vlneval.continuous.world import World

__all__ = ["TargetSearch"]


class TargetSearch:
    """A bounded Dijkstra search on a world, reusing its scratch arrays between searches.

    Args:
        world: the world (its graph is built on first use).

    Example:
        >>> from vlneval.continuous.world import World
        >>> w = World.from_array([[1, 1, 1, 1]], resolution=1.0)
        >>> s = TargetSearch(w)
        >>> keys = np.array([0, 0])
        >>> s.best(0, np.array([3, 2]), keys, keys, limit=10.0), s.path(2).tolist()
        (2, [0, 1, 2])
    """

    def __init__(self, world: World) -> None:
        from vlneval.continuous import _search_kernels as kernels  # deferred: numba

        self.world = world
        self.kernels = kernels
        from scipy.sparse.csgraph import connected_components  # deferred: scipy

        graph = world.graph()
        self._csr = (graph.indptr, graph.indices, graph.data)
        # A cell of another (weakly) connected part is unreachable: no search has to prove it.
        self._part = connected_components(graph, directed=True, connection="weak")[1]
        n = world.n_nodes
        self._dist = np.full(n, np.inf)
        self._pred = np.full(n, -9999, dtype=np.int64)
        self._state = np.zeros(n, dtype=np.int32)
        self._touched = np.empty(n, dtype=np.int64)
        self._count = 0
        self._start, self._limit = -1, 0.0
        #: searches whose path came from scipy because of a tie (for benchmarks)
        self.fallbacks = 0

    def best(
        self, start: int, targets: np.ndarray, k1: np.ndarray, k2: np.ndarray, *, limit: float
    ) -> int:
        """Of the ``targets`` reachable from ``start`` within ``limit``, the one of least key
        ``(k1, k2, distance)`` (the first on ties), or -1: the distances are those of
        ``World.search(start, limit=limit)[0]``, found only as far as they decide it."""
        k = self.kernels
        k.reset(self._dist, self._pred, self._state, self._touched, self._count)
        same = self._part[targets] == self._part[start]
        if not same.all():
            targets, k1, k2 = targets[same], k1[same], k2[same]
        self._count, t = k.best_target(
            *self._csr, int(start), float(limit), targets, k1, k2,
            self._dist, self._pred, self._state, self._touched,
        )  # fmt: skip
        self._start, self._limit = int(start), float(limit)
        return int(targets[t]) if t >= 0 else -1

    def path(self, node: int) -> np.ndarray:
        """The nodes of scipy's shortest path from the last search's start to ``node`` (what
        :meth:`best` returned), start first."""
        nodes = self.kernels.trace(self._pred, self._state, self._start, int(node))
        if len(nodes):
            return np.asarray(nodes)
        self.fallbacks += 1
        _, pred = self.world.search(self._start, limit=self._limit)
        out = [int(node)]
        while out[-1] != self._start:
            out.append(int(pred[out[-1]]))
        return np.array(out[::-1], dtype=np.int64)
