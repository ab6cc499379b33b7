"""The arguments of the commands of :mod:`vlneval.cli.run` (imported without it: a
command's ``--help`` loads no library module it runs)."""

from __future__ import annotations

import argparse

from vlneval.cli.common import (
    add_data_args,
    add_executor_args,
    add_format_arg,
    add_shard_args,
    add_task_option_args,
)

__all__ = ["register"]


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Adds the subcommands."""
    p = sub.add_parser(
        "run",
        help="run an agent on a split: predictions, protocol card, optional score",
        description="Runs an agent on every episode of a split in one of vlneval's environments "
        "(the task's: a navigation graph, a street graph, or a continuous twin world) and writes "
        "the predictions (the task's format; continuous: VLN-CE r2r-ce) and a protocol card "
        "beside them.",
    )
    add_data_args(p)
    p.add_argument(
        "--agent",
        required=True,
        help="stop, random, random-walk, shortest (see `vlneval agents`), package.module:Class, "
        "or http://host:port (an agent served over HTTP, e.g. by `vlneval serve-agent`)",
    )
    p.add_argument(
        "--out",
        required=True,
        help="predictions file (.json or .json.gz); the card goes beside it as NAME.protocol.json",
    )
    p.add_argument("--seed", type=int, default=0, help="seed of the agents' generators (default 0)")
    p.add_argument(
        "--env",
        default=None,
        help="environment id (see `vlneval agents`, -vN optional); a continuous-* id runs the "
        "continuous twin worlds (default: the task's)",
    )
    p.add_argument(
        "--action-space",
        choices=["panoramic", "egocentric"],
        default=None,
        help="default: the agent's own (random: egocentric; others: panoramic)",
    )
    p.add_argument(
        "--max-steps",
        type=int,
        default=None,
        help="step limit per episode (default: 35 panoramic, 100 egocentric, 150 street; "
        "continuous: the action space's, 500 discrete steps)",
    )
    p.add_argument("--features", default=None, help="pre-extracted features (.tsv or .h5)")
    p.add_argument("--batch-size", type=int, default=1, help="episodes stepped together")
    p.add_argument(
        "--limit",
        type=int,
        default=None,
        metavar="N",
        help="run the first N episodes only (scored as partial)",
    )
    p.add_argument("--score", action="store_true", help="score the predictions at the end")
    p.add_argument(
        "--json", default=None, metavar="SUMMARY", help="with --score: summary JSON (- stdout)"
    )
    p.add_argument(
        "--per-episode",
        default=None,
        metavar="FILE",
        help="with --score: .csv, .jsonl or .parquet, or - for stdout with --format csv|jsonl",
    )
    add_format_arg(p)
    p.add_argument(
        "--quiet", action="store_true", help="no progress bar, no table, no 'ran ... wrote' line"
    )
    add_task_option_args(p)
    add_shard_args(p)
    add_executor_args(p)
    p.set_defaults(func="vlneval.cli.run:cmd_run")

    a = sub.add_parser("agents", help="list the registered agents and environments")
    a.set_defaults(func="vlneval.cli.agents:cmd_agents")
