"""The vectorised graph environment: many episodes stepped at once by a compiled loop.

``VectorGraphNavEnv`` runs ``num_envs`` slots over a queue of episodes. ``step(actions)`` moves
every active slot, records each finished episode's executed path and starts the next queued
episode in that slot (Gymnasium's same-step autoreset), so a rollout of a whole split is a
plain loop. Observations come as arrays (:class:`BatchObservation`) for fast batched agents, or
as the single environment's dicts (:meth:`VectorGraphNavEnv.observation`) for per-episode agents.
The dynamics, candidate lists and recording are those of :class:`~vlneval.envs.GraphNavEnv`.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from vlneval.envs import spaces
from vlneval.envs.core import (
    PrivilegeError,
    allow_privileged,
    positive_steps,
    privileged_card,
    refuse_unprivileged,
)
from vlneval.envs.graph.batch import BatchObservation, FlatTables
from vlneval.envs.graph.env import (
    DEFAULT_MAX_STEPS,
    GIVES,
    _sensors,
    check_episodes,
    check_features,
    protocol_fields,
)
from vlneval.envs.graph.episodes import InputsFn, split_episodes
from vlneval.envs.graph.features import FeatureStore
from vlneval.envs.graph.observation import FeatureSensor, Observation, Sensor, observation
from vlneval.envs.graph.privileged import Teacher, TeacherState, teacher_state
from vlneval.envs.graph.world import GraphWorld
from vlneval.envs.spaces import ActionSpace, invalid_action
from vlneval.errors import VLNEvalError
from vlneval.graph.geometry import snap_heading
from vlneval.graph.store import GraphStore
from vlneval.graph.tables import elevation_of, heading_of
from vlneval.tasks.common.episodes import EpisodeTable

__all__ = ["VectorGraphNavEnv", "BatchObservation", "FlatTables"]  # the last two from .batch
_I32 = np.iinfo(np.int32)


class VectorGraphNavEnv:
    """``num_envs`` graph environments stepped together (see the module docstring).

    Args:
        episodes, graphs, action_space, max_steps, features, sensors, privileged, inputs, seed:
            as :class:`~vlneval.envs.GraphNavEnv`.
        num_envs: the number of slots ``B``.
        batch_sensors: build the batch's ``features`` and sensor fields in ``reset`` and
            ``step``; a caller that asks :meth:`observation` for each slot anyway passes False,
            so that no sensor is read twice.

    Example:
        >>> import numpy as np
        >>> from vlneval.envs.loading import load_episodes
        >>> episodes, graphs = load_episodes("demo")
        >>> venv = VectorGraphNavEnv(episodes, graphs, num_envs=4)
        >>> obs, info = venv.reset(options={"episodes": range(len(episodes))})
        >>> while obs.active.any():
        ...     obs, _, terminated, truncated, info = venv.step(np.ones(4, dtype=np.int32))
        >>> len(venv.predictions()), venv.predictions()[0]["instr_id"]
        (36, '100_0')
    """

    def __init__(
        self,
        episodes: EpisodeTable,
        graphs: GraphWorld | GraphStore | str | Path,
        *,
        num_envs: int,
        action_space: str | ActionSpace = "panoramic",
        max_steps: int | None = None,
        features: FeatureStore | str | Path | None = None,
        sensors: Sequence[Sensor] = (),
        privileged: bool = False,
        inputs: InputsFn | None = None,
        seed: int | None = None,
        batch_sensors: bool = True,
    ) -> None:
        from vlneval.envs.graph import kernels  # deferred: numba (compiled on the first vector env)

        self._batch_sensors = batch_sensors

        self._k = kernels
        if (
            isinstance(num_envs, bool)
            or not isinstance(num_envs, (int, np.integer))
            or num_envs < 1
        ):
            raise VLNEvalError(f"num_envs must be a positive integer, got {num_envs!r}")
        self.num_envs = int(num_envs)
        self.action_space = spaces.action_space(action_space)
        self.max_steps = positive_steps(max_steps, DEFAULT_MAX_STEPS[self.action_space.name])
        self.world = graphs if isinstance(graphs, GraphWorld) else GraphWorld(graphs)
        self.task, self.split, self.id_field = episodes.task, episodes.split, episodes.id_field
        self._ids, self._inputs, self._truth = split_episodes(episodes, inputs)
        self._int_ids = bool(getattr(episodes, "int_ids", False))
        check_episodes(self.world, self._inputs, self._ids, episodes.source)
        self.sensors = _sensors(features, sensors)
        check_features(self.sensors, self.world, self._ids, self._inputs)
        self._features = next((s.store for s in self.sensors if isinstance(s, FeatureSensor)), None)
        self._extra = [s for s in self.sensors if not isinstance(s, FeatureSensor)]
        self._privileged = allow_privileged(privileged, self._truth.scorable, episodes.source)
        self._teachers: dict[int, Teacher] = {}
        self.np_random = np.random.default_rng(seed)
        self._pano = self.action_space.name == "panoramic"
        self.scans = sorted({inp.scan for inp in self._inputs})
        self._scan_index = {s: i for i, s in enumerate(self.scans)}
        self.tables = FlatTables.build(self.world, self.scans, self._pano)
        self._episode_arrays()
        self._allocate()

    # -- setup ---------------------------------------------------------------------------
    def _episode_arrays(self) -> None:
        t = self.tables
        self._ep_start = np.array(
            [
                t.offsets[self._scan_index[i.scan]] + self.world.store.graph(i.scan).index[i.start]
                for i in self._inputs
            ],
            dtype=np.int32,
        )
        self._ep_h = np.array([snap_heading(i.heading) for i in self._inputs], dtype=np.int32)
        self._node_scan = np.repeat(
            np.arange(len(self.scans), dtype=np.int32), np.diff(self.tables.offsets)
        )

    def _allocate(self) -> None:
        b, steps = self.num_envs, self.max_steps + 1
        self._state = tuple(np.zeros(b, dtype=np.int32) for _ in range(5))
        self._state[4][:] = -1
        self._path = (
            np.zeros((b, steps), np.int32),
            np.zeros((b, steps), np.int32),
            np.zeros((b, steps), np.int32),
            np.zeros(b, np.int32),
        )
        self._instructions: tuple[str, ...] = ("",) * b
        self._queue = np.zeros(0, np.int32)
        self._qpos = np.zeros(1, np.int64)
        self._out: tuple[np.ndarray, ...] = ()
        t = self.tables
        self._tables_tuple = (
            self._node_scan,
            t.count,
            t.node,
            t.view,
            t.rel_heading,
            t.elevation,
            t.distance,
        )
        self._episodes_tuple: tuple[np.ndarray, ...] = ()

    def _new_obs(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        b, width = self.num_envs, self.tables.node.shape[2]
        return (
            np.empty((b, 9), np.int32),
            np.empty((b, 2, width), np.int32),
            np.empty((b, 3, width)),
        )

    # -- Gymnasium vector API ------------------------------------------------------------
    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[BatchObservation, dict[str, Any]]:
        """Queues ``options["episodes"]`` (indices, default: every episode in a random order
        drawn from :attr:`np_random`) and fills the slots from the queue."""
        if seed is not None:
            self.np_random = np.random.default_rng(seed)
        order = (options or {}).get("episodes")
        queue = (
            self.np_random.permutation(len(self._ids)) if order is None else np.asarray(list(order))
        )
        if queue.ndim != 1 or (len(queue) and (queue.min() < 0 or queue.max() >= len(self._ids))):
            raise VLNEvalError(
                f"options['episodes'] must be episode indices in 0..{len(self._ids) - 1}"
            )
        self._queue = np.ascontiguousarray(queue, dtype=np.int32)
        self._qpos[0] = 0
        n = len(self._ids)
        cap = min(len(queue), 4 * self.num_envs + 16) * (self.max_steps + 1)  # grows as needed
        self._out = (
            np.zeros(cap, np.int32),
            np.zeros(cap, np.int32),
            np.zeros(cap, np.int32),
            np.full(n, -1, np.int64),
            np.zeros(n, np.int32),
            np.zeros(n, np.int8),
            np.zeros(1, np.int64),
        )
        self._episodes_tuple = (self._ep_start, self._ep_h, self._queue, self._qpos)
        obs = self._new_obs()
        self._k.start_batch(
            self._pano, self._state, self._tables_tuple, self._episodes_tuple, self._path, obs
        )
        self._refresh_instructions()
        return self._batch(obs), {"episode": obs[0][:, 7]}

    def step(
        self, actions: Sequence[int] | np.ndarray
    ) -> tuple[BatchObservation, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        """Steps every active slot. Returns ``(observations, rewards, terminated, truncated,
        info)``; ``terminated``/``truncated`` refer to the episode that was in the slot, and
        ``info["episode"]`` gives each slot's episode after autoreset (−1: idle)."""
        if not self._out:
            raise VLNEvalError("step() called before reset()")
        acts = actions
        if not (
            type(acts) is np.ndarray and acts.dtype == np.int32 and acts.shape == (self.num_envs,)
        ):
            acts = self._actions(actions)
        b = self.num_envs
        obs = self._new_obs()
        terminated, truncated = np.empty(b, np.bool_), np.empty(b, np.bool_)
        self._reserve()
        bad, finished = self._k.step_batch(
            self._pano,
            acts,
            self.max_steps,
            self._state,
            self._tables_tuple,
            self._episodes_tuple,
            self._path,
            self._out,
            obs,
            terminated,
            truncated,
        )
        if bad >= 0:
            self._raise_invalid(int(bad), actions)
        if finished:
            self._refresh_instructions()
        return self._batch(obs), np.zeros(b), terminated, truncated, {"episode": obs[0][:, 7]}

    def _reserve(self) -> None:
        """Room in the path store for every slot finishing a full-length episode this step."""
        node, h, e, offset, length, status, pos = self._out
        need = int(pos[0]) + self.num_envs * (self.max_steps + 1)
        if need > len(node):
            size = max(2 * len(node), need)
            grown = [np.zeros(size, np.int32) for _ in range(3)]
            for new, old in zip(grown, (node, h, e), strict=True):
                new[: len(old)] = old
            self._out = (*grown, offset, length, status, pos)

    def _actions(self, actions: Sequence[int] | np.ndarray) -> np.ndarray:
        raw = np.asarray(actions)
        huge = raw.dtype.kind == "O" and all(type(a) is int for a in raw.flat)  # beyond int64
        if raw.dtype.kind not in "iu" and not huge:
            raise VLNEvalError(f"actions must be integers, got dtype {raw.dtype}")
        if raw.shape != (self.num_envs,):
            raise VLNEvalError(f"expected {self.num_envs} actions, got shape {raw.shape}")
        # Compared before the cast, which would wrap 2**32 + 1 to the valid 1: an action outside
        # int32 becomes int32's minimum, invalid in every space, so step() reports the original.
        inside = (raw >= _I32.min) & (raw <= _I32.max)
        acts = np.full(self.num_envs, _I32.min, np.int32)
        acts[inside] = raw[inside]
        return acts

    def close(self) -> None:
        """Nothing to release (Gymnasium API)."""

    # -- observations --------------------------------------------------------------------
    def _refresh_instructions(self) -> None:
        inputs = self._inputs
        self._instructions = tuple(
            inputs[q].instruction if q >= 0 else "" for q in self._state[4].tolist()
        )

    def _batch(self, obs: tuple[np.ndarray, np.ndarray, np.ndarray]) -> BatchObservation:
        pose, cint, cflt = obs
        features = extra = None
        if self._batch_sensors and (self._features is not None or self._extra):
            active = pose[:, 0] == 1
            if self._features is not None:
                features = self._batch_features(self._features, active, pose[:, 2])
            if self._extra:
                extra = self._batch_extra(active)
        return BatchObservation(pose, cint, cflt, self._instructions, features, extra)

    def _batch_extra(self, active: np.ndarray) -> dict[str, list[Any]]:
        out: dict[str, list[Any]] = {s.key: [None] * self.num_envs for s in self._extra}
        for slot in np.flatnonzero(active).tolist():
            obs = self.observation(slot)
            for s in self._extra:
                out[s.key][slot] = obs[s.key]
        return out

    def _batch_features(self, store: FeatureStore, active: np.ndarray, g: np.ndarray) -> np.ndarray:
        out = np.zeros((self.num_envs, 36, store.dim), dtype=np.float32)
        ids, scans = self.tables.ids, self.scans
        for s in np.flatnonzero(active).tolist():
            out[s] = store.get(scans[int(self._node_scan[g[s]])], ids[int(g[s])])
        return out

    def observation(self, slot: int) -> Observation:
        """Slot ``slot``'s observation as the single environment's dict (sensors included)."""
        q = int(self._state[4][slot])
        if q < 0:
            raise VLNEvalError(f"slot {slot} is idle: no episode left in the queue")
        g, h, e, steps = (int(self._state[k][slot]) for k in (0, 1, 2, 3))
        return self._dict_observation(q, g, h, e, steps)

    def final_observation(self, episode: int) -> Observation:
        """The observation at the end of a finished episode (Gymnasium's ``final_observation``)."""
        node, h, e = self._out[:3]
        start, stop = self._span(episode)
        last = stop - 1
        steps = stop - start - 1 + (1 if self._out[5][episode] == self._k.STOPPED else 0)
        return self._dict_observation(episode, int(node[last]), int(h[last]), int(e[last]), steps)

    def _span(self, episode: int) -> tuple[int, int]:
        """Where a finished episode's executed path is in the path store."""
        start = int(self._out[3][episode])
        if start < 0:
            raise VLNEvalError(f"episode {self._ids[episode]} has not finished")
        return start, start + int(self._out[4][episode])

    def _dict_observation(self, q: int, g: int, h: int, e: int, steps: int) -> Observation:
        inp = self._inputs[q]
        local = g - int(self.tables.offsets[self._scan_index[inp.scan]])
        cands = self.world.tables(inp.scan).candidates(self._pano, local, h, e)
        return observation(inp, cands, h, e, steps, self.sensors)

    @property
    def viewpoint_ids(self) -> list[str]:
        """Viewpoint id of every global node id."""
        return self.tables.ids

    def slot_episode(self, slot: int) -> int:
        """The episode index running in ``slot`` (−1 when idle)."""
        return int(self._state[4][slot])

    # -- results -------------------------------------------------------------------------
    def finished(self) -> np.ndarray:
        """Indices of the episodes finished since the last reset, ascending."""
        return np.flatnonzero(self._out[3] >= 0) if self._out else np.zeros(0, np.int64)

    def trajectory(self, episode: int) -> list[tuple[str, float, float]]:
        """The executed trajectory of a finished episode (as ``GraphNavEnv.trajectory``)."""
        node, h, e = self._out[:3]
        start, stop = self._span(episode)
        ids = self.tables.ids
        return [
            (ids[n], heading_of(hh), elevation_of(ee))
            for n, hh, ee in zip(
                node[start:stop].tolist(),
                h[start:stop].tolist(),
                e[start:stop].tolist(),
                strict=True,
            )
        ]

    def truncated_episodes(self) -> np.ndarray:
        """Indices of the finished episodes that hit the step limit."""
        return (
            np.flatnonzero(self._out[5] == self._k.TRUNCATED)
            if self._out
            else np.zeros(0, np.int64)
        )

    def prediction(self, episode: int) -> dict[str, Any]:
        """A finished episode as an R2R prediction record."""
        return {
            self.id_field: int(self._ids[episode]) if self._int_ids else self._ids[episode],
            "trajectory": [list(s) for s in self.trajectory(episode)],
        }

    def predictions(self) -> list[dict[str, Any]]:
        """Every finished episode as R2R prediction records, in episode-table order."""
        return [self.prediction(i) for i in self.finished().tolist()]

    @property
    def episode_ids(self) -> list[str]:
        """Every episode id, in table order."""
        return list(self._ids)

    def __len__(self) -> int:
        return len(self._ids)

    # -- privileged channel and protocol --------------------------------------------------
    def privileged(self, slot: int = 0) -> Teacher:
        """Slot ``slot``'s privileged channel; needs ``privileged=True`` at construction."""
        if not self._privileged:
            raise refuse_unprivileged("goals and teacher actions are hidden")
        if slot not in self._teachers:
            self._teachers[slot] = Teacher(lambda: self._teacher_state(slot))
        return self._teachers[slot]

    def teacher_actions(self) -> np.ndarray:
        """The teacher action of every slot (0 for idle slots); privileged."""
        out = np.zeros(self.num_envs, dtype=np.int32)
        for s in range(self.num_envs):
            if self._state[4][s] >= 0:
                out[s] = self.privileged(s).action()
        return out

    def _teacher_state(self, slot: int) -> TeacherState:
        q = int(self._state[4][slot])
        if q < 0:
            raise PrivilegeError(f"slot {slot} is idle: no episode is running")
        scan = self._inputs[q].scan
        g, h, e = (int(self._state[k][slot]) for k in (0, 1, 2))
        local = g - int(self.tables.offsets[self._scan_index[scan]])
        return teacher_state(self.world, self._truth, q, scan, local, h, e, self._pano)

    def protocol(self) -> dict[str, Any]:
        """The protocol card fields this environment determines (spec/protocol.md)."""
        calls = sum(t.calls for t in self._teachers.values())
        card = privileged_card(GIVES, self._privileged, calls)
        return protocol_fields(self.action_space, self.max_steps, self.sensors, card)

    def _raise_invalid(self, slot: int, actions: Sequence[int] | np.ndarray) -> None:
        q = int(self._state[4][slot])
        g, h, e, steps = (int(self._state[k][slot]) for k in (0, 1, 2, 3))
        row = h if self._pano else 12 * e + h
        n = int(self.tables.count[g, row])
        raise invalid_action(self.action_space, actions[slot], n, episode=self._ids[q], step=steps)

    def __repr__(self) -> str:
        return (
            f"VectorGraphNavEnv({self.task} {self.split}, {len(self)} episodes, "
            f"{self.num_envs} slots, {self.action_space.name}, max_steps={self.max_steps})"
        )
