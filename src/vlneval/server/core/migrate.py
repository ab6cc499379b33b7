"""Schema migrations with Alembic, configured in code (no ``alembic.ini`` needed).

``vlneval serve`` and ``vlneval admin`` upgrade the database to the newest revision before they
start; workers wait until it is there. Concurrent upgrades are serialised: by an advisory lock on
PostgreSQL (see ``migrations/env.py``) and by a lock file next to an SQLite database.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator
from pathlib import Path

from sqlalchemy import create_engine
from sqlalchemy.engine import make_url

from vlneval.errors import VLNEvalError

__all__ = ["alembic_config", "head_revision", "current_revision", "upgrade", "wait_for_schema"]

MIGRATIONS = Path(__file__).resolve().parent.parent / "migrations"


def alembic_config(url: str):  # type: ignore[no-untyped-def]
    """An Alembic ``Config`` for the database at ``url``."""
    from alembic.config import Config  # deferred: alembic

    cfg = Config()
    cfg.set_main_option("script_location", str(MIGRATIONS))
    cfg.attributes["url"] = url
    return cfg


def head_revision() -> str:
    """The newest revision the migrations define.

    Example:
        >>> head_revision()
        '0003'
    """
    from alembic.script import ScriptDirectory  # deferred: alembic

    head = ScriptDirectory.from_config(alembic_config("sqlite://")).get_current_head()
    if head is None:
        raise VLNEvalError(f"no migrations found in {MIGRATIONS} (a broken installation)")
    return head


def current_revision(url: str) -> str | None:
    """The revision the database at ``url`` is at (None for an empty database)."""
    from alembic.runtime.migration import MigrationContext  # deferred: alembic

    engine = create_engine(url)
    try:
        with engine.connect() as conn:
            return MigrationContext.configure(conn).get_current_revision()
    finally:
        engine.dispose()


@contextlib.contextmanager
def _file_lock(url: str) -> Iterator[None]:
    path = make_url(url).database
    if not url.startswith("sqlite") or not path or path == ":memory:":
        yield
        return
    import fcntl

    lock = Path(path).with_name(Path(path).name + ".migrate.lock")
    lock.parent.mkdir(parents=True, exist_ok=True)
    with open(lock, "a") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def upgrade(url: str) -> str:
    """Upgrades the database at ``url`` to the newest revision; returns it."""
    from alembic import command  # deferred: alembic

    head = head_revision()
    with _file_lock(url):
        if current_revision(url) == head:
            return head
        engine = create_engine(url)
        try:
            with engine.begin() as conn:
                cfg = alembic_config(url)
                cfg.attributes["connection"] = conn
                command.upgrade(cfg, "head")
        finally:
            engine.dispose()
    return head


def wait_for_schema(url: str, timeout: float = 60.0) -> None:
    """Waits until the database is at the newest revision (a worker started with its server).

    Raises:
        VLNEvalError: it is not there after ``timeout`` seconds.
    """
    head = head_revision()
    deadline = time.monotonic() + timeout
    while True:
        try:
            if current_revision(url) == head:
                return
        except Exception:  # noqa: BLE001 - the database may not exist yet; keep waiting
            pass
        if time.monotonic() > deadline:
            raise VLNEvalError(
                f"the database is not at schema revision {head}: start `vlneval serve` or run "
                "`vlneval admin migrate` with the same --database-url"
            )
        time.sleep(0.5)
