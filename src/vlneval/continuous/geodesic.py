"""The grid graph of a :class:`~vlneval.continuous.world.World` and paths on it.

Edges join free cells that are 8-neighbours or knight moves apart (a 16-neighbour stencil, so
that shortest paths bend at most 13.3° from any straight line), on the same or another layer,
when the height test of :meth:`World.connected` passes and no corner is cut (the cells the move
passes between are free on one of the two layers). Weights are 3-D lengths.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from vlneval.continuous.world import World

__all__ = ["build_graph", "descend", "shortest_path"]


def _shift(a: np.ndarray, di: int, dj: int) -> np.ndarray:
    """``out[i, j] = a[i + di, j + dj]`` (False/NaN outside)."""
    out = np.zeros_like(a) if a.dtype == np.bool_ else np.full_like(a, np.nan)
    h, w = a.shape
    src_i = slice(max(di, 0), h + min(di, 0))
    dst_i = slice(max(-di, 0), h + min(-di, 0))
    src_j = slice(max(dj, 0), w + min(dj, 0))
    dst_j = slice(max(-dj, 0), w + min(-dj, 0))
    out[dst_i, dst_j] = a[src_i, src_j]
    return out


def build_graph(world: World) -> Any:
    """The symmetric CSR matrix of the world's cell graph (each edge stored both ways).

    Example:
        >>> from vlneval.continuous.world import World
        >>> g = build_graph(World.from_array([[1, 1], [1, 0]], resolution=1.0))
        >>> g.shape, g.nnz
        ((3, 3), 4)
    """
    from scipy.sparse import coo_matrix

    from vlneval.continuous.world import _CORNERS, NEIGHBOURS

    free, height, ids, res = world.free, world.height, world.node_id, world.resolution
    rows: list[np.ndarray] = []
    cols: list[np.ndarray] = []
    weights: list[np.ndarray] = []
    layers = range(world.n_layers)
    for di, dj in NEIGHBOURS:
        dxy = res * math.hypot(di, dj)
        for l1 in layers:
            for l2 in layers:
                b_free = _shift(free[l2], di, dj)
                ok = free[l1] & b_free
                if not ok.any():
                    continue
                dh = _shift(height[l2], di, dj) - height[l1]
                ok &= world.connected(np.nan_to_num(dh, nan=np.inf), dxy)
                either = free[l1] | free[l2]
                for ci, cj in _CORNERS[(di, dj)]:
                    ok &= _shift(either, ci, cj)
                ii, jj = np.nonzero(ok)
                if not len(ii):
                    continue
                rows.append(ids[l1, ii, jj])
                cols.append(ids[l2, ii + di, jj + dj])
                weights.append(np.sqrt(dxy * dxy + dh[ii, jj] ** 2))
    n = world.n_nodes
    if not rows:
        return coo_matrix((n, n)).tocsr()
    r, c, w = np.concatenate(rows), np.concatenate(cols), np.concatenate(weights)
    # Zero-length edges would vanish from a sparse matrix; the stencil has none (dxy > 0).
    both = (np.concatenate([w, w]), (np.concatenate([r, c]), np.concatenate([c, r])))
    return coo_matrix(both, shape=(n, n)).tocsr()


def descend(world: World, field: np.ndarray, node: int) -> int:
    """The neighbour of ``node`` that is best to step to towards the field's source.

    Minimises ``edge length + field[neighbour]`` (the next node of a shortest path); returns
    ``node`` itself at the source or when nothing is reachable.
    """
    graph = world.graph()
    lo, hi = graph.indptr[node], graph.indptr[node + 1]
    nbrs, w = graph.indices[lo:hi], graph.data[lo:hi]
    if len(nbrs):
        cand = w + field[nbrs]
        k = int(np.argmin(cand))
        if cand[k] < field[node] - 1e-9:
            return int(nbrs[k])
    return node


def shortest_path(world: World, field: np.ndarray, node: int, limit: int = 1_000_000) -> list[int]:
    """Nodes of a shortest path from ``node`` to the field's source (``[node]`` if unreachable)."""
    path = [node]
    if not np.isfinite(field[node]):
        return path
    while field[path[-1]] > 0 and len(path) < limit:
        nxt = descend(world, field, path[-1])
        if nxt == path[-1]:
            break
        path.append(nxt)
    return path
