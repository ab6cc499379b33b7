"""Continuous navigation environments: discrete steps (R2R-CE, RxR-CE), velocities, waypoints.

The contract of :mod:`vlneval.envs.core`. Observations hold the instruction, the scan, the
agent's pose (position in metres, heading, camera elevation), the step count, the simulated
time and whether the last action was blocked; never the goal, the reference path or a distance
to the goal. The environment records the executed path (every pose after each action, and
every controller tick of a waypoint's execution) and integrates the path length from the motion.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from vlneval.continuous.motion import Mover, Pose, direction
from vlneval.continuous.twin import TwinWorlds
from vlneval.continuous.world import World
from vlneval.envs.continuous.executor import execute_waypoint
from vlneval.envs.continuous.spaces import (
    FORWARD,
    LOOK_DOWN,
    LOOK_UP,
    TURN_LEFT,
    TURN_RIGHT,
    DiscreteSteps,
    Velocity,
    Waypoint,
    continuous_space,
    is_stop,
)
from vlneval.envs.continuous.teacher import ContinuousTeacher
from vlneval.envs.core import EpisodeEnv, budget_card
from vlneval.errors import InvalidActionError, VLNEvalError
from vlneval.graph.store import GraphStore
from vlneval.io import brief
from vlneval.tasks.vlnce.format import ContinuousEpisodes, world_to_habitat
from vlneval.tasks.vlnce.twin import twin_episodes

__all__ = [
    "ContinuousNavEnv",
    "EpisodeRecord",
    "OBSERVATION_FIELDS",
    "make_continuous_env",
    "r2r_ce_steps",
]

OBSERVATION_FIELDS = (
    "instruction",
    "scan",
    "position",
    "heading",
    "elevation",
    "step",
    "time",
    "collided",
    "status",
)


@dataclass
class EpisodeRecord:
    """What the environment measured in one episode.

    Attributes:
        track: every pose occupied, start first (after each action; waypoints: every tick):
            a :class:`Pose`, or a waypoint's ticks as ``(k, 6)`` rows of the pose fields.
        path_length: metres travelled, integrated from the motion (3-D).
        time: simulated seconds. steps: actions taken (STOP included).
        stopped: the episode ended with STOP. collisions: blocked actions or periods.
        clipped: velocity commands clipped to the limits. statuses: waypoint outcomes.
        chunks: how many items of ``track`` are rows.
    """

    episode_id: str
    track: list[Any] = field(default_factory=list)
    path_length: float = 0.0
    time: float = 0.0
    steps: int = 0
    stopped: bool = False
    collisions: int = 0
    clipped: int = 0
    statuses: dict[str, int] = field(default_factory=dict)
    chunks: int = 0

    @property
    def poses(self) -> list[Pose]:
        """Every pose occupied, start first."""
        out: list[Pose] = []
        for item in self.track:
            if isinstance(item, np.ndarray):
                out += [Pose(x, y, int(k), z, h, e) for x, y, k, z, h, e in item.tolist()]
            else:
                out.append(item)
        return out

    def rows(self) -> np.ndarray:
        """Every pose occupied as ``(n, 6)`` rows (x, y, layer, z, heading, elevation)."""
        if not self.chunks:
            return np.array(self.track, dtype=np.float64).reshape(-1, 6)
        return np.concatenate(
            [t if isinstance(t, np.ndarray) else np.array([t], np.float64) for t in self.track]
        )


class ContinuousNavEnv(EpisodeEnv[ContinuousTeacher]):
    """A continuous VLN environment over a set of episodes and their worlds.

    Args:
        episodes: the episodes (:class:`~vlneval.tasks.vlnce.format.ContinuousEpisodes`, any frame).
        worlds: a :class:`World` (every episode in it), or ``scan -> World`` (e.g.
            :class:`~vlneval.continuous.twin.TwinWorlds`).
        action_space: ``r2r-ce``, ``rxr-ce``, ``velocity``, ``waypoint`` or a space object.
        max_steps: the action limit (default: the space's).
        privileged: create the privileged channel; recorded on the protocol card.
        seed: seeds the episode draw of ``reset()`` without ``options``.
    """

    metadata: dict[str, Any] = {"render_modes": []}
    hidden = "the goal and teacher actions are hidden"
    gives = "goal, geodesic distance field and teacher actions"

    def __init__(
        self,
        episodes: ContinuousEpisodes,
        worlds: World | Callable[[str], World],
        *,
        action_space: Any = "r2r-ce",
        max_steps: int | None = None,
        privileged: bool = False,
        seed: int | None = None,
    ) -> None:
        self.action_space = continuous_space(action_space)
        self.episodes = episodes
        self.task, self.split, self.id_field = episodes.task, episodes.split, episodes.id_field
        self._setup(
            episodes.ids,
            max_steps=max_steps,
            default_steps=int(self.action_space.max_steps),
            privileged=privileged,
            scorable=episodes.scorable,
            source=episodes.source,
            seed=seed,
        )
        self._worlds = (lambda _scan: worlds) if isinstance(worlds, World) else worlds
        self._mover: Mover | None = None
        self._pose: Pose | None = None
        self._rec = EpisodeRecord("")
        self._collided = False
        self._status: str | None = None
        self._movers: dict[str, Mover] = {}
        self._serial = 0
        self._goal_serial = -1
        self._goal = np.zeros(3)
        self._z_offset = 0.0

    # -- Gymnasium API -------------------------------------------------------------------------
    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict[str, Any], dict[str, Any]]:
        """Starts an episode: ``options={"episode": index or id}``, else one drawn at random."""
        ep = self.episodes.episode(self._begin(seed, options))
        self._mover = self._mover_for(ep.scan)
        pose = self._mover.place(ep.start, ep.heading, snap=0.5)
        if pose is None:
            raise VLNEvalError(
                f"{self.episodes.source}: episode {ep.episode_id}: the start position "
                f"{ep.start.round(3).tolist()} is not on the free space of world {ep.scan}"
            )
        self._pose = pose
        # Logged heights keep the episode's own floor level (a twin's floor may sit a few cm
        # off the benchmark's navmesh): only height changes come from the world.
        self._z_offset = float(ep.start[2]) - pose.z
        self._rec = EpisodeRecord(ep.episode_id, [pose])
        self._serial += 1
        self._collided, self._status = False, None
        return self._observe(), {"steps": 0, "time": 0.0, "path_length": 0.0}

    def step(self, action: Any) -> tuple[dict[str, Any], float, bool, bool, dict[str, Any]]:
        """Takes one action; returns ``(observation, 0.0, terminated, truncated, info)``."""
        self._check_running()
        rec = self._rec
        space = self.action_space
        if is_stop(action):
            rec.stopped = True
            return self._counted(True)
        try:
            if isinstance(space, DiscreteSteps):
                self._discrete(space, action)
            elif isinstance(space, Velocity):
                self._velocity(space, action)
            else:
                self._waypoint(space, action)
        except InvalidActionError as exc:
            raise InvalidActionError(
                f"episode {rec.episode_id}, step {rec.steps}: {exc} (action space {space.name})"
            ) from None
        rec.collisions += int(self._collided)
        return self._counted(False)

    def _counted(self, stopped: bool) -> tuple[dict[str, Any], float, bool, bool, dict[str, Any]]:
        terminated, truncated, extra = self._count_step(stopped)
        self._rec.steps = self._steps
        return self._observe(), 0.0, terminated, truncated, {**self._info(), **extra}

    # -- the three action spaces ---------------------------------------------------------------
    def _discrete(self, space: DiscreteSteps, action: Any) -> None:
        if not space.contains(action):
            raise InvalidActionError(
                f"invalid action {brief(action, 40)}; expected {space.expected()}"
            )
        a, pose, rec = int(action), self._pose, self._rec
        assert pose is not None and self._mover is not None  # reset() ran
        self._collided = False
        if a == FORWARD:
            m = self._mover.forward(
                pose, space.forward_m, slide=space.sliding, partial=space.sliding
            )
            pose, self._collided = m.pose, m.blocked
            rec.path_length += m.length
            rec.time += space.forward_m / space.linear_speed
        elif a in (TURN_LEFT, TURN_RIGHT):
            turn = math.radians(space.turn_deg) * (1 if a == TURN_RIGHT else -1)
            heading = (pose.heading + turn) % (2 * math.pi)
            pose = Pose(pose.x, pose.y, pose.layer, pose.z, heading, pose.elevation)
            rec.time += space.turn_deg / space.angular_speed_deg
        elif a in (LOOK_UP, LOOK_DOWN):
            lim = math.radians(space.elevation_limit_deg)
            tilt = math.radians(space.look_deg) * (1 if a == LOOK_UP else -1)
            elevation = min(lim, max(-lim, pose.elevation + tilt))
            pose = Pose(pose.x, pose.y, pose.layer, pose.z, pose.heading, elevation)
            rec.time += space.look_deg / space.angular_speed_deg
        self._pose = pose
        rec.track.append(pose)

    def _velocity(self, space: Velocity, action: Any) -> None:
        v, w, clipped = space.parse(action)
        assert self._pose is not None and self._mover is not None  # reset() ran
        m = self._mover.drive(self._pose, v, w, space.period_s)
        self._pose, self._collided = m.pose, m.blocked
        rec = self._rec
        rec.clipped += int(clipped)
        rec.path_length += m.length
        rec.time += space.period_s
        rec.track.append(m.pose)

    def _waypoint(self, space: Waypoint, action: Any) -> None:
        r, rel, dz = space.parse(action)
        assert self._pose is not None and self._mover is not None  # reset() ran
        dx, dy = direction(self._pose.heading + rel)
        z = None if dz is None else self._pose.z + dz
        target = (self._pose.x + r * dx, self._pose.y + r * dy, z)
        result = execute_waypoint(self._mover, self._pose, target, space)
        rec = self._rec
        self._pose, self._status = result.pose, result.status
        self._collided = result.status != "reached"
        rec.path_length += result.length
        rec.time += result.time
        if len(result.rows):
            rec.track.append(result.rows)
            rec.chunks += 1
        else:
            rec.track.append(result.pose)
        key = result.status if result.status == "reached" else f"blocked ({result.reason})"
        rec.statuses[key] = rec.statuses.get(key, 0) + 1

    # -- recording -----------------------------------------------------------------------------
    @property
    def record(self) -> EpisodeRecord:
        """The current (or last) episode's record."""
        return self._rec

    def trajectory(self) -> list[dict[str, Any]]:
        """The executed path as ``r2r-ce`` steps in the EPISODES' frame (start first; STOP on
        the last step when the agent stopped). Heights are the episode's start height plus the
        world's height changes."""
        pts, headings = self.executed()
        return r2r_ce_steps(pts, headings, self._rec.stopped)

    def executed(self) -> tuple[np.ndarray, list[float]]:
        """The executed path as arrays: ``(n, 3)`` positions in the episodes' frame (the
        floats :meth:`trajectory` writes) and the ``n`` headings."""
        rows = self._rec.rows()
        pts = rows[:, [0, 1, 3]]
        pts[:, 2] += self._z_offset
        if self.episodes.frame == "habitat":
            pts = world_to_habitat(pts)
        return pts, rows[:, 4].tolist()

    @property
    def episode_index(self) -> int:
        """The index (in the episodes) of the current or last episode; -1 before any."""
        return self._i

    def prediction(self) -> dict[str, Any]:
        """The current (or last) episode as an ``r2r-ce`` prediction entry ``{id: steps}``."""
        self._check_ran()
        return {self._rec.episode_id: self.trajectory()}

    # -- privileged channel and protocol --------------------------------------------------------
    def _make_teacher(self) -> ContinuousTeacher:
        return ContinuousTeacher(self._teacher_view)

    def protocol(self) -> dict[str, Any]:
        """The protocol card fields this environment determines (spec/protocol.md)."""
        return {
            "action_space": self.action_space.card(),
            "observations": {
                "fields": list(OBSERVATION_FIELDS),
                "pose": "position (metres, world frame, z up) and heading: GPS+compass",
                "visual": "none",
            },
            "map": "given: the world's occupancy grid is the simulator; agents see only their pose",
            "privileged": self._privileged_card(),
            "inference_budget": budget_card(self.max_steps),
            "executed_path": "full: every pose after each action and every controller tick of a "
            "waypoint, recorded by the environment; path length integrated from the motion",
        }

    # -- internals -----------------------------------------------------------------------------
    def _mover_for(self, scan: str) -> Mover:
        if scan not in self._movers:
            self._movers[scan] = Mover(self._worlds(scan))
        return self._movers[scan]

    def _teacher_view(self) -> tuple[Mover, Pose, np.ndarray, Any, bool, int]:
        if self._i < 0 or self._pose is None or self._mover is None:
            raise VLNEvalError("no episode is running: call reset() first")
        if self._goal_serial != self._serial:
            self._goal = self.episodes.to_world(self.episodes.goals[self._i])
            self._goal_serial = self._serial
        return self._mover, self._pose, self._goal, self.action_space, self._collided, self._serial

    def _observe(self) -> dict[str, Any]:
        ep_i, pose = self._i, self._pose
        assert pose is not None  # reset() ran
        return {
            "instruction": self.episodes.instructions[ep_i],
            "scan": self.episodes.scans[ep_i],
            "position": pose.position,
            "heading": float(pose.heading),
            "elevation": float(pose.elevation),
            "step": self._rec.steps,
            "time": self._rec.time,
            "collided": bool(self._collided),
            "status": self._status,
        }

    def _info(self) -> dict[str, Any]:
        r = self._rec
        info: dict[str, Any] = {
            "steps": r.steps,
            "time": r.time,
            "path_length": r.path_length,
            "collided": self._collided,
        }
        if self._status is not None:
            info["status"] = self._status
        return info

    def __repr__(self) -> str:
        return (
            f"ContinuousNavEnv({self.task} {self.split}, {len(self)} episodes, {self.action_space.name}, "
            f"max_steps={self.max_steps}, privileged={self._privileged})"
        )


def r2r_ce_steps(pts: np.ndarray, headings: list[float], stopped: bool) -> list[dict[str, Any]]:
    """``r2r-ce`` steps from positions and headings (floats; STOP on the last when ``stopped``).

    Example:
        >>> r2r_ce_steps(np.zeros((2, 3)), [0.0, 1.5], True)[1]
        {'position': [0.0, 0.0, 0.0], 'heading': 1.5, 'stop': True}
    """
    steps = [
        {"position": xyz, "heading": h, "stop": False}
        for xyz, h in zip(pts.tolist(), headings, strict=True)
    ]
    if steps and stopped:
        steps[-1]["stop"] = True
    return steps


def make_continuous_env(
    episodes: Any, graphs: Any = None, *, action_space: Any = "r2r-ce", **kwargs: Any
) -> ContinuousNavEnv:
    """A continuous environment from what ``vlneval.envs.make_env`` passes: graph episodes
    (an R2R-style table: their continuous twins are used) or continuous episodes, and the
    navigation graphs (a :class:`~vlneval.graph.store.GraphStore`, a folder, or an object with a
    ``store``), whose twin worlds are built on first use; or directly a continuous world.
    """
    worlds: Any = graphs
    if not isinstance(graphs, (World, TwinWorlds)):
        store = getattr(graphs, "store", graphs)
        store = store if isinstance(store, GraphStore) else GraphStore(store)
        worlds = TwinWorlds(store)
    if not isinstance(episodes, ContinuousEpisodes):
        task = episodes.task if episodes.task.endswith("-twin") else f"{episodes.task}-twin"
        episodes = twin_episodes(episodes, worlds.store, task=task)
    return ContinuousNavEnv(episodes, worlds, action_space=action_space, **kwargs)
