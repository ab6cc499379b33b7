"""Metadata that sits next to each metric function: its label, direction and unit."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["MetricInfo"]


@dataclass(frozen=True)
class MetricInfo:
    """What one per-episode metric is called and how to read it.

    Attributes:
        name: the function name, e.g. ``"navigation_error"``; also the key in ``METRICS``.
        label: the short label reports and summaries use, e.g. ``"NE"``.
        higher_is_better: True when a larger value is a better result.
        unit: ``"m"`` for lengths in metres (or the profile's distance unit), ``"fraction"`` for
            values in [0, 1] whose mean is a rate.
        description: one sentence saying what is measured.

    Example:
        >>> info = MetricInfo("spl", "SPL", True, "fraction", "success weighted by path length")
        >>> info.label, info.higher_is_better
        ('SPL', True)
    """

    name: str
    label: str
    higher_is_better: bool
    unit: str
    description: str
