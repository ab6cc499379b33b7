"""An agent run's records in HANNA's prediction format (khanhptnk/hanna agents' output):
``{"instr_id", "agent_pose": [[viewpoint, heading, elevation], ...], "agent_ask": [0 | 1 per
step]}``; ``agent_ask`` from ``finish()``, else all 0 (an agent that never asks for help).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from vlneval.tasks.common.episodes import EpisodeTable

__all__ = ["hanna_records"]


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
