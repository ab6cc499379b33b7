"""The arguments of the commands of :mod:`vlneval.cli.serve_agent` (imported without it: a
command's ``--help`` loads no library module it runs)."""

from __future__ import annotations

import argparse

from vlneval.cli.common import add_agent_arg

__all__ = ["register"]


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
    p.set_defaults(func="vlneval.cli.serve_agent:cmd_serve_agent")
