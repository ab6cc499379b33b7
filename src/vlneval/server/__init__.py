"""The vlneval evaluation server: hidden test labels, submissions, leaderboards.

A challenge organiser runs ``vlneval serve`` (a FastAPI app, SQLite by default, PostgreSQL
through a database URL) and ``vlneval worker`` processes that score queued submissions off the
request path with :func:`vlneval.evaluation.evaluate`. Submitters use ``vlneval submit`` or the
JSON API; everyone can read public leaderboards as HTML pages.

Modules:
    config: server settings (data folder, database URL, limits).
    models: the SQLAlchemy tables; migrations: the Alembic scripts that create them.
    database: engines and transactions (``BEGIN IMMEDIATE`` on SQLite, row locks on PostgreSQL).
    uploads: the safety checks every uploaded file passes before it is stored.
    storage: durable, checksummed upload storage.
    redact: keeps hidden reference data out of every message, page and log line.
    validation: the blind validation that reports only what the submitter's file contains.
    scoring: one submission scored into a sanitised result.
    queue: claiming, leasing and finishing submissions; worker: the scoring loop.
    admin, leaderboard, api, pages, app: organiser operations, rankings and the web app.
    client: the ``vlneval submit`` client.

The server needs the ``server`` extra: ``pip install "vlneval[server]"``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__all__ = ["create_app", "ServerConfig"]

if TYPE_CHECKING:
    from vlneval.server.app import create_app
    from vlneval.server.core.config import ServerConfig


LAZY = {"create_app": "vlneval.server.app", "ServerConfig": "vlneval.server.core.config"}


def __getattr__(name: str) -> Any:
    if name in LAZY:
        import importlib

        return getattr(importlib.import_module(LAZY[name]), name)
    raise AttributeError(f"module 'vlneval.server' has no attribute {name!r}")
