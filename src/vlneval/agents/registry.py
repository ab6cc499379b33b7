"""The agent registry: versioned ids of the baseline agents, and user agents by import path."""

from __future__ import annotations

from typing import Any

from vlneval.agents.base import AgentInfo, describe_agent
from vlneval.envs.registration import Registry, load_entry_point

__all__ = ["AGENTS", "register_agent", "get_agent"]

AGENTS: Registry[Any] = Registry("agent")


def register_agent(agent_id: str, entry_point: Any, *, description: str = "") -> None:
    """Registers an agent class (or ``module:Class``) under ``name-vN``."""
    AGENTS.register(agent_id, entry_point, description=description)


def get_agent(spec: str) -> AgentInfo:
    """An agent by registry id (``random``, ``random-v1``) or import path (``pkg.mod:Class``).

    Example:
        >>> info = get_agent("shortest")
        >>> info.id, info.privileged, info.action_spaces
        ('shortest-v1', True, ('panoramic', 'egocentric'))
    """
    if ":" in spec:
        return describe_agent(spec, load_entry_point(spec))
    entry = AGENTS.spec(spec)
    return describe_agent(entry.id, entry.load())


register_agent(
    "stop-v1", "vlneval.agents.baselines:StopAgent", description="never moves (SR of staying put)"
)
register_agent(
    "random-v1",
    "vlneval.agents.baselines:RandomAgent",
    description="the R2R paper's random agent (egocentric: random turn, then 5 steps forward)",
)
register_agent(
    "random-walk-v1",
    "vlneval.agents.baselines:RandomWalkAgent",
    description="the REVERIE random baseline (panoramic: random first candidate, then ahead)",
)
register_agent(
    "shortest-v1",
    "vlneval.agents.baselines:ShortestAgent",
    description="follows the shortest path to the goal (privileged oracle)",
)
