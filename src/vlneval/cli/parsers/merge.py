"""The arguments of the commands of :mod:`vlneval.cli.merge` (imported without it: a
command's ``--help`` loads no library module it runs)."""

from __future__ import annotations

import argparse

__all__ = ["register"]


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Adds the subcommand."""
    p = sub.add_parser(
        "merge",
        help="merge the shards of a run (vlneval run --shard) into one predictions file",
        description="Checks that the shards describe one run (task, split, seed, agent, "
        "checkpoint, vlneval version...) and hold every episode of the split exactly once, then "
        "writes the task's predictions file (the bytes a single-process run writes) and its "
        "protocol card beside it. Exit 2 naming the missing shards and the missing or duplicate "
        "episode ids otherwise.",
    )
    p.add_argument(
        "shards",
        nargs="+",
        metavar="SHARD",
        help="shard files (NAME.shard-i-of-n.jsonl or its .manifest.json) or folders of them",
    )
    p.add_argument("--out", required=True, help="merged predictions file (.json or .json.gz)")
    p.add_argument(
        "--allow-partial",
        action="store_true",
        help="merge despite missing shards or episodes; the card then says partial: true "
        "(episodes K of n_expected M)",
    )
    p.add_argument("--all-errors", action="store_true", help="list every problem, not the first 20")
    p.set_defaults(func="vlneval.cli.merge:cmd_merge")
