"""CVDN / NDH episode files (Navigation from Dialog History, Thomason et al. 2019).

``<split>.json``: a list of instances ``{inst_idx, scan, target, start_pano: {heading, elevation,
pano}, dialog_history: [{nav_idx, role, message}], nav_history, end_panos, planner_path,
player_path, ...}``; test instances lack the last three. Predictions are ``[{inst_idx: int,
trajectory: [[viewpoint, heading, elevation], ...]}]``.

The ground-truth path of an episode is chosen by ``path_type`` as the official scorer
(``tasks/NDH/eval.py`` of mmurray/cvdn) does: ``planner_path`` (its default), ``player_path``, or
``trusted_path`` = the player's path if it passes the planner's goal after its first node, else
the planner's path. Goal progress is measured against ``end_panos`` whatever the path type.

Some redistributed copies store every value as a string (``"inst_idx": "108"``,
``"end_panos": "['a', 'b']"``); such values are read with :func:`ast.literal_eval` (literals only,
never ``eval``), so both forms load to the same episodes.
"""

from __future__ import annotations

import ast
import functools
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from vlneval.errors import InvalidInputError, ProblemCollector, UnknownNameError
from vlneval.io import brief, clip, iter_chunks, read_bytes
from vlneval.tasks.common.episodes import EpisodeBuilder, EpisodeTable
from vlneval.tasks.common.inputs import ReadInput, keyed_fix, read_input
from vlneval.tasks.common.prediction_structs import TRAJECTORY_KEYS, without_numpy
from vlneval.tasks.common.record_checks import ID_LIKE, FieldTally, UniqueIds, is_finite, numbered
from vlneval.tasks.common.request import PredictionsInput
from vlneval.tasks.common.summary_records import without_summaries
from vlneval.tasks.cvdn import PATH_TYPE

__all__ = [
    "NDHEpisodes",
    "PATH_TYPES",
    "HISTORIES",
    "load_ndh",
    "ndh_instruction",
    "trusted_path",
    "check_ndh_predictions",
    "read_ndh_input",
]

PATH_TYPES = PATH_TYPE.choices
HISTORIES = ("all", "target", "oracle_ans", "nav_q_oracle_ans", "none")
_MISSING = object()


@dataclass
class NDHEpisodes(EpisodeTable):
    """The NDH instances of one split: an episode table (id ``inst_idx``; path = the
    ``path_type`` path; goal = its last viewpoint; instruction = the dialog history and target
    hint) with what the CVDN scorer needs beyond it.

    Attributes:
        end_panos: the goal region of each episode (for goal progress).
        planner_goals: the last viewpoint of each planner path (for the oracle planner success).
        path_type: which path is the ground truth.
        history: how the instruction text was built (see :func:`ndh_instruction`).
        string_valued: the file stored its values as strings (read with ``ast.literal_eval``).
    """

    end_panos: list[tuple[str, ...]] = field(default_factory=list)
    planner_goals: list[str] = field(default_factory=list)
    path_type: str = "planner_path"
    history: str = "all"
    string_valued: bool = False
    ROW_COLUMNS = (*EpisodeTable.ROW_COLUMNS, "end_panos", "planner_goals")


#: The instance fields a ``trusted_path`` is taken from (it is not a field of the file).
_PATH_FIELD = {"trusted_path": "player_path or planner_path (trusted_path)"}


def trusted_path(planner_path: list[str], player_path: list[str]) -> list[str]:
    """The CVDN ``trusted_path``: the player's path when it passes the planner's goal after its
    first node, else the planner's path.

    Example:
        >>> trusted_path(["s", "a", "g"], ["s", "b", "g", "c"])
        ['s', 'b', 'g', 'c']
        >>> trusted_path(["s"], ["s", "b"])  # the planner's goal is only the player's start
        ['s']
    """
    return list(player_path) if planner_path[-1] in player_path[1:] else list(planner_path)


def ndh_instruction(dialog: list[dict[str, Any]], target: str, history: str = "all") -> str:
    """The instruction text of an instance, as ``tasks/NDH/env.py`` of mmurray/cvdn builds it.

    ``all``: every turn as ``<NAV> question`` / ``<ORA> answer``, then ``<TAR> target``;
    ``oracle_ans``: the last answer and the target; ``nav_q_oracle_ans``: the last question and
    answer and the target; ``target``: ``<TAR> target`` only (also used when the dialog is
    empty); ``none``: the empty string.

    Example:
        >>> turns = [{"role": "navigator", "message": "Left?"}, {"role": "oracle", "message": "Yes."}]
        >>> ndh_instruction(turns, "towel")
        '<NAV> Left? <ORA> Yes. <TAR> towel'
        >>> ndh_instruction([], "towel", "all"), ndh_instruction(turns, "towel", "oracle_ans")
        ('<TAR> towel', '<ORA> Yes. <TAR> towel')
    """
    if history not in HISTORIES:
        raise UnknownNameError("NDH history", history, HISTORIES)
    if history == "none":
        return ""
    if history == "target" or not dialog:
        return f"<TAR> {target}"
    if history == "oracle_ans":
        return f"<ORA> {dialog[-1]['message']} <TAR> {target}"
    if history == "nav_q_oracle_ans":
        return f"<NAV> {dialog[-2]['message']} <ORA> {dialog[-1]['message']} <TAR> {target}"
    text = "".join(
        f"{'<NAV>' if t['role'] == 'navigator' else '<ORA>'} {t['message']} " for t in dialog
    )
    return f"{text}<TAR> {target}"


class _Reader:
    """Reads one instance's fields, literal-evaluating string-encoded values."""

    def __init__(self, rec: dict[str, Any], where: str, pc: ProblemCollector) -> None:
        self.rec, self.where, self.pc = rec, where, pc
        self.ok = True
        self.stringy = False

    def get(self, key: str, kind: type | tuple[type, ...], *, required: bool = True) -> Any:
        if key not in self.rec:
            if required:
                self.fail(f"missing field {key!r}", key)
            return _MISSING
        value = self.rec[key]
        if isinstance(value, str) and kind is not str:
            try:
                value = ast.literal_eval(value)
                self.stringy = True
            except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
                self.fail(
                    f"field {key!r} is the string {brief(value, 60)}, which does not read as {_name(kind)}",
                    key,
                )
                return _MISSING
        if not isinstance(value, kind) or isinstance(value, bool):
            self.fail(
                f"field {key!r} must be {_name(kind)}, got {type(value).__name__} {brief(value, 60)}",
                key,
            )
            return _MISSING
        return value

    def viewpoints(self, key: str, *, required: bool = True) -> list[str] | None:
        value = self.get(key, list, required=required)
        if value is _MISSING:
            return None
        if not value or not all(isinstance(v, str) for v in value):
            self.fail(f"field {key!r} must be a non-empty list of viewpoint ids", key)
            return None
        return value  # type: ignore[no-any-return]

    def fail(self, message: str, key: str) -> None:
        self.pc.add(message, field=f"{self.where}.{key}")
        self.ok = False


def _name(kind: type | tuple[type, ...]) -> str:
    kinds = kind if isinstance(kind, tuple) else (kind,)
    words = {
        int: "an integer",
        str: "a string",
        list: "a list",
        dict: "an object",
        float: "a number",
    }
    return " or ".join(words.get(k, k.__name__) for k in kinds)


def _dialog(r: _Reader) -> list[dict[str, Any]]:
    turns = r.get("dialog_history", list, required=False)
    if turns is _MISSING:
        return []
    for j, t in enumerate(turns):
        if not (
            isinstance(t, dict)
            and isinstance(t.get("message"), str)
            and t.get("role") in ("navigator", "oracle")
        ):
            r.fail(
                f"turn {j} must be {{role: navigator|oracle, message: string}}",
                f"dialog_history[{j}]",
            )
            return []
    return turns  # type: ignore[no-any-return]


def _start(r: _Reader) -> tuple[str, float] | None:
    start = r.get("start_pano", dict)
    if start is _MISSING:
        return None
    heading = start.get("heading", 0.0)
    if not isinstance(start.get("pano"), str):
        r.fail("start_pano must hold the start viewpoint id in 'pano'", "start_pano")
        return None
    if not is_finite(heading):
        r.fail(f"start_pano.heading must be a finite number, got {heading!r}", "start_pano")
        return None
    return start["pano"], float(heading)


@dataclass
class _Row:
    inst_idx: int
    scan: str
    path: list[str]
    heading: float
    instruction: str
    end_panos: tuple[str, ...]
    planner_goal: str
    scorable: bool
    stringy: bool


_TRUTH = ("planner_path", "player_path", "end_panos")


def _read_instance(
    rec: Any, where: str, pc: ProblemCollector, path_type: str, history: str
) -> _Row | None:
    if not isinstance(rec, dict):
        pc.add(f"expected an object, got {type(rec).__name__}", field=where)
        return None
    r = _Reader(rec, where, pc)
    idx = r.get("inst_idx", int)
    scan = r.get("scan", str)
    target = r.get("target", str)
    start = _start(r)
    dialog = _dialog(r)
    planner, player, ends = (r.viewpoints(key, required=False) for key in _TRUTH)
    if (planner is None or player is None or ends is None) and any(k in rec for k in _TRUTH):
        for key in (k for k in _TRUTH if k not in rec):
            r.fail(f"missing field {key!r} (the other ground-truth fields are present)", key)
    if not r.ok or start is None:
        return None
    text = ndh_instruction(dialog, target, history)
    if planner is None or player is None or ends is None:  # a test instance: only the start
        return _Row(idx, scan, [start[0]], start[1], text, (), "", False, r.stringy)
    paths = {"planner_path": planner, "player_path": player}
    path = paths[path_type] if path_type in paths else trusted_path(planner, player)
    return _Row(idx, scan, path, start[1], text, tuple(ends), planner[-1], True, r.stringy)


def load_ndh(
    path: str | Path,
    *,
    task: str = "ndh",
    split: str = "",
    path_type: str = "planner_path",
    history: str = "all",
) -> NDHEpisodes:
    """Loads an NDH split file (``.json`` or ``.json.gz``; native or string-encoded values):
    the loader of the task registry, the environments and the scorer alike.

    Args:
        path: the file.
        task, split: recorded on the table.
        path_type: ``planner_path`` (the scorer's default), ``player_path`` or ``trusted_path``.
        history: the instruction text (see :func:`ndh_instruction`); ``all`` by default.

    Raises:
        InvalidInputError: every malformed instance, named by its position and field.
        UnknownNameError: an unknown ``path_type`` or ``history``.
    """
    if path_type not in PATH_TYPES:
        raise UnknownNameError("NDH path type", path_type, PATH_TYPES)
    if history not in HISTORIES:
        raise UnknownNameError("NDH history", history, HISTORIES)
    path = Path(path)
    source = str(path)
    pc = ProblemCollector(source)
    rows: list[_Row] = []
    unique = UniqueIds("inst_idx", pc)
    records = iter_chunks(read_bytes(path), source, expected="a JSON list of NDH instances")
    for k, rec in numbered(records, pc, "NDH instances"):
        row = _read_instance(rec, f"record {k}", pc, path_type, history)
        if row is not None and unique.first(row.inst_idx, k):
            rows.append(row)
    pc.raise_if_any()
    builder = EpisodeBuilder()
    for row in rows:
        builder.add(str(row.inst_idx), row.scan, row.path, None, row.heading, row.instruction)
    scorable = all(row.scorable for row in rows)
    named = _PATH_FIELD.get(path_type, path_type) if scorable else "start_pano"  # for messages
    base = builder.build(
        task=task,
        split=split,
        source=source,
        id_field="inst_idx",
        scorable=scorable,
        file_fields={"paths": named, "goals": named},
    )
    base.int_ids = True
    return NDHEpisodes(
        **{f.name: getattr(base, f.name) for f in fields(EpisodeTable) if f.init},
        end_panos=[row.end_panos for row in rows], planner_goals=[row.planner_goal for row in rows],
        path_type=path_type, history=history, string_valued=any(row.stringy for row in rows),
    )  # fmt: skip


def check_ndh_predictions(
    predictions: PredictionsInput | ReadInput, *, trajectory_key: str | None = None
) -> ReadInput:
    """File-level checks of NDH predictions that the generic parser cannot make; the input
    checked, for the reader (records in memory with each numpy value as the Python value it
    holds: an agent's ``np.int64`` ids are the integers they hold, as for every task).

    ``inst_idx`` must be a JSON integer: the official scorer compares it with the integers of
    the episode file, so ``"108"`` matches nothing and the file fails as incomplete there. A
    wrong id field name or a missing trajectory field is one clear error for the whole file.
    Records that look like the file's own summary are left to the reader (skipped or refused).

    Args:
        predictions: the file, its bytes or its records (or them read by
            :func:`~vlneval.tasks.common.inputs.read_input`).
        trajectory_key: the field of the executed viewpoints (default: the first present of
            ``trajectory``, ``path``, ``pred_path``).

    Raises:
        InvalidInputError: the problems found (at most one per record).
    """
    keyed = _keyed(trajectory_key)
    given = read_ndh_input(predictions, trajectory_key)  # a ReadInput is taken as it is
    if given.text is None and (plain := without_numpy(given.value)) is not given.value:
        given = ReadInput(given.source, value=plain)
    source = given.source
    records = [r for chunk in given.chunks("a JSON list of predictions", keyed) for r in chunk]
    kept = without_summaries(records, "inst_idx", trajectory_key)  # the reader's to report
    why = " (NDH predictions are keyed by the integer inst_idx of each instance)"
    FieldTally.of(kept, "inst_idx").refuse(source, why, ID_LIKE)
    trajs = FieldTally.of(kept, *((trajectory_key,) if trajectory_key else TRAJECTORY_KEYS))
    fix = trajs.key_hint("inst_idx")
    trajs.refuse(source, " (the executed viewpoints)", fix=fix)
    _check_id_types(records, source, len(kept))
    return given


def _keyed(key: str | None) -> Callable[[Mapping[Any, Any]], str]:
    """How to list the records of an object keyed by inst_idx (:func:`keyed_fix`)."""
    return functools.partial(keyed_fix, id_field="inst_idx", key=key, integer=True)


def read_ndh_input(predictions: PredictionsInput, trajectory_key: str | None) -> ReadInput:
    """``predictions`` read once (:func:`~vlneval.tasks.common.inputs.read_input`); an object
    keyed by ``inst_idx`` is refused with the records' shape and the conversion."""
    return read_input(predictions, about=_keyed(trajectory_key))


def _check_id_types(records: list[Any], source: str, n_predictions: int) -> None:
    bad = [
        (k, r["inst_idx"])
        for k, r in enumerate(records)
        if isinstance(r, dict) and "inst_idx" in r
        and (isinstance(r["inst_idx"], bool) or not isinstance(r["inst_idx"], int))
    ]  # fmt: skip
    if not bad:
        return
    strings = [v for _, v in bad if isinstance(v, str)]
    if len(bad) == n_predictions and len(strings) == len(bad):
        raise InvalidInputError(
            f"inst_idx is a string in all {len(bad)} records (e.g. {strings[0]!r}); NDH "
            "predictions use the integer inst_idx (the official scorer compares it with the "
            "episodes' integers and would find none): write it as a JSON number",
            source=source,
        )
    pc = ProblemCollector(source)
    for k, v in bad:
        pc.add(
            f"inst_idx must be a JSON integer, got {type(v).__name__} {clip(repr(v))}",
            field=f"record {k}",
        )
    pc.raise_if_any()
