"""The arguments of the commands of :mod:`vlneval.cli.sweep` (imported without it: a
command's ``--help`` loads no library module it runs)."""

from __future__ import annotations

import argparse

__all__ = ["register"]


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Adds ``sweep plan``, ``sweep run-unit``, ``sweep status`` and ``sweep report``."""
    p = sub.add_parser(
        "sweep",
        help="evaluate checkpoints x seeds x shards as independent units (SLURM arrays, loops)",
        description="Plan the units once, run each (a SLURM array task, a Ray task or a bash "
        "loop; finished units are skipped, killed ones resumed), then report one table.",
    )
    s = p.add_subparsers(dest="sweep_command", required=True)

    a = s.add_parser(
        "plan",
        help="write the units file and print the sbatch line",
        description="Example: vlneval sweep plan --units units.jsonl --runs-dir runs "
        "--checkpoints ckpt/*.pth --seeds 0 1 2 --shards 4 -- run --task r2r --split "
        "val_unseen --agent mypkg.agent:Agent",
    )
    a.add_argument("--units", required=True, help="units file to write (JSON lines)")
    a.add_argument("--runs-dir", required=True, help="folder of the runs: DIR/CKPT/seed-S/")
    a.add_argument("--checkpoints", nargs="+", default=None, metavar="CKPT",
                   help="checkpoint files or folders (passed to the agent as checkpoint=PATH); a quoted "
                   "pattern ('ckpt/ckpt.*.pth') is expanded in natural order")  # fmt: skip
    a.add_argument("--seeds", nargs="+", type=int, default=[0], help="seeds (default 0)")
    a.add_argument("--shards", type=int, default=1, help="shards per (checkpoint, seed) run")
    a.add_argument("--max-parallel", type=int, default=None, help="sbatch array throttle (%%K)")
    a.add_argument("--no-agent-check", action="store_true",
                   help="do not import the agent here to check that it takes checkpoint= (the "
                   "check imports its module and what it imports, torch and model code, on this "
                   "machine: a SLURM login node)")  # fmt: skip
    a.add_argument("command", nargs=argparse.REMAINDER,
                   help="after --: the run command, e.g. -- run --task demo --agent random")  # fmt: skip
    a.set_defaults(func="vlneval.cli.sweep:cmd_plan")

    r = s.add_parser("run-unit", help="run one unit (default: $SLURM_ARRAY_TASK_ID), or --all")
    r.add_argument("units", help="units file")
    r.add_argument("--unit", type=int, default=None, help="unit number (line of the file)")
    r.add_argument("--all", action="store_true", help="run every unfinished unit, in order")
    r.set_defaults(func="vlneval.cli.sweep:cmd_run_unit")

    t = s.add_parser("status", help="count finished, started and pending units")
    t.add_argument("units", help="units file")
    t.add_argument("--max-parallel", type=int, default=None, help="sbatch array throttle (%%K)")
    t.set_defaults(func="vlneval.cli.sweep:cmd_status")

    q = s.add_parser("report", help="merge, score and tabulate every finished run")
    q.add_argument("units", help="units file")
    q.add_argument("--csv", default=None, help="long table: checkpoint, step, seed, metric, ...")
    q.add_argument("--markdown", default=None,
                   help="markdown tables (default: stdout, when neither --csv nor --tensorboard is given)")  # fmt: skip
    q.add_argument("--tensorboard", default=None, metavar="LOGDIR",
                   help="scalars eval_{split}_{metric} per checkpoint step (needs tensorboardX, or tensorboard with torch)")  # fmt: skip
    q.add_argument("--plot", default=None, metavar="PNG",
                   help="metric-vs-checkpoint plot: mean over seeds by step, interval band, the "
                   "selected checkpoint (best mean of the first --plot-metrics) marked")  # fmt: skip
    q.add_argument("--plot-metrics", nargs="+", default=None, metavar="METRIC",
                   help="metrics of --plot, which it needs (default: the one the task ranks by)")  # fmt: skip
    q.add_argument("--resamples", type=int, default=1000, help="bootstrap resamples (1000)")
    q.add_argument("--confidence", type=float, default=0.95, help="interval level (0.95)")
    q.add_argument("--by-episode", action="store_true",
                   help="resample episodes even when episodes share a path; by default whole "
                   "paths are resampled (R2R's three instructions of one path are not independent)")  # fmt: skip
    q.set_defaults(func="vlneval.cli.sweep:cmd_report")
