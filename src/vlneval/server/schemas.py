"""The JSON API's response models (they make its OpenAPI document) and their builders.

Nothing here can carry a phase's server-side paths or a per-episode value: the models list
every field a client sees, and the builders fill them from the database rows.
"""

from __future__ import annotations

import datetime as dt
from typing import Any, Literal, overload

from pydantic import BaseModel, Field

from vlneval.server.models import Phase, Submission
from vlneval.server.services.export import phase_metrics
from vlneval.server.services.leaderboard import (
    Entry,
    public_entry,
    public_intervals,
    public_summary,
    public_value,
    shown_episodes,
    shown_intervals,
)

__all__ = [
    "ErrorOut",
    "HealthOut",
    "TeamOut",
    "PhaseOut",
    "ChallengeOut",
    "EntryOut",
    "LeaderboardOut",
    "ResultOut",
    "BoardStateOut",
    "ModerationIn",
    "ModerationOut",
    "ChoiceIn",
    "ChoiceOut",
    "SubmissionOut",
    "QuotaOut",
    "aware",
    "phase_out",
    "submission_out",
    "result_out",
    "entry_out",
]

Metrics = dict[str, float | None]


@overload
def aware(t: dt.datetime) -> dt.datetime: ...
@overload
def aware(t: None) -> None: ...
def aware(t: dt.datetime | None) -> dt.datetime | None:
    """A stored naive UTC time as an aware one (rendered with ``Z``).

    Example:
        >>> aware(dt.datetime(2026, 1, 2)).isoformat()
        '2026-01-02T00:00:00+00:00'
    """
    return None if t is None else t.replace(tzinfo=dt.timezone.utc)


class ErrorOut(BaseModel):
    """An error: what went wrong, and the problems of a refused file, one per line."""

    detail: str
    problems: list[str] = Field(default_factory=list)


class HealthOut(BaseModel):
    """The server is up; how many submissions are in each status (organisers only)."""

    status: Literal["ok"]
    version: str
    database: str
    queue: dict[str, int] | None = None


class TeamOut(BaseModel):
    """The team a token belongs to."""

    name: str
    token_prefix: str
    created_at: dt.datetime


class PhaseOut(BaseModel):
    """A phase as participants see it (never where its hidden labels are)."""

    challenge: str
    slug: str
    title: str
    description: str
    task: str
    split: str
    profile: str
    n_episodes: int
    leaderboard: Literal["public", "private"]
    primary_metric: str
    higher_is_better: bool
    metrics: list[str]
    options: dict[str, Any]
    daily_quota: int | None
    total_quota: int | None
    opens_at: dt.datetime | None
    closes_at: dt.datetime | None
    open: bool


class ChallengeOut(BaseModel):
    """A challenge and its phases."""

    slug: str
    title: str
    description: str
    phases: list[PhaseOut]


class EntryOut(BaseModel):
    """One leaderboard row, numbers rounded as the pages show them. ``section``: ``ranked``,
    ``baseline`` (pinned by the organisers, no rank) or ``privileged`` (declares privileged
    information: ranked apart). No rank on a private leaderboard. ``intervals``: label ->
    [low, high], a 95 % bootstrap interval (1,000 resamples, seed 0) that resamples whole paths
    when episodes share one (:func:`vlneval.diagnostics.path_groups`), else the episodes."""

    section: Literal["ranked", "baseline", "privileged"]
    rank: int | None
    team: str
    method: str
    url: str
    description: str
    submitted_at: dt.datetime
    primary_value: float | None
    metrics: Metrics
    intervals: dict[str, list[float]]
    n_episodes: int
    flag: str
    privileged: bool
    protocol: dict[str, Any]


class LeaderboardOut(BaseModel):
    """A phase's leaderboard (a private one shows the caller's own entry only)."""

    challenge: str
    phase: str
    primary_metric: str
    higher_is_better: bool
    visibility: Literal["public", "private"]
    entries: list[EntryOut]


class ResultOut(BaseModel):
    """The scores of a finished submission (aggregates only, as ``vlneval score`` gives them,
    rounded as the leaderboard pages show them: the organisers keep the full values), their
    95 % bootstrap intervals and the sanitised summary; ``n_episodes`` counts the items the
    phase asks for, never how many of them have a label."""

    primary_metric: str
    primary_value: float | None
    metrics: Metrics
    intervals: dict[str, list[float]]
    n_episodes: int
    scorer_version: str
    summary: dict[str, Any]


class BoardStateOut(BaseModel):
    """How a submission stands on the leaderboard: hidden or withdrawn by its team; hidden or
    deleted by the organisers (with their reason); flagged (the reason is shown on the board);
    pinned as a baseline."""

    hidden: bool
    withdrawn: bool
    moderation: Literal["", "hidden", "deleted"]
    moderation_reason: str
    flag: str
    baseline: bool


class ModerationIn(BaseModel):
    """An organiser's action on a submission, as ``vlneval admin moderate`` takes it: ``hide`` or
    ``delete`` it (``show``, ``restore`` undo), ``flag`` it with a reason shown on the board
    (``unflag``), pin it as a ``baseline`` (``unbaseline``)."""

    action: Literal["hide", "show", "delete", "restore", "flag", "unflag", "baseline", "unbaseline"]
    reason: str = Field(default="", max_length=500)


class ModerationOut(BaseModel):
    """A submission's leaderboard state after an organiser's action."""

    uid: str
    state: str


class ChoiceIn(BaseModel):
    """A team's leaderboard entry in a phase: ``best`` (its best submission), ``none`` or a
    submission id."""

    entry: str = Field(max_length=32, pattern=r"^(best|none|[0-9a-f]{32})$")


class ChoiceOut(BaseModel):
    """The team's leaderboard entry choice in a phase."""

    challenge: str
    phase: str
    entry: str


class SubmissionOut(BaseModel):
    """A submission, its status and the messages about it."""

    id: str
    challenge: str
    phase: str
    team: str
    status: Literal["queued", "running", "finished", "failed"]
    error_kind: Literal["invalid", "internal"] | None
    messages: list[str]
    filename: str
    size_bytes: int
    sha256: str
    method: str
    description: str
    url: str
    declared: dict[str, Any]
    created_at: dt.datetime
    started_at: dt.datetime | None
    finished_at: dt.datetime | None
    result: ResultOut | None
    board: BoardStateOut
    page: str


class QuotaOut(BaseModel):
    """A team's quota use in a phase."""

    challenge: str
    phase: str
    daily_quota: int | None
    used_today: int
    total_quota: int | None
    used_total: int
    pending: int
    max_pending: int
    resets_at: dt.datetime


def phase_out(ph: Phase, now: dt.datetime) -> PhaseOut:
    """The public description of a phase."""
    is_open = (ph.opens_at is None or now >= ph.opens_at) and (
        ph.closes_at is None or now < ph.closes_at
    )
    return PhaseOut(
        challenge=ph.challenge.slug,
        slug=ph.slug,
        title=ph.title,
        description=ph.description,
        task=ph.task,
        split=ph.split,
        profile=ph.profile,
        n_episodes=ph.n_episodes,
        leaderboard="public" if ph.leaderboard_public else "private",
        primary_metric=ph.primary_metric,
        higher_is_better=ph.higher_is_better,
        metrics=phase_metrics(ph),
        options=dict(ph.options or {}),
        daily_quota=ph.daily_quota,
        total_quota=ph.total_quota,
        opens_at=aware(ph.opens_at),
        closes_at=aware(ph.closes_at),
        open=is_open,
    )


def result_out(sub: Submission) -> ResultOut | None:
    """A submission's result as its own team sees it (API, page and ``vlneval submit``): every
    number rounded as the pages round it (:func:`public_summary`)."""
    res = sub.result
    if res is None:
        return None
    primary = sub.phase.primary_metric
    summary = public_summary(dict(res.summary), sub.phase.n_episodes, sub.phase)
    return ResultOut(
        primary_metric=primary,
        primary_value=public_value(primary, res.primary_value),
        metrics={k: public_value(k, v) for k, v in res.metrics.items()},
        intervals=public_intervals(
            shown_intervals(
                res.intervals, sub.phase.n_episodes, res.n_episodes, res.summary.get("n_expected")
            )
        ),
        n_episodes=shown_episodes(
            sub.phase.n_episodes, res.n_episodes, res.summary.get("n_expected")
        ),
        scorer_version=res.scorer_version,
        summary=summary,
    )


def submission_out(sub: Submission) -> SubmissionOut:
    """A submission as its own team sees it."""
    result = result_out(sub)
    return SubmissionOut(
        id=sub.uid,
        challenge=sub.phase.challenge.slug,
        phase=sub.phase.slug,
        team=sub.team.name,
        status=sub.status,  # type: ignore[arg-type]
        error_kind=sub.error_kind,  # type: ignore[arg-type]
        messages=list(sub.messages or []),
        filename=sub.filename,
        size_bytes=sub.size_bytes,
        sha256=sub.sha256,
        method=sub.method,
        description=sub.description,
        url=sub.url,
        declared=dict(sub.declared or {}),
        created_at=aware(sub.created_at),  # type: ignore[arg-type]
        started_at=aware(sub.started_at),
        finished_at=aware(sub.finished_at),
        result=result,
        board=BoardStateOut(
            hidden=sub.team_hidden,
            withdrawn=sub.withdrawn_at is not None,
            moderation=sub.moderation,  # type: ignore[arg-type]
            moderation_reason=sub.moderation_reason,
            flag=sub.flag_reason,
            baseline=sub.baseline,
        ),
        page=f"/submissions/{sub.uid}",
    )


def entry_out(e: Entry, primary: str) -> EntryOut:
    """A leaderboard row, rounded."""
    row = public_entry(e, primary)
    row["submitted_at"] = aware(e.submitted_at)
    return EntryOut(**row)
