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
    pts = world.path_points(shortest_path(world, field, start))
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
        self.mover, self.path = mover, np.ascontiguousarray(path, dtype=np.float64)
        seg = np.hypot(*np.diff(self.path[:, :2], axis=0).T) if len(self.path) > 1 else np.zeros(0)
        self.arc = np.concatenate([[0.0], np.cumsum(seg)])
        self.speed, self.angular_max, self.period = speed, angular_max, period
        self.reach, self.horizon = reach, horizon
        #: ``[speed, angular_max, period, reach, horizon]`` (the compiled follower's)
        self.limits = np.array([speed, angular_max, period, reach, horizon])
        # [has target, target x, y, layer, base index, target index] (updated in place)
        self._state = np.array([0.0, 0.0, 0.0, 0.0, 0.0, -1.0])

    @property
    def length(self) -> float:
        """Arc length of the path."""
        return float(self.arc[-1])

    def command(self, pose: Pose, *, collided: bool = False) -> tuple[float, float]:
        """``(v, w)`` for the next period.

        The target is re-chosen at the start, after a collision and when it is reached:
        the farthest path point (from the last reached one, within ``horizon`` of arc
        length) that a straight motion reaches on its layer and cell, or else the centre of
        the robot's own cell. Then: turn in place towards it (so that the drive is the
        straight line tested), then drive straight to it.
        """
        free, height, geo, substep = self.mover.grid
        v, w = self.mover.kernels.follow(
            free, height, geo, substep, self.path, self.arc, self.limits, self._state,
            pose.x, pose.y, pose.layer, pose.z, pose.heading, collided,
        )  # fmt: skip
        return float(v), float(w)
