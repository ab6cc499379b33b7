"""``vlneval sweep``: checkpoints x seeds x shards as work units for SLURM, Ray or a loop."""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from pathlib import Path
from typing import Any

from vlneval.cli.common import err
from vlneval.cli.main import build_parser, main
from vlneval.cli.run_common import check_numbers
from vlneval.cli.scoring import scorer_on_first_use
from vlneval.diagnostics import column_intervals, path_groups
from vlneval.distributed.checkpoint import check_checkpoint_use, parse_agent_args
from vlneval.distributed.sweep import (
    array_ranges,
    expand_files,
    plan_units,
    read_units,
    unit_status,
    write_units,
)
from vlneval.distributed.sweep_report import (
    selection,
    selection_note,
    sweep_table,
    to_markdown,
    to_rows,
    unstepped,
    write_tensorboard,
)
from vlneval.errors import VLNEvalError
from vlneval.io import atomic_write_bytes, atomic_write_text
from vlneval.reports.plots_base import figure_png
from vlneval.reports.plots_sweep import plot_sweep
from vlneval.reports.tables import write_rows
from vlneval.tasks import get_task

__all__ = ["cmd_plan", "cmd_run_unit", "cmd_status", "cmd_report"]


def _run_args(command: list[str]) -> argparse.Namespace:
    """The run command of a sweep, parsed as ``vlneval`` parses it."""
    try:
        return build_parser().parse_args([*command, "--out", "x.json"])
    except SystemExit:
        raise VLNEvalError(
            f"the sweep's command does not parse: vlneval {' '.join(command)}"
        ) from None


def _check_runnable(
    run: argparse.Namespace, checkpoints: list[str], seeds: list[int], *, agent: bool
) -> None:
    """Refuses, before any unit is written, what every unit's ``vlneval run`` would refuse:
    an unknown task (with the closest name), a negative seed, an impossible ``--max-steps``,
    a checkpoint that is not there and, with ``agent``, a malformed ``--agent-arg`` (for a
    remote agent too) and an agent that cannot take the checkpoints
    (:func:`~vlneval.distributed.checkpoint.check_checkpoint_use`, which imports the agent's
    module)."""
    get_task(run.task)
    check_numbers(run, tuple(seeds))
    for ckpt in checkpoints:
        if not Path(ckpt).exists():
            raise VLNEvalError(f"--checkpoints {ckpt}: no such file or folder")
    if agent:
        agent_args = parse_agent_args(getattr(run, "agent_arg", None))
        check_checkpoint_use(run.agent, checkpoints, agent_args, said="--checkpoints")


def _array_line(units_file: str, pending: list[int], throttle: int | None) -> str:
    limit = f"%{throttle}" if throttle else ""
    return (
        f"sbatch --array={array_ranges(pending)}{limit} --job-name=vlneval-sweep "
        f"--output=vlneval-sweep-%A_%a.log --wrap='vlneval sweep run-unit {units_file}'"
    )


def cmd_plan(args: argparse.Namespace) -> int:
    """Writes the units; prints the sbatch line (stdout) and the loop alternative (stderr)."""
    command = [c for c in args.command if c != "--"] if args.command[:1] == ["--"] else args.command
    checkpoints = expand_files(args.checkpoints, "--checkpoints")[0] if args.checkpoints else []
    _check_runnable(_run_args(command), checkpoints, args.seeds, agent=not args.no_agent_check)
    units = plan_units(command, checkpoints=checkpoints or [None], seeds=args.seeds,
                       shards=args.shards, runs_dir=args.runs_dir)  # fmt: skip
    write_units(args.units, units)
    pending = [u.unit for u in units if unit_status(u) != "complete"]
    n_ckpt = len(checkpoints or [None])
    err(
        f"wrote {len(units)} units to {args.units} ({n_ckpt} checkpoints x {len(args.seeds)} "
        f"seeds x {args.shards} shards; {len(units) - len(pending)} already complete)"
    )
    if pending:
        print(_array_line(args.units, pending, args.max_parallel))
    err(f"or, on one machine: vlneval sweep run-unit {args.units} --all")
    err(f"then: vlneval sweep report {args.units} --csv sweep.csv")
    return 0


def cmd_run_unit(args: argparse.Namespace) -> int:
    """Runs the unit (skipped when complete); with --all every unfinished one."""
    units = read_units(args.units)
    if args.all:
        todo = units
    else:
        k = args.unit
        if k is None:
            task = os.environ.get("SLURM_ARRAY_TASK_ID")
            if task is None or not task.strip().isdigit():
                raise VLNEvalError("pass --unit K or --all (or run as a SLURM array task)")
            k = int(task)
        if not 0 <= k < len(units):
            raise VLNEvalError(f"{args.units}: no unit {k} (units 0..{len(units) - 1})")
        todo = [units[k]]
    code = 0
    for u in todo:
        if unit_status(u) == "complete":
            err(f"unit {u.unit}: complete, skipped ({u.out} shard {u.shard})")
            continue
        err(f"unit {u.unit}: vlneval {' '.join(u.argv)}")
        Path(u.out).parent.mkdir(parents=True, exist_ok=True)  # the sweep's own run folders
        code = main(u.argv) or code
    return code


def cmd_status(args: argparse.Namespace) -> int:
    """Counts units by status; prints the sbatch line of the unfinished ones."""
    units = read_units(args.units)
    status = {u.unit: unit_status(u) for u in units}
    counts = {
        s: sum(1 for v in status.values() if v == s) for s in ("complete", "running", "pending")
    }
    print(", ".join(f"{v} {k}" for k, v in counts.items()) + f" of {len(units)} units")
    pending = [k for k, v in status.items() if v != "complete"]
    if pending:
        print(_array_line(args.units, pending, args.max_parallel))
    return 0


def cmd_report(args: argparse.Namespace) -> int:
    """Merges and scores finished runs; writes the tables. No finished run: an error, and
    nothing written."""
    if args.plot_metrics and not args.plot:
        raise VLNEvalError("--plot-metrics chooses the metrics of --plot PNG: give --plot too")
    units = read_units(args.units)
    if not units:
        raise VLNEvalError(f"{args.units}: no units")
    run = _run_args(units[0].argv[: units[0].argv.index("--seed")])
    with contextlib.ExitStack() as stack:  # one scorer, opened on the first finished run
        scorer = scorer_on_first_use(run, stack)
        table = sweep_table(units, lambda path: scorer().score(path), intervals=column_intervals,
                            n_resamples=args.resamples, confidence=args.confidence,
                            groups=None if args.by_episode else path_groups)  # fmt: skip
        ranked = _ranked_by(scorer(), table) if table.summary else ""
    if not table.runs:
        done = sum(unit_status(u) == "complete" for u in units)
        raise VLNEvalError(
            f"{args.units}: nothing to report: no run (checkpoint x seed) has all its units "
            f"complete ({done} of {len(units)} units complete); run them first: vlneval sweep "
            f"run-unit {args.units} --all (or the sbatch line of: vlneval sweep status "
            f"{args.units})"
        )
    for label, seed, left in table.incomplete:
        err(f"note: {label} seed {seed}: {left} units not complete, left out")
    metrics = (args.plot_metrics or [ranked]) if args.plot else []
    table.selection = selection(table, (args.plot_metrics or [ranked])[0])
    png = _plot_png(table, metrics) if metrics else None  # a bad metric: nothing written
    if args.csv:
        write_rows(args.csv, to_rows(table))
    text = to_markdown(table)
    if args.markdown:
        atomic_write_text(args.markdown, text)
    elif not args.csv and not args.tensorboard:
        sys.stdout.write(text)
    if args.tensorboard:
        n = write_tensorboard(table, args.tensorboard)
        err(f"wrote {n} scalars to {args.tensorboard}")
        if unstepped(table):
            err(f"note: {', '.join(unstepped(table))}: no number in the name, so no step: "
                "left out of TensorBoard")  # fmt: skip
    if png is not None:
        atomic_write_bytes(args.plot, png)
        err(f"wrote {args.plot}: {', '.join(metrics)} by checkpoint")
    if table.selection:
        err("note: " + selection_note(table.selection))
    return 0


def _ranked_by(scorer: Any, table: Any) -> str:
    """The metric the task ranks by, else the sweep's first metric."""
    ranked = scorer.task.ranking_metric(scorer.profile)
    names = list(table.summary[0]["metrics"])
    return ranked if ranked in names else names[0]


def _plot_png(table: Any, metrics: list[str]) -> bytes:
    """The sweep's plot (:func:`~vlneval.reports.plots_sweep.plot_sweep`) as PNG bytes."""
    return figure_png(plot_sweep(table, metrics))
