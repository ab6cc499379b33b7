"""SOON scoring: navigation with the goal switch, localisation, det SR / det SPL, GP.

Reproduces ``ZhuFengdaaa/SOON r2r_src/eval.py`` (``submit_score`` / ``_score_item_submit``),
profile ``soon``; ``soon-wrap`` also handles heading wrap-around in the localisation test. Per
episode, with start ``s``, annotated goal ``g0`` (the start path's last viewpoint), executed
path ``P`` (final ``p_n``) and the instruction's boxes ``B`` (in file order):

- nearest = the first visited viewpoint with the smallest ``d(p, g0)`` (computed before the
  switch, as the script does);
- goal switch: if ``p_n`` holds a box (the first such box), the goal ``g`` becomes ``p_n``;
  otherwise ``g = g0``;
- NE = ``d(p_n, g)``, OE = ``d(nearest, g)``, SR = 1[NE < 3], OSR = 1[OE < 3] (OSR can be below
  SR: faithful, not a bug); TL = Σ ``d(p_j, p_{j+1})`` (no adjacency check);
- ℓ = ``d(s, g)``; SPL = SR · ℓ / max(ℓ, TL, 0.01); det = the predicted point lies strictly
  inside the box at ``p_n``; det SPL = det · SPL (the script's ``success_rate``);
- J = det · SR (joint success); a det success stands at a box at ``p_n``, the goal then (NE =
  0), so J = det and J equals det SR on every submission (neither official script reports J);
- GP = ``d(s, g) − d(p_n, g)`` with the single (switched) goal.
"""

from __future__ import annotations

from dataclasses import dataclass, fields

import numpy as np

from vlneval.errors import (
    ProblemCollector,
    UnknownNameError,
    VLNEvalError,
    hint,
    hinted,
)
from vlneval.graph.store import GraphStore
from vlneval.metrics.grounding import length_weighted, localisation_success
from vlneval.tasks.common.episodes import require_goals
from vlneval.tasks.common.goal_scoring import (
    DEFAULT_OPTIONS,
    checked_arrays,
    finish_columns,
    hit,
    summary_options,
)
from vlneval.tasks.common.inputs import source_name
from vlneval.tasks.common.request import PredictionsInput, ScoreOptions, SplitRequest
from vlneval.tasks.common.result import Result
from vlneval.tasks.common.scoring import object_summary
from vlneval.tasks.profiles import Profile
from vlneval.tasks.soon.format import (
    ANGLE_UNITS,
    SoonEpisodes,
    SoonPredictions,
    parse_soon_predictions,
)

__all__ = ["SoonScorer", "score_soon", "soon_episode", "SoonEpisodeScore", "SOON_COLUMNS"]

#: Summary label -> per-episode column.
SOON_COLUMNS = {
    "TL": "path_length",
    "NE": "nav_error",
    "OSR": "oracle_success",
    "SR": "success",
    "SPL": "spl",
    "det_SR": "det_success",
    "det_SPL": "det_spl",
    "GP": "goal_progress",
    "J": "joint_success",
}
SPL_FLOOR = 0.01


@dataclass(frozen=True)
class SoonEpisodeScore:
    """One SOON episode's numbers (see the module docstring for each rule)."""

    nav_error: float
    oracle_error: float
    path_length: float
    shortest_length: float
    goal_progress: float
    goal_switched: bool
    det_success: bool


def soon_episode(
    distances: np.ndarray,
    trajectory: np.ndarray,
    start: int,
    goal: int,
    box_nodes: list[int],
    boxes: list[np.ndarray],
    point: tuple[float, float],
    *,
    wrap: bool = False,
) -> SoonEpisodeScore:
    """Scores one SOON episode on a distance table (node indices in, numbers out).

    Args:
        distances: ``(n, n)`` geodesic table of the scan.
        trajectory: the executed nodes, start first (non-empty).
        start, goal: the start path's first and last node (``g0``).
        box_nodes: the node of each target box (-1 for a viewpoint not in the graph), file order.
        boxes: the ``(4, 2)`` normalised corners of each box.
        point: the predicted (heading, elevation), normalised.
        wrap: handle heading wrap-around (profile ``soon-wrap``).

    Example:
        >>> D = np.array([[0, 4, 8, 4], [4, 0, 4, 8], [8, 4, 0, 4], [4, 8, 4, 0]], float)
        >>> box = np.array([[0.4, 0.6], [0.6, 0.6], [0.6, 0.4], [0.4, 0.4]])
        >>> s = soon_episode(D, np.array([0, 1]), 0, 3, [1, 3], [box, box], (0.5, 0.5))
        >>> s.goal_switched, s.nav_error, s.oracle_error, s.shortest_length, s.det_success
        (True, 0.0, 4.0, 4.0, True)
    """
    traj = np.asarray(trajectory, dtype=np.int64)
    final = int(traj[-1])
    nearest = int(traj[int(np.argmin(distances[traj, goal]))])
    k = box_nodes.index(final) if final in box_nodes else -1
    g = final if k >= 0 else goal
    det = k >= 0 and localisation_success(point[0], point[1], boxes[k], wrap=wrap)
    tl = float(distances[traj[:-1], traj[1:]].sum()) if len(traj) > 1 else 0.0
    ne = float(distances[final, g])
    ell = float(distances[start, g])
    return SoonEpisodeScore(ne, float(distances[nearest, g]), tl, ell, ell - ne, k >= 0, bool(det))


def score_soon(
    episodes: SoonEpisodes,
    preds: SoonPredictions,
    store: GraphStore,
    prof: Profile,
    how: ScoreOptions = DEFAULT_OPTIONS,
    *,
    pc: ProblemCollector | None = None,
) -> Result:
    """Scores parsed SOON predictions under ``prof`` (``soon`` or ``soon-wrap``); ``pc``: the
    problems found reading them, raised with the rule checks'."""
    p = preds.paths
    arr, flags = checked_arrays(episodes, p, store, prof, how.subset, pc=pc)
    wrap = bool(getattr(prof, "heading_wrap", False))
    rows = []
    for k, i in enumerate(p.episodes.tolist()):
        scan = episodes.scans[i]
        graph, table = store.graph(scan), store.distances(scan)
        traj = arr.traj[arr.traj_offsets[k] : arr.traj_offsets[k + 1]]
        ref = arr.ref[arr.ref_offsets[k] : arr.ref_offsets[k + 1]]
        boxes = episodes.boxes[i]
        rows.append(
            soon_episode(
                table, traj, int(ref[0]), int(ref[-1]), [graph.index.get(b.image_id, -1) for b in boxes],
                [b.corners for b in boxes], (float(preds.heading[k]), float(preds.elevation[k])),
                wrap=wrap,
            )
        )  # fmt: skip
    per = _columns(rows, prof)
    per["heading"], per["elevation"] = preds.heading, preds.elevation
    order = p.episodes.tolist()
    per["instr_id"] = np.array([episodes.instr_ids[i] for i in order], dtype=object)
    per["start_index"] = np.array([episodes.start_index[i] for i in order], dtype=np.int64)
    per["steps"] = np.maximum(np.diff(arr.traj_offsets) - 1, 0).astype(np.int64)
    finish_columns(per, flags, "nav_error")
    parts = object_summary(
        task=episodes.task, split=episodes.split, n_expected=len(episodes), n_scored=len(order),
        missing=p.missing, source=p.source, form=p.form, per=per, columns=SOON_COLUMNS,
        prof=prof, warnings=list(p.warnings), unavailable={}, data_version=None,
        **summary_options(how),
        card_extra={"angle_units": _units_note(preds.angle_units), "heading_wrap": wrap},
    )  # fmt: skip
    return parts.build(episodes, p.episodes, per)


def _columns(rows: list[SoonEpisodeScore], prof: Profile) -> dict[str, np.ndarray]:
    col = {
        f.name: np.array([getattr(r, f.name) for r in rows], dtype=np.float64)
        for f in fields(SoonEpisodeScore)
    }
    success, det = hit(col["nav_error"], prof), col["det_success"]
    spl = length_weighted(success, col["shortest_length"], col["path_length"], floor=SPL_FLOOR)
    return {
        "path_length": col["path_length"],
        "shortest_length": col["shortest_length"],
        "nav_error": col["nav_error"],
        "oracle_error": col["oracle_error"],
        "success": success,
        "oracle_success": hit(col["oracle_error"], prof),
        "spl": spl,
        "det_success": det,
        "det_spl": det * spl,
        "joint_success": det * success,
        "goal_progress": col["goal_progress"],
        "goal_switched": col["goal_switched"].astype(np.int64),
    }


def _units_note(units: str) -> str:
    if units == "radians":
        return "radians, converted as VLN-DUET does (heading mod 2π / 2π, (wrap(elevation)+π)/2π)"
    return "normalised (heading/2π, (elevation+π)/2π), used as given (official)"


class SoonScorer:
    """A SOON split and its graphs loaded once (the ``open_scorer`` of task ``soon``).

    Options: ``angle_units``: ``normalised`` (default, official: the predicted heading and
    elevation are used as given) or ``radians`` (converted as VLN-DUET does).

    Raises:
        VLNEvalError: unknown options, missing data, a hidden test split.
    """

    def __init__(self, request: SplitRequest) -> None:
        r = request
        self.angle_units = r.options.get("angle_units", "normalised")
        if self.angle_units not in ANGLE_UNITS:  # checked once, as the reader would
            raise UnknownNameError("SOON angle unit", self.angle_units, ANGLE_UNITS)
        base = r.base()
        self.task, self.profile = r.task.name, r.profile
        self.episodes = r.load_episodes(r.episodes_path(base), SoonEpisodes)
        require_goals(self.episodes.scorable, r.split, self.episodes.source)
        self.graphs = r.graph_store(base)

    def score(self, predictions: PredictionsInput, how: ScoreOptions) -> Result:
        """Scores a SOON submission (a file, its bytes or its records).

        Raises:
            VLNEvalError: bad input (file, instr_id and field named).
        """
        if how.trajectory_key not in (None, "trajectory"):
            said = hint(
                "--trajectory-key", "--trajectory-key does not apply", aside=True, spelt=True
            )
            raise VLNEvalError(
                hinted("SOON predictions keep their trajectories in 'trajectory'", said)
            )
        pc = ProblemCollector(source_name(predictions))
        preds = parse_soon_predictions(
            predictions, self.episodes, self.graphs, form=how.form,
            angle_units=self.angle_units, skip_summaries=how.skip_summaries, collect=pc,
        )  # fmt: skip
        return score_soon(self.episodes, preds, self.graphs, self.profile, how, pc=pc)
