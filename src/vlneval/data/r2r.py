"""R2R-format episode files (R2R, R4R and the demo task).

``R2R_<split>.json``: a list of ``{path_id, scan, path, heading, instructions, distance}``.
Each instruction ``k`` of a path is one episode with id ``"<path_id>_<k>"``.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from vlneval.data.episodes import EpisodeBuilder, EpisodeTable, PathColumn, TextColumn
from vlneval.data.intern import VIEWPOINT_CAPACITY, SpanInterner
from vlneval.data.jsonio import iter_chunks, read_bytes
from vlneval.data.scan import _offsets
from vlneval.errors import ProblemCollector

__all__ = ["load_r2r"]


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


@dataclass
class _Scanned:
    """The fields of every record of an episode file, merged over its blocks."""

    path_ids: list[str] = field(default_factory=list)
    scans: list[str] = field(default_factory=list)
    headings: list[np.ndarray] = field(default_factory=list)
    has_distance: list[np.ndarray] = field(default_factory=list)
    path_lengths: list[np.ndarray] = field(default_factory=list)
    codes: list[np.ndarray] = field(default_factory=list)
    vocab: SpanInterner = field(default_factory=lambda: SpanInterner(VIEWPOINT_CAPACITY))
    n_instructions: list[np.ndarray] = field(default_factory=list)
    blob: bytearray = field(default_factory=bytearray)
    literal_starts: list[np.ndarray] = field(default_factory=list)
    literal_ends: list[np.ndarray] = field(default_factory=list)
    on_scans: Callable[[list[str]], None] | None = None
    seen_scans: set[str] = field(default_factory=set)

    def add(self, block: memoryview) -> bool:
        """Scans one block of whole records; False when the file must go to another path."""
        from vlneval.data.scan import append_spans, scan_r2r_episodes

        se = scan_r2r_episodes(block, validated=True)  # array_blocks checked it
        if se is None:
            return False
        if len(se) == 0:
            return True
        self.path_ids += se.path_ids
        self.scans += se.scans
        if self.on_scans is not None and not self.seen_scans.issuperset(se.scans):
            new = set(se.scans) - self.seen_scans
            self.seen_scans |= new
            self.on_scans(sorted(new))
        self.headings.append(se.headings)
        self.has_distance.append(se.has_distance)
        self.path_lengths.append(np.diff(se.path_offsets))
        self.codes.append(self.vocab.add(se.buffer, se.vp_starts, se.vp_ends))
        self.n_instructions.append(np.diff(se.instruction_offsets))
        starts, ends = append_spans(
            self.blob, se.buffer, se.instruction_starts, se.instruction_ends, 44
        )
        self.literal_starts.append(starts)
        self.literal_ends.append(ends)
        return True


def _cat(parts: list[np.ndarray], dtype: Any) -> np.ndarray:
    return np.concatenate(parts) if parts else np.zeros(0, dtype)


def _scan_file(path: Path, on_scans: Callable[[list[str]], None] | None) -> _Scanned | None:
    """Every block of ``path`` through the compiled scanner; None to decline."""
    from vlneval.data.stream import Incomplete, array_blocks

    blocks = array_blocks(path)
    if blocks is None:
        return None
    merged = _Scanned(on_scans=on_scans)
    try:
        for block in blocks:
            if not merged.add(block):
                return None
    except Incomplete:
        return None
    return merged


def _scanned(
    path: Path,
    max_instructions: int | None,
    *,
    task: str,
    split: str,
    source: str,
    on_scans: Callable[[list[str]], None] | None = None,
) -> EpisodeTable | None:
    """The compiled field scanner's reading of a valid file; None sends it elsewhere."""
    m = _scan_file(path, on_scans)
    if m is None or not m.path_ids or len(set(m.path_ids)) != len(m.path_ids):
        return None
    plen = _cat(m.path_lengths, np.int64)
    if np.any(plen == 0):
        return None
    n_instr = _cat(m.n_instructions, np.int64)
    n_rows = np.maximum(n_instr, 1)  # a path without instructions is one episode, text ""
    kept = n_rows if max_instructions is None else np.minimum(n_rows, max_instructions)
    rec = np.repeat(np.arange(len(plen)), kept)
    k = np.arange(len(rec)) - _offsets(kept)[rec]
    pids = m.path_ids
    ids = [f"{pids[r]}_{j}" for r, j in zip(rec.tolist(), k.tolist(), strict=True)]
    left_out = [
        f"{pids[r]}_{j}"
        for r in np.flatnonzero(n_rows > kept).tolist()
        for j in range(int(kept[r]), int(n_rows[r]))
    ]
    rows = np.where(n_instr[rec] > 0, _offsets(n_instr)[rec] + k, -1)
    texts = TextColumn(
        m.blob, _cat(m.literal_starts, np.int64), _cat(m.literal_ends, np.int64), rows
    )
    try:
        vocab = m.vocab.texts()
    except UnicodeDecodeError:
        return None
    paths = PathColumn(vocab, _cat(m.codes, np.int32), _offsets(plen), rec)
    scans = m.scans
    table = EpisodeTable(
        task,
        split,
        source,
        "instr_id",
        ids,
        [scans[r] for r in rec.tolist()],
        paths,
        paths.lasts(),
        _cat(m.headings, np.float64)[rec],
        texts,
        scorable=not bool(np.any((plen < 2) & ~_cat(m.has_distance, np.bool_))),
    )
    table.left_out = left_out
    return table


def load_r2r(
    path: str | Path,
    *,
    task: str = "r2r",
    split: str = "",
    max_instructions: int | None = None,
    on_scans: Callable[[list[str]], None] | None = None,
) -> EpisodeTable:
    """Loads an R2R-format episode file.

    Args:
        path: ``R2R_<split>.json`` or ``.json.gz`` (R4R files have the same format).
        task: the task name recorded on the table.
        split: the split name recorded on the table.
        max_instructions: score only instructions ``k < max_instructions`` of each path (the
            official R2R scorer hard-codes 3); the others are listed in ``left_out``.
        on_scans: called with the scans met in each block of a large file, as soon as they
            are met (e.g. :meth:`vlneval.graph.store.GraphStore.prefetch`); a hint only.

    Raises:
        InvalidInputError: every malformed record, named by its position and field.
    """
    path = Path(path)
    source = str(path)
    scanned = _scanned(
        path, max_instructions, task=task, split=split, source=source, on_scans=on_scans
    )
    if scanned is not None:
        return scanned
    raw = read_bytes(path)
    pc = ProblemCollector(source)
    builder = EpisodeBuilder()
    left_out: list[str] = []
    chunks = iter_chunks(raw, source, expected="a JSON list of episodes")
    scorable = True
    k = 0
    seen: set[str] = set()
    for chunk in chunks:
        for rec in chunk:
            if _check_record(rec, k, pc):
                pid = str(rec["path_id"])
                if pid in seen:
                    pc.add(f"duplicate path_id {pid}", field=f"record {k}")
                seen.add(pid)
                if len(rec["path"]) < 2 and rec.get("distance") is None:
                    scorable = False
                for j, text in enumerate(rec.get("instructions") or [""]):
                    eid = f"{pid}_{j}"
                    if max_instructions is not None and j >= max_instructions:
                        left_out.append(eid)
                        continue
                    builder.add(
                        eid, rec["scan"], rec["path"], None, float(rec.get("heading", 0.0)), text
                    )
            k += 1
    pc.raise_if_any()
    table = builder.build(
        task=task, split=split, source=source, id_field="instr_id", scorable=scorable
    )
    table.left_out = left_out
    return table
