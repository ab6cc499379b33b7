"""``vlneval agents``: the registered agents and environments (apart from
:mod:`vlneval.cli.info`: their registries import the environments, which ``vlneval tasks``
does not need)."""

from __future__ import annotations

import argparse

from vlneval.agents.registry import AGENTS
from vlneval.envs.registration import ENVS

__all__ = ["cmd_agents"]


def cmd_agents(args: argparse.Namespace) -> int:
    """Prints the registered agents and environments."""
    print("agents (--agent NAME, or package.module:Class):")
    for spec in AGENTS.latest():
        print(f"  {spec.id:22s} {spec.description}")
    print("environments:")
    for spec in ENVS.latest():
        print(f"  {spec.id:22s} {spec.description}")
    return 0
