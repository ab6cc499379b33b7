"""An attacker tries to read the hidden labels through every endpoint and error path, and fails.

The hidden labels of the demo phase are the reference-path viewpoints after the start and the
goals. The attack files never contain them, so a label in any response body or header, any page
or any log line is a leak. Start viewpoints (public in a benchmark's test file, but never
quoted by the server) may appear only where the attacker wrote them.
"""

from __future__ import annotations

import json
import logging
import shutil
from pathlib import Path

import pytest

from tests.server.helpers import (
    DEMO_EPISODES,
    demo_episodes,
    encode,
    hidden_values,
    login,
    stop_predictions,
)
from vlneval.server.services import admin

LABELS, STARTS = hidden_values()


def _other_viewpoint(scan: str) -> str:
    """A viewpoint of ``scan`` that is on no reference path (neither a label nor a start)."""
    from vlneval.graph.store import GraphStore
    from vlneval.tasks.common.root import demo_root

    graph = GraphStore(demo_root() / "matterport3d" / "connectivity").graph(scan)
    used = LABELS | STARTS
    return next(v for v in graph.ids if v not in used)


def _attacks() -> dict[str, bytes]:
    """Files that break every rule the scorer checks, without containing any label."""
    stop = stop_predictions()
    eps = demo_episodes()
    wrong_start = json.loads(json.dumps(stop))
    for rec, ep in zip(wrong_start[::3], eps, strict=True):
        rec["trajectory"] = [[_other_viewpoint(ep["scan"]), 0.0, 0.0]]
    jump = json.loads(json.dumps(stop))
    for rec, ep in zip(jump[::3], eps, strict=True):
        rec["trajectory"].append([_other_viewpoint(ep["scan"]), 0.0, 0.0])
    return {
        "wrong-start": encode(wrong_start),
        "jumps": encode(jump),
        "missing": encode(stop[:5]),
        "unknown-ids": encode([*stop, {"instr_id": "999_9", "trajectory": [["x", 0, 0]]}]),
        "duplicates": encode([*stop, stop[0]]),
        "types": encode([{"instr_id": "100_0", "trajectory": "nope"}, {"instr_id": 1.5}, 7]),
        "unknown-viewpoint": encode(
            [{**r, "trajectory": [["nosuchviewpoint", 0, 0]]} for r in stop]
        ),
        "nan": encode(
            [{**r, "trajectory": [[r["trajectory"][0][0], float("nan"), 0]]} for r in stop]
        ).replace(b"NaN", b"NaN"),
        "not-a-list": b'{"instr_id": "100_0"}',
        "empty-list": b"[]",
        "stop-agent": encode(stop),
        "huge-number": b"[" + b"7" * 500 + b"]",
        "bad-utf8": b'[{"instr_id": "\xc3"}]',
    }


def _texts(resp) -> str:
    return resp.text + " " + " ".join(f"{k}: {v}" for k, v in resp.headers.items())


def _leaks(text: str, written: str) -> list[str]:
    found = [v for v in LABELS if v in text]
    found += [  # a start is public: quoted only where a refusal names it as the start
        v for v in STARTS if v in text and v not in written and f"episode's start {v} " not in text
    ]
    return found


def test_no_endpoint_page_error_or_log_line_reveals_a_hidden_label(server, caplog):
    caplog.set_level(logging.DEBUG)
    c, alpha, beta = server.client, server.alpha, server.beta
    attacks = _attacks()
    written = " ".join(a.decode("utf-8", "replace") for a in attacks.values())
    assert not [v for v in LABELS if v in written]  # the attack files hold no label
    responses = []
    uids = []
    for name, data in attacks.items():
        r = server.submit(alpha, data, name=f"{name}.json", method=name)
        responses.append(r)
        if r.status_code == 202:
            uids.append(r.json()["id"])
    server.work()
    admin.update_phase(server.db, "demo", "val", daily_quota=0)
    responses.append(server.submit(alpha, attacks["stop-agent"]))  # 429
    admin.update_phase(
        server.db, "demo", "val", daily_quota=None, closes_at=admin.parse_time("2000-01-01")
    )
    responses.append(server.submit(alpha, attacks["stop-agent"]))  # 403
    auth = server.auth(alpha)
    gets = [
        "/api/v1/health", "/api/v1/me", "/api/v1/challenges", "/api/v1/challenges/demo",
        "/api/v1/challenges/demo/phases/val", "/api/v1/challenges/demo/phases/val/leaderboard",
        "/api/v1/challenges/demo/phases/val/quota", "/api/v1/submissions", "/api/v1/openapi.json",
        "/api/v1/challenges/demo/phases/nope", "/api/v1/submissions/" + "f" * 32,
        "/api/v1/submissions/not-an-id", "/", "/c/demo/val", "/c/demo/nope", "/submissions",
        "/login", "/static/style.css", "/no/such/page", "/c/demo", "/c/demo/val/submit",
        "/api/v1/challenges/demo/phases/val/leaderboard?format=csv",
        "/api/v1/challenges/demo/phases/val/leaderboard?format=json",
    ]  # fmt: skip
    gets += [f"/api/v1/submissions/{u}" for u in uids] + [f"/submissions/{u}" for u in uids]
    login(c, alpha)
    responses += [c.get(path, headers=auth) for path in gets]
    responses += [c.get(f"/api/v1/submissions/{u}", headers=server.auth(beta)) for u in uids]
    c.cookies.clear()
    responses += [c.get(path) for path in gets]
    responses.append(c.post("/login", data={"token": "wrong"}))
    statuses = sorted({r.status_code for r in responses})
    assert {200, 202, 401, 403, 404, 422, 429} <= set(statuses)
    for r in responses:
        assert _leaks(_texts(r), written) == [], (r.request.url, r.text[:500])
        assert "Traceback" not in r.text
    assert [v for v in LABELS | STARTS if v in caplog.text] == []
    # every refused attack was told what is wrong
    mine = {s["method"]: s for s in c.get("/api/v1/submissions", headers=auth).json()}
    assert {k for k, s in mine.items() if s["status"] == "failed"} == {
        "wrong-start", "jumps", "missing", "duplicates", "types", "unknown-viewpoint", "nan",
        "not-a-list", "empty-list",
    }  # fmt: skip
    assert all(
        s["messages"] and s["error_kind"] == "invalid"
        for s in mine.values()
        if s["status"] == "failed"
    )
    starts = {f"{ep['path_id']}_0": ep["path"][0] for ep in demo_episodes()}
    for m in mine["wrong-start"]["messages"]:
        eid = m.split('"')[1]
        assert f"not at the episode's start {starts[eid]} (it must include" in m
    assert mine["stop-agent"]["status"] == mine["unknown-ids"]["status"] == "finished"
    # only aggregates are kept: no per-episode value, no episode id, in a finished result
    result = mine["stop-agent"]["result"]
    assert set(result["summary"]) >= {"metrics", "checks", "protocol"}
    assert "per_episode" not in json.dumps(result) and '"100_0"' not in json.dumps(result)


def test_the_submitters_own_viewpoints_are_never_redacted_into_an_oracle(server):
    """Redacting a viewpoint the submitter wrote would tell them it is a label: it stays."""
    from vlneval.graph.store import GraphStore
    from vlneval.tasks.common.root import demo_root

    stop = stop_predictions()
    ep = demo_episodes()[0]
    start, label = ep["path"][0], ep["path"][1]  # a guess that happens to be on the path
    graph = GraphStore(demo_root() / "matterport3d" / "connectivity").graph(ep["scan"])
    near = {graph.ids[j] for j in graph.neighbours(graph.index[label])}
    far = next(v for v in graph.ids if v not in near | LABELS | STARTS)
    stop[0]["trajectory"] = [[start, 0, 0], [label, 0, 0], [far, 0, 0]]
    r = server.submit(server.alpha, encode(stop), name="guess.json")
    server.work()
    messages = server.get(r.json()["id"], server.alpha).json()["messages"]
    assert messages == [
        f'guess.json: instr_id "100_0": trajectory[2]: viewpoint {far} is not a neighbour of '
        f"{label} in scan demoHouse0A (the official scorer rejects jumps)"
    ]


@pytest.mark.parametrize("fault", ["broken-labels", "changed-file"])
def test_an_organiser_side_failure_shows_nothing_and_logs_redacted(
    sqlite_server, tmp_path, caplog, fault
):
    """The phase's own data is broken: the submitter gets an incident id, the log no label."""
    caplog.set_level(logging.DEBUG)
    srv = sqlite_server
    hidden = tmp_path / "DEMO_secret.json"
    episodes = demo_episodes()
    if fault == "broken-labels":
        episodes[0]["path"][1] = "f" * 32  # a reference viewpoint that is not in the graph
    hidden.write_text(json.dumps(episodes))
    from vlneval.tasks.common.root import demo_root

    graphs = demo_root() / "matterport3d" / "connectivity"
    admin.create_phase(
        srv.db, "demo", "secret", task="demo", episodes_file=str(hidden), graphs=str(graphs)
    )
    if fault == "changed-file":
        shutil.copy(DEMO_EPISODES, hidden)
        hidden.write_text(hidden.read_text() + "\n")
    r = srv.submit(srv.alpha, encode(stop_predictions()), phase="secret")
    srv.work()
    sub = srv.get(r.json()["id"], srv.alpha).json()
    assert sub["status"] == "failed" and sub["error_kind"] == "internal"
    [message] = sub["messages"]
    assert message.startswith(
        "the server could not score this submission because of a problem on the organisers' side (incident "
    )
    secrets = LABELS | STARTS | {"f" * 32}
    assert [v for v in secrets if v in message] == []
    assert [v for v in secrets if v in caplog.text] == []
    assert "incident" in caplog.text
    quota = srv.client.get(
        "/api/v1/challenges/demo/phases/secret/quota", headers=srv.auth(srv.alpha)
    ).json()
    assert quota["used_total"] == 0  # not the submitter's fault: not counted


def test_a_scorer_message_that_quotes_a_goal_is_never_shown(sqlite_server, monkeypatch, caplog):
    """A task scorer whose own message quotes the goal (the public view cannot check its rule):
    the submitter gets the same words whether or not the file holds the goal, and the log
    line shows the goal as [hidden]."""
    import dataclasses

    from vlneval.errors import InvalidInputError, Problem
    from vlneval.tasks import TASKS, get_task

    caplog.set_level(logging.DEBUG)
    ep = demo_episodes()[0]
    goal = ep["path"][-1]

    class Leaky:  # the task's scorer of the split: refuses every file, quoting the goal
        episodes = None

        def score(self, predictions, how):
            raise InvalidInputError(
                [
                    Problem(
                        str(predictions),
                        f"stopped too far from the goal {goal}",
                        'instr_id "100_0"',
                        "trajectory",
                    )
                ]
            )

    def leaky(request):
        return Leaky()

    TASKS.register(
        "demo-leaky",
        dataclasses.replace(
            get_task("demo"),
            name="demo-leaky",
            open_scorer=leaky,
            graph_trajectories=False,
            public_copy="",  # a task the public view cannot check
        ),
    )
    try:
        admin.create_phase(sqlite_server.db, "demo", "leaky", task="demo-leaky", profile="demo")
        answers = []
        for records in (stop_predictions(), _with_path(stop_predictions(), ep)):
            r = sqlite_server.submit(
                sqlite_server.alpha, encode(records), phase="leaky", name="p.json"
            )
            sqlite_server.work()
            got = sqlite_server.get(r.json()["id"], sqlite_server.alpha).json()
            assert got["status"] == "failed" and got["error_kind"] == "invalid"
            answers.append(got["messages"])
        assert answers[0] == answers[1]
        assert goal not in " ".join(answers[0]) and "[hidden]" not in " ".join(answers[0])
        assert goal not in caplog.text and "stopped too far from the goal [hidden]" in caplog.text
    finally:
        TASKS.unregister("demo-leaky")


def _with_path(records, ep):
    records[0]["trajectory"] = [[v, 0, 0] for v in ep["path"]]  # the submitter walked to the goal
    return records


def test_an_own_reader_tasks_hidden_refusal_is_logged_redacted(sqlite_server, caplog):
    """A task with its own reader (REVERIE, SOON, Touchdown...: its scorer on the public copy
    checks uploads): a file that copy accepts but the scorer on the hidden file refuses, quoting
    a goal, is the organisers' problem. The log line names it with the goal as [hidden]; the
    submitter gets the generic incident message, which quotes nothing hidden."""
    import dataclasses

    from vlneval.errors import InvalidInputError, Problem
    from vlneval.tasks import TASKS, get_task

    caplog.set_level(logging.DEBUG)
    demo = get_task("demo")
    goal = demo_episodes()[0]["path"][-1]

    class Strict:  # the scorer of the hidden file: refuses every file, quoting the goal
        def __init__(self, inner):
            self.episodes = inner.episodes

        def score(self, predictions, how):
            problem = Problem(str(predictions), f"stopped too far from the goal {goal}")
            raise InvalidInputError([problem])

    def strict(request):
        inner = demo.open(dataclasses.replace(request, task=demo))
        hidden = Path(request.episodes_file or "").resolve() == DEMO_EPISODES.resolve()
        return Strict(inner) if hidden else inner

    TASKS.register(
        "demo-own",
        dataclasses.replace(demo, name="demo-own", open_scorer=strict, graph_trajectories=False),
    )
    try:
        admin.create_phase(
            sqlite_server.db, "demo", "own", task="demo-own", profile="demo",
            episodes_file=str(DEMO_EPISODES),
        )  # fmt: skip
        r = sqlite_server.submit(
            sqlite_server.alpha, encode(stop_predictions()), phase="own", name="p.json"
        )
        sqlite_server.work()
        got = sqlite_server.get(r.json()["id"], sqlite_server.alpha).json()
    finally:
        TASKS.unregister("demo-own")
    assert got["status"] == "failed" and got["error_kind"] == "internal"
    [message] = got["messages"]
    assert message.startswith(
        "the server could not score this submission because of a problem on the organisers' side (incident "
    )
    assert _leaks(message, "") == []
    assert "the scorer refused a file the public checks accepted" in caplog.text
    assert "stopped too far from the goal [hidden]" in caplog.text
    assert goal not in caplog.text


def test_a_touchdown_sdr_phase_names_no_panorama_by_whether_it_shows_the_target(
    sqlite_server, tmp_path
):
    """Which panoramas show the target is a label (fixture: 3 of the 9 route/panorama pairs):
    the phase asks for all 9, and neither a refusal nor a result counts or names the others."""
    from tests.tasks.touchdown.fixture import make_root

    srv = sqlite_server
    root = make_root(tmp_path / "root")
    admin.create_phase(srv.db, "demo", "sdr", task="touchdown-sdr", split="dev",
                       data_root=str(root), graphs=str(root / "touchdown" / "graph"))  # fmt: skip
    pairs = [(r, p) for r in (1, 2, 3) for p in ("main", "pre", "post")]
    full = [{"route_id": r, "pano": p, "x": 1840.0, "y": 400.0} for r, p in pairs]
    r = srv.submit(srv.alpha, encode(full[:1]), phase="sdr", name="one.json")
    srv.work()
    refused = srv.get(r.json()["id"], srv.alpha).json()
    assert refused["messages"] == [
        "one.json: 8 of 9 SDR examples (route and pre/main/post panorama) have no prediction "
        "(first: 1_pre, 1_post, 2_main, 2_pre, 2_post); profile touchdown requires all of them: "
        "this phase scores complete files only"
    ]
    r = srv.submit(srv.alpha, encode(full), phase="sdr", name="all.json")
    srv.work()
    done = srv.get(r.json()["id"], srv.alpha).json()
    assert done["status"] == "finished"
    assert not [w for w in done["result"]["summary"]["warnings"] if "ignored" in w]


def test_a_touchdown_sdr_phase_counts_the_pairs_a_submission_must_hold(sqlite_server, tmp_path):
    """The fixture's 3 routes: 9 (route, panorama) pairs asked for, 3 of them labelled."""
    from tests.tasks.touchdown.fixture import make_root

    srv = sqlite_server
    root = make_root(tmp_path / "root")
    data = admin.create_phase(srv.db, "demo", "sdr", task="touchdown-sdr", split="dev",
                              data_root=str(root), graphs=str(root / "touchdown" / "graph"))  # fmt: skip
    assert data.n_episodes == 9
    assert srv.client.get("/api/v1/challenges/demo/phases/sdr").json()["n_episodes"] == 9
    assert "touchdown-sdr · dev (9 episodes)" in srv.client.get("/c/demo/sdr").text
    admin.update_phase(srv.db, "demo", "sdr", rehash=True)
    assert srv.client.get("/api/v1/challenges/demo/phases/sdr").json()["n_episodes"] == 9
