"""The submission queue in the database: claim, heartbeat, finish, release.

A worker claims a claimable submission: one that is ``queued``, or ``running`` with an expired
lease (its worker died); of those, the oldest of the team with the fewest submissions claimed
in the last five minutes, so that one team's queue does not starve the others. On PostgreSQL the candidate row is locked with
``SELECT ... FOR UPDATE SKIP LOCKED``, so concurrent workers never wait on each other nor take the
same row; on SQLite the claim is one conditional ``UPDATE ... WHERE id = (SELECT ...) AND
<claimable> RETURNING id``, atomic by itself (and inside a ``BEGIN IMMEDIATE`` transaction).
Each claim gets a fresh random token; heartbeats extend the lease and the final write succeeds
only while the token is still the row's, so a worker whose lease was taken over cannot record a
result, and the unique index on ``results.submission_id`` records one result at most.
"""

from __future__ import annotations

import datetime as dt
import secrets
from dataclasses import dataclass
from typing import Any

from sqlalchemy import and_, func, or_, select, update
from sqlalchemy.orm import Session, aliased

from vlneval.server.core.database import Database
from vlneval.server.models import (
    FAILED,
    FINISHED,
    QUEUED,
    RUNNING,
    Phase,
    Result,
    Submission,
    utcnow,
)
from vlneval.server.services.scoring import Outcome, PhaseSpec

__all__ = ["Claim", "claim", "heartbeat", "finish", "release", "fail_exhausted", "queue_counts"]


@dataclass(frozen=True)
class Claim:
    """A submission a worker holds, with what it needs to score it."""

    submission_id: int
    uid: str
    token: str
    attempts: int
    storage_key: str
    sha256: str
    filename: str
    declared: dict[str, Any]
    spec: PhaseSpec
    n_episodes: int = 0


def _claimable(now: dt.datetime) -> Any:
    return or_(
        Submission.status == QUEUED,
        and_(Submission.status == RUNNING, Submission.lease_expires_at < now),
    )


def fail_exhausted(s: Session, now: dt.datetime, max_attempts: int) -> int:
    """Fails the submissions whose lease expired after ``max_attempts`` claims."""
    res = s.execute(
        update(Submission)
        .where(
            Submission.status == RUNNING,
            Submission.lease_expires_at < now,
            Submission.attempts >= max_attempts,
        )
        .values(
            status=FAILED,
            error_kind="internal",
            finished_at=now,
            claim_token=None,
            lease_expires_at=None,
            messages=[
                f"scoring was interrupted {max_attempts} times (the worker stopped each time); "
                "it is not counted against your quota, and the organisers have been told"
            ],
        )
        .execution_options(synchronize_session=False)
    )
    return int(res.rowcount or 0)  # type: ignore[attr-defined]


RECENT = dt.timedelta(minutes=5)


def _fair_order(now: dt.datetime) -> tuple[Any, ...]:
    """Claim order: teams with fewer submissions claimed in the last few minutes first (so one
    team's queue cannot starve the others), then the oldest."""
    other = aliased(Submission)
    recent = (
        select(func.count(other.id))
        .where(other.team_id == Submission.team_id, other.started_at >= now - RECENT)
        .correlate(Submission)
        .scalar_subquery()
    )
    return (recent, Submission.created_at, Submission.id)


def _pick_postgres(s: Session, now: dt.datetime, max_attempts: int) -> Submission | None:
    return s.scalars(
        select(Submission)
        .where(_claimable(now), Submission.attempts < max_attempts)
        .order_by(*_fair_order(now))
        .limit(1)
        .with_for_update(skip_locked=True, of=Submission)
    ).first()


def _claim_sqlite(
    s: Session, values: dict[str, Any], now: dt.datetime, max_attempts: int
) -> int | None:
    oldest = (
        select(Submission.id)
        .where(_claimable(now), Submission.attempts < max_attempts)
        .order_by(*_fair_order(now))
        .limit(1)
        .scalar_subquery()
    )
    stmt = (
        update(Submission)
        .where(Submission.id == oldest, _claimable(now))
        .values(attempts=Submission.attempts + 1, **values)
        .returning(Submission.id)
        .execution_options(synchronize_session=False)
    )
    return s.execute(stmt).scalar_one_or_none()


def claim(db: Database, worker: str, *, lease_seconds: float, max_attempts: int) -> Claim | None:
    """Claims the oldest claimable submission for ``worker``, or returns None."""
    now = utcnow()
    token = secrets.token_hex(16)
    values = {
        "status": RUNNING,
        "claimed_by": worker[:100],
        "claim_token": token,
        "lease_expires_at": now + dt.timedelta(seconds=lease_seconds),
        "started_at": now,
    }
    with db.write() as s:
        fail_exhausted(s, now, max_attempts)
        if db.is_sqlite:
            sid = _claim_sqlite(s, values, now, max_attempts)
            if sid is None:
                return None
            sub = s.get(Submission, sid, populate_existing=True)
        else:
            sub = _pick_postgres(s, now, max_attempts)
            if sub is None:
                return None
            for k, v in values.items():
                setattr(sub, k, v)
            sub.attempts += 1
            s.flush()
        if sub is None:  # pragma: no cover - the row was just updated in this transaction
            return None
        return _claim_of(sub, token)


def _claim_of(sub: Submission, token: str) -> Claim:
    ph: Phase = sub.phase
    spec = PhaseSpec.of(ph, named=True)
    return Claim(
        sub.id,
        sub.uid,
        token,
        sub.attempts,
        sub.storage_key,
        sub.sha256,
        sub.filename,
        dict(sub.declared or {}),
        spec,
        int(ph.n_episodes or 0),
    )


def _mine(c: Claim) -> Any:
    return and_(
        Submission.id == c.submission_id,
        Submission.claim_token == c.token,
        Submission.status == RUNNING,
    )


def heartbeat(db: Database, c: Claim, *, lease_seconds: float) -> bool:
    """Extends the lease; False when the claim was lost (the lease expired and was taken)."""
    with db.write() as s:
        res = s.execute(
            update(Submission)
            .where(_mine(c))
            .values(lease_expires_at=utcnow() + dt.timedelta(seconds=lease_seconds))
            .execution_options(synchronize_session=False)
        )
        return bool(res.rowcount == 1)  # type: ignore[attr-defined]


def finish(db: Database, c: Claim, outcome: Outcome, *, scorer_version: str) -> bool:
    """Records the outcome; False (nothing written) when the claim was lost."""
    now = utcnow()
    with db.write() as s:
        res = s.execute(
            update(Submission)
            .where(_mine(c))
            .values(
                status=outcome.status,
                error_kind=outcome.error_kind,
                messages=outcome.messages,
                finished_at=now,
                lease_expires_at=None,
                claim_token=None,
            )
            .execution_options(synchronize_session=False)
        )
        if res.rowcount != 1:  # type: ignore[attr-defined]
            return False
        if outcome.status == FINISHED:
            s.add(
                Result(
                    submission_id=c.submission_id,
                    metrics=outcome.metrics or {},
                    summary=outcome.summary or {},
                    primary_value=outcome.primary_value,
                    n_episodes=outcome.n_episodes,
                    intervals=outcome.intervals,
                    scorer_version=scorer_version,
                    created_at=now,
                )
            )
        return True


def release(db: Database, c: Claim) -> bool:
    """Puts a claimed submission back in the queue (a worker stopping gracefully)."""
    with db.write() as s:
        res = s.execute(
            update(Submission)
            .where(_mine(c))
            .values(
                status=QUEUED,
                claimed_by=None,
                claim_token=None,
                lease_expires_at=None,
                started_at=None,
                attempts=func.max(Submission.attempts - 1, 0)
                if db.is_sqlite
                else func.greatest(Submission.attempts - 1, 0),
            )
            .execution_options(synchronize_session=False)
        )
        return bool(res.rowcount == 1)  # type: ignore[attr-defined]


def queue_counts(s: Session) -> dict[str, int]:
    """How many submissions are in each status."""
    rows = s.execute(select(Submission.status, func.count()).group_by(Submission.status)).all()
    counts = {k: 0 for k in (QUEUED, RUNNING, FINISHED, FAILED)}
    counts.update({status: int(n) for status, n in rows})
    return counts
