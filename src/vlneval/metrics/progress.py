"""Goal progress (GP): how much closer to the goal region the agent ended than it started.

``GP = d(p_1, G) − d(p_n, G)`` with ``d(p, G) = min_{g ∈ G} d(p, g)``, in metres; negative when
the agent ends farther away than it started. CVDN/NDH (Thomason et al. 2019) measures it against
the dialog's ``end_panos`` region (``dist_to_end_reduction`` in ``tasks/NDH/eval.py`` of
mmurray/cvdn); SOON against its single (switched) goal.

The examples use a path graph a - b - c - d with 2 m edges (nodes 0..3).
"""

from __future__ import annotations

from typing import Any

import numpy as np

import vlneval.metrics._kernels as _kernels
import vlneval.metrics._validate as _validate
from vlneval.errors import InvalidInputError
from vlneval.metrics._kernels import nearest as _nearest
from vlneval.metrics.info import LABELS

__all__ = ["goal_progress", "region_distances", "GOAL_PROGRESS"]

GOAL_PROGRESS = LABELS["GP"]


def region_distances(
    dist_flat: np.ndarray,
    table_offsets: np.ndarray,
    table_sizes: np.ndarray,
    scan_index: np.ndarray,
    traj: np.ndarray,
    traj_offsets: np.ndarray,
    goals: np.ndarray,
    goal_offsets: np.ndarray,
) -> dict[str, np.ndarray]:
    """Distances of many packed episodes to their goal regions, in one vectorised pass.

    The layout is :func:`vlneval.metrics.score_batch`'s: per-scan tables concatenated in
    ``dist_flat``, node ids local to the episode's scan, paths and goal sets in CSR arrays.

    Returns:
        ``start`` = ``d(p_1, G)``, ``final`` = ``d(p_n, G)``, ``oracle`` = ``min_j d(p_j, G)``,
        and ``goal_progress`` = ``start − final`` (infinite or NaN when the region is
        unreachable, see :func:`goal_progress`).

    Example:
        >>> D = np.array([[0, 2, 4, 6], [2, 0, 2, 4], [4, 2, 0, 2], [6, 4, 2, 0]], float)
        >>> r = region_distances(D.ravel(), np.array([0]), np.array([4]), np.array([0, 0]),
        ...                      np.array([0, 1, 2, 1, 0]), np.array([0, 3, 5]),
        ...                      np.array([3, 2, 3]), np.array([0, 2, 3]))
        >>> r["goal_progress"].tolist(), r["oracle"].tolist()
        ([4.0, -2.0], [0.0, 4.0])
    """
    n_ep = len(traj_offsets) - 1
    if len(goal_offsets) != n_ep + 1 or len(scan_index) != n_ep:
        raise InvalidInputError(
            "region_distances: offsets and scan_index must describe the same episodes"
        )
    dist = np.ascontiguousarray(dist_flat, dtype=np.float64)
    scan = np.asarray(scan_index, dtype=np.int64)
    start = np.asarray(table_offsets, dtype=np.int64)[scan]
    size = np.asarray(table_sizes, dtype=np.int64)[scan]
    traj = np.asarray(traj, dtype=np.int64)
    t_off = np.asarray(traj_offsets, dtype=np.int64)
    own = _kernels.owners(t_off)
    to_region = _kernels.nearest_each(
        dist, start[own], size[own], traj, own, np.asarray(goals, dtype=np.int64),
        np.asarray(goal_offsets, dtype=np.int64),
    )  # fmt: skip
    out = np.full((3, max(n_ep, 0)), np.inf)
    full = np.flatnonzero(t_off[1:] > t_off[:-1])
    out[0, full] = to_region[t_off[full]]
    out[1, full] = to_region[t_off[full + 1] - 1]
    out[2] = _kernels.segment_min(to_region, t_off)
    return {
        "start": out[0],
        "final": out[1],
        "oracle": out[2],
        "goal_progress": _progress(out[0], out[1]),
    }


def _progress(start: np.ndarray, final: np.ndarray) -> np.ndarray:
    # inf - inf (region unreachable from start and end alike) is NaN on purpose: undefined.
    with np.errstate(invalid="ignore"):
        return start - final


def goal_progress(trajectory: Any, goals: Any, *, distances: Any) -> float:
    """Goal progress of one episode: ``d(p_1, G) − d(p_n, G)`` in the table's unit.

    ``G`` is a goal region (one or more nodes); ``d(p, G)`` the distance to its nearest node.
    Positive when the agent ended closer to the region than it started; the CVDN scorer's
    ``dist_to_end_reduction``. When the region is unreachable (the official scorer crashes
    there) the value is ``-inf`` (unreachable from the end only), ``inf`` (from the start only)
    or NaN (from both: undefined); the runner counts such episodes, leaves them out of the mean
    and says so in the summary's warnings.

    Args:
        trajectory: 1-D int array of visited nodes, start first, non-empty.
        goals: 1-D int array, the goal region, non-empty.
        distances: (n, n) geodesic distance table.

    Example:
        >>> D = np.array([[0, 2, 4, 6], [2, 0, 2, 4], [4, 2, 0, 2], [6, 4, 2, 0]], float)
        >>> goal_progress([0, 1, 2], [3, 2], distances=D)
        4.0
        >>> goal_progress([1, 0], [3], distances=D)
        -2.0
    """
    flat, n = _validate.as_table(distances)
    path = _validate.as_path(trajectory, "trajectory", n, allow_empty=False)
    region = _validate.as_path(goals, "goals", n, allow_empty=False)
    start = _nearest(flat, n, path[:1], region)
    final = _nearest(flat, n, path[-1:], region)
    return float(_progress(np.array([start]), np.array([final]))[0])
