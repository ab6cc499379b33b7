"""The waypoint executor: plan a grid shortest path to the target and follow it.

A waypoint ends ``reached`` when the robot is within ``tolerance`` of the target, or
``blocked`` with a reason: no free cell within ``snap`` of the target is reachable (on the
floor nearest the requested height, or else the one reachable soonest), or the controller stalls (neither moves nor turns for 3 s) or runs
out of time (three times the path's driving time plus 5 s). Every controller tick is recorded.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from vlneval.continuous.control import PathFollower
from vlneval.continuous.motion import Mover, Pose
from vlneval.envs.continuous.spaces import Waypoint

__all__ = ["WaypointResult", "execute_waypoint", "STALL_S"]

#: Seconds without progress along the planned path after which the executor gives up.
STALL_S = 3.0


@dataclass
class WaypointResult:
    """Outcome of one waypoint: final pose, metres and seconds spent, poses per tick (``rows``:
    x, y, layer, z, heading, elevation)."""

    pose: Pose
    status: str
    reason: str = ""
    length: float = 0.0
    time: float = 0.0
    rows: np.ndarray = field(default_factory=lambda: np.zeros((0, 6)))


_OUTCOMES = {0: ("reached", ""), 1: ("blocked", "timeout"), 2: ("blocked", "stalled")}


def _target_node(
    mover: Mover, start: int, target: tuple[float, float, float | None], space: Waypoint
) -> int:
    """The node to drive to (-1 when there is none): among the free cells within ``snap`` of
    the target reachable within the search limit, the floor nearest the requested height,
    then the cell nearest the target (both rounded to the micrometre), then the nearest by
    path (the first in row, column, layer order on ties)."""
    world = mover.world
    x, y, z = target
    search = world.target_search()
    nodes, k1, k2 = search.kernels.candidates(
        world.free, world.height, world.node_id, mover.grid[2], x, y,
        0.0 if z is None else z, z is not None, space.snap,
    )  # fmt: skip
    if not len(nodes):
        return -1
    return search.best(start, nodes, k1, k2, limit=4.0 * space.max_range + 2.0)


def execute_waypoint(
    mover: Mover, pose: Pose, target: tuple[float, float, float | None], space: Waypoint
) -> WaypointResult:
    """Drives from ``pose`` to the world point ``target`` (x, y, z or None) under ``space``."""
    world = mover.world
    i, j = world.cell(pose.x, pose.y)
    start = int(world.node_id[pose.layer, i, j])
    node = _target_node(mover, start, target, space)
    if node < 0:
        return WaypointResult(pose, "blocked", "target off the free space or unreachable")
    path = world.path_points(world.target_search().path(node))
    path[0, :2] = (pose.x, pose.y)
    if world.cell(target[0], target[1]) == tuple(world.node_cells[node][1:]):
        path[-1, :2] = target[0], target[1]
    dt = 1.0 / space.rate_hz
    follower = PathFollower(
        mover, path, speed=space.speed, angular_max=space.angular_max, period=dt
    )
    budget = 3.0 * follower.length / space.speed + 5.0
    free, height, geo, substep = mover.grid
    code, length, elapsed, rows = mover.kernels.run_waypoint(
        free, height, geo, substep, follower.path, follower.arc, follower.limits,
        pose.x, pose.y, pose.layer, pose.z, pose.heading, space.tolerance, budget, STALL_S,
    )  # fmt: skip
    ticks = np.empty((len(rows), 6))
    ticks[:, :5], ticks[:, 5] = rows, pose.elevation
    end = pose
    if len(rows):
        x, y, k, z, h = rows[-1].tolist()
        end = Pose(x, y, int(k), z, h, pose.elevation)
    return WaypointResult(end, *_OUTCOMES[code], length, elapsed, ticks)
