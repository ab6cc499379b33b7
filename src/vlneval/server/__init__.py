"""The vlneval evaluation server: hidden test labels, submissions, leaderboards.

A challenge organiser runs ``vlneval serve`` (a FastAPI app, SQLite by default, PostgreSQL
through a database URL) and ``vlneval worker`` processes that score queued submissions off the
request path with one :class:`~vlneval.Scorer` per phase. Submitters use ``vlneval submit`` or the
JSON API; everyone can read public leaderboards as HTML pages.

Layout: ``app`` (the web app), ``api`` and ``pages`` (its routes), ``core`` (settings, database,
migrations runner, auth, sessions, rate limits), ``services`` (uploads, storage, validation,
redaction, scoring, queue, worker, leaderboards, organiser operations), ``models`` and
``schemas`` (tables and API models), ``migrations`` (Alembic), ``client`` (``vlneval submit``).

The server needs the ``server`` extra: ``pip install "vlneval[server]"``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from vlneval._lazy import lazy_attributes

__all__ = ["create_app", "ServerConfig"]

if TYPE_CHECKING:
    from vlneval.server.app import create_app
    from vlneval.server.core.config import ServerConfig

__getattr__ = lazy_attributes(
    __name__, {"create_app": "vlneval.server.app", "ServerConfig": "vlneval.server.core.config"}
)
