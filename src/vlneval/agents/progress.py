"""Progress over episodes on stderr: a rich bar on a terminal, plain lines in logs.

When stderr is not a terminal (a SLURM or CI log, a pipe), a bar's redraws would fill the
file with control codes; instead one line is written at the start, then at most every
``interval`` seconds, and at the end (episodes and shards alike)::

    running r2r-ce: 1200/2349 episodes (51%), 41.2 episodes/s, 0:29 elapsed, 0:28 left
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TextIO

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

__all__ = ["episode_progress", "progress_line"]


@contextmanager
def episode_progress(
    total: int,
    *,
    enabled: bool,
    label: str = "episodes",
    interval: float = 30.0,
    stream: TextIO | None = None,
    done: int = 0,
    unit: str = "episodes",
) -> Iterator[Callable[[int], None]]:
    """Yields ``advance(n)``; shows progress on ``stream`` (default stderr) when ``enabled``:
    a bar on a terminal, else a line every ``interval`` seconds. ``done`` of ``total`` are
    done already (a resumed shard); the rate counts the others that ended after the first one
    (whose set-up, twin worlds built and kernels compiled, is no episode's pace): none before
    a second one ends, all of them in the last line. ``unit`` names what is counted.

    Example:
        >>> import io
        >>> log = io.StringIO()
        >>> with episode_progress(3, enabled=True, label="demo", stream=log) as advance:
        ...     advance(3)
        >>> log.getvalue().splitlines()[-1].startswith("demo: 3/3 episodes (100%)")
        True
    """
    if not enabled:
        yield lambda n: None
        return
    out = stream if stream is not None else sys.stderr
    isatty = getattr(out, "isatty", None)
    if isatty and isatty():
        columns = (TextColumn(label), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn())
        with Progress(*columns, console=Console(file=out), transient=True) as bar:
            task = bar.add_task(label, total=total, completed=done)
            yield lambda n: bar.advance(task, n)
        return
    start = last = time.monotonic()
    count = done
    basis: tuple[int, float] | None = None  # (episodes, time) when the first one ended

    def write(now: float, stopped: bool = False) -> None:
        # no episode after the first yet: no rate, but the last line's counts them all
        first_only = basis is None or (count == basis[0] and count >= total)
        n0, t0 = (done, start) if basis is None or first_only else basis
        line = progress_line(
            label, count, total, now - start, before=n0, since=t0 - start, stopped=stopped,
            unit=unit,
        )  # fmt: skip
        out.write(line + "\n")
        out.flush()

    def advance(n: int) -> None:
        nonlocal count, last, basis
        count += n
        now = time.monotonic()
        if basis is None:
            basis = (count, now)
        if now - last >= interval and count < total:
            last = now
            write(now)

    write(start)
    try:
        yield advance
    except BaseException:  # an error follows: no time left to promise
        write(time.monotonic(), stopped=True)
        raise
    write(time.monotonic())


def progress_line(
    label: str,
    done: int,
    total: int,
    elapsed: float,
    *,
    before: int = 0,
    since: float = 0.0,
    stopped: bool = False,
    unit: str = "episodes",
) -> str:
    """One plain progress line (the rate over the ``done - before`` episodes of this process
    that ended after ``since`` of the ``elapsed`` seconds; ``stopped``: the run failed, the
    time left is not said).

    Example:
        >>> progress_line("running", 50, 200, 10.0)
        'running: 50/200 episodes (25%), 5.0 episodes/s, 0:10 elapsed, 0:30 left'
        >>> progress_line("shard 1/4", 150, 200, 10.0, before=100)
        'shard 1/4: 150/200 episodes (75%), 5.0 episodes/s, 0:10 elapsed, 0:10 left'
        >>> progress_line("episodes", 1017, 1021, 10.0)
        'episodes: 1017/1021 episodes (99%), 101.7 episodes/s, 0:10 elapsed, 0:00 left'
        >>> progress_line("running", 50, 200, 10.0, stopped=True)
        'running: 50/200 episodes (25%), 5.0 episodes/s, 0:10 elapsed, stopped'
        >>> progress_line("running r2r-twin", 11, 2349, 46.0, before=1, since=36.0)
        'running r2r-twin: 11/2349 episodes (0%), 1.0 episodes/s, 0:46 elapsed, 38:58 left'
        >>> progress_line("scoring", 12, 48, 6.0, unit="files")
        'scoring: 12/48 files (25%), 2.0 files/s, 0:06 elapsed, 0:18 left'
    """
    rate = (done - before) / (elapsed - since) if elapsed > since else 0.0
    share = f"{100 * done // total}%" if total else "100%"  # floored: 99.6% is not done
    left = _clock((total - done) / rate) if rate > 0 else "?"
    return (
        f"{label}: {done}/{total} {unit} ({share}), {rate:.1f} {unit}/s, "
        f"{_clock(elapsed)} elapsed, {'stopped' if stopped else left + ' left'}"
    )


def _clock(seconds: float) -> str:
    s = int(round(seconds))
    h, rest = divmod(s, 3600)
    m, s = divmod(rest, 60)
    return f"{h}:{m:02d}:{s:02d}" if h else f"{m}:{s:02d}"
