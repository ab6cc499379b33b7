"""The forms of a logged-in team: the upload form and the leaderboard controls.

Each form needs a live session, an allowed ``Origin`` (or none) and the session's CSRF token;
anything else is refused (403) before the form does anything. An upload goes through exactly
the API's path (:func:`vlneval.server.services.submissions.accept`: the same checks, messages, quotas,
limits and rate limit), then to the submission's page.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, File, Form, Request, UploadFile
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from starlette.exceptions import HTTPException as StarletteHTTPException

from vlneval.server.api.routes import phase_or_404
from vlneval.server.core.auth import get_db
from vlneval.server.core.ratelimit import rate_limit
from vlneval.server.core.sessions import SessionRef, csrf_ok
from vlneval.server.models import utcnow
from vlneval.server.pages.views import page, render_error, same_origin, server_url, session_of
from vlneval.server.schemas import PhaseOut, phase_out
from vlneval.server.services.entries import choose_entry, team_action
from vlneval.server.services.submissions import Refused, Upload, accept

__all__ = ["router"]

router = APIRouter(include_in_schema=False)
ENTRY_ACTIONS = ("best", "none", "pick", "hide", "show", "withdraw")


def _phase(request: Request, challenge: str, phase: str) -> tuple[int, PhaseOut]:
    with get_db(request).read() as s:
        ph = phase_or_404(s, challenge[:64], phase[:64])
        return ph.id, phase_out(ph, utcnow())


def _checked(request: Request, csrf: str) -> SessionRef | Response:
    """The session, or the page refusing the form."""
    sess = session_of(request)
    if sess is None:
        return RedirectResponse("/login?next=" + request.url.path, status_code=303)
    if not same_origin(request):
        return render_error(request, 403, "a form posted from another site is refused")
    if not csrf_ok(sess, csrf):
        return render_error(request, 403, "this form is out of date or not ours; reload the page")
    return sess


def _form(
    request: Request,
    ph: PhaseOut,
    status: int = 200,
    error: str = "",
    problems: list[str] | None = None,
) -> Response:
    return page(
        request,
        "submit.html",
        status=status,
        phase=ph,
        error=error,
        problems=problems or [],
        server_url=server_url(request),
    )


@router.get("/c/{challenge}/{phase}/submit", response_class=HTMLResponse)
def upload_form(request: Request, challenge: str, phase: str) -> Response:
    """The upload form of a phase (logged-in teams)."""
    if session_of(request) is None:
        return RedirectResponse(f"/login?next={request.url.path}", status_code=303)
    try:
        _, ph = _phase(request, challenge, phase)
    except Refused as exc:
        return render_error(request, exc.status, exc.detail)
    return _form(request, ph)


@router.post("/c/{challenge}/{phase}/submissions", response_class=HTMLResponse)
def upload(
    request: Request,
    challenge: str,
    phase: str,
    file: Annotated[UploadFile, File()],
    csrf: Annotated[str, Form(max_length=100)] = "",
    protocol: Annotated[str, Form(max_length=16384)] = "",
    method: Annotated[str, Form(max_length=100)] = "",
    description: Annotated[str, Form(max_length=2000)] = "",
    url: Annotated[str, Form(max_length=500)] = "",
) -> Response:
    """Accepts an uploaded file as the API does; the submission's page, or the form again with
    what is wrong."""
    checked = _checked(request, csrf)
    if not isinstance(checked, SessionRef):
        return checked
    try:
        ph_id, ph = _phase(request, challenge, phase)
    except Refused as exc:
        return render_error(request, exc.status, exc.detail)
    app = request.app
    up = Upload(file.filename or "", file.file, protocol or None, method, description, url)
    try:
        rate_limit(request, "submit", f"team:{checked.team_id}")
        uid, _ = accept(app.state.db, app.state.store, app.state.cfg, ph_id, checked.team_id, up)
    except Refused as exc:
        return _form(request, ph, exc.status, exc.detail, exc.problems)
    except StarletteHTTPException as exc:
        return _form(request, ph, exc.status_code, str(exc.detail))
    return RedirectResponse(f"/submissions/{uid}", status_code=303)


@router.post("/c/{challenge}/{phase}/entry", response_class=HTMLResponse)
def entry_control(
    request: Request,
    challenge: str,
    phase: str,
    action: Annotated[str, Form(max_length=16)],
    csrf: Annotated[str, Form(max_length=100)] = "",
    submission: Annotated[str, Form(max_length=32)] = "",
) -> Response:
    """One of the team's leaderboard controls: show its ``best`` entry, ``none``, ``pick`` a
    submission, or ``hide``, ``show``, ``withdraw`` one."""
    checked = _checked(request, csrf)
    if not isinstance(checked, SessionRef):
        return checked
    if action not in ENTRY_ACTIONS:
        return render_error(request, 422, f"action: one of {', '.join(ENTRY_ACTIONS)}")
    try:
        ph_id, ph = _phase(request, challenge, phase)
        db = get_db(request)
        if action in ("best", "none"):
            choose_entry(db, ph_id, checked.team_id, action)
        elif action == "pick":
            choose_entry(db, ph_id, checked.team_id, submission)
        else:
            team_action(db, checked.team_id, submission, action)
    except Refused as exc:
        return render_error(request, exc.status, exc.detail)
    return RedirectResponse(f"/c/{ph.challenge}/{ph.slug}#yours", status_code=303)
