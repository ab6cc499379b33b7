"""Collision-checked motion in a :class:`~vlneval.continuous.world.World`.

The agent is a point on the free cells (the world's free space is its configuration space).
Every motion is cut into sub-steps of at most half a cell; a sub-step that enters a new cell is
allowed exactly when the world's graph would join the two cells (free, heights within the
climb/slope test, no corner cut), so motion and geodesic distances agree. A blocked sub-step
either stops the motion or, with ``slide``, keeps the component of the sub-step along one grid
axis that is free (the larger first): the agent slides along the obstacle, as Habitat's
``ALLOW_SLIDING`` does on a navmesh. Path length is integrated from the motion in 3-D.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, NamedTuple

import numpy as np

if TYPE_CHECKING:
    from vlneval.continuous.world import World

__all__ = ["Pose", "Motion", "Mover", "direction"]


def direction(heading: float) -> tuple[float, float]:
    """Unit (dx, dy) of a heading measured clockwise from +y.

    Example:
        >>> [round(v, 6) for v in direction(math.pi / 2)]
        [1.0, 0.0]
    """
    return math.sin(heading), math.cos(heading)


class Pose(NamedTuple):
    """Where the agent is: position (x, y), layer, floor height z, heading and camera elevation.

    Immutable; a named tuple, since an episode records one per step or controller tick.
    """

    x: float
    y: float
    layer: int
    z: float
    heading: float
    elevation: float = 0.0

    @property
    def position(self) -> np.ndarray:
        """``(x, y, z)``."""
        return np.array([self.x, self.y, self.z])


class Motion:
    """The result of one motion: the new pose, distance travelled (3-D), whether something
    blocked it, and the poses passed through (``trail``: one per sub-step that moved; built
    on first access)."""

    __slots__ = ("pose", "length", "blocked", "_rows", "_trail")

    def __init__(self, pose: Pose, length: float, blocked: bool, rows: np.ndarray) -> None:
        self.pose, self.length, self.blocked = pose, length, blocked
        self._rows = rows  # (k, 4 or 5): x, y, layer, z[, heading]
        self._trail: list[Pose] | None = None

    @property
    def trail(self) -> list[Pose]:
        """The poses passed through."""
        if self._trail is None:
            p = self.pose
            self._trail = [
                Pose(r[0], r[1], int(r[2]), r[3], r[4] if len(r) > 4 else p.heading, p.elevation)
                for r in self._rows.tolist()
            ]
        return self._trail

    def __repr__(self) -> str:
        return f"Motion(pose={self.pose}, length={self.length}, blocked={self.blocked})"


class Mover:
    """Moves poses through a world (the compiled cores of ``_motion_kernels`` do the work).

    Args:
        world: the world.
        substep: the longest sub-step in metres (default: half a cell).
    """

    def __init__(self, world: World, substep: float | None = None) -> None:
        from vlneval.continuous import _motion_kernels as kernels  # deferred: numba

        self.world = world
        self.substep = float(substep if substep is not None else world.resolution / 2)
        self._geo = np.array([world.resolution, *world.origin, world.climb, world.slope])
        self.kernels = kernels

    @property
    def grid(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, float]:
        """``(free, height, geo, substep)``: the first arguments of the compiled cores."""
        return self.world.free, self.world.height, self._geo, self.substep

    # -- cells -----------------------------------------------------------------------------
    def place(self, position: np.ndarray, heading: float, *, snap: float = 0.5) -> Pose | None:
        """A pose at ``position`` (moved to the nearest free cell centre within ``snap``
        if it is off the free space); None when there is none."""
        node, _ = self.world.locate(position, snap=snap)
        if node < 0:
            return None
        layer, i, j = (int(v) for v in self.world.node_cells[node])
        x, y = float(position[0]), float(position[1])
        if self.world.cell(x, y) != (i, j):
            x, y = (float(v) for v in self.world.centre(node)[:2])
        return Pose(x, y, layer, float(self.world.height[layer, i, j]), heading % (2 * math.pi))

    def enter(self, layer: int, i: int, j: int, i2: int, j2: int) -> int:
        """The layer entered by the side step from cell (layer, i, j) to (i2, j2); -1 if blocked
        (the rule of :func:`vlneval.continuous.geodesic.best_layers`): among the layers free
        there whose floor is within ``climb + slope * res`` of the current one, the nearest
        in height (the current layer on a tie, else the lowest)."""
        free, height, geo, _ = self.grid
        return int(self.kernels.enter(free, height, geo, layer, i, j, i2, j2))

    # -- motion ----------------------------------------------------------------------------
    def translate(
        self, pose: Pose, dx: float, dy: float, *, slide: bool = False, partial: bool = True
    ) -> Motion:
        """Moves by (dx, dy) in straight sub-steps; at an obstacle it slides along it
        (``slide``), stops there (``partial``) or does not move at all (neither).

        Each sub-step crosses cells exactly in the order its segment does (a 2-D DDA; through
        a corner, by the row first, else by the column), so the outcome does not depend on how
        a motion is cut into sub-steps. A blocked sub-step with ``slide`` keeps its component
        along one grid axis, the larger first.
        """
        x, y, layer, z, length, blocked, rows = self.kernels.move(
            *self.grid, pose.x, pose.y, pose.layer, pose.z, dx, dy, slide, partial, True
        )
        return Motion(Pose(x, y, layer, z, pose.heading, pose.elevation), length, blocked, rows)

    def forward(
        self, pose: Pose, distance: float, *, slide: bool = False, partial: bool = True
    ) -> Motion:
        """Moves ``distance`` metres along the heading (see :meth:`translate`)."""
        dx, dy = direction(pose.heading)
        return self.translate(pose, dx * distance, dy * distance, slide=slide, partial=partial)

    def drive(self, pose: Pose, v: float, w: float, duration: float) -> Motion:
        """Unicycle motion: linear speed ``v`` (m/s) and angular speed ``w`` (rad/s, positive
        turns clockwise, i.e. heading grows) held for ``duration`` seconds, in sub-steps of at
        most ``substep`` metres and 0.05 rad, each moving along its mid heading. Translation
        stops at an obstacle; rotation goes on."""
        x, y, layer, z, heading, length, blocked, rows = self.kernels.drive(
            *self.grid, pose.x, pose.y, pose.layer, pose.z, pose.heading, v, w, duration
        )
        return Motion(Pose(x, y, layer, z, heading, pose.elevation), length, blocked, rows)
