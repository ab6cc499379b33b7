"""Server-rendered HTML pages (Jinja2): challenges, leaderboards, a team's submissions.

The pages use no JavaScript; a submission that is still being scored refreshes itself. A team
logs in by pasting its token into a form, which opens a session (:mod:`vlneval.server.core.sessions`):
the cookie holds the session's random id, never the token. A form posted from a host that is
not allowed is refused, and every form posted with a session carries its CSRF token. The
upload form and the leaderboard controls are in :mod:`vlneval.server.pages.forms`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

from fastapi import APIRouter, Form, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from fastapi.templating import Jinja2Templates
from sqlalchemy import func, select

from vlneval.reports.terminal import format_value, shown_unit
from vlneval.server.core.auth import TeamRef, get_db, team_for_token
from vlneval.server.core.ratelimit import rate_limit
from vlneval.server.core.sessions import (
    SESSION_COOKIE,
    SessionRef,
    cookie_secure,
    csrf_ok,
    find_session,
    open_session,
    origin_allowed,
    revoke_session,
)
from vlneval.server.models import (
    FAILED,
    FINISHED,
    Challenge,
    Phase,
    Submission,
    utcnow,
    with_row_details,
)
from vlneval.server.schemas import phase_out, result_out
from vlneval.server.services.admin import NotFoundError, find_phase
from vlneval.server.services.entries import own_submissions, state_of
from vlneval.server.services.export import phase_metrics
from vlneval.server.services.leaderboard import (
    BASELINE,
    PRIVILEGED,
    headline_metrics,
    leaderboard,
    public_value,
)

__all__ = ["router", "templates", "render_error", "session_of", "same_origin", "page", "server_url"]

HERE = Path(__file__).resolve().parent
templates = Jinja2Templates(directory=str(HERE / "templates"))
router = APIRouter(include_in_schema=False)


def _fmt(label: str, value: Any) -> str:
    if isinstance(value, (int, float)) or value is None:
        return format_value(label, public_value(label, value))
    return str(value)


templates.env.filters["metric"] = lambda value, label: _fmt(label, value)
templates.env.filters["ci"] = lambda pair, label: (
    f"{_fmt(label, pair[0])}–{_fmt(label, pair[1])}" if pair else ""
)
templates.env.filters["unit"] = shown_unit  # the metric table's: %, m, hops, px, count
templates.env.filters["when"] = lambda t: "" if t is None else t.strftime("%Y-%m-%d %H:%M UTC")


def session_of(request: Request) -> SessionRef | None:
    """The request's live login session (looked up once per request)."""
    if not hasattr(request.state, "session"):
        request.state.session = find_session(
            get_db(request), request.cookies.get(SESSION_COOKIE), request.app.state.cfg
        )
    return request.state.session  # type: ignore[no-any-return]


def _team(request: Request) -> TeamRef | None:
    sess = session_of(request)
    return TeamRef(sess.team_id, sess.team_name) if sess is not None else None


def page(request: Request, name: str, status: int = 200, **context: Any) -> Response:
    """A page rendered with the logged-in team and its CSRF token."""
    sess = session_of(request)
    context.setdefault("team", _team(request))
    context.setdefault("csrf", sess.csrf if sess is not None else "")
    return templates.TemplateResponse(request, name, context, status_code=status)


def server_url(request: Request) -> str:
    """The server's address for the "Submit with" hint: ``public_url``, else the address the
    request came to when its host is allowed, else the first allowed host."""
    cfg = request.app.state.cfg
    if cfg.public_url:
        return str(cfg.public_url)
    base = f"{request.url.scheme}://{request.url.netloc}"
    if origin_allowed(cfg, base) or not cfg.allowed_hosts:
        return base
    return f"{request.url.scheme}://{cfg.allowed_hosts[0]}"


def render_error(request: Request, status: int, message: str) -> Response:
    """An error page."""
    return templates.TemplateResponse(
        request,
        "error.html",
        {"status": status, "message": message, "team": None, "csrf": ""},
        status_code=status,
    )


@router.get("/", response_class=HTMLResponse)
def index(request: Request) -> Response:
    """The challenges and their phases."""
    now = utcnow()
    with get_db(request).read() as s:
        rows = s.scalars(select(Challenge).order_by(Challenge.id)).all()
        items = [(c, [phase_out(p, now) for p in c.phases]) for c in rows]
        return page(request, "index.html", challenges=items)


@router.get("/c/{challenge}", response_class=HTMLResponse)
def challenge_page(request: Request, challenge: str) -> Response:
    """A challenge: its description, and each phase's dates and submission counts."""
    now = utcnow()
    with get_db(request).read() as s:
        ch = s.scalar(select(Challenge).where(Challenge.slug == challenge[:64]))
        if ch is None:
            return render_error(request, 404, f"no challenge {challenge[:64]!r}")
        counts = {p.id: _counts(s, p) for p in ch.phases}
        phases = [(phase_out(p, now), counts[p.id]) for p in ch.phases]
        return page(request, "challenge.html", challenge=ch, phases=phases)


def _counts(s: Any, ph: Phase) -> dict[str, int]:
    """A phase's submissions: received (refused ones aside), scored, and teams."""

    def count(what: Any, *where: Any) -> int:
        return int(s.scalar(select(what).where(Submission.phase_id == ph.id, *where)) or 0)

    refused = (Submission.status == FAILED) & (Submission.error_kind == "invalid")
    return {
        "submissions": count(func.count(), ~refused),
        "scored": count(func.count(), Submission.status == FINISHED),
        "teams": count(func.count(func.distinct(Submission.team_id))),
    }


@router.get("/c/{challenge}/{phase}", response_class=HTMLResponse)
def phase_page(request: Request, challenge: str, phase: str) -> Response:
    """A phase, its leaderboard and, for a logged-in team, its entry controls."""
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
        choice, mine = own_submissions(s, ph, team.id) if team is not None else ("best", [])
        metrics = phase_metrics(ph)
        return page(
            request,
            "phase.html",
            phase=phase_out(ph, utcnow()),
            main=[e for e in entries if e.section != PRIVILEGED],
            privileged=[e for e in entries if e.section == PRIVILEGED],
            baseline=BASELINE,
            private=private,
            shown=headline_metrics(ph.primary_metric, metrics),
            metrics=metrics,
            challenge_title=ph.challenge.title,
            server_url=server_url(request),
            choice=choice,
            mine=mine,
            entry_rule=ph.entry_rule,
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
        return page(request, "submissions.html", team=team, submissions=rows)


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
        return page(
            request,
            "submission.html",
            team=team,
            sub=sub,
            phase=sub.phase,
            result=result_out(sub),
            state=state_of(sub),
        )


def _safe_next(target: str | None) -> str:
    if not target or not target.startswith("/") or target.startswith("//") or "\\" in target:
        return "/submissions"
    return target


def same_origin(request: Request) -> bool:
    """True unless the browser says the form came from another site, or its ``Origin`` is not
    an allowed host (the ``Host`` header is not trusted: DNS rebinding makes it the attacker's).
    A request with neither header (not a browser's form) passes; it carries no cookie of a
    victim."""
    site = request.headers.get("sec-fetch-site")
    if site is not None and site not in ("same-origin", "none"):
        return False
    origin = request.headers.get("origin")
    if origin is None:
        return True
    return origin != "null" and origin_allowed(request.app.state.cfg, origin)


@router.get("/login", response_class=HTMLResponse)
def login_form(request: Request, next: str = "/submissions") -> Response:
    """The login form."""
    return page(request, "login.html", next=_safe_next(next), error=None)


@router.post("/login", response_class=HTMLResponse)
def login(
    request: Request,
    token: Annotated[str, Form(max_length=200)],
    next: Annotated[str, Form(max_length=300)] = "/submissions",
) -> Response:
    """Checks a token and keeps it in the login cookie."""
    if not same_origin(request):
        return render_error(request, 403, "a login form posted from another site is refused")
    rate_limit(request, "login", request.client.host if request.client else "?")
    team = team_for_token(get_db(request), token.strip())
    if team is None:
        return page(
            request,
            "login.html",
            status=401,
            team=None,
            next=_safe_next(next),
            error="that token is not valid",
        )
    cfg = request.app.state.cfg
    old = request.cookies.get(SESSION_COOKIE)
    if old:
        revoke_session(get_db(request), old)  # a new login replaces the one in this browser
    sid = open_session(get_db(request), team.id, cfg)
    resp = RedirectResponse(_safe_next(next), status_code=303)
    resp.set_cookie(
        SESSION_COOKIE,
        sid,
        max_age=int(cfg.session_max_seconds),
        httponly=True,
        samesite="lax",
        secure=cookie_secure(cfg, request.url.scheme, request.url.netloc),
        path="/",
    )
    return resp


@router.post("/logout")
def logout(request: Request, csrf: Annotated[str, Form(max_length=100)] = "") -> Response:
    """Ends the session (revoked in the database) and forgets the cookie."""
    if not same_origin(request):
        return render_error(request, 403, "a logout form posted from another site is refused")
    sess = session_of(request)
    if sess is not None and not csrf_ok(sess, csrf):
        return render_error(request, 403, "this form is out of date; reload the page")
    revoke_session(get_db(request), request.cookies.get(SESSION_COOKIE))
    resp = RedirectResponse("/", status_code=303)
    resp.delete_cookie(SESSION_COOKIE, path="/")
    return resp


@router.get("/static/style.css")
def stylesheet() -> Response:
    """The pages' stylesheet."""
    css = (HERE / "templates" / "style.css").read_text(encoding="utf-8")
    return Response(css, media_type="text/css", headers={"Cache-Control": "public, max-age=3600"})
