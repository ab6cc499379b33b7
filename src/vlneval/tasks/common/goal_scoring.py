"""The shape every graph task's scorer shares (NDH, HANNA, REVERIE, SOON, Touchdown).

A task's scorer reads R2R-style trajectories with :func:`read_trajectories`, whose problems wait
in a collector, and its ``score_<task>(episodes, predictions, graphs, profile, how, pc=)`` checks
the predictions against the rules (:func:`checked_arrays`, which raises every problem together,
completeness first), computes its per-episode columns (the R2R family's
kernel through :func:`navigation`, or both at once by :func:`checked_navigation`, which keeps
only a goal task's columns, :func:`goal_columns`; success by
:func:`hit`), adds the rule flags and the
``unreachable`` column (:func:`finish_columns`) and summarises them with ``how``'s options
(:func:`summary_options`). Its scorer class (``open_scorer``) holds the split loaded once and
hands each predictions input to that function.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from vlneval.errors import ProblemCollector
from vlneval.graph.store import GraphStore
from vlneval.metrics.batch import score_batch
from vlneval.tasks.common.arrays import ScoringArrays, build_arrays
from vlneval.tasks.common.checks import check_matches, check_rules, missing_problem
from vlneval.tasks.common.episodes import EpisodeTable
from vlneval.tasks.common.predictions import Predictions, parse_predictions
from vlneval.tasks.common.request import PredictionsInput, ScoreOptions, episodes_path
from vlneval.tasks.profiles import Profile

if TYPE_CHECKING:
    from vlneval.tasks.base import Task

__all__ = [
    "DEFAULT_OPTIONS",
    "read_trajectories",
    "checked_arrays",
    "checked_navigation",
    "goal_columns",
    "GOAL_COLUMNS",
    "navigation",
    "hit",
    "finish_columns",
    "summary_options",
    "release_file",
]

#: Score every episode (complete predictions required), nothing declared: ``score_<task>``'s default.
DEFAULT_OPTIONS = ScoreOptions()
#: The kernel's per-episode columns every goal task keeps (:func:`goal_columns`).
GOAL_COLUMNS = (
    "nav_error", "oracle_error", "success", "oracle_success", "path_length", "shortest_length",
    "spl", "steps",
)  # fmt: skip
#: Path-fidelity metric label -> the kernel's column, kept only when the profile reports it.
FIDELITY = {"nDTW": "ndtw", "sDTW": "sdtw", "CLS": "cls"}


def read_trajectories(
    predictions: PredictionsInput,
    episodes: EpisodeTable,
    graphs: GraphStore,
    how: ScoreOptions,
    pc: ProblemCollector,
    *,
    trajectory_key: str | None = None,
    keep_fields: tuple[str, ...] = (),
) -> Predictions:
    """The R2R-style trajectories of ``predictions`` as node indices (``trajectory_key``:
    the task's default field, ``how.trajectory_key`` first). Their problems are added to
    ``pc``, which :func:`checked_arrays` raises with the rule checks' (completeness first).
    """
    return parse_predictions(
        predictions, episodes, graphs, form=how.form,
        trajectory_key=how.trajectory_key or trajectory_key, keep_fields=keep_fields,
        collect=pc, skip_summaries=how.skip_summaries,
    )  # fmt: skip


def checked_arrays(
    episodes: EpisodeTable,
    preds: Predictions,
    graphs: GraphStore,
    prof: Profile,
    subset: bool,
    *,
    pc: ProblemCollector | None = None,
    jump_reason: str | None = None,
) -> tuple[ScoringArrays, dict[str, np.ndarray]]:
    """The kernel arrays of the predicted episodes and the rule checks' per-episode flags;
    ``pc``: the problems found reading the predictions, raised with the rules' (as
    :func:`~vlneval.tasks.common.checks.check_rules`, as is ``jump_reason``).

    Raises:
        InvalidInputError: every broken rule (start, adjacency, completeness) and every
            problem ``pc`` holds at once, or no prediction matches an episode (a file for
            another split or task).
    """
    check_matches(episodes, preds, pc, missing_problem(episodes, preds, prof, subset))
    arr = build_arrays(episodes, preds, graphs)
    flags = check_rules(
        episodes, preds, arr, graphs, prof, subset=subset, pc=pc, jump_reason=jump_reason
    )
    return arr, flags


def checked_navigation(
    episodes: EpisodeTable,
    preds: Predictions,
    graphs: GraphStore,
    prof: Profile,
    subset: bool,
    *,
    pc: ProblemCollector | None = None,
    jump_reason: str | None = None,
    **rules: Any,
) -> tuple[ScoringArrays, dict[str, np.ndarray], dict[str, np.ndarray]]:
    """:func:`checked_arrays` (``pc`` and ``jump_reason`` as there) and the
    :func:`goal_columns` of :func:`navigation` under ``rules``, computing DTW only when
    ``prof`` reports a path-fidelity metric.

    Raises:
        InvalidInputError: as :func:`checked_arrays`.
    """
    arr, flags = checked_arrays(
        episodes, preds, graphs, prof, subset, pc=pc, jump_reason=jump_reason
    )
    fidelity = any(label in prof.metrics for label in FIDELITY)
    return arr, flags, goal_columns(navigation(arr, fidelity=fidelity, **rules), prof)


def goal_columns(nav: dict[str, np.ndarray], prof: Profile) -> dict[str, np.ndarray]:
    """The columns of :func:`navigation`'s ``nav`` a goal task's per-episode table holds
    (:data:`GOAL_COLUMNS`), with a path-fidelity column only where ``prof`` reports its
    metric: a goal task has no reference path to follow, so no DTW, nDTW, sDTW or CLS.

    Example:
        >>> from vlneval.tasks.profiles import Profile
        >>> nav = {k: np.zeros(1) for k in (*GOAL_COLUMNS, "reference_length", "dtw", "ndtw", "cls")}
        >>> list(goal_columns(nav, Profile("p", "1", "doc", metrics=("SR", "CLS"))))[-2:]
        ['steps', 'cls']
    """
    fidelity = [column for label, column in FIDELITY.items() if label in prof.metrics]
    return {k: nav[k] for k in (*GOAL_COLUMNS, *fidelity)}


def navigation(arr: ScoringArrays, **rules: Any) -> dict[str, np.ndarray]:
    """The R2R family's per-episode columns (NE, OE, TL, ℓ, SPL, ...) of ``arr`` under ``rules``
    (keyword options of :func:`vlneval.metrics.batch.score_batch`), without the kernels'
    ``repeats``: the rule checks count ``repeated_viewpoints`` for every task."""
    per = score_batch(
        arr.dist_flat, arr.table_offsets, arr.table_sizes, arr.scan_index,
        arr.traj, arr.traj_offsets, arr.ref, arr.ref_offsets, arr.goals, arr.goal_offsets,
        **rules,
    )  # fmt: skip
    del per["repeats"]
    return per


def hit(distances: np.ndarray, prof: Profile) -> np.ndarray:
    """``1.0`` where a distance is within the profile's success radius (``<=`` when the profile
    is inclusive, else ``<``), else ``0.0``; NaN counts as a miss.

    Example:
        >>> from vlneval.tasks.profiles import Profile
        >>> hit(np.array([2.0, 3.0, np.nan]), Profile("p", "1", "doc")).tolist()
        [1.0, 0.0, 0.0]
    """
    with np.errstate(invalid="ignore"):
        inside = (
            distances <= prof.threshold if prof.success_inclusive else distances < prof.threshold
        )
    return inside.astype(np.float64)


def finish_columns(
    per: dict[str, np.ndarray], flags: dict[str, np.ndarray], *finite: str
) -> dict[str, np.ndarray]:
    """``per`` with the rule flags and ``unreachable`` (1 where any ``finite`` column is not
    finite: a visited viewpoint cannot reach the goal)."""
    per.update(flags)
    bad = np.zeros(len(per[finite[0]]), dtype=np.bool_)
    for name in finite:
        bad |= ~np.isfinite(per[name])
    per["unreachable"] = bad.astype(np.int64)
    return per


def summary_options(how: ScoreOptions) -> dict[str, Any]:
    """The keyword options of the summary (``summarise``, ``object_summary``) taken from ``how``."""
    return {"subset": how.subset, "declared": how.declared, "run": how.run}


def release_file(
    task: Task,
    split: str,
    root: Path | None,
    episodes_file: str | Path | None,
    version: str | None,
) -> tuple[Path, str | None]:
    """The episodes file of ``split`` and the release it is read as.

    One rule for every case: a given ``version`` is resolved first (any case, to the task's
    spelling: ``"V1"`` is ``"v1"``) whether or not a file is given; then ``episodes_file`` if
    given (the release is ``version``, None when not given), else the file of ``split`` in the
    release ``version`` (default: the task's first ``version_files`` entry) under the data root
    ``root``. An empty ``episodes_file`` or ``version`` counts as not given (as in
    :func:`~vlneval.tasks.common.request.episodes_path`).

    Raises:
        UnknownNameError: ``version`` is not one of the task's releases.
        MissingDataError: no data root, a root without the task's folder, or no such file (the
            splits found for that release and the release that holds ``split``, opening with
            the task's ``release_lead``).
    """
    resolved = task.option("data_version").resolve(version, task.name) if version else None
    if not episodes_file:  # the file of a release under the root: the default release
        resolved = resolved or task.data_versions[0]
    lead = task.release_lead.format(split=split, version=resolved) if task.release_lead else None
    return episodes_path(task, split, root, episodes_file, version=resolved, lead=lead), resolved
