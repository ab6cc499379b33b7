"""Continuous twin worlds of Matterport3D buildings (:func:`world_from_navgraph`), one per scan,
and dense polylines along their routes; the twin *episodes* of a graph split are built by
:func:`vlneval.tasks.vlnce.twin.twin_episodes`."""

from __future__ import annotations

import inspect
from typing import TYPE_CHECKING, Any

import numpy as np

from vlneval.continuous.navgraph import world_from_navgraph
from vlneval.graph.distances import cache_dir

if TYPE_CHECKING:
    from vlneval.continuous.world import World
    from vlneval.graph.store import GraphStore

__all__ = ["TwinWorlds", "densify", "DENSE_SPACING"]

#: Spacing of the dense reference points (VLN-CE's forward step, metres).
DENSE_SPACING = 0.25


def densify(points: Any, spacing: float = DENSE_SPACING) -> np.ndarray:
    """Points every ``spacing`` metres (in 3-D arc length) along a polyline, ends included.

    Example:
        >>> densify([[0, 0, 0], [1, 0, 0]], 0.4).tolist()
        [[0.0, 0.0, 0.0], [0.4, 0.0, 0.0], [0.8, 0.0, 0.0], [1.0, 0.0, 0.0]]
    """
    p = np.asarray(points, dtype=np.float64).reshape(-1, 3)
    if len(p) < 2:
        return p.copy()
    seg = np.linalg.norm(np.diff(p, axis=0), axis=1)
    arc = np.concatenate([[0.0], np.cumsum(seg)])
    total = float(arc[-1])
    s = np.arange(0.0, total, spacing)
    s = np.append(s, total) if total - (s[-1] if len(s) else 0.0) > 1e-9 or not len(s) else s
    out = np.stack([np.interp(s, arc, p[:, d]) for d in range(3)], axis=1)
    return np.round(out, 12)


class TwinWorlds:
    """The twin world of each scan, built on first use and kept.

    Args:
        store: the navigation graphs.
        cache: folder where the worlds' geodesic fields are kept between runs (default:
            ``continuous`` in the vlneval cache, ``$VLNEVAL_CACHE``; None: not kept).
        **params: :func:`world_from_navgraph` parameters (resolution, half_width, ...).
    """

    def __init__(self, store: GraphStore, *, cache: Any = "default", **params: Any) -> None:
        self.store = store
        self.params = params
        self.cache = cache_dir() / "continuous" if cache == "default" else cache
        self._worlds: dict[str, World] = {}

    def __call__(self, scan: str) -> World:
        if scan not in self._worlds:
            world = world_from_navgraph(self.store.graph(scan), **self.params)
            world.cache = self.cache
            self._worlds[scan] = world
        return self._worlds[scan]

    def card(self) -> dict[str, Any]:
        """The map entry of a protocol card."""
        params = inspect.signature(world_from_navgraph).parameters.values()
        defaults = {p.name: p.default for p in params if p.default is not p.empty}
        return {
            "kind": "continuous twin: grid world from the Matterport3D navigation graph",
            "free_space": "corridors around navigable edges, ramps between floors",
            **{k: self.params.get(k, d) for k, d in defaults.items()},
        }
