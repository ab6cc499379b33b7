"""Entry point of the ``vlneval`` command."""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from collections.abc import Sequence

from vlneval import __version__
from vlneval.cli import data, info, merge, report, run, score, serve, serve_agent, sweep
from vlneval.cli.common import run_guarded

__all__ = ["main", "console", "build_parser"]

SUBCOMMANDS = [score, info, serve, report, run, merge, sweep, data, serve_agent]


def build_parser() -> argparse.ArgumentParser:
    """The argument parser with every subcommand."""
    parser = argparse.ArgumentParser(
        prog="vlneval", description="Evaluate Vision-and-Language Navigation agents."
    )
    parser.add_argument("--version", action="version", version=f"vlneval {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)
    for module in SUBCOMMANDS:
        module.register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Runs the command; returns the exit code (0 ok, 2 bad input, 1 internal error)."""
    args = build_parser().parse_args(argv)
    return run_guarded(args.func, args)


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
            with contextlib.suppress(OSError, ValueError, AttributeError):
                os.dup2(os.open(os.devnull, os.O_WRONLY), stream.fileno())
        except OSError as exc:
            with contextlib.suppress(OSError):
                sys.stderr.write(f"error: could not write the output: {exc}\n")
                sys.stderr.flush()
            code = code or 120
    return code


if __name__ == "__main__":
    console()
