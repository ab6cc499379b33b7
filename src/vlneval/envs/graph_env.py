"""The graph navigation environment: the simulator's graph interface, no ground truth leaked.

Follows Gymnasium's contract without depending on it: ``reset(*, seed=None, options=None)``
returns ``(observation, info)``; ``step(action)`` returns ``(observation, reward, terminated,
truncated, info)``. The reward is always 0.0: any reward an environment could compute (progress
towards the goal) is derived from the goal, so it lives behind the privileged channel.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from vlneval.data.episodes import EpisodeTable
from vlneval.envs.episodes import EpisodeInputs, InputsFn, split_episodes
from vlneval.envs.features import FeatureStore, open_features
from vlneval.envs.observation import (
    BASE_FIELDS,
    FeatureSensor,
    Observation,
    Sensor,
    observations_card,
)
from vlneval.envs.privileged import PrivilegeError, Teacher, TeacherState
from vlneval.envs.spaces import (
    LOOK_DOWN,
    LOOK_UP,
    STOP,
    TURN_LEFT,
    TURN_RIGHT,
    ActionSpace,
    action_space,
    invalid_action,
)
from vlneval.graph.tables import Candidate, ScanTables, elevation_of, heading_of
from vlneval.envs.world import World
from vlneval.errors import ProblemCollector, UnknownNameError, VLNEvalError
from vlneval.graph.geometry import snap_heading
from vlneval.graph.store import GraphStore

__all__ = ["GraphNavEnv", "DEFAULT_MAX_STEPS", "transition", "EXECUTED_PATH"]

HEADINGS = tuple(heading_of(h) for h in range(12))
ELEVATIONS = tuple(elevation_of(e) for e in range(3))

#: Step limits when none is given: R2R-EnvDrop's 35 panoramic actions; egocentric actions are
#: finer (a turn is an action) and the R2R shortest-path teacher needs up to 35 of them on the
#: public splits, so 100 leaves every baseline untruncated.
DEFAULT_MAX_STEPS = {"panoramic": 35, "egocentric": 100}

EXECUTED_PATH = (
    "full: every viewpoint, heading and elevation the agent occupied, in order, including "
    "turns, exploration and backtracking (recorded by the environment, not by the agent)"
)


def transition(
    candidates: Sequence[Candidate],
    index: dict[str, int],
    panoramic: bool,
    node: int,
    h: int,
    e: int,
    a: int,
) -> tuple[int, int, int]:
    """The state ``(node, h, e)`` after the valid, non-STOP action ``a``.

    A move goes to ``candidates[a]`` (panoramic: turning first to the view it is seen in);
    turns change the heading index by ±1 (mod 12) and the elevation index within 0..2.

    Example:
        >>> transition((), {}, False, 4, 11, 2, TURN_RIGHT), transition((), {}, False, 4, 0, 2, LOOK_UP)
        ((4, 0, 2), (4, 0, 2))
    """
    if a >= 1:
        c = candidates[a]
        if panoramic:
            return index[c.viewpoint], c.view_index % 12, c.view_index // 12
        return index[c.viewpoint], h, e
    if a == TURN_RIGHT:
        return node, (h + 1) % 12, e
    if a == TURN_LEFT:
        return node, (h + 11) % 12, e
    if a == LOOK_UP:
        return node, h, min(e + 1, 2)
    if a == LOOK_DOWN:
        return node, h, max(e - 1, 0)
    raise ValueError(f"not a move or camera action: {a}")


def check_episodes(
    world: World, inputs: Sequence[EpisodeInputs], ids: Sequence[str], source: str
) -> None:
    """Every episode's scan has a graph and its start is a node; all problems at once."""
    pc = ProblemCollector(source)
    for eid, inp in zip(ids, inputs, strict=True):
        if inp.scan not in world:
            pc.add(
                f"scan {inp.scan} has no connectivity file in {world.store.folder}",
                episode=eid,
                field="scan",
            )
            continue
        graph = world.store.graph(inp.scan)
        if inp.start not in graph.index:
            pc.add(f"start: {graph.describe_missing(inp.start)}", episode=eid, field="path[0]")
    pc.raise_if_any()


class GraphNavEnv:
    """One agent on a navigation graph, one episode at a time.

    Args:
        episodes: the episodes (an :class:`EpisodeTable`); the environment keeps their ground
            truth in a separate object that no observation or ``info`` ever holds.
        graphs: a :class:`World`, a :class:`GraphStore` or a folder of connectivity files.
        action_space: ``panoramic`` or ``egocentric`` (see :mod:`vlneval.envs.spaces`).
        max_steps: the step limit; an episode that reaches it without STOP is truncated.
        features: a features file (``.tsv`` / ``.h5``) or store: adds ``features``.
        sensors: further observation fields (objects, dialog...).
        privileged: create the privileged channel (:meth:`privileged`); recorded on the card.
        inputs: builds an episode's task inputs (default: scan, start, heading, instruction).
        seed: seeds :attr:`np_random`, which picks the episode when ``reset`` is not told one.

    Example:
        >>> from vlneval.envs.loading import load_episodes
        >>> episodes, graphs = load_episodes("demo")
        >>> env = GraphNavEnv(episodes, graphs, action_space="panoramic")
        >>> obs, info = env.reset(options={"episode": 0})
        >>> obs["viewpoint"] == obs["candidates"][0].viewpoint, obs["step"]
        (True, 0)
        >>> obs, reward, terminated, truncated, info = env.step(1)
        >>> obs["step"], reward, terminated, truncated
        (1, 0.0, False, False)
        >>> obs, *_ , info = env.step(0)  # STOP
        >>> len(env.trajectory())
        2
    """

    metadata: dict[str, Any] = {"render_modes": [], "action_spaces": ("panoramic", "egocentric")}

    def __init__(
        self,
        episodes: EpisodeTable,
        graphs: World | GraphStore | str | Path,
        *,
        action_space: str | ActionSpace = "panoramic",
        max_steps: int | None = None,
        features: FeatureStore | str | Path | None = None,
        sensors: Sequence[Sensor] = (),
        privileged: bool = False,
        inputs: InputsFn | None = None,
        seed: int | None = None,
    ) -> None:
        self.action_space = _space(action_space)
        self.max_steps = _max_steps(max_steps, self.action_space)
        self.world = graphs if isinstance(graphs, World) else World(graphs)
        self.task, self.split, self.id_field = episodes.task, episodes.split, episodes.id_field
        self._ids, self._inputs, self._truth = split_episodes(episodes, inputs)
        self._int_ids = bool(getattr(episodes, "int_ids", False))
        self._index = {k: i for i, k in enumerate(self._ids)}
        check_episodes(self.world, self._inputs, self._ids, episodes.source)
        self.sensors = _sensors(features, sensors)
        self._privileged = _check_privileged(privileged, self._truth.scorable, episodes.source)
        self._teacher: Teacher | None = None
        self.np_random = np.random.default_rng(seed)
        self._pano = self.action_space.name == "panoramic"
        self._i = -1
        self._done = True
        self._tables: ScanTables | None = None
        self._node = self._h = self._e = self._steps = 0
        self._path: list[tuple[int, int, int]] = []
        self._cands: tuple[Candidate, ...] = ()
        self._vp_index: dict[str, int] = {}

    # -- Gymnasium API -------------------------------------------------------------------
    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[Observation, dict[str, Any]]:
        """Starts an episode: ``options={"episode": index or id}``, else one drawn at random."""
        if seed is not None:
            self.np_random = np.random.default_rng(seed)
        self._i = self._pick((options or {}).get("episode"))
        inp = self._inputs[self._i]
        self._tables = self.world.tables(inp.scan)
        self._vp_index = self._tables.graph.index
        self._node = self._vp_index[inp.start]
        self._h, self._e, self._steps = snap_heading(inp.heading), 1, 0
        self._path = [(self._node, self._h, self._e)]
        self._done = False
        return self._observe(), {"steps": 0}

    def step(self, action: int) -> tuple[Observation, float, bool, bool, dict[str, Any]]:
        """Takes one action; returns ``(observation, 0.0, terminated, truncated, info)``."""
        if self._done:
            raise VLNEvalError(
                "step() called on an ended episode (or before reset()): call reset() first"
            )
        cands = self._cands
        n = len(cands)
        if not (type(action) is int and 0 <= action < n) and not self.action_space.contains(
            action, n
        ):
            raise invalid_action(
                self.action_space, action, n, episode=self._ids[self._i], step=self._steps
            )
        a = int(action)
        self._steps += 1
        if a == STOP:
            self._done = True
            return self._observe(), 0.0, True, False, {"steps": self._steps, "stopped": True}
        self._node, self._h, self._e = transition(
            cands, self._vp_index, self._pano, self._node, self._h, self._e, a
        )
        self._path.append((self._node, self._h, self._e))
        truncated = self._steps >= self.max_steps
        self._done = truncated
        info: dict[str, Any] = {"steps": self._steps}
        if truncated:
            info["stopped"] = False
        return self._observe(), 0.0, False, truncated, info

    def close(self) -> None:
        """Nothing to release (Gymnasium API)."""

    # -- recording -----------------------------------------------------------------------
    def trajectory(self) -> list[tuple[str, float, float]]:
        """The executed trajectory of the current (or last) episode: ``(viewpoint, heading,
        elevation)`` after reset and after every action except STOP."""
        if self._tables is None:
            return []
        ids = self._tables.graph.ids
        return [(ids[n], heading_of(h), elevation_of(e)) for n, h, e in self._path]

    def prediction(self) -> dict[str, Any]:
        """The current (or last) episode as an R2R prediction record."""
        if self._i < 0:
            raise VLNEvalError("no episode has been run: call reset() first")
        return {
            self.id_field: int(self._ids[self._i]) if self._int_ids else self._ids[self._i],
            "trajectory": [list(s) for s in self.trajectory()],
        }

    @property
    def episode_id(self) -> str | None:
        """The id of the current (or last) episode (not part of any observation)."""
        return self._ids[self._i] if self._i >= 0 else None

    @property
    def episode_ids(self) -> list[str]:
        """Every episode id, in table order."""
        return list(self._ids)

    def __len__(self) -> int:
        return len(self._ids)

    # -- privileged channel and protocol --------------------------------------------------
    def privileged(self) -> Teacher:
        """The privileged channel (goals, distances, teacher actions); needs ``privileged=True``."""
        if not self._privileged:
            raise PrivilegeError(
                "this environment was built without privileged=True: goals and teacher actions "
                "are hidden (request them at construction; the protocol card will say so)"
            )
        if self._teacher is None:
            self._teacher = Teacher(self._teacher_state)
        return self._teacher

    def protocol(self) -> dict[str, Any]:
        """The protocol card fields this environment determines (spec/protocol.md)."""
        return protocol_fields(
            self.action_space,
            self.max_steps,
            self.sensors,
            self._privileged,
            self._teacher.calls if self._teacher else 0,
        )

    # -- internals -----------------------------------------------------------------------
    def _pick(self, episode: Any) -> int:
        if episode is None:
            return int(self.np_random.integers(len(self._ids)))
        if isinstance(episode, str):
            if episode not in self._index:
                raise UnknownNameError(
                    "episode", episode, self._ids if len(self._ids) <= 30 else []
                )
            return self._index[episode]
        valid_int = isinstance(episode, (int, np.integer)) and not isinstance(episode, bool)
        if valid_int and 0 <= int(episode) < len(self._ids):
            return int(episode)
        raise VLNEvalError(
            f"options['episode'] must be an id or an index in 0..{len(self._ids) - 1}, got {episode!r}"
        )

    def _current(self) -> ScanTables:
        if self._tables is None:
            raise VLNEvalError("no episode is running: call reset() first")
        return self._tables

    def _observe(self) -> Observation:
        t = self._current()
        inp = self._inputs[self._i]
        cands = self._cands = t.candidates(self._pano, self._node, self._h, self._e)
        obs: Observation = {
            "instruction": inp.instruction,
            "scan": inp.scan,
            "viewpoint": cands[0].viewpoint,
            "heading": HEADINGS[self._h],
            "elevation": ELEVATIONS[self._e],
            "view_index": 12 * self._e + self._h,
            "step": self._steps,
            "candidates": cands,
        }
        for sensor in self.sensors:
            obs[sensor.key] = sensor.observe(obs, inp)
        return obs

    def _teacher_state(self) -> TeacherState:
        if self._i < 0 or self._tables is None:
            raise PrivilegeError("no episode is running: call reset() first")
        scan = self._inputs[self._i].scan
        return TeacherState(
            self._tables,
            self.world.distances(scan),
            self._node,
            self._h,
            self._e,
            self._truth.goals(self._i),
            self._truth.path(self._i),
            self._pano,
        )

    def __repr__(self) -> str:
        return (
            f"GraphNavEnv({self.task} {self.split}, {len(self)} episodes, {self.action_space.name}, "
            f"max_steps={self.max_steps}, privileged={self._privileged})"
        )


def _space(name: str | ActionSpace) -> ActionSpace:
    return action_space(name)


def _max_steps(value: int | None, space: ActionSpace) -> int:
    if value is None:
        return DEFAULT_MAX_STEPS[space.name]
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise VLNEvalError(f"max_steps must be a positive integer, got {value!r}")
    return int(value)


def _sensors(features: FeatureStore | str | Path | None, sensors: Sequence[Sensor]) -> list[Sensor]:
    out: list[Sensor] = []
    if features is not None:
        store = open_features(features) if isinstance(features, (str, Path)) else features
        out.append(FeatureSensor(store))
    out.extend(sensors)
    keys = [s.key for s in out]
    clash = sorted({k for k in keys if keys.count(k) > 1} | (set(keys) & set(BASE_FIELDS)))
    if clash:
        raise VLNEvalError(f"two observation fields would share a name: {', '.join(clash)}")
    return out


def _check_privileged(privileged: bool, scorable: bool, source: str) -> bool:
    if privileged and not scorable:
        raise PrivilegeError(
            f"{source}: this split has no goals (a hidden test split), so there is no privileged "
            "information to give: a privileged agent cannot run on it"
        )
    return bool(privileged)


def protocol_fields(
    space: ActionSpace, max_steps: int, sensors: Sequence[Sensor], privileged: bool, calls: int
) -> dict[str, Any]:
    """The protocol card fields of an environment configuration."""
    return {
        "action_space": {"name": space.name, **space.card},
        "observations": observations_card(sensors),
        "map": "given: the Matterport3D navigation graph (connectivity files); no map is built",
        "privileged": (
            "goals, reference path, distances and teacher actions through env.privileged(), "
            f"requested at construction ({calls} calls)"
            if privileged
            else "none"
        ),
        "inference_budget": {
            "max_steps": max_steps,
            "stop_counts_as_step": True,
            "search": "none: one rollout per episode",
            "backtracking": "allowed, and recorded in the executed path",
        },
        "executed_path": EXECUTED_PATH,
    }
