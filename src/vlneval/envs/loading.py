"""Loading a task's split for running agents: every episode, and the graphs of its scans.

The files are found as ``vlneval score`` finds them (the packaged demo data, else ``root`` or
``$VLNEVAL_DATA``; ``episodes_file`` and ``graphs`` override), from the task's own description
(:mod:`vlneval.tasks`): environments depend on the data layer and the tasks, never on the
scorers.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from vlneval.tasks.common.episodes import EpisodeTable
from vlneval.tasks.common.root import data_root, demo_root, graphs_dir
from vlneval.errors import VLNEvalError
from vlneval.graph.store import GraphStore
from vlneval.tasks.profiles import get_profile
from vlneval.tasks import Task, get_task

__all__ = ["load_episodes", "task_data_root", "open_graph_store"]


def task_data_root(task: Task, root: str | Path | None) -> Path | None:
    """The data root of ``task``: the packaged demo data, else ``root`` or ``$VLNEVAL_DATA``."""
    return demo_root() if task.embedded else data_root(root)


def open_graph_store(graphs: str | Path | None, base: Path | None) -> GraphStore:
    """The graphs in ``graphs`` if given, else the data root's connectivity folder."""
    if graphs is not None:
        return GraphStore(graphs)
    if base is not None:
        return GraphStore(graphs_dir(base))
    raise VLNEvalError("no navigation graphs: pass --graphs DIR or --data-root DIR")


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

    Raises:
        MissingDataError: no episodes file found; VLNEvalError: no graphs (reported after any
            problem with the episodes).

    Example:
        >>> episodes, graphs = load_episodes("demo")
        >>> len(episodes), episodes.id_field, graphs.scans[0]
        (36, 'instr_id', 'demoHouse0A')
    """
    t = get_task(task)
    split = split or t.default_split
    profile = replace(get_profile(t.default_profile), max_instructions=None)
    base = task_data_root(t, root)
    try:
        store = open_graph_store(graphs, base)
    except VLNEvalError as exc:
        missing: VLNEvalError | None = exc
    else:
        missing = None
    path = Path(episodes_file) if episodes_file else t.episodes_file(base, split)
    episodes = t.load(path, split, profile)
    if missing is not None:
        raise missing
    return episodes, store
