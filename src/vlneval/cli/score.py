"""``vlneval score`` and ``vlneval validate``."""

from __future__ import annotations

import argparse
import sys

from vlneval.cli.common import add_data_args, add_scoring_args, err, load_declared

__all__ = ["register", "cmd_score", "cmd_validate"]


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Adds the subcommands."""
    p = sub.add_parser("score", help="score a predictions file as the official scorer does")
    add_data_args(p)
    p.add_argument("--predictions", default=None, help="predictions file (.json or .json.gz)")
    add_scoring_args(p)
    p.add_argument("--json", default=None, metavar="SUMMARY", help="write the summary JSON here")
    p.add_argument("--per-episode", default=None, metavar="FILE", help=".csv, .jsonl or .parquet")
    p.add_argument("--quiet", action="store_true", help="print no table")
    _skip_summary_arg(p)
    p.set_defaults(func=cmd_score)

    v = sub.add_parser("validate", help="check a predictions file as a leaderboard does")
    add_data_args(v)
    v.add_argument("--predictions", required=True)
    add_scoring_args(v)
    _skip_summary_arg(v)
    v.set_defaults(func=cmd_validate)


def _skip_summary_arg(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--skip-summary-records",
        action="store_true",
        help="skip records that look like the file's own summary (no id, no trajectory)",
    )


def _predictions(args: argparse.Namespace) -> str:
    if args.predictions:
        return str(args.predictions)
    from vlneval.tasks import get_task

    task = get_task(args.task)
    if task.embedded:
        from vlneval.data.root import demo_root

        split = args.split or task.default_split
        return str(demo_root() / task.folder / f"predictions_{split}.json")
    from vlneval.errors import VLNEvalError

    raise VLNEvalError("--predictions FILE is required (only the demo task has a default)")


def _evaluate(args: argparse.Namespace):  # type: ignore[no-untyped-def]
    from vlneval.evaluation import evaluate

    return evaluate(
        args.task,
        args.split,
        _predictions(args),
        profile=args.profile,
        root=args.data_root,
        episodes_file=args.episodes,
        graphs=args.graphs,
        subset=args.subset,
        form=args.trajectory_form,
        trajectory_key=args.trajectory_key,
        declared=load_declared(args.protocol),
        options=_task_options(args),
        skip_summaries=args.skip_summary_records,
    )


def _task_options(args: argparse.Namespace) -> dict[str, str] | None:
    """The task-specific options given on the command line (only those set)."""
    names = ("path_type", "data_version", "angle_units")
    given = {n: getattr(args, n) for n in names if getattr(args, n, None) is not None}
    return given or None


def cmd_score(args: argparse.Namespace) -> int:
    """Scores, prints the table, writes the requested files."""
    from vlneval.reports.tables import check_table_suffix, write_rows, write_summary
    from vlneval.reports.terminal import render_summary

    if args.per_episode:  # a bad suffix is refused before anything is scored or written
        check_table_suffix(args.per_episode)
    result = _evaluate(args)
    if args.json:
        write_summary(args.json, result.summary)
    if args.per_episode:
        write_rows(args.per_episode, result.rows())
    if not args.quiet:
        sys.stdout.write(render_summary(result.summary, color=sys.stdout.isatty()))
    return 0


def cmd_validate(args: argparse.Namespace) -> int:
    """Runs every check a leaderboard makes; exit 0 only for an acceptable file."""
    result = _evaluate(args)
    s = result.summary
    for w in s["warnings"]:
        err(f"warning: {w}")
    print(
        f"ok: {result.predictions_source} is a valid {s['task']} {s['split']} submission for "
        f"profile {s['profile']['name']} ({s['n_episodes']} episodes, trajectory form "
        f"{s['trajectory_form']})"
    )
    return 0
