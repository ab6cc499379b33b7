"""REVERIE episode files (Qi et al. 2020), releases v1 and v2.

``REVERIE_<split>.json``: a list of ``{id, scan, path, heading, instructions, objId, path_id}``
(v1 adds ``distance``, ``ix`` and ``instructions_l``). ``id = "<path_id>_<objId>"``; each
instruction ``k`` is one episode ``instr_id = "<id>_<k>"``. Test rows have no ``objId`` and only
the start viewpoint: they cannot be scored locally.

Releases (``--data-version``): ``v1`` (2020, ``tasks/REVERIE/data/``) and ``v2`` (2022, the
current one, ``tasks/REVERIE/data_v2/``: 14 val_seen and 36 val_unseen v1 episodes removed, some
paths changed, the same ids otherwise). Under a data root they live at
``reverie/REVERIE_<split>.json`` (v1) and ``reverie/data_v2/REVERIE_<split>.json`` (v2).
"""

from __future__ import annotations

import difflib
from collections.abc import Iterator
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from vlneval.errors import InvalidInputError, Problem, ProblemCollector
from vlneval.io import brief, iter_chunks, read_bytes
from vlneval.tasks.common.episodes import EpisodeBuilder, EpisodeTable
from vlneval.tasks.common.inputs import ReadInput, read_input
from vlneval.tasks.common.predictions import TRAJECTORY_KEYS
from vlneval.tasks.common.record_checks import UniqueIds, check_fields, check_heading, numbered
from vlneval.tasks.common.request import PredictionsInput
from vlneval.tasks.common.summary_records import looks_like_summary

__all__ = [
    "ReverieEpisodes",
    "load_reverie",
    "OBJECT_FIELDS",
    "ObjectPredictions",
    "check_prediction_keys",
    "read_predicted_objects",
]


@dataclass
class ReverieEpisodes(EpisodeTable):
    """REVERIE episodes: an :class:`EpisodeTable` plus each episode's target object.

    Attributes:
        object_ids: the target object id of each episode (a string), None on test splits.
    """

    object_ids: list[str | None] = field(default_factory=list)
    ROW_COLUMNS = (*EpisodeTable.ROW_COLUMNS, "object_ids")


def _check(rec: Any, k: int, pc: ProblemCollector) -> bool:
    where = f"record {k}"
    if not isinstance(rec, dict):
        pc.add("expected an object", field=where)
        return False
    ok = check_fields(rec, (("id", (str, int)), ("scan", str), ("path", list)), where, pc)
    if ok and (not rec["path"] or not all(isinstance(v, str) for v in rec["path"])):
        pc.add("path must be a non-empty list of viewpoint ids", field=f"{where}.path")
        ok = False
    instr = rec.get("instructions")
    if not isinstance(instr, list) or not instr or not all(isinstance(s, str) for s in instr):
        pc.add("instructions must be a non-empty list of strings", field=f"{where}.instructions")
        ok = False
    obj = rec.get("objId")
    if obj is not None and (isinstance(obj, bool) or not isinstance(obj, (int, str))):
        pc.add(f"objId must be an integer or a string, got {obj!r}", field=f"{where}.objId")
        ok = False
    return check_heading(rec, where, pc) and ok


def load_reverie(
    path: str | Path,
    *,
    task: str = "reverie",
    split: str = "",
    data_version: str | None = None,
) -> ReverieEpisodes:
    """Loads a REVERIE episode file (v1 or v2; ``.json`` or ``.json.gz``).

    Args:
        path: ``REVERIE_<split>.json``.
        task, split: recorded on the table.
        data_version: the release (None: not known), recorded on the table and the
            protocol card.

    Raises:
        InvalidInputError: every malformed record, named by position and field; duplicate ids.

    Example:
        >>> import json, pathlib, tempfile
        >>> p = pathlib.Path(tempfile.mkdtemp()) / "REVERIE_val.json"
        >>> _ = p.write_text(json.dumps([{"id": "5_12", "path_id": 5, "objId": 12, "scan": "s",
        ...     "path": ["a", "b"], "heading": 0.5, "instructions": ["bring the cup", "the cup"]}]))
        >>> t = load_reverie(p, split="val")
        >>> t.ids, t.object_ids, t.goals[0]
        (['5_12_0', '5_12_1'], ['12', '12'], ('b',))
    """
    path = Path(path)
    source = str(path)
    pc = ProblemCollector(source)
    builder = EpisodeBuilder()
    objects: list[str | None] = []
    unique = UniqueIds("id", pc)
    scorable = True
    records = iter_chunks(read_bytes(path), source, expected="a JSON list of REVERIE episodes")
    for k, rec in numbered(records, pc, "episodes"):
        if not _check(rec, k, pc):
            continue
        rid = str(rec["id"])
        unique.first(rid, k)
        obj = rec.get("objId")
        scorable = scorable and obj is not None
        for j, text in enumerate(rec["instructions"]):
            heading = float(rec.get("heading", 0.0))
            builder.add(f"{rid}_{j}", rec["scan"], rec["path"], None, heading, text)
            objects.append(None if obj is None else str(obj))
    pc.raise_if_any()
    base = builder.build(
        task=task, split=split, source=source, id_field="instr_id", scorable=scorable
    )
    base.data_version = data_version
    return ReverieEpisodes(
        **{f.name: getattr(base, f.name) for f in fields(EpisodeTable) if f.init},
        object_ids=objects,
    )


#: The field that carries the predicted object: the official name, then VLN-DUET's spelling.
OBJECT_FIELDS = ("predObjId", "pred_objid")


@dataclass
class ObjectPredictions:
    """The predicted object of each predicted episode, aligned to ``Predictions.episodes``.

    Attributes:
        objects: the predicted object id per predicted episode (None: none was given).
        available: False when no record gives an object (a navigation-only file).
        warnings: non-fatal remarks (a non-official field spelling, null objects).
    """

    objects: list[Any]
    available: bool
    warnings: list[str] = field(default_factory=list)


def _peek_keys(given: ReadInput) -> dict[str, Any] | None:
    """The first record that does not look like a summary (the reader skips or refuses those),
    else the first record; records after it are not decoded."""
    if given.text is None:
        records: Iterator[Any] = iter(given.value)
    else:
        chunks = iter_chunks(
            given.text, given.source, chunk=1, expected="a JSON list of predictions"
        )
        records = (rec for chunk in chunks for rec in chunk)
    first = next(records, None)
    if looks_like_summary(first, "instr_id"):
        first = next((r for r in records if not looks_like_summary(r, "instr_id")), first)
    return first if isinstance(first, dict) else None


def _closest(name: str, keys: list[str]) -> str | None:
    low = name.lower().replace("_", "")
    for k in keys:
        kl = k.lower().replace("_", "")
        if kl and (kl in low or low in kl):
            return k
    close = difflib.get_close_matches(name, keys, n=1, cutoff=0.5)
    return close[0] if close else None


def check_prediction_keys(
    predictions: PredictionsInput | ReadInput, official: str = "predObjId"
) -> None:
    """One clear error when a predictions file's field names are wrong.

    Looks at the first record (past records that look like the file's own summary, which the
    reader skips or refuses): the id must be ``instr_id``, the trajectory ``trajectory`` (or
    ``path``/``pred_path``), and a field that looks like a misspelt ``predObjId`` is named.

    Args:
        predictions: the file, its bytes or its records (or them read by
            :func:`~vlneval.tasks.common.inputs.read_input`).
        official: the profile's field name of the predicted object.

    Raises:
        InvalidInputError: the names the file uses, what was expected, and the closest match.
    """
    given = read_input(predictions)  # a ReadInput is taken as it is
    rec = _peek_keys(given)
    if rec is None:
        return
    keys = sorted(rec)
    found = f"its first record has {', '.join(map(repr, keys)) or 'no fields'}"
    problems = []
    named = {"instr_id": "instr_id" in rec, "trajectory": any(k in rec for k in TRAJECTORY_KEYS)}
    for name in (n for n, present in named.items() if not present):
        hint = _closest(name, [k for k in keys if name == "instr_id" or k != "instr_id"])
        problems.append(
            f"records need the field {name!r} ({found}"
            + (f"; did you mean to name {hint!r} {name!r}?" if hint else "")
            + ")"
        )
    if not any(k in rec for k in OBJECT_FIELDS):
        near = [
            k
            for k in keys
            if k.lower().replace("_", "") in ("predobjid", "predobjectid", "objid", "predobj")
        ]
        if near:
            problems.append(
                f"field {near[0]!r} is not a REVERIE field: the predicted object is "
                f"{official!r} (an int object id)"
            )
    if problems:
        raise InvalidInputError([Problem(given.source, p) for p in problems], source=given.source)


def read_predicted_objects(
    raw: dict[str, dict[int, Any]],
    episodes: EpisodeTable,
    order: Any,
    source: str,
    official: str = "predObjId",
    collect: ProblemCollector | None = None,
) -> ObjectPredictions:
    """Validates the predicted object of each predicted episode.

    Args:
        raw: ``Predictions.extra`` read with ``keep_fields=OBJECT_FIELDS``.
        episodes: the split's episodes; ``order``: ``Predictions.episodes``.
        source: the predictions file (for messages).
        official: the profile's field name (``predObjId``; VLN-DUET writes ``pred_objid``).
        collect: when given, problems are added to it instead of raised (with the rule
            checks', as :func:`~vlneval.tasks.common.predictions.parse_predictions`).

    Raises:
        InvalidInputError: some records give an object and others do not, or an object id is
            not an int or a string; every offending id is named.
    """
    other = next(f for f in OBJECT_FIELDS if f != official)
    given = {f: raw.get(f, {}) for f in OBJECT_FIELDS}
    order_list = [int(i) for i in order]
    has = [i in given[official] or i in given[other] for i in order_list]
    warnings: list[str] = []
    if not any(has):
        warnings.append(
            f"no record gives {official!r}: a navigation-only file; RGS and RGSPL are not available"
        )
        return ObjectPredictions([None] * len(order_list), False, warnings)
    pc = ProblemCollector(source) if collect is None else collect
    objects: list[Any] = []
    n_other = n_null = 0
    for i, ok in zip(order_list, has, strict=True):
        label = f'{episodes.id_field} "{episodes.ids[i]}"'
        if not ok:
            pc.add(
                f"missing field {official!r} ({sum(has)} of {len(has)} records give the predicted "
                "object; give it for every episode, null if the agent chose none)",
                episode=label,
            )
            objects.append(None)
            continue
        field_name = official if i in given[official] else other
        n_other += field_name == other
        value = given[field_name][i]
        if value is None:
            n_null += 1
        elif isinstance(value, bool) or not isinstance(value, (int, str)):
            pc.add(
                f"{field_name} must be an int object id (or a string), got {brief(value, 40)}",
                episode=label,
                field=field_name,
            )
        objects.append(value)
    if collect is None:
        pc.raise_if_any()
    if n_other:
        warnings.append(
            f"{n_other} record(s) give the object as {other!r}, not the official field name "
            f"{official!r}; read as the predicted object"
        )
    if n_null:
        warnings.append(
            f"{n_null} record(s) give {official!r} as null (no object chosen): scored as wrong"
        )
    return ObjectPredictions(objects, True, warnings)
