"""``vlneval tasks`` and ``vlneval profiles``: what is registered."""

from __future__ import annotations

import argparse

from vlneval.io import to_json_bytes
from vlneval.tasks import TASKS
from vlneval.tasks.profiles import PROFILES, get_profile

__all__ = ["cmd_tasks", "cmd_profiles"]


def cmd_tasks(args: argparse.Namespace) -> int:
    """Prints the tasks."""
    for t in TASKS.values():
        also = "".join(f" (also --task {a})" for a in TASKS.aliases(t.name))
        print(f"{t.name:10s} profiles {', '.join(t.profiles):32s} {t.description}{also}")
    return 0


def cmd_profiles(args: argparse.Namespace) -> int:
    """Prints the profiles (or one profile's rules)."""
    if args.name:
        print(to_json_bytes(get_profile(args.name).to_dict()).decode())
        return 0
    for p in PROFILES.values():
        print(f"{p.name:12s} v{p.version}  {p.comparison:10s} {p.reproduces}")
    return 0
