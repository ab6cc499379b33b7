"""``vlneval serve-agent``: serve a registered agent over HTTP (the remote-agent protocol)."""

from __future__ import annotations

import argparse
import dataclasses
from typing import Any

from vlneval.agents.continuous import make_agent
from vlneval.agents.registry import get_agent
from vlneval.agents.remote_server import AgentServer
from vlneval.cli.common import err
from vlneval.distributed.checkpoint import parse_agent_args
from vlneval.envs.continuous.spaces import continuous_space
from vlneval.errors import VLNEvalError

__all__ = ["cmd_serve_agent", "in_space"]


def cmd_serve_agent(args: argparse.Namespace) -> int:
    """Serves until interrupted."""
    agent = get_agent(args.agent, parse_agent_args(args.agent_arg))
    if args.action_space is not None:
        agent = in_space(agent, args.action_space)
    server = AgentServer(agent, host=args.host, port=args.port, max_sessions=args.max_sessions,
                         log=err if args.verbose else None)  # fmt: skip
    err(f"serving {agent.id} on {server.url} (protocol vlneval-agent-v1); "
        f"run with --agent {server.url}; Ctrl-C stops")  # fmt: skip
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        err("stopped")
    finally:
        server.httpd.server_close()
    return 0


def in_space(agent: Any, space: str) -> Any:
    """A continuous baseline's :class:`~vlneval.agents.base.AgentInfo` acting in the continuous
    action space ``space`` only (``--action-space``), built as ``vlneval run`` builds it.

    Example:
        >>> from vlneval.agents.registry import get_agent
        >>> info = in_space(get_agent("continuous-random"), "velocity")
        >>> info.action_spaces, info.factory().space.name
        (('velocity',), 'velocity')
    """
    name = agent.id.rsplit("-v", 1)[0]
    if not name.startswith("continuous-"):
        raise VLNEvalError(
            f"--action-space {space}: only the continuous baselines (continuous-stop, "
            f"continuous-random) take it, not {agent.id}"
        )
    the_space = continuous_space(space)
    return dataclasses.replace(agent, factory=lambda: make_agent(name, the_space),
                               action_spaces=(the_space.name,))  # fmt: skip
