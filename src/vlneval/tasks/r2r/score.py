"""The R2R family's scorer (R2R, R4R, RxR and the demo): one split loaded once, many files.

Episodes and graphs are loaded when the scorer opens; each :meth:`R2RScorer.score` reads one
predictions input (path, bytes or records), checks the profile's rules and runs the batched
metric kernels (:func:`vlneval.tasks.common.scoring.score_parsed`).
"""

from __future__ import annotations

from vlneval.errors import ProblemCollector
from vlneval.tasks.common.arrays import SplitArrays
from vlneval.tasks.common.episodes import require_goals
from vlneval.tasks.common.inputs import source_name
from vlneval.tasks.common.predictions import Predictions, parse_predictions
from vlneval.tasks.common.request import PredictionsInput, ScoreOptions, SplitRequest
from vlneval.tasks.common.result import Result
from vlneval.tasks.common.scoring import load_split, score_parsed

__all__ = ["R2RScorer"]


class R2RScorer:
    """A split of a task without its own scorer, with the graphs of its scans.

    Attributes:
        episodes: the split's episodes; ``graphs``: their navigation graphs.
    """

    def __init__(self, request: SplitRequest) -> None:
        r = request
        self.profile, self.notes = r.profile, r.task.notes
        self.episodes, self.graphs = load_split(
            r.task, r.split, r.profile, root=r.root, episodes_file=r.episodes_file,
            graphs=r.graphs, check=False,  # Task.open checks the scans, once
        )  # fmt: skip
        require_goals(self.episodes.scorable, r.split, self.episodes.source)
        self.arrays = SplitArrays()  # the episode side of the kernels' arrays, laid out once

    def trajectories(
        self, predictions: PredictionsInput, how: ScoreOptions, pc: ProblemCollector | None = None
    ) -> Predictions:
        """The trajectories of ``predictions`` as node indices (problems go to ``pc``)."""
        return parse_predictions(
            predictions, self.episodes, self.graphs, form=how.form,
            trajectory_key=how.trajectory_key, collect=pc, skip_summaries=how.skip_summaries,
        )  # fmt: skip

    def score_trajectories(
        self, preds: Predictions, how: ScoreOptions, pc: ProblemCollector | None = None
    ) -> Result:
        """Scores trajectories :meth:`trajectories` read."""
        return score_parsed(
            self.episodes, preds, self.graphs, self.profile,
            subset=how.subset, declared=how.declared, run=how.run, pc=pc, notes=self.notes,
            validate=False,  # the reader built preds from these graphs' own indices
            cache=self.arrays,
        )  # fmt: skip

    def score(self, predictions: PredictionsInput, how: ScoreOptions) -> Result:
        """Scores one predictions input; every problem of it is raised together."""
        pc = ProblemCollector(source_name(predictions))
        return self.score_trajectories(self.trajectories(predictions, how, pc), how, pc)
