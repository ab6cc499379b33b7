"""Scoring NDH (CVDN) predictions as ``tasks/NDH/eval.py`` of mmurray/cvdn does.

Per episode, with the ground-truth path chosen by ``path_type`` (start ``s``, goal ``g``), the
goal region ``E = end_panos`` and the planner's goal ``g_p``:

- NE = ``d(p_n, g)``, OE = ``min_j d(p_j, g)``, SR = ``1[NE < 3]``, OSR = ``1[OE < 3]``;
- TL = the summed step lengths (a move between non-adjacent viewpoints is rejected, as the
  scorer's ``KeyError``); SPL = ``S · ℓ / max(ℓ, TL)`` with ``ℓ = d(s, g)``, and when ``ℓ = 0``
  SPL = 1 if TL = 0 else 0 (the CVDN rule);
- GP = ``min_e d(s, e) − min_e d(p_n, e)`` over ``E``, whatever the path type
  (``dist_to_end_reduction``);
- OPSR = ``1[min_j d(p_j, g_p) < 3]`` (``oracle path_success_rate``).

Differences from the script, all stricter: a duplicate ``inst_idx`` is an error (the script
keeps the first), as is an ``inst_idx`` written as a string (the script silently matches nothing
and then fails as incomplete).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import numpy as np

from vlneval.errors import ProblemCollector, hint, hinted
from vlneval.graph.store import GraphStore
from vlneval.metrics.progress import region_distances
from vlneval.tasks.common.episodes import require_goals
from vlneval.tasks.common.goal_scoring import (
    DEFAULT_OPTIONS,
    checked_navigation,
    finish_columns,
    hit,
    read_trajectories,
    summary_options,
)
from vlneval.tasks.common.predictions import Predictions
from vlneval.tasks.common.request import PredictionsInput, ScoreOptions, SplitRequest
from vlneval.tasks.common.result import Result, ResultBuilder
from vlneval.tasks.common.scoring import summarise
from vlneval.tasks.cvdn.format import NDHEpisodes, check_ndh_predictions, read_ndh_input
from vlneval.tasks.profiles import Profile

__all__ = ["NDHScorer", "score_ndh", "COLUMNS"]

#: Summary label -> per-episode column, for the labels beyond the R2R family's.
COLUMNS = {"GP": "goal_progress", "OPSR": "oracle_plan_success"}
#: Why a move along no graph edge is refused (the bracket of the jump message).
JUMP = "the official CVDN scorer rejects a move along no graph edge"


class NDHScorer:
    """An NDH split loaded once (the ``open_scorer`` of task ``ndh``).

    Options:
        path_type: ``planner_path`` (default, as the official scorer), ``player_path`` or
            ``trusted_path`` (the published baselines).

    Raises:
        VLNEvalError: unknown names or options, missing data, a hidden test split.
    """

    def __init__(self, request: SplitRequest) -> None:
        r = request
        opts = r.options
        base = r.base()
        path = r.episodes_path(base)
        self.task, self.profile = r.task.name, r.profile
        path_type = opts.get("path_type", "planner_path")
        self.episodes = r.load_episodes(path, NDHEpisodes, path_type=path_type)
        require_goals(self.episodes.scorable, r.split, path)
        self.graphs = r.graph_store(base)

    def score(self, predictions: PredictionsInput, how: ScoreOptions) -> Result:
        """Scores NDH predictions (a file, its bytes or its records; a file is read once).

        Raises:
            VLNEvalError: bad input (file, ``inst_idx`` and field named).
        """
        given = read_ndh_input(predictions, how.trajectory_key)
        pc = ProblemCollector(given.source)
        return self.score_trajectories(self.trajectories(given, how, pc), how, pc)

    def trajectories(
        self, predictions: PredictionsInput, how: ScoreOptions, pc: ProblemCollector | None = None
    ) -> Predictions:
        """The trajectories of ``predictions`` as node indices (the reports draw NDH episodes
        from these); their problems go to ``pc``, raised with the rule checks'."""
        given = check_ndh_predictions(predictions, trajectory_key=how.trajectory_key)
        pc = pc if pc is not None else ProblemCollector(given.source)
        return read_trajectories(given, self.episodes, self.graphs, how, pc)

    def score_trajectories(
        self, preds: Predictions, how: ScoreOptions, pc: ProblemCollector | None = None
    ) -> Result:
        """Scores trajectories :meth:`trajectories` read (raising ``pc``'s problems too)."""
        return score_ndh(self.episodes, preds, self.graphs, self.profile, how, pc=pc)


def _nodes(
    seqs: Sequence[tuple[str, ...]],
    table: NDHEpisodes,
    order: np.ndarray,
    store: GraphStore,
    what: str,
) -> tuple[np.ndarray, np.ndarray]:
    """Scan-local node ids of per-episode viewpoint sets, in CSR form (unknown ids: an error)."""
    pc = ProblemCollector(table.source)
    flat: list[int] = []
    offsets = [0]
    for i in order.tolist():
        graph = store.graph(table.scans[i])
        for vp in seqs[i]:
            node = graph.index.get(vp, -1)
            if node < 0:
                pc.add(graph.describe_missing(vp), episode=table.label(i), field=what)
            flat.append(node)
        offsets.append(len(flat))
    pc.raise_if_any()
    return np.asarray(flat, dtype=np.int32), np.asarray(offsets, dtype=np.int64)


def score_ndh(
    ndh: NDHEpisodes,
    preds: Predictions,
    store: GraphStore,
    prof: Profile,
    how: ScoreOptions = DEFAULT_OPTIONS,
    *,
    pc: ProblemCollector | None = None,
) -> Result:
    """Scores parsed NDH predictions (see the module docstring for every rule); ``pc``: the
    problems found reading them, raised with the rule checks'."""
    cvdn = dataclasses.replace(prof, strict_cls_edges=False)  # NDH scores repeats
    arr, flags, core = checked_navigation(
        ndh, preds, store, cvdn, how.subset, pc=pc, jump_reason=JUMP, threshold=prof.threshold,
        success_inclusive=prof.success_inclusive, spl_reference=prof.spl_reference,
        spl_floor=prof.spl_floor,
    )  # fmt: skip
    per = core  # the goal columns (goal_scoring.GOAL_COLUMNS)
    layout = (
        arr.dist_flat,
        arr.table_offsets,
        arr.table_sizes,
        arr.scan_index,
        arr.traj,
        arr.traj_offsets,
    )
    ends, end_off = _nodes(ndh.end_panos, ndh, preds.episodes, store, "end_panos")
    region = region_distances(*layout, ends, end_off)
    per["goal_progress"] = region["goal_progress"]
    per["end_distance_start"], per["end_distance_final"] = region["start"], region["final"]
    planner = [(g,) for g in ndh.planner_goals]
    plan, plan_off = _nodes(planner, ndh, preds.episodes, store, "planner_path")
    per["oracle_plan_error"] = region_distances(*layout, plan, plan_off)["oracle"]
    per["oracle_plan_success"] = hit(per["oracle_plan_error"], prof)
    finish_columns(per, flags, "nav_error", "goal_progress")
    parts = summarise(ndh, preds, per, prof, **summary_options(how), columns=COLUMNS)
    _annotate(parts, ndh)
    return parts.build(ndh, preds.episodes, per)


def _annotate(parts: ResultBuilder, ndh: NDHEpisodes) -> None:
    parts.notes["path_type"] = ndh.path_type
    parts.protocol["scoring"]["path_type"] = ndh.path_type
    parts.protocol["instruction"] = f"dialog history ({ndh.history}) and target hint"
    if ndh.path_type == "planner_path":
        parts.warnings.append(
            hinted(
                "scored against planner_path (the official scorer's default); the published NDH "
                "baselines report trusted_path",
                hint("--path-type", "--path-type trusted_path", aside=True, spelt=True),
            )
        )
    if ndh.string_valued:
        parts.warnings.append(
            "the episode file stores its values as strings; they were read with ast.literal_eval"
        )
