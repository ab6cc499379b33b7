"""Running an agent over a split: predictions in the R2R format and the run's protocol fields.

Each episode gets its own generator, ``SeedSequence(seed, spawn_key=(i,))`` for episode index
``i`` of the split, so a run's predictions depend on the seed alone: not on the batch size, the
order episodes are scheduled in, or ``limit``.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from vlneval.agents.base import AgentInfo, agent_error, call_agent
from vlneval.agents.progress import episode_progress
from vlneval.envs.graph.episodes import InputsFn
from vlneval.envs.graph.features import FeatureStore
from vlneval.envs.graph.observation import Sensor
from vlneval.envs.graph.vector import VectorGraphNavEnv
from vlneval.envs.graph.world import GraphWorld
from vlneval.envs.spaces import SPACES
from vlneval.errors import VLNEvalError, check_seed
from vlneval.graph.store import GraphStore
from vlneval.io import to_json_bytes
from vlneval.tasks.common.episodes import EpisodeTable
from vlneval.tasks.common.protocol import with_declared

__all__ = [
    "RunResult",
    "run_agent",
    "episode_rng",
    "GraphRollout",
    "run_order",
    "run_protocol",
    "as_action",
    "finish_fields",
]
_I32 = np.iinfo(np.int32)


@dataclass
class RunResult:
    """One run of an agent over (part of) a split.

    Attributes:
        task, split, agent: what ran.
        records: prediction records (``{id_field: id, "trajectory": [[vp, heading, elevation],
            ...], ...finish() fields}``) in the split's episode order.
        protocol: the protocol-card fields the run observed (pass as ``run=`` when scoring).
        n_episodes, n_expected: episodes run, and in the split.
        truncated: episodes that hit the step limit.
        steps: environment steps taken; seconds: wall time.
    """

    task: str
    split: str
    agent: str
    records: list[dict[str, Any]]
    protocol: dict[str, Any]
    n_episodes: int
    n_expected: int
    truncated: int = 0
    steps: int = 0
    seconds: float = 0.0
    warnings: list[str] = field(default_factory=list)

    @property
    def partial(self) -> bool:
        """Whether only part of the split ran."""
        return self.n_episodes < self.n_expected


def episode_rng(seed: int, episode: int) -> np.random.Generator:
    """The generator of episode index ``episode`` in a run seeded with ``seed``.

    The one seeding rule of every rollout (graph, street and continuous): the episode's index
    in its split is the spawn key, so its generator depends on the seed and the episode alone.

    Raises:
        VLNEvalError: ``seed`` is not an integer >= 0 (what numpy's seeding takes).

    Example:
        >>> int(episode_rng(0, 5).integers(100)) == int(episode_rng(0, 5).integers(100))
        True
    """
    check_seed(seed)
    return np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(episode,)))


class _Slots:
    """One agent instance per slot, and what each episode's ``finish`` returned."""

    def __init__(self, info: AgentInfo, venv: VectorGraphNavEnv, seed: int) -> None:
        self.info, self.venv, self.seed = info, venv, seed
        self.ids = venv.episode_ids  # one copy: the property builds a list on each read
        self.agents = [info.make() for _ in range(venv.num_envs)]
        self.obs: list[dict[str, Any] | None] = [None] * venv.num_envs
        self.extras: dict[int, Mapping[str, Any]] = {}

    def start(self, slot: int) -> None:
        q = self.venv.slot_episode(slot)
        if q < 0:
            self.obs[slot] = None
            return
        obs = self.venv.observation(slot)
        kwargs: dict[str, Any] = {"rng": episode_rng(self.seed, q)}
        if self.info.privileged:
            kwargs["teacher"] = self.venv.privileged(slot)
        call_agent(self.info.id, "reset()", self.agents[slot].reset, obs, self.ids[q], **kwargs)
        self.obs[slot] = obs

    def act(self) -> np.ndarray | list[int]:
        actions = np.zeros(self.venv.num_envs, dtype=np.int32)
        for s, obs in enumerate(self.obs):
            if obs is not None:
                try:  # the episode's id looked up only on failure: the step loop stays cheap
                    answer = self.agents[s].act(obs)
                except Exception as exc:
                    eid = self.ids[self.venv.slot_episode(s)]
                    raise agent_error(
                        self.info.id, "act()", exc, episode=eid, step=obs["step"]
                    ) from exc
                a = as_action(answer, self.info.id)
                if not _I32.min <= a <= _I32.max:  # no int32 slot: step() reports it like 99
                    wide: list[int] = actions.tolist()
                    wide[s] = a
                    return wide
                actions[s] = a
        return actions

    def finish(self, slot: int, episode: int) -> None:
        if hasattr(self.agents[slot], "finish"):
            obs = self.venv.final_observation(episode)
            extra = finish_fields(
                self.agents[slot], obs, self.info.id, self.venv.id_field,
                episode=self.ids[episode],
            )  # fmt: skip
            if extra:
                self.extras[episode] = extra


def as_action(value: Any, agent: str) -> int:
    """An agent's ``act()`` answer as a graph or street action (an integer)."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise VLNEvalError(f"agent {agent}: act() must return an integer action, got {value!r}")
    return int(value)


def finish_fields(
    agent: Any, obs: dict[str, Any], agent_id: str, id_field: str, *, episode: str | None = None
) -> dict[str, Any]:
    """The fields the agent's ``finish(obs)`` (if it has one) adds to the record of ``episode``:
    a mapping of JSON values, without the id field or the trajectory."""
    hook = getattr(agent, "finish", None)
    extra = call_agent(agent_id, "finish()", hook, obs, episode) if hook is not None else None
    if extra is None:
        return {}
    if not isinstance(extra, Mapping):
        raise VLNEvalError(f"agent {agent_id}: finish() must return a dict or None, got {extra!r}")
    clash = {id_field, "trajectory"} & set(extra)
    if clash:
        raise VLNEvalError(f"agent {agent_id}: finish() may not set {', '.join(sorted(clash))}")
    for key, value in extra.items():
        try:
            to_json_bytes(value, indent=False)
        except (TypeError, ValueError, OverflowError) as exc:
            at = "" if episode is None else f" at episode {episode}"
            raise VLNEvalError(
                f"agent {agent_id}: finish(){at} returned {key!r} = {value!r}, which is not a "
                f"JSON value ({exc}): return numbers, strings, lists and dicts"
            ) from exc
    return dict(extra)


def run_order(
    episodes: EpisodeTable, limit: int | None, indices: Sequence[int] | None
) -> list[int]:
    """The episodes a run takes: ``indices``, else the first ``limit`` (default: all)."""
    if limit is not None and (isinstance(limit, bool) or limit < 1):
        raise VLNEvalError(f"limit must be a positive number of episodes, got {limit!r}")
    order = list(range(len(episodes)))[:limit] if indices is None else _checked(indices, episodes)
    if not order:
        raise VLNEvalError(f"{episodes.source}: no episodes to run")
    return order


def run_protocol(env_card: Mapping[str, Any], seed: int, agent: AgentInfo) -> dict[str, Any]:
    """A run's protocol fields: the environment's, the seed and the agent's id, then the fields
    the agent declares where the run measured none (:func:`with_declared`)."""
    measured = {
        **env_card,
        "seeds": [seed],
        "n_runs": 1,
        "agent": {"id": agent.id, "entry_point": agent.entry_point, "privileged": agent.privileged},
    }
    return with_declared(measured, agent.protocol)


def run_agent(
    agent: AgentInfo,
    episodes: EpisodeTable,
    graphs: GraphWorld | GraphStore | str | Path,
    *,
    action_space: str | None = None,
    max_steps: int | None = None,
    features: FeatureStore | str | Path | None = None,
    seed: int = 0,
    batch_size: int = 1,
    limit: int | None = None,
    progress: bool = False,
    sensors: Sequence[Sensor] = (),
    inputs: InputsFn | None = None,
    indices: Sequence[int] | None = None,
    on_record: Callable[[int, dict[str, Any]], Any] | None = None,
) -> RunResult:
    """Runs ``agent`` on every episode of ``episodes`` (the first ``limit`` when given).

    ``sensors`` and ``inputs`` extend the observations (e.g. REVERIE objects, a dialog history);
    the other arguments are those of :class:`~vlneval.envs.VectorGraphNavEnv`. ``indices`` runs
    only those episodes of the split (a shard: seeds still come from each episode's index in the
    whole split), and ``on_record(index, record)`` receives every record as its episode ends.

    Example:
        >>> from vlneval.agents.registry import get_agent
        >>> from vlneval.envs.loading import load_episodes
        >>> episodes, graphs = load_episodes("demo")
        >>> result = run_agent(get_agent("stop"), episodes, graphs, limit=2)
        >>> [r["trajectory"] == [[r["trajectory"][0][0], *r["trajectory"][0][1:]]] for r in result.records]
        [True, True]
        >>> result.protocol["privileged"], result.partial
        ('none', True)
    """
    check_seed(seed)
    order = run_order(episodes, limit, indices)
    rollout = GraphRollout(
        agent, episodes, graphs, action_space=action_space, max_steps=max_steps,
        features=features, seed=seed, batch_size=min(batch_size, len(order)), sensors=sensors,
        inputs=inputs,
    )  # fmt: skip
    return rollout.run(order, progress=progress, on_record=on_record)


class GraphRollout:
    """An agent and its graph environment, built once and run on any episodes of the split.

    :func:`run_agent` builds one for a single run; an executor that feeds a long-lived worker
    chunks of episodes (the Ray executor's actors) keeps one, so the environment's tables and
    the agent instances (model weights) are made once per worker, not once per chunk. Results
    are those of :func:`run_agent` on the same episodes: seeds come from the global index.

    Example:
        >>> from vlneval.agents.registry import get_agent
        >>> from vlneval.envs.loading import load_episodes
        >>> episodes, graphs = load_episodes("demo")
        >>> rollout = GraphRollout(get_agent("random"), episodes, graphs)
        >>> a, b = rollout.run([3, 4]), rollout.run([4])
        >>> a.records[1] == b.records[0] == run_agent(get_agent("random"), episodes, graphs,
        ...                                           indices=[4]).records[0]
        True
    """

    def __init__(
        self,
        agent: AgentInfo,
        episodes: EpisodeTable,
        graphs: GraphWorld | GraphStore | str | Path,
        *,
        action_space: str | None = None,
        max_steps: int | None = None,
        features: FeatureStore | str | Path | None = None,
        seed: int = 0,
        batch_size: int = 1,
        sensors: Sequence[Sensor] = (),
        inputs: InputsFn | None = None,
    ) -> None:
        if isinstance(batch_size, bool) or batch_size < 1:
            raise VLNEvalError(f"batch size must be a positive integer, got {batch_size!r}")
        space = agent.space(action_space)
        if space not in SPACES:
            raise VLNEvalError(
                f"agent {agent.id} acts in the {space} action space of the continuous "
                "environments, not on a navigation graph"
            )
        self.agent, self.episodes, self.seed = agent, episodes, seed
        self.venv = VectorGraphNavEnv(
            episodes,
            graphs,
            num_envs=batch_size,
            action_space=space,
            max_steps=max_steps,
            features=features,
            sensors=sensors,
            inputs=inputs,
            privileged=agent.privileged,
            seed=seed,
            batch_sensors=False,  # each slot's observation is asked for below
        )
        self.slots = _Slots(agent, self.venv, seed)

    def run(
        self,
        indices: Sequence[int],
        *,
        progress: bool = False,
        on_record: Callable[[int, dict[str, Any]], Any] | None = None,
    ) -> RunResult:
        """Runs the episodes of global indices ``indices``; ``on_record`` as in
        :func:`run_agent`. The protocol's privileged-call count is the environment's total."""
        order = run_order(self.episodes, None, indices)
        venv, slots, agent = self.venv, self.slots, self.agent
        slots.extras.clear()
        started = time.perf_counter()
        steps = _loop(venv, slots, order, progress, on_record)
        records = [_record(venv, slots, q) for q in order]
        return RunResult(
            self.episodes.task,
            self.episodes.split,
            agent.id,
            records,
            run_protocol(venv.protocol(), self.seed, agent),
            len(order),
            len(self.episodes),
            truncated=len(venv.truncated_episodes()),
            steps=steps,
            seconds=time.perf_counter() - started,
        )


def _checked(indices: Sequence[int], episodes: EpisodeTable) -> list[int]:
    order = [int(i) for i in indices]
    if any(not 0 <= i < len(episodes) for i in order) or len(set(order)) != len(order):
        raise VLNEvalError(
            f"{episodes.source}: indices must be distinct episode indices in 0..{len(episodes) - 1}"
        )
    return order


def _record(venv: VectorGraphNavEnv, slots: _Slots, q: int) -> dict[str, Any]:
    rec = venv.prediction(q)
    rec.update(slots.extras.get(q, {}))
    return rec


def _loop(
    venv: VectorGraphNavEnv,
    slots: _Slots,
    order: list[int],
    progress: bool,
    on_record: Callable[[int, dict[str, Any]], Any] | None = None,
) -> int:
    obs, info = venv.reset(options={"episodes": order})
    for s in range(venv.num_envs):
        slots.start(s)
    steps = 0
    with episode_progress(len(order), enabled=progress) as advance:
        while obs.active.any():
            before = info["episode"].copy()
            obs, _, terminated, truncated, info = venv.step(slots.act())
            steps += int((before >= 0).sum())
            done = (terminated | truncated).tolist()
            for s, running in enumerate((before >= 0).tolist()):
                if done[s]:
                    slots.finish(s, int(before[s]))
                    if on_record is not None:
                        on_record(int(before[s]), _record(venv, slots, int(before[s])))
                    slots.start(s)
                    advance(1)
                elif running:
                    slots.obs[s] = venv.observation(s)
    return steps
