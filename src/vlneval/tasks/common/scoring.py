"""Scoring graph trajectories: episodes + predictions + profile -> per-episode table and Result.

Shared by the tasks on the Matterport3D graphs (the R2R family, NDH, HANNA; REVERIE and SOON
use :func:`object_summary`, Touchdown :func:`summarise`)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from vlneval.errors import ProblemCollector, VLNEvalError, did_you_mean
from vlneval.graph.store import GraphStore
from vlneval.metrics.batch import reference_lengths
from vlneval.tasks.base import Task
from vlneval.tasks.common.arrays import SplitArrays, build_arrays
from vlneval.tasks.common.checks import check_matches, check_rules, missing_problem, start_result
from vlneval.tasks.common.episodes import EpisodeTable
from vlneval.tasks.common.goal_scoring import finish_columns, navigation
from vlneval.tasks.common.predictions import Predictions
from vlneval.tasks.common.request import episodes_path, open_graphs, task_base
from vlneval.tasks.common.result import Result, ResultBuilder, finite_mean
from vlneval.tasks.profiles import Profile

__all__ = [
    "check_opened",
    "check_scans",
    "load_split",
    "score_parsed",
    "summarise",
    "object_summary",
    "LABEL_TO_COLUMN",
]

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
    check: bool = True,
    **options: Any,
) -> tuple[EpisodeTable, GraphStore]:
    """The episodes of ``split`` (``options``: those the task's loader takes) and the graphs of
    their scans, refused by :func:`check_scans` unless ``check=False`` (a task's scorer:
    ``Task.open`` checks every scorer's scans once)."""
    base = task_base(task, root)
    try:
        store = open_graphs(graphs, base)
    except VLNEvalError as exc:  # reported after any problem with the episodes
        missing: VLNEvalError | None = exc
    else:
        missing = None
    path = episodes_path(task, split, base, episodes_file)
    episodes = task.load(path, split, profile, **options)
    if missing is not None:
        raise missing
    if check:
        check_scans(episodes, store)
    return episodes, store


def check_opened(scorer: Any) -> None:
    """A scorer on Matterport3D graphs refuses, when it opens (``Task.open``), an episode whose
    scan has no graph, naming the episodes file, the episode and the field ``scan`` (later, the
    graph store would say only the scan); other scorers pass."""
    episodes, graphs = getattr(scorer, "episodes", None), getattr(scorer, "graphs", None)
    if isinstance(episodes, EpisodeTable) and isinstance(graphs, GraphStore):
        check_scans(episodes, graphs)


def check_scans(episodes: EpisodeTable, store: GraphStore) -> None:
    """Refuses episodes whose scan has no navigation graph in ``store`` (a mistyped scan in a
    custom episodes file, or graphs not fetched): each such scan is named once, in the
    episodes file, with its first episode and the field ``scan``.

    Raises:
        InvalidInputError: some episode's scan has no connectivity file.
    """
    unknown = set(episodes.scans).difference(store.scans)
    if not unknown:
        return
    pc = ProblemCollector(str(episodes.source))
    if len(unknown) > 1 and unknown == set(episodes.scans):  # graphs not fetched, most likely
        pc.add(
            f"no connectivity file in {store.folder} for any of the split's {len(unknown)} "
            f"scans (e.g. {episodes.scans[0]!r}): is it the graphs' folder?",
            field="scan",
        )
        pc.raise_if_any()
    for scan in sorted(unknown, key=episodes.scans.index):
        i, n = episodes.scans.index(scan), episodes.scans.count(scan)
        close = did_you_mean(scan, store.scans)
        pc.add(
            f"no connectivity file for scan {scan!r} in {store.folder}"
            + (f"; did you mean {close!r}?" if close else "")
            + (f" ({n} episodes have this scan)" if n > 1 else ""),
            episode=episodes.label(i),  # as the episodes' other problems
            field="scan",
        )
    pc.raise_if_any()


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
    notes: tuple[str, ...] = (),
    validate: bool = True,
    cache: SplitArrays | None = None,
) -> Result:
    """Scores predictions :func:`~vlneval.tasks.common.predictions.parse_predictions` read
    (the R2R family's scorer, ``R2RScorer``, does both).

    ``pc`` carries problems found while parsing; they are raised together with the rule checks'.
    ``notes`` are the task's own warnings (``Task.notes``). ``validate=False`` skips the
    kernel's bounds checks: only for predictions this package's reader made from ``store``.
    ``cache`` keeps the episode side of the arrays between calls (one per split's scorer).
    """
    check_matches(episodes, preds, pc, missing_problem(episodes, preds, prof, subset))
    arr = build_arrays(episodes, preds, store, cache)
    name = f"lengths-{prof.spl_reference}"
    lengths = arr.shared.get(name)
    if lengths is None:  # kept with the episode side of the arrays
        lengths = arr.shared[name] = reference_lengths(
            arr.dist_flat, arr.table_offsets, arr.table_sizes, arr.scan_index,
            arr.ref, arr.ref_offsets, arr.goals, arr.goal_offsets,
            spl_reference=prof.spl_reference,
        )  # fmt: skip
    per = navigation(
        arr,
        threshold=prof.threshold,
        success_inclusive=prof.success_inclusive,
        sdtw_inclusive=prof.sdtw_inclusive,
        spl_reference=prof.spl_reference,
        spl_floor=prof.spl_floor,
        collapse_repeats=prof.collapse_repeats,
        validate=validate,
        lengths=lengths,
    )
    flags = check_rules(episodes, preds, arr, store, prof, subset=subset, pc=pc)
    finish_columns(per, flags, "nav_error")
    notes = (*notes, *_jumps_without_path(episodes, preds, per))
    parts = summarise(
        episodes, preds, per, prof, subset=subset, declared=declared, run=run, notes=notes
    )
    return parts.build(episodes, preds.episodes, per)


def _jumps_without_path(
    episodes: EpisodeTable, preds: Predictions, per: Mapping[str, np.ndarray]
) -> tuple[str, ...]:
    """The warning naming the episodes whose trajectory jumps between viewpoints with no path
    between them (another connected component: an infinite TL), under a profile that scores
    jumps; ``validate`` refuses such a file, as the official script fails on it."""
    bad = np.flatnonzero(~np.isfinite(per["path_length"]))
    if not bad.size:
        return ()
    ids = ", ".join(episodes.ids[int(preds.episodes[k])] for k in bad[:5].tolist())
    return (
        f"{bad.size} episode(s) jump between viewpoints with no path between them (first: "
        f"{ids}): their TL is infinite; an official script that scores jumps by their shortest "
        "distance (VLN-DUET's, say) fails on such a file (its distances hold reachable pairs only)",
    )


# Why a per-episode value is infinite, and what else that episode counts as (default: a
# viewpoint of the trajectory has no path to the goal, whether the goal is unreachable from the
# start or a jump left its component; such an episode fails SR, OSR and SPL).
NO_PATH_TO_GOAL = "a viewpoint of the trajectory has no path to the goal"
_CAUSES = {"TL": "the trajectory jumps between viewpoints with no path between them"}
_CONSEQUENCES = {
    "NE": ", success counts them as failures",
    "OE": ", oracle success counts them as failures",
}


def _means(
    per: Mapping[str, np.ndarray],
    columns: Mapping[str, str],
    prof: Profile,
    warnings: list[str],
    given: Mapping[str, str] | None = None,
) -> tuple[dict[str, float | None], dict[str, str], dict[str, int]]:
    """The means of ``prof``'s metrics, why each ``None`` is one (``given`` reasons first: those
    metrics are not computed), and the count of episodes of each mean over fewer than all (its
    finite values)."""
    metrics: dict[str, float | None] = {}
    reasons: dict[str, str] = dict(given or {})
    over: dict[str, int] = {}
    for label in prof.metrics:
        if label in reasons:
            metrics[label] = None
            continue
        metrics[label] = finite_mean(
            np.asarray(per[columns[label]], dtype=np.float64), label, warnings,
            _CAUSES.get(label, NO_PATH_TO_GOAL), _CONSEQUENCES.get(label, ""),
            over=over, reasons=reasons,
        )  # fmt: skip
        if metrics[label] is None:
            reasons.setdefault(label, "no scored episodes")
    return metrics, reasons, over


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
    notes: tuple[str, ...] = (),
    data_version: str | None = None,
) -> ResultBuilder:
    """The parts of the result (``spec/outputs.md``) of one scored file.

    ``columns`` maps metric labels that are not in ``LABEL_TO_COLUMN`` (task-specific metrics
    such as ``GP`` or ``TC``) to their per-episode column; ``notes`` are the task's own
    warnings (``Task.notes``).
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
    warnings.extend(notes)
    metrics, unavailable, over = _means(per, {**LABEL_TO_COLUMN, **(columns or {})}, prof, warnings)
    return start_result(
        task=episodes.task, split=episodes.split, prof=prof, source=preds.source,
        form=preds.form, n_scored=len(preds.episodes), n_expected=len(episodes),
        partial=partial, metrics=metrics, per=per, warnings=warnings, declared=declared, run=run,
        unavailable=unavailable, data_version=data_version,
        details={"averaged_over": over}
        | ({} if preds.key_read is None else {"trajectory_key": preds.key_read}),
    )  # fmt: skip


def object_summary(
    *,
    task: str,
    split: str,
    n_expected: int,
    n_scored: int,
    missing: list[str],
    subset: bool,
    source: str,
    form: str,
    per: Mapping[str, np.ndarray],
    columns: Mapping[str, str],
    prof: Profile,
    warnings: list[str],
    unavailable: Mapping[str, str],
    data_version: str | None,
    declared: Mapping[str, Any] | None = None,
    run: Mapping[str, Any] | None = None,
    card_extra: Mapping[str, Any] | None = None,
) -> ResultBuilder:
    """The parts of the result (``spec/outputs.md``) of an object-goal task (REVERIE, SOON)."""
    warnings = list(warnings)
    metrics, reasons, over = _means(per, columns, prof, warnings, unavailable)
    partial = bool(missing) and subset
    return start_result(
        task=task, split=split, prof=prof, source=source, form=form, n_scored=n_scored,
        n_expected=n_expected, partial=partial, metrics=metrics, unavailable=reasons, per=per,
        warnings=warnings, data_version=data_version, declared=declared, run=run, card_extra=card_extra,
        details={"averaged_over": over},
    )  # fmt: skip
