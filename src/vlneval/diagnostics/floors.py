"""Floors of a building from its navigation graph alone (for one-floor-at-a-time plots).

Connectivity files give each viewpoint's camera position and, usually, the camera's height
above the floor; their difference is the floor elevation under the viewpoint (the camera
height when heights are absent). Viewpoints on one floor share an elevation up to a few
centimetres; stair viewpoints lie in between, alone. So:

1. sort the elevations and cut them where consecutive values differ by more than
   ``gap`` (0.25 m): each run is a level;
2. levels with at least ``min_share`` of the viewpoints (and at least 3) are floor candidates;
   candidates whose elevations lie within ``merge`` (2.0 m, below any storey height) of the
   lowest one of a floor are merged into it (split-level rooms stay on one floor); the
   floor's elevation is that of its most populous level;
3. every viewpoint goes to the floor with the nearest elevation (stairs to the closer floor).

Floors are numbered from the lowest, 0 first.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from vlneval.graph.matterport import NavGraph

__all__ = ["Floors", "cluster_floors", "graph_floors"]


@dataclass(frozen=True)
class Floors:
    """The floor of every node of a graph.

    Attributes:
        of_node: floor index of every node (0 = lowest).
        elevations: elevation of every floor in metres (its most populous level's mean).
    """

    of_node: np.ndarray
    elevations: np.ndarray

    @property
    def count(self) -> int:
        """Number of floors."""
        return int(self.elevations.shape[0])


def cluster_floors(
    elevation: np.ndarray, *, gap: float = 0.25, merge: float = 2.0, min_share: float = 0.05
) -> Floors:
    """Clusters floor elevations into floors (see the module docstring).

    Example:
        >>> z = np.array([0.0, 0.02, 0.01, 0.0, 0.7, 1.4, 2.1, 2.8, 2.81, 2.79, 2.8])
        >>> f = cluster_floors(z)
        >>> f.of_node.tolist(), f.elevations.round(2).tolist()
        ([0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1], [0.01, 2.8])
    """
    z = np.asarray(elevation, dtype=np.float64)
    if z.size == 0:
        return Floors(np.zeros(0, dtype=np.int64), np.zeros(0))
    order = np.argsort(z, kind="stable")
    zs = z[order]
    cuts = np.flatnonzero(np.diff(zs) > gap) + 1
    levels = np.split(zs, cuts)
    need = max(3, int(np.ceil(min_share * z.size)))
    candidates = [lv for lv in levels if lv.size >= need] or [max(levels, key=len)]
    floors: list[list[np.ndarray]] = []
    for lv in candidates:  # ascending elevation
        if floors and lv.mean() - floors[-1][0].mean() <= merge:
            floors[-1].append(lv)
        else:
            floors.append([lv])
    # A floor's elevation is that of its most populous level (not pulled by a landing).
    elevations = np.array([max(f, key=len).mean() for f in floors])
    of_node = np.abs(z[:, None] - elevations[None, :]).argmin(axis=1)
    return Floors(of_node.astype(np.int64), elevations)


def graph_floors(graph: NavGraph) -> Floors:
    """The floors of ``graph`` from its node positions (and camera heights when known).

    Example:
        >>> eye = lambda x, z: [1, 0, 0, x, 0, 1, 0, 0, 0, 0, 1, z, 0, 0, 0, 1]
        >>> from vlneval.graph.matterport import parse_connectivity
        >>> recs = [{"image_id": str(k), "pose": eye(k, z), "included": True,
        ...          "unobstructed": [abs(j - k) == 1 for j in range(8)]}
        ...         for k, z in enumerate([1.5, 1.5, 1.5, 2.5, 3.5, 4.5, 4.5, 4.5])]
        >>> graph_floors(parse_connectivity(recs, scan="two")).of_node.tolist()
        [0, 0, 0, 0, 1, 1, 1, 1]
    """
    z = graph.positions[:, 2]
    if graph.heights is not None and np.isfinite(graph.heights).all():
        z = z - graph.heights
    return cluster_floors(z)
