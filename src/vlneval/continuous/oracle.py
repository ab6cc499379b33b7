"""Distance oracles: where the geodesic distance to a goal comes from in continuous scoring.

NE, SR, OSR and SPL need the geodesic distance from a position to the goal on the walkable
surface (Habitat's navmesh in VLN-CE). vlneval never invents one; a scorer names its source:

- :class:`CarriedDistances`: the distances a Habitat run measured and wrote into the predictions
  file (``distance_to_goal`` per step), looked up by the exact position they were measured at;
- :class:`GridOracle`: the grid geodesic of a continuous world (:mod:`vlneval.continuous.world`),
  e.g. the twin of a Matterport3D building built from its navigation graph.

An oracle returns ``inf`` for an unreachable goal; scorers count and report those episodes.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

import numpy as np

from vlneval.errors import InvalidInputError

if TYPE_CHECKING:
    from vlneval.continuous.world import World

__all__ = ["DistanceOracle", "CarriedDistances", "GridOracle", "distances_along"]


@runtime_checkable
class DistanceOracle(Protocol):
    """``distance(position, goal) -> metres`` (may be ``inf``); ``name`` goes on the card."""

    name: str

    def distance(self, position: Any, goal: Any) -> float:
        """Geodesic distance from ``position`` to ``goal`` in metres (``inf`` if unreachable)."""
        ...


def distances_along(oracle: DistanceOracle, positions: Any, goal: Any) -> np.ndarray:
    """The oracle's distance from each of ``positions`` to ``goal`` (vectorised when offered).

    Example:
        >>> oracle = CarriedDistances([[0, 0, 0], [1, 0, 0]], [2.0, 1.0], goal=[2, 0, 0])
        >>> distances_along(oracle, [[0, 0, 0], [1, 0, 0]], [2, 0, 0]).tolist()
        [2.0, 1.0]
    """
    many = getattr(oracle, "distances", None)
    if callable(many):
        return np.asarray(many(positions, goal), dtype=np.float64)
    return np.array([oracle.distance(p, goal) for p in np.asarray(positions)], dtype=np.float64)


class CarriedDistances:
    """Per-position distances carried in a predictions file, for one episode's goal.

    Only the positions the file gives (exactly, as floats) can be looked up: a carried
    distance belongs to the point where the simulator measured it.

    Example:
        >>> o = CarriedDistances([[0, 0, 0], [1, 0, 0]], [2.0, float("inf")], goal=[2, 0, 0])
        >>> o.distance([1, 0, 0], [2, 0, 0])
        inf
    """

    name = "carried"

    def __init__(self, positions: Any, distances: Any, *, goal: Any) -> None:
        pos = np.asarray(positions, dtype=np.float64)
        dist = np.asarray(distances, dtype=np.float64)
        if pos.ndim != 2 or len(pos) != len(dist):
            raise InvalidInputError("carried distances need one distance per position")
        if np.isnan(dist).any() or (dist < 0).any():
            raise InvalidInputError("carried distances must be >= 0 or inf (never NaN)")
        self.goal = np.asarray(goal, dtype=np.float64)
        self._table = {tuple(p): float(d) for p, d in zip(pos.tolist(), dist.tolist(), strict=True)}

    def distance(self, position: Any, goal: Any) -> float:
        if not np.array_equal(np.asarray(goal, dtype=np.float64), self.goal):
            raise InvalidInputError("these carried distances were measured to another goal")
        key = tuple(np.asarray(position, dtype=np.float64).tolist())
        if key not in self._table:
            raise InvalidInputError(f"no distance was carried for position {list(key)}")
        return self._table[key]


class GridOracle:
    """Grid geodesic distances on a :class:`~vlneval.continuous.world.World`.

    Args:
        world: the world.
        transform: maps positions of the caller's frame to the world frame (e.g.
            :func:`vlneval.tasks.vlnce.format.habitat_to_world` for VLN-CE files); identity if None.
        snap: a point off the free space is moved to the nearest free cell within this many
            metres (the offset is added to the distance); farther is ``inf``.
        z_tolerance: how far a point's z may be from the floor of its cell (metres).

    Example:
        >>> from vlneval.continuous.world import World
        >>> o = GridOracle(World.from_array([[1, 1, 1, 1]], resolution=0.5))
        >>> o.distance([0, 0, 0], [1.5, 0, 0]), o.distance([0, 3, 0], [1.5, 0, 0])
        (1.5, inf)
    """

    name = "grid"

    def __init__(
        self,
        world: World,
        *,
        transform: Callable[[Any], np.ndarray] | None = None,
        snap: float = 0.0,
        z_tolerance: float = 1.0,
    ) -> None:
        self.world = world
        self.transform = transform
        self.snap = snap
        self.z_tolerance = z_tolerance

    def _world(self, points: Any) -> np.ndarray:
        p = np.asarray(points, dtype=np.float64)
        return self.transform(p) if self.transform is not None else p

    def distance(self, position: Any, goal: Any) -> float:
        return float(self.distances([position], goal)[0])

    def distances(self, positions: Any, goal: Any) -> np.ndarray:
        """Distances from every position to ``goal`` (one Dijkstra per goal, cached)."""
        w = self.world
        pts = self._world(positions).reshape(-1, 3)
        g_node, g_off = w.locate(self._world(goal), z_tolerance=self.z_tolerance, snap=self.snap)
        out = np.full(len(pts), math.inf)
        if g_node < 0:
            return out
        field = w.field(g_node)
        nodes, offsets = w.locate_many(pts, z_tolerance=self.z_tolerance, snap=self.snap)
        d = field[np.maximum(nodes, 0)]
        ok = (nodes >= 0) & np.isfinite(d)
        out[ok] = d[ok] + offsets[ok] + g_off
        return out
