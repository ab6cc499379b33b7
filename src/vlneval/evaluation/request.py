"""What a task-specific scorer is asked to score: one :class:`ScoreRequest`.

:func:`vlneval.evaluation.evaluate` resolves the task, split and profile, then hands a task with
its own scorer (``Task.evaluate_fn``) one request instead of a dozen keywords. The helpers here
are the steps every such scorer shares: checking its options, finding the data root and the
episodes file, opening the navigation graphs.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from vlneval.data.root import data_root, demo_root, graphs_dir
from vlneval.errors import VLNEvalError

if TYPE_CHECKING:
    from vlneval.graph.store import GraphStore
    from vlneval.profiles import Profile
    from vlneval.tasks import Task

__all__ = ["ScoreRequest", "task_base", "episodes_path", "open_graphs"]


@dataclass(frozen=True)
class ScoreRequest:
    """One predictions file to score with a task's own scorer.

    Attributes:
        task, split, profile: what is scored and how (already resolved).
        predictions: the predictions file.
        root: the data root (default ``$VLNEVAL_DATA``); ``episodes_file`` and ``graphs``
            override the files found there.
        subset: score only the predicted episodes (the summary says "partial").
        form, trajectory_key: how to read trajectories.
        declared: protocol fields the submitter declares; ``run``: fields an online run observed.
        options: the task-specific options (``path_type``, ``data_version``...).
        skip_summaries: skip records that look like a file's own summary.

    Example:
        >>> from vlneval.profiles import get_profile
        >>> from vlneval.tasks import get_task
        >>> r = ScoreRequest(get_task("ndh"), "val_unseen", "p.json", get_profile("cvdn"),
        ...                  options={"path_type": "trusted_path", "data_version": None})
        >>> r.options_for(("path_type",))
        {'path_type': 'trusted_path'}
        >>> r.options_for(())
        Traceback (most recent call last):
        ...
        vlneval.errors.VLNEvalError: option path_type does not apply to task ndh (its options: none)
    """

    task: Task
    split: str
    predictions: str | Path
    profile: Profile
    root: str | Path | None = None
    episodes_file: str | Path | None = None
    graphs: str | Path | None = None
    subset: bool = False
    form: str = "auto"
    trajectory_key: str | None = None
    declared: Mapping[str, Any] | None = None
    run: Mapping[str, Any] | None = None
    options: Mapping[str, Any] = field(default_factory=dict)
    skip_summaries: bool = False

    def options_for(self, allowed: tuple[str, ...]) -> dict[str, Any]:
        """The options given (those not None); an error names the first that does not apply."""
        given = {k: v for k, v in self.options.items() if v is not None}
        extra = sorted(set(given) - set(allowed))
        if extra:
            raise VLNEvalError(
                f"option {extra[0]} does not apply to task {self.task.name} "
                f"(its options: {', '.join(allowed) or 'none'})"
            )
        return given

    def base(self) -> Path | None:
        """The data root the task reads (see :func:`task_base`)."""
        return task_base(self.task, self.root)

    def episodes_path(self, base: Path | None) -> Path:
        """The episodes file to score (see :func:`episodes_path`)."""
        return episodes_path(self.task, self.split, base, self.episodes_file)

    def graph_store(self, base: Path | None) -> GraphStore:
        """The navigation graphs to score on (see :func:`open_graphs`)."""
        return open_graphs(self.graphs, base)


def task_base(task: Task, root: str | Path | None) -> Path | None:
    """The data root of ``task``: the packaged demo data, else ``root`` or ``$VLNEVAL_DATA``."""
    return demo_root() if task.embedded else data_root(root)


def episodes_path(
    task: Task, split: str, base: Path | None, episodes_file: str | Path | None
) -> Path:
    """``episodes_file`` if given, else the task's file for ``split`` under ``base``.

    Raises:
        MissingDataError: no file given and none found (or no data root).
    """
    return Path(episodes_file) if episodes_file else task.episodes_file(base, split)


def open_graphs(graphs: str | Path | None, base: Path | None) -> GraphStore:
    """The graphs in ``graphs`` if given, else the data root's connectivity folder.

    Raises:
        VLNEvalError: neither a graphs folder nor a data root.
    """
    from vlneval.graph.store import GraphStore

    if graphs is not None:
        return GraphStore(graphs)
    if base is not None:
        return GraphStore(graphs_dir(base))
    raise VLNEvalError("no navigation graphs: pass --graphs DIR or --data-root DIR")
