"""``check_agent``: does an agent follow the protocol of :mod:`vlneval.agents.base`?

It runs the agent on the demo task (no downloads) in every action space it declares and checks
that it resets and acts without error, returns valid integer actions, ends every episode (by
STOP or the step limit), returns a mapping or None from ``finish``, and is reproducible: the
same seed gives the same predictions, whatever the batch size.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from vlneval.agents.base import AgentInfo, describe_agent
from vlneval.agents.registry import get_agent
from vlneval.agents.rollout import run_agent
from vlneval.envs.loading import load_episodes
from vlneval.errors import AgentError, VLNEvalError

__all__ = ["check_agent", "AgentCheckError"]


class AgentCheckError(VLNEvalError):
    """An agent broke the protocol; the message lists every failure."""


def _info(agent: str | AgentInfo | Callable[[], Any]) -> AgentInfo:
    if isinstance(agent, AgentInfo):
        return agent
    if isinstance(agent, str):
        return get_agent(agent)
    name = getattr(agent, "__qualname__", repr(agent))
    return describe_agent(f"{getattr(agent, '__module__', '?')}:{name}", agent)


def check_agent(
    agent: str | AgentInfo | Callable[[], Any],
    *,
    episodes: Any = None,
    graphs: Any = None,
    n_episodes: int = 8,
    seed: int = 0,
) -> dict[str, Any]:
    """Checks ``agent`` (a registry id, ``module:Class``, a class or a factory).

    Returns a report (``agent``, ``action_spaces``, ``episodes``, ``steps``, ``truncated``);
    raises :class:`AgentCheckError` listing every failed check.

    Example:
        >>> check_agent("random-walk")["action_spaces"]
        ['panoramic']
    """
    try:
        info = _info(agent)
    except VLNEvalError as exc:
        raise AgentCheckError(f"agent check failed:\n  - {exc}") from None
    if episodes is None:
        episodes, graphs = load_episodes("demo")
    problems: list[str] = []
    steps = truncated = 0
    for space in info.action_spaces:
        try:
            runs = [
                run_agent(
                    info,
                    episodes,
                    graphs,
                    action_space=space,
                    seed=s,
                    batch_size=b,
                    limit=n_episodes,
                )
                for s, b in ((seed, 1), (seed, 3), (seed + 1, 2))
            ]
        except VLNEvalError as exc:
            crash = exc.__cause__ if isinstance(exc, AgentError) else None
            problems.append(f"{space}: {exc}" if crash is None else _crashed(space, crash))
            continue
        except Exception as exc:  # noqa: BLE001 - a crash in the agent is what the check reports
            problems.append(_crashed(space, exc))
            continue
        if runs[0].records != runs[1].records:
            problems.append(
                f"{space}: the same seed gave different predictions (batch size 1 vs 3)"
            )
        steps += runs[0].steps
        truncated += runs[0].truncated
    if problems:
        raise AgentCheckError(
            f"agent check failed for {info.id}:\n" + "\n".join(f"  - {p}" for p in problems)
        )
    return {
        "agent": info.id,
        "action_spaces": list(info.action_spaces),
        "privileged": info.privileged,
        "episodes": n_episodes,
        "steps": steps,
        "truncated": truncated,
    }


def _crashed(space: str, exc: BaseException) -> str:
    return f"{space}: the agent crashed: {type(exc).__name__}: {exc}"
