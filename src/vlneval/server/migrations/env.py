"""Alembic environment: runs the migrations on the connection :mod:`vlneval.server.core.migrate` gives.

On PostgreSQL a transaction-scoped advisory lock makes concurrent ``upgrade`` calls (a server
and its workers starting together) run one after the other.
"""

from __future__ import annotations

from alembic import context
from sqlalchemy import create_engine, text

from vlneval.server.models import Base

MIGRATION_LOCK = 726_310_551  # an arbitrary constant naming vlneval's advisory lock


def _run(connection: object) -> None:
    context.configure(
        connection=connection,  # type: ignore[arg-type]
        target_metadata=Base.metadata,
        render_as_batch=connection.dialect.name == "sqlite",  # type: ignore[attr-defined]
        compare_type=True,
    )
    with context.begin_transaction():
        if connection.dialect.name == "postgresql":  # type: ignore[attr-defined]
            connection.execute(text(f"SELECT pg_advisory_xact_lock({MIGRATION_LOCK})"))  # type: ignore[attr-defined]
        context.run_migrations()


def run_migrations_online() -> None:
    """Runs on the given connection, or on a new one to ``sqlalchemy.url``."""
    config = context.config
    connection = config.attributes.get("connection")
    if connection is not None:
        _run(connection)
        return
    engine = create_engine(
        config.attributes.get("url") or config.get_main_option("sqlalchemy.url") or ""
    )
    with engine.connect() as conn:
        _run(conn)
    engine.dispose()


if context.is_offline_mode():
    raise SystemExit("vlneval's migrations run online only (vlneval admin migrate)")
run_migrations_online()
