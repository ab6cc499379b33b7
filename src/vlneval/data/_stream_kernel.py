"""The compiled part of :mod:`vlneval.data.stream` (imported on first use)."""

from __future__ import annotations

import numpy as np
from numba import njit

__all__ = ["last_boundary"]


@njit(cache=True, nogil=True)
def last_boundary(buf: np.ndarray) -> tuple[int, int]:  # pragma: no cover - compiled
    """(position of the last top-level comma, position of the closing bracket or -1) of ``buf``,
    which starts right after a top-level ``[`` or ``,``."""
    depth, in_string, escaped, last = 0, False, False, -1
    for i in range(buf.shape[0]):
        c = buf[i]
        if in_string:
            if escaped:
                escaped = False
            elif c == 92:
                escaped = True
            elif c == 34:
                in_string = False
        elif c == 34:
            in_string = True
        elif c == 123 or c == 91:
            depth += 1
        elif c == 125 or c == 93:
            if depth == 0:
                return last, i
            depth -= 1
        elif c == 44 and depth == 0:
            last = i
    return last, -1
