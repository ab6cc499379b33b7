"""The JSON API, run against SQLite and against a real PostgreSQL server on loopback."""

from __future__ import annotations

import datetime as dt
import threading
from dataclasses import replace

import pytest
from sqlalchemy import select

from tests.server.helpers import DEMO_PREDICTIONS, encode, login, mutated, stop_predictions
from vlneval.evaluation import evaluate
from vlneval.server.core.database import Database
from vlneval.server.models import Result
from vlneval.server.services import admin
from vlneval.server.services.leaderboard import public_value
from vlneval.server.services.worker import Worker


def test_a_submission_is_scored_exactly_as_vlneval_score(server):
    r = server.submit(server.alpha, DEMO_PREDICTIONS.read_bytes(), method="demo agents")
    assert r.status_code == 202, r.text
    sub = r.json()
    assert sub["status"] == "queued" and sub["team"] == "alpha" and sub["filename"] == "preds.json"
    assert server.work() == 1
    got = server.get(sub["id"], server.alpha).json()
    assert got["status"] == "finished" and got["messages"] == [] and got["error_kind"] is None
    expected = evaluate("demo", None, DEMO_PREDICTIONS).metrics
    with server.db.read() as s:  # bit-for-bit in the organisers' database: floats round-trip
        assert s.scalars(select(Result)).one().metrics == expected
    # the team sees them rounded as the pages show them (a label oracle otherwise)
    assert got["result"]["metrics"] == {k: public_value(k, v) for k, v in expected.items()}
    assert got["result"]["primary_metric"] == "SPL"
    assert got["result"]["primary_value"] == round(expected["SPL"], 4)
    assert round(expected["SPL"], 4) == 0.4708  # the demo's documented value
    assert got["result"]["summary"]["predictions"] == "preds.json"
    board = server.client.get("/api/v1/challenges/demo/phases/val/leaderboard").json()
    assert [(e["rank"], e["team"], e["method"]) for e in board["entries"]] == [
        (1, "alpha", "demo agents")
    ]
    # the public board is rounded to what the page shows (47.08 %), as the team's own result
    assert board["entries"][0]["primary_value"] == round(expected["SPL"], 4) == 0.4708


def test_declared_protocol_fields_reach_the_card_and_the_leaderboard(server):
    declared = {"observations": "RGB panorama", "privileged": "none", "seeds": [0, 1, 2]}
    import json

    r = server.submit(server.alpha, DEMO_PREDICTIONS.read_bytes(), protocol=json.dumps(declared))
    assert r.status_code == 202, r.text
    server.work()
    card = server.get(r.json()["id"], server.alpha).json()["result"]["summary"]["protocol"]
    direct = evaluate("demo", None, DEMO_PREDICTIONS, declared=declared).protocol
    assert {k: card[k] for k in declared} == declared
    assert {k: v for k, v in card.items() if k != "software"} == {
        k: v for k, v in direct.items() if k != "software"
    }
    entry = server.client.get("/api/v1/challenges/demo/phases/val/leaderboard").json()["entries"][0]
    assert entry["protocol"]["observations"] == "RGB panorama"
    assert entry["protocol"]["privileged"] == "none"
    assert entry["protocol"]["action_space"] == "not declared"
    assert entry["protocol"]["profile"] == "demo v1"


def test_bad_protocol_fields_are_refused_with_a_suggestion(server):
    r = server.submit(
        server.alpha, DEMO_PREDICTIONS.read_bytes(), protocol='{"observation": "RGB"}'
    )
    assert r.status_code == 422
    body = r.json()
    assert "did you mean 'observations'" in " ".join(body["problems"])
    r = server.submit(server.alpha, DEMO_PREDICTIONS.read_bytes(), protocol="[1, 2]")
    assert r.status_code == 422 and "expected a JSON object" in " ".join(r.json()["problems"])


def test_every_mutating_endpoint_and_private_read_needs_a_token(server):
    c = server.client
    r = c.post("/api/v1/challenges/demo/phases/val/submissions", files={"file": ("p.json", b"[]")})
    assert r.status_code == 401 and r.headers["www-authenticate"] == "Bearer"
    assert "API token" in r.json()["detail"]
    r = server.submit("vlt_not-a-token", b"[]")
    assert r.status_code == 401 and "not valid" in r.json()["detail"]
    for path in ("/api/v1/submissions", "/api/v1/me", "/api/v1/challenges/demo/phases/val/quota"):
        assert c.get(path).status_code == 401
    assert c.get("/api/v1/me", headers=server.auth(server.alpha)).json()["name"] == "alpha"


def test_a_team_never_sees_another_teams_submission(server):
    uid = server.submit(server.alpha, DEMO_PREDICTIONS.read_bytes()).json()["id"]
    server.work()
    mine = server.get(uid, server.alpha)
    theirs = server.get(uid, server.beta)
    missing = server.get("0" * 32, server.beta)
    assert mine.status_code == 200
    assert theirs.status_code == 404 and missing.status_code == 404
    assert theirs.json()["detail"].replace(uid, "X") == missing.json()["detail"].replace(
        "0" * 32, "X"
    )
    assert server.client.get("/api/v1/submissions", headers=server.auth(server.beta)).json() == []
    login(server.client, server.beta)
    page = server.client.get(f"/submissions/{uid}")
    assert page.status_code == 404 and uid not in page.text
    server.client.cookies.clear()


def test_a_refused_file_gets_clear_messages_and_costs_no_quota(server):
    def wrong_start(recs):
        recs[0]["trajectory"] = recs[0]["trajectory"][2:]  # starts one step in

    def unknown_viewpoint(recs):
        recs[3]["trajectory"][1][0] = "nosuchviewpoint"

    admin.update_phase(server.db, "demo", "val", total_quota=2)
    r1 = server.submit(server.alpha, mutated(wrong_start), name="a.json")
    r2 = server.submit(server.alpha, mutated(unknown_viewpoint), name="b.json")
    assert [r.status_code for r in (r1, r2)] == [202, 202]
    server.work()
    a, b = (server.get(r.json()["id"], server.alpha).json() for r in (r1, r2))
    assert a["status"] == b["status"] == "failed" and a["error_kind"] == "invalid"
    assert a["messages"] == [
        'a.json: instr_id "100_0": trajectory[0]: the trajectory starts at '
        "248fc242453d35e33739201fc749cd96, not at the episode's start "
        "7df9b1c6024ffb4582dca3e12a82a258 (it must include the start viewpoint)"
    ]
    assert b["messages"] == [
        'b.json: instr_id "101_0": trajectory[1]: viewpoint nosuchviewpoint is not in scan demoHouse0A'
    ]
    # failed submissions cost nothing: the quota of 2 still lets three more in
    r3 = server.submit(server.alpha, encode(stop_predictions()[:-1]), name="c.json")
    assert r3.status_code == 202
    server.work()
    c = server.get(r3.json()["id"], server.alpha).json()
    assert c["status"] == "failed"
    assert c["messages"] == [
        "c.json: 1 of 36 episodes have no prediction (first: 303_2); profile demo requires all of "
        "them: this phase scores complete files only"
    ]
    assert server.submit(server.alpha, DEMO_PREDICTIONS.read_bytes()).status_code == 202
    assert server.submit(server.alpha, DEMO_PREDICTIONS.read_bytes()).status_code == 202
    r = server.submit(server.alpha, DEMO_PREDICTIONS.read_bytes())
    assert r.status_code == 429 and r.json()["detail"] == (  # both still queued
        "your team's 2 submissions of phase val are taken, 2 of them by files still waiting to "
        "be scored: a file that is refused gives its place back, so try again when they finish"
    )
    server.work()
    r = server.submit(server.alpha, DEMO_PREDICTIONS.read_bytes())
    assert r.status_code == 429 and "used all 2 submissions" in r.json()["detail"]


def test_daily_quota_names_the_reset_time(server):
    admin.update_phase(server.db, "demo", "val", daily_quota=1)
    assert server.submit(server.alpha, DEMO_PREDICTIONS.read_bytes()).status_code == 202
    r = server.submit(server.alpha, DEMO_PREDICTIONS.read_bytes())
    tomorrow = (dt.datetime.now(dt.timezone.utc) + dt.timedelta(days=1)).strftime(
        "%Y-%m-%dT00:00:00Z"
    )
    assert r.status_code == 429
    assert r.json()["detail"] == (  # the first is still queued: it is not used yet
        "your team's 1 submissions of today (UTC) in phase val are taken, 1 of them by files "
        "still waiting to be scored: a file that is refused gives its place back, so try again "
        f"when they finish; the quota resets at {tomorrow}"
    )
    assert server.submit(server.beta, DEMO_PREDICTIONS.read_bytes()).status_code == 202  # per team
    q = server.client.get(
        "/api/v1/challenges/demo/phases/val/quota", headers=server.auth(server.alpha)
    )
    assert q.json()["used_today"] == 1 and q.json()["daily_quota"] == 1 and q.json()["pending"] == 1
    server.work()  # scored: now used
    r = server.submit(server.alpha, DEMO_PREDICTIONS.read_bytes())
    assert r.status_code == 429
    assert r.json()["detail"] == (
        "your team has used its 1 submissions of today (UTC) in phase val; the quota resets at "
        f"{tomorrow}"
    )


def test_pending_limit(server):
    server.app.state.cfg = replace(server.cfg, max_pending_per_team=2)
    for _ in range(2):
        assert server.submit(server.alpha, DEMO_PREDICTIONS.read_bytes()).status_code == 202
    r = server.submit(server.alpha, DEMO_PREDICTIONS.read_bytes())
    assert r.status_code == 429 and "2 submissions waiting" in r.json()["detail"]


def test_closed_and_not_yet_open_phases_refuse(server):
    admin.update_phase(server.db, "demo", "val", closes_at=admin.parse_time("2020-01-01T00:00:00Z"))
    r = server.submit(server.alpha, DEMO_PREDICTIONS.read_bytes())
    assert (
        r.status_code == 403
        and r.json()["detail"] == "phase val closed for submissions at 2020-01-01T00:00:00Z"
    )
    admin.update_phase(
        server.db, "demo", "val", closes_at=None, opens_at=admin.parse_time("2999-01-01")
    )
    r = server.submit(server.alpha, DEMO_PREDICTIONS.read_bytes())
    assert (
        r.status_code == 403
        and "opens for submissions at 2999-01-01T00:00:00Z" in r.json()["detail"]
    )
    assert server.client.get("/api/v1/challenges/demo/phases/val").json()["open"] is False


def test_idempotency_key_makes_retries_safe(server):
    data = DEMO_PREDICTIONS.read_bytes()
    first = server.submit(server.alpha, data, key="retry-1")
    again = server.submit(server.alpha, data, key="retry-1")
    assert first.status_code == 202 and again.status_code == 200
    assert first.json()["id"] == again.json()["id"]
    other = server.submit(server.alpha, encode(stop_predictions()), key="retry-1")
    assert other.status_code == 409 and "different file" in other.json()["detail"]
    assert (
        len(server.client.get("/api/v1/submissions", headers=server.auth(server.alpha)).json()) == 1
    )


def test_private_leaderboard_shows_a_team_its_own_entry_only(server):
    admin.create_phase(server.db, "demo", "hidden", task="demo", leaderboard_public=False)
    for token, data in (
        (server.alpha, DEMO_PREDICTIONS.read_bytes()),
        (server.beta, encode(stop_predictions())),
    ):
        assert server.submit(token, data, phase="hidden").status_code == 202
    server.work()
    url = "/api/v1/challenges/demo/phases/hidden/leaderboard"
    r = server.client.get(url)
    assert r.status_code == 403 and "private" in r.json()["detail"]
    mine = server.client.get(url, headers=server.auth(server.beta)).json()
    assert [(e["team"], e["rank"]) for e in mine["entries"]] == [("beta", None)]


def test_leaderboard_keeps_each_teams_best_entry(server):
    good, stop = DEMO_PREDICTIONS.read_bytes(), encode(stop_predictions())
    for token, data in ((server.alpha, stop), (server.alpha, good), (server.beta, stop)):
        assert server.submit(token, data).status_code == 202
    server.work()
    entries = server.client.get("/api/v1/challenges/demo/phases/val/leaderboard").json()["entries"]
    stop_spl = evaluate("demo", None, _write(stop)).metrics["SPL"]
    good_spl = evaluate("demo", None, DEMO_PREDICTIONS).metrics["SPL"]
    assert stop_spl == 0.0
    assert [(e["rank"], e["team"], e["primary_value"]) for e in entries] == [
        (1, "alpha", round(good_spl, 4)),
        (2, "beta", stop_spl),
    ]


def _write(data: bytes):
    import tempfile
    from pathlib import Path

    path = Path(tempfile.mkdtemp()) / "p.json"
    path.write_bytes(data)
    return path


def test_concurrent_workers_score_each_submission_once(server):
    uids = [
        server.submit(server.alpha if i % 2 else server.beta, DEMO_PREDICTIONS.read_bytes()).json()[
            "id"
        ]
        for i in range(8)
    ]
    counts = []

    def run(k: int) -> None:
        db = Database(server.cfg.database_url)
        counts.append(Worker(server.cfg, db=db, name=f"w{k}").run(exit_when_idle=True))
        db.dispose()

    threads = [threading.Thread(target=run, args=(k,)) for k in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sum(counts) == 8
    from sqlalchemy import func, select

    from vlneval.server.models import Result, Submission

    with server.db.read() as s:
        assert s.scalar(select(func.count()).select_from(Result)) == 8
        attempts = s.scalars(select(Submission.attempts)).all()
    assert sorted(attempts) == [1] * 8
    assert all(server.get(u, server.alpha).status_code in (200, 404) for u in uids)


def test_requeue_rescores_once(server):
    uid = server.submit(server.alpha, DEMO_PREDICTIONS.read_bytes()).json()["id"]
    server.work()
    admin.requeue(server.db, uid)
    assert server.get(uid, server.alpha).json()["status"] == "queued"
    assert server.work() == 1
    got = server.get(uid, server.alpha).json()
    assert got["status"] == "finished" and got["result"]["primary_value"] > 0.47


def test_health_and_phase_description_hide_server_paths(server):
    h = server.client.get("/api/v1/health").json()
    assert h["status"] == "ok" and h["database"] == server.backend
    ph = server.client.get("/api/v1/challenges/demo/phases/val").json()
    assert ph["task"] == "demo" and ph["n_episodes"] == 36 and ph["metrics"][4] == "SPL"
    assert "episodes_file" not in ph and "graphs_dir" not in ph
    doc = server.client.get("/api/v1/openapi.json").text
    assert "episodes_file" not in doc and "graphs_dir" not in doc


def test_unknown_names_answer_404_with_a_suggestion(server):
    r = server.client.get("/api/v1/challenges/demo/phases/vall/leaderboard")
    assert r.status_code == 404 and "did you mean 'val'" in r.json()["detail"]
    r = server.client.get("/api/v1/challenges/dmeo")
    assert r.status_code == 404
    assert server.client.get("/api/v1/nothing").status_code == 404


def test_migrations_create_exactly_the_models(server):
    from alembic.autogenerate import compare_metadata
    from alembic.runtime.migration import MigrationContext

    from vlneval.server.models import Base

    with server.db.engine.connect() as conn:
        diff = compare_metadata(MigrationContext.configure(conn), Base.metadata)
    assert diff == []


@pytest.mark.parametrize("kind", ["created", "duplicate"])
def test_admin_refuses_duplicates_and_bad_slugs(server, kind):
    if kind == "created":
        with pytest.raises(admin.InvalidInputError, match="lowercase letters"):
            admin.create_challenge(server.db, "Bad Slug!", "x")
    else:
        with pytest.raises(admin.InvalidInputError, match="already exists"):
            admin.create_challenge(server.db, "demo", "again")
        with pytest.raises(admin.InvalidInputError, match="already exists"):
            admin.create_team(server.db, "alpha")


@pytest.mark.parametrize(
    "name", ["Alpha", " alpha ", "ａｌｐｈａ", "ALPHA\u3000", "al\u200bpha", "alpha\u00ad"]
)
def test_a_team_name_that_reads_as_another_is_refused(server, name):
    """A public board shows names: one that differs from a team's only in case, spacing or a
    Unicode compatibility form (fullwidth letters) would pass for that team."""
    with pytest.raises(admin.InvalidInputError) as exc:
        admin.create_team(server.db, name)
    alike = (
        f" ({name.strip()!r} reads as the same name: names that differ only in case, spacing, "
        "invisible characters or Unicode compatibility forms are one name)"
    )
    assert str(exc.value) == "error: team 'alpha' already exists" + (
        "" if name.strip() == "alpha" else alike
    )


@pytest.mark.parametrize(
    ("name", "scripts"),
    [("\u0430lpha", "Cyrillic and Latin"), ("alph\u03b1", "Latin and Greek"),
     ("Team \u0411eta", "Latin and Cyrillic")],
)  # fmt: skip
def test_a_team_name_that_mixes_scripts_is_refused(server, name, scripts):
    """A Cyrillic or Greek look-alike letter among Latin ones would pass for another team on
    the board (``аlpha`` beside ``alpha``): a name is written in one script."""
    with pytest.raises(admin.InvalidInputError) as exc:
        admin.create_team(server.db, name)
    assert str(exc.value) == (
        f"error: team name {name!r} mixes {scripts} letters, so it could pass for another "
        "team's (a Cyrillic а reads as a Latin a): write it in one script (Latin may join the "
        "Han, kana, Bopomofo or Hangul of a Japanese, Chinese or Korean name)"
    )


@pytest.mark.parametrize(
    "name", ["альфа", "Ωμέγα 2", "東京チーム", "北京队", "Team 東京", "한국 팀", "Équipe e\u0301té"]
)
def test_a_team_name_in_one_script_is_taken(server, name):
    """One script (Cyrillic, Greek, CJK), Latin with the scripts of a Japanese, Chinese or
    Korean name, and accents as combining marks all pass."""
    assert admin.create_team(server.db, name)


def test_a_worker_refuses_a_hidden_file_changed_after_it_was_loaded(
    sqlite_server, tmp_path, caplog
):
    """The organisers' log names the phase of the incident and gives the command that
    accepts the change, for this phase."""
    import json
    import logging
    import re
    import shutil

    from tests.server.helpers import DEMO_EPISODES
    from vlneval.tasks.common.root import demo_root

    srv = sqlite_server
    hidden = tmp_path / "DEMO_hidden.json"
    shutil.copy(DEMO_EPISODES, hidden)
    graphs = demo_root() / "matterport3d" / "connectivity"
    admin.create_phase(
        srv.db, "demo", "h", task="demo", episodes_file=str(hidden), graphs=str(graphs)
    )
    worker = Worker(srv.cfg, db=srv.db)
    first = srv.submit(srv.alpha, DEMO_PREDICTIONS.read_bytes(), phase="h").json()["id"]
    assert worker.run_one()
    hidden.write_text(hidden.read_text().replace('"distance": 4.29', '"distance": 4.3'))
    second = srv.submit(srv.alpha, DEMO_PREDICTIONS.read_bytes(), phase="h").json()["id"]
    assert worker.run_one()
    assert srv.get(first, srv.alpha).json()["status"] == "finished"
    after = srv.get(second, srv.alpha).json()
    assert after["status"] == "failed" and after["error_kind"] == "internal"
    [logged] = [r.getMessage() for r in caplog.records if r.levelno == logging.ERROR]
    assert re.match(
        rf"incident [0-9a-f]{{8}} \(phase demo/h\): loading the data of submission {second}'s "
        "phase\n",
        logged,
    )
    assert (
        "the hidden episodes file changed since the phase was created (its SHA-256 differs); run "
        "`vlneval admin update-phase --challenge demo --phase h --rehash` if the change is intended"
    ) in logged
    assert "update-phase" not in json.dumps(after)  # the submitter is told nothing of it
    admin.update_phase(srv.db, "demo", "h", rehash=True)
    admin.requeue(srv.db, second)
    assert worker.run_one()
    assert srv.get(second, srv.alpha).json()["status"] == "finished"
