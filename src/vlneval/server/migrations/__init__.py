"""Alembic migrations of the server's schema (run by :mod:`vlneval.server.core.migrate`)."""
