"""Argument and data checks shared by the statistics functions (internal).

Argument checks (types and ranges of options) run before data checks (shapes, lengths,
non-finite values), so that a wrong option is reported before the data is touched.
Every failure is an :class:`~vlneval.errors.InvalidInputError` whose source is the public
function that was called.
"""

from __future__ import annotations

import numbers
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from vlneval.errors import InvalidInputError, Problem

__all__ = [
    "NAN_POLICIES",
    "FloatArray",
    "IntArray",
    "Prepared",
    "RngLike",
    "as_generator",
    "check_callable",
    "check_choice",
    "check_confidence",
    "check_count",
    "fail",
    "prepare_columns",
]

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.intp]
RngLike = np.random.Generator | int

NAN_POLICIES = ("raise", "omit")
_SHOWN_INDICES = 5


def fail(where: str, message: str) -> InvalidInputError:
    """An error for a bad argument of the public function ``where``."""
    return InvalidInputError(message, source=where)


def as_generator(rng: object, where: str) -> np.random.Generator:
    """``rng`` itself when it is a Generator, a fresh PCG64 Generator when it is an int seed."""
    if isinstance(rng, np.random.Generator):
        return rng
    if isinstance(rng, (numbers.Integral, np.integer)) and not isinstance(rng, (bool, np.bool_)):
        if int(rng) < 0:
            raise fail(where, f"rng seed must be a non-negative int; got {int(rng)}")
        return np.random.default_rng(int(rng))
    raise fail(
        where,
        "rng must be a numpy.random.Generator or an int seed (e.g. "
        f"rng=np.random.default_rng(0)); got {type(rng).__name__}",
    )


def check_count(
    where: str, name: str, value: object, *, minimum: int, maximum: int | None = None
) -> int:
    """``value`` as an int in ``[minimum, maximum]``."""
    if not isinstance(value, (numbers.Integral, np.integer)) or isinstance(value, (bool, np.bool_)):
        raise fail(where, f"{name} must be an int; got {type(value).__name__}")
    count = int(value)
    if count < minimum or (maximum is not None and count > maximum):
        bound = f">= {minimum}" if maximum is None else f"in [{minimum}, {maximum}]"
        raise fail(where, f"{name} must be {bound}; got {count}")
    return count


def check_confidence(where: str, confidence: object) -> float:
    """``confidence`` as a float strictly between 0 and 1."""
    if not isinstance(confidence, numbers.Real) or isinstance(confidence, (bool, np.bool_)):
        raise fail(where, f"confidence must be a float in (0, 1); got {type(confidence).__name__}")
    level = float(confidence)
    if not 0.0 < level < 1.0:
        raise fail(where, f"confidence must be in (0, 1), e.g. 0.95; got {confidence}")
    return level


def check_choice(where: str, name: str, value: object, choices: Sequence[str]) -> str:
    """``value`` when it is one of ``choices``."""
    if not isinstance(value, str) or value not in choices:
        options = ", ".join(repr(c) for c in choices)
        raise fail(where, f"{name} must be one of {options}; got {value!r}")
    return value


def check_callable(where: str, name: str, value: object) -> Callable[..., Any]:
    """``value`` when it can be called."""
    if not callable(value):
        raise fail(where, f"{name} must be callable (e.g. np.mean); got {type(value).__name__}")
    return value


@dataclass(frozen=True)
class Prepared:
    """Validated columns of per-episode values on one common set of episodes.

    Attributes:
        data: shape ``(k, n)``, float64, all finite; row ``j`` is column ``j``.
        codes: group code of every kept episode (``0..n_groups-1``), or None without groups.
        n_groups: number of distinct groups among the kept episodes (0 without groups).
    """

    data: FloatArray
    codes: IntArray | None
    n_groups: int


def _as_column(where: str, label: str, values: ArrayLike) -> FloatArray:
    try:
        column = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise fail(where, f"{label} must hold numbers; could not convert it ({exc})") from None
    if column.ndim != 1:
        raise fail(
            where,
            f"{label} must be a 1-D array with one value per episode; got shape {column.shape}",
        )
    if column.size == 0:
        raise fail(where, f"{label} is empty; need at least one episode")
    return column


def _as_groups(where: str, groups: ArrayLike, n: int) -> np.ndarray:
    labels = np.asarray(groups)
    if labels.ndim != 1:
        raise fail(
            where,
            f"groups must be a 1-D array with one label per episode; got shape {labels.shape}",
        )
    if labels.shape[0] != n:
        raise fail(
            where,
            f"length mismatch: groups has {labels.shape[0]} entries but there are {n} episodes",
        )
    return labels


def _show(indices: np.ndarray) -> str:
    shown = ", ".join(str(int(i)) for i in indices[:_SHOWN_INDICES])
    return shown + (", ..." if indices.size > _SHOWN_INDICES else "")


def prepare_columns(
    where: str,
    labels: Sequence[str],
    columns: Sequence[ArrayLike],
    *,
    nan_policy: str,
    groups: ArrayLike | None,
    first_seen: bool = False,
) -> Prepared:
    """Checks and stacks per-episode columns that describe the same episodes.

    Non-finite values (NaN, +inf, -inf) are refused, one problem per offending column, unless
    ``nan_policy="omit"``: then every episode that is non-finite in ANY column is dropped from
    all columns, so that the columns keep describing one common set of episodes. Group codes
    follow the sorted labels, or with ``first_seen`` the order in which the labels first
    appear (distinct labels then get codes ``0..n-1`` in episode order).
    """
    arrays = [
        _as_column(where, label, column) for label, column in zip(labels, columns, strict=True)
    ]
    n = arrays[0].shape[0]
    for label, array in zip(labels[1:], arrays[1:], strict=True):
        if array.shape[0] != n:
            raise fail(
                where,
                f"length mismatch: {labels[0]} has {n} episodes but {label} has {array.shape[0]}",
            )
    group_labels = None if groups is None else _as_groups(where, groups, n)
    data = np.stack(arrays)
    bad = ~np.isfinite(data)
    keep = ~bad.any(axis=0)
    if not keep.all() and nan_policy == "raise":
        problems = [
            Problem(
                where,
                f"{label} has {int(row.sum())} non-finite value(s) (NaN or inf) at episode "
                f"index {_show(np.flatnonzero(row))}; clean the input or pass "
                "nan_policy='omit' to drop those episodes",
            )
            for label, row in zip(labels, bad, strict=True)
            if row.any()
        ]
        raise InvalidInputError(problems, source=where)
    n_kept = int(keep.sum())
    if n_kept == 0:
        raise fail(where, f"no episode left: all {n} episodes have a non-finite value")
    data = np.ascontiguousarray(data[:, keep])
    if group_labels is None:
        return Prepared(data, None, 0)
    try:
        uniques, codes = np.unique(group_labels[keep], return_inverse=True)
    except TypeError as exc:
        raise fail(where, f"groups must be sortable labels (str or int); {exc}") from None
    codes = codes.astype(np.intp).ravel()
    if first_seen:
        firsts = np.full(uniques.shape[0], codes.shape[0], dtype=np.intp)
        np.minimum.at(firsts, codes, np.arange(codes.shape[0], dtype=np.intp))
        rank = np.empty_like(firsts)
        rank[np.argsort(firsts, kind="stable")] = np.arange(firsts.shape[0], dtype=np.intp)
        codes = rank[codes]
    return Prepared(data, codes, int(uniques.shape[0]))
