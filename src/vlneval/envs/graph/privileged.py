"""The privileged channel: goals and teacher actions, for agents that declare they need them.

An environment built with ``privileged=True`` hands out a :class:`Teacher` through
``env.privileged()``; one built without it refuses. Either way the run's protocol card records
whether the channel existed (spec/protocol.md). Nothing here ever reaches an observation.

Teacher actions:

- panoramic: the candidate that is the next viewpoint on the shortest path to the nearest goal,
  or STOP at the goal;
- egocentric: the R2R environment's ``_shortest_path_action`` (Matterport3DSimulator
  ``tasks/R2R/env.py``): turn until the next viewpoint is within 30° of the view centre, tilt
  the camera towards it, then move; when it is out of view, level the camera, then turn the
  shorter way round.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from vlneval.envs.core import PrivilegeError
from vlneval.envs.graph.episodes import GroundTruth
from vlneval.envs.graph.world import GraphWorld
from vlneval.envs.spaces import LOOK_DOWN, LOOK_UP, STOP, TURN_LEFT, TURN_RIGHT
from vlneval.graph.tables import ScanTables, heading_of

__all__ = ["Teacher", "TeacherState", "teacher_state", "next_hop", "teacher_action"]


@dataclass(frozen=True)
class TeacherState:
    """Where one agent is, with its episode's hidden side (built on demand, never observed)."""

    tables: ScanTables
    distances: np.ndarray
    node: int
    h: int
    e: int
    goals: tuple[str, ...]
    path: tuple[str, ...]
    panoramic: bool


def teacher_state(
    world: GraphWorld,
    truth: GroundTruth,
    i: int,
    scan: str,
    node: int,
    h: int,
    e: int,
    panoramic: bool,
) -> TeacherState:
    """Episode ``i``'s hidden side, with the agent at ``node`` of ``scan`` in view ``(h, e)``."""
    tables, distances = world.tables(scan), world.distances(scan)
    return TeacherState(tables, distances, node, h, e, truth.goals(i), truth.path(i), panoramic)


def next_hop(tables: ScanTables, distances: np.ndarray, node: int, goals: np.ndarray) -> int:
    """The next node on a shortest path from ``node`` to the nearest of ``goals`` (−1 there).

    Example:
        >>> import numpy as np
        >>> from vlneval.graph.matterport import NavGraph
        >>> from vlneval.graph.tables import build_tables
        >>> g = NavGraph("t", ["a", "b", "c"], np.array([[0., 0, 0], [0, 2, 0], [0, 4, 0]]),
        ...              np.array([[0, 1], [1, 2]]), np.array([2.0, 2.0]))
        >>> d = np.array([[0., 2, 4], [2, 0, 2], [4, 2, 0]])
        >>> next_hop(build_tables(g), d, 0, np.array([2])), next_hop(build_tables(g), d, 2, np.array([2]))
        (1, -1)
    """
    goal = int(goals[np.argmin(distances[node, goals])])
    if goal == node:
        return -1
    graph = tables.graph
    nb = graph.neighbours(node)
    step = np.linalg.norm(graph.positions[nb] - graph.positions[node], axis=1)
    return int(nb[np.argmin(step + distances[nb, goal])])


def _egocentric_action(s: TeacherState, nxt: int) -> int:
    t = s.tables
    view = 12 * s.e + s.h
    for k in range(int(t.ego_count[s.node, view])):
        if int(t.ego_node[s.node, view, k]) == nxt:
            rel_h = float(t.ego_rel_heading[s.node, view, k])
            rel_e = float(t.ego_rel_elevation[s.node, view, k])
            if rel_h > math.pi / 6.0:
                return TURN_RIGHT
            if rel_h < -math.pi / 6.0:
                return TURN_LEFT
            if rel_e > math.pi / 6.0 and s.e < 2:
                return LOOK_UP
            if rel_e < -math.pi / 6.0 and s.e > 0:
                return LOOK_DOWN
            return k
    if s.e == 0:
        return LOOK_UP
    if s.e == 2:
        return LOOK_DOWN
    delta = t.graph.positions[nxt] - t.graph.positions[s.node]
    target = math.pi / 2.0 - math.atan2(delta[1], delta[0])
    if target < 0:
        target += 2.0 * math.pi
    heading = heading_of(s.h)
    if heading > target and heading - target < math.pi:
        return TURN_LEFT
    if target > heading and target - heading > math.pi:
        return TURN_LEFT
    return TURN_RIGHT


def teacher_action(s: TeacherState) -> int:
    """The teacher's action at ``s`` in the environment's action space (module docstring).

    Raises:
        PrivilegeError: no goal is a node of the scan, or the next viewpoint on the shortest
            path is never a candidate (an edge with no horizontal offset).
    """
    index = s.tables.graph.index
    goals = np.array([index[g] for g in s.goals if g in index], dtype=np.int64)
    if len(goals) == 0:
        raise PrivilegeError(f"no goal of this episode is a node of scan {s.tables.graph.scan}")
    nxt = next_hop(s.tables, s.distances, s.node, goals)
    if nxt < 0:
        return STOP
    t = s.tables
    row = t.pano_node[s.node, s.h, : int(t.pano_count[s.node, s.h])]
    offered = np.flatnonzero(row == nxt)  # every heading lists the same neighbours
    if len(offered) == 0:
        raise PrivilegeError(_not_offered(t, s.node, nxt))
    return int(offered[0]) if s.panoramic else _egocentric_action(s, nxt)


def _not_offered(t: ScanTables, node: int, nxt: int) -> str:
    """Why the teacher cannot take the shortest path's next step: an edge with no horizontal
    offset (the simulator's direction to it is NaN, so it is never a candidate)."""
    ids = t.graph.ids
    return (
        f"the shortest path's next viewpoint {ids[nxt]} is not a navigable candidate from "
        f"{ids[node]} in scan {t.graph.scan}: it is co-located with it or straight above or "
        "below it (no horizontal offset, so the simulator offers no direction to it); the "
        "teacher cannot take that edge of the graph"
    )


class Teacher:
    """The privileged channel of one agent slot: goals, distances and teacher actions.

    Every call is counted (``calls``) and the run's protocol card says the run was privileged.
    """

    def __init__(self, state: Callable[[], TeacherState]) -> None:
        self._state = state
        self.calls = 0

    def goals(self) -> tuple[str, ...]:
        """The goal viewpoints of the current episode."""
        self.calls += 1
        return self._state().goals

    def reference_path(self) -> tuple[str, ...]:
        """The reference path of the current episode."""
        self.calls += 1
        return self._state().path

    def distance_to_goal(self) -> float:
        """Geodesic distance (metres) from the agent to the nearest goal."""
        self.calls += 1
        s = self._state()
        index = s.tables.graph.index
        goals = [index[g] for g in s.goals if g in index]
        return float(s.distances[s.node, goals].min()) if goals else math.inf

    def next_viewpoint(self) -> str | None:
        """The next viewpoint on a shortest path to the nearest goal (None at the goal)."""
        self.calls += 1
        s = self._state()
        index = s.tables.graph.index
        goals = np.array([index[g] for g in s.goals if g in index], dtype=np.int64)
        nxt = next_hop(s.tables, s.distances, s.node, goals)
        return None if nxt < 0 else s.tables.graph.ids[nxt]

    def action(self) -> int:
        """The teacher action in the environment's action space."""
        self.calls += 1
        return teacher_action(self._state())
