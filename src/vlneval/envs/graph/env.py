"""The graph navigation environment: the simulator's graph interface, no ground truth leaked.

The contract of :mod:`vlneval.envs.core`.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from vlneval.envs import spaces
from vlneval.envs.core import EpisodeEnv, PrivilegeError, budget_card
from vlneval.envs.graph.episodes import EpisodeInputs, InputsFn, split_episodes
from vlneval.envs.graph.features import FeatureStore, check_covers, open_features
from vlneval.envs.graph.observation import (
    BASE_FIELDS,
    FeatureSensor,
    Observation,
    Sensor,
    observation,
    observations_card,
)
from vlneval.envs.graph.privileged import Teacher, TeacherState, teacher_state
from vlneval.envs.graph.world import GraphWorld
from vlneval.envs.spaces import (
    LOOK_DOWN,
    LOOK_UP,
    STOP,
    TURN_LEFT,
    TURN_RIGHT,
    ActionSpace,
    invalid_action,
)
from vlneval.errors import ProblemCollector, VLNEvalError
from vlneval.graph.geometry import snap_heading
from vlneval.graph.store import GraphStore
from vlneval.graph.tables import Candidate, ScanTables, elevation_of, heading_of
from vlneval.tasks.common.episodes import EpisodeTable

__all__ = ["GraphNavEnv", "DEFAULT_MAX_STEPS", "transition", "EXECUTED_PATH"]

#: Step limits when none is given: R2R-EnvDrop's 35 panoramic actions; egocentric actions are
#: finer (a turn is an action) and the R2R shortest-path teacher needs up to 35 of them on the
#: public splits, so 100 leaves every baseline untruncated.
DEFAULT_MAX_STEPS = {"panoramic": 35, "egocentric": 100}

#: What the privileged channel gives (the protocol card says it).
GIVES = "goals, reference path, distances and teacher actions"

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
    world: GraphWorld, inputs: Sequence[EpisodeInputs], ids: Sequence[str], source: str
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


class GraphNavEnv(EpisodeEnv[Teacher]):
    """One agent on a navigation graph, one episode at a time.

    Args:
        episodes: the episodes (an :class:`EpisodeTable`); the environment keeps their ground
            truth in a separate object that no observation or ``info`` ever holds.
        graphs: a :class:`GraphWorld`, a :class:`GraphStore` or a folder of connectivity files.
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
    gives = GIVES

    def __init__(
        self,
        episodes: EpisodeTable,
        graphs: GraphWorld | GraphStore | str | Path,
        *,
        action_space: str | ActionSpace = "panoramic",
        max_steps: int | None = None,
        features: FeatureStore | str | Path | None = None,
        sensors: Sequence[Sensor] = (),
        privileged: bool = False,
        inputs: InputsFn | None = None,
        seed: int | None = None,
    ) -> None:
        self.action_space = spaces.action_space(action_space)
        self.world = graphs if isinstance(graphs, GraphWorld) else GraphWorld(graphs)
        self.task, self.split, self.id_field = episodes.task, episodes.split, episodes.id_field
        ids, self._inputs, self._truth = split_episodes(episodes, inputs)
        self._setup(
            ids,
            max_steps=max_steps,
            default_steps=DEFAULT_MAX_STEPS[self.action_space.name],
            privileged=privileged,
            scorable=self._truth.scorable,
            source=episodes.source,
            seed=seed,
        )
        self._int_ids = bool(getattr(episodes, "int_ids", False))
        check_episodes(self.world, self._inputs, self._ids, episodes.source)
        self.sensors = _sensors(features, sensors)
        check_features(self.sensors, self.world, self._ids, self._inputs)
        self._pano = self.action_space.name == "panoramic"
        self._tables: ScanTables | None = None
        self._node = self._h = self._e = 0
        self._path: list[tuple[int, int, int]] = []
        self._cands: tuple[Candidate, ...] = ()
        self._vp_index: dict[str, int] = {}

    # -- Gymnasium API -------------------------------------------------------------------
    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[Observation, dict[str, Any]]:
        """Starts an episode: ``options={"episode": index or id}``, else one drawn at random."""
        inp = self._inputs[self._begin(seed, options)]
        self._tables = self.world.tables(inp.scan)
        self._vp_index = self._tables.graph.index
        self._node = self._vp_index[inp.start]
        self._h, self._e = snap_heading(inp.heading), 1
        self._path = [(self._node, self._h, self._e)]
        return self._observe(), {"steps": 0}

    def step(self, action: int) -> tuple[Observation, float, bool, bool, dict[str, Any]]:
        """Takes one action; returns ``(observation, 0.0, terminated, truncated, info)``."""
        self._check_running()
        cands = self._cands
        n = len(cands)
        if not (type(action) is int and 0 <= action < n) and not self.action_space.contains(
            action, n
        ):
            raise invalid_action(
                self.action_space, action, n, episode=self._ids[self._i], step=self._steps
            )
        a = int(action)
        if a != STOP:
            self._node, self._h, self._e = transition(
                cands, self._vp_index, self._pano, self._node, self._h, self._e, a
            )
            self._path.append((self._node, self._h, self._e))
        terminated, truncated, info = self._count_step(stopped=a == STOP)
        return self._observe(), 0.0, terminated, truncated, info

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
        self._check_ran()
        return {
            self.id_field: int(self._ids[self._i]) if self._int_ids else self._ids[self._i],
            "trajectory": [list(s) for s in self.trajectory()],
        }

    # -- privileged channel and protocol --------------------------------------------------
    def _make_teacher(self) -> Teacher:
        return Teacher(self._teacher_state)

    def protocol(self) -> dict[str, Any]:
        """The protocol card fields this environment determines (spec/protocol.md)."""
        return protocol_fields(
            self.action_space, self.max_steps, self.sensors, self._privileged_card()
        )

    # -- internals -----------------------------------------------------------------------
    def _current(self) -> ScanTables:
        if self._tables is None:
            raise VLNEvalError("no episode is running: call reset() first")
        return self._tables

    def _observe(self) -> Observation:
        t = self._current()
        self._cands = t.candidates(self._pano, self._node, self._h, self._e)
        inp = self._inputs[self._i]
        return observation(inp, self._cands, self._h, self._e, self._steps, self.sensors)

    def _teacher_state(self) -> TeacherState:
        if self._i < 0 or self._tables is None:
            raise PrivilegeError("no episode is running: call reset() first")
        scan = self._inputs[self._i].scan
        return teacher_state(
            self.world, self._truth, self._i, scan, self._node, self._h, self._e, self._pano
        )

    def __repr__(self) -> str:
        return (
            f"GraphNavEnv({self.task} {self.split}, {len(self)} episodes, {self.action_space.name}, "
            f"max_steps={self.max_steps}, privileged={self._privileged})"
        )


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


def check_features(
    sensors: Sequence[Sensor],
    world: GraphWorld,
    ids: Sequence[str],
    inputs: Sequence[EpisodeInputs],
) -> None:
    """Refuses a features file missing a viewpoint of the episodes' scans (any of them can be
    reached) before the first step, not when it is reached: see :func:`check_covers`."""
    for sensor in sensors:
        if isinstance(sensor, FeatureSensor):
            scans = sorted({i.scan for i in inputs})
            reach = ((scan, vp) for scan in scans for vp in world.store.graph(scan).ids)
            check_covers(sensor.store, reach, zip(ids, (i.scan for i in inputs), strict=True))


def protocol_fields(
    space: ActionSpace, max_steps: int, sensors: Sequence[Sensor], privileged: str
) -> dict[str, Any]:
    """The protocol card fields of an environment configuration (``privileged``: its entry)."""
    return {
        "action_space": {"name": space.name, **space.card},
        "observations": observations_card(sensors),
        "map": "given: the Matterport3D navigation graph (connectivity files); no map is built",
        "privileged": privileged,
        "inference_budget": budget_card(
            max_steps, backtracking="allowed, and recorded in the executed path"
        ),
        "executed_path": EXECUTED_PATH,
    }
