"""HANNA episode and prediction files (Nguyen & Daumé III 2019, "Help, Anna!").

``hanna_<split>.json`` (khanhptnk/hanna, ``code/tasks/HANNA/env.py``): a list of tasks
``{path_id, scan, paths: [[viewpoint, ...], ...], heading, instructions: [...], ...}``. Every
path is a shortest path from the common start to one goal viewpoint (an object-finding task has
several goals). Each instruction ``j`` is one episode, ``instr_id = "<path_id>_<j>"``.

Predictions are the records the HANNA agents write: ``{instr_id, agent_pose: [[viewpoint,
heading, elevation(, time)], ...], agent_ask: [0 | 1, ...], ...}``; ``agent_ask`` holds one ask
action per step after the start (``1`` = ``request_help``) and is absent from the simple agents'
files.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from vlneval.errors import ProblemCollector
from vlneval.io import iter_records, read_bytes
from vlneval.tasks.common.episodes import EpisodeBuilder, EpisodeTable
from vlneval.tasks.common.inputs import ReadInput, keyed_fix, read_input
from vlneval.tasks.common.prediction_structs import TRAJECTORY_KEYS
from vlneval.tasks.common.record_checks import (
    ID_LIKE,
    FieldTally,
    UniqueIds,
    check_fields,
    check_heading,
    numbered,
)
from vlneval.tasks.common.request import PredictionsInput
from vlneval.tasks.common.summary_records import looks_like_summary, without_summaries

__all__ = ["load_hanna", "check_hanna_predictions", "read_hanna_input", "REQUEST_HELP", "POSE_KEY"]

REQUEST_HELP = 1  # AskAgent.ask_actions = ['do_nothing', 'request_help', '<start>']
POSE_KEY = "agent_pose"


def _paths(rec: dict[str, Any], where: str, pc: ProblemCollector) -> list[list[str]] | None:
    paths = rec.get("paths")
    if not isinstance(paths, list) or not paths:
        pc.add(
            "field 'paths' must be a non-empty list of viewpoint paths (one per goal)", field=where
        )
        return None
    for j, p in enumerate(paths):
        if not isinstance(p, list) or not p or not all(isinstance(v, str) for v in p):
            pc.add("must be a non-empty list of viewpoint ids", field=f"{where}.paths[{j}]")
            return None
    starts = {p[0] for p in paths}
    if len(starts) > 1:
        pc.add(
            f"the paths start at {len(starts)} different viewpoints ({', '.join(sorted(starts)[:3])}); "
            "the HANNA scorer requires every path to start where the trajectory starts",
            field=f"{where}.paths",
        )
        return None
    return paths


def _check_record(rec: Any, where: str, pc: ProblemCollector) -> list[list[str]] | None:
    if not isinstance(rec, dict):
        pc.add(f"expected an object, got {type(rec).__name__}", field=where)
        return None
    ok = check_fields(rec, (("path_id", (int, str)), ("scan", str)), where, pc)
    instructions = rec.get("instructions")
    if not isinstance(instructions, list) or not all(isinstance(s, str) for s in instructions):
        pc.add("field 'instructions' must be a list of strings", field=f"{where}.instructions")
        ok = False
    ok = check_heading(rec, where, pc) and ok
    paths = _paths(rec, where, pc)
    return paths if ok else None


def load_hanna(path: str | Path, *, task: str = "hanna", split: str = "") -> EpisodeTable:
    """Loads a HANNA split file into an :class:`EpisodeTable`.

    Each episode's ``path`` is the task's first path; its ``goals`` are the last viewpoints of
    all its paths, in file order (the scorer's tie rule depends on that order).

    Args:
        path: ``hanna_<split>.json`` (optionally gzipped).
        task, split: recorded on the table.

    Raises:
        InvalidInputError: every malformed task, named by its position and field.
    """
    path = Path(path)
    source = str(path)
    pc = ProblemCollector(source)
    builder = EpisodeBuilder()
    unique = UniqueIds("path_id", pc)
    records = iter_records(read_bytes(path), source, expected="a JSON list of HANNA tasks")
    for k, rec in numbered(records, pc, "HANNA tasks"):
        where = f"record {k}"
        paths = _check_record(rec, where, pc)
        if paths is None:
            continue
        pid = str(rec["path_id"])
        if not unique.first(pid, k):
            continue
        goals = [p[-1] for p in paths]
        for j, text in enumerate(rec["instructions"]):
            heading = float(rec.get("heading", 0.0))
            builder.add(f"{pid}_{j}", rec["scan"], paths[0], goals, heading, text)
    pc.raise_if_any()
    fields = {"paths": "paths[0]", "goals": "paths"}  # the first path; the goals end every path
    return builder.build(
        task=task, split=split, source=source, id_field="instr_id", file_fields=fields
    )


def _file_level(dicts: list[dict[str, Any]], source: str, key: str) -> None:
    why = ' (HANNA predictions are keyed by "<path_id>_<k>" as the agents write them)'
    FieldTally.of(dicts, "instr_id").refuse(source, why, ID_LIKE)
    poses = FieldTally.of(dicts, key)
    fix = poses.key_hint("instr_id", TRAJECTORY_KEYS)
    poses.refuse(source, " (the executed poses)", fix=fix)


def _check_asks(rec: dict[str, Any], key: str, label: str, pc: ProblemCollector) -> None:
    asks, poses = rec.get("agent_ask"), rec.get(key)
    if not isinstance(asks, list) or not all(
        type(a) is int and a in (0, REQUEST_HELP) for a in asks
    ):
        pc.add(
            "agent_ask must be a list of ask actions, 0 (do_nothing) or 1 (request_help)",
            episode=label, field="agent_ask",
        )  # fmt: skip
    elif isinstance(poses, list) and poses and len(asks) != len(poses) - 1:  # empty: the reader's
        pc.add(
            f"agent_ask holds {len(asks)} actions for {len(poses) - 1} steps (one per pose after "
            "the start, as the scorer asserts)",
            episode=label, field="agent_ask",
        )  # fmt: skip


def _keyed(key: str) -> Callable[[Mapping[Any, Any]], str]:
    """How to list the records of an object keyed by instr_id (:func:`keyed_fix`)."""
    return functools.partial(keyed_fix, id_field="instr_id", key=key)


def read_hanna_input(predictions: PredictionsInput, trajectory_key: str) -> ReadInput:
    """``predictions`` read once (:func:`~vlneval.tasks.common.inputs.read_input`); an object
    keyed by ``instr_id`` is refused with the records' shape and the conversion."""
    return read_input(predictions, about=_keyed(trajectory_key))


def check_hanna_predictions(
    predictions: PredictionsInput | ReadInput,
    episodes: EpisodeTable,
    *,
    trajectory_key: str | None = None,
    collect: ProblemCollector | None = None,
) -> bool:
    """File-level checks of HANNA predictions; True when they have help-request counts.

    A missing ``instr_id`` or pose field everywhere is one clear error; ``agent_ask`` (when a
    record has it, every record of the split's episodes must) must hold one 0/1 action per
    step, each problem naming the episode as ``episodes`` labels it. Records that look like
    the file's own summary, and records of ids not in the split, are left to the reader
    (skipped, refused or noted).

    Args:
        predictions: the file, its bytes or its records (or them read by
            :func:`~vlneval.tasks.common.inputs.read_input`).
        episodes: the split's episodes.
        trajectory_key: the field of the executed poses (default ``agent_pose``).
        collect: when given, the records' ``agent_ask`` problems are added to it instead of
            raised, to be shown with the reader's and the rule checks' problems.

    Raises:
        InvalidInputError: the problems found (a file-level one always).
    """
    key = trajectory_key or POSE_KEY
    given = read_hanna_input(predictions, key)  # a ReadInput is taken as it is
    source = given.source
    keyed = _keyed(key)
    records = [r for c in given.record_chunks("a JSON list of predictions", keyed) for r in c]
    dicts = [r for r in records if isinstance(r, dict)]
    _file_level(without_summaries(dicts, "instr_id", key), source, key)
    with_asks = [r for r in dicts if "agent_ask" in r]
    if not with_asks:
        return False
    pc = collect if collect is not None else ProblemCollector(source)
    for rec in dicts:
        row = episodes.index.get(str(rec.get("instr_id")))
        if row is None or looks_like_summary(rec, "instr_id", key):
            continue  # the reader's to skip, refuse or note
        if "agent_ask" not in rec:
            pc.add(
                "missing field 'agent_ask' (other records have it: help requests are counted for all or none)",
                episode=episodes.label(row),
            )  # fmt: skip
        else:
            _check_asks(rec, key, episodes.label(row), pc)
    if collect is None:
        pc.raise_if_any()
    return True
