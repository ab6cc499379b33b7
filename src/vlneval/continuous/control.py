"""Path planning on a world and a path-following controller for unicycle motion.

Used by the waypoint executor (a target position becomes a grid shortest path and then velocity
commands) and by the privileged shortest-path agents.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

from vlneval.continuous.geodesic import shortest_path
from vlneval.continuous.motion import Mover, Pose
from vlneval.graph.geometry import wrap_pi  # re-exported: the controller wraps with it

if TYPE_CHECKING:
    from vlneval.continuous.world import World

__all__ = ["plan", "PathFollower", "wrap_pi", "bearing"]


def bearing(pose: Pose, x: float, y: float) -> float:
    """The heading (clockwise from +y) from the pose to (x, y)."""
    return math.atan2(x - pose.x, y - pose.y) % (2 * math.pi)


def plan(world: World, pose: Pose, goal_node: int) -> np.ndarray:
    """The grid shortest path from the pose's cell to ``goal_node`` as ``(k, 3)`` rows
    ``(x, y, layer)``, starting with the pose itself; one row when the goal is unreachable."""
    i, j = world.cell(pose.x, pose.y)
    start = int(world.node_id[pose.layer, i, j])
    field = world.field(goal_node)
    nodes = shortest_path(world, field, start)
    cells = world.node_cells[nodes]
    pts = np.stack(
        [
            world.origin[0] + cells[:, 2] * world.resolution,
            world.origin[1] + cells[:, 1] * world.resolution,
            cells[:, 0],
        ],
        axis=1,
    ).astype(np.float64)
    pts[0, :2] = (pose.x, pose.y)
    return pts


class PathFollower:
    """Follows a grid path with a unicycle: turn in place towards the farthest path point the
    robot can drive to in a straight line (checked with the motion model itself), then drive
    straight to it.

    Args:
        mover: the motion model (used to test straight lines; nothing is moved).
        path: ``(k, 3)`` rows ``(x, y, layer)``, start first (e.g. :func:`plan`); a row
            counts as reached only on its layer (floors overlap in plan view).
        speed, angular_max: limits (m/s, rad/s); period: control period (s).
        reach: a path point counts as reached within this distance (m).
        horizon: farthest arc length (m) to look ahead along the path.
    """

    def __init__(
        self,
        mover: Mover,
        path: np.ndarray,
        *,
        speed: float,
        angular_max: float,
        period: float,
        reach: float = 0.05,
        horizon: float = 2.0,
    ) -> None:
        self.mover, self.path = mover, np.asarray(path, dtype=np.float64)
        seg = np.hypot(*np.diff(self.path[:, :2], axis=0).T) if len(self.path) > 1 else np.zeros(0)
        self.arc = np.concatenate([[0.0], np.cumsum(seg)])
        self.speed, self.angular_max, self.period = speed, angular_max, period
        self.reach, self.horizon = reach, horizon
        self.base = 0
        self.target: np.ndarray | None = None
        self.target_index = -1

    @property
    def length(self) -> float:
        """Arc length of the path."""
        return float(self.arc[-1])

    def _drivable(self, pose: Pose, point: np.ndarray) -> bool:
        m = self.mover.translate(pose, point[0] - pose.x, point[1] - pose.y)
        return (
            not m.blocked
            and m.pose.layer == int(point[2])
            and self.mover.cell(m.pose.x, m.pose.y) == self.mover.cell(point[0], point[1])
        )

    def _choose(self, pose: Pose) -> None:
        best = -1
        for j in range(self.base, len(self.path)):
            if best >= 0 and self.arc[j] - self.arc[self.base] > self.horizon:
                break
            if self._drivable(pose, self.path[j]):
                best = j
            elif best >= 0:
                break
        if best < 0:  # nothing in sight: back to the centre of the robot's own cell
            i, j = self.mover.cell(pose.x, pose.y)
            w = self.mover.world
            self.target = np.array(
                [w.origin[0] + j * w.resolution, w.origin[1] + i * w.resolution, pose.layer]
            )
            self.target_index = -1
        else:
            self.target, self.target_index = self.path[best], best

    def command(self, pose: Pose, *, collided: bool = False) -> tuple[float, float]:
        """``(v, w)`` for the next period."""
        near = (
            self.target is not None
            and math.hypot(self.target[0] - pose.x, self.target[1] - pose.y) <= self.reach
        )
        if near and self.target_index >= 0:
            self.base = self.target_index
        if self.target is None or collided or near:
            self._choose(pose)
        assert self.target is not None  # _choose always sets one
        tx, ty = self.target[0], self.target[1]
        dist = math.hypot(tx - pose.x, ty - pose.y)
        if dist <= 1e-9:
            return 0.0, 0.0
        err = wrap_pi(bearing(pose, tx, ty) - pose.heading)
        if abs(err) > 1e-9:  # turn in place first, so that the drive is the straight line tested
            return 0.0, max(-self.angular_max, min(self.angular_max, err / self.period))
        return min(self.speed, dist / self.period), 0.0
