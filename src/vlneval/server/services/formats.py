"""The leaderboard export formats, in a module of their own: the command line lists them as
``admin leaderboard --format`` choices without importing the server's dependencies."""

from __future__ import annotations

__all__ = ["FORMATS"]

#: What :mod:`vlneval.server.services.export` writes: ``table`` (the default), ``csv``, ``json``.
FORMATS = ("table", "csv", "json")
