"""Browser logins: an opaque session id in the cookie, stored only as its SHA-256.

Logging in with a team's API token opens a session: a random id (256 bits) goes into the
``vlneval_session`` cookie (``HttpOnly``, ``SameSite=Lax``, ``Secure`` unless the server is
reached over plain HTTP on a loopback address), and the ``sessions`` table keeps its digest,
the team, when it began and when it ends. A session ends when unused for
``session_idle_seconds`` (12 h), ``session_max_seconds`` after it began (7 d), when the team
logs out (revoked) or when its token is rotated. The API token itself never reaches a cookie.

Every form posted with a session carries the session's CSRF token (an HMAC of the session id:
nothing more to store), and the ``Origin`` of a posted form must be an allowed host
(:func:`origin_allowed`): the ``Host`` header is never trusted for that.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import hmac
import ipaddress
import secrets
from dataclasses import dataclass
from urllib.parse import urlsplit

from sqlalchemy import select, update

from vlneval.server.core.config import ServerConfig
from vlneval.server.core.database import Database
from vlneval.server.models import LoginSession, Team, utcnow

__all__ = [
    "SESSION_COOKIE",
    "SessionRef",
    "open_session",
    "find_session",
    "revoke_session",
    "csrf_token",
    "csrf_ok",
    "is_loopback",
    "origin_allowed",
    "cookie_secure",
]

SESSION_COOKIE = "vlneval_session"
PREFIX = "vls_"
MAX_ID = 100
TOUCH_SECONDS = 60.0  # last use is written at most once a minute per session


@dataclass(frozen=True)
class SessionRef:
    """A live session: its row, its team and the CSRF token its forms carry."""

    id: int
    team_id: int
    team_name: str
    csrf: str


def _digest(sid: str) -> str:
    return hashlib.sha256(sid.encode("utf-8")).hexdigest()


def csrf_token(sid: str) -> str:
    """The CSRF token of session ``sid`` (HMAC-SHA-256 of a fixed label, keyed by the id).

    Example:
        >>> csrf_token("vls_a") == csrf_token("vls_a") != csrf_token("vls_b")
        True
    """
    return hmac.new(sid.encode("utf-8"), b"vlneval-csrf", hashlib.sha256).hexdigest()


def csrf_ok(session: SessionRef | None, sent: str | None) -> bool:
    """True when ``sent`` is ``session``'s CSRF token (compared in constant time).

    Example:
        >>> ref = SessionRef(1, 1, "t", csrf_token("vls_a"))
        >>> csrf_ok(ref, csrf_token("vls_a")), csrf_ok(ref, ""), csrf_ok(None, "x")
        (True, False, False)
    """
    if session is None or not sent:
        return False
    return hmac.compare_digest(session.csrf.encode(), sent.encode("utf-8", "replace"))


def open_session(
    db: Database, team_id: int, cfg: ServerConfig, now: dt.datetime | None = None
) -> str:
    """Opens a session of ``team_id``; returns its id (for the cookie; only its digest is kept)."""
    now = now or utcnow()
    sid = PREFIX + secrets.token_urlsafe(32)
    with db.write() as s:
        s.add(
            LoginSession(
                digest=_digest(sid),
                team_id=team_id,
                created_at=now,
                last_seen_at=now,
                expires_at=now + dt.timedelta(seconds=cfg.session_max_seconds),
            )
        )
    return sid


def find_session(
    db: Database, sid: str | None, cfg: ServerConfig, now: dt.datetime | None = None
) -> SessionRef | None:
    """The live session ``sid``, or None (unknown, revoked, expired or idle too long)."""
    if not sid or len(sid) > MAX_ID or not sid.startswith(PREFIX):
        return None
    now = now or utcnow()
    with db.read() as s:
        row = s.execute(
            select(LoginSession, Team.name)
            .join(Team, Team.id == LoginSession.team_id)
            .where(LoginSession.digest == _digest(sid))
        ).first()
        if row is None:
            return None
        sess, name = row
        last = sess.last_seen_at or sess.created_at
        if sess.revoked_at is not None or now >= sess.expires_at:
            return None
        if (now - last).total_seconds() > cfg.session_idle_seconds:
            return None
        ref = SessionRef(sess.id, sess.team_id, name, csrf_token(sid))
    if (now - last).total_seconds() >= TOUCH_SECONDS:
        with db.write() as s:
            s.execute(
                update(LoginSession).where(LoginSession.id == ref.id).values(last_seen_at=now)
            )
    return ref


def revoke_session(db: Database, sid: str | None) -> bool:
    """Revokes session ``sid`` (logging out); True if a live one was revoked."""
    if not sid or len(sid) > MAX_ID:
        return False
    with db.write() as s:
        res = s.execute(
            update(LoginSession)
            .where(LoginSession.digest == _digest(sid), LoginSession.revoked_at.is_(None))
            .values(revoked_at=utcnow())
        )
        return bool(res.rowcount)  # type: ignore[attr-defined]


def _host(netloc: str) -> str:
    """The host of ``host[:port]`` (brackets of an IPv6 literal removed), lowercase."""
    netloc = netloc.lower()
    if netloc.startswith("["):
        return netloc[1:].split("]", 1)[0]
    return netloc.rsplit(":", 1)[0] if netloc.count(":") == 1 else netloc


def is_loopback(netloc: str) -> bool:
    """True for ``localhost``, 127.0.0.0/8 and ::1 (with or without a port).

    Example:
        >>> is_loopback("127.0.0.1:8000"), is_loopback("[::1]:80"), is_loopback("eval.example.org")
        (True, True, False)
    """
    host = _host(netloc)
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def origin_allowed(cfg: ServerConfig, origin: str) -> bool:
    """True when a form posted from ``origin`` (a browser's ``Origin`` header) may be accepted:
    its host is a loopback address, ``public_url``'s host, or in ``allowed_hosts`` (as ``host``
    or ``host:port``).

    Example:
        >>> cfg = ServerConfig(data_dir="/tmp/x", allowed_hosts=("eval.example.org",))
        >>> origin_allowed(cfg, "https://eval.example.org"), origin_allowed(cfg, "https://evil.example")
        (True, False)
        >>> origin_allowed(cfg, "http://127.0.0.1:8000")
        True
    """
    parts = urlsplit(origin)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        return False
    netloc = parts.netloc.lower()
    if is_loopback(netloc):
        return True
    allowed = set(cfg.allowed_hosts)
    if cfg.public_url:
        allowed.add(urlsplit(cfg.public_url).netloc.lower())
    return netloc in allowed or _host(netloc) in allowed


def cookie_secure(cfg: ServerConfig, scheme: str, netloc: str) -> bool:
    """Whether the session cookie is ``Secure``: always with ``secure_cookies``; else unless the
    server is reached over plain HTTP on a loopback address, judged by ``public_url`` when it is
    set, else by the request's scheme and host.

    Example:
        >>> from dataclasses import replace
        >>> cfg = ServerConfig(data_dir="/tmp/x", public_url="")
        >>> cookie_secure(cfg, "http", "127.0.0.1:8000"), cookie_secure(cfg, "http", "eval.example.org")
        (False, True)
        >>> cookie_secure(replace(cfg, public_url="https://eval.example.org"), "http", "127.0.0.1:8000")
        True
    """
    if cfg.secure_cookies:
        return True
    if cfg.public_url:
        parts = urlsplit(cfg.public_url)
        scheme, netloc = parts.scheme, parts.netloc
    return scheme == "https" or not is_loopback(netloc)
