"""The summary of continuous scoring: aggregates, why a metric is n/a, unreachable goals.

Means are over the scored episodes, except where an episode ends where the goal is
unreachable (an infinite distance): under the profile's ``failure`` policy SR, OSR, SPL and
sDTW count it as a failure and NE averages the reachable episodes, saying over how many
(``averaged_over``); under ``exclude`` every goal metric averages the reachable ones. Each
``n/a`` carries its reason and the fix.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from vlneval.errors import hint, hinted
from vlneval.tasks.common.checks import start_result
from vlneval.tasks.common.result import ResultBuilder
from vlneval.tasks.vlnce.format import ContinuousEpisodes, ContinuousPredictions
from vlneval.tasks.vlnce.profiles import ContinuousProfile

if TYPE_CHECKING:
    from vlneval.tasks.vlnce.score import DistanceSource

__all__ = ["summarise_continuous", "GOAL_LABELS", "COLUMNS", "NO_DISTANCE", "NO_DENSE"]

GOAL_LABELS = ("NE", "OSR", "SR", "SPL", "sDTW")
COLUMNS = {
    "TL": "path_length",
    "NE": "nav_error",
    "OSR": "oracle_success",
    "SR": "success",
    "SPL": "spl",
    "nDTW": "ndtw",
    "sDTW": "sdtw",
}


def _goal_mask(per: Mapping[str, np.ndarray], prof: ContinuousProfile) -> np.ndarray:
    ne = per["nav_error"]
    return np.isfinite(ne) if prof.unreachable == "exclude" else np.ones(len(ne), dtype=np.bool_)


def _aggregate(
    per: Mapping[str, np.ndarray],
    prof: ContinuousProfile,
    source: DistanceSource,
    episodes: ContinuousEpisodes,
    preds: ContinuousPredictions,
) -> tuple[dict[str, float | None], dict[str, str], dict[str, Any], dict[str, int]]:
    metrics: dict[str, float | None] = {}
    unavailable: dict[str, str] = {}
    n = len(per["path_length"])
    goal = _goal_mask(per, prof) if "nav_error" in per else np.ones(n, dtype=np.bool_)
    unreachable: dict[str, Any] = {}
    over: dict[str, int] = {}
    if "nav_error" in per:
        inf = np.flatnonzero(~np.isfinite(per["nav_error"]))
        ids = [episodes.ids[int(preds.episodes[k])] for k in inf]
        reachable = int(goal.sum() - len(ids)) if prof.unreachable == "failure" else int(goal.sum())
        unreachable = {
            "count": len(ids),
            "ids": ids[:50],
            "policy": prof.unreachable,
            "reachable": reachable,
            "rule": (
                "counted as failures (SR, OSR, SPL, sDTW = 0); NE averages the "
                f"{reachable} reachable episode(s) only"
                if prof.unreachable == "failure"
                else f"left out of NE, OSR, SR, SPL and sDTW (all over the {reachable} reachable)"
            ),
            "steps_with_infinite_distance": int(
                np.nansum(per.get("unreachable_steps", np.zeros(1)))
            ),
        }
    for label in prof.metrics:
        col = COLUMNS[label]
        if col not in per:
            unavailable[label] = (
                NO_DENSE
                if col in ("ndtw",) or (col == "sdtw" and source.name != "none")
                else NO_DISTANCE
            )
            metrics[label] = None
            continue
        values = per[col]
        if label in GOAL_LABELS:
            values = values[goal]
        if label == "NE":
            values = values[np.isfinite(values)]
        if len(values) == 0:
            metrics[label], unavailable[label] = None, _no_finite(unreachable)
        elif np.isnan(values).any():
            metrics[label] = None
            unavailable[label] = hinted(
                f"{int(np.isnan(values).sum())} episode(s) have no start-goal distance (ℓ) for "
                "SPL: the episodes file carries no info.geodesic_distance for them (carry it",
                hint("--distance", "--distance twin computes ℓ on the twin grid, an approximation",
                     lead=", or "),
                ")",
            )  # fmt: skip
        else:
            metrics[label] = float(values.mean())
            if len(values) < n:
                over[label] = len(values)
    return metrics, unavailable, unreachable, over


NO_DISTANCE = hinted(
    "no distance source: the predictions carry no distance_to_goal; carry it per step (as a "
    "Habitat run measures it)",
    hint("--distance", "--distance twin (grid geodesic on the Matterport3D twin, an "
         "approximation of the navmesh; needs --data-root or --graphs)", lead=", or "),
)  # fmt: skip
NO_DENSE = hinted(
    "no dense reference path: the split's _gt file was not found beside the episodes "
    "(<split>_gt.json.gz)",
    hint("--gt-file", "pass it with --gt-file FILE"),
)


def _no_finite(unreachable: Mapping[str, Any]) -> str:
    if unreachable.get("count") and not unreachable.get("reachable"):
        return (
            f"every scored episode ({unreachable['count']}) ends where the goal is unreachable "
            "(an infinite distance): none is left to average; check that the trajectories end "
            "on the map, and the distance source"
        )
    return "no scored episode has a finite value"


def summarise_continuous(
    episodes: ContinuousEpisodes,
    preds: ContinuousPredictions,
    per: Mapping[str, np.ndarray],
    prof: ContinuousProfile,
    source: DistanceSource,
    *,
    subset: bool,
    declared: Mapping[str, Any] | None = None,
    run: Mapping[str, Any] | None = None,
    notes: Sequence[str] = (),
) -> ResultBuilder:
    """The parts of the result (spec/outputs.md) of continuous scoring; ``notes`` join the
    warnings after the reader's."""
    metrics, unavailable, unreachable, over = _aggregate(per, prof, source, episodes, preds)
    warnings = [*preds.warnings, *notes]
    if unreachable.get("count"):
        warnings.append(_unreachable_warning(unreachable, len(preds.episodes)))
    dtw = _dtw_note(prof)
    warnings.append(dtw["note"])
    if preds.form == "rxr-jsonl":
        warnings.append(
            "the RxR-Habitat JSONL form has no stop flag: the last position is taken as STOP"
        )
    parts = start_result(
        task=episodes.task, split=episodes.split, prof=prof, source=preds.source,
        form=preds.form, n_scored=len(preds.episodes), n_expected=len(episodes),
        partial=bool(preds.missing) and subset, metrics=metrics, unavailable=unavailable,
        per=per, warnings=warnings, declared=declared, run=run,
        data_version=episodes.data_version,
        details={
            "distance": {
                "source": source.name, "detail": source.description, "unreachable": unreachable,
            },
            "dtw": dtw,
            "averaged_over": over,
        },
    )  # fmt: skip
    scoring = parts.protocol["scoring"]
    scoring["distance_source"] = source.name
    scoring["distance_detail"] = source.description
    scoring["unreachable"] = prof.unreachable  # changes NE and SR: compared like the profile
    scoring["dtw"] = dtw["method"]
    scoring["stop"] = (
        "the last position is the stop (RxR-Habitat form)"
        if preds.form == "rxr-jsonl"
        else "success requires an explicit STOP"
        if prof.require_stop
        else "STOP not required"
    )
    return parts


def _unreachable_warning(unreachable: Mapping[str, Any], n: int) -> str:
    """Why NE (and, when excluded, every goal metric) averages fewer episodes than scored."""
    count, reachable, policy = unreachable["count"], unreachable["reachable"], unreachable["policy"]
    head = (
        f"{count} of {n} episode(s) end where the goal is unreachable (an infinite distance: "
        "off the map, out of the navigable area, or a goal the distance source cannot reach): "
    )
    if policy == "failure":
        return hinted(
            head,
            f"SR, SPL and sDTW count them as failures (OSR keeps a closer approach on the way); NE "
            f"is the mean over the {reachable} "
            "reachable episode(s) only (the count is shown beside it): compare NE only between "
            "runs with the same count (policy 'failure'",
            hint("--unreachable", "--unreachable exclude leaves them out of every goal metric"),
            ")",
        )
    return hinted(
        head,
        f"NE, OSR, SR, SPL and sDTW are means over the {reachable} reachable episode(s) only "
        "(policy 'exclude': leaving the map removes an episode from them",
        hint("--unreachable", "the default --unreachable failure counts them as failures"),
        ")",
    )


def _dtw_note(prof: ContinuousProfile) -> dict[str, Any]:
    if prof.dtw == "fastdtw":
        method = (
            f"fastdtw radius {prof.fastdtw_radius} ({prof.fastdtw_variant} variant of the package)"
        )
        return {
            "method": method,
            "approximate": True,
            "note": hinted(
                f"nDTW and sDTW use {method}, VLN-CE's default: an APPROXIMATE DTW that can exceed "
                "the exact one (nDTW too low)",
                hint("--profile", "--profile vlnce-exact computes the exact DTW"),
            ),
        }
    return {
        "method": "exact",
        "approximate": False,
        "note": hinted(
            "nDTW and sDTW use the exact DTW: this DEVIATES from VLN-CE's official default "
            "(fastdtw, radius 1, an approximation)",
            hint("--profile", "--profile vlnce reproduces the official numbers"),
        ),
    }
