"""Metric means by group of episodes: by scan, by reference length, by instruction length.

A group's mean of a metric is the plain mean over its episodes, as in the summary; a length
metric (NE) ignores infinite values as the summary does. Numeric keys (lengths) are cut into
quantile bins, so that every bin holds about the same number of episodes whatever the
benchmark (R2R instructions average 29 words, RxR's about 100).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from vlneval.errors import InvalidInputError

__all__ = ["GroupRow", "breakdown", "quantile_bins"]


@dataclass(frozen=True)
class GroupRow:
    """One group of episodes.

    Attributes:
        group: the group's name (a scan id, or a bin such as ``[9, 14) m``).
        n: number of episodes in the group.
        share: ``n`` over all episodes.
        means: metric label -> mean over the group's episodes (None when no finite value).
    """

    group: str
    n: int
    share: float
    means: dict[str, float | None]

    def to_dict(self) -> dict[str, Any]:
        """The row as plain JSON values."""
        return {"group": self.group, "n": self.n, "share": self.share, "means": self.means}


def _mean(values: np.ndarray) -> float | None:
    finite = values[np.isfinite(values)]
    return float(finite.mean()) if finite.size else None


def breakdown(
    keys: Sequence[str] | np.ndarray,
    metrics: Mapping[str, ArrayLike],
    *,
    order: Sequence[str] | None = None,
) -> list[GroupRow]:
    """Means of every metric within every group of episodes.

    Args:
        keys: the group of each episode.
        metrics: label -> per-episode values, aligned to ``keys``.
        order: the groups in display order (default: sorted).

    Example:
        >>> rows = breakdown(["a", "b", "a"], {"SR": [1.0, 0.0, 0.0]})
        >>> [(r.group, r.n, r.means["SR"]) for r in rows]
        [('a', 2, 0.5), ('b', 1, 0.0)]
    """
    labels = np.asarray(keys, dtype=object)
    columns = {name: np.asarray(v, dtype=np.float64) for name, v in metrics.items()}
    for name, col in columns.items():
        if col.shape != labels.shape:
            raise InvalidInputError(
                f"breakdown: metric {name!r} has {col.shape[0]} values, keys have {labels.shape[0]}"
            )
    groups = list(order) if order is not None else sorted({str(k) for k in labels})
    n = max(labels.shape[0], 1)
    rows = []
    for g in groups:
        mask = labels == g
        count = int(mask.sum())
        if count == 0:
            continue
        rows.append(
            GroupRow(str(g), count, count / n, {k: _mean(col[mask]) for k, col in columns.items()})
        )
    return rows


def quantile_bins(
    values: ArrayLike, *, n_bins: int = 4, unit: str = "", decimals: int = 0
) -> tuple[np.ndarray, list[str]]:
    """Cuts numeric values into about ``n_bins`` bins of equal counts.

    The edges are the quantiles of ``values``, rounded to ``decimals``; duplicate edges merge
    bins. Bin ``k`` holds ``[e_k, e_{k+1})``; the last also holds its upper edge.

    Returns:
        The bin label of every value, and the labels in increasing order.

    Example:
        >>> labels, order = quantile_bins([10, 20, 30, 40, 50, 60, 70, 80], n_bins=2, unit="words")
        >>> order
        ['[10, 45) words', '[45, 80] words']
        >>> labels.tolist()[:5]
        ['[10, 45) words', '[10, 45) words', '[10, 45) words', '[10, 45) words', '[45, 80] words']
    """
    v = np.asarray(values, dtype=np.float64)
    finite = np.isfinite(v)
    if not finite.any():
        raise InvalidInputError("quantile_bins: no finite value to bin")
    qs = np.linspace(0.0, 1.0, n_bins + 1)
    edges = np.unique(np.round(np.quantile(v[finite], qs), decimals))
    if edges.size == 1:
        edges = np.array([edges[0], edges[0]])
    fmt = f"{{:.{decimals}f}}"
    suffix = f" {unit}" if unit else ""
    order = []
    for k in range(edges.size - 1):
        close = "]" if k == edges.size - 2 else ")"
        order.append(f"[{fmt.format(edges[k])}, {fmt.format(edges[k + 1])}{close}{suffix}")
    index = np.clip(np.searchsorted(edges, v, side="right") - 1, 0, len(order) - 1)
    labels = np.array([order[i] if ok else "unknown" for i, ok in zip(index, finite, strict=True)])
    if not finite.all():
        order.append("unknown")
    return labels.astype(object), order
