"""Continuous twins of Matterport3D buildings: free space from a navigation graph.

The twin of a scan keeps what the connectivity file knows about its layout: every viewpoint's
floor point (camera position minus its ``height`` above the floor) and every navigable edge.
Free space is the union of corridors ("capsules") of half-width ``half_width`` around the
edges, so each viewpoint sits in a disc of that radius. Heights run linearly along each edge,
so a staircase edge is a ramp between floors. Cells are painted into layers: a cell goes to
the first layer that is empty there or whose floor there is within ``climb`` of the new one,
so overlapping floors, landings and stairs land in separate layers and are joined only where
their heights meet (see :mod:`vlneval.continuous.world`).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import numpy as np

from vlneval.continuous.world import World

if TYPE_CHECKING:
    from vlneval.graph.matterport import NavGraph

__all__ = ["world_from_navgraph", "floor_points", "DEFAULT_CAMERA_HEIGHT"]

#: Camera height above the floor assumed when a connectivity file gives none (metres).
DEFAULT_CAMERA_HEIGHT = 1.5


def floor_points(graph: NavGraph) -> np.ndarray:
    """The floor point under each node's camera, ``(n, 3)`` (z = pose z − height)."""
    pos = np.asarray(graph.positions, dtype=np.float64).copy()
    heights = (
        graph.heights if graph.heights is not None else np.full(len(pos), DEFAULT_CAMERA_HEIGHT)
    )
    pos[:, 2] -= heights
    return pos


class _Painter:
    def __init__(self, shape: tuple[int, int], climb: float) -> None:
        self.shape, self.climb = shape, climb
        self.free: list[np.ndarray] = []
        self.height: list[np.ndarray] = []
        self.axis: list[np.ndarray] = []

    def _layer(self, k: int) -> None:
        while len(self.free) <= k:
            self.free.append(np.zeros(self.shape, dtype=np.bool_))
            self.height.append(np.full(self.shape, np.nan))
            self.axis.append(np.full(self.shape, np.inf))

    def paint(self, ii: np.ndarray, jj: np.ndarray, h: np.ndarray, d: np.ndarray) -> None:
        """Puts cells (ii, jj) with heights h (axis distances d) into the first fitting layer."""
        k = 0
        while len(ii):
            self._layer(k)
            free, height, axis = self.free[k], self.height[k], self.axis[k]
            empty = ~free[ii, jj]
            close = ~empty & (np.abs(height[ii, jj] - h) <= self.climb)
            take = empty | (close & (d < axis[ii, jj]))
            free[ii[take], jj[take]] = True
            height[ii[take], jj[take]] = h[take]
            axis[ii[take], jj[take]] = d[take]
            rest = ~(empty | close)
            ii, jj, h, d = ii[rest], jj[rest], h[rest], d[rest]
            k += 1


def world_from_navgraph(
    graph: NavGraph,
    *,
    resolution: float = 0.1,
    half_width: float = 0.4,
    margin: float = 1.0,
    climb: float = 0.25,
    slope: float = 1.6,
) -> World:
    """The continuous twin of one scan.

    Args:
        graph: the scan's navigation graph (nodes with at least one navigable edge).
        resolution: cell size (metres).
        half_width: corridor half-width around each edge (metres); also each viewpoint's radius.
            0.4 m makes 0.8 m passages (a doorway). Walls are not modelled: wider corridors
            join rooms through walls (at 0.5 m one R2R val_unseen start lies 2.2 m from its goal
            in the twin, 7.1 m on the graph); narrower ones are harder to drive.
        margin: empty border around the layout (metres).
        climb, slope: the height test joining neighbouring cells (see :class:`World`).

    Example:
        >>> from vlneval.graph.matterport import parse_connectivity
        >>> eye = lambda x, y: [1, 0, 0, x, 0, 1, 0, y, 0, 0, 1, 1.5, 0, 0, 0, 1]
        >>> recs = [{"image_id": "a", "pose": eye(0, 0), "included": True, "unobstructed": [False, True]},
        ...         {"image_id": "b", "pose": eye(4, 0), "included": True, "unobstructed": [True, False]}]
        >>> w = world_from_navgraph(parse_connectivity(recs, scan="toy"))
        >>> round(w.distance((0, 0, 0), (4, 0, 0)), 3), w.n_layers
        (4.0, 1)
    """
    pts = floor_points(graph)
    lo = pts[:, :2].min(axis=0) - half_width - margin
    hi = pts[:, :2].max(axis=0) + half_width + margin
    shape = (
        int(math.ceil((hi[1] - lo[1]) / resolution)) + 1,
        int(math.ceil((hi[0] - lo[0]) / resolution)) + 1,
    )
    painter = _Painter(shape, climb)
    # Lower edges first, so that the lowest floor tends to be layer 0.
    order: Any = (
        np.argsort(pts[graph.edges].mean(axis=1)[:, 2], kind="stable") if len(graph.edges) else []
    )
    for e in order:
        a, b = pts[graph.edges[e, 0]], pts[graph.edges[e, 1]]
        ii, jj, h, d = _capsule(a, b, lo, resolution, half_width, shape)
        painter.paint(ii, jj, h, d)
    return World(
        graph.scan,
        np.stack(painter.free),
        np.stack(painter.height),
        (float(lo[0]), float(lo[1])),
        resolution,
        climb=climb,
        slope=slope,
    )


def _capsule(
    a: np.ndarray, b: np.ndarray, lo: np.ndarray, res: float, r: float, shape: tuple[int, int]
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Cells within ``r`` of segment a-b (plan view), their ramp heights and axis distances."""
    x0, x1 = sorted((a[0], b[0]))
    y0, y1 = sorted((a[1], b[1]))
    j0, j1 = int(math.floor((x0 - r - lo[0]) / res)), int(math.ceil((x1 + r - lo[0]) / res))
    i0, i1 = int(math.floor((y0 - r - lo[1]) / res)), int(math.ceil((y1 + r - lo[1]) / res))
    i0, j0 = max(i0, 0), max(j0, 0)
    i1, j1 = min(i1, shape[0] - 1), min(j1, shape[1] - 1)
    ii, jj = np.mgrid[i0 : i1 + 1, j0 : j1 + 1]
    ii, jj = ii.ravel(), jj.ravel()
    cx, cy = lo[0] + jj * res, lo[1] + ii * res
    ab = b[:2] - a[:2]
    denom = float(ab @ ab)
    t = (
        np.zeros_like(cx)
        if denom == 0
        else np.clip(((cx - a[0]) * ab[0] + (cy - a[1]) * ab[1]) / denom, 0, 1)
    )
    d = np.hypot(cx - (a[0] + t * ab[0]), cy - (a[1] + t * ab[1]))
    keep = d <= r + 1e-9
    return ii[keep], jj[keep], a[2] + t[keep] * (b[2] - a[2]), d[keep]
