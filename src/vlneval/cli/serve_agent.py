"""``vlneval serve-agent``: serve a registered agent over HTTP (the remote-agent protocol)."""

from __future__ import annotations

import argparse
import dataclasses
from typing import Any

from vlneval.cli.common import err
from vlneval.cli.sharding import add_agent_arg

__all__ = ["register", "cmd_serve_agent", "in_space"]


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Adds the subcommand."""
    p = sub.add_parser(
        "serve-agent",
        help="serve an agent over HTTP for `vlneval run --agent http://host:port`",
        description="Serves a registered agent (or package.module:Class) on the JSON protocol of "
        "vlneval.agents.remote (POST /reset, /act, /finish; GET /info). Privileged agents are "
        "refused: their channel never crosses the wire.",
    )
    p.add_argument(
        "--agent", required=True, help="stop, random, random-walk or package.module:Class"
    )
    add_agent_arg(p)
    p.add_argument(
        "--action-space",
        default=None,
        metavar="SPACE",
        help="a continuous baseline (continuous-random...) acting in this continuous space "
        "(r2r-ce, rxr-ce, velocity, waypoint): its commands are drawn within that space's limits",
    )
    p.add_argument(
        "--host",
        default="127.0.0.1",
        help="address to listen on (default 127.0.0.1; the server has no authentication: keep it "
        "on loopback or a private network)",
    )
    p.add_argument("--port", type=int, default=8765, help="port (default 8765; 0: any free port)")
    p.add_argument("--max-sessions", type=int, default=1024, help="open episodes kept at most")
    p.add_argument("--verbose", action="store_true", help="log every request on stderr")
    p.set_defaults(func=cmd_serve_agent)


def cmd_serve_agent(args: argparse.Namespace) -> int:
    """Serves until interrupted."""
    from vlneval.agents.registry import get_agent
    from vlneval.agents.remote_server import AgentServer
    from vlneval.distributed.checkpoint import parse_agent_args

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
    from vlneval.agents.continuous import make_agent
    from vlneval.envs.continuous.spaces import continuous_space
    from vlneval.errors import VLNEvalError

    name = agent.id.rsplit("-v", 1)[0]
    if not name.startswith("continuous-"):
        raise VLNEvalError(
            f"--action-space {space}: only the continuous baselines (continuous-stop, "
            f"continuous-random) take it, not {agent.id}"
        )
    the_space = continuous_space(space)
    return dataclasses.replace(agent, factory=lambda: make_agent(name, the_space),
                               action_spaces=(the_space.name,))  # fmt: skip
