"""What a task's scorer is asked: open a split once (:class:`SplitRequest`), then score files,
each with its :class:`ScoreOptions`; and the steps every task scorer shares (the data root,
the episodes file, the graphs)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, TypeVar, Union, runtime_checkable

from vlneval.errors import MissingDataError, VLNEvalError
from vlneval.graph.store import GraphStore
from vlneval.tasks.common.root import (
    check_root,
    data_root,
    demo_root,
    graphs_dir,
    missing_split,
)

if TYPE_CHECKING:
    from vlneval.errors import ProblemCollector
    from vlneval.tasks.base import Task
    from vlneval.tasks.common.episodes import EpisodeTable
    from vlneval.tasks.common.inputs import ReadInput
    from vlneval.tasks.common.predictions import Predictions
    from vlneval.tasks.common.result import Result
    from vlneval.tasks.profiles import Profile

__all__ = [
    "SplitRequest",
    "ScoreOptions",
    "TaskScorer",
    "TrajectoryScorer",
    "PredictionsInput",
    "task_base",
    "episodes_path",
    "open_graphs",
]

#: What can be scored: a file (path), its bytes, or the records themselves (any iterable of
#: them is read once into a list), as ``json.loads``
#: of the file gives them (``[{"instr_id": ..., "trajectory": [[vp, heading, elevation], ...]},
#: ...]``; VLN-CE's ``r2r-ce`` form: the object keyed by episode id), for every task; or any
#: of them already read (:class:`~vlneval.tasks.common.inputs.ReadInput`, not read again).
PredictionsInput = Union[
    str, Path, bytes, Iterable[Mapping[str, Any]], Mapping[str, Any], "ReadInput"
]


@dataclass(frozen=True)
class ScoreOptions:
    """How to read and score one predictions input.

    Attributes:
        subset: score only the predicted episodes (the summary says "partial").
        form, trajectory_key: how to read trajectories.
        declared: protocol fields the submitter declares; ``run``: fields an online run observed.
        skip_summaries: skip records that look like a file's own summary.
    """

    subset: bool = False
    form: str = "auto"
    trajectory_key: str | None = None
    declared: Mapping[str, Any] | None = None
    run: Mapping[str, Any] | None = None
    skip_summaries: bool = False


class TaskScorer(Protocol):
    """A task's split, loaded once, that scores predictions (what ``Task.open_scorer`` returns).

    Attributes:
        episodes: the split's episodes.
    """

    episodes: Any

    def score(self, predictions: PredictionsInput, how: ScoreOptions) -> Result:
        """Scores one predictions input (a path, bytes or records)."""
        ...


@runtime_checkable
class TrajectoryScorer(Protocol):
    """A task scorer that reads plain viewpoint trajectories on navigation graphs (the R2R
    family's), in two steps diagnostics can look between: read, then score.

    Attributes:
        episodes: the split's episodes; ``graphs``: their navigation graphs.
    """

    episodes: Any
    graphs: GraphStore

    def score(self, predictions: PredictionsInput, how: ScoreOptions) -> Result:
        """Scores one predictions input (a path, bytes or records)."""
        ...

    def trajectories(
        self, predictions: PredictionsInput, how: ScoreOptions, pc: ProblemCollector | None = None
    ) -> Predictions:
        """The trajectories of ``predictions`` as node indices (problems go to ``pc``)."""
        ...

    def score_trajectories(
        self, preds: Predictions, how: ScoreOptions, pc: ProblemCollector | None = None
    ) -> Result:
        """Scores trajectories :meth:`trajectories` read."""
        ...


_Table = TypeVar("_Table", bound="EpisodeTable")


@dataclass(frozen=True)
class SplitRequest:
    """One split to open for scoring with a task's own scorer.

    Attributes:
        task, split, profile: what is scored and how (already resolved).
        root: the data root (default ``$VLNEVAL_DATA``); ``episodes_file`` and ``graphs``
            override the files found there.
        options: the task-specific options (``path_type``, ``data_version``...), checked by
            ``Task.open`` (``Task.check_options``).
    """

    task: Task
    split: str
    profile: Profile
    root: str | Path | None = None
    episodes_file: str | Path | None = None
    graphs: str | Path | None = None
    options: Mapping[str, Any] = field(default_factory=dict)

    def base(self) -> Path | None:
        """The data root the task reads (see :func:`task_base`)."""
        return task_base(self.task, self.root)

    def episodes_path(self, base: Path | None) -> Path:
        """The episodes file to score (see :func:`episodes_path`)."""
        return episodes_path(self.task, self.split, base, self.episodes_file)

    def load_episodes(self, path: Path, kind: type[_Table], **options: Any) -> _Table:
        """The episodes of ``path`` as the task's loader reads them (``Task.load``, as blind
        checks and the server do; ``options``: those the loader takes), of the ``kind`` of
        table the scorer reads.

        Raises:
            TypeError: the task's loader gives another kind of table (a programming error).
        """
        table = self.task.load(path, self.split, self.profile, **options)
        if not isinstance(table, kind):
            raise TypeError(
                f"task {self.task.name}'s loader gave a table of type {type(table).__name__}, not {kind.__name__}"
            )
        return table

    def graph_store(self, base: Path | None) -> GraphStore:
        """The navigation graphs to score on (see :func:`open_graphs`)."""
        return open_graphs(self.graphs, base)


def task_base(task: Task, root: str | Path | None) -> Path | None:
    """The data root of ``task``: the packaged demo data, else ``root`` or ``$VLNEVAL_DATA``."""
    return demo_root() if task.embedded else data_root(root)


def episodes_path(
    task: Task,
    split: str,
    base: Path | None,
    episodes_file: str | Path | None,
    *,
    version: str | None = None,
    lead: str | None = None,
) -> Path:
    """``episodes_file`` if given, else the task's file for ``split`` under ``base`` (that of
    release ``version`` when given, one of the task's ``version_files``).

    Raises:
        MissingDataError: no file given and none found (or no data root): a data root that
            does not exist, looks one level too deep or lacks the task's folder is said so
            (:func:`~vlneval.tasks.common.root.check_root`); an unknown split gets the closest
            name and the splits found there (:func:`~vlneval.tasks.common.root.missing_split`;
            ``lead`` replaces its opening words).
    """
    if episodes_file:
        return Path(episodes_file)
    if base is None or task.embedded:
        return task.episodes_file(base, split)
    try:
        check_root(base, task.name, task.folder, task.file_names)
    except MissingDataError as exc:
        raise MissingDataError(f"no {task.name} {split} episodes found: {exc}") from None
    try:
        return task.episodes_file(base, split, version)
    except MissingDataError:
        raise missing_split(
            base, task.name, task.folder, task.file_names, split, task.splits,
            versions=task.version_files, version=version, lead=lead,
        ) from None  # fmt: skip


def open_graphs(graphs: str | Path | None, base: Path | None) -> GraphStore:
    """The graphs in ``graphs`` if given, else the data root's connectivity folder.

    Raises:
        VLNEvalError: neither a graphs folder nor a data root.
    """
    if graphs is not None:
        return GraphStore(graphs)
    if base is not None:
        return GraphStore(graphs_dir(base))
    raise VLNEvalError("no navigation graphs: pass --graphs DIR or --data-root DIR")
