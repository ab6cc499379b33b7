"""Who is asking the API: a team's API token from the ``Authorization`` header.

The API takes ``Authorization: Bearer <token>`` only; a cookie never authorises an API request,
so a cross-site request cannot submit through it. The HTML pages use login sessions instead
(:mod:`vlneval.server.core.sessions`): the token is never kept in a cookie.
"""

from __future__ import annotations

import hmac
from dataclasses import dataclass
from typing import Annotated

from fastapi import Depends, HTTPException, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from sqlalchemy import select

from vlneval.server.core.database import Database
from vlneval.server.models import Team
from vlneval.server.services.admin import token_digest

__all__ = [
    "TeamRef", "team_for_token", "current_team", "optional_team", "get_db", "is_admin",
    "require_admin",
]  # fmt: skip

MAX_TOKEN = 200

bearer = HTTPBearer(auto_error=False, description="a team's API token (vlneval admin create-team)")


@dataclass(frozen=True)
class TeamRef:
    """The authenticated team."""

    id: int
    name: str


def get_db(request: Request) -> Database:
    """The app's database."""
    return request.app.state.db  # type: ignore[no-any-return]


def team_for_token(db: Database, token: str | None) -> TeamRef | None:
    """The team holding ``token``, or None."""
    if not token or len(token) > MAX_TOKEN:
        return None
    with db.read() as s:
        team = s.scalar(select(Team).where(Team.token_sha256 == token_digest(token)))
        return TeamRef(team.id, team.name) if team is not None else None


def _unauthorised(detail: str) -> HTTPException:
    return HTTPException(401, detail, headers={"WWW-Authenticate": "Bearer"})


def optional_team(
    request: Request, cred: Annotated[HTTPAuthorizationCredentials | None, Depends(bearer)]
) -> TeamRef | None:
    """The team of the bearer token if one is sent (an unknown token is refused, not ignored)."""
    if cred is None:
        return None
    team = team_for_token(get_db(request), cred.credentials)
    if team is None:
        raise _unauthorised("the API token is not valid (ask the organisers for a new one)")
    return team


def current_team(team: Annotated[TeamRef | None, Depends(optional_team)]) -> TeamRef:
    """The team of the bearer token; 401 without one."""
    if team is None:
        raise _unauthorised("this needs your team's API token: Authorization: Bearer <token>")
    return team


def is_admin(request: Request, token: str | None) -> bool:
    """Whether ``token`` is the organisers' admin token (never, when the server has none).

    Example:
        >>> from types import SimpleNamespace as NS
        >>> req = NS(app=NS(state=NS(cfg=NS(admin_token="adm"))))
        >>> is_admin(req, "adm"), is_admin(req, "team"), is_admin(req, None)
        (True, False, False)
    """
    admin_token: str = request.app.state.cfg.admin_token
    if not admin_token or not token or len(token) > MAX_TOKEN:
        return False
    return hmac.compare_digest(token.encode(), admin_token.encode())


def require_admin(
    request: Request, cred: Annotated[HTTPAuthorizationCredentials | None, Depends(bearer)]
) -> None:
    """Lets only the organisers' admin token through: 401 without a token, 403 with another
    one (a team's token is not allowed here) and on a server that has no admin token (its
    organisers moderate with ``vlneval admin``)."""
    if not request.app.state.cfg.admin_token:
        raise HTTPException(
            403,
            "this server has no admin token (serve with $VLNEVAL_ADMIN_TOKEN set); organisers "
            "use `vlneval admin` instead",
        )
    if cred is None:
        raise _unauthorised("this needs the organisers' admin token: Authorization: Bearer <token>")
    if not is_admin(request, cred.credentials):
        raise HTTPException(403, "this needs the organisers' admin token, not another token")
