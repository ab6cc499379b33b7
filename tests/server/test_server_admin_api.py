"""The organisers' API (``/api/v1/admin``): moderation and the whole-board export behind the
admin token, the same services and output as ``vlneval admin``. On SQLite and PostgreSQL."""

from __future__ import annotations

import json

import pytest

from tests.server.conftest import fresh_pg_database, make_server
from tests.server.helpers import DEMO_PREDICTIONS, encode, stop_predictions
from vlneval.cli.main import main
from vlneval.server.services import admin

ADMIN = "adm-" + "x" * 28
MOD = "/api/v1/admin/submissions/{}/moderation"
EXPORT = "/api/v1/admin/challenges/demo/phases/val/leaderboard"
BOARD = "/api/v1/challenges/demo/phases/val/leaderboard"


@pytest.fixture(params=["sqlite", "postgresql"])
def srv(request, tmp_path):
    if request.param == "sqlite":
        url = f"sqlite:///{tmp_path / 'server.sqlite3'}"
    else:
        url = fresh_pg_database(request.getfixturevalue("pg_server"))
    s = make_server(tmp_path, url, request.param, admin_token=ADMIN)
    yield s
    s.client.close()
    s.db.dispose()


def _scored(srv, token, data, **form):
    r = srv.submit(token, data, **form)
    assert r.status_code == 202, r.text
    srv.work()
    return r.json()["id"]


def _rows(srv):
    return [(e["section"], e["rank"], e["team"]) for e in srv.client.get(BOARD).json()["entries"]]


def _mod(srv, uid, token=ADMIN, **body):
    return srv.client.post(MOD.format(uid), json=body, headers=srv.auth(token))


def test_organisers_moderate_through_the_api(srv):
    good = _scored(srv, srv.alpha, DEMO_PREDICTIONS.read_bytes(), method="good")
    beta = _scored(srv, srv.beta, encode(stop_predictions()), method="stop")
    r = _mod(srv, beta, action="baseline")
    assert r.status_code == 200 and r.json() == {"uid": beta, "state": "shown, baseline"}
    assert _rows(srv) == [("ranked", 1, "alpha"), ("baseline", None, "beta")]
    r = _mod(srv, good, action="flag", reason="made with the test labels")
    assert r.json()["state"] == "shown, flagged: made with the test labels"
    assert srv.client.get(BOARD).json()["entries"][0]["flag"] == "made with the test labels"
    r = _mod(srv, good, action="hide")
    assert r.status_code == 422 and "give a reason" in r.json()["detail"]
    assert _mod(srv, good, action="hide", reason="under review").status_code == 200
    assert _rows(srv) == [("baseline", None, "beta")]
    assert _mod(srv, good, action="delete", reason="duplicate account").json()["state"] == (
        "deleted by the organisers: duplicate account"
    )
    assert (
        _mod(srv, good, action="restore").json()["state"]
        == "shown, flagged: made with the test labels"
    )
    assert _mod(srv, "0" * 32, action="hide", reason="x").status_code == 404
    assert _mod(srv, good, action="explode").status_code == 422


def test_the_admin_api_needs_the_admin_token(srv):
    uid = _scored(srv, srv.alpha, encode(stop_predictions()))
    for token in (srv.alpha, "wrong", ADMIN + "x"):  # a token, not the admin's: not allowed
        r = _mod(srv, uid, token, action="baseline")
        assert (r.status_code, r.json()["detail"]) == (
            403,
            "this needs the organisers' admin token, not another token",
        )
        assert srv.client.get(EXPORT, headers=srv.auth(token)).status_code == 403
    r = srv.client.post(MOD.format(uid), json={"action": "baseline"})  # no token: who is it?
    assert (r.status_code, r.headers["www-authenticate"]) == (401, "Bearer")
    assert (
        r.json()["detail"]
        == "this needs the organisers' admin token: Authorization: Bearer <token>"
    )
    assert srv.client.get(EXPORT).status_code == 401
    assert _rows(srv) == [("ranked", 1, "alpha")]


def test_without_an_admin_token_the_admin_api_is_off(sqlite_server):
    uid = _scored(sqlite_server, sqlite_server.alpha, encode(stop_predictions()))
    r = _mod(sqlite_server, uid, "", action="baseline")
    assert r.status_code == 403 and "vlneval admin" in r.json()["detail"]


def test_the_admin_export_equals_the_cli_also_for_a_private_board(srv, capsys):
    _scored(srv, srv.alpha, DEMO_PREDICTIONS.read_bytes(), method="good")
    _scored(srv, srv.beta, encode(stop_predictions()), method='=HYPERLINK("x")')
    admin.update_phase(srv.db, "demo", "val", leaderboard_public=False)
    args = ["admin", "--data-dir", str(srv.cfg.data_dir), "--database-url"]
    args += [srv.cfg.database_url, "leaderboard", "--challenge", "demo", "--phase", "val"]
    for fmt in ("json", "csv"):
        assert main([*args, "--format", fmt]) == 0
        cli = capsys.readouterr().out
        r = srv.client.get(EXPORT, params={"format": fmt}, headers=srv.auth(ADMIN))
        assert r.status_code == 200
        if fmt == "json":
            assert r.json() == json.loads(cli) and [e["rank"] for e in r.json()] == [1, 2]
        else:
            assert r.headers["content-type"].startswith("text/csv") and r.text == cli
    assert srv.client.get(BOARD, params={"format": "json"}).status_code == 403


def test_an_unexpected_error_is_logged_without_any_token(srv, monkeypatch, caplog):
    import logging

    def boom(*a, **k):
        raise RuntimeError(f"broken while holding {ADMIN} and {srv.alpha}")

    monkeypatch.setattr("vlneval.server.api.routes.queue_counts", boom)
    client = type(srv.client)(srv.app, raise_server_exceptions=False)
    with caplog.at_level(logging.ERROR):
        r = client.get("/api/v1/health", headers=srv.auth(ADMIN))
    assert r.status_code == 500 and r.json()["detail"].startswith("internal server error (incident")
    assert "RuntimeError: broken while holding [admin token] and vlt_[hidden]" in caplog.text
    assert ADMIN not in caplog.text and srv.alpha not in caplog.text
    client.close()
