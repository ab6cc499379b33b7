"""Arguments and error handling shared by the subcommands."""

from __future__ import annotations

import argparse
import sys
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

from vlneval.errors import InvalidInputError, VLNEvalError

__all__ = ["add_data_args", "add_scoring_args", "run_guarded", "load_declared", "err"]

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
    p.add_argument(
        "--path-type",
        default=None,
        choices=["planner_path", "player_path", "trusted_path"],
        help="NDH ground-truth path (default planner_path, as the official CVDN scorer)",
    )
    p.add_argument(
        "--data-version",
        default=None,
        help="dataset release where a benchmark has several (REVERIE: v2, the default, or v1)",
    )
    p.add_argument(
        "--angle-units",
        default=None,
        choices=["normalised", "radians"],
        help="SOON predicted angles: normalised (default, official) or radians (converted as DUET)",
    )


def load_declared(path: str | None) -> dict[str, Any] | None:
    """The self-declared protocol fields of ``--protocol FILE``."""
    if not path:
        return None
    from vlneval.data.jsonio import load_json

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
