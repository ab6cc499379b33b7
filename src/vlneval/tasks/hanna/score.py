"""Scoring HANNA predictions as ``code/tasks/HANNA/eval.py`` of khanhptnk/hanna does.

Per episode, with goals ``g_1..g_K`` (the ends of the task's paths, file order), start ``s`` and
executed poses ``p_1..p_n`` (from ``agent_pose``):

- NE = ``min_k d(p_n, g_k)``; the scorer walks the goals in order and keeps a goal whenever
  ``d(p_n, g_k) <= NE so far``, so among tied goals the LAST wins, and SPL's reference length is
  ``ℓ = d(s, g_chosen)``;
- OE = ``min_k min_j d(p_j, g_k)``; SR = ``1[NE <= 2.0]``, OSR = ``1[OE <= 2.0]`` (inclusive);
- TL = ``Σ d(p_j, p_{j+1})``: no adjacency check (a jump counts its shortest distance); jumps
  are counted per episode;
- SPL = ``S · ℓ / max(ℓ, TL)``; when ``ℓ = TL = 0`` the script divides by zero: we give 1 if
  successful (the CVDN rule) and say so in the profile;
- help requests = the number of ``request_help`` (1) in ``agent_ask`` (``manual_score.py``'s
  "Requests"); reported as unavailable when the file has no ``agent_ask``.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from vlneval.errors import ProblemCollector
from vlneval.graph.store import GraphStore
from vlneval.metrics.grounding import length_weighted
from vlneval.tasks.common.arrays import ScoringArrays
from vlneval.tasks.common.episodes import EpisodeTable
from vlneval.tasks.common.goal_scoring import (
    DEFAULT_OPTIONS,
    checked_arrays,
    finish_columns,
    hit,
    read_trajectories,
    summary_options,
)
from vlneval.tasks.common.predictions import Predictions
from vlneval.tasks.common.request import PredictionsInput, ScoreOptions, SplitRequest
from vlneval.tasks.common.result import Result
from vlneval.tasks.common.scoring import summarise
from vlneval.tasks.hanna.format import REQUEST_HELP, check_hanna_predictions, read_hanna_input
from vlneval.tasks.profiles import Profile

__all__ = ["HannaScorer", "score_hanna", "hanna_goal_errors"]

REQUESTS = "help_requests"


class HannaScorer:
    """A HANNA split loaded once (the ``open_scorer`` of task ``hanna``); it takes no options.

    Raises:
        VLNEvalError: an option, unknown names, missing data.
    """

    def __init__(self, request: SplitRequest) -> None:
        r = request
        base = r.base()
        self.task, self.profile = r.task.name, r.profile
        self.episodes = r.load_episodes(r.episodes_path(base), EpisodeTable)
        self.graphs = r.graph_store(base)

    def score(self, predictions: PredictionsInput, how: ScoreOptions) -> Result:
        """Scores HANNA predictions (a file, its bytes or its records; a file is read once).

        Raises:
            VLNEvalError: bad input (file, ``instr_id`` and field named).
        """
        key = how.trajectory_key or "agent_pose"
        given = read_hanna_input(predictions, key)
        pc = ProblemCollector(given.source)  # every problem of the file, shown together
        has_asks = check_hanna_predictions(given, self.episodes, trajectory_key=key, collect=pc)
        keep = ("agent_ask",) if has_asks else ()
        preds = read_trajectories(
            given, self.episodes, self.graphs, how, pc, trajectory_key=key, keep_fields=keep
        )
        return score_hanna(self.episodes, preds, self.graphs, self.profile, how, pc=pc)


def hanna_goal_errors(
    dist: np.ndarray, trajectory: np.ndarray, goals: np.ndarray, start: int
) -> tuple[float, float, float]:
    """``(NE, OE, ℓ)`` of one episode by the HANNA scorer's rules (last goal wins a tie).

    Example:
        >>> D = np.array([[0, 2, 4, 6], [2, 0, 2, 4], [4, 2, 0, 2], [6, 4, 2, 0]], float)
        >>> hanna_goal_errors(D, np.array([0, 1, 2]), np.array([3, 1]), 0)  # both 2 m away: last
        (2.0, 0.0, 2.0)
        >>> hanna_goal_errors(D, np.array([0, 1, 2]), np.array([1, 3]), 0)
        (2.0, 0.0, 6.0)
    """
    final = int(trajectory[-1])
    error = ell = np.inf
    for g in goals.tolist():
        d = float(dist[final, g])
        if d <= error:
            error, ell = d, float(dist[start, g])
    oracle = float(dist[np.ix_(trajectory, goals)].min())
    return error, oracle, ell


def _goal_metrics(arr: ScoringArrays, store: GraphStore) -> dict[str, np.ndarray]:
    n = len(arr.traj_offsets) - 1
    out = {k: np.empty(n) for k in ("nav_error", "oracle_error", "shortest_length", "path_length")}
    tables = [store.distances(s) for s in arr.scans]
    for e in range(n):
        dist = tables[int(arr.scan_index[e])]
        traj = arr.traj[arr.traj_offsets[e] : arr.traj_offsets[e + 1]]
        goals = arr.goals[arr.goal_offsets[e] : arr.goal_offsets[e + 1]]
        start = int(arr.ref[arr.ref_offsets[e]])
        out["nav_error"][e], out["oracle_error"][e], out["shortest_length"][e] = hanna_goal_errors(
            dist, traj, goals, start
        )
        moved = traj[1:] != traj[:-1]
        out["path_length"][e] = float(dist[traj[:-1][moved], traj[1:][moved]].sum())
    return out


def _requests(preds: Predictions) -> np.ndarray | None:
    asks = preds.extra.get("agent_ask")
    if not asks:
        return None
    return np.array(
        [sum(a == REQUEST_HELP for a in asks[int(i)]) for i in preds.episodes], dtype=np.float64
    )


def score_hanna(
    table: EpisodeTable,
    preds: Predictions,
    store: GraphStore,
    prof: Profile,
    how: ScoreOptions = DEFAULT_OPTIONS,
    *,
    pc: ProblemCollector | None = None,
) -> Result:
    """Scores parsed HANNA predictions (see the module docstring for every rule); ``pc``: the
    problems found reading them, raised with the rule checks'."""
    arr, flags = checked_arrays(table, preds, store, prof, how.subset, pc=pc)
    per = _goal_metrics(arr, store)
    per["success"] = hit(per["nav_error"], prof)
    per["oracle_success"] = hit(per["oracle_error"], prof)
    per["spl"] = length_weighted(
        per["success"], per["shortest_length"], per["path_length"], floor=prof.spl_floor
    )
    per["steps"] = np.diff(arr.traj_offsets).astype(np.float64) - 1
    finish_columns(per, flags, "nav_error")
    requests = _requests(preds)
    labels = (
        prof.metrics if requests is not None else tuple(m for m in prof.metrics if m != REQUESTS)
    )
    if requests is not None:
        per[REQUESTS] = requests
    view = dataclasses.replace(prof, metrics=labels)
    parts = summarise(table, preds, per, view, **summary_options(how), columns={REQUESTS: REQUESTS})
    parts.profile = prof
    parts.units = {REQUESTS: "count"}
    if requests is None and REQUESTS in prof.metrics:
        parts.metrics[REQUESTS] = None
        parts.unavailable[REQUESTS] = (
            "the predictions have no agent_ask (help requests are not recorded); give each "
            "record agent_ask, its ask action at each step (0 do_nothing, 1 request_help)"
        )
    jumps = int(np.count_nonzero(flags["jumps"]))
    if jumps:
        parts.warnings.append(
            f"{jumps} episode(s) move between non-adjacent viewpoints; the HANNA scorer adds their "
            "shortest distance to TL without complaint (see the per-episode 'jumps' column)"
        )
    return parts.build(table, preds.episodes, per)
