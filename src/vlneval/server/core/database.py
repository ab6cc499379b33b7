"""Engines and transactions for SQLite (the embedded default) and PostgreSQL.

SQLite serialises writers: a write transaction starts with ``BEGIN IMMEDIATE`` so that two
processes never both read and then both try to upgrade to a write lock (which SQLite answers with
an immediate "database is locked"); the journal is in WAL mode so that readers never wait for a
writer, and ``synchronous=FULL`` so that a committed submission survives a power cut.
PostgreSQL runs at READ COMMITTED; code that must serialise (quotas, claims) takes row locks.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from sqlalchemy import Engine, create_engine, event
from sqlalchemy.engine import make_url
from sqlalchemy.orm import Session, sessionmaker

__all__ = ["Database"]

SQLITE_TIMEOUT_S = 60.0


def _sqlite_engine(url: str, begin: str) -> Engine:
    path = make_url(url).database
    if path and path != ":memory:":
        Path(path).parent.mkdir(parents=True, exist_ok=True)
    engine = create_engine(
        url,
        connect_args={"timeout": SQLITE_TIMEOUT_S, "check_same_thread": False},
        pool_size=8,
        max_overflow=32,
    )

    @event.listens_for(engine, "connect")
    def _connect(dbapi_conn: Any, _record: Any) -> None:
        dbapi_conn.isolation_level = None  # we issue BEGIN ourselves
        cur = dbapi_conn.cursor()
        cur.execute("PRAGMA journal_mode=WAL")
        cur.execute(f"PRAGMA busy_timeout={int(SQLITE_TIMEOUT_S * 1000)}")
        cur.execute("PRAGMA foreign_keys=ON")
        cur.execute("PRAGMA synchronous=FULL")
        cur.close()

    @event.listens_for(engine, "begin")
    def _begin(conn: Any) -> None:
        conn.exec_driver_sql(begin)

    return engine


class Database:
    """The server's database: ``write()`` and ``read()`` transactions.

    Args:
        url: a SQLAlchemy URL (``sqlite:///path`` or ``postgresql+psycopg://...``).

    Example:
        >>> import tempfile, pathlib
        >>> from sqlalchemy import text
        >>> db = Database(f"sqlite:///{pathlib.Path(tempfile.mkdtemp()) / 'x.sqlite3'}")
        >>> with db.write() as s:
        ...     _ = s.execute(text("CREATE TABLE t (x INTEGER)"))
        ...     _ = s.execute(text("INSERT INTO t VALUES (1)"))
        >>> with db.read() as s:
        ...     s.execute(text("SELECT x FROM t")).scalar_one()
        1
        >>> db.dispose()
    """

    def __init__(self, url: str) -> None:
        self.url = url
        self.is_sqlite = url.startswith("sqlite")
        if self.is_sqlite:
            self.engine = _sqlite_engine(url, "BEGIN IMMEDIATE")
            self._read_engine = _sqlite_engine(url, "BEGIN")
        else:
            self.engine = create_engine(url, pool_pre_ping=True, pool_size=10, max_overflow=30)
            self._read_engine = self.engine
        self._write = sessionmaker(self.engine, expire_on_commit=False)
        self._read = sessionmaker(self._read_engine, expire_on_commit=False)

    @contextlib.contextmanager
    def write(self) -> Iterator[Session]:
        """A transaction that may write; committed on success, rolled back on error."""
        with self._write.begin() as session:
            yield session

    @contextlib.contextmanager
    def read(self) -> Iterator[Session]:
        """A read-only transaction (never blocks on SQLite writers); objects loaded in it stay
        readable after it ends."""
        with self._read() as session:
            yield session

    def dispose(self) -> None:
        """Closes every pooled connection."""
        self.engine.dispose()
        if self._read_engine is not self.engine:
            self._read_engine.dispose()

    def __repr__(self) -> str:
        return f"Database({make_url(self.url).render_as_string(hide_password=True)!r})"
