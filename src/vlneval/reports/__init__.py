"""Reports: terminal tables, per-episode files, summaries (heavy parts imported lazily)."""

from __future__ import annotations

__all__: list[str] = []
