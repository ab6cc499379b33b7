"""A bounded load on a server on loopback: N concurrent clients upload M files, then every
accepted submission is checked to be scored exactly once with the right result.

Used by ``tests/server/test_server_load.py`` (small) and ``benchmarks/bench_server.py`` (200
real R2R files). Only 127.0.0.1 is ever contacted; the loop is bounded in count and time.
"""

from __future__ import annotations

import os
import signal
import statistics
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from vlneval.server.core.database import Database
from vlneval.server.core.migrate import upgrade
from vlneval.server.services import admin


@dataclass
class Load:
    """What to send: files (with their expected metrics) round-robin over teams."""

    files: list[tuple[str, Path]]  # (upload name, file)
    expected: dict[str, dict[str, Any] | None]  # by upload name; None: the file must be refused
    n_clients: int
    n_submissions: int
    timeout: float = 600.0


@dataclass
class Outcome:
    """What happened, and the figures."""

    accepted: list[tuple[str, str]] = field(default_factory=list)  # (uid, file name)
    refused: list[int] = field(default_factory=list)
    upload_latency: list[float] = field(default_factory=list)
    upload_wall: float = 0.0
    drain_wall: float = 0.0
    figures: dict[str, Any] = field(default_factory=dict)


def start_server(
    data: Path, url: str, workers: int, port: int, *extra: str
) -> subprocess.Popen[bytes]:
    """``vlneval serve`` on 127.0.0.1:port with ``workers`` workers (waits until it answers)."""
    env = {**os.environ, "VLNEVAL_SERVER_DATA": str(data), "VLNEVAL_DATABASE_URL": url}
    cmd = [
        sys.executable, "-m", "vlneval", "serve", "--port", str(port), "--workers", str(workers),
        "--poll-seconds", "0.05", "--max-pending", "100000", "--log-level", "warning", *extra,
    ]  # fmt: skip
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(proc.stderr.read().decode()[-3000:])  # type: ignore[union-attr]
        try:
            if httpx.get(f"http://127.0.0.1:{port}/api/v1/health", timeout=1).status_code == 200:
                return proc
        except httpx.TransportError:
            time.sleep(0.1)
    proc.kill()
    raise RuntimeError("vlneval serve did not start")


def stop_server(proc: subprocess.Popen[bytes]) -> None:
    """SIGTERM, then wait (the workers stop with it)."""
    proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(60)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def setup(url: str, n_teams: int, phase: dict[str, Any]) -> list[str]:
    """Schema, challenge ``load``, phase ``p`` and ``n_teams`` teams; returns their tokens."""
    upgrade(url)
    db = Database(url)
    admin.create_challenge(db, "load", "Load test")
    admin.create_phase(db, "load", "p", **phase)
    tokens = [admin.create_team(db, f"team{k:02d}") for k in range(n_teams)]
    db.dispose()
    return tokens


def upload(base: str, tokens: list[str], load: Load) -> Outcome:
    """Uploads ``load.n_submissions`` files from ``load.n_clients`` threads."""
    out = Outcome()
    lock = threading.Lock()
    counter = iter(range(load.n_submissions))
    blobs = [(name, p.read_bytes()) for name, p in load.files]

    def client(k: int) -> None:
        with httpx.Client(base_url=base, timeout=120) as http:
            while True:
                with lock:
                    i = next(counter, None)
                if i is None:
                    return
                name, data = blobs[i % len(blobs)]
                token = tokens[i % len(tokens)]
                t0 = time.perf_counter()
                r = http.post(
                    "/api/v1/challenges/load/phases/p/submissions",
                    headers={"Authorization": f"Bearer {token}", "Idempotency-Key": f"load-{i}"},
                    files={"file": (name, data, "application/octet-stream")},
                )
                dt = time.perf_counter() - t0
                with lock:
                    out.upload_latency.append(dt)
                    if r.status_code == 202:
                        out.accepted.append((r.json()["id"], name))
                    else:
                        out.refused.append(r.status_code)

    t0 = time.perf_counter()
    threads = [threading.Thread(target=client, args=(k,)) for k in range(load.n_clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    out.upload_wall = time.perf_counter() - t0
    return out


def drain(url: str, out: Outcome, timeout: float) -> None:
    """Waits until every accepted submission is finished or failed."""
    from sqlalchemy import func, select

    from vlneval.server.models import Submission

    db = Database(url)
    t0 = time.perf_counter()
    deadline = time.monotonic() + timeout
    try:
        while True:
            with db.read() as s:
                pending = s.scalar(
                    select(func.count()).where(Submission.status.in_(("queued", "running")))
                )
            if not pending:
                break
            if time.monotonic() > deadline:
                raise TimeoutError(f"{pending} submissions still pending after {timeout:.0f} s")
            time.sleep(0.1)
    finally:
        db.dispose()
    out.drain_wall = time.perf_counter() - t0


def verify(url: str, out: Outcome, load: Load) -> dict[str, Any]:
    """Checks exactly-once scoring and the results; returns the figures."""
    from sqlalchemy import select

    from vlneval.server.models import Result, Submission

    db = Database(url)
    with db.read() as s:
        rows = {sub.uid: sub for sub in s.scalars(select(Submission))}
        results: dict[int, list[Result]] = {}
        for res in s.scalars(select(Result)):
            results.setdefault(res.submission_id, []).append(res)
    db.dispose()
    uids = [u for u, _ in out.accepted]
    assert len(set(uids)) == len(uids) == len(rows), "a submission was lost or duplicated"
    for uid, name in out.accepted:
        sub = rows[uid]
        assert sub.attempts == 1, f"{uid} was claimed {sub.attempts} times"
        expected = load.expected[name]
        got = results.get(sub.id, [])
        if expected is None:
            assert sub.status == "failed" and sub.error_kind == "invalid" and got == [], uid
        else:
            assert sub.status == "finished" and len(got) == 1, (uid, sub.status, sub.messages)
            assert got[0].metrics == expected, uid
    return _figures(out, list(rows.values()))


def _pct(values: list[float], q: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(round(q * (len(values) - 1))))]


def _figures(out: Outcome, subs: list[Any]) -> dict[str, Any]:
    e2e = [(s.finished_at - s.created_at).total_seconds() for s in subs]
    first = min(s.started_at for s in subs if s.started_at)
    last = max(s.finished_at for s in subs if s.finished_at)
    scoring_wall = (last - first).total_seconds()
    lat = out.upload_latency
    return {
        "accepted": len(out.accepted),
        "refused": len(out.refused),
        "finished": sum(s.status == "finished" for s in subs),
        "failed_invalid": sum(s.status == "failed" and s.error_kind == "invalid" for s in subs),
        "upload_wall_s": round(out.upload_wall, 2),
        "uploads_per_s": round(len(lat) / out.upload_wall, 1),
        "upload_latency_ms": {
            "p50": round(1000 * statistics.median(lat), 1),
            "p95": round(1000 * _pct(lat, 0.95), 1),
            "p99": round(1000 * _pct(lat, 0.99), 1),
            "max": round(1000 * max(lat), 1),
        },
        "scoring_wall_s": round(scoring_wall, 2),
        "scored_per_s": round(len(subs) / scoring_wall, 2) if scoring_wall > 0 else None,
        "end_to_end_s": {
            "p50": round(statistics.median(e2e), 2),
            "p95": round(_pct(e2e, 0.95), 2),
            "max": round(max(e2e), 2),
        },
    }
