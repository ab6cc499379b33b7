"""Loading a task's split for running agents: every episode, and the graphs of its scans.

Through the task's own description (:func:`vlneval.tasks.common.scoring.load_split`):
environments depend on the tasks, never on the scorer front door.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

from vlneval.graph.store import GraphStore
from vlneval.tasks import get_profile, get_task
from vlneval.tasks.common.episodes import EpisodeTable
from vlneval.tasks.common.scoring import load_split

__all__ = ["load_episodes"]


def load_episodes(
    task: str = "demo",
    split: str | None = None,
    *,
    root: str | Path | None = None,
    episodes_file: str | Path | None = None,
    graphs: str | Path | None = None,
    **options: Any,
) -> tuple[EpisodeTable, GraphStore]:
    """Every episode of ``task``'s ``split`` (all instructions, whichever a profile scores) and
    the graphs of its scans.

    Args:
        task: a registered task; ``demo`` ships inside vlneval and needs no downloads.
        split: the split (default: the task's).
        root, episodes_file, graphs: where the files are (as for ``vlneval score``).
        options: the task's options its episode reader takes (NDH's ``path_type``).

    Raises:
        MissingDataError: no episodes file found; VLNEvalError: no graphs (reported after any
            problem with the episodes).

    Example:
        >>> episodes, graphs = load_episodes("demo")
        >>> len(episodes), episodes.id_field, graphs.scans[0]
        (36, 'instr_id', 'demoHouse0A')
    """
    t = get_task(task)
    profile = replace(get_profile(t.default_profile), max_instructions=None)
    split = split or t.default_split
    return load_split(
        t, split, profile, root=root, episodes_file=episodes_file, graphs=graphs, **options
    )
