"""Loading a street task's split for the street environment: its routes and the street graph,
read by the task's own reader (``Task.street_routes``), as its scorer reads them."""

from __future__ import annotations

from pathlib import Path

from vlneval.errors import VLNEvalError
from vlneval.graph.street import StreetGraph
from vlneval.registry import load_entry_point
from vlneval.tasks import TASKS, get_task
from vlneval.tasks.common.episodes import EpisodeTable

__all__ = ["is_street_task", "load_street_episodes"]


def is_street_task(task: str) -> bool:
    """Whether ``task`` runs in the street environment (it declares ``street_routes``).

    Example:
        >>> is_street_task("touchdown"), is_street_task("r2r")
        (True, False)
    """
    return task in TASKS and bool(get_task(task).street_routes)


def load_street_episodes(
    task: str,
    split: str | None = None,
    *,
    root: str | Path | None = None,
    episodes_file: str | Path | None = None,
    graphs: str | Path | None = None,
    data_version: str | None = None,
) -> tuple[EpisodeTable, StreetGraph]:
    """The routes of ``task``'s ``split`` and the street graph, found as ``vlneval score`` finds
    them (``data_version``: one of the task's releases; default the first present).

    Raises:
        VLNEvalError: ``task`` is not a street task; missing data, an unknown data version.
    """
    t = get_task(task)
    if not t.street_routes:
        raise VLNEvalError(f"task {t.name} does not run on a street graph")
    open_routes = load_entry_point(t.street_routes)
    episodes, graph = open_routes(
        t, split or t.default_split, root=root, episodes_file=episodes_file, graphs=graphs,
        data_version=data_version,
    )  # fmt: skip
    return episodes, graph
