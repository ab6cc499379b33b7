"""Loading a task's split for running agents: every episode, and the graphs of its scans."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from vlneval.data.episodes import EpisodeTable
from vlneval.graph.store import GraphStore

__all__ = ["load_episodes"]


def load_episodes(
    task: str = "demo",
    split: str | None = None,
    *,
    root: str | Path | None = None,
    episodes_file: str | Path | None = None,
    graphs: str | Path | None = None,
) -> tuple[EpisodeTable, GraphStore]:
    """Every episode of ``task``'s ``split`` (all instructions, whichever a profile scores) and
    the graphs of its scans.

    Args:
        task: a registered task; ``demo`` ships inside vlneval and needs no downloads.
        split: the split (default: the task's).
        root, episodes_file, graphs: where the files are (as for ``vlneval score``).

    Example:
        >>> episodes, graphs = load_episodes("demo")
        >>> len(episodes), episodes.id_field, graphs.scans[0]
        (36, 'instr_id', 'demoHouse0A')
    """
    from vlneval.evaluation.runner import load_split
    from vlneval.profiles import get_profile
    from vlneval.tasks import get_task

    t = get_task(task)
    profile = replace(get_profile(t.default_profile), max_instructions=None)
    return load_split(
        t, split or t.default_split, profile, root=root, episodes_file=episodes_file, graphs=graphs
    )
