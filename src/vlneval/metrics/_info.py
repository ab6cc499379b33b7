"""What one metric is called and how to read it: :class:`MetricInfo`.

The instances live in one table, :mod:`vlneval.metrics.info`; every consumer (terminal tables,
comparisons, reports, leaderboards) reads label, unit and direction from there.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal, get_args

__all__ = ["MetricInfo", "Direction", "Kind"]

#: Which way is better: a larger value, a smaller one, or neither (TL: walking more is not
#: worse in itself, it is the cost SPL already weighs).
Direction = Literal["higher", "lower", "neutral"]

#: What a value is. ``rate``: the mean of a 0/1 outcome (SR); ``ratio``: a score in [0, 1]
#: (SPL, nDTW); both are stored as fractions and shown as percentages. ``distance``: metres (or
#: the profile's distance unit); ``hops``: edges of a graph; ``pixels``; ``count``: events per
#: episode.
Kind = Literal["rate", "ratio", "distance", "hops", "pixels", "count"]

_UNIT = {
    "rate": "fraction",
    "ratio": "fraction",
    "distance": "m",
    "hops": "hops",
    "pixels": "px",
    "count": "count",
}
_SHOWN = {**_UNIT, "rate": "%", "ratio": "%"}
_DIRECTION_TEXT = {
    "higher": "higher is better",
    "lower": "lower is better",
    "neutral": "neutral",
}


@dataclass(frozen=True)
class MetricInfo:
    """What one metric is called, where its per-episode values are, and which way is better.

    Attributes:
        label: the key in a summary's ``metrics``, e.g. ``"NE"``.
        name: the quantity in full, also the function computing it where there is one, e.g.
            ``"navigation_error"``.
        column: the per-episode table column whose mean is the summary value, e.g.
            ``"nav_error"``.
        direction: ``"higher"``, ``"lower"`` or ``"neutral"`` (see :data:`Direction`).
        kind: ``"rate"``, ``"ratio"``, ``"distance"``, ``"hops"``, ``"pixels"`` or ``"count"``
            (see :data:`Kind`); it fixes the unit.
        description: one line saying what is measured.
        signed: the value may be negative (GP: the agent may end farther from the goal than
            it started); other values are never below 0.

    Example:
        >>> info = MetricInfo("SPD", "shortest_path_distance", "spd", "lower", "hops",
        ...                   "hops from the final panorama to the goal")
        >>> info.higher_is_better, info.unit, info.direction_text, info.improves(-1.0)
        (False, 'hops', 'lower is better', True)
        >>> MetricInfo("SR", "success", "success", "higher", "rate", "1 on success").shown_unit
        '%'
    """

    label: str
    name: str
    column: str
    direction: Direction
    kind: Kind
    description: str
    signed: bool = False

    def __post_init__(self) -> None:
        for field, allowed in (("direction", Direction), ("kind", Kind)):
            if getattr(self, field) not in get_args(allowed):
                raise ValueError(
                    f"metric {self.label}: {field} {getattr(self, field)!r} is not one of "
                    + ", ".join(get_args(allowed))
                )
        if not (self.label and self.name and self.column and self.description):
            raise ValueError(f"metric {self.label!r}: label, name, column and description needed")

    @property
    def higher_is_better(self) -> bool:
        """True when a larger value is a better result (False for lower and neutral)."""
        return self.direction == "higher"

    @property
    def unit(self) -> str:
        """The unit of a stored value: ``fraction``, ``m``, ``hops``, ``px`` or ``count``."""
        return _UNIT[self.kind]

    @property
    def is_rate(self) -> bool:
        """True for fractions (rates and [0, 1] scores), which are shown as percentages."""
        return self.kind in ("rate", "ratio")

    @property
    def bounds(self) -> tuple[float, float]:
        """The range every value lies in: ``(0, 1)`` for fractions, else ``(0, inf)``
        (``(-inf, inf)`` when :attr:`signed`).

        Example:
            >>> MetricInfo("SR", "success", "success", "higher", "rate", "1 on success").bounds
            (0.0, 1.0)
        """
        low = -math.inf if self.signed else 0.0
        return (low, 1.0 if self.is_rate else math.inf)

    @property
    def shown_unit(self) -> str:
        """The unit of a displayed value: ``%`` for fractions, else :attr:`unit`."""
        return _SHOWN[self.kind]

    @property
    def direction_text(self) -> str:
        """``"higher is better"``, ``"lower is better"`` or ``"neutral"``."""
        return _DIRECTION_TEXT[self.direction]

    def improves(self, difference: float) -> bool | None:
        """Whether a change of ``difference`` (new − old) is an improvement.

        None when the metric has no better direction or the difference is 0 or not a number.
        """
        if self.direction == "neutral" or not difference or math.isnan(difference):
            return None
        return (difference > 0) == (self.direction == "higher")
