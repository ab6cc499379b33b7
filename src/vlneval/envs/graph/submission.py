"""Run records in the prediction format of tasks whose scorers do not read R2R records
(``Task.run_records``: SOON's submission records, HANNA's ``agent_pose``/``agent_ask``)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from vlneval.registry import load_entry_point
from vlneval.tasks import TASKS, get_task
from vlneval.tasks.common.episodes import EpisodeTable

__all__ = ["task_records"]


def task_records(
    task: str, episodes: EpisodeTable, records: Sequence[Mapping[str, Any]]
) -> tuple[list[dict[str, Any]], str | None]:
    """``records`` in ``task``'s prediction format, and a note for the protocol card (None when
    the task reads R2R records as they are).

    Example:
        >>> task_records("r2r", None, [{"instr_id": "1_0", "trajectory": []}])  # type: ignore[arg-type]
        ([{'instr_id': '1_0', 'trajectory': []}], None)
    """
    target = get_task(task).run_records if task in TASKS else ""
    if not target:
        return [dict(r) for r in records], None
    convert = load_entry_point(target)
    out: tuple[list[dict[str, Any]], str | None] = convert(episodes, records)
    return out
