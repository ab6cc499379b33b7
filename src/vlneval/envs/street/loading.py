"""Loading a Touchdown split for the street environment: its routes and the street graph.

The route files are found as the Touchdown scorer finds them (:data:`DATA_VERSIONS`: the
original release and the unseen split). Agents run on them with
:func:`vlneval.agents.street.run_street`.
"""

from __future__ import annotations

from pathlib import Path

from vlneval.tasks.common.episodes import EpisodeTable
from vlneval.tasks.common.root import data_root, find_file
from vlneval.tasks.touchdown.format import load_touchdown
from vlneval.errors import MissingDataError, UnknownNameError
from vlneval.graph.street import StreetGraph, street_graph
from vlneval.tasks import get_task

__all__ = ["STREET_TASKS", "DATA_VERSIONS", "is_street_task", "load_street_episodes"]

#: Tasks whose agents move on the street graph.
STREET_TASKS = ("touchdown",)

#: Releases of the route files: name -> file name pattern under ``<root>/touchdown`` (the same
#: table as the Touchdown scorer's; a test keeps the two equal).
DATA_VERSIONS = {
    "original": "data/{split}.json",
    "unseen": "touchdown_unseen_split/{split}.json",
}


def is_street_task(task: str) -> bool:
    """Whether ``task`` runs in the street environment.

    Example:
        >>> is_street_task("touchdown"), is_street_task("r2r")
        (True, False)
    """
    return task in STREET_TASKS


def load_street_episodes(
    task: str = "touchdown",
    split: str | None = None,
    *,
    root: str | Path | None = None,
    episodes_file: str | Path | None = None,
    graphs: str | Path | None = None,
    data_version: str | None = None,
) -> tuple[EpisodeTable, StreetGraph]:
    """The routes of ``task``'s ``split`` and the street graph, found as ``vlneval score`` finds
    them (``data_version``: ``original`` or ``unseen``; default the first present)."""
    t = get_task(task)
    split = split or t.default_split
    base = data_root(root)
    if episodes_file:
        path = Path(episodes_file)
    elif base is None:
        raise MissingDataError(
            f"task {task} needs its data: pass --data-root DIR or --episodes FILE and --graphs DIR"
        )
    elif data_version is not None:
        if data_version not in DATA_VERSIONS:
            raise UnknownNameError("Touchdown data version", data_version, DATA_VERSIONS)
        name = DATA_VERSIONS[data_version].format(split=split)
        path = find_file(base / t.folder, [name], f"{task} {split} routes ({data_version})")
    else:
        path = t.episodes_file(base, split)
    if graphs is None and base is None:
        raise MissingDataError("no Touchdown street graph: pass --graphs DIR or --data-root DIR")
    folder = Path(graphs) if graphs is not None else base / t.folder / "graph"  # type: ignore[operator]
    return load_touchdown(path, task=task, split=split), street_graph(folder)
