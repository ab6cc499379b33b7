"""Fidelity metrics (how closely a trajectory follows the reference): DTW, nDTW, sDTW, CLS.

None of these functions collapses repeated positions itself: profiles differ (``r2r`` collapses,
``r2r-duet`` and ``r4r`` do not), so the caller applies :func:`collapse_repeats` when its profile
says so. The examples use the graph of spec/metrics.md worked example 1: nodes S, A, B, G =
0, 1, 2, 3 on a 4-cycle S-A-B-G-S with 4 m edges.

Argument order differs, as in the scripts these reproduce: :func:`dtw`, :func:`ndtw` and
:func:`sdtw` take ``(reference, trajectory)`` (google-research ``r4r/dtw.py``), :func:`cls`
takes ``(trajectory, reference)`` (``r4r/cls.py``, spec/metrics.md). Swapped paths run without
an error and give other numbers (nDTW normalises by the first path's length), so name them when
in doubt: ``ndtw(reference=R, trajectory=P, ...)``, ``cls(trajectory=P, reference=R, ...)``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

import vlneval.metrics._kernels as _kernels
from vlneval.metrics import _validate
from vlneval.metrics.info import LABELS

__all__ = ["collapse_repeats", "dtw", "ndtw", "sdtw", "cls"]


@_validate.public
def collapse_repeats(path: Any) -> np.ndarray:
    """The path without consecutive duplicates (turning in place leaves one entry).

    The canonical form of spec/metrics.md for DTW and CLS. Non-consecutive revisits stay.

    Args:
        path: 1-D int array of node indices (may be empty).

    Returns:
        A new int32 array.

    Raises:
        InvalidInputError: the path is not a 1-D integer array or has a negative index.

    Example:
        >>> collapse_repeats([0, 0, 1, 1, 1, 2, 1]).tolist()
        [0, 1, 2, 1]
    """
    nodes = _validate.as_path(path, "path", None, allow_empty=True)
    return _kernels.collapse(nodes)


def _pair(reference: Any, trajectory: Any, distances: Any) -> tuple[np.ndarray, int, Any, Any]:
    dist, n = _validate.as_table(distances)
    ref = _validate.as_path(reference, "reference", n, allow_empty=False)
    traj = _validate.as_path(trajectory, "trajectory", n, allow_empty=True)
    return dist, n, ref, traj


DTW = LABELS["DTW"]


@_validate.public
def dtw(reference: Any, trajectory: Any, *, distances: Any) -> float:
    """Dynamic time warping distance between the reference and the trajectory (exact).

    ``D[0,0] = 0``, ``D[k,0] = D[0,j] = inf``,
    ``D[k,j] = d(r_k, p_j) + min(D[k-1,j], D[k,j-1], D[k-1,j-1])``; ``DTW = D[m,n]``.
    O(m·n) time, O(min(m, n)) memory. Matches google-research ``r4r/dtw.py`` (Ilharco et al.
    2019); unlike VLN-CE's default, no fastdtw approximation. The REFERENCE comes first (as
    in :func:`ndtw`, :func:`sdtw`; :func:`cls` takes the trajectory first).

    Args:
        reference: 1-D int array, the reference path ``R`` (non-empty).
        trajectory: 1-D int array, the executed path ``P``; empty gives ``inf``.
        distances: (n, n) distance table, ``d(u, v)`` at ``[u, v]``; ``inf``: unreachable.

    Returns:
        The accumulated distance (metres), ``inf`` if no finite alignment exists.

    Raises:
        InvalidInputError: a path is not 1-D integer or out of range, the reference is empty, or
            the table is not square.

    Example:
        >>> import numpy as np
        >>> D = np.array([[0, 4, 8, 4], [4, 0, 4, 8], [8, 4, 0, 4], [4, 8, 4, 0]], float)
        >>> dtw([0, 1, 2, 3], [0, 3], distances=D)
        8.0
    """
    dist, n, ref, traj = _pair(reference, trajectory, distances)
    return float(_kernels.dtw(dist, n, ref, traj))


NDTW = LABELS["nDTW"]


@_validate.public
def ndtw(reference: Any, trajectory: Any, *, distances: Any, threshold: float = 3.0) -> float:
    """Normalised dynamic time warping (Ilharco et al. 2019).

    ``nDTW = exp(-DTW(R, P) / (m · δ))`` with ``m`` the NUMBER of reference points and ``δ``
    the threshold. An empty trajectory, or one that cannot reach the reference, gives 0.
    Matches ``ndtw`` in google-research ``r4r/dtw.py`` and the HAMT/DUET scripts. The
    REFERENCE comes first (:func:`cls` takes the trajectory first): swapped, it runs and gives
    another number (``m`` is the first path's length); keywords avoid the mix-up.

    Args:
        reference: 1-D int array, the reference path ``R`` (non-empty).
        trajectory: 1-D int array, the executed path ``P`` (may be empty).
        distances: (n, n) distance table, ``d(u, v)`` at ``[u, v]``; ``inf``: unreachable.
        threshold: δ, finite and > 0 (3.0 m by default).

    Returns:
        A value in [0, 1]; 1 exactly when DTW = 0 (e.g. the trajectory is the reference).

    Raises:
        InvalidInputError: as :func:`dtw`, or a threshold that is not finite and > 0.

    Example:
        >>> import numpy as np
        >>> D = np.array([[0, 4, 8, 4], [4, 0, 4, 8], [8, 4, 0, 4], [4, 8, 4, 0]], float)
        >>> round(ndtw([0, 1, 2, 3], [0, 3], distances=D), 4)
        0.5134
        >>> round(ndtw(reference=[0, 1, 2, 3], trajectory=[0, 3], distances=D), 4)
        0.5134
        >>> ndtw([0, 1, 2, 3], [0, 1, 2, 3], distances=D), ndtw([0, 1, 2, 3], [], distances=D)
        (1.0, 0.0)
    """
    return _ndtw(reference, trajectory, distances, threshold)


def _ndtw(reference: Any, trajectory: Any, distances: Any, threshold: float) -> float:
    dist, n, ref, traj = _pair(reference, trajectory, distances)
    delta = _validate.as_threshold(threshold)
    value = _kernels.dtw(dist, n, ref, traj)
    return float(_kernels.ndtw_from_dtw(value, ref.shape[0], delta))


SDTW = LABELS["sDTW"]


@_validate.public
def sdtw(
    reference: Any,
    trajectory: Any,
    *,
    distances: Any,
    threshold: float = 3.0,
    success: Any,
) -> float:
    """Success weighted by normalised DTW (Ilharco et al. 2019).

    ``sDTW = S · nDTW`` per episode; the benchmark value is the mean of that, NOT
    ``SR · mean(nDTW)``. The success comparison is the caller's (``<`` in the HAMT/DUET scripts,
    ``<=`` in google-research ``r4r/dtw.py``), passed in as ``success``. The REFERENCE comes
    first, as in :func:`ndtw` (:func:`cls` takes the trajectory first).

    Args:
        reference: 1-D int array, the reference path ``R`` (non-empty).
        trajectory: 1-D int array, the executed path ``P`` (may be empty).
        distances: (n, n) distance table, ``d(u, v)`` at ``[u, v]``; ``inf``: unreachable.
        threshold: δ of the nDTW normalisation, finite and > 0.
        success: the episode's success indicator (bool, 0 or 1).

    Returns:
        A value in [0, 1], at most :func:`ndtw`.

    Raises:
        InvalidInputError: as :func:`ndtw`, or success not 0/1.

    Example:
        >>> import numpy as np
        >>> D = np.array([[0, 4, 8, 4], [4, 0, 4, 8], [8, 4, 0, 4], [4, 8, 4, 0]], float)
        >>> round(sdtw([0, 1, 2, 3], [0, 3], distances=D, success=True), 4)
        0.5134
        >>> sdtw([0, 1, 2, 3], [0, 3], distances=D, success=0)
        0.0
    """
    s = _validate.as_indicator(success)
    return s * _ndtw(reference, trajectory, distances, threshold)


CLS = LABELS["CLS"]


@_validate.public
def cls(trajectory: Any, reference: Any, *, distances: Any, threshold: float = 3.0) -> float:
    """Coverage weighted by length score (Jain et al. 2019, "Stay on the Path").

    ``PC = (1/m) Σ_k exp(-min_j d(r_k, p_j) / δ)``, ``EPL = PC · L(R)``,
    ``LS = EPL / (EPL + |EPL - L(P)|)`` (LS = 1 when that denominator is 0), ``CLS = PC · LS``,
    with ``L`` the summed hop distances (repeats add 0). Matches google-research ``r4r/cls.py``
    with metre weights. Not symmetric: the PREDICTION (trajectory) comes first, unlike
    :func:`dtw`, :func:`ndtw` and :func:`sdtw`, which take the reference first; swapped, it runs
    and gives another number, so name them when in doubt. A reference with an unreachable hop
    (``L(R) = inf``) scores 0; an empty trajectory scores 0.

    Args:
        trajectory: 1-D int array, the executed path ``P`` (may be empty).
        reference: 1-D int array, the reference path ``R`` (non-empty).
        distances: (n, n) distance table, ``d(u, v)`` at ``[u, v]``; ``inf``: unreachable.
        threshold: δ, finite and > 0 (3.0 m by default).

    Returns:
        A value in [0, 1]; 1 when the trajectory is the reference.

    Raises:
        InvalidInputError: as :func:`ndtw`.

    Example:
        >>> import numpy as np
        >>> D = np.array([[0, 4, 8, 4], [4, 0, 4, 8], [8, 4, 0, 4], [4, 8, 4, 0]], float)
        >>> round(cls([0, 3], [0, 1, 2, 3], distances=D), 4)
        0.4291
        >>> round(cls(trajectory=[0, 3], reference=[0, 1, 2, 3], distances=D), 4)
        0.4291
        >>> cls([0, 1, 2, 3], [0, 1, 2, 3], distances=D)
        1.0
    """
    dist, n, ref, traj = _pair(reference, trajectory, distances)
    delta = _validate.as_threshold(threshold)
    traj_len = _kernels.path_length(dist, n, traj)
    ref_len = _kernels.path_length(dist, n, ref)
    return float(_kernels.cls(dist, n, traj, ref, delta, traj_len, ref_len))


INFO = (DTW, NDTW, SDTW, CLS)
