"""VLN-CE (Krantz et al. 2020) episodes and dense reference paths.

Episodes: ``{split}.json.gz`` = ``{"episodes": [{episode_id, trajectory_id, scene_id,
start_position, start_rotation, info: {geodesic_distance}, goals: [{position, radius}],
instruction: {instruction_text, ...}, reference_path}]}`` in Habitat's frame (metres, y up).
Dense references: ``{split}_gt.json.gz`` = ``{episode_id: {locations, actions, forward_steps}}``.
"""

from __future__ import annotations

import math
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from vlneval.errors import InvalidInputError, ProblemCollector
from vlneval.io import brief, decode_json, read_bytes
from vlneval.tasks.common.record_checks import UniqueIds, is_finite
from vlneval.tasks.vlnce.frames import habitat_to_world, heading_from_quaternion

__all__ = [
    "ContinuousEpisode",
    "ContinuousEpisodes",
    "load_vlnce",
    "load_vlnce_gt",
    "episodes_from_arrays",
]


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
        ids, instruction_ids, scans, instructions: one entry per episode.
        starts, goals: ``(n, 3)`` positions; headings: ``(n,)`` start headings in the WORLD
            convention (clockwise from +y); goal_radius: ``(n,)``.
        shortest: ``(n,)`` geodesic start-goal distance carried by the file (NaN if absent).
        reference, reference_offsets: sparse reference points, ragged.
        dense, dense_offsets: dense reference points (the ``_gt`` locations), or None.
        scorable: False for a split without goals (test).
        data_version: the VLN-CE release of the file (``v1-3``), None when not known.
    """

    task: str
    split: str
    source: str
    id_field: str
    frame: str
    ids: list[str]
    instruction_ids: list[str]
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
    scorable: bool = True
    data_version: str | None = None
    index: dict[str, int] = field(init=False, repr=False)
    by_instruction: dict[str, int] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self.index = {k: i for i, k in enumerate(self.ids)}
        self.by_instruction = {k: i for i, k in enumerate(self.instruction_ids)}

    def __len__(self) -> int:
        return len(self.ids)

    def submitted_ids(self) -> tuple[str, list[str]]:
        """The field a predictions file names the episodes by, and their ids in it."""
        return self.id_field, self.ids

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
    if not all(map(is_finite, value)):
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
        self.unique = UniqueIds("episode_id", self.pc)

    def add(self, k: int, ep: Any) -> None:
        if not isinstance(ep, dict):
            self.pc.add("expected an object", field=f"episodes[{k}]")
            return
        eid = ep.get("episode_id")
        if isinstance(eid, bool) or not isinstance(eid, (int, str)):
            self.pc.add(
                f"episode_id must be an integer or string, got {brief(eid, 40)}",
                field=f"episodes[{k}]",
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
        if not self.unique.first(eid, k):
            return
        instr: dict[str, Any] = ep["instruction"] if isinstance(ep.get("instruction"), dict) else {}
        info: dict[str, Any] = ep["info"] if isinstance(ep.get("info"), dict) else {}
        gd = info.get("geodesic_distance")
        c = self.cols
        c["ids"].append(str(eid))
        c["iids"].append(str(instr.get("instruction_id", eid)))
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
    return table
