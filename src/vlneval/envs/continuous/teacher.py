"""The privileged channel of continuous environments: the goal, its geodesic distance field,
and teacher actions (what the ``shortest`` agents do) for each action space.

- discrete steps: among the headings reachable by turning, the one whose forward step (simulated
  with the environment's own motion, sliding included) lowers the geodesic distance the most;
  FORWARD when that is the current heading, else turn towards it (fewest turns on ties); STOP
  within ``stop_distance`` of the goal, or when no step makes progress;
- velocities: the path follower of :mod:`vlneval.continuous.control` on the grid shortest path;
- waypoints: the point of the shortest path ``max_range`` (or less) ahead along it.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from typing import Any

import numpy as np

from vlneval.continuous.control import PathFollower, bearing, plan, wrap_pi
from vlneval.continuous.motion import Mover, Pose
from vlneval.envs.continuous.spaces import (
    FORWARD,
    STOP,
    TURN_LEFT,
    TURN_RIGHT,
    DiscreteSteps,
    Velocity,
)

__all__ = ["ContinuousTeacher", "STOP_DISTANCE"]

#: The teacher stops this close (geodesic metres) to the goal.
STOP_DISTANCE = 0.5


class ContinuousTeacher:
    """Goal, distances and teacher actions for the running episode (privileged).

    Args:
        view: returns ``(mover, pose, goal, action_space, collided, serial)`` of the running
            episode (``serial`` changes at every reset).
        stop_distance: STOP within this geodesic distance of the goal.
    """

    def __init__(
        self,
        view: Callable[[], tuple[Mover, Pose, np.ndarray, Any, bool, int]],
        *,
        stop_distance: float = STOP_DISTANCE,
    ) -> None:
        self._view = view
        self.stop_distance = stop_distance
        self.calls = 0
        self._key: tuple[Any, ...] | None = None
        self._goal_node = -1
        self._field: np.ndarray | None = None
        self._follower: PathFollower | None = None
        self._collided = False

    # -- privileged facts ----------------------------------------------------------------------
    def _state(self) -> tuple[Mover, Pose, Any]:
        mover, pose, goal, space, collided, serial = self._view()
        key = (id(mover), serial)  # the goal is the episode's: it changes only at a reset
        if key != self._key:
            self._key = key
            self._goal_node, _ = mover.world.locate(goal, snap=0.5)
            self._field = mover.world.field(self._goal_node) if self._goal_node >= 0 else None
            self._follower = None
        self._collided = collided
        return mover, pose, space

    @property
    def goal(self) -> np.ndarray:
        """The goal position (world frame)."""
        self.calls += 1
        return np.asarray(self._view()[2], dtype=np.float64)

    def _field_at(self, mover: Mover, pose: Pose) -> float:
        if self._field is None:
            return math.inf
        i, j = mover.world.cell(pose.x, pose.y)
        return float(self._field[mover.world.node_id[pose.layer, i, j]])

    def distance(self) -> float:
        """Geodesic distance from the agent to the goal (metres, grid; inf if unreachable)."""
        self.calls += 1
        mover, pose, _ = self._state()
        return self._field_at(mover, pose)

    # -- teacher actions -----------------------------------------------------------------------
    def action(self) -> Any:
        """The teacher's next action in the environment's action space."""
        self.calls += 1
        mover, pose, space = self._state()
        here = self._field_at(mover, pose)
        if here <= self.stop_distance or not math.isfinite(here):
            return STOP
        if isinstance(space, DiscreteSteps):
            return self._discrete(mover, pose, space, here)
        if isinstance(space, Velocity):
            return self._velocity(mover, pose, space)
        return self._waypoint(mover, pose, space)

    def _discrete(self, mover: Mover, pose: Pose, space: DiscreteSteps, here: float) -> int:
        assert self._field is not None  # action() checked that the goal is reachable
        free, height, geo, substep = mover.grid
        k = mover.kernels
        best_k = k.discrete_choice(
            free, height, geo, mover.world.node_id, substep, self._field, pose.x, pose.y,
            pose.layer, pose.z, pose.heading, self._order(space), math.radians(space.turn_deg),
            space.forward_m, space.sliding, space.sliding, here,
        )  # fmt: skip
        if best_k == k.NO_TURN:
            return STOP
        if best_k == 0:
            return FORWARD
        return TURN_RIGHT if best_k > 0 else TURN_LEFT

    @staticmethod
    @functools.cache
    def _order(space: DiscreteSteps) -> np.ndarray:
        """Turns (in units of the turn angle) to try, the fewest first: 0, 1, -1, 2, -2..."""
        n = int(round(360.0 / space.turn_deg))
        order = [0] + [k for m in range(1, n // 2 + 1) for k in (m, -m) if abs(k) <= n // 2]
        return np.array(order[:n], dtype=np.int64)

    def _velocity(self, mover: Mover, pose: Pose, space: Velocity) -> tuple[float, float]:
        if self._follower is None:
            path = plan(mover.world, pose, self._goal_node)
            self._follower = PathFollower(
                mover,
                path,
                speed=space.linear_max,
                angular_max=space.angular_max,
                period=space.period_s,
            )
        v, w = self._follower.command(pose, collided=self._collided)
        return max(space.linear_min, v), w

    def _waypoint(self, mover: Mover, pose: Pose, space: Any) -> tuple[float, float, float]:
        path = plan(mover.world, pose, self._goal_node)
        arc = np.zeros(len(path))
        if len(path) > 1:
            arc[1:] = np.cumsum(np.hypot(*np.diff(path[:, :2], axis=0).T))
        k = int(np.searchsorted(arc, 0.95 * space.max_range, side="right")) - 1
        x, y, layer = path[max(k, 1) if len(path) > 1 else 0]
        i, j = mover.world.cell(x, y)
        dz = float(mover.world.height[int(layer), i, j]) - pose.z
        r = min(math.hypot(x - pose.x, y - pose.y), space.max_range)
        return r, wrap_pi(bearing(pose, x, y) - pose.heading), dz
