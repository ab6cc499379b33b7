"""Arguments and error handling shared by the subcommands."""

from __future__ import annotations

import argparse
import sys
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

from vlneval.errors import InvalidInputError, VLNEvalError
from vlneval.tasks.base import Option

__all__ = [
    "add_data_args",
    "add_scoring_args",
    "add_task_option_args",
    "given_task_options",
    "run_guarded",
    "load_declared",
    "err",
]

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
        choices=["auto", "triple", "nested", "plain"],
        help="how trajectories are written (default: detected)",
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
    and help of the task that declares it, or each task's choices when several do."""
    for name, declared in cli_task_options().items():
        flag = declared[0][1].flag
        if len(declared) == 1:
            option = declared[0][1]
            choices = list(option.choices) or None
            p.add_argument(flag, dest=name, default=None, choices=choices, help=option.help)
            continue
        by_choices: dict[tuple[str, ...], list[str]] = {}
        for task, o in declared:
            by_choices.setdefault(o.choices, []).append(task)
        each = "; ".join(f"{', '.join(t)}: {', '.join(c) or 'any'}" for c, t in by_choices.items())
        p.add_argument(flag, dest=name, default=None, help=f"{name.replace('_', ' ')} ({each})")


def given_task_options(args: argparse.Namespace) -> dict[str, Any] | None:
    """The task options set on the command line (only those set), or None."""
    names = cli_task_options()
    given = {n: getattr(args, n) for n in names if getattr(args, n, None) is not None}
    return given or None


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
    """Runs a subcommand: user errors exit 2 with the message, bugs exit 1 and say so."""
    try:
        return fn(args)
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
