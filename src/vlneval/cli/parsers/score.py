"""The arguments of the commands of :mod:`vlneval.cli.score` (imported without it: a
command's ``--help`` loads no library module it runs)."""

from __future__ import annotations

import argparse

from vlneval.cli.common import (
    add_data_args,
    add_format_arg,
    add_scoring_args,
)

__all__ = ["register"]


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Adds the subcommands."""
    p = sub.add_parser("score", help="score a predictions file as the official scorer does")
    add_data_args(p)
    p.add_argument(
        "--predictions",
        nargs="+",
        default=None,
        metavar="FILE",
        help="predictions file(s) (.json or .json.gz) or a quoted pattern ('ckpt/*.json', "
        "expanded in natural order: ckpt_20 before ckpt_100); several (checkpoints) are scored "
        "in one process, one table row each; the protocol cards of `vlneval run` among them "
        "(NAME.protocol.json) are skipped with a note",
    )
    add_scoring_args(p)
    p.add_argument(
        "--json",
        default=None,
        metavar="SUMMARY",
        help="write the summary JSON here, - for stdout (several files or a pattern: a JSON "
        "list, one entry per file given, in order; a file not scored: its 'errors'; a "
        "skipped one: 'skipped')",
    )
    p.add_argument(
        "--per-episode",
        default=None,
        metavar="FILE",
        help=".csv, .jsonl or .parquet, or - for stdout with --format csv|jsonl (several files "
        "or a pattern: one table, a 'predictions' column first)",
    )
    add_format_arg(p)
    p.add_argument("--quiet", action="store_true", help="print no table")
    _skip_summary_arg(p)
    p.set_defaults(func="vlneval.cli.score:cmd_score")

    v = sub.add_parser("validate", help="check a predictions file as a leaderboard does")
    add_data_args(v)
    v.add_argument("--predictions", required=True)
    add_scoring_args(v)
    _skip_summary_arg(v)
    v.set_defaults(func="vlneval.cli.score:cmd_validate")


def _skip_summary_arg(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--skip-summary-records",
        action="store_true",
        help="skip records that look like the file's own summary (no id, no trajectory)",
    )
