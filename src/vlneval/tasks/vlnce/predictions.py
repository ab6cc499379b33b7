"""VLN-CE (Krantz et al. 2020) predictions, read against a split's episodes.

Predictions, two forms (``form``):

- ``r2r-ce``: VLN-CE's ``inference.py`` output, ``{episode_id: [{"position": [x, y, z],
  "heading": h, "stop": bool}, ...]}``, start state first; a record may also carry
  ``"distance_to_goal"`` (metres, ``Infinity`` or ``"inf"`` when unreachable), the geodesic
  distance a Habitat run measured at that step;
- ``rxr-jsonl``: the RxR-Habitat challenge form, one ``{"instruction_id", "path": [[x, y, z],
  ...]}`` per line (or a JSON list of them), optionally ``"distance_to_goal": [...]`` per point.
  It has no stop flag: the last position is where the agent ended the episode, taken as STOP.

Coordinates and finite carried distances beyond :data:`MAX_COORDINATE` (1e6 m) are refused:
they are overflows or unit errors, and would overflow the path length and the DTW.

Every problem is collected and raised together, naming the file, the episode id and the field.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from itertools import chain, compress, repeat
from operator import attrgetter
from typing import Annotated, Any

import msgspec
import numpy as np

from vlneval.errors import (
    InvalidInputError,
    ProblemCollector,
    UnknownNameError,
    hint,
    hinted,
)
from vlneval.io import brief, clip, decode_json, gc_paused, no_json, unique_keys
from vlneval.metrics._kernels import offsets_of, reorder
from vlneval.tasks.common.checks import missing_of, no_match
from vlneval.tasks.common.inputs import read_input
from vlneval.tasks.common.jsonl import iter_jsonl
from vlneval.tasks.common.prediction_structs import Finite
from vlneval.tasks.common.record_checks import Repeats, as_list, is_bool, is_finite, shown_value
from vlneval.tasks.common.request import PredictionsInput
from vlneval.tasks.profiles import Profile
from vlneval.tasks.vlnce.episodes import ContinuousEpisodes, _point, _ragged

__all__ = [
    "ContinuousPredictions",
    "missing_problem",
    "parse_ce_predictions",
    "reference_as_predictions",
    "CE_FORMS",
    "START_TOLERANCE",
    "MAX_COORDINATE",
]

CE_FORMS = ("auto", "r2r-ce", "rxr-jsonl")
#: A trajectory must start within this distance (metres) of the episode's start position.
START_TOLERANCE = 0.1
#: The largest coordinate or finite carried distance accepted (metres). Positions are metres in
#: one building's frame; a larger value is an overflow or a unit error, and would overflow the
#: path length and the DTW (fastdtw crashes on coordinates near 1e200).
MAX_COORDINATE = 1e6


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
        unknown: the ids of the predictions not in the split (clipped), for the completeness
            problem to name.
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
    unknown: list[str] = field(default_factory=list)


def _distance(value: Any) -> float | None:
    """A carried distance: a number in ``[0, MAX_COORDINATE]``, or infinity (``Infinity`` or the
    string ``"inf"``)."""
    if isinstance(value, str) and value.lower() in ("inf", "infinity"):
        return math.inf
    if is_finite(value) and 0 <= value <= MAX_COORDINATE:
        return float(value)
    if type(value) is float and math.isinf(value) and value > 0:
        return math.inf
    return None


class _PredReader:
    def __init__(self, source: str, episodes: ContinuousEpisodes, form: str) -> None:
        self.source, self.ep, self.form = source, episodes, form
        self.pc = ProblemCollector(source)
        self.rows: dict[int, tuple[np.ndarray, bool, np.ndarray | None]] = {}
        self.seen: set[int] = set()  # the episodes with a record, malformed or not
        self.unknown: list[str] = []
        self.far = 0  # trajectories that start away from their episode's start
        self.repeats = Repeats()  # the episodes predicted again, by row
        self.labels: dict[int, str] = {}  # row -> the label of its first record

    def _lookup(self, key: str, label: str, line: int | None = None) -> int | None:
        """The episode of id ``key`` not predicted before, else None (a stray or a repeat,
        noted; ``line``: the record's, in JSON lines, which a repeat's problem names)."""
        table = self.ep.index if self.form == "r2r-ce" else self.ep.by_instruction
        i = table.get(key)
        if i is None:
            self.unknown.append(clip(key))
        elif i in self.seen:
            self.repeats.see(i, line)
            return None
        else:
            self.seen.add(i)
            self.repeats.first(i, line)
            self.labels[i] = label
        return i

    def r2r_ce(self, eid: str, steps: Any) -> None:
        label = f'episode_id "{eid}"'
        i = self._lookup(eid, label)
        if i is None:
            return
        if not isinstance(steps, list) or not steps:
            self.pc.add(_no_steps(steps, "a list of steps (start state first)"), episode=label)
            return
        pts, dists, stop_at = [], [], None
        for j, st in enumerate(steps):
            p = _point(as_list(st.get("position"))) if isinstance(st, dict) else None
            problem = _step_problem(st, p)
            if problem is not None:
                self.pc.add(problem[0], episode=label, field=f"[{j}]{problem[1]}")
                return
            stop = st["stop"]
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
        self._keep(i, label, pts, stop_at is not None, dists, "[{}].position")

    def rxr(self, k: int, rec: Any, line: int | None = None) -> None:
        """Reads record ``k`` of the ``rxr-jsonl`` form (on ``line``, in JSON lines)."""
        if not isinstance(rec, dict) or "instruction_id" not in rec:
            self.pc.add(
                "expected {'instruction_id': ..., 'path': [[x, y, z], ...]}", field=f"record {k}"
            )
            return
        iid = rec["instruction_id"]
        if isinstance(iid, bool) or not isinstance(iid, (int, str)):
            self.pc.add(
                f"instruction_id must be an integer or string, got {shown_value(iid)}",
                field=f"record {k}",
            )
            return
        label = f"instruction_id {iid}" if isinstance(iid, int) else f'instruction_id "{clip(iid)}"'
        i = self._lookup(str(iid), label, line)
        if i is None:
            return
        path = as_list(rec.get("path"))
        if not isinstance(path, list) or not path:
            self.pc.add(_no_steps(path, "a list of [x, y, z]"), episode=label, field="path")
            return
        pts = [_point(as_list(p)) for p in path]
        if any(p is None for p in pts):
            bad = next(j for j, p in enumerate(pts) if p is None)
            why = _not_finite(path[bad])  # worded as a step's position of the r2r-ce form
            why = why or f"position must be [x, y, z], got {_shown(as_list(path[bad]))}"
            self.pc.add(why, episode=label, field=f"path[{bad}]")
            return
        dists = rec.get("distance_to_goal", [_ABSENT] * len(pts))
        if not isinstance(dists, list) or len(dists) != len(pts):
            self.pc.add(
                f"distance_to_goal must be a list of {len(pts)} distances",
                episode=label,
                field="distance_to_goal",
            )
            return
        self._keep(i, label, pts, True, dists, "path[{}]")

    def _keep(
        self, i: int, label: str, pts: list[Any], stopped: bool, raw: list[Any], where: str
    ) -> None:
        arr = np.asarray(pts, dtype=np.float64)
        far = np.flatnonzero(np.abs(arr).max(axis=1) > MAX_COORDINATE)
        if far.size:
            j = int(far[0])
            self.pc.add(
                f"position {arr[j].tolist()} has a coordinate beyond ±{MAX_COORDINATE:g} m: "
                "positions are metres in the building's frame (an overflow or a unit error?)",
                episode=label,
                field=where.format(j),
            )
            return
        start = self.ep.starts[i]
        gap = float(np.linalg.norm(arr[0] - start))
        if gap > START_TOLERANCE:
            self.far += 1
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
                    _MISSING_DISTANCE
                    if raw[j] is _ABSENT
                    else _BAD_DISTANCE.format(_shown(raw[j])),
                    episode=label,
                    field=f"[{j}].distance_to_goal",
                )
                return
            dist = np.asarray(vals, dtype=np.float64)
        self.rows[i] = (arr, stopped, dist)


_ABSENT = object()
_MISSING_DISTANCE = (
    "missing field 'distance_to_goal' (other steps of the episode carry it: carry it on every "
    "step or none)"
)
_BAD_DISTANCE = (
    "distance_to_goal must be a number >= 0 or Infinity (finite ones at most "
    f"{MAX_COORDINATE:g} m), got {{}}"
)


def _shown(value: Any) -> str:
    """A wrong value for a message, as the R2R reader shows one: JSON's ``null`` for None, else
    its text clipped to 30 characters (built only that deep: a list nested 100,000 deep is shown).

    Example:
        >>> _shown(None), _shown("yes"), _shown([1.0, 2.0])
        ('null', "'yes'", '[1.0, 2.0]')
    """
    return "null" if value is None else brief(value, 30)


def _no_steps(steps: Any, expected: str) -> str:
    """The problem of a trajectory that is no list, or an empty one (as the R2R reader words it).

    Example:
        >>> _no_steps(None, "a list of steps"), _no_steps([], "a list of steps")
        ('expected a list of steps, got null', 'empty trajectory (it must include the start state)')
    """
    if isinstance(steps, list):
        return "empty trajectory (it must include the start state)"
    return f"expected {expected}, got {'null' if steps is None else type(steps).__name__}"


_STEP = "{'position': [x, y, z], 'heading': h, 'stop': bool}"


def _not_finite(pos: Any) -> str | None:
    """The message for ``[x, y, z]`` numbers of which one is NaN or infinite, else None.

    Example:
        >>> _not_finite([0.0, float("inf"), 0.0])
        'position [0.0, inf, 0.0] has an infinite coordinate: [x, y, z] must be finite'
    """
    if isinstance(pos, list) and len(pos) == 3 and all(type(v) in (int, float) for v in pos):
        kind = "a NaN" if any(v != v for v in pos) else "an infinite"  # NaN != NaN
        return f"position {brief(pos, 60)} has {kind} coordinate: [x, y, z] must be finite"
    return None


def _step_problem(st: Any, p: np.ndarray | None) -> tuple[str, str] | None:
    """What is wrong with one ``r2r-ce`` step (its position ``p`` as read): the message and the
    field under the step, or None.

    Example:
        >>> _step_problem({"position": [float("nan"), 0, 0], "stop": True}, None)
        ('position [nan, 0, 0] has a NaN coordinate: [x, y, z] must be finite', '.position')
        >>> _step_problem({"position": [0, 0, 0]}, np.zeros(3))
        ("missing field 'stop' (true or false)", '.stop')
    """
    if not isinstance(st, dict):
        return f"expected {_STEP}, got {_shown(st)}", ""
    pos, stop, h = st.get("position", _ABSENT), st.get("stop", _ABSENT), st.get("heading", 0.0)
    if pos is _ABSENT:
        return "missing field 'position' ([x, y, z])", ".position"
    if p is None:
        why = _not_finite(pos)
        return (
            why or f"expected {_STEP}: position must be [x, y, z], got {_shown(pos)}",
            ".position",
        )
    if stop is _ABSENT:
        return "missing field 'stop' (true or false)", ".stop"
    if not is_bool(stop):
        return f"stop must be true or false, got {_shown(stop)}", ".stop"
    if not is_finite(h):
        return f"heading must be a finite number, got {_shown(h)}", ".heading"
    return None


_BLANK = re.compile(rb"\s*")  # what bytes.lstrip strips, found without a copy of the file


def _detect(raw: bytes) -> str:
    start = _BLANK.match(raw).end()  # type: ignore[union-attr]  # (it matches "" too)
    if raw[start : start + 1] == b"{":
        end = raw.find(b"\n", start)
        first_line = raw[start : end if end >= 0 else len(raw)]
        return (
            "rxr-jsonl"
            if b'"instruction_id"' in first_line and b'"path"' in first_line
            else "r2r-ce"
        )
    return "rxr-jsonl"


def _detect_value(value: Any) -> str:
    """The form of records in memory, as :func:`_detect` tells a file's: a mapping keyed by
    episode id is ``r2r-ce``; a list, or the one record of a JSON-lines line, ``rxr-jsonl``."""
    if isinstance(value, Mapping) and not {"instruction_id", "path"} <= value.keys():
        return "r2r-ce"
    return "rxr-jsonl"


def _listed(value: Any) -> list[Any]:
    """The ``rxr-jsonl`` records of a value in memory (a mapping: one record, as one line)."""
    return [value] if isinstance(value, Mapping) else list(value)


def _records(raw: bytes, source: str, pc: ProblemCollector) -> tuple[list[Any], list[int] | None]:
    """The ``rxr-jsonl`` records of a file and, in JSON lines, the line of each (a bad line is
    a problem of ``pc``); a JSON list's records have no lines (None)."""
    stripped = raw.lstrip()
    if stripped[:1] == b"[":
        value = decode_json(raw, source)
        return (value if isinstance(value, list) else []), None
    rows = iter_jsonl(raw, pc, lenient=True)
    return [rec for _, rec in rows], [lineno for lineno, _ in rows]


@gc_paused()  # the decoded records hold no cycle: no collection need walk them
def parse_ce_predictions(
    predictions: PredictionsInput,
    episodes: ContinuousEpisodes,
    *,
    form: str = "auto",
    profile: Profile | None = None,
    subset: bool = False,
) -> ContinuousPredictions:
    """Reads VLN-CE predictions (``r2r-ce`` JSON or ``rxr-jsonl``) against ``episodes``.

    Args:
        predictions: the file, its bytes, or its records as ``json.loads`` of the file gives
            them (``r2r-ce``: the dict keyed by episode id; ``rxr-jsonl``: the list of records).
        episodes: the split's episodes.
        form: ``auto`` (from the file's first line, or the records' type), ``r2r-ce`` or
            ``rxr-jsonl``.
        profile, subset: when the profile is given, a refused file is also told the episodes
            it leaves out when ``profile`` requires all of them and ``subset`` is false
            (:func:`missing_problem`).

    Raises:
        InvalidInputError: every malformed record (file, id, field), duplicates, a trajectory
            that does not start at the episode's start, STOP before the last step, a carried
            distance that is NaN, negative or not a number.
    """
    if form not in CE_FORMS:
        raise UnknownNameError("VLN-CE predictions form", form, CE_FORMS)
    given = read_input(predictions, keyed=True)
    source, raw = given.source, given.text
    if raw is not None and (why := no_json(raw)) is not None:  # as every other task says it
        raise InvalidInputError(why, source=str(source))
    if form == "auto":
        form = _detect(raw) if raw is not None else _detect_value(given.value)
    if form == "r2r-ce" and raw is not None and (fast := _typed_r2r_ce(raw, source, episodes)):
        return fast
    r = _PredReader(source, episodes, form)
    if form == "r2r-ce":
        data = decode_json(raw, source) if raw is not None else given.value
        if not isinstance(data, Mapping):
            raise InvalidInputError(
                f"the r2r-ce form is one JSON object {{episode_id: [{_STEP}, ...]}}, got "
                f"{_kind(data)}{_to_keyed(data)}",
                source=str(source),
            )
        if raw is not None:
            unique_keys(raw, source, what="episode_id")
        for eid, steps in data.items():
            r.r2r_ce(str(eid), steps)
    else:
        records, lines = (
            _records(raw, source, r.pc) if raw is not None else (_listed(given.value), None)
        )
        if records and not any(
            isinstance(rec, dict) and "instruction_id" in rec for rec in records
        ):
            r.pc.add(_not_ce(records, episodes.task))
            records = []
        for k, rec in enumerate(records):
            r.rxr(k, rec, None if lines is None else lines[k])
    r.repeats.report(r.pc, r.labels.__getitem__)
    if not r.rows and not r.pc.problems:
        r.pc.add(no_match(episodes.task, episodes.split))
    if r.far >= 2 and r.far > len(r.rows):  # most trajectories start elsewhere: say why once
        far = (
            f"{r.far} of {r.far + len(r.rows)} trajectories start more than {START_TOLERANCE:g} m "
            "from their episode's start: the file was probably made for another split than "
            f"{episodes.task} {episodes.split} (episode ids repeat across VLN-CE splits)"
        )
        r.pc.add_first(far)
    carried = {d is not None for _, _, d in r.rows.values()}
    if len(carried) > 1:
        r.pc.add(
            "distance_to_goal is carried for some episodes but not others: carry it for all or none"
        )
    if profile is not None and (r.rows or any(p.episode is not None for p in r.pc.problems)):
        missing = [episodes.ids[i] for i in range(len(episodes)) if i not in r.seen]
        problem = missing_problem(episodes, missing, r.unknown, profile, subset)
        if r.pc.problems and problem is not None:
            r.pc.add_first(problem)  # with the records' problems: malformed ones never hide it
    r.pc.raise_if_any()
    return _assemble(r, episodes, form, source)


def missing_problem(
    episodes: ContinuousEpisodes,
    missing: list[str],
    unknown: list[str],
    profile: Profile,
    subset: bool,
) -> str | None:
    """The completeness problem of predictions leaving out the episodes ``missing``
    (:func:`~vlneval.tasks.common.checks.missing_of`; ``unknown``: the ids not in the split), or
    None when none is missing or ``profile`` (or ``subset``) allows it."""
    first = missing[0] if missing else ""
    return missing_of(missing, len(episodes), unknown, first, profile, subset)


def _not_ce(records: list[Any], task: str) -> str:
    """The one problem of a list of records none of which is an ``rxr-jsonl`` record: what the
    file holds and what the task expects.

    Example:
        >>> print(_not_ce([{"instr_id": "1_0", "trajectory": []}], "r2r-ce"))  # doctest: +ELLIPSIS
        a list of 1 records with fields instr_id, trajectory (an R2R predictions file? ...
    """
    first = records[0]
    what: str = f"values (the first: {brief(first, 30)})"
    if isinstance(first, Mapping):
        what = f"records with fields {', '.join(map(str, list(first)[:6]))}"
        if {"instr_id", "trajectory"} <= first.keys():  # the advice is a hint: a phase drops it
            r2r = hint("--task", "score it with --task r2r", lead=" ")
            what = hinted(what, " (an R2R predictions file?", r2r, ")")
    return hinted(
        f"a list of {len(records)} ",
        what,
        ", not a VLN-CE form: "
        f"{task} expects one JSON object {{episode_id: [{_STEP}, ...]}}, start state first (or "
        "rxr-jsonl: one {'instruction_id': ..., 'path': [[x, y, z], ...]} per line)",
        _to_keyed(records),
    )


def _kind(value: Any) -> str:
    """What a value that is no object is, for a message.

    Example:
        >>> _kind([{"episode_id": 1}]), _kind(None), _kind(3)
        ('a list of 1 records', 'null', 'int')
    """
    if isinstance(value, list):
        return f"a list of {len(value)} records"
    return "null" if value is None else type(value).__name__


def _to_keyed(records: Any) -> str:
    """The end of the refusal of a list of records carrying ``episode_id`` and a list (their
    steps, it seems): how to key them by id as the ``r2r-ce`` form is; "" for other values.

    Example:
        >>> _to_keyed([{"episode_id": 7, "steps": []}])
        '; to key them by id in Python: {str(r["episode_id"]): r["steps"] for r in records}'
    """
    first = records[0] if isinstance(records, list) and records else None
    if not isinstance(first, Mapping) or "episode_id" not in first:
        return ""
    name = next((k for k, v in first.items() if k != "episode_id" and isinstance(v, list)), None)
    if name is None:
        return ""
    return f'; to key them by id in Python: {{str(r["episode_id"]): r["{name}"] for r in records}}'


def _assemble(
    r: _PredReader, episodes: ContinuousEpisodes, form: str, source: str
) -> ContinuousPredictions:
    order = np.array(sorted(r.rows), dtype=np.int64)
    arrays = [r.rows[int(i)] for i in order]
    pos, offsets = _ragged([a for a, _, _ in arrays])
    stopped = np.array([s for _, s, _ in arrays], dtype=np.bool_)
    dists = [d for _, _, d in arrays if d is not None]
    distances: np.ndarray | None = np.concatenate(dists) if dists else None
    return _predictions(episodes, source, form, order, pos, offsets, stopped, distances, r.unknown)


def _predictions(
    episodes: ContinuousEpisodes,
    source: str,
    form: str,
    order: np.ndarray,
    pos: np.ndarray,
    offsets: np.ndarray,
    stopped: np.ndarray,
    distances: np.ndarray | None,
    unknown: list[str],
) -> ContinuousPredictions:
    """The predictions of the episodes ``order`` (ascending), with the warning of the
    ``unknown`` ids and the episodes left without a prediction."""
    warnings = []
    if unknown:
        warnings.append(
            f"{len(unknown)} prediction(s) for ids not in the split were ignored "
            f"(first: {', '.join(unknown[:5])})"
        )
    have = set(order.tolist())
    missing = [episodes.ids[i] for i in range(len(episodes)) if i not in have]
    return ContinuousPredictions(
        source, form, order, pos, offsets, stopped, distances, warnings, missing, unknown
    )


class _Step(msgspec.Struct, gc=False):
    """An ``r2r-ce`` step as the typed pass reads it: what it rejects goes to the explaining
    pass (:meth:`_PredReader.r2r_ce`), which names the problem."""

    position: tuple[Finite, Finite, Finite]
    stop: bool
    heading: Finite = 0.0
    distance_to_goal: float | str | msgspec.UnsetType = msgspec.UNSET


_CE_DECODER = msgspec.json.Decoder(dict[str, Annotated[list[_Step], msgspec.Meta(min_length=1)]])
_POSITION, _STOP, _CARRIED = (attrgetter(n) for n in ("position", "stop", "distance_to_goal"))


class _Refused(Exception):
    """The typed records break a rule: the explaining pass names the problem."""


def _typed_r2r_ce(
    raw: bytes, source: str, episodes: ContinuousEpisodes
) -> ContinuousPredictions | None:
    """The ``r2r-ce`` predictions of ``raw`` read by msgspec's typed decoding and checked over
    whole arrays (coordinates, start, STOP last, carried distances); None when the types
    reject the file or a check fails, for the explaining pass to name every problem."""
    try:
        data = _CE_DECODER.decode(raw)
    except (msgspec.MsgspecError, RecursionError):
        return None
    unique_keys(raw, source, what="episode_id")
    ids = list(data)
    rows = np.fromiter(map(episodes.index.get, ids, repeat(-1)), np.int64, len(ids))
    known = rows >= 0
    trajs = list(compress(data.values(), known.tolist()))
    steps = list(chain.from_iterable(trajs))
    offsets = offsets_of(np.fromiter(map(len, trajs), np.int64, len(trajs)))
    n = len(steps)
    pos = np.fromiter(chain.from_iterable(map(_POSITION, steps)), np.float64, 3 * n)
    pos = pos.reshape(n, 3)
    stop = np.fromiter(map(_STOP, steps), np.bool_, n)
    try:
        if not trajs:
            raise _Refused  # no prediction of the split: the explaining pass says so
        _check_arrays(pos, offsets, stop, episodes.starts[rows[known]])
        carried = _carried(list(map(_CARRIED, steps)))
    except _Refused:
        return None
    order = np.argsort(rows[known], kind="stable")
    pos, new = reorder(pos, offsets, order)
    distances = None if carried is None else reorder(carried, offsets, order)[0]
    unknown = [clip(k) for k in compress(ids, (~known).tolist())]
    stopped = stop[offsets[1:] - 1][order]
    return _predictions(
        episodes, source, "r2r-ce", rows[known][order], pos, new, stopped, distances, unknown
    )


def _check_arrays(
    pos: np.ndarray, offsets: np.ndarray, stop: np.ndarray, starts: np.ndarray
) -> None:
    """Raises :class:`_Refused` when a coordinate is too large, a trajectory starts away from
    its episode's start (a hair closer than :data:`START_TOLERANCE`: the explaining pass
    decides the borderline) or STOP is not the last step."""
    if (np.abs(pos).max(axis=1) > MAX_COORDINATE).any():
        raise _Refused
    gap = np.linalg.norm(pos[offsets[:-1]] - starts, axis=1)
    if (gap > START_TOLERANCE * (1 - 1e-9)).any():
        raise _Refused
    early = stop.copy()
    early[offsets[1:] - 1] = False
    if early.any():
        raise _Refused


def _carried(values: list[Any]) -> np.ndarray | None:
    """The carried distances of every step (None when no step carries one).

    Raises:
        _Refused: some steps carry none, or one is negative, NaN, too large or a text other
            than ``inf``.
    """
    kinds = set(map(type, values))
    if kinds == {msgspec.UnsetType}:
        return None
    if msgspec.UnsetType in kinds:
        raise _Refused
    if str in kinds:
        values = [_distance(v) if type(v) is str else v for v in values]
        if None in values:
            raise _Refused
    vals = np.array(values, dtype=np.float64)
    if not ((vals >= 0) & ((vals <= MAX_COORDINATE) | (vals == math.inf))).all():
        raise _Refused
    return vals


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
