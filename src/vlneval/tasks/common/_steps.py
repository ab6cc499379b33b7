"""Per-episode step counts (jumps, repeats) in one compiled pass, with no temporaries.

Imported on first use (it imports numba).
"""

from __future__ import annotations

import numpy as np
from numba import njit

__all__ = ["step_counts"]


@njit(cache=True, nogil=True)
def _kernel(traj, offsets, scan_index, adjacency, table_offsets, table_sizes):  # type: ignore[no-untyped-def]  # pragma: no cover - compiled
    n = offsets.shape[0] - 1
    jumps = np.zeros(n, np.int64)
    repeats = np.zeros(n, np.int64)
    first_jump = np.full(n, -1, np.int64)
    for e in range(n):
        s = scan_index[e]
        base, size = table_offsets[s], table_sizes[s]
        for p in range(offsets[e], offsets[e + 1] - 1):
            a, b = traj[p], traj[p + 1]
            if a == b:
                repeats[e] += 1
            elif not adjacency[base + a * size + b]:
                jumps[e] += 1
                if first_jump[e] < 0:
                    first_jump[e] = p
    return jumps, repeats, first_jump


def step_counts(
    traj: np.ndarray,
    offsets: np.ndarray,
    scan_index: np.ndarray,
    adjacency: np.ndarray,
    table_offsets: np.ndarray,
    table_sizes: np.ndarray,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per episode: moves between non-adjacent viewpoints, consecutive repeats, and the flat
    position of the first jump (-1 when none).

    Example:
        >>> adj = np.array([False, True, True, False])  # two nodes, one edge
        >>> j, r, f = step_counts(np.array([0, 0, 1, 1]), np.array([0, 4]), np.array([0]),
        ...                       adj, np.array([0]), np.array([2]))
        >>> j.tolist(), r.tolist(), f.tolist()
        ([0], [2], [-1])
    """
    return _kernel(  # type: ignore[no-any-return]
        np.ascontiguousarray(traj, dtype=np.int32),
        np.ascontiguousarray(offsets, dtype=np.int64),
        np.ascontiguousarray(scan_index, dtype=np.int32),
        np.ascontiguousarray(adjacency, dtype=np.bool_),
        np.ascontiguousarray(table_offsets, dtype=np.int64),
        np.ascontiguousarray(table_sizes, dtype=np.int64),
    )
