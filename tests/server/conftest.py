"""Fixtures of the server tests: a server on SQLite or on a throwaway PostgreSQL, teams, a worker.

PostgreSQL tests start a real server on loopback with ``tests/server/pg.sh`` (Debian package
``postgresql``); without it they skip, except under CI (``CI=true``), where they fail.
"""

from __future__ import annotations

import importlib.util
import os
import secrets
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

UNDER_CI = os.environ.get("CI", "").lower() == "true"
HAVE_SERVER = all(
    importlib.util.find_spec(m) for m in ("fastapi", "sqlalchemy", "uvicorn", "httpx")
)
if not HAVE_SERVER:  # the server extra is missing: a failure under CI, skipped elsewhere
    if UNDER_CI:
        raise ImportError('the server tests need the server extra: pip install -e ".[server]"')
    collect_ignore_glob = ["test_*.py"]
else:
    from fastapi.testclient import TestClient

    from vlneval.server.app import create_app
    from vlneval.server.core.config import ServerConfig
    from vlneval.server.core.database import Database
    from vlneval.server.services import admin
    from vlneval.server.services.worker import Worker

HERE = Path(__file__).resolve().parent
PG_SH = HERE / "pg.sh"


def _unavailable(message: str) -> None:
    if UNDER_CI:
        pytest.fail(message + "; under CI the PostgreSQL tests must run")
    pytest.skip(message)


@pytest.fixture(scope="session")
def pg_server() -> Iterator[str]:
    """A PostgreSQL server on loopback for the whole session: its admin URL."""
    env = {**os.environ, "PG_FAST": "1"}
    proc = subprocess.run(["bash", str(PG_SH), "start"], capture_output=True, text=True, env=env)
    if proc.returncode != 0:
        _unavailable(f"no PostgreSQL server could be started: {proc.stderr.strip()[-500:]}")
    url, folder = proc.stdout.strip(), proc.stderr.strip().splitlines()[-1]
    yield url
    subprocess.run(["bash", str(PG_SH), "stop", folder], capture_output=True)


def fresh_pg_database(server_url: str) -> str:
    """A new empty schema on the test server; a URL whose connections use only it.

    A schema per test costs far less than a database per test (no template copy).
    """
    import sqlalchemy as sa

    name = "t_" + secrets.token_hex(6)
    engine = sa.create_engine(server_url, isolation_level="AUTOCOMMIT")
    with engine.connect() as conn:
        conn.execute(sa.text(f"CREATE SCHEMA {name}"))
    engine.dispose()
    return f"{server_url}?options=-csearch_path%3D{name}"


@dataclass
class Server:
    """A server under test: its config, app, database, client and two teams' tokens."""

    cfg: ServerConfig
    app: Any
    db: Database
    client: TestClient
    alpha: str
    beta: str
    backend: str

    def auth(self, token: str) -> dict[str, str]:
        return {"Authorization": f"Bearer {token}"}

    def submit(
        self, token: str, data: bytes, *, phase: str = "val", name: str = "preds.json", **form: Any
    ) -> Any:
        headers = self.auth(token)
        if "key" in form:
            headers["Idempotency-Key"] = form.pop("key")
        return self.client.post(
            f"/api/v1/challenges/demo/phases/{phase}/submissions",
            headers=headers,
            files={"file": (name, data, "application/json")},
            data=form,
        )

    def work(self) -> int:
        """Scores everything queued with an in-process worker."""
        return Worker(self.cfg, db=self.db, name="test-worker").run(exit_when_idle=True)

    def get(self, uid: str, token: str) -> Any:
        return self.client.get(f"/api/v1/submissions/{uid}", headers=self.auth(token))


def make_server(tmp_path: Path, url: str, backend: str, **cfg: Any) -> Server:
    """A server with challenge ``demo``, public phase ``val`` and teams alpha and beta."""
    cfg.setdefault("submit_burst", 10_000)  # rate limits have their own tests (fake clock)
    cfg.setdefault("login_burst", 10_000)
    config = ServerConfig(data_dir=tmp_path / "data", database_url=url, poll_seconds=0.05, **cfg)
    app = create_app(config)
    db = app.state.db
    admin.create_challenge(db, "demo", "Demo challenge", "the synthetic demo benchmark")
    admin.create_phase(db, "demo", "val", task="demo", title="Validation")
    alpha, beta = admin.create_team(db, "alpha"), admin.create_team(db, "beta")
    return Server(config, app, db, TestClient(app), alpha, beta, backend)


@pytest.fixture(params=["sqlite", "postgresql"])
def server(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Server]:
    """A demo server on SQLite and on PostgreSQL."""
    if request.param == "sqlite":
        url = f"sqlite:///{tmp_path / 'server.sqlite3'}"
    else:
        url = fresh_pg_database(request.getfixturevalue("pg_server"))
    srv = make_server(tmp_path, url, request.param)
    yield srv
    srv.client.close()
    srv.db.dispose()


@pytest.fixture
def sqlite_server(tmp_path: Path) -> Iterator[Server]:
    """A demo server on SQLite only."""
    srv = make_server(tmp_path, f"sqlite:///{tmp_path / 'server.sqlite3'}", "sqlite")
    yield srv
    srv.client.close()
    srv.db.dispose()
