"""``vlneval tasks`` and ``vlneval profiles``: what is registered."""

from __future__ import annotations

import argparse

__all__ = ["register"]


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Adds the subcommands."""
    t = sub.add_parser("tasks", help="list the tasks")
    t.set_defaults(func=cmd_tasks)
    p = sub.add_parser("profiles", help="list the scoring profiles and their rules")
    p.add_argument("name", nargs="?", help="show one profile's rules")
    p.set_defaults(func=cmd_profiles)


def cmd_tasks(args: argparse.Namespace) -> int:
    """Prints the tasks."""
    from vlneval.tasks import TASKS

    for t in TASKS.values():
        also = "".join(f" (also --task {a})" for a in TASKS.aliases(t.name))
        print(f"{t.name:10s} profiles {', '.join(t.profiles):32s} {t.description}{also}")
    return 0


def cmd_profiles(args: argparse.Namespace) -> int:
    """Prints the profiles (or one profile's rules)."""
    from vlneval.io import to_json_bytes
    from vlneval.tasks.profiles import PROFILES, get_profile

    if args.name:
        print(to_json_bytes(get_profile(args.name).to_dict()).decode())
        return 0
    for p in PROFILES.values():
        print(f"{p.name:12s} v{p.version}  {p.comparison:10s} {p.reproduces}")
    return 0
