"""A scored predictions file together with what diagnostics and plots need to look back at it.

A :class:`~vlneval.evaluation.Result` holds metrics and the per-episode table. Diagnostics also
need the executed trajectories (to draw them) and the navigation graphs (shortest distances,
positions), so :func:`score_run` scores a file through a
:class:`~vlneval.evaluation.Scorer` and, for the R2R family and NDH, keeps the trajectories
it read and the scorer's graphs. Other tasks' scorers give runs without trajectories, and reports then
show no path plots.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from vlneval.errors import ProblemCollector, VLNEvalError
from vlneval.evaluation.scorer import Scorer
from vlneval.graph.store import GraphStore
from vlneval.tasks.common.inputs import source_name
from vlneval.tasks.common.request import ScoreOptions, TrajectoryScorer
from vlneval.tasks.common.result import Result

__all__ = ["ScoredRun", "score_run", "run_label"]


@dataclass
class ScoredRun:
    """One scored predictions file, with its trajectories and graphs.

    Attributes:
        evaluation: the result, exactly as :func:`vlneval.evaluation.evaluate` gives it.
        label: a short name for tables and legends (the file name without suffixes).
        graphs: the navigation graphs of the split, or None for tasks with their own scorer.
        nodes: flat scan-local node indices of the executed trajectories, in the order of
            ``evaluation.scored``; None when unavailable.
        offsets: ``offsets[k]:offsets[k + 1]`` is the trajectory of the k-th scored episode.
    """

    evaluation: Result
    label: str
    graphs: GraphStore | None = None
    nodes: np.ndarray | None = None
    offsets: np.ndarray | None = None

    @property
    def has_trajectories(self) -> bool:
        """True when the executed trajectories and graphs are known (plots can be drawn)."""
        return self.graphs is not None and self.nodes is not None and self.offsets is not None

    def trajectory(self, k: int) -> np.ndarray:
        """Node indices of the k-th scored episode's executed trajectory, start first."""
        if self.nodes is None or self.offsets is None:
            raise VLNEvalError(f"run {self.label} has no trajectories (task with its own scorer)")
        return self.nodes[int(self.offsets[k]) : int(self.offsets[k + 1])]

    @functools.cached_property
    def episode_ids(self) -> list[str]:
        """Ids of the scored episodes, in ``evaluation.scored`` order."""
        ids = self.evaluation.episodes.ids
        return [ids[i] for i in self.evaluation.scored.tolist()]

    @functools.cached_property
    def positions(self) -> dict[str, int]:
        """Where each scored episode id is in :attr:`episode_ids`."""
        return {eid: k for k, eid in enumerate(self.episode_ids)}


def run_label(path: str | Path) -> str:
    """A file's name without ``.json``/``.jsonl``/``.gz`` suffixes.

    Example:
        >>> run_label("/x/seq2seq_iter_5000.json.gz")
        'seq2seq_iter_5000'
    """
    name = Path(path).name
    for suffix in (".gz", ".json", ".jsonl"):
        name = name.removesuffix(suffix)
    return name or str(path)


def score_run(
    scorer: Scorer,
    predictions: str | Path,
    *,
    subset: bool = False,
    form: str = "auto",
    trajectory_key: str | None = None,
    declared: Mapping[str, Any] | None = None,
    skip_summaries: bool = False,
    label: str | None = None,
) -> ScoredRun:
    """Scores ``predictions`` as :meth:`~vlneval.evaluation.Scorer.score` does, keeping the
    trajectories and graphs.

    Args:
        scorer: the split, loaded once (one scorer serves every run of a comparison).
        predictions, subset, form, trajectory_key, declared, skip_summaries: as for
            :meth:`~vlneval.evaluation.Scorer.score`.
        label: the run's name in reports (default: the file name without suffixes).

    Raises:
        VLNEvalError: bad input (the message says where); ``skip_summaries`` for a task whose
            reader cannot skip summary records (``Task.check_skip_summaries``).

    Example:
        >>> from vlneval.tasks.common.root import demo_root
        >>> run = score_run(Scorer("demo"), demo_root() / "demo" / "predictions_val.json")
        >>> run.label, run.has_trajectories
        ('predictions_val', True)
    """
    name = label or run_label(predictions)
    split_scorer = scorer.split_scorer
    if not isinstance(split_scorer, TrajectoryScorer):
        result = scorer.score(
            predictions, subset=subset, form=form, trajectory_key=trajectory_key,
            declared=declared, skip_summaries=skip_summaries,
        )  # fmt: skip
        return ScoredRun(result, name)
    scorer.task.check_skip_summaries(skip_summaries)
    how = ScoreOptions(subset, form, trajectory_key, declared, None, skip_summaries)
    pc = ProblemCollector(source_name(predictions))
    preds = split_scorer.trajectories(predictions, how, pc)
    result = split_scorer.score_trajectories(preds, how, pc)
    return ScoredRun(result, name, split_scorer.graphs, preds.nodes, preds.offsets)
