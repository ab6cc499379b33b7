"""A worker killed with SIGKILL while it scores: after the lease expires the submission is
claimed again and finishes once, with the right result; SIGTERM lets the current one finish."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest
from sqlalchemy import func, select

from tests.server.helpers import DEMO_PREDICTIONS
from vlneval.evaluation import evaluate
from vlneval.server.models import Result, Submission
from vlneval.server.services.leaderboard import public_value
from vlneval.server.services.worker import FAULT_DELAY_ENV

LEASE = 1.5


def _worker(srv, *args: str, delay: float = 0.0) -> subprocess.Popen:
    env = {**os.environ, **srv.cfg.to_env(), FAULT_DELAY_ENV: str(delay)}
    cmd = [
        sys.executable,
        "-m",
        "vlneval",
        "worker",
        "--lease-seconds",
        str(LEASE),
        "--poll-seconds",
        "0.1",
        *args,
    ]
    return subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


@pytest.fixture
def procs():
    """Worker processes a test starts; any still running at the end is killed."""
    started: list[subprocess.Popen] = []
    yield started
    for p in started:
        if p.poll() is None:
            p.kill()
            p.wait()


def _row(srv, uid: str) -> Submission:
    with srv.db.read() as s:
        return s.scalar(select(Submission).where(Submission.uid == uid))


def _wait_until(predicate, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)


def test_sigkill_while_scoring_then_restart_finishes_once_with_the_right_result(server, procs):
    uid = server.submit(server.alpha, DEMO_PREDICTIONS.read_bytes()).json()["id"]
    doomed = _worker(server, delay=60)
    procs.append(doomed)
    _wait_until(lambda: _row(server, uid).status == "running")
    row = _row(server, uid)
    assert row.claimed_by.endswith(f":{doomed.pid}") and row.attempts == 1
    doomed.send_signal(signal.SIGKILL)
    assert doomed.wait(10) == -signal.SIGKILL
    time.sleep(0.2)
    row = _row(server, uid)
    assert row.status == "running" and row.lease_expires_at is not None  # held by a dead worker
    restarted = _worker(server, "--max-jobs", "1")
    procs.append(restarted)
    assert restarted.wait(120) == 0, restarted.stderr.read().decode()[-2000:]
    row = _row(server, uid)
    assert row.status == "finished" and row.attempts == 2
    assert row.claimed_by.endswith(f":{restarted.pid}")
    with server.db.read() as s:
        assert s.scalar(select(func.count()).select_from(Result)) == 1
    with server.db.read() as s:  # the organisers' full values; the team sees them rounded
        assert (
            s.scalars(select(Result)).one().metrics
            == evaluate("demo", None, DEMO_PREDICTIONS).metrics
        )
    got = server.get(uid, server.alpha).json()["result"]["metrics"]
    assert got == {
        k: public_value(k, v) for k, v in evaluate("demo", None, DEMO_PREDICTIONS).metrics.items()
    }


def test_sigterm_finishes_the_current_submission_then_stops(sqlite_server, procs):
    srv = sqlite_server
    uid = srv.submit(srv.alpha, DEMO_PREDICTIONS.read_bytes()).json()["id"]
    second = srv.submit(srv.alpha, DEMO_PREDICTIONS.read_bytes()).json()["id"]
    proc = _worker(srv, delay=2)
    procs.append(proc)
    _wait_until(lambda: _row(srv, uid).status == "running")
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(60) == 0
    assert _row(srv, uid).status == "finished" and _row(srv, uid).attempts == 1
    assert _row(srv, second).status == "queued"  # not started: left for the next worker


WRITING_WORKER = """
import sys, time
from pathlib import Path
import vlneval.io.writer as vio
from vlneval.server.services import worker
folder, fill, score = Path(sys.argv[1]), vio._Pending._fill, worker.Worker._score
def slow_fill(self, fd):  # the output is being written when the signal comes
    fill(self, fd)
    (folder / "ready").write_text("x")
    time.sleep(2)
def writing_score(self, c):
    vio.write_outputs([(folder / "out.json", b"written")])
    return score(self, c)
vio._Pending._fill, worker.Worker._score = slow_fill, writing_score
sys.argv = ["vlneval", "worker", "--lease-seconds", "1.5", "--poll-seconds", "0.1"]
from vlneval.cli.main import console
console()
"""


def test_sigterm_while_an_output_is_written_lets_it_finish_then_stops(
    sqlite_server, procs, tmp_path
):
    """The worker's own handler stays in place during the write: the output is complete, the
    submission finished once, the next one left queued, and the worker exits 0 (not 143)."""
    srv = sqlite_server
    uid = srv.submit(srv.alpha, DEMO_PREDICTIONS.read_bytes()).json()["id"]
    second = srv.submit(srv.alpha, DEMO_PREDICTIONS.read_bytes()).json()["id"]
    env = {**os.environ, **srv.cfg.to_env()}
    cmd = [sys.executable, "-c", WRITING_WORKER, str(tmp_path)]
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    procs.append(proc)
    _wait_until(lambda: (tmp_path / "ready").exists())
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(60) == 0, proc.stderr.read().decode()[-2000:]
    assert (tmp_path / "out.json").read_bytes() == b"written"
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".")) == []
    assert _row(srv, uid).status == "finished" and _row(srv, uid).attempts == 1
    assert _row(srv, second).status == "queued"
    with srv.db.read() as s:
        assert s.scalar(select(func.count()).select_from(Result)) == 1
