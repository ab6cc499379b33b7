"""What the commands that score share: the scorer of a command line, the plan of its
outputs (checked before anything is scored), the writing of a scored result, and the
protocol fields a run declares. Apart from :mod:`vlneval.cli.common` so that building a
command's parser imports none of this."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Mapping
from contextlib import ExitStack
from dataclasses import dataclass
from functools import cache
from typing import Any

from vlneval.cli.common import (
    ROW_FORMATS,
    err,
    given_task_options,
    load_declared,
    print_table,
)
from vlneval.distributed.merge import card_path
from vlneval.errors import VLNEvalError
from vlneval.evaluation import Scorer
from vlneval.io import Output, check_outputs, resolve_output
from vlneval.reports.paper import TABLE_FORMATS
from vlneval.reports.tables import table_format, write_results
from vlneval.reports.terminal import print_notices, render_summary, summary_notices
from vlneval.tasks import get_task

__all__ = [
    "open_scorer",
    "scorer_on_first_use",
    "Plan",
    "plan_outputs",
    "scored_plan",
    "emit_scored",
    "declared_for",
]


def open_scorer(args: argparse.Namespace, *, profile: str | None = None, **options: Any) -> Any:
    """The :class:`~vlneval.Scorer` of the command's task, split, profile (or ``profile``) and
    data, with the task options given and ``options``; ``--quiet`` also silences the progress
    bar of the tasks that show one. ``--skip-summary-records`` is refused for a task that
    cannot skip summary records before the split is loaded."""
    task = get_task(args.task)
    task.check_skip_summaries(getattr(args, "skip_summary_records", False))
    options = {**(given_task_options(args) or {}), **options}
    if getattr(args, "quiet", False) and task.has_option("show_progress"):
        options["show_progress"] = False
    return Scorer(
        args.task,
        args.split,
        profile=profile or args.profile,
        root=args.data_root,
        episodes=args.episodes,
        graphs=args.graphs,
        **options,
    )


def scorer_on_first_use(args: argparse.Namespace, stack: ExitStack) -> Callable[[], Any]:
    """``scorer()``: the command's :func:`open_scorer`, opened on the first call and closed
    with ``stack``; every later call returns it (the split and graphs load once for all the
    files a command scores, and not at all when it scores none).

    Example:
        >>> args = argparse.Namespace(task="demo", split=None, profile=None, data_root=None,
        ...                           episodes=None, graphs=None)
        >>> with ExitStack() as stack:
        ...     scorer = scorer_on_first_use(args, stack)
        ...     scorer() is scorer()
        True
    """
    return cache(lambda: stack.enter_context(open_scorer(args)))


@dataclass(frozen=True)
class Plan:
    """Where a command's outputs go, checked before any work is done.

    Attributes:
        outputs: option (``--json``) -> its resolved output (only those given).
        table: the format of the table printed on stdout; None when nothing is printed
            (``--quiet``, or stdout holds an output).
        rows_format: ``--format csv|jsonl`` of the per-episode table, when given.
    """

    outputs: Mapping[str, Output]
    table: str | None
    rows_format: str | None

    def write(self, summary: Any, rows: list[dict[str, Any]] | None) -> None:
        """Writes the per-episode table and the summary together (the summary last)."""
        rows_to, summary_to = self.outputs.get("--per-episode"), self.outputs.get("--json")
        write_results(
            summary_to=summary_to, summary=summary, rows_to=rows_to, rows=rows, fmt=self.rows_format
        )


def plan_outputs(
    args: argparse.Namespace,
    options: Mapping[str, str | None],
    *,
    table: bool = True,
) -> Plan:
    """Resolves the outputs of ``options`` (option -> path as given) and the table.

    At most one output goes to stdout, and then no table is printed (a table format asked
    for explicitly is refused); ``--format csv|jsonl`` needs the per-episode table; a missing
    folder, a folder given as a file and a bad suffix are refused now, before any scoring.

    Raises:
        VLNEvalError: naming the options in conflict or the missing folder.
    """
    outs = {name: resolve_output(path, what=name) for name, path in options.items() if path}
    check_outputs(outs)
    fmt = getattr(args, "format", None)
    rows_fmt = fmt if fmt in ROW_FORMATS else None
    table_fmt = fmt if fmt in TABLE_FORMATS else None
    rows = outs.get("--per-episode")
    if rows_fmt is not None and rows is None:
        raise VLNEvalError(
            f"--format {rows_fmt} is the format of --per-episode; the table on stdout is text, "
            "markdown or latex"
        )
    if rows is not None:
        table_format(rows.given, rows_fmt, stream=rows.kind != "file")
    to_stdout = [name for name, o in outs.items() if o.is_stdout]
    shown: str | None = None
    if to_stdout:
        if table_fmt is not None:
            raise VLNEvalError(
                f"{to_stdout[0]} {outs[to_stdout[0]].given} writes to stdout: the {table_fmt} "
                f"table cannot go there too (drop --format {table_fmt}, or write "
                f"{to_stdout[0]} to a file)"
            )
    elif table and not getattr(args, "quiet", False):
        shown = table_fmt or "text"
    return Plan(outs, shown, rows_fmt)


def scored_plan(args: argparse.Namespace, *, out: bool = False, table: bool = True) -> Plan:
    """The plan of a command that scores: ``--per-episode`` then ``--json`` (the summary
    last), and with ``out`` the predictions file ``--out``, which must be a file (its protocol
    card goes beside it, and scoring reads it back)."""
    options = {"--out": args.out} if out else {}
    options |= {"--per-episode": getattr(args, "per_episode", None), "--json": args.json}
    plan = plan_outputs(args, options, table=table)
    written = plan.outputs.get("--out")
    if written is not None and written.kind != "file":
        raise VLNEvalError(
            f"--out {written.given}: the predictions must go to a file (the protocol card is "
            "written beside it, and --score reads it back)"
        )
    return plan


def emit_scored(
    args: argparse.Namespace,
    summary: Mapping[str, Any],
    rows: list[dict[str, Any]] | None,
    plan: Plan | None = None,
) -> None:
    """Writes a scored result: the per-episode table and the summary together (the summary
    last), the table on stdout unless an output is there, the notes (warnings, failed checks,
    why each n/a) on stderr."""
    plan = plan or scored_plan(args)
    plan.write(summary, rows)
    if plan.table is not None:
        print_table(render_summary(summary, color=sys.stdout.isatty(), fmt=plan.table))
    print_notices(summary_notices(summary))


def declared_for(given: str | None, predictions: str, quiet: bool = False) -> dict[str, Any] | None:
    """The declared protocol fields of ``predictions``: the ``--protocol`` file ``given``, or
    else the card ``vlneval run`` writes beside it (``NAME.protocol.json``, a JSON object; said
    on stderr unless ``quiet``). A file of that name that holds no JSON object is left alone."""
    if given is not None:
        return load_declared(given)
    beside = card_path(predictions)
    try:
        card = load_declared(str(beside)) if beside.is_file() else None
    except VLNEvalError:
        return None
    if card is not None and not quiet:
        err(
            f"note: {predictions}: its card is {beside} (written by `vlneval run`); --protocol overrides"
        )
    return card
