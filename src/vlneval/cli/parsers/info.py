"""The arguments of the commands of :mod:`vlneval.cli.info` (imported without it: a
command's ``--help`` loads no library module it runs)."""

from __future__ import annotations

import argparse

__all__ = ["register"]


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Adds the subcommands."""
    t = sub.add_parser("tasks", help="list the tasks")
    t.set_defaults(func="vlneval.cli.info:cmd_tasks")
    p = sub.add_parser("profiles", help="list the scoring profiles and their rules")
    p.add_argument("name", nargs="?", help="show one profile's rules")
    p.set_defaults(func="vlneval.cli.info:cmd_profiles")
