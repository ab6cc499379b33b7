"""Running an agent over a Touchdown split in the street environment (``vlneval run``).

Each route gets its own generator (:func:`~vlneval.agents.rollout.episode_rng`), so a run's
predictions depend on the seed alone. Records are Touchdown navigation predictions
``{"route_id": int, "trajectory": [panoid, ...]}`` plus any ``finish()`` fields.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from vlneval.agents.base import AgentInfo
from vlneval.agents.progress import episode_progress
from vlneval.agents.rollout import RunResult, episode_rng
from vlneval.envs.street.env import StreetNavEnv
from vlneval.errors import VLNEvalError
from vlneval.graph.street import StreetGraph
from vlneval.tasks.common.episodes import EpisodeTable

__all__ = ["run_street"]


def _finish(agent: Any, obs: dict[str, Any], info: AgentInfo, id_field: str) -> dict[str, Any]:
    hook = getattr(agent, "finish", None)
    extra = hook(obs) if hook is not None else None
    if extra is None:
        return {}
    if not isinstance(extra, Mapping):
        raise VLNEvalError(f"agent {info.id}: finish() must return a dict or None, got {extra!r}")
    clash = {id_field, "trajectory"} & set(extra)
    if clash:
        raise VLNEvalError(f"agent {info.id}: finish() may not set {', '.join(sorted(clash))}")
    return dict(extra)


def _act(agent: Any, obs: dict[str, Any], info: AgentInfo) -> int:
    a = agent.act(obs)
    if isinstance(a, (bool, np.bool_)) or not isinstance(a, (int, np.integer)):
        raise VLNEvalError(f"agent {info.id}: act() must return an integer action, got {a!r}")
    return int(a)


def run_street(
    agent: AgentInfo,
    episodes: EpisodeTable,
    graph: StreetGraph,
    *,
    max_steps: int | None = None,
    seed: int = 0,
    limit: int | None = None,
    progress: bool = False,
    indices: Sequence[int] | None = None,
    on_record: Callable[[int, dict[str, Any]], Any] | None = None,
) -> RunResult:
    """Runs ``agent`` on every route of ``episodes`` (the first ``limit`` when given).

    ``indices`` and ``on_record`` are those of :func:`~vlneval.agents.rollout.run_agent`.

    Example:
        >>> import numpy as np
        >>> from vlneval.agents.registry import get_agent
        >>> from vlneval.graph.street import parse_street_graph
        >>> g = parse_street_graph([f"{p},0,40,-73" for p in "abc"],
        ...     ["a,90,b", "a,270,c", "b,270,a", "b,90,c", "c,90,a", "c,270,b"])
        >>> t = EpisodeTable("touchdown", "dev", "x", "route_id", ["7"], ["nyc"],
        ...                  [("a", "b", "c")], [("c",)], np.array([0.0]), ["go east"])
        >>> run_street(get_agent("shortest"), t, g).records
        [{'route_id': 7, 'trajectory': ['a', 'b', 'c']}]
    """
    if limit is not None and (isinstance(limit, bool) or limit < 1):
        raise VLNEvalError(f"limit must be a positive number of episodes, got {limit!r}")
    order = list(range(len(episodes)))[:limit] if indices is None else [int(i) for i in indices]
    if not order:
        raise VLNEvalError(f"{episodes.source}: no episodes to run")
    env = StreetNavEnv(episodes, graph, max_steps=max_steps, privileged=agent.privileged)
    instance = agent.factory()
    records: list[dict[str, Any]] = []
    steps = truncated = 0
    started = time.perf_counter()
    with episode_progress(len(order), enabled=progress) as advance:
        for q in order:
            obs, _ = env.reset(options={"episode": q})
            kwargs: dict[str, Any] = {"rng": episode_rng(seed, q)}
            if agent.privileged:
                kwargs["teacher"] = env.privileged()
            instance.reset(obs, **kwargs)
            done = False
            while not done:
                obs, _, terminated, cut, _ = env.step(_act(instance, obs, agent))
                steps += 1
                truncated += int(cut)
                done = terminated or cut
            record = env.prediction()
            record.update(_finish(instance, obs, agent, env.id_field))
            records.append(record)
            if on_record is not None:
                on_record(q, record)
            advance(1)
    protocol = {
        **env.protocol(),
        "seeds": [seed],
        "n_runs": 1,
        "agent": {"id": agent.id, "entry_point": agent.entry_point, "privileged": agent.privileged},
        **agent.protocol,
    }
    return RunResult(
        episodes.task, episodes.split, agent.id, records, protocol, len(order), len(episodes),
        truncated=truncated, steps=steps, seconds=time.perf_counter() - started,
    )  # fmt: skip
