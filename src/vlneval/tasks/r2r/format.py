"""R2R-format episode files (R2R, R4R and the demo task).

``R2R_<split>.json``: a list of ``{path_id, scan, path, heading, instructions, distance}``.
Each instruction ``k`` of a path is one episode with id ``"<path_id>_<k>"``.
"""

from __future__ import annotations

import sys
from array import array
from collections.abc import Sequence
from itertools import chain
from operator import attrgetter
from pathlib import Path
from typing import Annotated, Any

import msgspec
import numpy as np

from vlneval.errors import ProblemCollector
from vlneval.io import gc_paused, iter_chunks, read_bytes, typed_chunks
from vlneval.metrics._kernels import offsets_of
from vlneval.tasks.common.episodes import EpisodeTable, PathColumn
from vlneval.tasks.common.record_checks import UniqueIds, check_fields, check_heading

__all__ = ["load_r2r", "R2RRecord", "check_route_record"]


def check_route_record(rec: Any, where: str, id_key: str, pc: ProblemCollector) -> bool:
    """The checks every route-following episode record gets (R2R, R4R, RxR): an object with an
    id, a scan, a non-empty path of viewpoint ids and a finite heading; problems go to ``pc``."""
    if not isinstance(rec, dict):
        pc.add("expected an object", field=where)
        return False
    ok = check_fields(rec, ((id_key, (int, str)), ("scan", str), ("path", list)), where, pc)
    if ok and (not rec["path"] or not all(isinstance(v, str) for v in rec["path"])):
        pc.add("path must be a non-empty list of viewpoint ids", field=f"{where}.path")
        ok = False
    return check_heading(rec, where, pc) and ok


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
_SCAN, _HEADING = attrgetter("scan"), attrgetter("heading")


def _explained(raw: bytes, source: str, pc: ProblemCollector) -> tuple[list[R2RRecord], list[int]]:
    """The well-formed records of a file msgspec rejected and their positions in the file, each
    problem recorded in ``pc``."""
    records, positions = [], []
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
                positions.append(k)
            k += 1
    return records, positions


class _Vocab(dict[str, int]):
    """Viewpoint id -> code, a new code for each new id."""

    def __missing__(self, key: str) -> int:
        code = self[key] = len(self)
        return code


def _episode_ids(pids: list[str], kept: np.ndarray) -> list[str]:
    """``<path_id>_<k>`` for ``k < kept`` of each path id, in order (a string sum per episode).

    Example:
        >>> _episode_ids(["7", "9"], np.array([2, 1]))
        ['7_0', '7_1', '9_0']
    """
    first = np.repeat(offsets_of(kept)[:-1], kept)
    k = np.arange(len(first)) - first
    suffix = np.array([f"_{j}" for j in range(int(kept.max(initial=0)))], dtype=object)
    return (np.repeat(np.array(pids, dtype=object), kept) + suffix[k]).tolist()  # type: ignore[no-any-return]


class _Builder:
    """The episode table of records added a chunk at a time: instruction ``k`` of a path is
    episode ``<path_id>_<k>``; viewpoints are codes into one vocabulary (:class:`PathColumn`)."""

    def __init__(self, max_instructions: int | None, pc: ProblemCollector) -> None:
        self.max_instructions, self.pc = max_instructions, pc
        self.vocab = _Vocab()
        self.codes = array("i")
        self.path_offsets = array("q", [0])
        self.ids: list[str] = []
        self.scans: list[str] = []
        self.rows = array("q")
        self.headings = array("d")
        self.texts: list[str] = []
        self.left_out: list[str] = []
        self.unique = UniqueIds("path_id", self.pc)
        self.scorable = True

    def add(self, records: list[R2RRecord], positions: list[int] | None = None) -> None:
        """Appends the episodes of ``records`` (the file's next records, at ``positions`` in the
        file when some were left out), a column at a time."""
        first = len(self.path_offsets) - 1
        pids = [str(r.path_id) for r in records]
        self._unique(pids, positions or range(first, first + len(pids)))
        paths = [r.path for r in records]
        self.codes.extend(map(self.vocab.__getitem__, chain.from_iterable(paths)))
        lengths = np.fromiter(map(len, paths), np.int64, len(paths))
        self.path_offsets.frombytes((np.cumsum(lengths) + self.path_offsets[-1]).tobytes())
        if self.scorable and int(lengths.min(initial=2)) < 2:
            # a path of one viewpoint without a distance: a test split, no goal to score
            self.scorable = all(r.distance is not None for r in records if len(r.path) < 2)
        texts = [r.instructions or [""] for r in records]
        count = np.fromiter(map(len, texts), np.int64, len(texts))
        kept = count if self.max_instructions is None else np.minimum(count, self.max_instructions)
        kept_list = kept.tolist()
        self.ids += _episode_ids(pids, kept)
        scans = np.array(list(map(sys.intern, map(_SCAN, records))), dtype=object)
        self.scans += np.repeat(scans, kept).tolist()
        if np.array_equal(kept, count):
            self.texts += chain.from_iterable(texts)
        else:
            self.texts += [t for ts, c in zip(texts, kept_list, strict=True) for t in ts[:c]]
        self.rows.frombytes(np.repeat(np.arange(first, first + len(records)), kept).tobytes())
        heading = np.fromiter(map(_HEADING, records), np.float64, len(records))
        self.headings.frombytes(np.repeat(heading, kept).tobytes())
        for k in np.flatnonzero(count > kept).tolist():
            self.left_out += [f"{pids[k]}_{j}" for j in range(kept_list[k], int(count[k]))]

    def _unique(self, pids: list[str], positions: Sequence[int]) -> None:
        seen = self.unique.seen
        if len(set(pids)) == len(pids) and seen.keys().isdisjoint(pids):
            seen.update(zip(pids, positions, strict=True))
            return
        for k, pid in zip(positions, pids, strict=True):
            self.unique.first(pid, k)

    def build(self, *, task: str, split: str) -> EpisodeTable:
        """The finished table; every problem found is raised together."""
        self.pc.raise_if_any()
        paths = PathColumn(
            list(self.vocab),
            np.frombuffer(self.codes, dtype=np.int32) if self.codes else np.zeros(0, np.int32),
            np.frombuffer(self.path_offsets, dtype=np.int64),
            np.frombuffer(self.rows, dtype=np.int64) if self.rows else np.zeros(0, np.int64),
        )
        headings = np.frombuffer(self.headings, dtype=np.float64) if self.headings else np.zeros(0)
        return EpisodeTable(
            task, split, self.pc.source, "instr_id", self.ids, self.scans, paths, paths.lasts(),
            headings, self.texts, self.left_out, self.scorable,
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
    builder = _Builder(max_instructions, ProblemCollector(source))
    try:
        with gc_paused():
            for records in typed_chunks(raw, _DECODER):
                builder.add(records)
    except (msgspec.MsgspecError, RecursionError):  # the explaining pass names every problem
        builder = _Builder(max_instructions, ProblemCollector(source))
        builder.add(*_explained(raw, source, builder.pc))
    return builder.build(task=task, split=split)
