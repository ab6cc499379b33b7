"""Server-rendered HTML pages (Jinja2): challenges, leaderboards, a team's submissions.

The pages use no JavaScript; a submission that is still being scored refreshes itself. A team
logs in by pasting its token into a form; the token is kept in an HttpOnly, SameSite=Strict
cookie, and a login or logout form posted from another origin is refused.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any
from urllib.parse import urlsplit

from fastapi import APIRouter, Form, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from fastapi.templating import Jinja2Templates
from sqlalchemy import select

from vlneval.server.admin import NotFoundError, find_phase
from vlneval.server.auth import COOKIE, TeamRef, get_db, team_for_token
from vlneval.server.leaderboard import leaderboard
from vlneval.server.models import Challenge, Submission, utcnow, with_row_details
from vlneval.server.schemas import phase_out

__all__ = ["router", "templates", "render_error"]

HERE = Path(__file__).resolve().parent
templates = Jinja2Templates(directory=str(HERE / "templates"))
router = APIRouter(include_in_schema=False)
MAX_AGE = 30 * 24 * 3600


def _fmt(label: str, value: Any) -> str:
    from vlneval.reports.terminal import format_value

    return (
        format_value(label, value)
        if isinstance(value, (int, float)) or value is None
        else str(value)
    )


def _unit(label: str) -> str:
    from vlneval.reports.terminal import shown_unit

    return shown_unit(label)  # the metric table's: %, m, hops, px, count


templates.env.filters["metric"] = lambda value, label: _fmt(label, value)
templates.env.filters["unit"] = _unit
templates.env.filters["when"] = lambda t: "" if t is None else t.strftime("%Y-%m-%d %H:%M UTC")


def _team(request: Request) -> TeamRef | None:
    return team_for_token(get_db(request), request.cookies.get(COOKIE))


def _page(request: Request, name: str, status: int = 200, **context: Any) -> Response:
    context.setdefault("team", _team(request))
    return templates.TemplateResponse(request, name, context, status_code=status)


def render_error(request: Request, status: int, message: str) -> Response:
    """An error page."""
    return templates.TemplateResponse(
        request,
        "error.html",
        {"status": status, "message": message, "team": None},
        status_code=status,
    )


@router.get("/", response_class=HTMLResponse)
def index(request: Request) -> Response:
    """The challenges and their phases."""
    now = utcnow()
    with get_db(request).read() as s:
        rows = s.scalars(select(Challenge).order_by(Challenge.id)).all()
        items = [(c, [phase_out(p, now) for p in c.phases]) for c in rows]
        return _page(request, "index.html", challenges=items)


@router.get("/c/{challenge}/{phase}", response_class=HTMLResponse)
def phase_page(request: Request, challenge: str, phase: str) -> Response:
    """A phase and its leaderboard."""
    team = _team(request)
    with get_db(request).read() as s:
        try:
            ph = find_phase(s, challenge[:64], phase[:64])
        except NotFoundError as exc:
            return render_error(request, 404, str(exc))
        private = not ph.leaderboard_public
        entries = (
            []
            if private and team is None
            else leaderboard(s, ph, team_id=team.id if private and team else None)
        )
        return _page(
            request,
            "phase.html",
            team=team,
            phase=phase_out(ph, utcnow()),
            entries=entries,
            private=private,
            challenge_title=ph.challenge.title,
        )


@router.get("/submissions", response_class=HTMLResponse)
def my_submissions(request: Request) -> Response:
    """The logged-in team's submissions."""
    team = _team(request)
    if team is None:
        return RedirectResponse("/login?next=/submissions", status_code=303)
    with get_db(request).read() as s:
        rows = s.scalars(
            with_row_details(select(Submission))
            .where(Submission.team_id == team.id)
            .order_by(Submission.created_at.desc(), Submission.id.desc())
            .limit(200)
        ).all()
        return _page(request, "submissions.html", team=team, submissions=rows)


@router.get("/submissions/{uid}", response_class=HTMLResponse)
def submission_page(request: Request, uid: str) -> Response:
    """A submission's status, messages and scores (its own team only)."""
    team = _team(request)
    if team is None:
        return RedirectResponse(f"/login?next=/submissions/{uid[:32]}", status_code=303)
    with get_db(request).read() as s:
        sub = s.scalar(
            select(Submission).where(Submission.uid == uid[:32], Submission.team_id == team.id)
        )
        if sub is None:
            return render_error(request, 404, "your team has no such submission")
        return _page(
            request, "submission.html", team=team, sub=sub, phase=sub.phase, result=sub.result
        )


def _safe_next(target: str | None) -> str:
    if not target or not target.startswith("/") or target.startswith("//") or "\\" in target:
        return "/submissions"
    return target


def _same_origin(request: Request) -> bool:
    site = request.headers.get("sec-fetch-site")
    if site is not None:
        return site in ("same-origin", "none")
    origin = request.headers.get("origin")
    if origin is None or origin == "null":
        return origin is None
    host = request.headers.get("host", "")
    return urlsplit(origin).netloc == host


@router.get("/login", response_class=HTMLResponse)
def login_form(request: Request, next: str = "/submissions") -> Response:
    """The login form."""
    return _page(request, "login.html", next=_safe_next(next), error=None)


@router.post("/login", response_class=HTMLResponse)
def login(
    request: Request,
    token: Annotated[str, Form(max_length=200)],
    next: Annotated[str, Form(max_length=300)] = "/submissions",
) -> Response:
    """Checks a token and keeps it in the login cookie."""
    from vlneval.server.app import rate_limit

    if not _same_origin(request):
        return render_error(request, 403, "a login form posted from another site is refused")
    rate_limit(request, "login", request.client.host if request.client else "?")
    team = team_for_token(get_db(request), token.strip())
    if team is None:
        return _page(
            request,
            "login.html",
            status=401,
            team=None,
            next=_safe_next(next),
            error="that token is not valid",
        )
    resp = RedirectResponse(_safe_next(next), status_code=303)
    resp.set_cookie(
        COOKIE,
        token.strip(),
        max_age=MAX_AGE,
        httponly=True,
        samesite="strict",
        secure=request.app.state.cfg.secure_cookies,
        path="/",
    )
    return resp


@router.post("/logout")
def logout(request: Request) -> Response:
    """Forgets the login cookie."""
    if not _same_origin(request):
        return render_error(request, 403, "a logout form posted from another site is refused")
    resp = RedirectResponse("/", status_code=303)
    resp.delete_cookie(COOKIE, path="/")
    return resp


@router.get("/static/style.css")
def stylesheet() -> Response:
    """The pages' stylesheet."""
    css = (HERE / "templates" / "style.css").read_text(encoding="utf-8")
    return Response(css, media_type="text/css", headers={"Cache-Control": "public, max-age=3600"})
