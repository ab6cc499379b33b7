"""Path metrics: trajectory length (TL) and success weighted by path length (SPL).

The examples use the graph of spec/metrics.md worked example 1: nodes S, A, B, G = 0, 1, 2, 3 on
a 4-cycle S-A-B-G-S with 4 m edges.
"""

from __future__ import annotations

from typing import Any

import vlneval.metrics._kernels as _kernels
from vlneval.metrics import _validate
from vlneval.metrics.info import LABELS

__all__ = ["path_length", "spl"]


PATH_LENGTH = LABELS["TL"]


@_validate.public
def path_length(trajectory: Any, *, distances: Any) -> float:
    """Trajectory length: the summed distance between consecutive positions.

    ``TL = Σ_j d(p_j, p_{j+1})``; a repeated position (turning in place) adds exactly 0. On a
    navigation graph consecutive distinct nodes should be neighbours; this function does not
    check that (loaders and profiles do): a jump is scored with its geodesic distance, as the
    HAMT/DUET scripts do. Matches ``trajectory_lengths`` of R2R's ``tasks/R2R/eval.py``.

    Args:
        trajectory: 1-D int array, the visited nodes in order; empty or single node gives 0.
        distances: (n, n) geodesic distance table; ``inf`` marks unreachable pairs.

    Returns:
        The length in the table's unit (metres); ``inf`` if a hop is unreachable.

    Raises:
        InvalidInputError: the trajectory is not 1-D integer or out of range; the table is not
            square.

    Example:
        >>> import numpy as np
        >>> D = np.array([[0, 4, 8, 4], [4, 0, 4, 8], [8, 4, 0, 4], [4, 8, 4, 0]], float)
        >>> path_length([0, 1, 1, 2, 3], distances=D)
        12.0
    """
    dist, n = _validate.as_table(distances)
    path = _validate.as_path(trajectory, "trajectory", n, allow_empty=True)
    return float(_kernels.path_length(dist, n, path))


SPL = LABELS["SPL"]


@_validate.public
def spl(success: Any, shortest_length: Any, path_length: Any, *, floor: float = 0.0) -> float:
    """Success weighted by path length (Anderson et al. 2018, "On Evaluation of Embodied ...").

    ``SPL = S · ℓ / max(ℓ, TL, floor)`` with ``ℓ`` the profile's reference length (default the
    shortest start-to-goal distance). ``floor = 0`` reproduces R2R's ``tasks/R2R/eval.py``;
    ``floor = 0.01`` the EnvDrop and HAMT/DUET scripts. Edge cases, never NaN:

    - ``ℓ = 0`` and ``floor = 0``: the CVDN rule, SPL = 1 if successful and ``TL = 0``, else 0;
    - ``ℓ = 0`` and ``floor > 0``: the formula, i.e. 0 (what the EnvDrop/DUET scripts give);
    - ``ℓ = inf`` (goal unreachable from the start): 0; ``TL = inf``: 0.

    Args:
        success: the episode's success indicator (bool, 0 or 1).
        shortest_length: ``ℓ``, >= 0 (may be ``inf``).
        path_length: ``TL``, >= 0 (may be ``inf``).
        floor: the lower bound of the denominator (finite, >= 0).

    Returns:
        A value in [0, 1].

    Raises:
        InvalidInputError: success is not 0/1, a length is NaN or negative, floor is not finite.

    Example:
        >>> round(spl(1, 4.0, 12.0), 4), spl(1, 4.0, 4.0), spl(0, 4.0, 4.0)
        (0.3333, 1.0, 0.0)
        >>> spl(True, 0.0, 0.0), spl(True, 0.0, 0.0, floor=0.01)
        (1.0, 0.0)
    """
    s = _validate.as_indicator(success)
    ell = _validate.as_length(shortest_length, "shortest_length")
    tl = _validate.as_length(path_length, "path_length")
    low = _validate.as_threshold(floor, "floor", allow_zero=True)
    return float(_kernels.spl(s, ell, tl, low))


INFO = (PATH_LENGTH, SPL)
