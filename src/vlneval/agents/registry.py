"""The agent registry: versioned ids of every baseline agent, and user agents by import path.

One :class:`~vlneval.registry.Registry` holds the agents of every environment family: the
graph baselines (``stop``, ``random``, ``random-walk``, ``shortest``) and the continuous ones
(``continuous-stop``, ``continuous-random``, ``continuous-shortest``), each imported on first
use. An agent's ``action_spaces`` say which family it runs in.
"""

from __future__ import annotations

from typing import Any

from vlneval.agents.base import AgentInfo, describe_agent
from vlneval.registry import Registry, load_entry_point

__all__ = ["AGENTS", "register_agent", "get_agent"]

AGENTS: Registry[Any] = Registry("agent", versioned=True)


def register_agent(agent_id: str, entry_point: Any, *, description: str = "") -> None:
    """Registers an agent class (or ``module:Class``) under ``name-vN``."""
    AGENTS.register(agent_id, entry_point, description=description)


def get_agent(spec: str) -> AgentInfo:
    """An agent by registry id (``random``, ``random-v1``) or import path (``pkg.mod:Class``).

    Example:
        >>> info = get_agent("shortest")
        >>> info.id, info.privileged, info.action_spaces
        ('shortest-v1', True, ('panoramic', 'egocentric'))
        >>> get_agent("continuous-random").action_spaces[0]
        'r2r-ce'
    """
    if ":" in spec:
        return describe_agent(spec, load_entry_point(spec))
    entry = AGENTS.spec(spec)
    return describe_agent(entry.id, entry.load())


for _id, _target, _what in (
    ("stop-v1", "baselines:StopAgent", "never moves (SR of staying put)"),
    (
        "random-v1",
        "baselines:RandomAgent",
        "the R2R paper's random agent (egocentric: random turn, then 5 steps forward)",
    ),
    (
        "random-walk-v1",
        "baselines:RandomWalkAgent",
        "the REVERIE random baseline (panoramic: random first candidate, then ahead)",
    ),
    (
        "shortest-v1",
        "baselines:ShortestAgent",
        "follows the shortest path to the goal (privileged oracle)",
    ),
    ("continuous-stop-v1", "continuous:ContinuousStopAgent", "continuous: STOP at once"),
    (
        "continuous-random-v1",
        "continuous:ContinuousRandomAgent",
        "continuous: VLN-CE's random agent (and random commands for velocities and waypoints)",
    ),
    (
        "continuous-shortest-v1",
        "continuous:ContinuousShortestAgent",
        "continuous: follows the geodesic teacher (privileged oracle)",
    ),
):
    register_agent(_id, f"vlneval.agents.{_target}", description=_what)
