"""Argument checks shared by the public metric functions (never used inside hot loops)."""

from __future__ import annotations

import dataclasses
import functools
import math
from collections.abc import Callable
from typing import Any, ParamSpec, TypeVar

import numpy as np

from vlneval.errors import InvalidInputError

__all__ = ["public", "as_table", "as_path", "as_threshold", "as_length", "as_indicator"]

P = ParamSpec("P")
R = TypeVar("R")
_ANONYMOUS = ""  # the source of an InvalidInputError raised with a plain message


def public(func: Callable[P, R]) -> Callable[P, R]:
    """Names the metric function in the errors its argument checks raise ("error: ndtw: ...")."""

    @functools.wraps(func)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return func(*args, **kwargs)
        except InvalidInputError as exc:
            if any(p.source != _ANONYMOUS for p in exc.problems):
                raise
            named = [dataclasses.replace(p, source=func.__name__) for p in exc.problems]
            raise InvalidInputError(named, source=func.__name__) from None

    return wrapper


_REAL = (int, float, np.integer, np.floating)


def _array(value: Any, name: str) -> np.ndarray:
    try:
        return np.asarray(value)
    except (ValueError, TypeError) as exc:  # ragged nested lists, unconvertible objects
        raise InvalidInputError(f"{name} must be an array; could not convert it ({exc})") from None


def as_table(distances: Any) -> tuple[np.ndarray, int]:
    """The table as a flat C-contiguous float64 buffer (a view when possible) and its size n."""
    table = _array(distances, "distances")
    if table.ndim != 2 or table.shape[0] != table.shape[1]:
        raise InvalidInputError(
            f"distances must be a square 2-D table (n x n); got shape {table.shape}"
        )
    if table.shape[0] == 0:
        raise InvalidInputError("distances must hold at least one node; got a 0 x 0 table")
    if table.dtype.kind not in "fiu":
        raise InvalidInputError(f"distances must hold real numbers; got dtype {table.dtype}")
    table = np.ascontiguousarray(table, dtype=np.float64)
    return table.reshape(-1), table.shape[0]


def as_path(value: Any, name: str, n: int | None, *, allow_empty: bool) -> np.ndarray:
    """A 1-D array of node indices in ``0..n-1`` (any int32 index if n is None), as int32."""
    path = _array(value, name)
    if path.ndim != 1:
        raise InvalidInputError(
            f"{name} must be a 1-D array of node indices; got a {path.ndim}-D array "
            f"of shape {path.shape}"
        )
    if path.size == 0:
        if allow_empty:
            return np.empty(0, dtype=np.int32)
        raise InvalidInputError(f"{name} must contain at least one node; got an empty array")
    if path.dtype.kind not in "iu":
        raise InvalidInputError(
            f"{name} must hold integer node indices; got dtype {path.dtype} "
            f"(first value {path[0].item()!r})"
        )
    limit = np.iinfo(np.int32).max if n is None else n
    bad = np.flatnonzero((path < 0) | (path >= limit))
    if bad.size:
        j = int(bad[0])
        expected = "a node index >= 0" if n is None else f"0..{n - 1}"
        where = "" if n is None else f" for a distance table of {n} nodes"
        raise InvalidInputError(
            f"{name}[{j}] = {int(path[j])} is out of range{where} (expected {expected})"
        )
    return np.ascontiguousarray(path, dtype=np.int32)


def _show(value: Any) -> str:
    return repr(value.item() if isinstance(value, np.generic) else value)


def _real(value: Any, name: str) -> float:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, _REAL):
        raise InvalidInputError(f"{name} must be a real number; got {_show(value)}")
    number = float(value)
    if math.isnan(number):
        raise InvalidInputError(f"{name} must be a real number; got nan")
    return number


def as_threshold(value: Any, name: str = "threshold", *, allow_zero: bool = False) -> float:
    """A finite threshold in metres, > 0 (or >= 0 with ``allow_zero``)."""
    number = _real(value, name)
    if not math.isfinite(number) or number < 0 or (number == 0 and not allow_zero):
        expected = ">= 0" if allow_zero else "> 0"
        raise InvalidInputError(f"{name} must be a finite number {expected}; got {_show(value)}")
    return number


def as_length(value: Any, name: str, *, allow_inf: bool = True) -> float:
    """A length or error in metres: >= 0, not NaN; +inf (unreachable) allowed by default."""
    number = _real(value, name)
    if number < 0 or (math.isinf(number) and not allow_inf):
        bound = ">= 0" if allow_inf else "finite and >= 0"
        raise InvalidInputError(f"{name} must be {bound}; got {_show(value)}")
    return number


def as_indicator(value: Any, name: str = "success") -> float:
    """A success indicator: True/False or a number equal to 0 or 1."""
    if isinstance(value, (bool, np.bool_)):
        return 1.0 if value else 0.0
    number = _real(value, name)
    if number not in (0.0, 1.0):
        raise InvalidInputError(f"{name} must be 0 or 1 (or a bool); got {_show(value)}")
    return number
