"""Arguments and error handling shared by the subcommands."""

from __future__ import annotations

import argparse
import sys
import traceback
from collections.abc import Callable
from contextlib import nullcontext
from pathlib import Path
from typing import Any

from vlneval._compiling import silenced
from vlneval.errors import AgentError, InvalidInputError, VLNEvalError
from vlneval.io import load_json, path_option
from vlneval.reports.paper import TABLE_FORMATS
from vlneval.tasks import TASKS, get_task
from vlneval.tasks.base import Option

__all__ = [
    "add_data_args",
    "add_scoring_args",
    "add_format_arg",
    "add_shard_args",
    "add_agent_arg",
    "add_executor_args",
    "print_table",
    "summary_kind",
    "summary_kind_of",
    "add_task_option_args",
    "given_task_options",
    "run_guarded",
    "load_declared",
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
    p.add_argument(
        "--data-root", default=None, type=path_option, help="data folder (default: $VLNEVAL_DATA)"
    )
    p.add_argument("--episodes", default=None, help="episodes file (overrides the data root)")
    p.add_argument(
        "--graphs",
        default=None,
        type=path_option,
        help="connectivity folder (overrides the data root)",
    )


def add_shard_args(p: argparse.ArgumentParser) -> None:
    """--shard, --balance-scans, --resume, --checkpoint, --agent-arg."""
    p.add_argument(
        "--shard",
        default=None,
        metavar="i/n|auto",
        help="run shard i of n (0-based) into NAME.shard-i-of-n.jsonl and a manifest beside --out; "
        "auto: from torchrun (RANK/WORLD_SIZE) or SLURM (array, srun) variables (none set: an "
        "unsharded run into --out). "
        "Merge the shards with `vlneval merge`",
    )
    p.add_argument(
        "--balance-scans",
        action="store_true",
        help="with --shard: keep each scan's episodes on one shard where possible",
    )
    p.add_argument(
        "--resume",
        action="store_true",
        help="with --shard: continue a killed shard (episodes already written are kept)",
    )
    p.add_argument(
        "--checkpoint",
        default=None,
        metavar="FILE",
        help="model checkpoint (file or folder): hashed into the protocol card (and a shard's "
        "manifest) and passed to the agent's constructor as checkpoint=PATH",
    )
    add_agent_arg(p)


def add_agent_arg(p: argparse.ArgumentParser) -> None:
    """--agent-arg KEY=VALUE (repeatable)."""
    p.add_argument(
        "--agent-arg",
        action="append",
        default=None,
        metavar="KEY=VALUE",
        help="keyword argument of the agent's constructor (repeatable; JSON values)",
    )


def add_executor_args(p: argparse.ArgumentParser) -> None:
    """--executor and the Ray options (vlneval.distributed.executors.ray_executor)."""
    g = p.add_argument_group('executor (pip install "vlneval[ray]" for ray)')
    g.add_argument(
        "--executor",
        choices=["local", "ray"],
        default="local",
        help="local: this process (default); ray: one actor per agent replica on a Ray cluster, "
        "fed chunks of episodes (the run is shard 0/1, or the --shard given, and is merged into "
        "--out when no --shard is given)",
    )
    g.add_argument(
        "--address",
        default=None,
        help="ray: the cluster (auto: the one `ray start` runs here; default: a new local one)",
    )
    g.add_argument("--num-actors", type=int, default=2, metavar="K", help="ray: agent replicas")
    g.add_argument("--actor-cpus", type=float, default=1.0, help="ray: CPUs per actor (default 1)")
    g.add_argument(
        "--actor-gpus",
        type=float,
        default=0.0,
        help="ray: GPUs per actor (0.5: two actors share one; 2 or more: a placement-group "
        "bundle per actor, on one node)",
    )
    g.add_argument("--chunk", type=int, default=8, help="ray: episodes per task (default 8)")
    g.add_argument(
        "--max-retries",
        type=int,
        default=3,
        help="ray: times a chunk is re-run after its actor died (default 3)",
    )


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
    return get_task(args.task).check_options(given)


def add_format_arg(p: argparse.ArgumentParser, *, rows: bool = True) -> None:
    """``--format``: of the table on stdout (text, markdown, latex) and, with ``rows`` and
    ``--per-episode -``, of the per-episode table (csv, jsonl)."""
    text = "the table on stdout: text (default), markdown or latex"
    if rows:
        text += "; with --per-episode -: the rows on stdout as csv or jsonl"
    choices = TABLE_FORMATS + (ROW_FORMATS if rows else ())
    p.add_argument("--format", default=None, choices=choices, help=text)


def print_table(text: str) -> None:
    """Writes a table to stdout."""
    sys.stdout.write(text)


def summary_kind(path: str) -> str | None:
    """What ``path`` holds when it is an output of ``vlneval score --json`` rather than
    predictions (:func:`summary_kind_of`), else None. Only a regular file is read: a FIFO's
    bytes are gone after the first read, and a second one waits for a writer; a file that
    cannot be read is None (the first error stands)."""
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


def load_declared(path: str | None) -> dict[str, Any] | None:
    """The self-declared protocol fields of ``--protocol FILE``."""
    if not path:
        return None
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
