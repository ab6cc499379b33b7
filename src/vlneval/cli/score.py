"""``vlneval score`` and ``vlneval validate``."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from vlneval.cli.common import add_data_args, add_scoring_args, err, load_declared

__all__ = ["register", "cmd_score", "cmd_validate"]


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Adds the subcommands."""
    p = sub.add_parser("score", help="score a predictions file as the official scorer does")
    add_data_args(p)
    p.add_argument(
        "--predictions",
        nargs="+",
        default=None,
        metavar="FILE",
        help="predictions file(s) (.json or .json.gz); several (checkpoints) are scored in one "
        "process, one table row each",
    )
    add_scoring_args(p)
    p.add_argument(
        "--json",
        default=None,
        metavar="SUMMARY",
        help="write the summary JSON here (several files: a JSON list, in the given order)",
    )
    p.add_argument(
        "--per-episode",
        default=None,
        metavar="FILE",
        help=".csv, .jsonl or .parquet (several files: one table, a 'predictions' column first)",
    )
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


def _predictions(args: argparse.Namespace) -> list[str]:
    if isinstance(args.predictions, str):  # validate: one file
        return [args.predictions]
    if args.predictions:
        return [str(p) for p in args.predictions]
    from vlneval.tasks import get_task

    task = get_task(args.task)
    if task.embedded:
        from vlneval.tasks.common.root import demo_root

        split = args.split or task.default_split
        return [str(demo_root() / task.folder / f"predictions_{split}.json")]
    from vlneval.errors import VLNEvalError

    raise VLNEvalError("--predictions FILE is required (only the demo task has a default)")


def _scorer(args: argparse.Namespace):  # type: ignore[no-untyped-def]
    from vlneval.evaluation import Scorer

    return Scorer(
        args.task,
        args.split,
        profile=args.profile,
        root=args.data_root,
        episodes=args.episodes,
        graphs=args.graphs,
        **(_task_options(args) or {}),
    )


def _score(args: argparse.Namespace, scorer, path: str):  # type: ignore[no-untyped-def]
    return scorer.score(
        path,
        subset=args.subset,
        form=args.trajectory_form,
        trajectory_key=args.trajectory_key,
        declared=load_declared(args.protocol),
        skip_summaries=args.skip_summary_records,
    )


def _task_options(args: argparse.Namespace) -> dict[str, str] | None:
    """The task-specific options given on the command line (only those set)."""
    names = ("path_type", "data_version", "angle_units")
    given = {n: getattr(args, n) for n in names if getattr(args, n, None) is not None}
    return given or None


def cmd_score(args: argparse.Namespace) -> int:
    """Scores one file or several (one process, the split loaded once), prints the table,
    writes the requested files; several files with a bad one: the others are scored, exit 2."""
    from vlneval.reports.tables import check_table_suffix, write_rows, write_summary
    from vlneval.reports.terminal import render_summary

    if args.per_episode:  # a bad suffix is refused before anything is scored or written
        check_table_suffix(args.per_episode)
    paths = _predictions(args)
    with _scorer(args) as scorer:
        if len(paths) > 1:
            return _sweep(args, scorer, paths)
        result = _score(args, scorer, paths[0])
    if args.json:
        write_summary(args.json, result.to_dict())
    if args.per_episode:
        write_rows(args.per_episode, result.rows())
    if not args.quiet:
        sys.stdout.write(render_summary(result.to_dict(), color=sys.stdout.isatty()))
    return 0


def _sweep(args: argparse.Namespace, scorer: Any, paths: list[str]) -> int:
    """Scores every file of ``paths`` with one scorer; a failed file is reported, not fatal."""
    from vlneval.errors import InvalidInputError, VLNEvalError
    from vlneval.reports.tables import atomic_write_bytes, to_json_bytes, write_rows

    done: list[tuple[str, Any]] = []
    failed = 0
    for path in paths:
        try:
            done.append((path, _score(args, scorer, path)))
        except InvalidInputError as exc:
            failed += 1
            err(exc.render(limit=None if args.all_errors else 20))
        except VLNEvalError as exc:
            failed += 1
            err(f"error: {path}: {exc}")
    if args.json:
        atomic_write_bytes(args.json, to_json_bytes([r.to_dict() for _, r in done]))
    if args.per_episode:
        write_rows(
            args.per_episode, [{"predictions": p, **row} for p, r in done for row in r.rows()]
        )
    if not args.quiet and done:
        sys.stdout.write(_sweep_table(done, color=sys.stdout.isatty()))
    if failed:
        err(f"error: {failed} of {len(paths)} predictions files could not be scored (see above)")
    return 2 if failed else 0


def _sweep_table(done: list[tuple[str, Any]], *, color: bool) -> str:
    """One row per scored file: its name, the episodes scored, every metric."""
    import io

    from rich.console import Console
    from rich.table import Table

    from vlneval.reports.terminal import RATE_LABELS, format_value

    first = done[0][1]
    labels = list(dict.fromkeys(k for _, r in done for k in r.metrics))
    units = {k: v for _, r in done for k, v in r.units.items()}
    prof = first.profile
    folders = {str(Path(p).parent) for p, _ in done}
    title = f"{first.task} {first.split} · profile {prof.name} v{prof.version}"
    if len(folders) == 1:  # checkpoints of one run: their names, the folder once in the title
        title += f" · in {folders.pop()}"
        done = [(Path(p).name, r) for p, r in done]
    table = Table(title=title)
    table.add_column("predictions", no_wrap=True)
    table.add_column("episodes", justify="right")
    for label in labels:
        unit = units.get(label) or ("%" if label in RATE_LABELS else "m")
        table.add_column(f"{label} ({unit})", justify="right")
    for path, r in done:
        n = f"{r.n_episodes}" + (" (partial)" if r.partial else "")
        cells = (format_value(k, r.metrics.get(k), units.get(k)) for k in labels)
        table.add_row(path, n, *cells)
    console = Console(record=True, force_terminal=color, width=160, file=io.StringIO())
    console.print(table)
    seen: dict[str, list[str]] = {}
    for path, r in done:
        for c in r.checks:
            if not c.holds:
                note = f" ({c.quirk})" if c.quirk else ""
                seen.setdefault(f"check failed: {c.name}{note}", []).append(path)
        for w in r.warnings:
            if not w.startswith("consistency check failed"):
                seen.setdefault(f"warning: {w}", []).append(path)
    for text, files in seen.items():
        where = files[0] if len(files) == 1 else f"{len(files)} files"
        console.print(f"[yellow]{where}: {text}[/]", markup=True, highlight=False)
    return console.export_text(styles=bool(color))


def cmd_validate(args: argparse.Namespace) -> int:
    """Runs every check a leaderboard makes; exit 0 only for an acceptable file."""
    paths = _predictions(args)
    with _scorer(args) as scorer:
        result = _score(args, scorer, paths[0])
    for w in result.warnings:
        err(f"warning: {w}")
    print(
        f"ok: {result.source} is a valid {result.task} {result.split} submission for "
        f"profile {result.profile.name} ({result.n_episodes} episodes, trajectory form "
        f"{result.form})"
    )
    return 0
