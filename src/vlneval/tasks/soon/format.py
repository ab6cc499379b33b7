"""SOON episode and prediction files (Zhu et al. 2021), in the official schema.

Episodes, ``<split>.json``: a list of instruction records (``ZhuFengdaaa/SOON``,
``r2r_src/utils.py load_datasets``)::

    {"instr_id": "...",                      # absent in some files: the record's position is used
     "scan": "...",                          # or bboxes[0]["scan"]
     "path": [[start, ..., goal], ...],      # several start paths, one episode each
     "bboxes": [{"image_id": viewpoint, "scan": ..., "obj_name": ...,
                 "heading": rad, "elevation": rad,
                 "target": {"center" | "left_top" | "right_top" | "right_bottom" | "left_bottom":
                            {"heading": rad, "elevation": rad}}}, ...],
     "instructions": [[attribute, relation, region, nearby region, full sentence], ...]}

Each (instruction, start path) is one episode, id ``"<instr_id>#<k>"`` with ``k`` the start's
position in ``path``. The instruction is the first group's full sentence (element 4), as the
official submission loader reads it. Box corners are converted to the normalised space
``(heading / 2π, (elevation + π) / 2π)`` as the official loader does. Test files have no
``bboxes`` and cannot be scored locally.

Predictions (the official submission format, ``r2r_src/eval.py submit_score``)::

    [{"instr_id": "...",
      "trajectory": [{"path": [[viewpoint, heading, elevation], ...],
                      "obj_heading": [h], "obj_elevation": [e]}, ...]}]   # one entry per start

Each entry is matched to its start path by its first viewpoint. ``obj_heading`` and
``obj_elevation`` are normalised already (the official scorer does not convert them);
``angle_units="radians"`` converts radians as VLN-DUET does (``heading mod 2π / 2π``,
``(wrap(elevation) + π) / 2π``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

import numpy as np

from vlneval.errors import ProblemCollector, UnknownNameError, hint, hinted
from vlneval.graph.store import GraphStore
from vlneval.io import brief, clip, gc_paused, iter_chunks, read_bytes
from vlneval.metrics._kernels import offsets_of
from vlneval.metrics.grounding import duet_normalised
from vlneval.tasks.common.episodes import EpisodeBuilder, EpisodeTable
from vlneval.tasks.common.inputs import read_input
from vlneval.tasks.common.predictions import Predictions
from vlneval.tasks.common.record_checks import (
    ID_LIKE,
    FieldTally,
    Repeats,
    UniqueIds,
    angle_problem,
    is_finite,
    is_number,
    numbered,
    shown_id,
    shown_number,
    shown_value,
)
from vlneval.tasks.common.request import PredictionsInput
from vlneval.tasks.common.summary_records import SummarySkips
from vlneval.tasks.soon import ANGLE_UNITS as ANGLE_UNITS_OPTION

__all__ = [
    "SoonBox",
    "SoonEpisodes",
    "SoonPredictions",
    "load_soon",
    "parse_soon_predictions",
    "ANGLE_UNITS",
    "CORNERS",
]

#: The polygon's corners in the official order.
CORNERS = ("left_top", "right_top", "right_bottom", "left_bottom")
#: How predicted angles are given: normalised already (official) or radians (converted as DUET).
ANGLE_UNITS = ANGLE_UNITS_OPTION.choices
TWO_PI = 2.0 * math.pi


@dataclass(frozen=True)
class SoonBox:
    """A target box seen from one viewpoint, in normalised angle space.

    Attributes:
        image_id: the viewpoint the box is annotated at.
        corners: ``(4, 2)`` ``(heading, elevation)`` of left_top, right_top, right_bottom,
            left_bottom, each ``(h / 2π, (e + π) / 2π)`` of the file's radians.
    """

    image_id: str
    corners: np.ndarray


@dataclass
class SoonEpisodes(EpisodeTable):
    """SOON episodes: one row per (instruction, start path).

    Attributes:
        instr_ids: the instruction id of each episode.
        start_index: the position of the episode's start path in the record's ``path``.
        boxes: the instruction's target boxes, shared by its episodes, in file order.
        by_instruction: instruction id -> its episode rows, in start order.
    """

    instr_ids: list[str] = field(default_factory=list)
    start_index: list[int] = field(default_factory=list)
    boxes: list[tuple[SoonBox, ...]] = field(default_factory=list)
    by_instruction: dict[str, list[int]] = field(default_factory=dict)
    ROW_COLUMNS = (*EpisodeTable.ROW_COLUMNS, "instr_ids", "start_index", "boxes")

    def submitted_ids(self) -> tuple[str, list[str]]:
        """``instr_id`` and the instruction ids: one record predicts every start of one."""
        return "instr_id", self.instr_ids

    def record_id(self, i: int) -> str:
        """The instruction id: one record predicts every start of an instruction."""
        return self.instr_ids[i]

    def subset(self, keep: list[int]) -> SoonEpisodes:
        """The rows ``keep``, in that order (``by_instruction`` names the new rows)."""
        table = super().subset(keep)
        by_instruction: dict[str, list[int]] = {}
        for row, iid in enumerate(table.instr_ids):
            by_instruction.setdefault(iid, []).append(row)
        table.by_instruction = by_instruction
        return table


def _angle_pair(value: Any) -> tuple[float, float] | None:
    if not isinstance(value, dict):
        return None
    h, e = value.get("heading"), value.get("elevation")
    if not (is_finite(h) and is_finite(e)):
        return None
    return float(h), float(e)  # type: ignore[arg-type]


def _box(rec: Any, where: str, pc: ProblemCollector) -> SoonBox | None:
    if not isinstance(rec, dict) or not isinstance(rec.get("image_id"), str):
        pc.add("expected {image_id, target: {left_top, ...}}", field=where)
        return None
    target = rec.get("target")
    if not isinstance(target, dict):
        pc.add("missing field 'target' (the box corners)", field=where)
        return None
    pts = []
    for name in CORNERS:
        pair = _angle_pair(target.get(name))
        if pair is None:
            pc.add(
                f"{name} must be {{heading, elevation}} in radians", field=f"{where}.target.{name}"
            )
            return None
        pts.append(pair)
    corners = np.array(pts, dtype=np.float64)
    corners[:, 0] /= TWO_PI
    corners[:, 1] = (corners[:, 1] + math.pi) / TWO_PI
    return SoonBox(rec["image_id"], corners)


def _instruction(rec: dict[str, Any]) -> str | None:
    groups = rec.get("instructions")
    if isinstance(groups, list) and groups and isinstance(groups[0], list):
        groups = groups[0]
    if not isinstance(groups, list) or not groups or not all(isinstance(s, str) for s in groups):
        return None
    return groups[4] if len(groups) > 4 else groups[-1]


def _scan(rec: dict[str, Any]) -> str | None:
    scan = rec.get("scan")
    if scan is None and isinstance(rec.get("bboxes"), list) and rec["bboxes"]:
        first = rec["bboxes"][0]
        scan = first.get("scan") if isinstance(first, dict) else None
    return scan if isinstance(scan, str) else None


def _record(
    rec: Any, k: int, pc: ProblemCollector
) -> tuple[str, str, list[list[str]], tuple[SoonBox, ...] | None, str] | None:
    where = f"record {k}"
    if not isinstance(rec, dict):
        pc.add("expected an object", field=where)
        return None
    iid = rec.get("instr_id", str(k))
    if isinstance(iid, bool) or not isinstance(iid, (str, int)):
        pc.add(f"instr_id must be a string, got {shown_value(iid)}", field=where)
        return None
    scan = _scan(rec)
    paths = rec.get("path")
    text = _instruction(rec)
    ok = True
    if scan is None:
        pc.add("missing field 'scan' (or bboxes[0].scan)", field=where)
        ok = False
    if not (
        isinstance(paths, list)
        and paths
        and all(isinstance(p, list) and p and all(isinstance(v, str) for v in p) for p in paths)
    ):
        pc.add(
            "path must be a non-empty list of start paths (lists of viewpoint ids)",
            field=f"{where}.path",
        )
        ok = False
    if text is None:
        pc.add(
            "instructions must be a list of instruction groups (lists of strings)",
            field=f"{where}.instructions",
        )
        ok = False
    boxes: tuple[SoonBox, ...] | None = None
    if "bboxes" in rec:
        raw = rec["bboxes"]
        if not isinstance(raw, list):
            pc.add("bboxes must be a list of boxes", field=f"{where}.bboxes")
            return None
        parsed = [_box(b, f"{where}.bboxes[{j}]", pc) for j, b in enumerate(raw)]
        if any(b is None for b in parsed):
            return None
        boxes = tuple(b for b in parsed if b is not None)
    if not ok or not isinstance(paths, list):
        return None
    return str(iid), str(scan), paths, boxes, str(text)


def load_soon(path: str | Path, *, task: str = "soon", split: str = "") -> SoonEpisodes:
    """Loads a SOON split in the official schema (``.json`` or ``.json.gz``).

    Raises:
        InvalidInputError: every malformed record, named by position and field; duplicate ids.

    Example:
        >>> import json, pathlib, tempfile
        >>> box = {"image_id": "g", "scan": "s", "target": {c: {"heading": 0.1, "elevation": 0.0}
        ...        for c in ("center", "left_top", "right_top", "right_bottom", "left_bottom")}}
        >>> p = pathlib.Path(tempfile.mkdtemp()) / "val.json"
        >>> _ = p.write_text(json.dumps([{"instr_id": "7", "path": [["a", "g"], ["b", "g"]],
        ...     "bboxes": [box], "instructions": [["red", "on", "room", "hall", "find the red cup"]]}]))
        >>> t = load_soon(p, split="val")
        >>> t.ids, t.instr_ids, t.start_index, t.instructions[0]
        (['7#0', '7#1'], ['7', '7'], [0, 1], 'find the red cup')
    """
    path = Path(path)
    source = str(path)
    pc = ProblemCollector(source)
    b = EpisodeBuilder()
    instr_ids: list[str] = []
    starts: list[int] = []
    boxes: list[tuple[SoonBox, ...]] = []
    by_instruction: dict[str, list[int]] = {}
    unique = UniqueIds("instr_id", pc)
    scorable = True
    records = iter_chunks(read_bytes(path), source, expected="a JSON list of SOON instructions")
    for k, rec in numbered(records, pc, "instructions"):
        parsed = _record(rec, k, pc)
        if parsed is None:
            continue
        iid, scan, paths, rec_boxes, text = parsed
        if not unique.first(iid, k):
            continue
        scorable = scorable and bool(rec_boxes)
        rows = by_instruction.setdefault(iid, [])
        for j, p in enumerate(paths):
            rows.append(len(instr_ids))
            b.add(f"{iid}#{j}", scan, p, None, 0.0, text)
            instr_ids.append(iid)
            starts.append(j)
            boxes.append(rec_boxes or ())
    pc.raise_if_any()
    base = b.build(task=task, split=split, source=source, id_field="episode_id", scorable=scorable)
    return SoonEpisodes(
        **{f.name: getattr(base, f.name) for f in fields(EpisodeTable) if f.init},
        instr_ids=instr_ids, start_index=starts, boxes=boxes, by_instruction=by_instruction,
    )  # fmt: skip


@dataclass
class SoonPredictions:
    """Parsed SOON predictions.

    Attributes:
        paths: the trajectories as :class:`~vlneval.tasks.common.predictions.Predictions` (episode
            rows ascending, node ids, offsets, missing episode ids, warnings).
        heading, elevation: the predicted point per predicted episode, normalised, aligned to
            ``paths.episodes``.
        angle_units: how the file gave the angles (``normalised`` or ``radians``).
    """

    paths: Predictions
    heading: np.ndarray
    elevation: np.ndarray
    angle_units: str


_DICT_HINT = (
    "trajectory must be a list with one entry per start path, "
    '[{"path": [[viewpoint, heading, elevation], ...], "obj_heading": [h], "obj_elevation": [e]}, ...] '
    "(the SOON submission format); got an object. A single-start result as SOON's local "
    "evaluation and VLN-DUET write it must be wrapped in a list"
)


def _detect(steps: list[Any]) -> str:
    first = steps[0]
    if isinstance(first, str):
        return "plain"
    if isinstance(first, list) and first and all(isinstance(v, str) for v in first):
        return "nested"
    return "triple"


def _viewpoints(
    steps: list[Any], form: str, label: str, where: str, pc: ProblemCollector
) -> list[str] | None:
    out: list[str] = []
    for j, step in enumerate(steps):
        f = f"{where}[{j}]"
        if form == "plain" and type(step) is str:
            out.append(step)
        elif form == "nested" and type(step) is list and all(type(v) is str for v in step):
            out.extend(step)
        elif form == "triple" and type(step) is list and step and type(step[0]) is str:
            if (problem := angle_problem(step)) is not None:
                pc.add(problem, episode=label, field=f)
                return None
            out.append(step[0])
        else:
            pc.add(f"expected a {form} step, got {brief(step, 60)}", episode=label, field=f)
            return None
    return out


def _angle(
    entry: dict[str, Any], key: str, label: str, where: str, pc: ProblemCollector
) -> float | None:
    if key not in entry:
        pc.add(
            f"missing field {key!r} (the predicted direction of the object)",
            episode=label,
            field=where,
        )
        return None
    value = entry[key]
    if isinstance(value, list) and len(value) == 1:
        value = value[0]
    if not is_finite(value):
        pc.add(
            f"{key} must be a finite number (or [number]), got "
            + (shown_number(value) if is_number(value) else brief(value, 40)),
            episode=label,
            field=f"{where}.{key}",
        )
        return None
    return float(value)


class _SoonParser:
    def __init__(
        self, source: str, episodes: SoonEpisodes, graphs: GraphStore, form: str, skip: bool
    ) -> None:
        self.ep, self.graphs, self.form = episodes, graphs, form
        self.summaries = SummarySkips("instr_id", "trajectory", skip)
        self.pc = ProblemCollector(source)
        self.seen = np.zeros(len(episodes), dtype=np.bool_)
        self.done: set[str] = set()
        self.broken: set[str] = set()
        self.repeats = Repeats()
        self.unknown: list[str | int] = []
        self.rows: list[tuple[int, list[int], float, float]] = []
        self.ids, self.trajs = FieldTally("instr_id"), FieldTally("trajectory")

    def record(self, rec: Any, k: int) -> None:
        if not self.summaries.reads(rec, k, self.pc):
            return
        self.ids.see(rec)
        self.trajs.see(rec)
        if "instr_id" not in rec:
            self.ids.missing(self.pc, "missing field 'instr_id' (a string)", field=f"record {k}")
            return
        iid = rec["instr_id"]
        if isinstance(iid, bool) or not isinstance(iid, (str, int)):
            self.pc.add(f"instr_id must be a string, got {shown_value(iid)}", field=f"record {k}")
            return
        raw, iid = iid, str(iid)
        label = f'instr_id "{iid}"'
        if iid not in self.ep.by_instruction:
            self.unknown.append(clip(raw) if isinstance(raw, str) else raw)  # as written
            return
        if iid in self.done:
            self.repeats.see(iid)
            return
        self.done.add(iid)
        before = len(self.pc.problems)
        traj = rec.get("trajectory")
        if "trajectory" not in rec:
            self.trajs.missing(self.pc, "missing field 'trajectory'", episode=label)
        elif isinstance(traj, dict):
            self.pc.add(_DICT_HINT, episode=label, field="trajectory")
        elif not isinstance(traj, list) or not traj:
            self.pc.add(
                "trajectory must be a non-empty list (one entry per start path)"
                + (", got null" if traj is None else ""),
                episode=label,
                field="trajectory",
            )
        else:
            for j, entry in enumerate(traj):
                self.entry(entry, iid, label, f"trajectory[{j}]")
        if "trajectory" not in rec or len(self.pc.problems) > before:
            self.broken.add(iid)  # given but unreadable: a problem, not a missing prediction

    def entry(self, entry: Any, iid: str, label: str, where: str) -> None:
        if not isinstance(entry, dict):
            self.pc.add(
                'expected {"path", "obj_heading", "obj_elevation"}', episode=label, field=where
            )
            return
        steps = entry.get("path")
        if not isinstance(steps, list) or not steps:
            self.pc.add(
                "path must be a non-empty list of steps (the start included)",
                episode=label,
                field=f"{where}.path",
            )
            return
        form = self.form if self.form != "auto" else _detect(steps)
        if self.form == "auto":
            self.form = form
        vps = _viewpoints(steps, form, label, f"{where}.path", self.pc)
        h = _angle(entry, "obj_heading", label, where, self.pc)
        e = _angle(entry, "obj_elevation", label, where, self.pc)
        if vps is None or h is None or e is None:
            return
        row = self.match(iid, vps[0], label, where)
        if row is None:
            return
        graph = self.graphs.graph(self.ep.scans[row])
        nodes = [graph.index.get(v, -1) for v in vps]
        if -1 in nodes:
            j = nodes.index(-1)
            self.pc.add(graph.describe_missing(vps[j]), episode=label, field=f"{where}.path[{j}]")
            return
        self.seen[row] = True
        self.rows.append((row, nodes, h, e))

    def match(self, iid: str, start: str, label: str, where: str) -> int | None:
        rows = self.ep.by_instruction[iid]
        same = [r for r in rows if self.ep.paths[r][0] == start]
        free = [r for r in same if not self.seen[r]]
        if free:
            return free[0]
        if same:
            self.pc.add(
                f"a second prediction for the start {start}",
                episode=label,
                field=f"{where}.path[0]",
            )
        else:
            starts = ", ".join(self.ep.paths[r][0] for r in rows)
            self.pc.add(
                f"starts at {start}, which is not a start of this instruction (its starts: {starts})",
                episode=label,
                field=f"{where}.path[0]",
            )
        return None


@gc_paused()  # the decoded records hold no cycle: no collection need walk them
def parse_soon_predictions(
    predictions: PredictionsInput,
    episodes: SoonEpisodes,
    graphs: GraphStore,
    *,
    form: str = "auto",
    angle_units: str = "normalised",
    skip_summaries: bool = False,
    collect: ProblemCollector | None = None,
) -> SoonPredictions:
    """Reads a SOON submission and matches each entry to its (instruction, start) episode.

    Args:
        predictions: the predictions file (``.json`` or ``.json.gz``), its bytes, or its
            records (the list ``json.loads`` of the file gives).
        episodes: the split's episodes; ``graphs``: their navigation graphs.
        form: how path steps are written: ``auto``, ``triple``, ``nested`` or ``plain``.
        angle_units: ``normalised`` (official: used as given) or ``radians`` (converted as
            VLN-DUET converts them).
        skip_summaries: skip, with a warning, records that look like the file's own summary
            (:mod:`~vlneval.tasks.common.summary_records`); else each is an error that
            suggests this option.
        collect: when given, problems are added to it instead of raised, to be raised with
            the rule checks' (:func:`~vlneval.tasks.common.goal_scoring.checked_arrays`).

    Raises:
        InvalidInputError: every malformed record, named by instr_id and field (a trajectory
            given as an object, a start that is not the instruction's, an unknown viewpoint,
            a missing or non-numeric angle, a duplicate).
    """
    if angle_units not in ANGLE_UNITS:
        raise UnknownNameError("SOON angle unit", angle_units, ANGLE_UNITS)
    if form not in ("auto", "triple", "nested", "plain"):
        raise UnknownNameError("trajectory form", form, ("auto", "triple", "nested", "plain"))
    given = read_input(predictions)
    p = _SoonParser(given.source, episodes, graphs, form, skip_summaries)
    records = given.chunks("a JSON list of SOON predictions")
    for k, rec in numbered(records, p.pc, "predictions"):
        p.record(rec, k)
    p.repeats.report(p.pc, lambda iid: f'instr_id "{iid}"')
    p.trajs.collapse(p.pc, " (one entry per start path)")
    example = f' (an instruction id of the split, e.g. "{clip(episodes.instr_ids[0])}")'
    p.ids.collapse(p.pc, example if len(episodes) else "", ID_LIKE)  # last: its problem first
    if collect is None:
        p.pc.raise_if_any()
    else:
        collect.problems.extend(p.pc.problems)
    p.rows.sort(key=lambda r: r[0])
    order = np.array([r[0] for r in p.rows], dtype=np.int64)
    offsets = offsets_of(np.array([len(r[1]) for r in p.rows], dtype=np.int64))
    nodes = np.array([n for r in p.rows for n in r[1]], dtype=np.int32)
    h = np.array([r[2] for r in p.rows], dtype=np.float64)
    e = np.array([r[3] for r in p.rows], dtype=np.float64)
    warnings = p.summaries.notes()
    if angle_units == "radians":
        h, e = duet_normalised(h, e)
    else:
        outside = int(((h < 0) | (h > 1) | (e < 0) | (e > 1)).sum())
        if outside:
            warnings.append(
                hinted(
                    f"{outside} predicted direction(s) lie outside [0, 1]: the official scorer "
                    "expects normalised angles (heading/2π, (elevation+π)/2π)",
                    hint("--angle-units", "if the file holds radians, score it with angle_units "
                         "radians (--angle-units radians)"),
                )
            )  # fmt: skip
    if p.unknown:
        warnings.append(
            f"{len(p.unknown)} prediction(s) with ids not in the split were ignored "
            f"(first: {', '.join(map(shown_id, p.unknown[:5]))})"
        )
    missing = [
        episodes.ids[i] for i in np.flatnonzero(~p.seen) if episodes.instr_ids[i] not in p.broken
    ]
    preds = Predictions(
        source=given.source, form=p.form if p.form != "auto" else "triple", episodes=order,
        nodes=nodes, offsets=offsets, warnings=warnings, missing=missing, unknown=p.unknown,
    )  # fmt: skip
    return SoonPredictions(preds, h, e, angle_units)
