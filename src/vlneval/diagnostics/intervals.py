"""Bootstrap intervals for every reported metric of one run (see :mod:`vlneval.stats`).

All columns share the same resamples (:func:`vlneval.stats.bootstrap_table`), so that the
intervals describe one set of episodes and ``SPL <= SR`` holds on every resample. A column with
infinite values (NE of an episode whose final viewpoint cannot reach the goal) is averaged over
its finite values, as the summary does, and bootstrapped on those alone.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
from numpy.typing import ArrayLike

from vlneval.stats import Interval, bootstrap_ci, bootstrap_table

__all__ = ["column_intervals"]


def column_intervals(
    columns: Mapping[str, ArrayLike],
    *,
    rng: np.random.Generator | int,
    n_resamples: int = 2000,
    confidence: float = 0.95,
    groups: ArrayLike | None = None,
) -> dict[str, Interval | None]:
    """A percentile bootstrap interval of the mean of every column.

    Args:
        columns: name -> per-episode values (all of one length).
        rng, n_resamples, confidence: as for :func:`vlneval.stats.bootstrap_table`.
        groups: a label per episode (the scan) for the two-stage (scan, then episode) bootstrap.

    Returns:
        name -> interval, in the order of ``columns``; None for a column with no finite value.

    Example:
        >>> out = column_intervals({"SR": [1.0, 0.0, 1.0, 1.0], "NE": [1.0, np.inf, 2.0, 3.0]},
        ...                        rng=0, n_resamples=200)
        >>> out["SR"].estimate, out["NE"].estimate, out["NE"].n
        (0.75, 2.0, 3)
    """
    gen = np.random.default_rng(rng)
    arrays = {name: np.asarray(v, dtype=np.float64) for name, v in columns.items()}
    group_arr = None if groups is None else np.asarray(groups)
    finite = {name: a for name, a in arrays.items() if np.isfinite(a).all()}
    out: dict[str, Interval | None] = dict.fromkeys(arrays)
    if finite:
        out.update(
            bootstrap_table(
                finite,
                rng=gen,
                n_resamples=n_resamples,
                confidence=confidence,
                groups=group_arr,
            )
        )
    for name, a in arrays.items():
        if name in finite or not np.isfinite(a).any():
            continue
        out[name] = bootstrap_ci(
            a,
            rng=gen,
            n_resamples=n_resamples,
            confidence=confidence,
            groups=group_arr,
            nan_policy="omit",
            metric=name,
        )
    return out
