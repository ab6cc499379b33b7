"""RxR guide files (JSON lines, optionally gzipped).

Each row: ``{instruction_id, path_id, scan, path, heading, instruction, language, ...}``;
predictions are keyed by ``instruction_id``.
"""

from __future__ import annotations

from pathlib import Path

from vlneval.errors import ProblemCollector
from vlneval.io import read_bytes
from vlneval.tasks.common.episodes import EpisodeBuilder, EpisodeTable
from vlneval.tasks.common.jsonl import iter_jsonl
from vlneval.tasks.common.record_checks import UniqueIds
from vlneval.tasks.r2r.format import check_route_record

__all__ = ["load_rxr"]


def load_rxr(
    path: str | Path, *, task: str = "rxr", split: str = "", language: str | None = None
) -> EpisodeTable:
    """Loads an RxR guide file (``rxr_<split>_guide.jsonl[.gz]``).

    Args:
        path: the file.
        task, split: recorded on the table.
        language: keep only rows of this language (e.g. ``en-US``); all when None.
    """
    path = Path(path)
    source = str(path)
    pc = ProblemCollector(source)
    builder = EpisodeBuilder()
    unique = UniqueIds("instruction_id", pc, "line")
    int_ids = True
    for lineno, rec in iter_jsonl(read_bytes(path), pc):
        where = f"line {lineno}"
        if not check_route_record(rec, where, "instruction_id", pc):
            continue
        if language is not None and rec.get("language") != language:
            continue
        int_ids = int_ids and isinstance(rec["instruction_id"], int)
        iid = str(rec["instruction_id"])
        unique.first(iid, lineno)
        text = rec.get("instruction", "")
        builder.add(iid, rec["scan"], rec["path"], None, float(rec.get("heading", 0.0)), str(text))
    pc.raise_if_any()
    table = builder.build(task=task, split=split, source=source, id_field="instruction_id")
    table.int_ids = int_ids
    return table
