"""The runner: episodes + predictions + profile -> per-episode table and summary."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from vlneval.data.episodes import EpisodeTable
from vlneval.data.predictions import Predictions
from vlneval.errors import ProblemCollector, VLNEvalError
from vlneval.evaluation.arrays import build_arrays
from vlneval.evaluation.checks import check_rules
from vlneval.evaluation.request import episodes_path, open_graphs, task_base
from vlneval.evaluation.result import Result, ResultBuilder, finite_mean, start_result
from vlneval.graph.store import GraphStore
from vlneval.profiles import Profile
from vlneval.tasks import Task

__all__ = ["load_split", "score_parsed", "summarise", "LABEL_TO_COLUMN"]

LABEL_TO_COLUMN = {
    "TL": "path_length",
    "NE": "nav_error",
    "OE": "oracle_error",
    "OSR": "oracle_success",
    "SR": "success",
    "SPL": "spl",
    "nDTW": "ndtw",
    "sDTW": "sdtw",
    "CLS": "cls",
}


def load_split(
    task: Task,
    split: str,
    profile: Profile,
    *,
    root: str | Path | None = None,
    episodes_file: str | Path | None = None,
    graphs: str | Path | None = None,
) -> tuple[EpisodeTable, GraphStore]:
    """The episodes of ``split`` and the graphs of their scans."""
    base = task_base(task, root)
    try:
        store = open_graphs(graphs, base)
    except VLNEvalError as exc:  # reported after any problem with the episodes
        missing: VLNEvalError | None = exc
    else:
        missing = None
    path = episodes_path(task, split, base, episodes_file)
    episodes = task.load(path, split, profile)
    if missing is not None:
        raise missing
    return episodes, store


def score_parsed(
    episodes: EpisodeTable,
    preds: Predictions,
    store: GraphStore,
    prof: Profile,
    *,
    subset: bool = False,
    declared: Mapping[str, Any] | None = None,
    run: Mapping[str, Any] | None = None,
    pc: ProblemCollector | None = None,
) -> Result:
    """Scores already parsed predictions (see :func:`evaluate`).

    ``pc`` carries problems found while parsing; they are raised together with the rule checks'.
    """
    from vlneval.metrics.batch import score_batch

    if len(preds.episodes) == 0:
        pc = pc if pc is not None else ProblemCollector(preds.source)
        if not pc.problems:
            pc.add(f"no prediction matches an episode of {episodes.task} {episodes.split}")
        pc.raise_if_any()
    arr = build_arrays(episodes, preds, store)
    flags = check_rules(episodes, preds, arr, store, prof, subset=subset, pc=pc)
    per = score_batch(
        arr.dist_flat,
        arr.table_offsets,
        arr.table_sizes,
        arr.scan_index,
        arr.traj,
        arr.traj_offsets,
        arr.ref,
        arr.ref_offsets,
        arr.goals,
        arr.goal_offsets,
        threshold=prof.threshold,
        success_inclusive=prof.success_inclusive,
        sdtw_inclusive=prof.sdtw_inclusive,
        spl_reference=prof.spl_reference,
        spl_floor=prof.spl_floor,
        collapse_repeats=prof.collapse_repeats,
    )
    per = dict(per)
    per.pop("repeats", None)  # the same count as the rule checks' repeated_viewpoints
    per.update(flags)
    per["unreachable"] = (~np.isfinite(per["nav_error"])).astype(np.int64)
    parts = summarise(episodes, preds, per, prof, subset=subset, declared=declared, run=run)
    return parts.build(episodes, preds.episodes, per)


def _mean(values: np.ndarray, label: str, warnings: list[str]) -> float | None:
    if label == "TL":
        cause = "the trajectory jumps between viewpoints with no path between them"
        return finite_mean(values, label, warnings, cause)
    cause = "a visited viewpoint cannot reach the goal"
    return finite_mean(values, label, warnings, cause, ", success counts them as failures")


def summarise(
    episodes: EpisodeTable,
    preds: Predictions,
    per: Mapping[str, np.ndarray],
    prof: Profile,
    *,
    subset: bool,
    declared: Mapping[str, Any] | None = None,
    run: Mapping[str, Any] | None = None,
    columns: Mapping[str, str] | None = None,
) -> ResultBuilder:
    """The parts of the result (``spec/outputs.md``) of one scored file.

    ``columns`` maps metric labels that are not in ``LABEL_TO_COLUMN`` (task-specific metrics
    such as ``GP`` or ``TC``) to their per-episode column.
    """
    warnings = list(preds.warnings)
    if episodes.left_out:
        warnings.append(
            f"profile {prof.name} scores instructions k < {prof.max_instructions} only, as the "
            f"official script does; left out: {', '.join(episodes.left_out[:10])}"
        )
    partial = bool(preds.missing) and subset
    if preds.missing and not subset and not prof.require_complete:
        warnings.append(
            f"{len(preds.missing)} of {len(episodes)} episodes have no prediction; profile "
            f"{prof.name} scores the others, as its script does (first missing: "
            f"{', '.join(preds.missing[:5])})"
        )
    from vlneval.tasks import get_task

    if get_task(episodes.task).embedded:
        warnings.append("the demo task is synthetic (generated houses and episodes), not real data")
    label_to_column = {**LABEL_TO_COLUMN, **(columns or {})}
    metrics = {
        label: _mean(np.asarray(per[label_to_column[label]], dtype=np.float64), label, warnings)
        for label in prof.metrics
    }
    return start_result(
        task=episodes.task, split=episodes.split, prof=prof, source=preds.source,
        form=preds.form, n_scored=len(preds.episodes), n_expected=len(episodes),
        partial=partial, metrics=metrics, per=per, warnings=warnings, declared=declared, run=run,
        unavailable={k: "no scored episodes" for k, v in metrics.items() if v is None},
    )  # fmt: skip
