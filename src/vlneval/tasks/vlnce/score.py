"""Scoring continuous trajectories (VLN-CE and the continuous twin of R2R).

Per episode, with ``P`` the logged positions (start first), ``R`` the dense reference and
``d_j`` the geodesic distance from ``p_j`` to the goal given by the distance source:

- TL = Σ ||p_{j+1} − p_j|| (straight-line steps, as VLN-CE's ``PathLength``);
- NE = d_n; OE = min_j d_j; SR = STOP called and NE < δ; OSR = OE < δ (no STOP needed);
- SPL = SR · ℓ / max(ℓ, TL) with ℓ the geodesic start-goal distance;
- nDTW = exp(−DTW(P', R) / (|R| · δ)), P' = P without consecutive repeats; sDTW = SR · nDTW.

The DTW is exact or VLN-CE's fastdtw (profile); the distance source is named in the summary,
and with none, NE, OE, SR, OSR, SPL and sDTW are ``null`` and listed as unavailable.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

import numpy as np

from vlneval.continuous.oracle import DistanceOracle, GridOracle, distances_along
from vlneval.continuous.twin import TwinWorlds
from vlneval.errors import InvalidInputError, UnknownNameError, VLNEvalError
from vlneval.graph.store import GraphStore
from vlneval.metrics._kernels import is_success
from vlneval.metrics.path import spl
from vlneval.tasks.common.episodes import require_goals
from vlneval.tasks.common.request import (
    PredictionsInput,
    ScoreOptions,
    SplitRequest,
    episodes_path,
    task_base,
)
from vlneval.tasks.common.result import Result
from vlneval.tasks.common.root import graphs_dir
from vlneval.tasks.profiles import Profile
from vlneval.tasks.r2r.format import load_r2r
from vlneval.tasks.vlnce import DISTANCE
from vlneval.tasks.vlnce.format import (
    ContinuousEpisodes,
    ContinuousPredictions,
    habitat_to_world,
    load_vlnce_split,
    parse_ce_predictions,
)
from vlneval.tasks.vlnce.moves import check_moves
from vlneval.tasks.vlnce.predictions import missing_problem
from vlneval.tasks.vlnce.profiles import ContinuousProfile
from vlneval.tasks.vlnce.summary import COLUMNS as COLUMNS  # re-exported: the label columns
from vlneval.tasks.vlnce.summary import (
    GOAL_LABELS,
    NO_DISTANCE,
    summarise_continuous,
)
from vlneval.tasks.vlnce.twin import twin_episodes

__all__ = [
    "DistanceSource",
    "score_continuous",
    "VlnceScorer",
    "TwinScorer",
    "with_policy",
    "DISTANCE_SOURCES",
    "GOAL_LABELS",
    "summarise_continuous",
]

DISTANCE_SOURCES = DISTANCE.choices


@dataclass
class DistanceSource:
    """Where distances to the goal come from.

    Attributes:
        name: ``carried``, ``twin``, ``grid`` or ``none``.
        description: one line for the summary and the protocol card.
        oracle: episode index -> oracle (positions in the episodes' frame); None for
            ``carried`` (the predictions hold them) and ``none``.
    """

    name: str
    description: str
    oracle: Callable[[int], DistanceOracle] | None = None


def _profile(p: Profile) -> ContinuousProfile:
    if not isinstance(p, ContinuousProfile):
        raise VLNEvalError(
            f"profile {p.name} is not a continuous profile (use vlnce, vlnce-exact or vlnce-strict)"
        )
    return p


def _dtw(profile: ContinuousProfile, traj: np.ndarray, dense: np.ndarray) -> float:
    from vlneval.metrics.continuous import fast_dtw, point_dtw  # deferred: numba

    if profile.dtw == "fastdtw":  # VLN-CE: fastdtw(agent_locations, gt_locations)
        return fast_dtw(traj, dense, radius=profile.fastdtw_radius, variant=profile.fastdtw_variant)
    return point_dtw(dense, traj)


def _episode(
    episodes: ContinuousEpisodes,
    preds: ContinuousPredictions,
    k: int,
    profile: ContinuousProfile,
    source: DistanceSource,
) -> dict[str, float]:
    from vlneval.metrics.continuous import (  # deferred: numba
        drop_repeats,
        ndtw_from_dtw,
        point_path_length,
    )

    i = int(preds.episodes[k])
    lo, hi = int(preds.offsets[k]), int(preds.offsets[k + 1])
    pos = preds.positions[lo:hi]
    row: dict[str, float] = {"path_length": point_path_length(pos), "steps": float(hi - lo - 1)}
    q = drop_repeats(pos)
    row["repeated_positions"] = float(len(pos) - len(q))
    dense = episodes.dense_points(i)
    if dense is not None and len(dense):
        row["dtw"] = _dtw(profile, q, dense)
        row["ndtw"] = ndtw_from_dtw(row["dtw"], len(dense), profile.threshold)
    stopped = bool(preds.stopped[k]) or not profile.require_stop
    row["stopped"] = float(preds.stopped[k])
    if source.name == "none":
        return row
    if source.oracle is None:
        assert preds.distances is not None  # the caller checked; not user input
        d = preds.distances[lo:hi]
        ell = float(episodes.shortest[i])
    else:
        oracle = source.oracle(i)
        d = distances_along(oracle, pos, episodes.goals[i])
        ell = float(episodes.shortest[i])
        if not math.isfinite(ell):
            ell = float(distances_along(oracle, episodes.starts[i][None], episodes.goals[i])[0])
    delta, inclusive = profile.threshold, profile.success_inclusive
    ne, oe = float(d[-1]), float(np.min(d))
    row.update(
        nav_error=ne,
        oracle_error=oe,
        shortest_length=ell,
        unreachable_steps=float(np.isinf(d).sum()),
    )
    row["success"] = stopped * is_success(ne, delta, inclusive)
    row["oracle_success"] = is_success(oe, delta, inclusive)
    row["spl"] = (
        spl(row["success"], ell, row["path_length"], floor=profile.spl_floor)
        if not math.isnan(ell)
        else math.nan
    )
    if "ndtw" in row:
        row["sdtw"] = stopped * is_success(ne, delta, profile.sdtw_inclusive) * row["ndtw"]
    return row


def score_continuous(
    episodes: ContinuousEpisodes,
    preds: ContinuousPredictions,
    profile: Profile,
    source: DistanceSource,
    *,
    subset: bool = False,
    declared: Mapping[str, Any] | None = None,
    run: Mapping[str, Any] | None = None,
    show_progress: bool = True,
) -> Result:
    """Scores parsed continuous predictions; see the module docstring for every rule.

    Raises:
        InvalidInputError: episodes without a prediction when the profile requires all, a
            ``carried`` source with a file that carries no distances, or a move longer than
            one action allows under a profile that refuses them (:mod:`~vlneval.tasks.vlnce.moves`).
    """
    prof = _profile(profile)
    missing = missing_problem(episodes, preds.missing, preds.unknown, prof, subset)
    if missing is not None:
        raise InvalidInputError(missing, source=str(preds.source))
    if source.name == "carried" and preds.distances is None:
        raise InvalidInputError(
            "no step carries distance_to_goal (distance source 'carried')", source=str(preds.source)
        )

    jumps, move_warnings = check_moves(episodes, preds, prof)
    rows = [
        _episode(episodes, preds, k, prof, source)
        for k in _progress(len(preds.episodes), show_progress)
    ]
    keys = sorted({key for r in rows for key in r}, key=_column_order)
    per = {key: np.array([r.get(key, math.nan) for r in rows], dtype=np.float64) for key in keys}
    per["jumps"] = jumps
    if "nav_error" in per:
        per["unreachable"] = np.isinf(per["nav_error"]).astype(np.float64)
    parts = summarise_continuous(
        episodes, preds, per, prof, source, subset=subset, declared=declared, run=run,
        notes=move_warnings,
    )  # fmt: skip
    return parts.build(cast(Any, episodes), preds.episodes, per)


_ORDER = (
    "path_length",
    "nav_error",
    "oracle_error",
    "success",
    "oracle_success",
    "spl",
    "ndtw",
    "sdtw",
    "dtw",
    "shortest_length",
    "steps",
    "stopped",
    "repeated_positions",
    "unreachable_steps",
    "jumps",
    "unreachable",
)


def _column_order(key: str) -> int:
    return _ORDER.index(key) if key in _ORDER else len(_ORDER)


def _progress(n: int, show: bool) -> Any:
    if not show or n < 500:
        return range(n)
    from rich.console import Console  # deferred: rich
    from rich.progress import track  # deferred: rich

    console = Console(stderr=True)
    if not console.is_terminal:  # a transient bar still ends with a blank line on a pipe or file
        return range(n)
    return track(range(n), description="scoring", transient=True, console=console)


# ----- task entry points -----------------------------------------------------------------------


def _resolve_source(
    requested: str, preds: ContinuousPredictions, twin: Callable[[], DistanceSource] | None
) -> DistanceSource:
    if requested == "auto":
        requested = "carried" if preds.distances is not None else "none"
    if requested == "carried":
        return DistanceSource(
            "carried",
            "geodesic distance_to_goal carried per step in the predictions "
            "file (measured by the simulator that produced it); ℓ from the episodes file",
        )
    if requested == "twin":
        if twin is None:
            raise VLNEvalError("no twin worlds: pass --graphs DIR or --data-root DIR")
        return twin()
    return DistanceSource("none", NO_DISTANCE)


class VlnceScorer:
    """A VLN-CE split loaded once (the ``open_scorer`` of VLN-CE tasks).

    Options: ``distance``: ``auto`` (carried when the file carries distances, else none),
    ``carried``, ``twin`` (grid geodesic on the Matterport3D twin: an approximation of the
    navmesh, named as such) or ``none``; ``gt_file``: the split's ``_gt`` file (default: found
    next to the episodes); ``unreachable``: ``failure`` or ``exclude``, replacing the profile's
    policy for goals unreachable from the final position; ``show_progress`` (any other option
    is refused when the task opens the scorer). ``form`` (at scoring): ``auto``, ``r2r-ce`` or
    ``rxr-jsonl``.
    """

    def __init__(self, request: SplitRequest) -> None:
        r = request
        self.task, self.profile = r.task.name, with_policy(r.profile, r.options)
        self.distance = r.options.get("distance", "auto")
        if self.distance not in DISTANCE_SOURCES:
            raise UnknownNameError("distance source", self.distance, DISTANCE_SOURCES)
        self.show_progress = bool(r.options.get("show_progress", True))
        self.base = r.base()
        path = r.episodes_path(self.base)
        gt_file = r.options.get("gt_file")
        self.episodes = load_vlnce_split(path, task=r.task.name, split=r.split, gt_path=gt_file)
        require_goals(self.episodes.scorable, r.split, path)
        self.graphs_folder = r.graphs
        self._twin: DistanceSource | None = None

    def _twin_source(self) -> DistanceSource:
        """The twin distance source, built on first use and kept for later files."""
        if self._twin is not None:
            return self._twin

        episodes = self.episodes
        worlds = TwinWorlds(_graph_store(self.graphs_folder, self.base, "--distance twin"))
        self._twin = DistanceSource(
            "twin",
            "grid geodesic on the continuous twin built from the Matterport3D navigation "
            "graph: an APPROXIMATION of Habitat's navmesh geodesic (points off the twin's free "
            "space snap up to 0.5 m)",
            lambda i: GridOracle(worlds(episodes.scans[i]), transform=habitat_to_world, snap=0.5),
        )
        return self._twin

    def score(self, predictions: PredictionsInput, how: ScoreOptions) -> Result:
        """Scores VLN-CE predictions (a file, its bytes or its records) with the scorer's
        distance source."""
        preds = parse_ce_predictions(
            predictions, self.episodes, form=_ce_form(how.form), profile=self.profile,
            subset=how.subset,
        )  # fmt: skip
        source = _resolve_source(self.distance, preds, self._twin_source)
        return score_continuous(
            self.episodes, preds, self.profile, source, subset=how.subset,
            declared=how.declared, run=how.run, show_progress=self.show_progress,
        )  # fmt: skip


def with_policy(profile: Profile, options: Mapping[str, Any]) -> Profile:
    """The profile with the ``unreachable`` task option, when given, replacing its policy."""
    policy = options.get("unreachable")
    if not policy:
        return profile
    import dataclasses

    return dataclasses.replace(_profile(profile), unreachable=policy)


def _ce_form(form: str) -> str:
    return "auto" if form in ("auto", "triple") else form


class TwinScorer:
    """The continuous twin of an R2R split, loaded once (``open_scorer`` of ``r2r-twin``).

    Options: ``unreachable`` (as :class:`VlnceScorer`), ``show_progress``; others are ignored.
    """

    def __init__(self, request: SplitRequest) -> None:
        r = request
        self.task, self.profile = r.task.name, with_policy(r.profile, r.options)
        self.show_progress = bool(r.options.get("show_progress", True))
        self.episodes, self.worlds = load_twin_split(
            r.task, r.split, root=r.root, episodes_file=r.episodes_file, graphs=r.graphs
        )
        self.source = twin_source(self.episodes, self.worlds)

    def score(self, predictions: PredictionsInput, how: ScoreOptions) -> Result:
        """Scores continuous-twin predictions (positions in the world frame; a file, its
        bytes or its records)."""
        preds = parse_ce_predictions(
            predictions, self.episodes, form=_ce_form(how.form), profile=self.profile,
            subset=how.subset,
        )  # fmt: skip
        return score_continuous(
            self.episodes, preds, self.profile, self.source, subset=how.subset,
            declared=how.declared, run=how.run, show_progress=self.show_progress,
        )  # fmt: skip


def load_twin_split(
    task: Any,
    split: str,
    *,
    root: str | Path | None = None,
    episodes_file: str | Path | None = None,
    graphs: str | Path | None = None,
    **world_params: Any,
) -> tuple[ContinuousEpisodes, Any]:
    """The twin episodes of an R2R split and the twin worlds of their scans."""
    base = task_base(task, root)
    path = episodes_path(task, split, base, episodes_file)
    table = load_r2r(path, task=task.name, split=split)
    require_goals(table.scorable, split, path)
    store = _graph_store(graphs, base, "the continuous twin")
    return twin_episodes(table, store, task=task.name), TwinWorlds(store, **world_params)


def _graph_store(graphs: str | Path | None, base: Path | None, what: str) -> Any:
    if graphs is None and base is None:
        raise VLNEvalError(
            f"{what} needs the connectivity graphs: pass --graphs DIR or --data-root DIR"
        )
    return GraphStore(graphs if graphs is not None else graphs_dir(cast(Path, base)))


def twin_source(episodes: ContinuousEpisodes, worlds: Any) -> DistanceSource:
    """The grid-oracle distance source of twin episodes."""
    return DistanceSource(
        "twin",
        "grid geodesic on the continuous twin world (the scored worlds themselves)",
        lambda i: GridOracle(worlds(episodes.scans[i]), snap=0.5),
    )
