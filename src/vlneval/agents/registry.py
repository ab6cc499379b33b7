"""The agent registry: versioned ids of every baseline agent, and user agents by import path.

One registry holds the agents of every environment family, each imported on first use; an
agent's ``action_spaces`` say which family it runs in.
"""

from __future__ import annotations

import importlib
import os
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from vlneval.agents.base import AgentInfo, describe_agent
from vlneval.registry import Registry, load_entry_point

__all__ = ["AGENTS", "register_agent", "get_agent", "load_user_agent"]

AGENTS: Registry[Any] = Registry("agent", versioned=True)


def register_agent(agent_id: str, entry_point: Any, *, description: str = "") -> None:
    """Registers an agent class (or ``module:Class``) under ``name-vN``."""
    AGENTS.register(agent_id, entry_point, description=description)


def get_agent(spec: str, kwargs: Mapping[str, Any] | None = None) -> AgentInfo:
    """An agent by registry id (``random``, ``random-v1``) or import path (``pkg.mod:Class``),
    described as made with the constructor arguments ``kwargs`` (``--agent-arg``).

    An import path is found as ``python -m`` finds modules: in the working directory too (a
    ``mypkg/agents.py`` there needs no install and no ``PYTHONPATH``), see :func:`load_user_agent`.

    Example:
        >>> info = get_agent("shortest")
        >>> info.id, info.privileged, info.action_spaces
        ('shortest-v1', True, ('panoramic', 'egocentric'))
        >>> get_agent("continuous-random").action_spaces[0]
        'r2r-ce'
    """
    return describe_agent(*agent_factory(spec), kwargs)


def agent_factory(spec: str) -> tuple[str, Any]:
    """The id and the factory (class or function) of the agent ``spec`` names, not called."""
    if ":" in spec:
        return spec, load_user_agent(spec)
    entry = AGENTS.spec(spec)
    return entry.id, entry.load()


def load_user_agent(target: str) -> Any:
    """The class ``package.module:Class`` names, looked for as ``python -m`` does: when its
    top-level package is a folder or module in the working directory, that directory joins
    the front of ``sys.path`` (once) before the import.

    The console script ``vlneval`` does not have the working directory on ``sys.path`` (only
    ``python -c`` and ``python -m`` put it there), so without this a user's own agent imports
    under ``python -c`` and fails under ``vlneval run``.

    Raises:
        VLNEvalError: the module or the attribute cannot be found.
    """
    top = target.partition(":")[0].split(".")[0]
    cwd = os.getcwd()
    here = Path(cwd)
    local = bool(top) and ((here / top).is_dir() or (here / f"{top}.py").is_file())
    if local and not any(_same_dir(p, cwd) for p in sys.path):
        sys.path.insert(0, cwd)

        importlib.invalidate_caches()
    return load_entry_point(target)


def _same_dir(entry: str, cwd: str) -> bool:
    try:
        return os.path.samefile(entry or ".", cwd)
    except OSError:
        return False


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
