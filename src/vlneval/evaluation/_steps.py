"""Per-episode step counts (jumps, repeats) of ragged trajectories, vectorised."""

from __future__ import annotations

import numpy as np

__all__ = ["step_counts"]


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
    path = np.asarray(traj, dtype=np.int64)
    off = np.asarray(offsets, dtype=np.int64)
    n = off.shape[0] - 1
    owner = np.repeat(np.arange(n), np.diff(off))
    hop = np.flatnonzero(owner[:-1] == owner[1:])  # p -> p + 1 within one episode
    episode = owner[hop]
    a, b = path[hop], path[hop + 1]
    scan = np.asarray(scan_index, dtype=np.int64)[episode]
    size = np.asarray(table_sizes, dtype=np.int64)[scan]
    base = np.asarray(table_offsets, dtype=np.int64)[scan]
    same = a == b
    jump = ~same & ~np.asarray(adjacency, dtype=np.bool_)[base + a * size + b]
    jumps = np.bincount(episode[jump], minlength=n)
    repeats = np.bincount(episode[same], minlength=n)
    first_jump = np.full(n, -1, np.int64)
    jumped, first = np.unique(episode[jump], return_index=True)  # hops are in order
    first_jump[jumped] = hop[jump][first]
    return jumps, repeats, first_jump
