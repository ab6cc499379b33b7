"""Agents: baselines, the agent protocol, the registry, a checker and the runner.

See :mod:`vlneval.agents.base` for the protocol your own agent implements. Everything here is
imported on first use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from vlneval._lazy import lazy_attributes

__all__ = [
    "Agent",
    "AgentInfo",
    "AGENTS",
    "get_agent",
    "register_agent",
    "check_agent",
    "run_agent",
    "RunResult",
    "StopAgent",
    "RandomAgent",
    "RandomWalkAgent",
    "ShortestAgent",
]

if TYPE_CHECKING:
    from vlneval.agents.base import Agent, AgentInfo
    from vlneval.agents.baselines import RandomAgent, RandomWalkAgent, ShortestAgent, StopAgent
    from vlneval.agents.checker import check_agent
    from vlneval.agents.registry import AGENTS, get_agent, register_agent
    from vlneval.agents.rollout import RunResult, run_agent

__getattr__ = lazy_attributes(
    __name__,
    {
        "Agent": "vlneval.agents.base",
        "AgentInfo": "vlneval.agents.base",
        "AGENTS": "vlneval.agents.registry",
        "get_agent": "vlneval.agents.registry",
        "register_agent": "vlneval.agents.registry",
        "check_agent": "vlneval.agents.checker",
        "run_agent": "vlneval.agents.rollout",
        "RunResult": "vlneval.agents.rollout",
        "StopAgent": "vlneval.agents.baselines",
        "RandomAgent": "vlneval.agents.baselines",
        "RandomWalkAgent": "vlneval.agents.baselines",
        "ShortestAgent": "vlneval.agents.baselines",
    },
)
