"""Progress of a shard on stderr: a rich bar on a terminal, plain lines in a log file.

A SLURM or torchrun log is not a terminal; there a bar's carriage returns become one unreadable
line, so the shard prints ``shard 2/7: 120/330 episodes (36%), 1.9 episodes/s, 1m50s left``
every ``interval`` seconds and once at the end.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TextIO

from vlneval.agents.progress import progress_bar

__all__ = ["shard_progress", "format_seconds"]


def format_seconds(seconds: float) -> str:
    """``1h02m``, ``3m05s`` or ``12s``.

    Example:
        >>> format_seconds(3725), format_seconds(185), format_seconds(12.4)
        ('1h02m', '3m05s', '12s')
    """
    s = int(round(seconds))
    if s >= 3600:
        return f"{s // 3600}h{s % 3600 // 60:02d}m"
    if s >= 60:
        return f"{s // 60}m{s % 60:02d}s"
    return f"{s}s"


@contextmanager
def shard_progress(
    total: int,
    *,
    label: str,
    enabled: bool,
    done: int = 0,
    interval: float = 30.0,
    stream: TextIO | None = None,
) -> Iterator[Callable[[int], None]]:
    """Yields ``advance(n)``: a bar when ``stream`` (stderr) is a terminal, else plain lines.

    Example:
        >>> import io
        >>> buf = io.StringIO()
        >>> with shard_progress(4, label="shard 0/2", enabled=True, interval=0, stream=buf) as advance:
        ...     advance(4)
        >>> buf.getvalue().splitlines()[-1].split(",")[0]
        'shard 0/2: 4/4 episodes (100%)'
    """
    out = sys.stderr if stream is None else stream
    if not enabled or total <= 0:
        yield lambda n: None
        return
    if out.isatty():
        with progress_bar(total, label, out, done=done) as step:
            yield step
        return
    started, last = time.monotonic(), time.monotonic()
    count = done

    def line() -> None:
        elapsed = max(time.monotonic() - started, 1e-9)
        rate = (count - done) / elapsed
        left = (
            f", {format_seconds((total - count) / rate)} left" if rate > 0 and count < total else ""
        )
        out.write(
            f"{label}: {count}/{total} episodes ({100 * count // total}%), "
            f"{rate:.2f} episodes/s{left}\n"
        )
        out.flush()

    def advance(n: int) -> None:
        nonlocal count, last
        count += n
        if time.monotonic() - last >= interval and count < total:
            last = time.monotonic()
            line()

    out.write(f"{label}: {total - done} of {total} episodes to run ({done} already written)\n")
    out.flush()
    yield advance
    if count > done:
        line()
