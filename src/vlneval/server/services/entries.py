"""Leaderboard controls: a team picks its entry, hides or withdraws submissions; an organiser
hides, deletes, flags or pins them as baselines.

A team's choice in a phase is ``best`` (its best submission, the phase's ``entry_rule``
permitting), ``none`` (no entry) or a submission id. Hiding is undone by showing; withdrawing is
for good. The organisers' actions carry a reason: a flag's reason is shown on the board, a
hidden or deleted entry's reason on the team's submission page. Nothing here deletes a row: a
deleted submission stays in the database (and in its team's list), off every board.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import delete, select
from sqlalchemy.orm import Session, selectinload

from vlneval.server.core.database import Database
from vlneval.server.models import FINISHED, Phase, Submission, TeamEntry, utcnow
from vlneval.server.services.submissions import Refused

__all__ = [
    "TEAM_ACTIONS",
    "ORGANISER_ACTIONS",
    "OwnSubmission",
    "choose_entry",
    "current_choice",
    "team_action",
    "moderate",
    "own_submission",
    "own_submissions",
    "state_of",
]

TEAM_ACTIONS = ("hide", "show", "withdraw")
ORGANISER_ACTIONS = (
    "hide", "show", "delete", "restore", "flag", "unflag", "baseline", "unbaseline",
)  # fmt: skip
MAX_REASON = 500


@dataclass(frozen=True)
class OwnSubmission:
    """One of a team's finished submissions in a phase, as its controls show it."""

    uid: str
    method: str
    created_at: object
    primary_value: float | None
    state: str  # "shown", "hidden", "withdrawn", "hidden by the organisers: ...", ...
    chosen: bool
    controllable: bool


def own_submission(s: Session, team_id: int, uid: str) -> Submission:
    """The team's submission ``uid``; 404 (as for one that does not exist) otherwise."""
    sub = s.scalar(select(Submission).where(Submission.uid == uid, Submission.team_id == team_id))
    if sub is None:
        raise Refused(404, f"your team has no submission {uid}")
    return sub


def current_choice(s: Session, phase_id: int, team_id: int) -> str:
    """``best``, ``none`` or the chosen submission's id."""
    row = s.scalar(
        select(TeamEntry).where(TeamEntry.phase_id == phase_id, TeamEntry.team_id == team_id)
    )
    if row is None:
        return "best"
    if row.submission_id is None:
        return "none"
    return str(s.scalar(select(Submission.uid).where(Submission.id == row.submission_id)))


def choose_entry(db: Database, phase_id: int, team_id: int, choice: str) -> str:
    """Sets the team's entry of the phase: ``best``, ``none`` or one of its finished, shown
    submissions of that phase. Returns the choice."""
    with db.write() as s:
        target: int | None = None
        if choice not in ("best", "none"):
            sub = own_submission(s, team_id, choice[:32])
            if sub.phase_id != phase_id:
                raise Refused(409, f"submission {sub.uid} belongs to another phase")
            if sub.status != FINISHED or sub.result is None or sub.result.primary_value is None:
                raise Refused(409, f"submission {sub.uid} has no score to show")
            if sub.withdrawn_at is not None or sub.moderation:
                raise Refused(409, f"submission {sub.uid} cannot be shown: {state_of(sub)}")
            sub.team_hidden = False
            target = sub.id
        s.execute(
            delete(TeamEntry).where(TeamEntry.phase_id == phase_id, TeamEntry.team_id == team_id)
        )
        if choice != "best":
            s.add(
                TeamEntry(
                    phase_id=phase_id, team_id=team_id, submission_id=target, updated_at=utcnow()
                )
            )
    return choice


def team_action(db: Database, team_id: int, uid: str, action: str) -> None:
    """``hide``, ``show`` or ``withdraw`` (for good) one of the team's submissions."""
    if action not in TEAM_ACTIONS:
        raise Refused(422, f"action: one of {', '.join(TEAM_ACTIONS)}")
    with db.write() as s:
        sub = own_submission(s, team_id, uid[:32])
        if sub.withdrawn_at is not None:
            raise Refused(409, f"submission {sub.uid} was withdrawn; that cannot be undone")
        if action == "withdraw":
            sub.withdrawn_at = utcnow()
        else:
            sub.team_hidden = action == "hide"


def _reason(reason: str, action: str) -> str:
    reason = " ".join(reason.split())
    if action in ("hide", "delete", "flag") and not reason:
        raise Refused(422, f"{action}: give a reason (it is shown to the team)")
    if len(reason) > MAX_REASON:
        raise Refused(422, f"reason: at most {MAX_REASON} characters")
    return reason


def moderate(db: Database, uid: str, action: str, reason: str = "") -> str:
    """An organiser's action on a submission; returns its state afterwards."""
    if action not in ORGANISER_ACTIONS:
        raise Refused(422, f"action: one of {', '.join(ORGANISER_ACTIONS)}")
    reason = _reason(reason, action)
    with db.write() as s:
        sub = s.scalar(select(Submission).where(Submission.uid == uid))
        if sub is None:
            raise Refused(404, f"no submission {uid!r}")
        if action in ("hide", "delete"):
            sub.moderation, sub.moderation_reason = (
                ("hidden" if action == "hide" else "deleted"),
                reason,
            )
        elif action in ("show", "restore"):
            sub.moderation, sub.moderation_reason = "", ""
        elif action in ("flag", "unflag"):
            sub.flag_reason = reason if action == "flag" else ""
        else:
            sub.baseline = action == "baseline"
        return state_of(sub)


def state_of(sub: Submission) -> str:
    if sub.moderation:
        return f"{sub.moderation} by the organisers: {sub.moderation_reason}"
    if sub.withdrawn_at is not None:
        return "withdrawn"
    parts = ["hidden" if sub.team_hidden else "shown"]
    if sub.baseline:
        parts.append("baseline")
    if sub.flag_reason:
        parts.append(f"flagged: {sub.flag_reason}")
    return ", ".join(parts)


def own_submissions(s: Session, phase: Phase, team_id: int) -> tuple[str, list[OwnSubmission]]:
    """The team's choice and its finished submissions of ``phase``, newest first."""
    choice = current_choice(s, phase.id, team_id)
    rows = s.scalars(
        select(Submission)
        .where(
            Submission.phase_id == phase.id,
            Submission.team_id == team_id,
            Submission.status == FINISHED,
        )
        .options(selectinload(Submission.result))
        .order_by(Submission.created_at.desc(), Submission.id.desc())
        .limit(100)
    ).all()
    out = [
        OwnSubmission(
            uid=sub.uid,
            method=sub.method,
            created_at=sub.created_at,
            primary_value=sub.result.primary_value if sub.result is not None else None,
            state=state_of(sub),
            chosen=choice == sub.uid,
            controllable=sub.withdrawn_at is None and not sub.moderation,
        )
        for sub in rows
    ]
    return choice, out
