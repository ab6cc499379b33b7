"""Per-episode jumps (moves along no graph edge) and repeats of ragged trajectories, vectorised."""

from __future__ import annotations

import numpy as np

from vlneval.metrics._kernels import moves, owners

__all__ = ["step_counts"]


def step_counts(
    traj: np.ndarray,
    offsets: np.ndarray,
    scan_index: np.ndarray,
    adjacency: np.ndarray,
    table_offsets: np.ndarray,
    table_sizes: np.ndarray,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per episode: moves between distinct non-adjacent viewpoints, the flat position of the
    first one (-1 when none) and positions equal to their predecessor (the kernels' repeats).

    Example:
        >>> adj = np.array([False, True, True, False])  # two nodes, one edge
        >>> j, f, r = step_counts(np.array([0, 0, 1, 1]), np.array([0, 4]), np.array([0]),
        ...                       adj, np.array([0]), np.array([2]))
        >>> j.tolist(), f.tolist(), r.tolist()
        ([0], [-1], [2])
    """
    path = np.asarray(traj)
    off = np.asarray(offsets, dtype=np.int64)
    scans = np.asarray(scan_index, dtype=np.int64)
    adjacent = np.asarray(adjacency, dtype=np.bool_)
    base = np.asarray(table_offsets, dtype=np.int64)
    size = np.asarray(table_sizes, dtype=np.int64)
    n = off.shape[0] - 1
    jumps = np.zeros(n, np.int64)
    first_jump = np.full(n, -1, np.int64)
    repeats = np.zeros(n, np.int64)
    for lo in range(0, n, CHUNK):  # bounded temporaries on very large batches
        hi = min(lo + CHUNK, n)
        part = off[lo : hi + 1]
        seg, local = path[part[0] : part[-1]], part - part[0]
        owner = owners(local)
        moved, same = moves(seg, local)
        to = np.flatnonzero(moved)  # p - 1 -> p to another viewpoint
        episode = owner[to]
        repeats[lo:hi] = np.bincount(owner[same], minlength=hi - lo)
        scan = scans[lo:hi][episode]
        jump = ~adjacent[base[scan] + seg[to - 1].astype(np.int64) * size[scan] + seg[to]]
        jumps[lo:hi] = np.bincount(episode[jump], minlength=hi - lo)
        jumped, first = np.unique(episode[jump], return_index=True)  # hops are in order
        first_jump[lo + jumped] = part[0] + to[jump][first] - 1
    return jumps, first_jump, repeats


CHUNK = 16_384  # episodes per pass
