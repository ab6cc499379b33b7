"""What an executor's worker runs: a picklable description of a run, and its chunk runner.

A :class:`Workload` holds only names and numbers (task, split, files, agent spec and its
arguments, run options), so it crosses process and machine boundaries as it is; a worker calls
:meth:`Workload.runner` once, which loads the episodes, the graphs, any features or object boxes
and the agent (model weights included), then runs any number of chunks of global episode indices
on them. Results are those of ``vlneval run`` on the same episodes: every episode is seeded by
its index in the whole split (:func:`~vlneval.agents.rollout.episode_rng`).

Example:
    >>> runner = Workload(task="demo", agent="random").runner()
    >>> chunk = runner.run([0, 5])
    >>> [i for i, _ in chunk.records], chunk.protocol["agent"]["id"]
    ([0, 5], 'random-v1')
"""

from __future__ import annotations

import dataclasses
import inspect
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from vlneval.agents.remote import session_ended
from vlneval.errors import VLNEvalError

__all__ = ["Workload", "Loaded", "ChunkResult", "ChunkRunner", "sum_calls", "chunks"]

_CALLS = re.compile(r"\((\d+) calls\)")


@dataclass(frozen=True)
class Workload:
    """A run of ``agent`` on ``task``'s ``split``, as the ``vlneval run`` options give it.

    Attributes:
        task, split: what to run (split None: the task's default).
        agent: a registry id, ``package.module:Class`` or ``http://host:port`` (a remote agent).
        agent_args: keyword arguments of the agent's constructor (``--agent-arg``,
            ``checkpoint=``).
        data_root, episodes_file, graphs, data_version: where the data is (as for ``run``).
        action_space, max_steps, features, batch_size, seed: the rollout's options.
        environment: a continuous environment id (``continuous-r2r-ce-v1``...) to run the
            episodes in its twin worlds (None: the task's graph or street environment).
    """

    task: str
    agent: str
    split: str | None = None
    agent_args: Mapping[str, Any] = field(default_factory=dict)
    data_root: str | None = None
    episodes_file: str | None = None
    graphs: str | None = None
    data_version: str | None = None
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
        from vlneval.agents.remote import resolve_agent
        from vlneval.distributed.checkpoint import with_agent_args

        info = resolve_agent(self.agent)
        kwargs = dict(self.agent_args)
        if device is not None and "device" not in kwargs and _takes(info.factory, "device"):
            kwargs["device"] = device
        return with_agent_args(info, kwargs)

    def load(self) -> Loaded:
        """The episodes and what the environment needs, loaded as ``vlneval run`` loads them."""
        from vlneval.envs.street.loading import is_street_task, load_street_episodes

        if self.environment is not None:
            return _continuous(self)
        if is_street_task(self.task):
            if self.action_space is not None or self.features is not None:
                raise VLNEvalError(
                    f"task {self.task} runs in the street action space (forward, turn left/right, "
                    "stop) without features: drop --action-space and --features"
                )
            episodes, graph = load_street_episodes(
                self.task, self.split, root=self.data_root, episodes_file=self.episodes_file,
                graphs=self.graphs, data_version=self.data_version,
            )  # fmt: skip
            options = {"data_version": self.data_version} if self.data_version else {}
            return Loaded("street", episodes, graph, score_options=options)
        setup = _object_setup(self)
        if setup is not None:
            return Loaded(
                "graph", setup.episodes, setup.graphs, sensors=list(setup.sensors),
                score_options=dict(setup.score_options), notes=list(setup.notes),
            )  # fmt: skip
        from vlneval.envs.loading import load_episodes

        episodes, graphs = load_episodes(
            self.task, self.split, root=self.data_root, episodes_file=self.episodes_file,
            graphs=self.graphs,
        )  # fmt: skip
        return Loaded("graph", episodes, graphs)

    def runner(self, *, device: str | None = None) -> ChunkRunner:
        """Loads everything once; the runner of chunks (see the module docstring)."""
        loaded = self.load()
        if loaded.kind == "continuous":
            return ChunkRunner(self, loaded, self.continuous_agent(loaded.graphs))
        return ChunkRunner(self, loaded, self.agent_info(device=device))

    def continuous_agent(self, env: Any) -> Any:
        """The agent of a continuous run in ``env``: a baseline by name, or a remote agent."""
        from vlneval.agents.remote import continuous_agent

        return continuous_agent(self.agent, env.action_space)


def _continuous(w: Workload) -> Loaded:
    """The episodes of a continuous run, and the environment built on them (``graphs``)."""
    from vlneval.envs.loading import load_episodes
    from vlneval.envs.registration import make_env

    episodes, graphs = load_episodes(
        w.task, w.split, root=w.data_root, episodes_file=w.episodes_file, graphs=w.graphs,
    )  # fmt: skip
    env = make_env(
        str(w.environment), episodes, w.graphs or graphs, privileged=w.agent == "shortest",
        max_steps=w.max_steps,
    )  # fmt: skip
    return Loaded("continuous", env.episodes, env)


def _takes(factory: Any, name: str) -> bool:
    try:
        return name in inspect.signature(factory).parameters
    except (TypeError, ValueError):
        return False


def _object_setup(w: Workload) -> Any:
    import importlib.util

    if importlib.util.find_spec("vlneval.envs.graph.objects") is None:
        return None
    from vlneval.envs.graph.objects import object_task_setup

    return object_task_setup(
        w.task, w.split, root=w.data_root, episodes_file=w.episodes_file, graphs=w.graphs,
        data_version=w.data_version,
    )  # fmt: skip


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
            instance = agent.factory()  # one instance for every chunk (model weights once)
            self._street_agent = dataclasses.replace(agent, factory=lambda: instance)
            return
        from vlneval.agents.rollout import GraphRollout
        from vlneval.envs.graph.features import open_features
        from vlneval.envs.graph.world import GraphWorld

        w, graphs = workload, loaded.graphs
        self._rollout = GraphRollout(
            agent, loaded.episodes, graphs if isinstance(graphs, GraphWorld) else GraphWorld(graphs), action_space=w.action_space,
            max_steps=w.max_steps, seed=w.seed, batch_size=w.batch_size, sensors=loaded.sensors,
            features=None if w.features is None else open_features(w.features),
        )  # fmt: skip

    def run(self, indices: Sequence[int]) -> ChunkResult:
        """Runs the episodes ``indices`` (global indices of the split)."""
        from vlneval.agents.street import run_street

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
        import time

        from vlneval.agents.continuous import run_card, run_continuous
        from vlneval.tasks import get_task

        env, w = self.loaded.graphs, self.workload
        records: list[tuple[int, dict[str, Any]]] = []
        extras: list[dict[str, Any]] = []

        def keep(i: int, predictions: dict[str, Any], measured: dict[str, Any]) -> None:
            records.append((i, predictions))
            extras.append(measured)

        started = time.perf_counter()
        with session_ended(self.agent):
            run = run_continuous(env, self.agent, indices=order, on_record=keep, seed=w.seed)
        split = w.split or get_task(w.task).default_split
        card = run_card(env, str(w.environment), self.agent, run, split=split, seed=w.seed)
        truncated = sum(1 for e in run.episodes if not e["stopped"])
        return ChunkResult(records, card, truncated, run.steps, time.perf_counter() - started,
                           extras)  # fmt: skip

    def _share(self, result: ChunkResult) -> ChunkResult:
        """The chunk's result with this chunk's privileged calls (the environment counts over
        its life)."""
        total = _calls_in(result.protocol)
        if total is not None:
            result.protocol["privileged"] = _CALLS.sub(
                f"({total - self._calls} calls)", result.protocol["privileged"]
            )
            self._calls = total
        return result


def _calls_in(protocol: Mapping[str, Any]) -> int | None:
    m = _CALLS.search(str(protocol.get("privileged") or ""))
    return None if m is None else int(m.group(1))


def sum_calls(protocols: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The protocol of a run made of chunks: the first chunk's, with the privileged calls of
    every chunk added up.

    Example:
        >>> p = {"privileged": "goals through env.privileged(), requested at construction (3 calls)"}
        >>> sum_calls([p, p])["privileged"][-9:]
        '(6 calls)'
    """
    if not protocols:
        raise VLNEvalError("no chunk ran")
    out = dict(protocols[0])
    counts = [_calls_in(p) for p in protocols]
    if all(c is not None for c in counts):
        out["privileged"] = _CALLS.sub(f"({sum(c or 0 for c in counts)} calls)", out["privileged"])
    return out


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
