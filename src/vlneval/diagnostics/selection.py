"""Which episodes a report draws: the worst ones and a seeded random sample of the others."""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

__all__ = ["worst_episodes", "sample_episodes"]


def worst_episodes(nav_error: ArrayLike, ndtw: ArrayLike | None, n: int) -> np.ndarray:
    """Positions of the ``n`` worst episodes: largest navigation error first.

    An unreachable final position (infinite NE) is the worst; ties are broken by the lower
    nDTW (when given), then by position.

    Example:
        >>> worst_episodes([1.0, np.inf, 7.5, 7.5], [0.9, 0.1, 0.4, 0.2], 3).tolist()
        [1, 3, 2]
    """
    ne = np.asarray(nav_error, dtype=np.float64)
    keys = [np.arange(ne.shape[0])]
    if ndtw is not None:
        keys.append(np.asarray(ndtw, dtype=np.float64))
    keys.append(-np.where(np.isnan(ne), -np.inf, ne))
    return np.lexsort(keys)[: max(n, 0)]


def sample_episodes(
    n_total: int, n: int, *, exclude: ArrayLike = (), rng: np.random.Generator | int = 0
) -> np.ndarray:
    """``n`` positions drawn without replacement from ``0..n_total-1`` minus ``exclude``, sorted.

    Example:
        >>> sample_episodes(10, 3, exclude=[0, 1], rng=0).tolist()
        [6, 7, 9]
    """
    gen = np.random.default_rng(rng)
    pool = np.setdiff1d(np.arange(n_total), np.asarray(exclude, dtype=np.int64))
    if pool.size == 0 or n <= 0:
        return np.zeros(0, dtype=np.int64)
    return np.sort(gen.choice(pool, size=min(n, pool.size), replace=False))
