"""What an executor's worker runs: a picklable description of a run, and its chunk runner.

A :class:`Workload` holds only names and numbers, so it crosses process and machine boundaries
as it is; :meth:`Workload.load` loads its data (for ``vlneval run`` too), and
:meth:`Workload.runner` loads it once and runs chunks of global episode indices on it, with the
results of ``vlneval run`` (every episode is seeded by its index in the whole split).

Example:
    >>> runner = Workload(task="demo", agent="random").runner()
    >>> chunk = runner.run([0, 5])
    >>> [i for i, _ in chunk.records], chunk.protocol["agent"]["id"]
    ([0, 5], 'random-v1')
"""

from __future__ import annotations

import dataclasses
import inspect
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from vlneval.agents.base import describe_agent
from vlneval.agents.continuous import continuous_agent, given_id, run_card, run_continuous
from vlneval.agents.registry import agent_factory
from vlneval.agents.remote import is_remote, remote_agent_info, session_ended
from vlneval.agents.rollout import GraphRollout
from vlneval.agents.street import run_street
from vlneval.distributed.checkpoint import with_agent_args
from vlneval.distributed.merge import calls_in, with_calls
from vlneval.envs.graph.features import open_features
from vlneval.envs.graph.world import GraphWorld
from vlneval.envs.loading import load_episodes
from vlneval.envs.registration import episode_loader, make_env
from vlneval.envs.street.loading import is_street_task
from vlneval.errors import VLNEvalError
from vlneval.tasks import get_task

__all__ = ["Workload", "Loaded", "ChunkResult", "ChunkRunner", "chunks"]


@dataclass(frozen=True)
class Workload:
    """A run of ``agent`` on ``task``'s ``split``, as the ``vlneval run`` options give it.

    Attributes:
        task, split: what to run (split None: the task's default).
        agent: a registry id, ``package.module:Class`` or ``http://host:port`` (a remote agent).
        agent_args: keyword arguments of the agent's constructor (``--agent-arg``,
            ``checkpoint=``).
        data_root, episodes_file, graphs, data_version: where the data is (as for ``run``).
        path_type: NDH's ground-truth path, loaded as the scorer loads it (a privileged agent
            follows it).
        action_space, max_steps, features, batch_size, seed: the rollout's options.
        environment: a continuous environment id (``continuous-r2r-ce-v1``...) to run the
            episodes in its twin worlds (None: the task's graph or street environment).
    """

    task: str
    agent: str
    split: str | None = None
    agent_args: Mapping[str, Any] = field(default_factory=dict)
    data_root: str | Path | None = None
    episodes_file: str | None = None
    graphs: str | Path | None = None
    data_version: str | None = None
    path_type: str | None = None
    action_space: str | None = None
    max_steps: int | None = None
    features: str | None = None
    batch_size: int = 1
    seed: int = 0
    environment: str | None = None

    def agent_info(self, *, device: str | None = None) -> Any:
        """The agent's :class:`~vlneval.agents.base.AgentInfo` with its constructor arguments;
        ``device`` is passed as ``device=`` when the constructor takes one and no
        ``--agent-arg device=...`` was given."""
        kwargs = dict(self.agent_args)
        if is_remote(self.agent):
            return with_agent_args(remote_agent_info(self.agent), kwargs)
        agent_id, factory = agent_factory(self.agent)
        if device is not None and "device" not in kwargs and _takes(factory, "device"):
            kwargs["device"] = device
        return describe_agent(agent_id, factory, kwargs)  # a factory's agent made with them

    def load(self) -> Loaded:
        """The episodes and what the environment needs, loaded as ``vlneval run`` loads them
        (the loader chosen as :func:`~vlneval.envs.registration.make_env` chooses it)."""
        where = {"root": self.data_root, "episodes_file": self.episodes_file, "graphs": self.graphs}
        street = is_street_task(self.task)
        family = "continuous" if self.environment else "street" if street else "graph"
        load = episode_loader(self.task, family)
        if self.environment is not None:
            episodes, graphs = load(self.task, self.split, **where)
            env = make_env(
                self.environment,
                episodes,
                self.graphs or graphs,
                privileged=self.agent == "shortest",
                max_steps=self.max_steps,
            )
            return Loaded("continuous", env.episodes, env)
        if street:
            given = [
                f"--{k.replace('_', '-')}" for k in ("action_space", "features") if getattr(self, k)
            ]
            if given:
                raise VLNEvalError(
                    f"task {self.task} runs in the street action space (forward, turn left/right, "
                    f"stop) without features: drop {' and '.join(given)}"
                )
            version = {"data_version": self.data_version}
            episodes, graph = load(self.task, self.split, **where, **version)
            return Loaded(
                "street", episodes, graph, score_options=version if self.data_version else {}
            )
        if load is not load_episodes:  # an object task's setup
            setup = load(self.task, self.split, **where, data_version=self.data_version)
            return Loaded(
                "graph", setup.episodes, setup.graphs, sensors=list(setup.sensors),
                score_options=dict(setup.score_options), notes=list(setup.notes),
            )  # fmt: skip
        chosen = {} if self.path_type is None else {"path_type": self.path_type}
        return Loaded("graph", *load(self.task, self.split, **where, **chosen))

    def runner(self, *, device: str | None = None) -> ChunkRunner:
        """Loads everything once; the runner of chunks (see the module docstring)."""
        loaded = self.load()
        if loaded.kind == "continuous":
            return ChunkRunner(self, loaded, self.continuous_agent(loaded.graphs))
        return ChunkRunner(self, loaded, self.agent_info(device=device))

    def continuous_agent(self, env: Any) -> Any:
        """The agent of a continuous run in ``env``: a baseline by name, or a remote agent."""
        return continuous_agent(self.agent, env.action_space)


def _takes(factory: Any, name: str) -> bool:
    try:
        return name in inspect.signature(factory).parameters
    except (TypeError, ValueError):
        return False


@dataclass
class Loaded:
    """A workload's loaded data: ``kind`` ("graph", "street" or "continuous"), the episode
    table, the graphs (the street graph; the environment of a continuous run), observation
    sensors, scoring options and notes for the user."""

    kind: str
    episodes: Any
    graphs: Any
    sensors: list[Any] = field(default_factory=list)
    score_options: dict[str, Any] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)


@dataclass
class ChunkResult:
    """One chunk's records ``(global index, record)`` in the chunk's order, its protocol fields
    (privileged calls of this chunk only), truncated episodes, steps and seconds; a continuous
    run's chunk also has each episode's measurements (``extras``, the shard lines' ``extra``)
    and its protocol is the run card of the chunk."""

    records: list[tuple[int, dict[str, Any]]]
    protocol: dict[str, Any]
    truncated: int
    steps: int
    seconds: float
    extras: list[dict[str, Any]] | None = None


class ChunkRunner:
    """Runs chunks of global episode indices on one loaded environment and agent."""

    def __init__(self, workload: Workload, loaded: Loaded, agent: Any) -> None:
        self.workload, self.loaded, self.agent = workload, loaded, agent
        self._calls = 0
        if loaded.kind == "continuous":
            return
        if loaded.kind == "street":
            instance = agent.make()  # one instance for every chunk (model weights once)
            self._street_agent = dataclasses.replace(agent, factory=lambda: instance)
            return

        w, graphs = workload, loaded.graphs
        self._rollout = GraphRollout(
            agent, loaded.episodes, graphs if isinstance(graphs, GraphWorld) else GraphWorld(graphs), action_space=w.action_space,
            max_steps=w.max_steps, seed=w.seed, batch_size=w.batch_size, sensors=loaded.sensors,
            features=None if w.features is None else open_features(w.features),
        )  # fmt: skip

    def run(self, indices: Sequence[int]) -> ChunkResult:
        """Runs the episodes ``indices`` (global indices of the split)."""
        order = [int(i) for i in indices]
        w = self.workload
        if self.loaded.kind == "continuous":
            return self._share(self._run_continuous(order))
        if self.loaded.kind == "street":
            result = run_street(
                self._street_agent, self.loaded.episodes, self.loaded.graphs,
                max_steps=w.max_steps, seed=w.seed, indices=order,
            )  # fmt: skip
        else:
            result = self._rollout.run(order)
        records = list(zip(order, result.records, strict=True))
        return self._share(
            ChunkResult(
                records, dict(result.protocol), result.truncated, result.steps, result.seconds
            )  # fmt: skip
        )

    def _run_continuous(self, order: list[int]) -> ChunkResult:
        env, w = self.loaded.graphs, self.workload
        records: list[tuple[int, dict[str, Any]]] = []
        extras: list[dict[str, Any]] = []

        def keep(i: int, predictions: dict[str, Any], measured: dict[str, Any]) -> None:
            records.append((i, predictions))
            extras.append(measured)

        started = time.perf_counter()
        with session_ended(self.agent):
            run = run_continuous(
                env, self.agent, indices=order, on_record=keep, seed=w.seed,
                agent_id=given_id(self.agent, w.agent),
            )  # fmt: skip
        split = w.split or get_task(w.task).default_split
        card = run_card(env, str(w.environment), self.agent, run, split=split, seed=w.seed)
        truncated = sum(1 for e in run.episodes if not e["stopped"])
        return ChunkResult(records, card, truncated, run.steps, time.perf_counter() - started,
                           extras)  # fmt: skip

    def _share(self, result: ChunkResult) -> ChunkResult:
        """The chunk's result with this chunk's privileged calls (the environment counts over
        its life)."""
        total = calls_in(result.protocol)
        if total is not None:
            result.protocol["privileged"] = with_calls(
                result.protocol["privileged"], total - self._calls
            )
            self._calls = total
        return result


def chunks(indices: Sequence[int], size: int) -> list[list[int]]:
    """``indices`` cut into chunks of ``size`` (the last may be shorter), in order.

    Example:
        >>> chunks([0, 1, 2, 3, 4], 2)
        [[0, 1], [2, 3], [4]]
    """
    if isinstance(size, bool) or not isinstance(size, int) or size < 1:
        raise VLNEvalError(f"--chunk must be a positive number of episodes, got {size!r}")
    order = [int(i) for i in indices]
    return [order[k : k + size] for k in range(0, len(order), size)]
