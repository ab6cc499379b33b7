"""Goal metrics: navigation error (NE), oracle error (OE), success (SR), oracle success (OSR).

The examples use the graph of spec/metrics.md worked example 1: nodes S, A, B, G = 0, 1, 2, 3 on
a 4-cycle S-A-B-G-S with 4 m edges.
"""

from __future__ import annotations

from typing import Any

import vlneval.metrics._kernels as _kernels
from vlneval.metrics import _validate
from vlneval.metrics.info import LABELS

__all__ = ["navigation_error", "oracle_error", "success", "oracle_success"]


NAVIGATION_ERROR = LABELS["NE"]


@_validate.public
def navigation_error(trajectory: Any, goals: Any, *, distances: Any) -> float:
    """Navigation error: distance from the final position to the nearest goal.

    ``NE = min_{g in G} d(p_n, g)``, with ``p_n`` the last node of the trajectory. As in the R2R
    paper (Anderson et al. 2018) and Matterport3DSimulator's ``tasks/R2R/eval.py``; the minimum
    over a goal set follows CVDN, SOON and HANNA. An unreachable goal gives ``inf``.

    Args:
        trajectory: 1-D int array, the visited nodes in order (start included), non-empty.
        goals: 1-D int array, one or more goal nodes.
        distances: (n, n) geodesic distance table; ``inf`` marks unreachable pairs.

    Returns:
        The error in the table's unit (metres).

    Raises:
        InvalidInputError: a path is empty, not 1-D integer, or out of range; the table is not
            square.

    Example:
        >>> import numpy as np
        >>> D = np.array([[0, 4, 8, 4], [4, 0, 4, 8], [8, 4, 0, 4], [4, 8, 4, 0]], float)
        >>> navigation_error([0, 1, 2], [3], distances=D)
        4.0
        >>> navigation_error([0, 1, 2], [3, 1], distances=D)
        4.0
    """
    dist, n = _validate.as_table(distances)
    path = _validate.as_path(trajectory, "trajectory", n, allow_empty=False)
    targets = _validate.as_path(goals, "goals", n, allow_empty=False)
    return float(_kernels.nearest(dist, n, path[-1:], targets))


ORACLE_ERROR = LABELS["OE"]


@_validate.public
def oracle_error(trajectory: Any, goals: Any, *, distances: Any) -> float:
    """Oracle error: the smallest distance to a goal over every visited position.

    ``OE = min_j min_{g in G} d(p_j, g)`` over all positions, start included (R2R's oracle
    success in Matterport3DSimulator's ``tasks/R2R/eval.py``).

    Args:
        trajectory: 1-D int array, the visited nodes in order (start included), non-empty.
        goals: 1-D int array, one or more goal nodes.
        distances: (n, n) geodesic distance table; ``inf`` marks unreachable pairs.

    Returns:
        The error in the table's unit (metres); ``<= navigation_error``.

    Raises:
        InvalidInputError: as :func:`navigation_error`.

    Example:
        >>> import numpy as np
        >>> D = np.array([[0, 4, 8, 4], [4, 0, 4, 8], [8, 4, 0, 4], [4, 8, 4, 0]], float)
        >>> oracle_error([0, 3, 2, 1], [3], distances=D)
        0.0
    """
    dist, n = _validate.as_table(distances)
    path = _validate.as_path(trajectory, "trajectory", n, allow_empty=False)
    targets = _validate.as_path(goals, "goals", n, allow_empty=False)
    return float(_kernels.nearest(dist, n, path, targets))


SUCCESS = LABELS["SR"]


@_validate.public
def success(error: Any, *, threshold: float = 3.0, inclusive: bool = False) -> float:
    """Success: 1.0 when the navigation error is within the threshold, else 0.0.

    ``S = 1[NE < threshold]`` (strict, as R2R's ``tasks/R2R/eval.py``, REVERIE, CVDN) or
    ``1[NE <= threshold]`` with ``inclusive=True`` (HANNA, google-research ``r4r`` sDTW). An
    infinite error fails. The mean over episodes is the success rate SR.

    Args:
        error: the navigation error (>= 0, may be ``inf``).
        threshold: the success radius δ (>= 0), 3.0 m by default.
        inclusive: use ``<=`` instead of ``<``.

    Returns:
        1.0 or 0.0.

    Raises:
        InvalidInputError: error is NaN or negative, or threshold is not a finite number >= 0.

    Example:
        >>> success(3.0), success(3.0, inclusive=True), success(2.9), success(float("inf"))
        (0.0, 1.0, 1.0, 0.0)
    """
    return _success(error, threshold, inclusive)


def _success(error: Any, threshold: float, inclusive: bool) -> float:
    value = _validate.as_length(error, "error")
    radius = _validate.as_threshold(threshold, allow_zero=True)
    return float(_kernels.is_success(value, radius, bool(inclusive)))


ORACLE_SUCCESS = LABELS["OSR"]


@_validate.public
def oracle_success(error: Any, *, threshold: float = 3.0, inclusive: bool = False) -> float:
    """Oracle success: 1.0 when the oracle error is within the threshold, else 0.0.

    ``OS = 1[OE < threshold]`` (``<=`` with ``inclusive=True``): the agent passed within the
    radius at some point, stopping there or not (R2R's ``tasks/R2R/eval.py``). The mean is OSR.

    Args:
        error: the oracle error (>= 0, may be ``inf``), see :func:`oracle_error`.
        threshold: the success radius δ (>= 0), 3.0 m by default.
        inclusive: use ``<=`` instead of ``<``.

    Returns:
        1.0 or 0.0.

    Raises:
        InvalidInputError: as :func:`success`.

    Example:
        >>> import numpy as np
        >>> D = np.array([[0, 4, 8, 4], [4, 0, 4, 8], [8, 4, 0, 4], [4, 8, 4, 0]], float)
        >>> oracle_success(oracle_error([0, 3, 2, 1], [3], distances=D))
        1.0
    """
    return _success(error, threshold, inclusive)


INFO = (NAVIGATION_ERROR, ORACLE_ERROR, SUCCESS, ORACLE_SUCCESS)
