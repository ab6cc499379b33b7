"""The organisers' part of the JSON API (``/api/v1/admin``), behind the admin token.

What an organiser moving a challenge off EvalAI does from a browser or a script, without a shell
on the server: moderate a submission (hide, delete, flag, pin as a baseline: the same service as
``vlneval admin moderate``) and export a phase's whole leaderboard, private or public, exactly
as ``vlneval admin leaderboard --format json|csv`` prints it. The admin token is
``$VLNEVAL_ADMIN_TOKEN`` of ``vlneval serve``. A request without a token answers 401, one
with another token (a team's) 403; a server without an admin token answers 403 here, and its
organisers use ``vlneval admin``.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Depends, Query, Request

from vlneval.server.api.routes import ERRORS, Slug, Uid, _errors, export_response, phase_or_404
from vlneval.server.core.auth import get_db, require_admin
from vlneval.server.schemas import EntryOut, ModerationIn, ModerationOut
from vlneval.server.services.entries import moderate
from vlneval.server.services.leaderboard import leaderboard

__all__ = ["router"]

router = APIRouter(
    prefix="/api/v1/admin",
    tags=["organisers"],
    responses=ERRORS,
    dependencies=[Depends(require_admin)],
)


@router.post(
    "/submissions/{uid}/moderation",
    response_model=ModerationOut,
    responses=_errors(401, 403, 404, 422),
    summary="Hide, delete, flag or pin a submission (organisers)",
)
def moderation(request: Request, uid: Uid, body: ModerationIn) -> ModerationOut:
    """The action ``vlneval admin moderate`` takes; the submission's state afterwards."""
    state = moderate(get_db(request), uid, body.action, body.reason)
    return ModerationOut(uid=uid, state=state)


@router.get(
    "/challenges/{challenge}/phases/{phase}/leaderboard",
    response_model=list[EntryOut],
    responses={
        200: {"content": {"text/csv": {"schema": {"type": "string"}}}},
        **_errors(401, 403, 404, 422),
    },
    summary="A phase's whole leaderboard export, private or not (organisers)",
)
def export(
    request: Request,
    challenge: Slug,
    phase: Slug,
    format: Annotated[Literal["csv", "json"], Query()] = "json",
) -> Any:
    """Every entry, ranked as a public board ranks them: what ``vlneval admin leaderboard
    --format json`` (or ``csv``) prints."""
    with get_db(request).read() as s:
        ph = phase_or_404(s, challenge, phase)
        return export_response(leaderboard(s, ph), ph, format)
