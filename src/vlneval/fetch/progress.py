"""Download progress on stderr: a rich bar on a terminal, plain lines otherwise.

Plain lines (stderr is a file or a pipe, e.g. a batch job's log) say when each task starts and
ends, with a line at 25, 50 and 75 % of a large task, so that a log shows progress without
carriage-return noise.

Example:
    >>> import io
    >>> buf = io.StringIO()
    >>> p = make_progress(buf)
    >>> t = p.start("r2r/R2R_test.json", 20_000_000)
    >>> p.advance(t, 12_000_000)
    >>> p.advance(t, 8_000_000)
    >>> p.finish(t)
    >>> print(buf.getvalue().strip())
    fetching r2r/R2R_test.json (20.0 MB)
      r2r/R2R_test.json: 50% of 20.0 MB
    done r2r/R2R_test.json (20.0 MB)
"""

from __future__ import annotations

import sys
import threading
from typing import Any, Protocol, TextIO

__all__ = ["Progress", "make_progress", "human_size"]

#: Tasks of at least this many bytes also print a line at 25, 50 and 75 %.
QUARTERS_FROM = 10_000_000


def human_size(n: int | None) -> str:
    """A byte count for people (decimal units).

    Example:
        >>> human_size(3996671), human_size(None)
        ('4.0 MB', 'size unknown')
    """
    if n is None:
        return "size unknown"
    if n < 1000:
        return f"{n} B"
    value = n / 1000
    for unit in ("kB", "MB"):
        if value < 1000:
            return f"{value:.1f} {unit}"
        value /= 1000
    return f"{value:.1f} GB"


class Progress(Protocol):
    """What the fetcher reports to: tasks with byte totals (None when unknown)."""

    def start(self, label: str, total: int | None) -> int: ...
    def advance(self, task: int, nbytes: int) -> None: ...
    def finish(self, task: int) -> None: ...
    def message(self, text: str) -> None: ...
    def close(self) -> None: ...


class PlainProgress:
    """Plain lines: start, every 25 % of a task with a known size, end."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream
        self._lock = threading.Lock()
        self._tasks: dict[int, list[Any]] = {}  # id -> [label, total, done, quarters shown]

    def _say(self, text: str) -> None:
        with self._lock:
            print(text, file=self.stream, flush=True)

    def start(self, label: str, total: int | None) -> int:
        with self._lock:
            task = len(self._tasks)
            self._tasks[task] = [label, total, 0, 0]
        self._say(f"fetching {label} ({human_size(total)})")
        return task

    def advance(self, task: int, nbytes: int) -> None:
        with self._lock:  # several files of one task arrive on worker threads
            rec = self._tasks[task]
            rec[2] += nbytes
            total = rec[1]
            reached = min(4 * rec[2] // total, 4) if total else 0
            # quarters only for large tasks; the end is the "done" line
            news = reached > rec[3] and reached < 4 and total >= QUARTERS_FROM
            rec[3] = max(rec[3], reached)
        if news:
            self._say(f"  {rec[0]}: {25 * reached}% of {human_size(total)}")

    def finish(self, task: int) -> None:
        label, total, done, _ = self._tasks[task]
        self._say(f"done {label} ({human_size(total if total is not None else done)})")

    def message(self, text: str) -> None:
        self._say(text)

    def close(self) -> None:
        pass


class RichProgress:
    """A rich progress bar per task (bytes, speed, time left)."""

    def __init__(self, stream: TextIO) -> None:
        from rich.console import Console  # deferred: rich
        from rich.progress import (  # deferred: rich
            BarColumn,
            DownloadColumn,
            TextColumn,
            TimeRemainingColumn,
            TransferSpeedColumn,
        )
        from rich.progress import Progress as _Rich  # deferred: rich

        self._console = Console(file=stream, highlight=False)
        self._bar = _Rich(
            TextColumn("{task.description}"),
            BarColumn(),
            DownloadColumn(),
            TransferSpeedColumn(),
            TimeRemainingColumn(),
            console=self._console,
            transient=False,
        )
        self._bar.start()

    def start(self, label: str, total: int | None) -> int:
        return int(self._bar.add_task(label, total=total))

    def advance(self, task: int, nbytes: int) -> None:
        from rich.progress import TaskID  # deferred: rich

        self._bar.advance(TaskID(task), nbytes)

    def finish(self, task: int) -> None:
        from rich.progress import TaskID  # deferred: rich

        tid = TaskID(task)
        done = next(t.completed for t in self._bar.tasks if t.id == tid)
        self._bar.update(tid, total=done)  # an unknown size becomes a full bar

    def message(self, text: str) -> None:
        self._console.print(text, markup=False, highlight=False, soft_wrap=True)

    def close(self) -> None:
        self._bar.stop()


def make_progress(stream: TextIO | None = None) -> Progress:
    """A rich bar when ``stream`` (default stderr) is a terminal, else plain lines."""
    stream = stream if stream is not None else sys.stderr
    isatty = getattr(stream, "isatty", None)
    if isatty is not None and isatty():
        return RichProgress(stream)
    return PlainProgress(stream)
