"""The server's tables: challenges, phases, teams, submissions and results.

A challenge has phases; a phase says what is scored (task, split, profile), where the hidden
episodes file lives on the server (never sent to anyone), how its leaderboard is shown and how
many submissions a team may make. A team authenticates with an API token stored only as its
SHA-256. A submission keeps the uploaded file's checksum and storage key, its status
(``queued`` -> ``running`` -> ``finished`` or ``failed``), the messages shown to the submitter and
the protocol fields the submitter declared; a finished one has exactly one result.

Times are naive UTC datetimes (SQLite has no time zones); :func:`utcnow` makes them.
The schema is created by the Alembic migrations in ``vlneval/server/migrations``; a test checks
that they match these classes.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from sqlalchemy import (
    JSON,
    Boolean,
    DateTime,
    Float,
    ForeignKey,
    Index,
    Integer,
    Select,
    String,
    Text,
    UniqueConstraint,
    false,
)
from sqlalchemy.orm import (
    DeclarativeBase,
    Mapped,
    joinedload,
    mapped_column,
    relationship,
    selectinload,
)

__all__ = [
    "Base",
    "with_row_details",
    "Challenge",
    "Phase",
    "Team",
    "Submission",
    "Result",
    "LoginSession",
    "TeamEntry",
    "utcnow",
    "STATUSES",
    "QUEUED",
    "RUNNING",
    "FINISHED",
    "FAILED",
]

QUEUED, RUNNING, FINISHED, FAILED = "queued", "running", "finished", "failed"
STATUSES = (QUEUED, RUNNING, FINISHED, FAILED)


def utcnow() -> dt.datetime:
    """The current UTC time as a naive datetime (microseconds kept).

    Example:
        >>> utcnow().tzinfo is None
        True
    """
    return dt.datetime.now(dt.timezone.utc).replace(tzinfo=None)


class Base(DeclarativeBase):
    """Declarative base of the server's tables."""

    type_annotation_map = {dict[str, Any]: JSON, list[str]: JSON}


class Challenge(Base):
    """A benchmark or challenge with one or more phases."""

    __tablename__ = "challenges"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    slug: Mapped[str] = mapped_column(String(64), unique=True)
    title: Mapped[str] = mapped_column(String(200))
    description: Mapped[str] = mapped_column(Text, default="")
    created_at: Mapped[dt.datetime] = mapped_column(DateTime, default=utcnow)

    phases: Mapped[list[Phase]] = relationship(back_populates="challenge", order_by="Phase.id")


class Phase(Base):
    """One scored split of a challenge (e.g. the R2R test server's ``test`` phase)."""

    __tablename__ = "phases"
    __table_args__ = (UniqueConstraint("challenge_id", "slug", name="uq_phases_challenge_slug"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    challenge_id: Mapped[int] = mapped_column(ForeignKey("challenges.id"), index=True)
    slug: Mapped[str] = mapped_column(String(64))
    title: Mapped[str] = mapped_column(String(200))
    description: Mapped[str] = mapped_column(Text, default="")
    task: Mapped[str] = mapped_column(String(64))
    split: Mapped[str] = mapped_column(String(64))
    profile: Mapped[str] = mapped_column(String(64))
    # Server-side paths of the hidden labels: never serialised into any response.
    episodes_file: Mapped[str | None] = mapped_column(Text, nullable=True)
    graphs_dir: Mapped[str | None] = mapped_column(Text, nullable=True)
    data_sha256: Mapped[str | None] = mapped_column(String(64), nullable=True)
    n_episodes: Mapped[int] = mapped_column(Integer, default=0)
    options: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    leaderboard_public: Mapped[bool] = mapped_column(Boolean, default=True)
    primary_metric: Mapped[str] = mapped_column(String(32))
    higher_is_better: Mapped[bool] = mapped_column(Boolean, default=True)
    daily_quota: Mapped[int | None] = mapped_column(Integer, nullable=True)
    total_quota: Mapped[int | None] = mapped_column(Integer, nullable=True)
    opens_at: Mapped[dt.datetime | None] = mapped_column(DateTime, nullable=True)
    closes_at: Mapped[dt.datetime | None] = mapped_column(DateTime, nullable=True)
    created_at: Mapped[dt.datetime] = mapped_column(DateTime, default=utcnow)
    # "best": a team that chose nothing is shown with its best entry; "chosen": only entries
    # that teams picked are shown.
    entry_rule: Mapped[str] = mapped_column(String(16), default="best", server_default="best")

    challenge: Mapped[Challenge] = relationship(back_populates="phases")


class Team(Base):
    """A submitting team; its API token is stored only as a SHA-256 digest."""

    __tablename__ = "teams"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    name: Mapped[str] = mapped_column(String(100), unique=True)
    token_sha256: Mapped[str] = mapped_column(String(64), unique=True)
    token_prefix: Mapped[str] = mapped_column(String(16))
    created_at: Mapped[dt.datetime] = mapped_column(DateTime, default=utcnow)


class Submission(Base):
    """One uploaded predictions file and its scoring status."""

    __tablename__ = "submissions"
    __table_args__ = (
        UniqueConstraint(
            "team_id", "phase_id", "client_key", name="uq_submissions_team_phase_client_key"
        ),
        Index("ix_submissions_status_lease", "status", "lease_expires_at"),
        Index("ix_submissions_phase_team_created", "phase_id", "team_id", "created_at"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    uid: Mapped[str] = mapped_column(String(32), unique=True)
    phase_id: Mapped[int] = mapped_column(ForeignKey("phases.id"))
    team_id: Mapped[int] = mapped_column(ForeignKey("teams.id"), index=True)
    client_key: Mapped[str | None] = mapped_column(String(64), nullable=True)
    filename: Mapped[str] = mapped_column(String(255))
    size_bytes: Mapped[int] = mapped_column(Integer)
    sha256: Mapped[str] = mapped_column(String(64))
    storage_key: Mapped[str] = mapped_column(String(255))
    status: Mapped[str] = mapped_column(String(16), default=QUEUED)
    error_kind: Mapped[str | None] = mapped_column(String(16), nullable=True)
    messages: Mapped[list[str]] = mapped_column(JSON, default=list)
    declared: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    method: Mapped[str] = mapped_column(String(100), default="")
    description: Mapped[str] = mapped_column(Text, default="")
    url: Mapped[str] = mapped_column(String(500), default="")
    created_at: Mapped[dt.datetime] = mapped_column(DateTime, default=utcnow)
    started_at: Mapped[dt.datetime | None] = mapped_column(DateTime, nullable=True)
    finished_at: Mapped[dt.datetime | None] = mapped_column(DateTime, nullable=True)
    claimed_by: Mapped[str | None] = mapped_column(String(100), nullable=True)
    claim_token: Mapped[str | None] = mapped_column(String(32), nullable=True)
    lease_expires_at: Mapped[dt.datetime | None] = mapped_column(DateTime, nullable=True)
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    # Leaderboard controls: the team's (hide, withdraw for good) and the organisers' ("hidden"
    # or "deleted" with a reason; a flag whose reason is shown beside the entry; a baseline is
    # shown and not ranked).
    team_hidden: Mapped[bool] = mapped_column(Boolean, default=False, server_default=false())
    withdrawn_at: Mapped[dt.datetime | None] = mapped_column(DateTime, nullable=True)
    moderation: Mapped[str] = mapped_column(String(16), default="", server_default="")
    moderation_reason: Mapped[str] = mapped_column(Text, default="", server_default="")
    flag_reason: Mapped[str] = mapped_column(Text, default="", server_default="")
    baseline: Mapped[bool] = mapped_column(Boolean, default=False, server_default=false())

    phase: Mapped[Phase] = relationship()
    team: Mapped[Team] = relationship()
    result: Mapped[Result | None] = relationship(back_populates="submission", uselist=False)


class Result(Base):
    """The sanitised scoring result of one finished submission (aggregate metrics only)."""

    __tablename__ = "results"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    submission_id: Mapped[int] = mapped_column(ForeignKey("submissions.id"), unique=True)
    metrics: Mapped[dict[str, Any]] = mapped_column(JSON)
    summary: Mapped[dict[str, Any]] = mapped_column(JSON)
    primary_value: Mapped[float | None] = mapped_column(Float, nullable=True)
    n_episodes: Mapped[int] = mapped_column(Integer)
    scorer_version: Mapped[str] = mapped_column(String(32))
    # label -> [low, high]: a 95 % bootstrap interval of each metric, computed from the
    # per-episode rows at scoring time (the rows themselves are never stored).
    intervals: Mapped[dict[str, Any] | None] = mapped_column(JSON, nullable=True)
    created_at: Mapped[dt.datetime] = mapped_column(DateTime, default=utcnow)

    submission: Mapped[Submission] = relationship(back_populates="result")


class LoginSession(Base):
    """A browser login: the cookie holds a random session id, stored here only as its SHA-256;
    logging out revokes it."""

    __tablename__ = "sessions"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    digest: Mapped[str] = mapped_column(String(64), unique=True)
    team_id: Mapped[int] = mapped_column(ForeignKey("teams.id"), index=True)
    created_at: Mapped[dt.datetime] = mapped_column(DateTime, default=utcnow)
    expires_at: Mapped[dt.datetime] = mapped_column(DateTime)
    revoked_at: Mapped[dt.datetime | None] = mapped_column(DateTime, nullable=True)
    last_seen_at: Mapped[dt.datetime | None] = mapped_column(DateTime, nullable=True)


class TeamEntry(Base):
    """A team's choice of its public entry in a phase: a submission, or none
    (``submission_id`` NULL). Without a row the phase's ``entry_rule`` decides."""

    __tablename__ = "team_entries"
    __table_args__ = (UniqueConstraint("phase_id", "team_id", name="uq_team_entries_phase_team"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    phase_id: Mapped[int] = mapped_column(ForeignKey("phases.id"))
    team_id: Mapped[int] = mapped_column(ForeignKey("teams.id"))
    submission_id: Mapped[int | None] = mapped_column(ForeignKey("submissions.id"), nullable=True)
    updated_at: Mapped[dt.datetime] = mapped_column(DateTime, default=utcnow)


def with_row_details(query: Select[Any]) -> Select[Any]:
    """``query`` (of submissions) loading each one's result, phase, challenge and team with it,
    instead of one query per row when a list of submissions is shown."""
    return query.options(
        selectinload(Submission.result),
        joinedload(Submission.phase).joinedload(Phase.challenge),
        joinedload(Submission.team),
    )
