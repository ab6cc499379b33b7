"""VLN-CE (Krantz et al. 2020) episodes, dense reference paths and predictions.

Episodes: ``{split}.json.gz`` = ``{"episodes": [{episode_id, trajectory_id, scene_id,
start_position, start_rotation, info: {geodesic_distance}, goals: [{position, radius}],
instruction: {instruction_text, ...}, reference_path}]}`` in Habitat's frame (metres, y up).
Dense references: ``{split}_gt.json.gz`` = ``{episode_id: {locations, actions, forward_steps}}``.

Predictions, two forms (``form``):

- ``r2r-ce``: VLN-CE's ``inference.py`` output, ``{episode_id: [{"position": [x, y, z],
  "heading": h, "stop": bool}, ...]}``, start state first; a record may also carry
  ``"distance_to_goal"`` (metres, ``Infinity`` or ``"inf"`` when unreachable), the geodesic
  distance a Habitat run measured at that step;
- ``rxr-jsonl``: the RxR-Habitat challenge form, one ``{"instruction_id", "path": [[x, y, z],
  ...]}`` per line (or a JSON list of them), optionally ``"distance_to_goal": [...]`` per point.
  It has no stop flag: the last position is where the agent ended the episode, taken as STOP.

Every problem is collected and raised together, naming the file, the episode id and the field.
"""

from __future__ import annotations

import math
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from vlneval.data.jsonio import decode_json, read_bytes
from vlneval.errors import InvalidInputError, ProblemCollector, UnknownNameError

__all__ = [
    "ContinuousEpisode",
    "ContinuousEpisodes",
    "ContinuousPredictions",
    "load_vlnce",
    "load_vlnce_gt",
    "parse_ce_predictions",
    "heading_from_quaternion",
    "habitat_to_world",
    "world_to_habitat",
    "CE_FORMS",
    "START_TOLERANCE",
    "reference_as_predictions",
    "episodes_from_arrays",
]

CE_FORMS = ("auto", "r2r-ce", "rxr-jsonl")
#: A trajectory must start within this distance (metres) of the episode's start position.
START_TOLERANCE = 0.1


def habitat_to_world(points: Any) -> np.ndarray:
    """Habitat ``(x, y_up, z)`` to the Matterport3D world frame ``(x, −z, y_up)`` (z up).

    VLN-CE's reference points are the R2R viewpoints in this frame: their horizontal
    coordinates equal the connectivity poses' ``(x, y)`` exactly.

    Example:
        >>> habitat_to_world([[1.0, 0.5, -2.0]]).tolist()
        [[1.0, 2.0, 0.5]]
    """
    p = np.asarray(points, dtype=np.float64)
    return np.stack([p[..., 0], -p[..., 2], p[..., 1]], axis=-1)


def world_to_habitat(points: Any) -> np.ndarray:
    """Inverse of :func:`habitat_to_world`.

    Example:
        >>> world_to_habitat(habitat_to_world([[1.0, 0.5, -2.0]])).tolist()
        [[1.0, 0.5, -2.0]]
    """
    p = np.asarray(points, dtype=np.float64)
    return np.stack([p[..., 0], p[..., 2], -p[..., 1]], axis=-1)


def heading_from_quaternion(q: Any) -> float:
    """World heading (radians clockwise from +y, in [0, 2π)) of a Habitat rotation ``[x, y, z, w]``.

    Habitat's agent looks along −z and turns about +y; in the world frame of
    :func:`habitat_to_world` a yaw of θ (counter-clockwise) is the heading −θ.

    Example:
        >>> round(math.degrees(heading_from_quaternion([0.0, 0.5, 0.0, math.sqrt(0.75)])), 6)
        300.0
    """
    x, y, z, w = (float(v) for v in q)
    fx = -2.0 * (x * z + w * y)  # the rotated (0, 0, -1): forward in Habitat coordinates
    fz = -(1.0 - 2.0 * (x * x + y * y))
    return math.atan2(fx, -fz) % (2.0 * math.pi)


@dataclass(frozen=True, slots=True)
class ContinuousEpisode:
    """One continuous episode as an environment needs it (positions in the world frame).

    Attributes:
        episode_id, scan, instruction: as in the benchmark file.
        start: start position (3,), metres, z up. heading: start heading, radians.
        goal: goal position (3,). Hidden from agents.
        reference: the sparse reference points (viewpoints), start first. Hidden from agents.
        radius: the success radius of the benchmark (3.0 m).
    """

    episode_id: str
    scan: str
    instruction: str
    start: np.ndarray
    heading: float
    goal: np.ndarray
    reference: np.ndarray
    radius: float = 3.0


@dataclass
class ContinuousEpisodes:
    """The episodes of one continuous split, in columns, in the file's own frame.

    Attributes:
        task, split, source, id_field: what was loaded, from where, and the id name.
        frame: ``habitat`` (y up, VLN-CE files) or ``world`` (z up, the continuous twin).
        ids, instruction_ids, trajectory_ids, scans, instructions: one entry per episode.
        starts, goals: ``(n, 3)`` positions; headings: ``(n,)`` start headings in the WORLD
            convention (clockwise from +y); goal_radius: ``(n,)``.
        shortest: ``(n,)`` geodesic start-goal distance carried by the file (NaN if absent).
        reference, reference_offsets: sparse reference points, ragged.
        dense, dense_offsets: dense reference points (the ``_gt`` locations), or None.
        scorable: False for a split without goals (test).
    """

    task: str
    split: str
    source: str
    id_field: str
    frame: str
    ids: list[str]
    instruction_ids: list[str]
    trajectory_ids: list[str]
    scans: list[str]
    instructions: list[str]
    starts: np.ndarray
    headings: np.ndarray
    goals: np.ndarray
    goal_radius: np.ndarray
    shortest: np.ndarray
    reference: np.ndarray
    reference_offsets: np.ndarray
    dense: np.ndarray | None = None
    dense_offsets: np.ndarray | None = None
    dense_source: str | None = None
    scorable: bool = True
    index: dict[str, int] = field(init=False, repr=False)
    by_instruction: dict[str, int] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self.index = {k: i for i, k in enumerate(self.ids)}
        self.by_instruction = {k: i for i, k in enumerate(self.instruction_ids)}

    def __len__(self) -> int:
        return len(self.ids)

    def reference_points(self, i: int) -> np.ndarray:
        """Sparse reference points of episode ``i``."""
        return self.reference[self.reference_offsets[i] : self.reference_offsets[i + 1]]

    def dense_points(self, i: int) -> np.ndarray | None:
        """Dense reference points of episode ``i`` (None without a ``_gt`` file)."""
        if self.dense is None or self.dense_offsets is None:
            return None
        return self.dense[self.dense_offsets[i] : self.dense_offsets[i + 1]]

    def to_world(self, points: np.ndarray) -> np.ndarray:
        """Points of this table's frame in the world frame (z up)."""
        return habitat_to_world(points) if self.frame == "habitat" else np.asarray(points, float)

    def episode(self, i: int) -> ContinuousEpisode:
        """Row ``i`` in the world frame."""
        return ContinuousEpisode(
            self.ids[i],
            self.scans[i],
            self.instructions[i],
            self.to_world(self.starts[i]),
            float(self.headings[i]),
            self.to_world(self.goals[i]),
            self.to_world(self.reference_points(i)),
            float(self.goal_radius[i]),
        )

    def __iter__(self) -> Any:
        return (self.episode(i) for i in range(len(self)))


def _ragged(seqs: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    offsets = np.zeros(len(seqs) + 1, dtype=np.int64)
    np.cumsum([len(s) for s in seqs], out=offsets[1:])
    flat = np.concatenate(seqs).reshape(-1, 3) if seqs else np.zeros((0, 3))
    return np.ascontiguousarray(flat, dtype=np.float64), offsets


def _point(value: Any) -> np.ndarray | None:
    if not isinstance(value, list) or len(value) != 3:
        return None
    if not all(type(v) in (int, float) for v in value) or not all(math.isfinite(v) for v in value):
        return None
    return np.asarray(value, dtype=np.float64)


def _scan(scene_id: Any) -> str | None:
    if not isinstance(scene_id, str) or not scene_id:
        return None
    return sys.intern(Path(scene_id).stem)


class _EpisodeReader:
    """Collects the columns of a VLN-CE episodes file."""

    def __init__(self, source: str) -> None:
        self.pc = ProblemCollector(source)
        self.cols: dict[str, list[Any]] = {
            k: []
            for k in (
                "ids",
                "iids",
                "tids",
                "scans",
                "text",
                "starts",
                "headings",
                "goals",
                "radius",
                "shortest",
                "refs",
            )
        }
        self.has_goals = True

    def add(self, k: int, ep: Any) -> None:
        if not isinstance(ep, dict):
            self.pc.add("expected an object", field=f"episodes[{k}]")
            return
        eid = ep.get("episode_id")
        if isinstance(eid, bool) or not isinstance(eid, (int, str)):
            self.pc.add(
                f"episode_id must be an integer or string, got {eid!r:.40}", field=f"episodes[{k}]"
            )
            return
        label = f'episode_id "{eid}"'
        start, scan = _point(ep.get("start_position")), _scan(ep.get("scene_id"))
        rot = ep.get("start_rotation")
        ok_rot = (
            isinstance(rot, list) and len(rot) == 4 and all(type(v) in (int, float) for v in rot)
        )
        for bad, name in (
            (start is None, "start_position"),
            (scan is None, "scene_id"),
            (not ok_rot, "start_rotation"),
        ):
            if bad:
                self.pc.add(f"missing or malformed {name}", episode=label, field=name)
        goals = ep.get("goals") or []
        goal = _point(goals[0].get("position")) if goals and isinstance(goals[0], dict) else None
        if goals and goal is None:
            self.pc.add("goals[0].position must be [x, y, z]", episode=label, field="goals[0]")
        self.has_goals &= goal is not None
        ref = [_point(p) for p in (ep.get("reference_path") or [])]
        bad_ref = any(p is None for p in ref)
        if bad_ref:
            self.pc.add(
                "reference_path must be a list of [x, y, z]", episode=label, field="reference_path"
            )
        if start is None or scan is None or not ok_rot or (goals and goal is None) or bad_ref:
            return
        instr: dict[str, Any] = ep["instruction"] if isinstance(ep.get("instruction"), dict) else {}
        info: dict[str, Any] = ep["info"] if isinstance(ep.get("info"), dict) else {}
        gd = info.get("geodesic_distance")
        c = self.cols
        c["ids"].append(str(eid))
        c["iids"].append(str(instr.get("instruction_id", eid)))
        c["tids"].append(str(ep.get("trajectory_id", "")))
        c["scans"].append(scan)
        c["text"].append(str(instr.get("instruction_text", "")))
        c["starts"].append(start)
        c["headings"].append(heading_from_quaternion(rot))
        c["goals"].append(goal if goal is not None else np.full(3, np.nan))
        radius = goals[0].get("radius", 3.0) if goals else 3.0
        c["radius"].append(float(radius) if type(radius) in (int, float) else 3.0)
        c["shortest"].append(float(gd) if isinstance(gd, (int, float)) else math.nan)
        c["refs"].append(np.asarray(ref, dtype=np.float64).reshape(-1, 3) if ref else start[None])


def load_vlnce(
    path: str | Path,
    *,
    gt_path: str | Path | None = None,
    task: str = "r2r-ce",
    split: str = "",
) -> ContinuousEpisodes:
    """Loads a VLN-CE episodes file (and its ``_gt`` file of dense reference paths).

    Args:
        path: ``{split}.json[.gz]``.
        gt_path: ``{split}_gt.json[.gz]``; every episode must have an entry. None: no dense
            references (nDTW and sDTW are then unavailable).
        task, split: recorded on the table.

    Raises:
        InvalidInputError: malformed records (all listed), duplicate ids, missing gt entries.

    Example:
        >>> import json, tempfile, pathlib
        >>> ep = {"episode_id": 7, "trajectory_id": 3, "scene_id": "mp3d/S/S.glb",
        ...       "start_position": [0, 0, 0], "start_rotation": [0, 0, 0, 1],
        ...       "info": {"geodesic_distance": 2.0}, "goals": [{"position": [0, 0, -2], "radius": 3.0}],
        ...       "instruction": {"instruction_text": "go"}, "reference_path": [[0, 0, 0], [0, 0, -2]]}
        >>> p = pathlib.Path(tempfile.mkdtemp()) / "val.json"
        >>> _ = p.write_text(json.dumps({"episodes": [ep]}))
        >>> t = load_vlnce(p)
        >>> t.ids, t.scans, t.episode(0).goal.tolist()
        (['7'], ['S'], [0.0, 2.0, 0.0])
    """
    path = Path(path)
    source = str(path)
    data = decode_json(read_bytes(path), source)
    if not isinstance(data, dict) or not isinstance(data.get("episodes"), list):
        raise InvalidInputError(
            "expected a JSON object with an 'episodes' list", source=str(source)
        )
    reader = _EpisodeReader(source)
    for k, ep in enumerate(data["episodes"]):
        reader.add(k, ep)
    c = reader.cols
    seen: set[str] = set()
    for eid in c["ids"]:
        if eid in seen:
            reader.pc.add("duplicate episode_id", episode=f'episode_id "{eid}"')
        seen.add(eid)
    reader.pc.raise_if_any()
    ref, ref_off = _ragged(c["refs"])
    table = ContinuousEpisodes(
        task,
        split,
        source,
        "episode_id",
        "habitat",
        c["ids"],
        c["iids"],
        c["tids"],
        c["scans"],
        c["text"],
        np.asarray(c["starts"]).reshape(-1, 3),
        np.asarray(c["headings"], float),
        np.asarray(c["goals"]).reshape(-1, 3),
        np.asarray(c["radius"], float),
        np.asarray(c["shortest"], float),
        ref,
        ref_off,
        scorable=reader.has_goals and bool(c["ids"]),
    )
    if gt_path is not None:
        table.dense, table.dense_offsets = load_vlnce_gt(gt_path, table.ids)
        table.dense_source = str(gt_path)
    return table


def load_vlnce_gt(path: str | Path, ids: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """The dense reference points of ``ids`` from a ``_gt`` file, flat with offsets.

    Raises:
        InvalidInputError: an id without an entry, or malformed ``locations``.
    """
    source = str(path)
    data = decode_json(read_bytes(Path(path)), source)
    pc = ProblemCollector(source)
    if not isinstance(data, dict):
        raise InvalidInputError("expected a JSON object keyed by episode_id", source=str(source))
    seqs: list[np.ndarray] = []
    for eid in ids:
        rec = data.get(eid)
        locs = rec.get("locations") if isinstance(rec, dict) else None
        pts = [_point(p) for p in locs] if isinstance(locs, list) and locs else [None]
        if rec is None:
            pc.add("no dense reference path for this episode", episode=f'episode_id "{eid}"')
        elif any(p is None for p in pts):
            pc.add(
                "locations must be a non-empty list of [x, y, z]",
                episode=f'episode_id "{eid}"',
                field="locations",
            )
        else:
            seqs.append(np.asarray(pts, dtype=np.float64))
            continue
        seqs.append(np.zeros((0, 3)))
    pc.raise_if_any()
    return _ragged(seqs)


@dataclass
class ContinuousPredictions:
    """Trajectories of positions aligned to a split's episodes.

    Attributes:
        source, form: the file and the form read (``r2r-ce`` or ``rxr-jsonl``).
        episodes: indices of the predicted episodes, ascending.
        positions, offsets: flat ``(N, 3)`` positions (the file's frame) with offsets.
        stopped: ``(k,)`` whether each trajectory ended with STOP.
        distances: flat ``(N,)`` carried distance to goal per position, or None when the file
            carries none.
        warnings, missing: unknown ids (ignored) and episodes without a prediction.
    """

    source: str
    form: str
    episodes: np.ndarray
    positions: np.ndarray
    offsets: np.ndarray
    stopped: np.ndarray
    distances: np.ndarray | None
    warnings: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)


def _distance(value: Any) -> float | None:
    """A carried distance: a number >= 0, or infinity (``Infinity`` or the string ``"inf"``)."""
    if isinstance(value, str) and value.lower() in ("inf", "infinity"):
        return math.inf
    if type(value) in (int, float) and not math.isnan(value) and value >= 0:
        return float(value)
    return None


class _PredReader:
    def __init__(self, source: str, episodes: ContinuousEpisodes, form: str) -> None:
        self.source, self.ep, self.form = source, episodes, form
        self.pc = ProblemCollector(source)
        self.rows: dict[int, tuple[np.ndarray, bool, np.ndarray | None]] = {}
        self.unknown: list[str] = []

    def _lookup(self, key: str, label: str) -> int | None:
        table = self.ep.index if self.form == "r2r-ce" else self.ep.by_instruction
        i = table.get(key)
        if i is None:
            self.unknown.append(key)
        elif i in self.rows:
            self.pc.add("duplicate id: the file has two predictions for it", episode=label)
            return None
        return i

    def r2r_ce(self, eid: str, steps: Any) -> None:
        label = f'episode_id "{eid}"'
        i = self._lookup(eid, label)
        if i is None:
            return
        if not isinstance(steps, list) or not steps:
            self.pc.add("expected a non-empty list of steps (start state first)", episode=label)
            return
        pts, dists, stop_at = [], [], None
        for j, st in enumerate(steps):
            f = f"[{j}]"
            p = _point(st.get("position")) if isinstance(st, dict) else None
            if p is None:
                self.pc.add(
                    "expected {'position': [x, y, z], 'heading': h, 'stop': bool}",
                    episode=label,
                    field=f,
                )
                return
            stop, h = st.get("stop"), st.get("heading", 0.0)
            if not isinstance(stop, bool):
                self.pc.add(
                    f"stop must be true or false, got {stop!r:.30}",
                    episode=label,
                    field=f"{f}.stop",
                )
                return
            if type(h) not in (int, float) or not math.isfinite(h):
                self.pc.add(
                    f"heading must be a finite number, got {h!r:.30}",
                    episode=label,
                    field=f"{f}.heading",
                )
                return
            if stop and stop_at is None:
                stop_at = j
            pts.append(p)
            dists.append(st.get("distance_to_goal", _ABSENT))
        if stop_at is not None and stop_at != len(steps) - 1:
            self.pc.add(
                f"STOP at step {stop_at} is not the last step ({len(steps) - 1}): an episode ends at STOP",
                episode=label,
                field=f"[{stop_at}].stop",
            )
            return
        self._keep(i, label, pts, stop_at is not None, dists)

    def rxr(self, k: int, rec: Any) -> None:
        if not isinstance(rec, dict) or "instruction_id" not in rec:
            self.pc.add(
                "expected {'instruction_id': ..., 'path': [[x, y, z], ...]}", field=f"record {k}"
            )
            return
        iid = rec["instruction_id"]
        if isinstance(iid, bool) or not isinstance(iid, (int, str)):
            self.pc.add(
                f"instruction_id must be an integer or string, got {iid!r:.30}", field=f"record {k}"
            )
            return
        label = f'instruction_id "{iid}"'
        i = self._lookup(str(iid), label)
        if i is None:
            return
        path = rec.get("path")
        pts = [_point(p) for p in path] if isinstance(path, list) and path else [None]
        if any(p is None for p in pts):
            bad = next(j for j, p in enumerate(pts) if p is None)
            self.pc.add(
                "path must be a non-empty list of [x, y, z]", episode=label, field=f"path[{bad}]"
            )
            return
        dists = rec.get("distance_to_goal", [_ABSENT] * len(pts))
        if not isinstance(dists, list) or len(dists) != len(pts):
            self.pc.add(
                f"distance_to_goal must be a list of {len(pts)} distances",
                episode=label,
                field="distance_to_goal",
            )
            return
        self._keep(i, label, pts, True, dists)

    def _keep(self, i: int, label: str, pts: list[Any], stopped: bool, raw: list[Any]) -> None:
        arr = np.asarray(pts, dtype=np.float64)
        start = self.ep.starts[i]
        gap = float(np.linalg.norm(arr[0] - start))
        if gap > START_TOLERANCE:
            self.pc.add(
                f"the trajectory starts {gap:.3f} m from the episode's start {start.tolist()} "
                "(the start state must come first)",
                episode=label,
                field="[0].position",
            )
            return
        dist: np.ndarray | None = None
        if any(d is not _ABSENT for d in raw):
            vals = [_distance(d) for d in raw]
            if None in vals:
                j = vals.index(None)
                self.pc.add(
                    f"distance_to_goal must be a number >= 0 or Infinity, got {raw[j]!r:.30}",
                    episode=label,
                    field=f"[{j}].distance_to_goal",
                )
                return
            dist = np.asarray(vals, dtype=np.float64)
        self.rows[i] = (arr, stopped, dist)


_ABSENT = object()


def _detect(raw: bytes) -> str:
    head = raw.lstrip()[:1]
    if head == b"{":
        first_line = raw.lstrip().split(b"\n", 1)[0]
        return (
            "rxr-jsonl"
            if b'"instruction_id"' in first_line and b'"path"' in first_line
            else "r2r-ce"
        )
    return "rxr-jsonl"


def _records(raw: bytes, source: str, pc: ProblemCollector) -> list[Any]:
    stripped = raw.lstrip()
    if stripped[:1] == b"[":
        value = decode_json(raw, source)
        return value if isinstance(value, list) else []
    from vlneval.data.rxr import iter_jsonl

    return [rec for _, rec in iter_jsonl(raw, pc)]


def parse_ce_predictions(
    path: str | Path, episodes: ContinuousEpisodes, *, form: str = "auto"
) -> ContinuousPredictions:
    """Reads a VLN-CE predictions file (``r2r-ce`` JSON or ``rxr-jsonl``) against ``episodes``.

    Raises:
        InvalidInputError: every malformed record (file, id, field), duplicates, a trajectory
            that does not start at the episode's start, STOP before the last step, a carried
            distance that is NaN, negative or not a number.
    """
    if form not in CE_FORMS:
        raise UnknownNameError("VLN-CE predictions form", form, CE_FORMS)
    path = Path(path)
    source = str(path)
    raw = read_bytes(path)
    form = _detect(raw) if form == "auto" else form
    r = _PredReader(source, episodes, form)
    if form == "r2r-ce":
        data = decode_json(raw, source)
        if not isinstance(data, dict):
            raise InvalidInputError(
                "the r2r-ce form is a JSON object keyed by episode_id", source=str(source)
            )
        for eid, steps in data.items():
            r.r2r_ce(str(eid), steps)
    else:
        for k, rec in enumerate(_records(raw, source, r.pc)):
            r.rxr(k, rec)
    if not r.rows and not r.pc.problems:
        r.pc.add("the file holds no prediction for any episode of the split")
    carried = {d is not None for _, _, d in r.rows.values()}
    if len(carried) > 1:
        r.pc.add(
            "distance_to_goal is carried for some episodes but not others: carry it for all or none"
        )
    r.pc.raise_if_any()
    return _assemble(r, episodes, form, source)


def _assemble(
    r: _PredReader, episodes: ContinuousEpisodes, form: str, source: str
) -> ContinuousPredictions:
    order = np.array(sorted(r.rows), dtype=np.int64)
    arrays = [r.rows[int(i)] for i in order]
    pos, offsets = _ragged([a for a, _, _ in arrays])
    stopped = np.array([s for _, s, _ in arrays], dtype=np.bool_)
    dists = [d for _, _, d in arrays if d is not None]
    distances: np.ndarray | None = np.concatenate(dists) if dists else None
    warnings = []
    if r.unknown:
        warnings.append(
            f"{len(r.unknown)} prediction(s) for ids not in the split were ignored "
            f"(first: {', '.join(r.unknown[:5])})"
        )
    have = set(order.tolist())
    missing = [episodes.ids[i] for i in range(len(episodes)) if i not in have]
    return ContinuousPredictions(
        source, form, order, pos, offsets, stopped, distances, warnings, missing
    )


def reference_as_predictions(
    episodes: ContinuousEpisodes, distances: Any = None, *, indices: Any = None
) -> dict[str, list[dict[str, Any]]]:
    """The dense reference paths written as ``r2r-ce`` predictions (STOP at the last point).

    A sanity check of any scorer: they must score nDTW = 1, and SR = 1 wherever the reference
    ends within the success radius. ``distances(i, points) -> array`` adds ``distance_to_goal``
    to every step (e.g. an oracle's distances); infinite values are written as ``"inf"``.

    Raises:
        InvalidInputError: the episodes have no dense references (no ``_gt`` file).
    """
    if episodes.dense is None:
        raise InvalidInputError(
            "no dense reference paths (load the _gt file)", source=str(episodes.source)
        )
    out: dict[str, list[dict[str, Any]]] = {}
    for i in range(len(episodes)) if indices is None else indices:
        pts = episodes.dense_points(int(i))
        assert pts is not None  # dense is set (checked above)
        d = None if distances is None else np.asarray(distances(int(i), pts), dtype=np.float64)
        steps = []
        for j, p in enumerate(pts.tolist()):
            step: dict[str, Any] = {"position": p, "heading": 0.0, "stop": j == len(pts) - 1}
            if d is not None:
                step["distance_to_goal"] = float(d[j]) if math.isfinite(d[j]) else "inf"
            steps.append(step)
        out[episodes.ids[int(i)]] = steps
    return out


def episodes_from_arrays(
    ids: list[str],
    scans: list[str],
    starts: Any,
    headings: Any,
    goals: Any,
    references: list[Any] | None = None,
    *,
    instructions: list[str] | None = None,
    dense: list[Any] | None = None,
    task: str = "custom",
    split: str = "",
    frame: str = "world",
) -> ContinuousEpisodes:
    """Continuous episodes from arrays (e.g. for a world built from an image).

    Positions are ``(n, 3)`` in ``frame`` (``world``: z up; ``habitat``: y up); ``headings`` in
    the world convention (radians clockwise from +y). The reference defaults to start-goal.

    Example:
        >>> t = episodes_from_arrays(["a"], ["map"], [[0, 0, 0]], [0.0], [[2, 0, 0]])
        >>> t.episode(0).goal.tolist(), t.reference_points(0).shape
        ([2.0, 0.0, 0.0], (2, 3))
    """
    n = len(ids)
    st = np.asarray(starts, dtype=np.float64).reshape(n, 3)
    go = np.asarray(goals, dtype=np.float64).reshape(n, 3)
    refs = (
        [np.asarray(r, dtype=np.float64).reshape(-1, 3) for r in references]
        if references
        else [np.stack([st[i], go[i]]) for i in range(n)]
    )
    ref, ref_off = _ragged(refs)
    table = ContinuousEpisodes(
        task,
        split,
        "<arrays>",
        "episode_id",
        frame,
        list(ids),
        list(ids),
        list(ids),
        list(scans),
        list(instructions or [""] * n),
        st,
        np.asarray(headings, dtype=np.float64).reshape(n),
        go,
        np.full(n, 3.0),
        np.full(n, np.nan),
        ref,
        ref_off,
    )
    if dense is not None:
        table.dense, table.dense_offsets = _ragged(
            [np.asarray(d, dtype=np.float64).reshape(-1, 3) for d in dense]
        )
        table.dense_source = "<arrays>"
    return table
