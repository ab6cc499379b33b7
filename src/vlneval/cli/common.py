"""Arguments and error handling shared by the subcommands."""

from __future__ import annotations

import argparse
import sys
import traceback
from collections.abc import Callable, Mapping
from contextlib import ExitStack, nullcontext
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from vlneval._compiling import silenced
from vlneval.errors import AgentError, InvalidInputError, VLNEvalError
from vlneval.io import Output, check_outputs, resolve_output
from vlneval.reports.paper import TABLE_FORMATS
from vlneval.tasks.base import Option

__all__ = [
    "add_data_args",
    "add_scoring_args",
    "add_format_arg",
    "plan_outputs",
    "Plan",
    "print_table",
    "scored_plan",
    "emit_scored",
    "summary_kind",
    "summary_kind_of",
    "add_task_option_args",
    "given_task_options",
    "open_scorer",
    "scorer_on_first_use",
    "run_guarded",
    "load_declared",
    "declared_for",
    "err",
]

ROW_FORMATS = ("csv", "jsonl")

ISSUES = "https://github.com/vlneval/vlneval/issues"


def err(text: str) -> None:
    """Prints to stderr."""
    print(text, file=sys.stderr)


def add_data_args(p: argparse.ArgumentParser) -> None:
    """--task, --split, --data-root, --episodes, --graphs, --profile."""
    p.add_argument("--task", required=True, help="benchmark, e.g. r2r, r4r, rxr, demo")
    p.add_argument("--split", default=None, help="split, e.g. val_unseen (default: the task's)")
    p.add_argument("--profile", default=None, help="scoring profile (default: the task's)")
    p.add_argument("--data-root", default=None, help="data folder (default: $VLNEVAL_DATA)")
    p.add_argument("--episodes", default=None, help="episodes file (overrides the data root)")
    p.add_argument("--graphs", default=None, help="connectivity folder (overrides the data root)")


def add_scoring_args(p: argparse.ArgumentParser) -> None:
    """Options of commands that read a predictions file."""
    p.add_argument("--subset", action="store_true", help="score only predicted episodes (partial)")
    p.add_argument(
        "--trajectory-form",
        default="auto",
        choices=["auto", "triple", "nested", "plain", "r2r-ce", "rxr-jsonl"],
        help="how trajectories are written (default: detected; VLN-CE files: r2r-ce or rxr-jsonl)",
    )
    p.add_argument("--trajectory-key", default=None, help="record field holding the trajectory")
    p.add_argument("--protocol", default=None, help="JSON file of self-declared protocol fields")
    p.add_argument("--all-errors", action="store_true", help="list every problem, not the first 20")
    add_task_option_args(p)


def cli_task_options() -> dict[str, list[tuple[str, Option]]]:
    """The options tasks offer on the command line: name -> [(task, option), ...]."""
    from vlneval.tasks import TASKS

    found: dict[str, list[tuple[str, Option]]] = {}
    for task in TASKS.values():
        for option in task.options:
            if option.cli:
                found.setdefault(option.name, []).append((task.name, option))
    return found


def add_task_option_args(p: argparse.ArgumentParser) -> None:
    """One flag per task option (``--path-type``...), as the tasks declare them: the choices
    and help of the task that declares it, or each task's choices when several do. Values are
    checked by the task (``Task.check_options``: one line with the closest choice, in any
    case), not by argparse, whose error repeats the whole usage."""
    for name, declared in cli_task_options().items():
        flag = declared[0][1].flag
        if len(declared) == 1:
            option = declared[0][1]
            metavar = "{" + ",".join(option.choices) + "}" if option.choices else None
            p.add_argument(flag, dest=name, default=None, help=option.help, metavar=metavar)
            continue
        tasks = ", ".join(t for t, _ in declared)
        if len({(o.help, o.choices) for _, o in declared}) == 1:  # one option, several tasks
            option = declared[0][1]
            metavar = "{" + ",".join(option.choices) + "}" if option.choices else None
            p.add_argument(
                flag, dest=name, default=None, help=f"{option.help} ({tasks})", metavar=metavar
            )
            continue
        by_choices: dict[tuple[str, ...], list[str]] = {}
        for task, o in declared:
            by_choices.setdefault(o.choices, []).append(task)
        each = "; ".join(f"{', '.join(t)}: {', '.join(c) or 'any'}" for c, t in by_choices.items())
        p.add_argument(flag, dest=name, default=None, help=f"{name.replace('_', ' ')} ({each})")


def given_task_options(args: argparse.Namespace) -> dict[str, Any] | None:
    """The task options set on the command line (only those set), checked by the command's
    task (``Task.check_options``, before any file is read), or None.

    Raises:
        UnknownNameError: an unknown option value (with the closest).
        VLNEvalError: an option the task does not declare, or options without ``--task``.
    """
    names = cli_task_options()
    given = {n: getattr(args, n) for n in names if getattr(args, n, None) is not None}
    if not given:
        return None
    if not getattr(args, "task", None):
        flags = ", ".join(names[n][0][1].flag for n in given)
        raise VLNEvalError(f"{flags}: a task option needs --task")
    from vlneval.tasks import get_task

    return get_task(args.task).check_options(given)


def open_scorer(args: argparse.Namespace, *, profile: str | None = None, **options: Any) -> Any:
    """The :class:`~vlneval.Scorer` of the command's task, split, profile (or ``profile``) and
    data, with the task options given and ``options``; ``--quiet`` also silences the progress
    bar of the tasks that show one. ``--skip-summary-records`` is refused for a task that
    cannot skip summary records before the split is loaded."""
    from vlneval.evaluation import Scorer
    from vlneval.tasks import get_task

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


def add_format_arg(p: argparse.ArgumentParser, *, rows: bool = True) -> None:
    """``--format``: of the table on stdout (text, markdown, latex) and, with ``rows`` and
    ``--per-episode -``, of the per-episode table (csv, jsonl)."""
    text = "the table on stdout: text (default), markdown or latex"
    if rows:
        text += "; with --per-episode -: the rows on stdout as csv or jsonl"
    choices = TABLE_FORMATS + (ROW_FORMATS if rows else ())
    p.add_argument("--format", default=None, choices=choices, help=text)


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
        from vlneval.reports.tables import write_results

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
    from vlneval.reports.tables import table_format

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


def print_table(text: str) -> None:
    """Writes a table to stdout."""
    sys.stdout.write(text)


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
    from vlneval.reports.terminal import print_notices, render_summary, summary_notices

    plan = plan or scored_plan(args)
    plan.write(summary, rows)
    if plan.table is not None:
        print_table(render_summary(summary, color=sys.stdout.isatty(), fmt=plan.table))
    print_notices(summary_notices(summary))


def summary_kind(path: str) -> str | None:
    """What ``path`` holds when it is an output of ``vlneval score --json`` rather than
    predictions (:func:`summary_kind_of`), else None. Only a regular file is read: a FIFO's
    bytes are gone after the first read, and a second one waits for a writer; a file that
    cannot be read is None (the first error stands)."""
    from vlneval.io import load_json

    if not Path(path).is_file():
        return None
    try:
        return summary_kind_of(load_json(Path(path)))
    except VLNEvalError:
        return None


def summary_kind_of(value: Any) -> str | None:
    """``"summary"`` for the summary ``score --json`` writes for one file (an object with
    ``metrics`` and ``protocol``), ``"sweep"`` for the list it writes for several (each entry a
    summary, or ``{"predictions": file, "errors": [...]}``, or ``{"predictions": file,
    "skipped": why}``), else None.

    Example:
        >>> summary_kind_of({"metrics": {}, "protocol": {}})
        'summary'
        >>> summary_kind_of([{"predictions": "a.json", "skipped": "a card"}])
        'sweep'
        >>> summary_kind_of([{"instr_id": "1_0", "trajectory": []}]) is None
        True
    """

    def summary(v: Any) -> bool:
        return isinstance(v, dict) and "metrics" in v and "protocol" in v

    def entry(v: Any) -> bool:
        failed = isinstance(v, dict) and "predictions" in v and ("errors" in v or "skipped" in v)
        return failed or summary(v)

    if summary(value):
        return "summary"
    return "sweep" if isinstance(value, list) and value and all(map(entry, value)) else None


def declared_for(given: str | None, predictions: str, quiet: bool = False) -> dict[str, Any] | None:
    """The declared protocol fields of ``predictions``: the ``--protocol`` file ``given``, or
    else the card ``vlneval run`` writes beside it (``NAME.protocol.json``, a JSON object; said
    on stderr unless ``quiet``). A file of that name that holds no JSON object is left alone."""
    from vlneval.distributed.merge import card_path

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


def load_declared(path: str | None) -> dict[str, Any] | None:
    """The self-declared protocol fields of ``--protocol FILE``."""
    if not path:
        return None
    from vlneval.io import load_json

    value = load_json(Path(path))
    if not isinstance(value, dict):
        raise InvalidInputError(f"{path}: expected a JSON object of protocol fields")
    return value


def run_guarded(fn: Callable[[argparse.Namespace], int], args: argparse.Namespace) -> int:
    """Runs a subcommand: user errors exit 2 with the message (an agent's exception: after
    the agent's own traceback), bugs exit 1 and say so. ``--quiet`` also silences numba's
    compiling notice."""
    try:
        with silenced() if getattr(args, "quiet", False) else nullcontext():
            return fn(args)
    except AgentError as exc:
        if exc.agent_traceback:
            err(exc.agent_traceback.rstrip())
        err(f"error: {exc}")
        return 2
    except InvalidInputError as exc:
        err(exc.render(limit=None if getattr(args, "all_errors", False) else 20))
        return 2
    except VLNEvalError as exc:
        err(f"error: {exc}")
        return 2
    except KeyboardInterrupt:
        err("interrupted")
        return 130
    except Exception:  # noqa: BLE001 - the last line of defence: a bug, reported as one
        err(traceback.format_exc())
        err(
            f"internal error: this is a bug in vlneval, please report it with the text above at {ISSUES}"
        )
        return 1
