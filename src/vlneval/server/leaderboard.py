"""A phase's leaderboard: each team's best finished submission by the phase's primary metric.

Ties go to the earlier submission. A submission whose primary metric could not be computed is
not ranked. Each entry carries the protocol card's key fields (profile and version, episodes
scored, and what the team declared: observations, action space, map, privileged information,
inference budget, model), so that a reader sees at once which numbers are comparable.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from vlneval.server.models import FINISHED, Phase, Result, Submission, Team

__all__ = ["Entry", "leaderboard", "protocol_fields", "rank"]

KEY_FIELDS = ("observations", "action_space", "map", "privileged", "inference_budget", "model")


@dataclass(frozen=True)
class Entry:
    """One row of a leaderboard."""

    rank: int
    team: str
    team_id: int
    method: str
    url: str
    submitted_at: dt.datetime
    primary_value: float
    metrics: dict[str, Any]
    n_episodes: int
    protocol: dict[str, Any]


def protocol_fields(summary: dict[str, Any]) -> dict[str, Any]:
    """The protocol card's key fields of a stored summary.

    Example:
        >>> card = {"scoring": {"profile": "r2r", "profile_version": "1"}, "episodes": "2349",
        ...         "privileged": "none"}
        >>> protocol_fields({"protocol": card})["profile"], protocol_fields({"protocol": card})["privileged"]
        ('r2r v1', 'none')
    """
    card = summary.get("protocol") or {}
    scoring = card.get("scoring") or {}
    out: dict[str, Any] = {
        "profile": f"{scoring.get('profile', '?')} v{scoring.get('profile_version', '?')}",
        "episodes": card.get("episodes"),
    }
    for key in KEY_FIELDS:
        value = card.get(key)
        out[key] = (
            "not declared" if isinstance(value, str) and value.startswith("not declared") else value
        )
    return out


def rank(rows: list[tuple[int, float, dt.datetime, Any]], higher_is_better: bool) -> list[Any]:
    """The best row per team (key 0), ordered best first; ties go to the earlier time.

    Example:
        >>> import datetime as dt
        >>> t = dt.datetime(2026, 1, 1)
        >>> rows = [(1, 0.5, t, "a"), (1, 0.7, t, "b"), (2, 0.7, t - dt.timedelta(1), "c")]
        >>> rank(rows, True)
        ['c', 'b']
    """
    sign = -1.0 if higher_is_better else 1.0
    best: dict[int, tuple[float, dt.datetime, Any]] = {}
    for team, value, when, item in rows:
        key = (sign * value, when)
        if team not in best or key < best[team][:2]:
            best[team] = (key[0], key[1], item)
    return [item for _, _, item in sorted(best.values(), key=lambda r: (r[0], r[1]))]


def leaderboard(s: Session, phase: Phase, *, team_id: int | None = None) -> list[Entry]:
    """The ranked entries of ``phase`` (only ``team_id``'s entry when given)."""
    q = (
        select(Submission, Result, Team)
        .join(Result, Result.submission_id == Submission.id)
        .join(Team, Team.id == Submission.team_id)
        .where(Submission.phase_id == phase.id, Submission.status == FINISHED)
        .where(Result.primary_value.is_not(None))
    )
    rows = [
        (team.id, float(res.primary_value), sub.created_at, (sub, res, team))
        for sub, res, team in s.execute(q).all()
        if res.primary_value is not None
    ]
    out = []
    for i, (sub, res, team) in enumerate(rank(rows, phase.higher_is_better), start=1):
        if team_id is not None and team.id != team_id:
            continue
        out.append(
            Entry(
                i,
                team.name,
                team.id,
                sub.method,
                sub.url,
                sub.created_at,
                float(res.primary_value),
                dict(res.metrics),
                res.n_episodes,
                protocol_fields(res.summary),
            )
        )
    return out
