"""R2R-format episode files (R2R, R4R and the demo task).

``R2R_<split>.json``: a list of ``{path_id, scan, path, heading, instructions, distance}``.
Each instruction ``k`` of a path is one episode with id ``"<path_id>_<k>"``.
"""

from __future__ import annotations

import math
import sys
from pathlib import Path
from typing import Annotated, Any

import msgspec
import numpy as np

from vlneval.data.episodes import EpisodeTable, PathColumn
from vlneval.errors import ProblemCollector
from vlneval.io import iter_chunks, read_bytes

__all__ = ["load_r2r", "R2RRecord", "check_route_record"]


def check_route_record(rec: Any, where: str, id_key: str, pc: ProblemCollector) -> bool:
    """The checks every route-following episode record gets (R2R, R4R, RxR): an object with an
    id, a scan, a non-empty path of viewpoint ids and a finite heading; problems go to ``pc``."""
    if not isinstance(rec, dict):
        pc.add("expected an object", field=where)
        return False
    ok = True
    for key, kind in ((id_key, (int, str)), ("scan", str), ("path", list)):
        if key not in rec:
            pc.add(f"missing field {key!r}", field=where)
            ok = False
        elif not isinstance(rec[key], kind) or isinstance(rec[key], bool):
            pc.add(f"field {key!r} has type {type(rec[key]).__name__}", field=where)
            ok = False
    if ok and (not rec["path"] or not all(isinstance(v, str) for v in rec["path"])):
        pc.add("path must be a non-empty list of viewpoint ids", field=f"{where}.path")
        ok = False
    heading = rec.get("heading", 0.0)
    if not isinstance(heading, (int, float)) or not math.isfinite(heading):
        pc.add(f"heading must be a finite number, got {heading!r}", field=f"{where}.heading")
        ok = False
    return ok


def _check_record(rec: Any, k: int, pc: ProblemCollector) -> bool:
    where = f"record {k}"
    ok = check_route_record(rec, where, "path_id", pc)
    if not isinstance(rec, dict):
        return False
    instructions = rec.get("instructions", [])
    if not isinstance(instructions, list) or not all(isinstance(s, str) for s in instructions):
        pc.add("instructions must be a list of strings", field=f"{where}.instructions")
        ok = False
    return ok


class R2RRecord(msgspec.Struct, gc=False):
    """One record of an R2R-format file, as msgspec decodes it (other fields are skipped)."""

    path_id: int | str
    scan: str
    path: Annotated[list[str], msgspec.Meta(min_length=1)]
    heading: float = 0.0
    instructions: list[str] = msgspec.field(default_factory=list)
    distance: Any = None


_DECODER = msgspec.json.Decoder(list[R2RRecord])


def _explained(raw: bytes, source: str, pc: ProblemCollector) -> list[R2RRecord]:
    """The records of a file msgspec rejected, each problem recorded in ``pc``."""
    records = []
    k = 0
    for chunk in iter_chunks(raw, source, expected="a JSON list of episodes"):
        for rec in chunk:
            if _check_record(rec, k, pc):
                records.append(
                    R2RRecord(
                        rec["path_id"], rec["scan"], rec["path"], float(rec.get("heading", 0.0)),
                        rec.get("instructions") or [], rec.get("distance"),
                    )
                )  # fmt: skip
            k += 1
    return records


def _table(
    records: list[R2RRecord],
    max_instructions: int | None,
    pc: ProblemCollector,
    *,
    task: str,
    split: str,
) -> EpisodeTable:
    """The episode table of ``records``: instruction ``k`` of a path is episode
    ``<path_id>_<k>``; the viewpoints are codes into one vocabulary (:class:`PathColumn`)."""
    vocab: dict[str, int] = {}
    codes: list[int] = []
    path_offsets = [0]
    ids: list[str] = []
    scans: list[str] = []
    rows: list[int] = []
    headings: list[float] = []
    texts: list[str] = []
    left_out: list[str] = []
    seen: set[str] = set()
    scorable = True
    for k, rec in enumerate(records):
        pid = str(rec.path_id)
        if pid in seen:
            pc.add(f"duplicate path_id {pid}", field=f"record {k}")
        seen.add(pid)
        codes.extend([vocab.setdefault(v, len(vocab)) for v in rec.path])
        path_offsets.append(len(codes))
        if len(rec.path) < 2 and rec.distance is None:
            scorable = False  # a test split: no goal to score against
        scan = sys.intern(rec.scan)
        for j, text in enumerate(rec.instructions or [""]):
            eid = f"{pid}_{j}"
            if max_instructions is not None and j >= max_instructions:
                left_out.append(eid)
                continue
            ids.append(eid)
            scans.append(scan)
            rows.append(k)
            headings.append(rec.heading)
            texts.append(text)
    pc.raise_if_any()
    paths = PathColumn(
        list(vocab),
        np.array(codes, dtype=np.int32),
        np.array(path_offsets, dtype=np.int64),
        np.array(rows, dtype=np.int64),
    )
    return EpisodeTable(
        task, split, pc.source, "instr_id", ids, scans, paths, paths.lasts(),
        np.array(headings, dtype=np.float64), texts, left_out, scorable,
    )  # fmt: skip


def load_r2r(
    path: str | Path,
    *,
    task: str = "r2r",
    split: str = "",
    max_instructions: int | None = None,
) -> EpisodeTable:
    """Loads an R2R-format episode file.

    The file is decoded once into :class:`R2RRecord` structs; a file msgspec rejects is read
    again by the explaining pass, which names every malformed record.

    Args:
        path: ``R2R_<split>.json`` or ``.json.gz`` (R4R files have the same format).
        task: the task name recorded on the table.
        split: the split name recorded on the table.
        max_instructions: score only instructions ``k < max_instructions`` of each path (the
            official R2R scorer hard-codes 3); the others are listed in ``left_out``.

    Raises:
        InvalidInputError: every malformed record, named by its position and field.

    Example:
        >>> import json, tempfile
        >>> p = Path(tempfile.mkdtemp()) / "R2R_val.json"
        >>> _ = p.write_text(json.dumps([{"path_id": 7, "scan": "s", "path": ["a", "b"],
        ...                               "instructions": ["go", "walk", "run", "stop"]}]))
        >>> t = load_r2r(p, max_instructions=3)
        >>> t.ids, t.paths[2], t.goals[0], t.left_out
        (['7_0', '7_1', '7_2'], ('a', 'b'), ('b',), ['7_3'])
    """
    source = str(path)
    raw = read_bytes(path)
    pc = ProblemCollector(source)
    try:
        records = _DECODER.decode(raw)
    except (msgspec.MsgspecError, RecursionError):
        records = _explained(raw, source, pc)
    return _table(records, max_instructions, pc, task=task, split=split)
