"""Browser logins: an opaque, hashed, expiring, revocable session id; allowed hosts; Secure rules.

On SQLite and PostgreSQL (the ``server`` fixture).
"""

from __future__ import annotations

import datetime as dt
import hashlib
from dataclasses import replace

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import select, update

from tests.server.helpers import DEMO_PREDICTIONS, login
from vlneval.cli.main import build_parser
from vlneval.cli.serve import config_from_args
from vlneval.server.core.config import ServerConfig
from vlneval.server.core.sessions import cookie_secure, is_loopback, origin_allowed
from vlneval.server.models import LoginSession, utcnow
from vlneval.server.services import admin


def _set_cookie(r) -> str:
    return r.headers.get("set-cookie", "")


def test_the_cookie_holds_a_session_id_never_the_token(server):
    r = server.client.post("/login", data={"token": server.alpha}, follow_redirects=False)
    assert r.status_code == 303
    header = _set_cookie(r)
    assert server.alpha not in header and "vlneval_token" not in header
    name, sid = header.split(";", 1)[0].split("=", 1)
    assert name == "vlneval_session" and sid.startswith("vls_") and len(sid) > 40
    attrs = [a.strip().lower() for a in header.split(";")[1:]]
    assert "httponly" in attrs and "samesite=lax" in attrs and "path=/" in attrs
    assert "max-age=604800" in attrs  # 7 days, the absolute limit
    with server.db.read() as s:
        row = s.scalars(select(LoginSession)).one()
        stored = [str(getattr(row, c.name)) for c in LoginSession.__table__.columns]
    assert row.digest == hashlib.sha256(sid.encode()).hexdigest()
    assert all(sid not in v and server.alpha not in v for v in stored)
    assert (row.expires_at - row.created_at) == dt.timedelta(days=7)
    server.client.cookies.set("vlneval_session", sid)
    assert "team <strong>alpha</strong>" in server.client.get("/submissions").text


def test_the_old_token_cookie_is_not_a_login(server):
    server.client.cookies.set("vlneval_token", server.alpha)
    r = server.client.get("/submissions", follow_redirects=False)
    assert r.status_code == 303 and r.headers["location"].startswith("/login")


def test_logout_revokes_the_session(server):
    sid = login(server.client, server.alpha)
    page = server.client.get("/submissions").text
    csrf = page.split('name="csrf" value="', 1)[1].split('"', 1)[0]
    r = server.client.post("/logout", data={"csrf": csrf}, follow_redirects=False)
    assert r.status_code == 303
    with server.db.read() as s:
        assert s.scalars(select(LoginSession)).one().revoked_at is not None
    server.client.cookies.set("vlneval_session", sid)  # a copy of the cookie kept somewhere
    r = server.client.get("/submissions", follow_redirects=False)
    assert r.status_code == 303 and r.headers["location"].startswith("/login")


def test_logout_without_the_sessions_csrf_token_is_refused(server):
    sid = login(server.client, server.alpha)
    for data in ({}, {"csrf": "0" * 64}):
        assert server.client.post("/logout", data=data).status_code == 403
    server.client.cookies.set("vlneval_session", sid)
    assert server.client.get("/submissions", follow_redirects=False).status_code == 200


@pytest.mark.parametrize("limit", ["absolute", "idle"])
def test_expired_sessions_are_refused(server, limit):
    login(server.client, server.alpha)
    assert server.client.get("/submissions", follow_redirects=False).status_code == 200
    past = utcnow() - dt.timedelta(seconds=1)
    idle = utcnow() - dt.timedelta(hours=12, seconds=1)
    values = {"expires_at": past} if limit == "absolute" else {"last_seen_at": idle}
    with server.db.write() as s:
        s.execute(update(LoginSession).values(**values))
    r = server.client.get("/submissions", follow_redirects=False)
    assert r.status_code == 303 and r.headers["location"].startswith("/login")


def test_use_keeps_a_session_alive_within_its_absolute_limit(server):
    login(server.client, server.alpha)
    old = utcnow() - dt.timedelta(hours=11)
    with server.db.write() as s:
        s.execute(update(LoginSession).values(last_seen_at=old))
    assert server.client.get("/submissions", follow_redirects=False).status_code == 200
    with server.db.read() as s:
        assert s.scalars(select(LoginSession)).one().last_seen_at > old + dt.timedelta(hours=10)


def test_rotating_a_token_ends_its_sessions(server):
    login(server.client, server.alpha)
    admin.rotate_token(server.db, "alpha")
    assert server.client.get("/submissions", follow_redirects=False).status_code == 303


def _secure(app, base_url: str, **headers: str) -> bool:
    with TestClient(app, base_url=base_url) as c:
        token = app.state.test_token
        r = c.post("/login", data={"token": token}, headers=headers, follow_redirects=False)
        assert r.status_code == 303, r.text
        return "secure" in [a.strip().lower() for a in _set_cookie(r).split(";")]


def test_secure_flag_outside_loopback(server):
    app = server.app
    app.state.test_token = server.alpha
    assert _secure(app, "http://127.0.0.1:8000") is False
    assert _secure(app, "http://localhost:8000") is False
    assert _secure(app, "https://127.0.0.1:8000") is True
    assert _secure(app, "http://eval.example.org") is True  # TLS ends at a proxy in front
    assert _secure(app, "http://testserver") is True
    app.state.cfg = replace(server.cfg, public_url="https://eval.example.org")
    assert _secure(app, "http://127.0.0.1:8000") is True  # judged by the public address
    app.state.cfg = replace(server.cfg, secure_cookies=True)
    assert _secure(app, "http://127.0.0.1:8000") is True
    app.state.cfg = server.cfg


def test_secure_rules_unit():
    cfg = ServerConfig(data_dir="/tmp/x", public_url="")
    assert not cookie_secure(cfg, "http", "[::1]:8000")
    assert cookie_secure(cfg, "http", "10.0.0.5:8000")
    assert not cookie_secure(
        replace(cfg, public_url="http://127.0.0.1:9000"), "http", "evil.example"
    )
    assert is_loopback("127.5.0.1") and not is_loopback("127.example.org")


def test_forms_from_hosts_that_are_not_allowed_are_refused(server):
    data = {"token": server.alpha}
    c = server.client

    def code(**headers: str) -> int:
        return c.post("/login", data=data, headers=headers, follow_redirects=False).status_code

    assert code(origin="http://evil.example") == 403
    # DNS rebinding: Host and Origin agree, but the host is not one of ours
    assert code(origin="http://evil.example:8000", host="evil.example:8000") == 403
    assert code(origin="null") == 403
    assert code(**{"sec-fetch-site": "cross-site"}) == 403
    assert code(origin="http://127.0.0.1:8000", **{"sec-fetch-site": "same-origin"}) == 303
    assert code(origin="https://eval.example.org") == 403
    server.app.state.cfg = replace(server.cfg, allowed_hosts=("eval.example.org",))
    assert code(origin="https://eval.example.org") == 303
    assert code(origin="https://eval.example.org:8443") == 303
    assert code(origin="https://other.example.org") == 403
    server.app.state.cfg = replace(server.cfg, public_url="https://board.example.org")
    assert code(origin="https://board.example.org") == 303
    server.app.state.cfg = server.cfg


def test_allowed_hosts_from_the_environment_and_the_command_line(monkeypatch, tmp_path):
    monkeypatch.setenv("VLNEVAL_ALLOWED_HOSTS", "Eval.Example.org, board.example.org:8443")
    cfg = ServerConfig(data_dir=tmp_path)
    assert cfg.allowed_hosts == ("eval.example.org", "board.example.org:8443")
    assert origin_allowed(cfg, "https://board.example.org:8443")
    assert not origin_allowed(cfg, "https://board.example.org:9999")
    args = build_parser().parse_args(
        ["serve", "--data-dir", str(tmp_path), "--allowed-host", "a.example",
         "--allowed-host", "b.example", "--public-url", "https://a.example/"]
    )  # fmt: skip
    cfg = config_from_args(args)
    assert cfg.allowed_hosts == ("a.example", "b.example") and cfg.public_url == "https://a.example"


def test_a_session_never_authorises_the_api(server):
    login(server.client, server.alpha)
    r = server.client.post(
        "/api/v1/challenges/demo/phases/val/submissions",
        files={"file": ("p.json", DEMO_PREDICTIONS.read_bytes(), "application/json")},
    )
    assert r.status_code == 401
    assert server.client.get("/api/v1/submissions").status_code == 401
