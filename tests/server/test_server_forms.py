"""The web upload form and the leaderboard control forms: a session, an allowed origin and the
session's CSRF token, then exactly the API's checks, messages and quotas. The challenge page.

On SQLite and PostgreSQL (the ``server`` fixture).
"""

from __future__ import annotations

import re
from dataclasses import replace

from sqlalchemy import func, select

from tests.server.helpers import DEMO_PREDICTIONS, encode, login, stop_predictions
from vlneval.evaluation import evaluate
from vlneval.server.models import Submission
from vlneval.server.services import admin
from vlneval.server.services.leaderboard import public_value

FORM = "/c/demo/val/submit"
POST = "/c/demo/val/submissions"


def _csrf(server, path: str = FORM) -> str:
    page = server.client.get(path)
    assert page.status_code == 200, page.text
    return re.search(r'name="csrf" value="([0-9a-f]{64})"', page.text).group(1)


def _upload(server, data: bytes, csrf: str | None, name: str = "preds.json", **form):
    fields = {**form, **({"csrf": csrf} if csrf is not None else {})}
    return server.client.post(
        POST, files={"file": (name, data, "application/json")}, data=fields, follow_redirects=False
    )


def _count(server) -> int:
    with server.db.read() as s:
        return int(s.scalar(select(func.count()).select_from(Submission)) or 0)


def test_the_form_needs_a_login(server):
    r = server.client.get(FORM, follow_redirects=False)
    assert r.status_code == 303 and r.headers["location"] == "/login?next=/c/demo/val/submit"
    r = _upload(server, DEMO_PREDICTIONS.read_bytes(), "0" * 64)
    assert r.status_code == 303 and r.headers["location"].startswith("/login")
    assert _count(server) == 0


def test_an_upload_through_the_form_is_scored_as_through_the_api(server):
    login(server.client, server.alpha)
    r = _upload(server, DEMO_PREDICTIONS.read_bytes(), _csrf(server), method="form agent")
    assert r.status_code == 303 and r.headers["location"].startswith("/submissions/")
    uid = r.headers["location"].rsplit("/", 1)[1]
    server.work()
    got = server.get(uid, server.alpha).json()
    assert got["status"] == "finished" and got["method"] == "form agent"
    expected = evaluate("demo", None, DEMO_PREDICTIONS).metrics
    assert got["result"]["metrics"] == {k: public_value(k, v) for k, v in expected.items()}
    assert "finished" in server.client.get(r.headers["location"]).text


def test_a_missing_or_wrong_csrf_token_is_refused(server):
    login(server.client, server.alpha)
    right = _csrf(server)
    data = DEMO_PREDICTIONS.read_bytes()
    assert _upload(server, data, None).status_code == 403
    assert _upload(server, data, "0" * 64).status_code == 403
    assert _upload(server, data, right[:-1]).status_code == 403
    # another team's token is not ours either
    other = server.client.__class__(server.app)
    login(other, server.beta)
    theirs = re.search(r'name="csrf" value="([0-9a-f]{64})"', other.get(FORM).text).group(1)
    other.close()
    assert _upload(server, data, theirs).status_code == 403
    cross = server.client.post(
        POST,
        files={"file": ("p.json", data, "application/json")},
        data={"csrf": right},
        headers={"origin": "http://evil.example"},
        follow_redirects=False,
    )
    assert cross.status_code == 403
    assert _count(server) == 0
    assert _upload(server, data, right).status_code == 303


def test_the_form_gives_the_apis_messages_and_quotas(server):
    login(server.client, server.alpha)
    csrf = _csrf(server)
    bad = b'{"instr_id": '
    api = server.submit(server.alpha, bad, name="broken.json").json()
    r = _upload(server, bad, csrf, name="broken.json")
    assert r.status_code == 422
    assert api["detail"] in r.text and all(p in r.text for p in api["problems"])
    admin.update_phase(server.db, "demo", "val", daily_quota=1)
    assert _upload(server, encode(stop_predictions()), csrf).status_code == 303
    api = server.submit(server.alpha, encode(stop_predictions()))
    r = _upload(server, encode(stop_predictions()), csrf)
    assert api.status_code == r.status_code == 429
    assert api.json()["detail"].replace("'", "&#39;") in r.text


def test_leaderboard_control_forms_need_the_csrf_token(server):
    uid = server.submit(server.alpha, DEMO_PREDICTIONS.read_bytes()).json()["id"]
    server.work()
    login(server.client, server.alpha)
    csrf = _csrf(server, "/c/demo/val")
    url = "/c/demo/val/entry"
    for data in ({"action": "hide", "submission": uid}, {"action": "none"}):
        assert server.client.post(url, data=data, follow_redirects=False).status_code == 403
        bad = {**data, "csrf": "f" * 64}
        assert server.client.post(url, data=bad, follow_redirects=False).status_code == 403
    board = "/api/v1/challenges/demo/phases/val/leaderboard"
    assert len(server.client.get(board).json()["entries"]) == 1
    ok = server.client.post(url, data={"action": "hide", "submission": uid, "csrf": csrf})
    assert ok.status_code == 200 and "hidden" in ok.text
    assert server.client.get(board).json()["entries"] == []


def test_the_challenge_page_shows_description_dates_and_counts(server):
    admin.update_phase(
        server.db, "demo", "val", opens_at=admin.parse_time("2026-01-01T00:00:00Z"),
        closes_at=admin.parse_time("2999-06-01T12:00:00Z"),
    )  # fmt: skip
    server.submit(server.alpha, DEMO_PREDICTIONS.read_bytes())
    server.submit(server.beta, encode(stop_predictions()))
    server.submit(server.beta, b"not json")  # refused: not counted
    server.work()
    page = server.client.get("/c/demo")
    assert page.status_code == 200
    assert "the synthetic demo benchmark" in page.text
    assert "2026-01-01 00:00 UTC" in page.text and "2999-06-01 12:00 UTC" in page.text
    row = page.text.split('href="/c/demo/val"', 1)[1].split("</tr>", 1)[0]
    assert re.findall(r'<td class="num">(\d+)</td>', row) == ["2", "2", "2"]
    assert server.client.get("/c/nope").status_code == 404


def test_the_submit_hint_names_the_server(server):
    assert "vlneval submit --server http://testserver " in server.client.get("/c/demo/val").text
    server.app.state.cfg = replace(server.cfg, public_url="https://eval.example.org/")
    page = server.client.get("/c/demo/val").text
    assert "vlneval submit --server https://eval.example.org --challenge demo --phase val" in page
    server.app.state.cfg = replace(server.cfg, allowed_hosts=("eval.example.org",))
    page = server.client.get("/c/demo/val", headers={"host": "evil.example"}).text
    assert "--server http://eval.example.org " in page  # never a Host header that is not ours
