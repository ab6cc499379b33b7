"""An agent run's records in SOON's submission format (``r2r_src/eval.py submit_score`` of
ZhuFengdaaa/SOON): one record per instruction,
``{"instr_id", "trajectory": [{"path", "obj_heading": [h], "obj_elevation": [e]}, ...]}``, one
entry per start path; the angles are the agent's localisation of the object, from the
``obj_heading`` / ``obj_elevation`` fields its ``finish()`` returns, in the official normalised
units (``heading / 2π``, ``(elevation + π) / 2π``); 0 when it gives none.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from vlneval.errors import VLNEvalError
from vlneval.tasks.common.episodes import EpisodeTable
from vlneval.tasks.common.record_checks import is_finite

__all__ = ["soon_submission", "SOON_ANGLES"]

SOON_ANGLES = ("obj_heading", "obj_elevation")


def _angle(rec: Mapping[str, Any], key: str, eid: str) -> float:
    value = rec.get(key, 0.0)
    if isinstance(value, list) and len(value) == 1:
        value = value[0]
    if not is_finite(value):
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
