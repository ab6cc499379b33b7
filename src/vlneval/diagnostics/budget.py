"""Budgeted success: success within a path-length budget, for deployment questions.

A robot whose battery allows ``b`` times the shortest route succeeds on an episode only if the
agent succeeds AND its executed path is no longer than ``b · d*``, with ``d*`` the geodesic
shortest distance from the start to the nearest goal:

    SR@b = mean_e [ success_e · 1(TL_e <= b · d*_e) ]

``SR@b`` grows with ``b`` and reaches SR once ``b`` covers every successful episode. Because the
goal region has radius δ, a success can be shorter than ``d*``, so ``SR@1`` need not be 0.
``TL`` and ``d*`` are sums of the same edge lengths taken in different orders, so the
comparison allows a relative rounding slack of ``1e-9`` (an agent that walks exactly the
shortest route is within budget 1).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numpy.typing import ArrayLike

from vlneval.errors import InvalidInputError

__all__ = ["DEFAULT_BUDGETS", "within_budget", "budgeted_success", "length_ratio"]

DEFAULT_BUDGETS = (1.0, 1.25, 1.5, 2.0, 3.0)
_RTOL = 1e-9


def _arrays(
    success: ArrayLike, path_length: ArrayLike, shortest: ArrayLike
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    s, tl, d = (np.asarray(x, dtype=np.float64) for x in (success, path_length, shortest))
    if s.ndim != 1 or s.shape != tl.shape or s.shape != d.shape:
        raise InvalidInputError(
            "budgeted success: success, path_length and shortest must be 1-D arrays of one "
            f"length; got shapes {s.shape}, {tl.shape}, {d.shape}"
        )
    if not np.isfinite(d).all() or (d < 0).any():
        raise InvalidInputError(
            "budgeted success needs a finite, non-negative shortest distance d* for every "
            "episode; score with the navigation graphs"
        )
    return s, tl, d


def within_budget(
    success: ArrayLike, path_length: ArrayLike, shortest: ArrayLike, budget: float
) -> np.ndarray:
    """Per episode, 1.0 when it succeeds with ``TL <= budget · d*``, else 0.0.

    Example:
        >>> within_budget([1, 1, 0], [10.0, 16.0, 5.0], [10.0, 10.0, 10.0], 1.5).tolist()
        [1.0, 0.0, 0.0]
    """
    if not np.isfinite(budget) or budget <= 0:
        raise InvalidInputError(f"a path-length budget must be a positive number; got {budget}")
    s, tl, d = _arrays(success, path_length, shortest)
    allowed = budget * d * (1.0 + _RTOL) + _RTOL
    return ((s != 0) & (tl <= allowed)).astype(np.float64)


def budgeted_success(
    success: ArrayLike,
    path_length: ArrayLike,
    shortest: ArrayLike,
    budgets: Sequence[float] = DEFAULT_BUDGETS,
) -> dict[float, float]:
    """``SR@b`` for every budget ``b`` (a multiple of the shortest distance).

    Example:
        >>> budgeted_success([1, 1, 1, 0], [10.0, 12.0, 20.0, 5.0], [10.0] * 4, [1.0, 1.5, 2.0])
        {1.0: 0.25, 1.5: 0.5, 2.0: 0.75}
    """
    return {
        float(b): float(within_budget(success, path_length, shortest, b).mean()) for b in budgets
    }


def length_ratio(path_length: ArrayLike, shortest: ArrayLike) -> np.ndarray:
    """``TL / d*`` per episode (NaN where ``d* = 0``).

    Example:
        >>> length_ratio([12.0, 0.0, 3.0], [8.0, 4.0, 0.0]).tolist()
        [1.5, 0.0, nan]
    """
    tl = np.asarray(path_length, dtype=np.float64)
    d = np.asarray(shortest, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(d > 0, tl / np.where(d > 0, d, 1.0), np.nan)
