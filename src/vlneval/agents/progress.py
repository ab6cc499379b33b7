"""A progress bar over episodes, on stderr (rich), that costs nothing when disabled."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager

__all__ = ["episode_progress"]


@contextmanager
def episode_progress(
    total: int, *, enabled: bool, label: str = "episodes"
) -> Iterator[Callable[[int], None]]:
    """Yields ``advance(n)``; shows a bar on stderr when ``enabled``.

    Example:
        >>> with episode_progress(3, enabled=False) as advance:
        ...     advance(3)
    """
    if not enabled:
        yield lambda n: None
        return
    from rich.console import Console
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeRemainingColumn,
    )

    columns = (TextColumn(label), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn())
    with Progress(*columns, console=Console(stderr=True), transient=True) as bar:
        task = bar.add_task(label, total=total)
        yield lambda n: bar.advance(task, n)
