"""The JSON API (``/api/v1``); its OpenAPI document is at ``/api/v1/openapi.json``.

Reading challenges, phases and public leaderboards needs no token; everything about a team's own
submissions, and every request that changes anything, needs the team's bearer token. Another
team's submission answers 404, exactly like one that does not exist.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import replace
from typing import Annotated, Any, Literal

from fastapi import (
    APIRouter,
    Depends,
    File,
    Form,
    Header,
    Path,
    Query,
    Request,
    Response,
    UploadFile,
)
from fastapi.responses import JSONResponse
from sqlalchemy import select
from sqlalchemy.orm import Session

from vlneval import __version__
from vlneval.server.core.auth import TeamRef, current_team, get_db, is_admin, optional_team
from vlneval.server.core.ratelimit import rate_limit
from vlneval.server.models import Challenge, Phase, Submission, Team, utcnow, with_row_details
from vlneval.server.schemas import (
    ChallengeOut,
    ChoiceIn,
    ChoiceOut,
    EntryOut,
    ErrorOut,
    HealthOut,
    LeaderboardOut,
    PhaseOut,
    QuotaOut,
    SubmissionOut,
    TeamOut,
    aware,
    entry_out,
    phase_out,
    submission_out,
)
from vlneval.server.services.admin import NotFoundError, find_phase
from vlneval.server.services.entries import choose_entry, own_submission, team_action
from vlneval.server.services.export import export_rows, phase_metrics, to_csv
from vlneval.server.services.leaderboard import Entry, leaderboard
from vlneval.server.services.queue import queue_counts
from vlneval.server.services.submissions import Refused, Upload, accept, midnight, usage

__all__ = ["router"]

SLUG = r"^[a-z0-9][a-z0-9_-]{0,63}$"
UID = r"^[0-9a-f]{32}$"
Slug = Annotated[str, Path(pattern=SLUG, max_length=64)]
Uid = Annotated[str, Path(pattern=UID, min_length=32, max_length=32)]

ERRORS: dict[int | str, dict[str, Any]] = {
    code: {"model": ErrorOut} for code in (400, 401, 403, 404, 409, 413, 422, 429)
}


def _errors(*codes: int) -> dict[int | str, dict[str, Any]]:
    return {c: ERRORS[c] for c in codes}


router = APIRouter(prefix="/api/v1", tags=["api"])


def export_response(entries: list[Entry], ph: Phase, format: str) -> Response:
    """A leaderboard's export: a JSON list, or a CSV file to save."""
    rows = export_rows(entries, ph)
    if format == "json":
        return JSONResponse(rows)
    name = f"{ph.challenge.slug}-{ph.slug}.csv"
    return Response(
        to_csv(rows, phase_metrics(ph)),
        media_type="text/csv; charset=utf-8",
        headers={"Content-Disposition": f'attachment; filename="{name}"'},
    )


def phase_or_404(s: Session, challenge: str, phase: str) -> Phase:
    """The phase ``challenge/phase``; 404 (:class:`Refused`) naming what is missing."""
    try:
        return find_phase(s, challenge, phase)
    except NotFoundError as exc:
        raise Refused(404, str(exc)) from None


@router.get("/health", response_model=HealthOut, summary="Is the server up; queue sizes")
def health(request: Request) -> HealthOut:
    """The server's version and database kind; with the organisers' admin token, how many
    submissions are in each status."""
    db = get_db(request)
    sent = request.headers.get("authorization", "").removeprefix("Bearer ").strip()
    counts = None
    if is_admin(request, sent):
        with db.read() as s:
            counts = queue_counts(s)
    return HealthOut(
        status="ok",
        version=__version__,
        database="sqlite" if db.is_sqlite else "postgresql",
        queue=counts,
    )


@router.get("/me", response_model=TeamOut, responses=_errors(401), summary="The token's team")
def me(request: Request, team: Annotated[TeamRef, Depends(current_team)]) -> TeamOut:
    """The team the bearer token belongs to."""
    with get_db(request).read() as s:
        row = s.get(Team, team.id)
        if row is None:
            raise Refused(401, "the API token is not valid")
        return TeamOut(
            name=row.name, token_prefix=row.token_prefix, created_at=aware(row.created_at)
        )  # type: ignore[arg-type]


@router.get("/challenges", response_model=list[ChallengeOut], summary="All challenges")
def challenges(request: Request) -> list[ChallengeOut]:
    """Every challenge with its phases."""
    now = utcnow()
    with get_db(request).read() as s:
        rows = s.scalars(select(Challenge).order_by(Challenge.id)).all()
        return [_challenge_out(c, now) for c in rows]


def _challenge_out(c: Challenge, now: dt.datetime) -> ChallengeOut:
    return ChallengeOut(
        slug=c.slug,
        title=c.title,
        description=c.description,
        phases=[phase_out(p, now) for p in c.phases],
    )


@router.get(
    "/challenges/{challenge}",
    response_model=ChallengeOut,
    responses=_errors(404, 422),
    summary="One challenge",
)
def challenge(request: Request, challenge: Slug) -> ChallengeOut:
    """A challenge with its phases."""
    with get_db(request).read() as s:
        c = s.scalar(select(Challenge).where(Challenge.slug == challenge))
        if c is None:
            raise Refused(404, f"no challenge {challenge!r}")
        return _challenge_out(c, utcnow())


@router.get(
    "/challenges/{challenge}/phases/{phase}",
    response_model=PhaseOut,
    responses=_errors(404, 422),
    summary="One phase",
)
def phase(request: Request, challenge: Slug, phase: Slug) -> PhaseOut:
    """What a phase scores, its quotas and when it is open."""
    with get_db(request).read() as s:
        return phase_out(phase_or_404(s, challenge, phase), utcnow())


@router.get(
    "/challenges/{challenge}/phases/{phase}/leaderboard",
    response_model=LeaderboardOut | list[EntryOut],
    responses={
        200: {"content": {"text/csv": {"schema": {"type": "string"}}}},
        **_errors(401, 403, 404, 422),
    },
    summary="A phase's leaderboard (or its export: ?format=csv|json)",
)
def phase_leaderboard(
    request: Request,
    challenge: Slug,
    phase: Slug,
    team: Annotated[TeamRef | None, Depends(optional_team)],
    format: Annotated[Literal["csv", "json"] | None, Query()] = None,
) -> Any:
    """One entry per team (its pick, or its best), privileged entries in their own section and
    pinned baselines unranked; numbers rounded as the pages show them. A private leaderboard
    shows the caller's own entries only. ``format=json`` gives the export (a list of entries,
    every metric of the phase), ``format=csv`` the same as CSV."""
    with get_db(request).read() as s:
        ph = phase_or_404(s, challenge, phase)
        if not ph.leaderboard_public and team is None:
            raise Refused(
                403,
                f"the leaderboard of {challenge}/{phase} is private: a team sees its own entry "
                "with its token; organisers see all with `vlneval admin leaderboard` or the "
                f"admin API (/api/v1/admin/challenges/{challenge}/phases/{phase}/leaderboard)",
            )
        only = None if ph.leaderboard_public else team.id  # type: ignore[union-attr]
        entries = leaderboard(s, ph, team_id=only)
        if not ph.leaderboard_public:  # a rank would tell a team how many others beat it
            entries = [replace(e, rank=None) for e in entries]
        if format is not None:
            return export_response(entries, ph, format)
        return LeaderboardOut(
            challenge=challenge,
            phase=phase,
            primary_metric=ph.primary_metric,
            higher_is_better=ph.higher_is_better,
            visibility="public" if ph.leaderboard_public else "private",
            entries=[entry_out(e, ph.primary_metric) for e in entries],
        )


@router.put(
    "/challenges/{challenge}/phases/{phase}/entry",
    response_model=ChoiceOut,
    responses=_errors(401, 404, 409, 422),
    summary="Choose your team's leaderboard entry",
)
def choose(
    request: Request,
    challenge: Slug,
    phase: Slug,
    body: ChoiceIn,
    team: Annotated[TeamRef, Depends(current_team)],
) -> ChoiceOut:
    """``best`` (your best submission), ``none`` (no entry) or one of your finished submissions
    of the phase."""
    with get_db(request).read() as s:
        ph_id = phase_or_404(s, challenge, phase).id
    entry = choose_entry(get_db(request), ph_id, team.id, body.entry)
    return ChoiceOut(challenge=challenge, phase=phase, entry=entry)


@router.post(
    "/submissions/{uid}/{action}",
    response_model=SubmissionOut,
    responses=_errors(401, 404, 409, 422),
    summary="Hide, show or withdraw one of your submissions",
)
def submission_action(
    request: Request,
    uid: Uid,
    action: Annotated[Literal["hide", "show", "withdraw"], Path()],
    team: Annotated[TeamRef, Depends(current_team)],
) -> SubmissionOut:
    """``hide`` takes it off the leaderboard (``show`` puts it back); ``withdraw`` takes it off
    for good."""
    team_action(get_db(request), team.id, uid, action)
    return _own_submission(request, team, uid)


@router.get(
    "/challenges/{challenge}/phases/{phase}/quota",
    response_model=QuotaOut,
    responses=_errors(401, 404, 422),
    summary="Your team's quota use",
)
def quota(
    request: Request, challenge: Slug, phase: Slug, team: Annotated[TeamRef, Depends(current_team)]
) -> QuotaOut:
    """How many submissions your team has made today and in total, and how many wait."""
    now = utcnow()
    with get_db(request).read() as s:
        ph = phase_or_404(s, challenge, phase)
        used = usage(s, ph.id, team.id, now)
        return QuotaOut(
            challenge=challenge,
            phase=phase,
            daily_quota=ph.daily_quota,
            used_today=used.today,
            total_quota=ph.total_quota,
            used_total=used.total,
            pending=used.pending,
            max_pending=request.app.state.cfg.max_pending_per_team,
            resets_at=aware(midnight(now, 1)),  # type: ignore[arg-type]
        )


@router.post(
    "/challenges/{challenge}/phases/{phase}/submissions",
    response_model=SubmissionOut,
    status_code=202,
    responses={200: {"model": SubmissionOut}, **_errors(400, 401, 403, 404, 409, 413, 422, 429)},
    summary="Submit a predictions file",
)
def submit(
    request: Request,
    response: Response,
    challenge: Slug,
    phase: Slug,
    team: Annotated[TeamRef, Depends(current_team)],
    file: Annotated[UploadFile, File(description="the predictions file (.json or .json.gz)")],
    protocol: Annotated[str | None, Form(description="JSON object of protocol-card fields")] = None,
    method: Annotated[str, Form(max_length=100)] = "",
    description: Annotated[str, Form(max_length=2000)] = "",
    url: Annotated[str, Form(max_length=500)] = "",
    idempotency_key: Annotated[str | None, Header(alias="Idempotency-Key", max_length=64)] = None,
) -> SubmissionOut:
    """Queues a predictions file for scoring (202); a retry with the same Idempotency-Key
    returns the first submission (200)."""
    app = request.app
    rate_limit(request, "submit", f"team:{team.id}")
    with get_db(request).read() as s:
        ph_id = phase_or_404(s, challenge, phase).id
    up = Upload(file.filename or "", file.file, protocol, method, description, url, idempotency_key)
    uid, created = accept(app.state.db, app.state.store, app.state.cfg, ph_id, team.id, up)
    if not created:
        response.status_code = 200
    return _own_submission(request, team, uid)


def _own_submission(request: Request, team: TeamRef, uid: str) -> SubmissionOut:
    with get_db(request).read() as s:
        return submission_out(own_submission(s, team.id, uid))


@router.get(
    "/submissions",
    response_model=list[SubmissionOut],
    responses=_errors(400, 401, 404, 422),
    summary="Your team's submissions",
)
def submissions(
    request: Request,
    team: Annotated[TeamRef, Depends(current_team)],
    challenge: Annotated[str | None, Query(pattern=SLUG, max_length=64)] = None,
    phase: Annotated[str | None, Query(pattern=SLUG, max_length=64)] = None,
    limit: Annotated[int, Query(ge=1, le=500)] = 100,
) -> list[SubmissionOut]:
    """Your team's submissions, newest first (optionally of one challenge or phase)."""
    with get_db(request).read() as s:
        q = with_row_details(select(Submission).where(Submission.team_id == team.id))
        if challenge is not None:
            q = (
                q.join(Phase, Phase.id == Submission.phase_id)
                .join(Challenge)
                .where(Challenge.slug == challenge)
            )
            if phase is not None:
                q = q.where(Phase.slug == phase)
        elif phase is not None:
            raise Refused(400, "give the challenge too when filtering by phase")
        rows = s.scalars(
            q.order_by(Submission.created_at.desc(), Submission.id.desc()).limit(limit)
        ).all()
        return [submission_out(r) for r in rows]


@router.get(
    "/submissions/{uid}",
    response_model=SubmissionOut,
    responses=_errors(401, 404, 422),
    summary="One of your team's submissions",
)
def submission(
    request: Request, uid: Uid, team: Annotated[TeamRef, Depends(current_team)]
) -> SubmissionOut:
    """Status, messages and (when finished) the scores of a submission of your team."""
    return _own_submission(request, team, uid)
