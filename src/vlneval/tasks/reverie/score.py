"""REVERIE scoring: visibility success, SPL, TL, remote grounding (RGS, RGSPL).

Reproduces ``YuankaiQi/REVERIE tasks/REVERIE/eval_release.py`` (profile ``reverie``): success =
the target object is visible from the final viewpoint (non-empty ``visible_pos`` in the BBox
files), oracle success = visible from any visited viewpoint, SPL and RGSPL with ℓ = the shortest
distance from the start to the last viewpoint of the annotated path, TL without an adjacency
check, RGS = string equality of object ids, not gated by navigation. Profile ``reverie-duet``
follows ``cshizhe/VLN-DUET map_nav_src/reverie/env.py`` (ℓ = the reference path's length, floor
0.01, field ``pred_objid``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from vlneval.errors import MissingDataError, ProblemCollector
from vlneval.graph.store import GraphStore
from vlneval.metrics.grounding import length_weighted, remote_grounding_success, visibility_success
from vlneval.tasks.base import Task
from vlneval.tasks.common.episodes import require_goals
from vlneval.tasks.common.goal_scoring import (
    DEFAULT_OPTIONS,
    checked_navigation,
    finish_columns,
    read_trajectories,
    release_file,
    summary_options,
)
from vlneval.tasks.common.inputs import read_input
from vlneval.tasks.common.predictions import Predictions
from vlneval.tasks.common.request import PredictionsInput, ScoreOptions, SplitRequest, open_graphs
from vlneval.tasks.common.result import Result
from vlneval.tasks.common.root import data_root
from vlneval.tasks.common.scoring import object_summary
from vlneval.tasks.profiles import Profile
from vlneval.tasks.reverie.boxes import ObjectBoxes, find_boxes, load_boxes
from vlneval.tasks.reverie.format import (
    OBJECT_FIELDS,
    ObjectPredictions,
    ReverieEpisodes,
    check_prediction_keys,
    load_reverie,
    read_predicted_objects,
)

__all__ = [
    "ReverieScorer",
    "score_reverie",
    "open_reverie",
    "REVERIE_COLUMNS",
]

#: Summary label -> per-episode column.
REVERIE_COLUMNS = {
    "TL": "path_length",
    "OSR": "oracle_success",
    "SR": "success",
    "SPL": "spl",
    "RGS": "grounding_success",
    "RGSPL": "grounding_spl",
    "J": "joint_success",
}


def _boxes(
    base: Path | None, episodes: Path, version: str | None, bboxes: str | Path | None
) -> tuple[ObjectBoxes, list[str]]:
    if bboxes is not None:
        return load_boxes(bboxes, version="as given"), []
    folders = [base / "reverie"] if base is not None else []
    folders += [episodes.parent, episodes.parent.parent]
    want = version or "v1"
    for folder in folders:
        found = find_boxes(folder, want)
        if found is not None:
            path, got = found
            notes = []
            if got != want:
                notes.append(
                    f"no {want} object boxes found (looked for data_v2/BBoxes.json, data_v2/BBox/, "
                    f"data_v2/BBox.tar.gz); scoring {want} episodes with the {got} boxes at {path}. "
                    "The v2 boxes are distributed on Google Drive only: put them there to score v2 exactly"
                )
            return load_boxes(path, version=got), notes
    raise MissingDataError(
        "REVERIE needs its object boxes (BBox/ folder, BBox.tar.gz or BBoxes.json) under "
        "<data root>/reverie or next to the episodes file; none found"
    )


def release_at(task: Task, split: str, path: Path) -> str | None:
    """The release an episodes file given by name belongs to when it lies where a data root
    puts that release's file of ``split`` (``.../reverie/data_v2/REVERIE_val_unseen.json.gz``:
    v2), so that it is scored and described as the same file found under the root is; None
    elsewhere (a file of unknown release).

    Example:
        >>> from vlneval.tasks.reverie import TASK
        >>> [release_at(TASK, "val_seen", Path(p)) for p in ("/d/reverie/data_v2/REVERIE_val_seen.json.gz",
        ...     "/d/reverie/REVERIE_val_seen.json", "/secret/REVERIE_val_seen.json")]
        ['v2', 'v1', None]
    """
    where = path.as_posix().removesuffix(".gz")
    for version, pattern in task.version_files:
        if where.endswith(f"/{task.folder}/{pattern.format(split=split)}"):
            return version
    return None


def open_reverie(
    task: Task,
    split: str,
    *,
    root: str | Path | None = None,
    episodes_file: str | Path | None = None,
    graphs: str | Path | None = None,
    data_version: str | None = None,
    bboxes: str | Path | None = None,
) -> tuple[ReverieEpisodes, GraphStore, ObjectBoxes, list[str]]:
    """The episodes, graphs and object boxes of a REVERIE split, and notes about them."""
    base = data_root(root)
    path, version = release_file(task, split, base, episodes_file, data_version)
    version = version or release_at(task, split, path)
    episodes = load_reverie(path, task=task.name, split=split, data_version=version)
    store = open_graphs(graphs, base)
    boxes, notes = _boxes(base, path, version, bboxes)
    return episodes, store, boxes, notes


class ReverieScorer:
    """A REVERIE split, its graphs and object boxes loaded once (``open_scorer`` of ``reverie``).

    Options: ``data_version`` (``v2``, the default and current release, or ``v1``) and
    ``bboxes`` (a BBox folder, ``.tar.gz`` or ``BBoxes.json``; default: found under the data
    root, the v2 boxes first, else the v1 boxes with a warning).

    Raises:
        VLNEvalError: unknown options, missing data, a hidden test split.
    """

    def __init__(self, request: SplitRequest) -> None:
        r = request
        data_version, bboxes = r.options.get("data_version"), r.options.get("bboxes")
        self.episodes, self.graphs, self.boxes, self.notes = open_reverie(
            r.task, r.split, root=r.root, episodes_file=r.episodes_file, graphs=r.graphs,
            data_version=data_version, bboxes=bboxes,
        )  # fmt: skip
        require_goals(self.episodes.scorable, r.split, self.episodes.source)
        self.task, self.profile = r.task.name, r.profile

    def score(self, predictions: PredictionsInput, how: ScoreOptions) -> Result:
        """Scores REVERIE predictions (a file, its bytes or its records).

        Raises:
            VLNEvalError: bad input (one message naming file, id and field).
        """
        given = read_input(predictions)
        official = str(getattr(self.profile, "object_field", "predObjId"))
        check_prediction_keys(given, official)
        pc = ProblemCollector(given.source)
        preds = read_trajectories(
            given, self.episodes, self.graphs, how, pc, keep_fields=OBJECT_FIELDS
        )
        objects = read_predicted_objects(
            preds.extra, self.episodes, preds.episodes, preds.source, official, collect=pc
        )
        return score_reverie(
            self.episodes,
            preds,
            objects,
            self.graphs,
            self.boxes,
            self.profile,
            how,
            self.notes,
            pc=pc,
        )


def _visible_at(
    episodes: ReverieEpisodes, order: np.ndarray, arr: Any, store: GraphStore, boxes: ObjectBoxes
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per trajectory position: target visible; per episode: from the goal, from anywhere."""
    masks: dict[tuple[str, str], np.ndarray] = {}
    visible = np.zeros(len(arr.traj), dtype=np.bool_)
    at_goal = np.zeros(len(order), dtype=np.bool_)
    anywhere = np.zeros(len(order), dtype=np.bool_)
    goal_nodes = arr.ref[arr.ref_offsets[1:] - 1]
    for k, i in enumerate(order.tolist()):
        scan, target = episodes.scans[i], str(episodes.object_ids[i])
        mask = masks.get((scan, target))
        if mask is None:
            graph = store.graph(scan)
            mask = np.zeros(graph.n, dtype=np.bool_)
            for vp in boxes.seen_from(scan, target):
                node = graph.index.get(vp)
                if node is not None:
                    mask[node] = True
            masks[(scan, target)] = mask
        lo, hi = arr.traj_offsets[k], arr.traj_offsets[k + 1]
        visible[lo:hi] = mask[arr.traj[lo:hi]]
        at_goal[k] = mask[goal_nodes[k]]
        anywhere[k] = mask.any()
    return visible, at_goal, anywhere


def score_reverie(
    episodes: ReverieEpisodes,
    preds: Predictions,
    objects: ObjectPredictions,
    store: GraphStore,
    boxes: ObjectBoxes,
    prof: Profile,
    how: ScoreOptions = DEFAULT_OPTIONS,
    notes: list[str] | None = None,
    *,
    pc: ProblemCollector | None = None,
) -> Result:
    """Scores parsed REVERIE predictions (offline files and online runs alike); ``pc``: the
    problems found reading them, raised with the rule checks'."""
    arr, flags, nav = checked_navigation(
        episodes, preds, store, prof, how.subset, pc=pc,
        spl_reference=prof.spl_reference, spl_floor=prof.spl_floor,
    )  # fmt: skip
    order = preds.episodes
    visible, at_goal, anywhere = _visible_at(episodes, order, arr, store, boxes)
    success, oracle = visibility_success(visible, arr.traj_offsets)
    ell, tl = nav["shortest_length"], nav["path_length"]
    per: dict[str, np.ndarray] = {
        "path_length": tl,
        "shortest_length": ell,
        "nav_error": nav["nav_error"],  # to the annotated goal: not a REVERIE metric, for reports
        "oracle_error": nav["oracle_error"],
        "success": success,
        "oracle_success": oracle,
        "spl": length_weighted(success, ell, tl, floor=prof.spl_floor),
    }
    targets = [episodes.object_ids[i] for i in order.tolist()]
    unavailable: dict[str, str] = {}
    if objects.available:
        rgs = remote_grounding_success(objects.objects, targets)
        per["grounding_success"] = rgs
        per["grounding_spl"] = length_weighted(rgs, ell, tl, floor=prof.spl_floor)
        per["joint_success"] = rgs * success
    else:
        reason = (
            "no predicted objects (predObjId) in the predictions file; give each record the id "
            "of the object it names as predObjId"
        )
        unavailable = {"RGS": reason, "RGSPL": reason, "J": reason}
    per["target_object"] = np.array(targets, dtype=object)
    per["predicted_object"] = np.array(
        [None if o is None else str(o) for o in objects.objects], dtype=object
    )
    per["steps"] = nav["steps"]
    finish_columns(per, flags, "path_length", "shortest_length")
    warnings = list(preds.warnings) + list(objects.warnings) + list(notes or [])
    warnings += _box_warnings(at_goal, anywhere, boxes)
    parts = object_summary(
        task=episodes.task, split=episodes.split, n_expected=len(episodes),
        n_scored=len(order), missing=preds.missing, source=preds.source, form=preds.form,
        per=per, columns=REVERIE_COLUMNS, prof=prof, warnings=warnings, unavailable=unavailable,
        data_version=episodes.data_version, **summary_options(how), card_extra={"object_boxes": boxes.describe()},
    )  # fmt: skip
    return parts.build(episodes, order, per)


def _box_warnings(at_goal: np.ndarray, anywhere: np.ndarray, boxes: ObjectBoxes) -> list[str]:
    out = []
    never = int((~anywhere).sum())
    if never:
        out.append(
            f"{never} episode(s) have a target object that no viewpoint sees in the {boxes.version} "
            f"boxes ({boxes.source}): they can never succeed"
        )
    not_goal = int((anywhere & ~at_goal).sum())
    if not_goal:
        out.append(
            f"{not_goal} episode(s) have a target object that is not visible from the annotated "
            f"goal viewpoint in the {boxes.version} boxes (boxes from another release?)"
        )
    return out
