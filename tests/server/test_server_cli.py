"""``vlneval admin``, ``vlneval serve`` (with its worker) and ``vlneval submit``, end to end."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import httpx
import pytest

from tests.server.helpers import DEMO_PREDICTIONS, encode, stop_predictions
from tests.server.live import free_port
from vlneval.cli.main import main


def _admin(capsys, data: str, *args: str) -> str:
    assert main(["admin", "--data-dir", data, *args]) == 0
    return capsys.readouterr().out


def test_admin_commands(tmp_path, capsys):
    data = str(tmp_path / "srv")
    assert _admin(capsys, data, "migrate") == "database at schema revision 0003\n"
    assert (
        _admin(capsys, data, "create-challenge", "--slug", "demo", "--title", "Demo")
        == "created challenge demo\n"
    )
    out = _admin(
        capsys, data, "create-phase", "--challenge", "demo", "--slug", "val", "--task", "demo",
        "--leaderboard", "private", "--daily-quota", "3", "--closes", "2999-01-01T00:00:00+01:00",
    )  # fmt: skip
    assert out == (
        "created phase demo/val: 36 episodes\n"
        "  options none; quotas 3 a day, none in all; opens none, closes 2998-12-31T23:00:00Z\n"
    )
    out = _admin(capsys, data, "create-team", "--name", "alpha")
    token = out.splitlines()[-1]
    assert out.startswith("created team alpha; its API token") and token.startswith("vlt_")
    listing = _admin(capsys, data, "list")
    assert (
        "phase val: demo val profile demo, 36 episodes, private leaderboard by SPL, 0 submission(s)"
        in listing
    )
    assert f"team alpha (token {token[:8]}…)" in listing
    assert token not in listing
    _admin(
        capsys,
        data,
        "update-phase",
        "--challenge",
        "demo",
        "--phase",
        "val",
        "--leaderboard",
        "public",
    )
    assert "public leaderboard" in _admin(capsys, data, "list")
    new = _admin(capsys, data, "rotate-token", "--team", "alpha").splitlines()[-1]
    assert new != token and new.startswith("vlt_")
    assert main(["admin", "--data-dir", data, "create-team", "--name", "alpha"]) == 2
    assert "team 'alpha' already exists" in capsys.readouterr().err
    assert (
        main(
            [
                "admin",
                "--data-dir",
                data,
                "create-phase",
                "--challenge",
                "demo",
                "--slug",
                "x",
                "--task",
                "dmeo",
            ]
        )
        == 2
    )
    assert "did you mean 'demo'" in capsys.readouterr().err


def test_serve_and_submit_end_to_end(tmp_path, capsys):
    data = str(tmp_path / "srv")
    _admin(capsys, data, "create-challenge", "--slug", "demo")
    _admin(capsys, data, "create-phase", "--challenge", "demo", "--slug", "val", "--task", "demo")
    token = _admin(capsys, data, "create-team", "--name", "alpha").splitlines()[-1]
    port = free_port()
    env = {**os.environ, "VLNEVAL_SERVER_DATA": data}
    env.pop("VLNEVAL_DATABASE_URL", None)
    serve = subprocess.Popen(
        [sys.executable, "-m", "vlneval", "serve", "--port", str(port), "--workers", "1",
         "--poll-seconds", "0.1", "--log-level", "warning"],
        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
    )  # fmt: skip
    url = f"http://127.0.0.1:{port}"
    try:
        _wait_for(url, serve)
        common = [
            "submit",
            "--server",
            url,
            "--token",
            token,
            "--challenge",
            "demo",
            "--phase",
            "val",
        ]
        code = main(
            [
                *common,
                "--predictions",
                str(DEMO_PREDICTIONS),
                "--wait",
                "--timeout",
                "120",
                "--method",
                "mix",
            ]
        )
        out, err = capsys.readouterr()
        assert code == 0, err
        assert "demo val · profile demo v1 · 36 episodes" in out and "47.08" in out
        assert err.startswith("submitted: ")
        uid = err.split()[1]
        record = tmp_path / "sub.json"
        assert (
            main(
                [
                    "submit",
                    "--server",
                    url,
                    "--token",
                    token,
                    "--status",
                    uid,
                    "--json",
                    str(record),
                ]
            )
            == 0
        )
        assert "47.08" in capsys.readouterr().out
        assert json.loads(record.read_text())["status"] == "finished"
        bad = tmp_path / "short.json"
        bad.write_bytes(encode(stop_predictions()[:-1]))
        code = main([*common, "--predictions", str(bad), "--wait", "--timeout", "120"])
        out, err = capsys.readouterr()
        assert code == 2
        assert "error: short.json: 1 of 36 episodes have no prediction (first: 303_2)" in err
        bomb = tmp_path / "deep.json"
        bomb.write_bytes(b"[" * 100 + b"]" * 100)
        assert main([*common, "--predictions", str(bomb)]) == 2
        assert "nests lists and objects more than 32 levels deep" in capsys.readouterr().err
        assert main([*common, "--token", "vlt_nope", "--predictions", str(bad)]) == 2
        assert "API token is not valid" in capsys.readouterr().err
        board = httpx.get(f"{url}/api/v1/challenges/demo/phases/val/leaderboard").json()
        assert [(e["team"], e["method"]) for e in board["entries"]] == [("alpha", "mix")]
    finally:
        serve.send_signal(signal.SIGTERM)
        assert serve.wait(60) == 0
    from sqlalchemy import select

    from vlneval.server.core.database import Database
    from vlneval.server.models import Submission

    db = Database(f"sqlite:///{data}/vlneval.sqlite3")
    with db.read() as s:
        workers = {int(w.rsplit(":", 1)[1]) for w in s.scalars(select(Submission.claimed_by)) if w}
    db.dispose()
    assert len(workers) == 1
    for pid in workers:  # the worker stopped with the server
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)


def _wait_for(url: str, proc: subprocess.Popen) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            pytest.fail(proc.stderr.read().decode()[-2000:])
        try:
            if httpx.get(url + "/api/v1/health", timeout=1).status_code == 200:
                return
        except httpx.TransportError:
            time.sleep(0.1)
    pytest.fail("vlneval serve did not start")


def test_submit_needs_a_token_and_reports_an_unreachable_server(tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("VLNEVAL_TOKEN", raising=False)
    args = ["submit", "--server", f"http://127.0.0.1:{free_port()}", "--challenge", "d", "--phase", "v",
            "--predictions", str(DEMO_PREDICTIONS)]  # fmt: skip
    assert main(args) == 2
    assert "a team token is needed" in capsys.readouterr().err
    monkeypatch.setattr("vlneval.server.client.RETRIES", 1)
    assert main([*args, "--token", "vlt_x"]) == 2
    assert "cannot reach http://127.0.0.1:" in capsys.readouterr().err


def _children(pid: int) -> list[int]:
    from pathlib import Path

    out = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid:
            out.append(int(stat.parent.name))
    return out


def test_workers_exit_when_serve_is_killed(tmp_path, capsys):
    from pathlib import Path

    data = str(tmp_path / "data")
    _admin(capsys, data, "migrate")
    port = free_port()
    env = {**os.environ, "VLNEVAL_SERVER_DATA": data}
    env.pop("VLNEVAL_DATABASE_URL", None)
    serve = subprocess.Popen(
        [sys.executable, "-m", "vlneval", "serve", "--port", str(port), "--workers", "1",
         "--poll-seconds", "0.1", "--log-level", "warning"],
        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
    )  # fmt: skip
    _wait_for(f"http://127.0.0.1:{port}", serve)
    deadline = time.monotonic() + 30
    while not (workers := _children(serve.pid)) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert workers
    serve.kill()
    serve.wait()
    deadline = time.monotonic() + 20
    alive = workers
    while alive and time.monotonic() < deadline:
        time.sleep(0.2)
        alive = [
            p
            for p in alive
            if os.path.exists(f"/proc/{p}")
            and "Z" not in Path(f"/proc/{p}/stat").read_text().rsplit(")", 1)[1].split()[0]
        ]
    assert alive == []
