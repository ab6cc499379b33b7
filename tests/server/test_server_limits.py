"""Bounded cost: step budgets, refused-file limits, rate limits (on a fake clock), idempotency
keys per phase, and the worker's peak memory on the worst file a real phase accepts."""

from __future__ import annotations

import datetime as dt
import json
import random
import subprocess
import sys
import textwrap

import pytest

from tests.server.conftest import make_server
from tests.server.helpers import encode, stop_predictions
from vlneval.errors import InvalidInputError
from vlneval.evaluation import evaluate
from vlneval.server.core.ratelimit import RateLimiter
from vlneval.server.services import admin, uploads
from vlneval.server.services.budget import StepBudget, TooManyRecords, check_steps


class FakeClock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_a_trajectory_past_the_phase_step_limit_is_refused_at_once(tmp_path):
    srv = make_server(
        tmp_path, f"sqlite:///{tmp_path / 'db.sqlite3'}", "sqlite", max_trajectory_steps=5
    )
    records = stop_predictions()
    records[3]["trajectory"] = records[3]["trajectory"] * 50
    r = srv.submit(srv.alpha, encode(records), name="long.json")
    assert r.status_code == 422, r.text
    assert r.json()["problems"] == [
        'long.json: instr_id "101_0": holds 203 JSON values, more than a trajectory of at '
        "most 5 steps needs (this phase's limit per trajectory; 1 of the file's records is over "
        "it)"
    ]
    srv.client.close()
    srv.db.dispose()


def test_every_record_past_the_step_limit_is_named_by_its_id(tmp_path):
    """A team fixes every over-long record at once: each is named by its id (not by a 0-based
    record number), and the count says how many there are; the keyed form by its key."""
    budget = StepBudget(n_episodes=10, max_steps=5, mean_steps=64)
    records = stop_predictions()
    for k in (3, 7):
        records[k]["trajectory"] = records[k]["trajectory"] * 50
    with pytest.raises(InvalidInputError) as err:
        check_steps(encode(records), "long.json", budget)
    limit = "more than a trajectory of at most 5 steps needs (this phase's limit per trajectory"
    assert [str(p) for p in err.value.problems] == [
        f'long.json: instr_id "{records[k]["instr_id"]}": holds {n} JSON values, {limit}; 2 of '
        "the file's records are over it)"
        for k, n in ((3, 203), (7, 203))
    ]
    many = [  # thousands over: the first 20 named, the rest counted
        {**rec, "trajectory": rec["trajectory"] * 50} for rec in stop_predictions() * 300
    ]
    with pytest.raises(InvalidInputError) as err:
        check_steps(encode(many), "long.json", StepBudget(len(many), 5, 64))
    assert len(err.value.problems) == 21
    assert str(err.value.problems[-1]) == f"long.json: {len(many) - 20:,} more records are over it"
    keyed = {"12": [{"position": [0.0, 0.0, 0.0], "heading": 0.0, "stop": False}] * 100}
    with pytest.raises(InvalidInputError) as err:
        check_steps(json.dumps(keyed).encode(), "ce.json", budget)
    assert str(err.value) == (
        f'error: ce.json: episode_id "12": holds 701 JSON values, {limit}; 1 of the file\'s '
        "records is over it)"
    )


def test_a_keyed_file_with_nan_names_its_over_long_record_by_its_key():
    """A NaN (which json.dumps writes) does not make the budget name a keyed file's record by
    its position: the keys are read from the same records that were counted."""
    step = {"position": [0.0, 0.0, 0.0], "heading": 0.0, "stop": False}
    keyed = {"7": [step], "12": [{**step, "heading": float("nan")}] * 100}
    budget = StepBudget(n_episodes=10, max_steps=5, mean_steps=64)
    with pytest.raises(InvalidInputError) as err:
        check_steps(json.dumps(keyed).encode(), "ce.json", budget)
    assert str(err.value) == (
        'error: ce.json: episode_id "12": holds 701 JSON values, more than a trajectory of at '
        "most 5 steps needs (this phase's limit per trajectory; 1 of the file's records is over "
        "it)"
    )


def test_a_file_with_too_many_records_is_held_once(tmp_path):
    """The refusal carries the file's own text for the split check, not a copy of its head;
    a memory-mapped file's text is never kept beyond the check."""
    budget = StepBudget(n_episodes=1, max_steps=2, mean_steps=2)  # at most 102 records
    text = encode(stop_predictions() * 40)
    with pytest.raises(TooManyRecords) as err:
        check_steps(text, "p.json", budget)
    assert err.value.text is text
    path = tmp_path / "p.json"
    path.write_bytes(text)
    with pytest.raises(TooManyRecords) as err:
        uploads.check_stored(path, "p.json", budget=budget)
    assert err.value.text == b""


@pytest.mark.parametrize("indent", [None, 1])
@pytest.mark.parametrize(
    ("value", "written"), [(float("nan"), "nan"), (float("inf"), "inf"), (-float("inf"), "-inf")]
)
def test_a_nan_or_infinity_gets_the_readers_message_not_an_invented_budget(
    tmp_path, value, written, indent
):
    """json.dumps writes NaN and Infinity: the budget counts them as numbers (it once split such
    a file into lines and refused one huge "record" or hundreds of "records")."""
    srv = make_server(
        tmp_path, f"sqlite:///{tmp_path / 'db.sqlite3'}", "sqlite", max_trajectory_steps=5
    )
    records = stop_predictions()
    records[2]["trajectory"][0][1] = value
    data = json.dumps(records, indent=indent).encode()
    r = srv.submit(srv.alpha, data, name="agent.json")
    assert r.status_code == 202, r.text
    srv.work()
    expected = f'instr_id "100_2": trajectory[0]: heading is {written} (must be finite)'
    assert srv.get(r.json()["id"], srv.alpha).json()["messages"] == [f"agent.json: {expected}"]
    path = tmp_path / "agent.json"
    path.write_bytes(data)
    with pytest.raises(InvalidInputError) as cli:  # what vlneval score says of the same file
        evaluate("demo", "val", path)
    assert str(cli.value) == f"error: {path}: {expected}"
    records[3]["trajectory"] = records[3]["trajectory"] * 50  # the budget's bounds still hold
    r = srv.submit(srv.alpha, json.dumps(records, indent=indent).encode(), name="long.json")
    assert r.status_code == 422, r.text
    assert r.json()["problems"] == [
        'long.json: instr_id "101_0": holds 203 JSON values, more than a trajectory of at '
        "most 5 steps needs (this phase's limit per trajectory; 1 of the file's records is over "
        "it)"
    ]
    srv.client.close()
    srv.db.dispose()


def test_the_budget_counts_json_lines_and_leaves_a_file_that_is_not_json_to_the_reader():
    budget = StepBudget(n_episodes=1, max_steps=2, mean_steps=2)  # at most 102 records
    check_steps(b"[\n" + b"1,\n" * 200 + b"]", "p.json", budget)  # a trailing comma: not JSON
    check_steps(b'{"a": 1}\n' * 200 + b'{"a": ', "p.jsonl", budget)  # a line cut short
    for text in (b'{"a": 1}\n' * 200, b'{"a": NaN}\n' * 200):  # JSON lines are still counted
        with pytest.raises(InvalidInputError) as err:
            check_steps(text, "p.jsonl", budget)
        assert str(err.value) == (
            "error: p.jsonl: holds 200 records; this phase has 1 episodes and accepts at most "
            "102 records"
        )


def test_check_upload_takes_the_budget_and_scoring_measures_the_steps_once(tmp_path, monkeypatch):
    budget = StepBudget(n_episodes=1, max_steps=2, mean_steps=2)
    text = b'{"a": 1}\n' * 200
    with pytest.raises(InvalidInputError) as err:
        uploads.check_upload(text, "p.jsonl", None, budget)
    assert str(err.value) == (
        "error: p.jsonl: holds 200 records; this phase has 1 episodes and accepts at most "
        "102 records"
    )
    assert uploads.check_upload(text, "p.jsonl") == text  # no budget: not measured
    srv = make_server(tmp_path, f"sqlite:///{tmp_path / 'db.sqlite3'}", "sqlite")
    calls: list[str] = []

    def counted(text, name, budget):
        calls.append(name)
        check_steps(text, name, budget)

    monkeypatch.setattr(uploads, "check_steps", counted)
    r = srv.submit(srv.alpha, encode(stop_predictions()), name="agent.json")
    assert r.status_code == 202, r.text
    assert calls == ["agent.json"]  # the upload's check
    srv.work()
    assert srv.get(r.json()["id"], srv.alpha).json()["status"] == "finished"
    assert calls == ["agent.json", "agent.json"]  # and the scoring path's, once
    srv.client.close()
    srv.db.dispose()


def test_refused_files_have_their_own_daily_limit(tmp_path):
    srv = make_server(
        tmp_path, f"sqlite:///{tmp_path / 'db.sqlite3'}", "sqlite", max_refused_per_day=2
    )
    bad = encode([{"instr_id": "100_0", "trajectory": [["nosuchviewpoint", 0, 0]]}])
    for _ in range(2):
        assert srv.submit(srv.alpha, bad).status_code == 202
        srv.work()
    r = srv.submit(srv.alpha, bad)
    assert r.status_code == 429
    assert r.json()["detail"].startswith(
        "2 of your team's files were refused today (UTC) in phase val, this server's daily limit"
    )
    tomorrow = (dt.datetime.now(dt.timezone.utc) + dt.timedelta(days=1)).strftime("%Y-%m-%d")
    assert r.json()["detail"] == (
        "2 of your team's files were refused today (UTC) in phase val, this server's daily limit "
        "of refused files; check a file first with `vlneval validate --task demo --split val "
        "--data-root DIR --predictions FILE`, which runs the phase's checks. The limit resets at "
        f"{tomorrow}T00:00:00Z"
    )
    assert srv.submit(srv.beta, bad).status_code == 202  # another team is not affected
    srv.client.close()
    srv.db.dispose()


def test_submissions_and_logins_are_rate_limited(sqlite_server):
    srv, clock = sqlite_server, FakeClock()
    srv.app.state.submit_limiter = RateLimiter(rate=6, burst=2, clock=clock)
    srv.app.state.login_limiter = RateLimiter(rate=6, burst=2, clock=clock)
    data = encode(stop_predictions())
    assert [srv.submit(srv.alpha, data).status_code for _ in range(2)] == [202, 202]
    r = srv.submit(srv.alpha, data)
    assert r.status_code == 429 and r.headers["Retry-After"] == "10"
    assert srv.submit(srv.beta, data).status_code == 202  # per token
    clock.now += 10
    assert srv.submit(srv.alpha, data).status_code == 202
    codes = [srv.client.post("/login", data={"token": "wrong"}).status_code for _ in range(3)]
    assert codes == [401, 401, 429]


def test_an_idempotency_key_is_scoped_to_its_phase(sqlite_server):
    srv = sqlite_server
    admin.create_phase(srv.db, "demo", "test", task="demo", title="Test")
    data = encode(stop_predictions())
    a = srv.submit(srv.alpha, data, key="run-1")
    b = srv.submit(srv.alpha, data, phase="test", key="run-1")
    again = srv.submit(srv.alpha, data, phase="test", key="run-1")
    assert (a.status_code, b.status_code, again.status_code) == (202, 202, 200)
    assert a.json()["id"] != b.json()["id"] == again.json()["id"]
    assert b.json()["phase"] == "test"


WORST = textwrap.dedent(
    r"""
    import gzip, json, re, sys, time
    from pathlib import Path

    def peak_kib():
        # This process's own peak (VmHWM, reset at exec); ru_maxrss would also count the
        # parent's resident size at fork, which a large test process inflates.
        status = open("/proc/self/status").read()
        return int(re.search(r"VmHWM:\s+(\d+)", status).group(1))
    from tests.server.conftest import make_server
    from vlneval.graph.store import GraphStore
    from vlneval.server.services import admin
    from vlneval.server.services.budget import StepBudget

    root, tmp = Path(sys.argv[1]), Path(sys.argv[2])
    srv = make_server(tmp, f"sqlite:///{tmp / 'db.sqlite3'}", "sqlite")
    admin.create_phase(srv.db, "demo", "vu", task="r2r", split="val_unseen",
        episodes_file=str(root / "r2r/R2R_val_unseen.json.gz"),
        graphs=str(root / "matterport3d/connectivity"))
    eps = json.loads(gzip.decompress((root / "r2r/R2R_val_unseen.json.gz").read_bytes()))
    graphs = GraphStore(root / "matterport3d/connectivity")
    budget = StepBudget.of_phase(2349, srv.cfg)
    steps = budget.mean_steps
    records = []
    for ep in eps:
        g = graphs.graph(ep["scan"])
        s = ep["path"][0]
        n = g.ids[g.neighbours(g.index[s])[0]]
        walk = [[s if k % 2 == 0 else n, 0.0, 0.0] for k in range(steps)]
        for k in range(3):
            records.append({"instr_id": f"{ep['path_id']}_{k}", "trajectory": walk})
    text = json.dumps(records).encode()
    pad = (budget.max_bytes - len(text)) // len(records) - 40
    for r in records:
        r["note"] = "x" * min(pad, 60000)
    text = json.dumps(records).encode()
    r = srv.submit(srv.alpha, gzip.compress(text), phase="vu", name="worst.json.gz")
    assert r.status_code == 202, r.text
    before = peak_kib()
    t = time.perf_counter()
    srv.work()
    got = srv.get(r.json()["id"], srv.alpha).json()
    print(json.dumps({"status": got["status"], "messages": got["messages"][:2],
        "bytes": len(text), "steps": steps * len(records), "seconds": time.perf_counter() - t,
        "peak_kib": peak_kib(), "before_kib": before}))
    """
)


def test_the_worst_accepted_real_file_stays_within_the_memory_bound(data_root, tmp_path):
    """The largest file an R2R val_unseen phase accepts (every trajectory at the mean step
    limit, every record padded to the byte budget) is scored within 1 GiB of peak memory."""
    out = subprocess.run(
        [sys.executable, "-c", WORST, str(data_root), str(tmp_path)],
        capture_output=True, text=True, check=True, cwd=str(__import__("pathlib").Path(__file__).parents[2]),
    )  # fmt: skip
    report = json.loads(out.stdout.strip().splitlines()[-1])
    print(report)
    assert report["status"] == "finished", report
    assert report["peak_kib"] < 1024 * 1024


def test_health_details_only_with_the_admin_token(tmp_path):
    srv = make_server(
        tmp_path, f"sqlite:///{tmp_path / 'db.sqlite3'}", "sqlite", admin_token="adm-secret"
    )
    assert srv.client.get("/api/v1/health").json()["queue"] is None
    assert srv.client.get("/api/v1/health", headers=srv.auth(srv.alpha)).json()["queue"] is None
    h = srv.client.get("/api/v1/health", headers={"Authorization": "Bearer adm-secret"}).json()
    assert h["queue"]["queued"] == 0
    srv.client.close()
    srv.db.dispose()


def test_a_file_past_the_phase_budget_is_told_the_phase_limit_not_to_gzip_it(tmp_path):
    """The phase's budget is below the server's 256 MiB: a plain file is not told to gzip
    itself, nor its gzip to upload the plain file (each would be refused by the same bound)."""
    import gzip

    srv = make_server(tmp_path, f"sqlite:///{tmp_path / 'db.sqlite3'}", "sqlite")
    text = encode(stop_predictions())
    big = text[:-1] + b" " * ((17 << 20) - len(text)) + b"]"
    r = srv.submit(srv.alpha, big, name="agent.json")
    assert r.status_code == 422, r.text
    assert r.json()["problems"] == [
        "agent.json: is 17,825,792 bytes of JSON; a file for the 36 episodes of this phase "
        "needs at most 1,165,312"
    ]
    r = srv.submit(srv.alpha, gzip.compress(big), name="agent.json.gz")
    assert r.status_code == 422, r.text
    assert r.json()["problems"] == [
        "agent.json.gz: decompresses to more than 1,165,312 bytes of JSON, the most a file for "
        "the 36 episodes of this phase needs (is it a gzip bomb?)"
    ]
    # an ordinary file (another split's 2,349 records, compressed threefold) is no bomb
    rng = random.Random(0)
    steps = [[[f"{rng.getrandbits(128):032x}", 0.0, 0.0] for _ in range(12)] for _ in range(2349)]
    other = [{"instr_id": f"{k}_0", "trajectory": t} for k, t in enumerate(steps)]
    r = srv.submit(srv.alpha, gzip.compress(encode(other)), name="val_unseen.json.gz")
    assert r.status_code == 422, r.text
    assert r.json()["problems"] == [
        "val_unseen.json.gz: decompresses to more than 1,165,312 bytes of JSON, the most a file "
        "for the 36 episodes of this phase needs"
    ]
    srv.client.close()
    srv.db.dispose()
