"""Resampling engines shared by the bootstrap and the paired tests (internal).

Resamples are drawn as index matrices, a chunk of rows at a time, so that memory stays bounded
(about ``MAX_CHUNK_ELEMENTS`` indices per chunk) whatever ``n_resamples`` is. Each chunk of
indices is applied to every column before the next chunk is drawn: all columns (metrics) share
the same resamples, which keeps their paired structure. The number of rows per chunk depends
only on the number of episodes (or groups), never on the number of columns, so one column
alone and the same column inside a table get the same resamples from the same seed.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ._checks import FloatArray, IntArray, fail

__all__ = [
    "MAX_CHUNK_ELEMENTS",
    "bootstrap_distribution",
    "chunks",
    "percentile_bounds",
    "exact_sign_flip_p",
    "monte_carlo_sign_flip_p",
]

MAX_CHUNK_ELEMENTS = 1 << 22
# Ties in the permutation test are judged with this relative tolerance, so that a sign pattern
# whose sum equals the observed one up to rounding counts as "at least as extreme".
_TIE_RTOL = 1e-10


def chunks(width: int, total: int) -> Iterator[tuple[int, int]]:
    """``(start, stop)`` row ranges covering ``total`` rows of ``width`` columns each."""
    rows = max(1, MAX_CHUNK_ELEMENTS // max(width, 1))
    for start in range(0, total, rows):
        yield start, min(start + rows, total)


def _reduce_rows(statistic: Callable[..., Any], samples: FloatArray, where: str) -> FloatArray:
    """``statistic`` of every row of ``samples``: vectorised via ``axis=-1`` when supported."""
    try:
        result = statistic(samples, axis=-1)
    except TypeError:
        result = np.apply_along_axis(statistic, -1, samples)
    out = np.asarray(result, dtype=np.float64)
    if out.shape != samples.shape[:-1]:
        raise fail(where, f"statistic must reduce one array to one number; got shape {out.shape}")
    return out


def bootstrap_distribution(
    data: FloatArray,
    *,
    rng: np.random.Generator,
    n_resamples: int,
    statistic: Callable[..., Any],
    codes: IntArray | None,
    n_groups: int,
    where: str,
    two_stage: bool = True,
) -> FloatArray:
    """The statistic of every column on every resample: shape ``(k, n_resamples)``.

    Without groups each resample draws ``n`` episodes with replacement. With groups and
    ``two_stage`` it is the two-stage bootstrap: draw ``n_groups`` groups with replacement,
    then, inside every drawn group, as many episodes as the group has, with replacement.
    Resample sizes then vary, so the statistic is applied per resample (``np.mean`` keeps a
    vectorised path). With groups and not ``two_stage`` it is the cluster bootstrap: draw
    ``n_groups`` whole groups with replacement; the statistic must be ``np.mean``, the mean
    over the drawn episodes ``Σ S_g / Σ n_g`` (group sums ``S_g``, sizes ``n_g``). With one
    episode per group numbered in episode order it draws exactly the episode resamples.
    """
    k, n = data.shape
    out = np.empty((k, n_resamples), dtype=np.float64)
    if codes is None:
        for start, stop in chunks(n, n_resamples):
            idx = rng.integers(0, n, size=(stop - start, n))
            for j in range(k):
                out[j, start:stop] = _reduce_rows(statistic, data[j][idx], where)
        return out
    if not two_stage:
        if statistic is not np.mean:
            raise fail(where, "resampling whole groups supports only statistic=np.mean")
        counts_of = np.bincount(codes, minlength=n_groups).astype(np.float64)
        sums = np.stack([np.bincount(codes, weights=row, minlength=n_groups) for row in data])
        for start, stop in chunks(n_groups, n_resamples):
            chosen = rng.integers(0, n_groups, size=(stop - start, n_groups))
            counts = counts_of[chosen].sum(axis=-1)
            for j in range(k):
                out[j, start:stop] = sums[j][chosen].sum(axis=-1) / counts
        return out

    order = np.argsort(codes, kind="stable")
    sizes = np.bincount(codes, minlength=n_groups)
    firsts = np.cumsum(sizes) - sizes
    for start, stop in chunks(n, n_resamples):
        chosen = rng.integers(0, n_groups, size=(stop - start, n_groups))
        drawn_sizes = sizes[chosen].ravel()
        within = rng.integers(0, np.repeat(drawn_sizes, drawn_sizes))
        flat = order[np.repeat(firsts[chosen].ravel(), drawn_sizes) + within]
        lengths = sizes[chosen].sum(axis=1)
        bounds = np.concatenate(([0], np.cumsum(lengths)))
        for j in range(k):
            values = data[j][flat]
            if statistic is np.mean:
                out[j, start:stop] = np.add.reduceat(values, bounds[:-1]) / lengths
            else:
                pieces = np.split(values, bounds[1:-1])
                out[j, start:stop] = [float(statistic(piece)) for piece in pieces]
    return out


def percentile_bounds(
    resampled: FloatArray, estimates: FloatArray, *, n: int, scale: FloatArray, confidence: float
) -> FloatArray:
    """Percentile interval ``[q(α/2), q(1 − α/2)]`` of every row of ``resampled``: ``(2, k)``.

    A resample statistic and the estimate are sums taken in different orders (numpy reduces a
    1-D array and the rows of a matrix differently), so on (near-)constant data they differ by
    rounding alone. A resample statistic within ``2 · n · eps · scale`` of the estimate
    (``scale`` the largest ``|x|`` of the row: the worst-case rounding of a mean of ``n``
    values) is therefore taken to be the estimate: a constant column gets exactly
    ``low == estimate == high``.
    """
    tolerance = 2.0 * n * np.finfo(np.float64).eps * scale
    near = np.abs(resampled - estimates[:, None]) <= tolerance[:, None]
    snapped = np.where(near, estimates[:, None], resampled)
    alpha = 1.0 - confidence
    return np.quantile(snapped, [alpha / 2.0, 1.0 - alpha / 2.0], axis=1)


def _extreme(sums: FloatArray, observed: FloatArray, tolerance: FloatArray) -> NDArray[np.bool_]:
    return np.abs(sums) >= observed - tolerance


def exact_sign_flip_p(units: FloatArray) -> float:
    """Exact two-sided sign-flip p-value: enumerates every sign pattern of the non-zero units.

    ``p = #{s : |sum(s * u)| >= |sum(u)|} / 2**m`` over the ``2**m`` patterns ``s`` of the ``m``
    non-zero units; 1.0 when there is none.
    """
    active = units[units != 0.0]
    m = active.shape[0]
    observed = np.abs(active.sum(keepdims=True))
    tolerance = _TIE_RTOL * np.abs(active).sum(keepdims=True)
    bits = np.arange(m, dtype=np.int64)
    hits = 0
    for start, stop in chunks(m, 1 << m):
        patterns = (np.arange(start, stop, dtype=np.int64)[:, None] >> bits) & 1
        sums = (2.0 * patterns - 1.0) @ active
        hits += int(np.count_nonzero(_extreme(sums, observed, tolerance)))
    return hits / float(1 << m)


def monte_carlo_sign_flip_p(
    units: FloatArray, *, rng: np.random.Generator, n_permutations: int
) -> FloatArray:
    """Monte Carlo two-sided sign-flip p-values of every row of ``units`` (shape ``(k, u)``).

    The same ``n_permutations`` random sign patterns over all ``u`` units serve every row
    (a zero unit changes no sum). ``p = (1 + hits) / (1 + n_permutations)``, which is never 0
    and keeps the test valid (Phipson and Smyth 2010).
    """
    observed = np.abs(units.sum(axis=1))
    tolerance = _TIE_RTOL * np.abs(units).sum(axis=1)
    hits = np.zeros(units.shape[0], dtype=np.int64)
    for start, stop in chunks(units.shape[1], n_permutations):
        flips = rng.integers(0, 2, size=(stop - start, units.shape[1]), dtype=np.int8)
        sums = (2.0 * flips - 1.0) @ units.T
        hits += np.count_nonzero(_extreme(sums, observed, tolerance), axis=0)
    return np.asarray((1.0 + hits) / (1.0 + n_permutations), dtype=np.float64)
