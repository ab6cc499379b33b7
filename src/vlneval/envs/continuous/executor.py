"""The waypoint executor: plan a grid shortest path to the target and follow it.

A waypoint ends ``reached`` when the robot is within ``tolerance`` of the target, or
``blocked`` with a reason: no free cell within ``snap`` of the target is reachable (on the
floor nearest the requested height, or else the one reachable soonest), or the controller stalls (neither moves nor turns for 3 s) or runs
out of time (three times the path's driving time plus 5 s). Every controller tick is recorded.
"""

from __future__ import annotations

import math
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
    """Outcome of one waypoint: final pose, metres and seconds spent, poses per tick."""

    pose: Pose
    status: str
    reason: str = ""
    length: float = 0.0
    time: float = 0.0
    trail: list[Pose] = field(default_factory=list)


_OUTCOMES = {0: ("reached", ""), 1: ("blocked", "timeout"), 2: ("blocked", "stalled")}


def _target_node(
    mover: Mover, start: int, target: tuple[float, float, float | None], space: Waypoint
) -> tuple[int, np.ndarray]:
    """The node to drive to and the robot's Dijkstra predecessors; -1 when there is none."""
    world = mover.world
    dist, pred = world.search(start, limit=4.0 * space.max_range + 2.0)
    x, y, z = target
    i0, j0 = world.cell(x, y)
    reach = int(math.ceil(space.snap / world.resolution))
    best, key = -1, (math.inf, math.inf, math.inf)
    for i in range(i0 - reach, i0 + reach + 1):
        for j in range(j0 - reach, j0 + reach + 1):
            if not world.inside(i, j):
                continue
            off = math.hypot(
                world.origin[0] + j * world.resolution - x,
                world.origin[1] + i * world.resolution - y,
            )
            if off > max(space.snap, world.resolution * 0.71):
                continue
            for layer in np.flatnonzero(world.free[:, i, j]):
                node = int(world.node_id[layer, i, j])
                if not math.isfinite(dist[node]):
                    continue
                dz = abs(world.height[layer, i, j] - z) if z is not None else 0.0
                k = (
                    (round(dz, 6), round(off, 6), dist[node])
                    if z is not None
                    else (round(off, 6), dist[node], 0.0)
                )
                if k < key:
                    best, key = node, k
    return best, pred


def _path(mover: Mover, pred: np.ndarray, start: int, node: int) -> np.ndarray:
    world = mover.world
    nodes = [node]
    while nodes[-1] != start:
        nodes.append(int(pred[nodes[-1]]))
    cells = world.node_cells[nodes[::-1]]
    return np.stack(
        [
            world.origin[0] + cells[:, 2] * world.resolution,
            world.origin[1] + cells[:, 1] * world.resolution,
            cells[:, 0],
        ],
        axis=1,
    ).astype(np.float64)


def execute_waypoint(
    mover: Mover, pose: Pose, target: tuple[float, float, float | None], space: Waypoint
) -> WaypointResult:
    """Drives from ``pose`` to the world point ``target`` (x, y, z or None) under ``space``."""
    world = mover.world
    i, j = world.cell(pose.x, pose.y)
    start = int(world.node_id[pose.layer, i, j])
    node, pred = _target_node(mover, start, target, space)
    if node < 0:
        return WaypointResult(pose, "blocked", "target off the free space or unreachable")
    path = _path(mover, pred, start, node)
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
    e = pose.elevation
    trail = [Pose(x, y, int(k), z, h, e) for x, y, k, z, h in rows.tolist()]
    out = WaypointResult(trail[-1] if trail else pose, *_OUTCOMES[code], length, elapsed, trail)
    return out
