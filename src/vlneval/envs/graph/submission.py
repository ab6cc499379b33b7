"""Run records in the prediction format of tasks whose scorers do not read R2R records.

:func:`~vlneval.agents.rollout.run_agent` writes one R2R record per episode
(``{id_field: id, "trajectory": [[viewpoint, heading, elevation], ...], ...finish() fields}``).
Two graph tasks read other formats:

- SOON (``r2r_src/eval.py submit_score`` of ZhuFengdaaa/SOON): one record per instruction,
  ``{"instr_id", "trajectory": [{"path", "obj_heading": [h], "obj_elevation": [e]}, ...]}``,
  one entry per start path; the angles are the agent's localisation of the object, from the
  ``obj_heading`` / ``obj_elevation`` fields its ``finish()`` returns, in the official normalised
  units (``heading / 2π``, ``(elevation + π) / 2π``); 0 when it gives none;
- HANNA (khanhptnk/hanna agents' output): ``{"instr_id", "agent_pose": [[viewpoint, heading,
  elevation], ...], "agent_ask": [0 | 1 per step]}``; ``agent_ask`` from ``finish()``, else all
  0 (an agent that never asks for help).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from vlneval.errors import VLNEvalError
from vlneval.tasks.common.episodes import EpisodeTable

__all__ = ["task_records", "soon_submission", "hanna_records", "FORMATS"]

SOON_ANGLES = ("obj_heading", "obj_elevation")


def _angle(rec: Mapping[str, Any], key: str, eid: str) -> float:
    value = rec.get(key, 0.0)
    if isinstance(value, list) and len(value) == 1:
        value = value[0]
    ok = isinstance(value, (int, float)) and not isinstance(value, bool)
    if not ok or not math.isfinite(value):
        raise VLNEvalError(
            f"episode {eid}: finish() gave {key}={value!r}; expected a finite number "
            "(normalised: heading / 2π, (elevation + π) / 2π)"
        )
    return float(value)


def soon_submission(
    episodes: EpisodeTable, records: Sequence[Mapping[str, Any]]
) -> tuple[list[dict[str, Any]], str]:
    """SOON submission records from per-episode run records, instructions in run order.

    Example:
        >>> from types import SimpleNamespace
        >>> eps = SimpleNamespace(id_field="episode_id", index={"7#0": 0, "7#1": 1},
        ...                       instr_ids=["7", "7"])
        >>> recs = [{"episode_id": "7#0", "trajectory": [["a", 0.0, 0.0]], "obj_heading": 0.5},
        ...         {"episode_id": "7#1", "trajectory": [["b", 0.0, 0.0]]}]
        >>> out, _ = soon_submission(eps, recs)  # type: ignore[arg-type]
        >>> out[0]["instr_id"], [e["obj_heading"] for e in out[0]["trajectory"]]
        ('7', [[0.5], [0.0]])
    """
    instr_ids: list[str] = getattr(episodes, "instr_ids")  # noqa: B009 (SoonEpisodes)
    groups: dict[str, list[dict[str, Any]]] = {}
    for rec in records:
        eid = rec[episodes.id_field]
        entry = {k: v for k, v in rec.items() if k not in (episodes.id_field, "trajectory")}
        entry.update({"path": rec["trajectory"]})
        for key in SOON_ANGLES:
            entry[key] = [_angle(rec, key, eid)]
        groups.setdefault(instr_ids[episodes.index[eid]], []).append(entry)
    note = (
        "SOON submission format (one record per instruction, one entry per start); obj_heading "
        "and obj_elevation from the agent's finish(), normalised units, 0 when not given"
    )
    return [{"instr_id": iid, "trajectory": entries} for iid, entries in groups.items()], note


def hanna_records(
    episodes: EpisodeTable, records: Sequence[Mapping[str, Any]]
) -> tuple[list[dict[str, Any]], str]:
    """HANNA prediction records (``agent_pose``, ``agent_ask``).

    Example:
        >>> recs = [{"instr_id": "3_0", "trajectory": [["a", 0.0, 0.0], ["b", 0.5, 0.0]]}]
        >>> hanna_records(None, recs)[0]  # type: ignore[arg-type]
        [{'instr_id': '3_0', 'agent_pose': [['a', 0.0, 0.0], ['b', 0.5, 0.0]], 'agent_ask': [0]}]
    """
    out = []
    asked = False
    for rec in records:
        rest = {k: v for k, v in rec.items() if k != "trajectory"}
        asks = rest.pop("agent_ask", None)
        asked = asked or asks is not None
        steps = len(rec["trajectory"]) - 1
        out.append({**rest, "agent_pose": rec["trajectory"], "agent_ask": asks or [0] * steps})
    note = "HANNA format (agent_pose); agent_ask " + (
        "from the agent's finish()" if asked else "all 0: the agent never asks for help"
    )
    return out, note


FORMATS: dict[
    str, Callable[[EpisodeTable, Sequence[Mapping[str, Any]]], tuple[list[dict[str, Any]], str]]
] = {"soon": soon_submission, "hanna": hanna_records}


def task_records(
    task: str, episodes: EpisodeTable, records: Sequence[Mapping[str, Any]]
) -> tuple[list[dict[str, Any]], str | None]:
    """``records`` in ``task``'s prediction format, and a note for the protocol card (None when
    the task reads R2R records as they are).

    Example:
        >>> task_records("r2r", None, [{"instr_id": "1_0", "trajectory": []}])  # type: ignore[arg-type]
        ([{'instr_id': '1_0', 'trajectory': []}], None)
    """
    convert = FORMATS.get(task)
    if convert is None:
        return [dict(r) for r in records], None
    return convert(episodes, records)
