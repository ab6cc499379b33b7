"""Entry point of the ``vlneval`` command."""

from __future__ import annotations

import argparse
import contextlib
import functools
import importlib
import os
import select
import stat
import sys
from collections.abc import Callable, Sequence
from types import ModuleType

from vlneval import __version__
from vlneval.cli.common import run_guarded

__all__ = ["main", "console", "build_parser", "SUBCOMMANDS", "COMMANDS", "HELP"]

#: The modules of ``vlneval.cli.parsers`` that register subcommands, in ``--help`` order.
SUBCOMMANDS = ("score", "info", "serve", "report", "run", "merge", "sweep", "data", "serve_agent")

#: The module that registers each command (a command imports only its own module).
COMMANDS = {
    "score": "score", "validate": "score", "tasks": "info", "profiles": "info",
    "serve": "serve", "worker": "serve", "submit": "serve", "admin": "serve",
    "report": "report", "compare": "report", "aggregate": "report", "run": "run",
    "agents": "run", "merge": "merge", "sweep": "sweep", "data": "data",
    "serve-agent": "serve_agent",
}  # fmt: skip

#: Each command's line in ``vlneval --help``, in that order, which is drawn from this table
#: alone (no command module imported); a test holds it to what the modules register.
HELP = {
    "score": "score a predictions file as the official scorer does",
    "validate": "check a predictions file as a leaderboard does",
    "tasks": "list the tasks",
    "profiles": "list the scoring profiles and their rules",
    "serve": "run the evaluation server (web app and scoring workers)",
    "worker": "score queued submissions (run one or more beside serve)",
    "submit": "submit a predictions file to an evaluation server",
    "admin": "organiser commands: challenges, phases, teams, rescoring",
    "report": "score a predictions file and write a self-contained HTML report",
    "compare": "paired comparison of predictions files on the same episodes (A the baseline)",
    "aggregate": "mean, std and interval of each metric over several runs (seeds)",
    "run": "run an agent on a split: predictions, protocol card, optional score",
    "agents": "list the registered agents and environments",
    "merge": "merge the shards of a run (vlneval run --shard) into one predictions file",
    "sweep": "evaluate checkpoints x seeds x shards as independent units (SLURM arrays, loops)",
    "data": "fetch benchmark data and list what is there",
    "serve-agent": "serve an agent over HTTP for `vlneval run --agent http://host:port`",
}


def _module(name: str) -> ModuleType:
    return importlib.import_module(f"vlneval.cli.parsers.{name}")


def _top_parser() -> tuple[argparse.ArgumentParser, argparse._SubParsersAction]:  # type: ignore[type-arg]
    parser = argparse.ArgumentParser(
        prog="vlneval", description="Evaluate Vision-and-Language Navigation agents."
    )
    parser.add_argument("--version", action="version", version=f"vlneval {__version__}")
    return parser, parser.add_subparsers(dest="command", required=True)


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The argument parser with every subcommand, or with those of module ``only`` alone (the
    module of the command being run: its parser is the same, and the others are not imported)."""
    parser, sub = _top_parser()
    for name in SUBCOMMANDS if only is None else (only,):
        _module(name).register(sub)
    return parser


def listing_parser() -> argparse.ArgumentParser:
    """The parser of ``vlneval --help``, ``--version`` and a command line naming no command:
    each command with its line of :data:`HELP` and no arguments, so that no command's module
    is imported (``vlneval COMMAND --help`` shows the command's own)."""
    parser, sub = _top_parser()
    for name, text in HELP.items():
        sub.add_parser(name, help=text)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Runs the command; returns the exit code (0 ok, 2 bad input, 1 internal error)."""
    given = list(sys.argv[1:] if argv is None else argv)
    module = COMMANDS.get(given[0]) if given else None
    if module is None:  # --help, --version, or a command after options (``-- score``)
        module = COMMANDS[listing_parser().parse_args(given).command]
    args = build_parser(module).parse_args(given)
    return run_guarded(_pipe_safe(command_function(args.func)), args)


def command_function(func: str | Callable[[argparse.Namespace], int]) -> Callable[..., int]:
    """The function a command's parser names as ``"vlneval.cli.MODULE:FUNCTION"``, imported
    now (only the command that runs loads its module and the library it needs)."""
    if callable(func):
        return func
    module, _, name = func.partition(":")
    return getattr(importlib.import_module(module), name)  # type: ignore[no-any-return]


def _pipe_safe(fn: Callable[[argparse.Namespace], int]) -> Callable[[argparse.Namespace], int]:
    """``fn``, ending quietly (exit 0, as :func:`_flushed` does) when its reader closed stdout
    or stderr (``vlneval profiles | head``); any other broken pipe (a remote agent's socket)
    stays an error."""

    @functools.wraps(fn)
    def call(args: argparse.Namespace) -> int:
        try:
            return fn(args)
        except BrokenPipeError:
            closed = [s for s in (sys.stdout, sys.stderr) if _reader_gone(s)]
            if not closed:
                raise
            for stream in closed:
                _to_devnull(stream)
            return 0

    return call


def _reader_gone(stream: object) -> bool:
    """Whether ``stream`` is a pipe or socket whose reading end is closed."""
    try:
        fd = stream.fileno()  # type: ignore[attr-defined]
        mode = os.fstat(fd).st_mode
    except (AttributeError, OSError, ValueError):
        return False
    if not (stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)):
        return False
    try:
        poller = select.poll()
    except AttributeError:  # no poll (Windows): a pipe that raised is gone
        return True
    poller.register(fd, select.POLLOUT)
    return any(ev & (select.POLLERR | select.POLLHUP) for _, ev in poller.poll(0))


def _to_devnull(stream: object) -> None:
    """Points a stream whose reader is gone at the null device, so that later writes and the
    interpreter's flush at exit do not fail again."""
    with contextlib.suppress(OSError, ValueError, AttributeError):
        os.dup2(os.open(os.devnull, os.O_WRONLY), stream.fileno())  # type: ignore[attr-defined]


def console() -> None:
    """The ``vlneval`` command: :func:`main`, then exit with its code once the output is
    flushed (see :func:`_flushed`)."""
    raise SystemExit(_flushed(main()))


def _flushed(code: int) -> int:
    """Flushes stdout and stderr; the exit code, 120 (as Python's own exit uses) when output
    could not be written, e.g. to a full disk. A closed pipe (``vlneval ... | head``) is not
    an error."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except BrokenPipeError:
            # nobody reads any more: the interpreter's own flush at exit must not fail again
            _to_devnull(stream)
        except OSError as exc:
            with contextlib.suppress(OSError):
                sys.stderr.write(f"error: could not write the output: {exc}\n")
                sys.stderr.flush()
            code = code or 120
    return code


if __name__ == "__main__":
    console()
