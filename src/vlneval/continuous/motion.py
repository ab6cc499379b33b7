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
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

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


@dataclass(frozen=True)
class Pose:
    """Where the agent is: position (x, y), layer, floor height z, heading and camera elevation."""

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


@dataclass
class Motion:
    """The result of one motion: the new pose, distance travelled (3-D), whether something
    blocked it, and the poses passed through (one per sub-step that moved)."""

    pose: Pose
    length: float
    blocked: bool
    trail: list[Pose]


class Mover:
    """Moves poses through a world.

    Args:
        world: the world.
        substep: the longest sub-step in metres (default: half a cell).
    """

    def __init__(self, world: World, substep: float | None = None) -> None:
        self.world = world
        self.substep = substep if substep is not None else world.resolution / 2
        self._res = world.resolution
        self._ox, self._oy = world.origin
        self._free = world.free
        self._height = world.height
        self._h, self._w = world.free.shape[1:]

    # -- cells -----------------------------------------------------------------------------
    def cell(self, x: float, y: float) -> tuple[int, int]:
        """(row, col) of the cell containing (x, y)."""
        return (
            int(math.floor((y - self._oy) / self._res + 0.5)),
            int(math.floor((x - self._ox) / self._res + 0.5)),
        )

    def place(self, position: np.ndarray, heading: float, *, snap: float = 0.5) -> Pose | None:
        """A pose at ``position`` (moved to the nearest free cell centre within ``snap``
        if it is off the free space); None when there is none."""
        node, _ = self.world.locate(position, snap=snap)
        if node < 0:
            return None
        layer, i, j = (int(v) for v in self.world.node_cells[node])
        x, y = float(position[0]), float(position[1])
        if self.cell(x, y) != (i, j):
            x, y = self._ox + j * self._res, self._oy + i * self._res
        return Pose(x, y, layer, float(self._height[layer, i, j]), heading % (2 * math.pi))

    def enter(self, layer: int, i: int, j: int, i2: int, j2: int) -> int:
        """The layer entered by the side step from cell (layer, i, j) to (i2, j2); -1 if blocked
        (the rule of :func:`vlneval.continuous.geodesic.best_layers`)."""
        if not (0 <= i2 < self._h and 0 <= j2 < self._w):
            return -1
        h0 = self._height[layer, i, j]
        dxy = self._res * math.hypot(i2 - i, j2 - j)
        limit = self.world.climb + self.world.slope * dxy
        best, best_dh = -1, math.inf
        for k in range(self._free.shape[0]):
            if not self._free[k, i2, j2]:
                continue
            dh = abs(self._height[k, i2, j2] - h0)
            if dh <= limit and (dh < best_dh or (dh == best_dh and k == layer)):
                best, best_dh = k, dh
        return best

    def _around(self, layer: int, i: int, j: int, si: int, sj: int) -> int:
        """The layer reached by a diagonal step through a corner: by the row first, else by the
        column first (-1 if neither side is passable)."""
        for a, b in (((i + si, j), (i + si, j + sj)), ((i, j + sj), (i + si, j + sj))):
            k = self.enter(layer, i, j, *a)
            if k >= 0:
                k = self.enter(k, a[0], a[1], *b)
                if k >= 0:
                    return k
        return -1

    # -- motion ----------------------------------------------------------------------------
    def _try(self, pose: Pose, x: float, y: float) -> Pose | None:
        """The pose after the straight segment to (x, y), or None if a cell it crosses cannot
        be entered. Cells are visited exactly in the order the segment crosses them (a 2-D
        DDA), so the outcome does not depend on how a motion is cut into sub-steps."""
        res = self._res
        u0, v0 = (pose.x - self._ox) / res + 0.5, (pose.y - self._oy) / res + 0.5
        u1, v1 = (x - self._ox) / res + 0.5, (y - self._oy) / res + 0.5
        j, i = math.floor(u0), math.floor(v0)
        j2, i2 = math.floor(u1), math.floor(v1)
        layer = pose.layer
        if (i, j) != (i2, j2):
            du, dv = u1 - u0, v1 - v0
            sj, si = (1 if du > 0 else -1), (1 if dv > 0 else -1)
            tj = ((j + (sj > 0)) - u0) / du if du else math.inf
            ti = ((i + (si > 0)) - v0) / dv if dv else math.inf
            dtj, dti = (abs(1.0 / du) if du else math.inf), (abs(1.0 / dv) if dv else math.inf)
            scale = max(abs(du), abs(dv))
            for _ in range(abs(i2 - i) + abs(j2 - j)):
                if (i, j) == (i2, j2):
                    break
                if abs(tj - ti) * scale < 1e-6:  # through a corner (to 1e-6 cell): either side
                    tj += dtj
                    ti += dti
                    k = self._around(layer, i, j, si, sj)
                    if k < 0:
                        return None
                    layer, i, j = k, i + si, j + sj
                    continue
                if tj < ti:
                    ni, nj = i, j + sj
                    tj += dtj
                else:
                    ni, nj = i + si, j
                    ti += dti
                k = self.enter(layer, i, j, ni, nj)
                if k < 0:
                    return None
                layer, i, j = k, ni, nj
            if (i, j) != (i2, j2):  # rounding at a boundary: finish with side steps
                for ni, nj in ((i2, j), (i2, j2)) if i2 != i else ((i, j2),):
                    if (ni, nj) == (i, j):
                        continue
                    k = self.enter(layer, i, j, ni, nj) if abs(ni - i) + abs(nj - j) == 1 else -1
                    if k < 0:
                        return None
                    layer, i, j = k, ni, nj
        return replace(pose, x=x, y=y, layer=layer, z=float(self._height[layer, i, j]))

    def translate(
        self, pose: Pose, dx: float, dy: float, *, slide: bool = False, partial: bool = True
    ) -> Motion:
        """Moves by (dx, dy) in straight sub-steps; at an obstacle it slides along it
        (``slide``), stops there (``partial``) or does not move at all (neither)."""
        dist = math.hypot(dx, dy)
        n = max(1, int(math.ceil(dist / self.substep)))
        sx, sy = dx / n, dy / n
        start = pose
        trail: list[Pose] = []
        meter, blocked = _Meter(), False
        for _ in range(n):
            nxt = self._try(pose, pose.x + sx, pose.y + sy)
            if nxt is None:
                blocked = True
                if not slide:
                    break
                axes = ((sx, 0.0), (0.0, sy)) if abs(sx) >= abs(sy) else ((0.0, sy), (sx, 0.0))
                for ax, ay in axes:
                    if ax or ay:
                        nxt = self._try(pose, pose.x + ax, pose.y + ay)
                        if nxt is not None:
                            break
                if nxt is None:
                    break
            meter.add(pose, nxt)
            pose = nxt
            trail.append(pose)
        if blocked and not slide and not partial:
            return Motion(start, 0.0, True, [])
        return Motion(pose, meter.total(), blocked, trail)

    def forward(
        self, pose: Pose, distance: float, *, slide: bool = False, partial: bool = True
    ) -> Motion:
        """Moves ``distance`` metres along the heading (see :meth:`translate`)."""
        dx, dy = direction(pose.heading)
        return self.translate(pose, dx * distance, dy * distance, slide=slide, partial=partial)

    def drive(self, pose: Pose, v: float, w: float, duration: float) -> Motion:
        """Unicycle motion: linear speed ``v`` (m/s) and angular speed ``w`` (rad/s, positive
        turns clockwise, i.e. heading grows) held for ``duration`` seconds. Translation stops at
        an obstacle; rotation goes on."""
        steps = max(
            1,
            int(math.ceil(abs(v) * duration / self.substep)),
            int(math.ceil(abs(w) * duration / 0.05)),
        )
        dt = duration / steps
        trail: list[Pose] = []
        meter, blocked = _Meter(), False
        for _ in range(steps):
            mid = pose.heading + 0.5 * w * dt
            if v != 0.0 and not blocked:
                dx, dy = direction(mid)
                nxt = self._try(pose, pose.x + v * dt * dx, pose.y + v * dt * dy)
                if nxt is None:
                    blocked = True
                else:
                    meter.add(pose, nxt)
                    pose = nxt
            pose = replace(pose, heading=(pose.heading + w * dt) % (2 * math.pi))
            trail.append(pose)
        return Motion(pose, meter.total(), blocked, trail)


class _Meter:
    """3-D length of a motion over piecewise-constant cell heights: a height change is spread
    over the horizontal run since the previous one (a ramp, not a staircase)."""

    def __init__(self) -> None:
        self.length = 0.0
        self.run = 0.0

    def add(self, a: Pose, b: Pose) -> None:
        self.run += math.hypot(b.x - a.x, b.y - a.y)
        if b.z != a.z:
            self.length += math.hypot(self.run, b.z - a.z)
            self.run = 0.0

    def total(self) -> float:
        return self.length + self.run
