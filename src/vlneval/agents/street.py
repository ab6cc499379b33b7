"""Running an agent over a Touchdown split in the street environment (``vlneval run``).

Each route gets its own generator (:func:`~vlneval.agents.rollout.episode_rng`), so a run's
predictions depend on the seed alone. Records are Touchdown navigation predictions
``{"route_id": int, "trajectory": [panoid, ...]}`` plus any ``finish()`` fields.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any

from vlneval.agents.base import AgentInfo, call_agent
from vlneval.agents.progress import episode_progress
from vlneval.agents.rollout import (
    RunResult,
    as_action,
    episode_rng,
    finish_fields,
    run_order,
    run_protocol,
)
from vlneval.envs.street.env import StreetNavEnv
from vlneval.graph.street import StreetGraph
from vlneval.tasks.common.episodes import EpisodeTable

__all__ = ["run_street"]


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
    order = run_order(episodes, limit, indices)
    env = StreetNavEnv(episodes, graph, max_steps=max_steps, privileged=agent.privileged)
    instance = agent.make()
    records: list[dict[str, Any]] = []
    steps = truncated = 0
    started = time.perf_counter()
    with episode_progress(len(order), enabled=progress) as advance:
        for q in order:
            obs, _ = env.reset(options={"episode": q})
            kwargs: dict[str, Any] = {"rng": episode_rng(seed, q)}
            if agent.privileged:
                kwargs["teacher"] = env.privileged()
            eid = episodes.ids[q]
            call_agent(agent.id, "reset()", instance.reset, obs, eid, **kwargs)
            done = False
            while not done:
                answer = call_agent(agent.id, "act()", instance.act, obs, eid)
                obs, _, terminated, cut, _ = env.step(as_action(answer, agent.id))
                steps += 1
                truncated += int(cut)
                done = terminated or cut
            record = env.prediction()
            record.update(finish_fields(instance, obs, agent.id, env.id_field, episode=eid))
            records.append(record)
            if on_record is not None:
                on_record(q, record)
            advance(1)
    protocol = run_protocol(env.protocol(), seed, agent)
    return RunResult(
        episodes.task, episodes.split, agent.id, records, protocol, len(order), len(episodes),
        truncated=truncated, steps=steps, seconds=time.perf_counter() - started,
    )  # fmt: skip
