"""Metrics on positions in continuous space (VLN-CE): path length, DTW, nDTW.

Positions are ``(n, d)`` arrays of points in metres (``d = 3`` in VLN-CE). The cost of aligning
two points is their straight-line (Euclidean) distance, as VLN-CE's ``NDTW`` measure uses.

Two DTWs are offered:

- :func:`point_dtw`, the exact DTW of spec/metrics.md, O(m·n) time and O(min(m, n)) memory;
- :func:`fast_dtw`, a re-implementation of the ``fastdtw`` package (Salvador & Chan 2007, package
  0.3.4) that VLN-CE calls by default with radius 1. It is an APPROXIMATION: it never returns less
  than the exact DTW and sometimes more. The package ships two implementations that disagree
  on some inputs: its compiled extension (``fastdtw._fastdtw``, what ``import fastdtw`` runs
  when the extension was built) and its pure-Python fallback (``fastdtw/fastdtw.py``).
  ``variant="compiled"`` and ``variant="python"`` reproduce each, including the compiled
  version's tie-breaking (diagonal first), its narrower window at the last rows of an
  odd-length series and its missing diagonal at the top edge of a window row.

Importing this module imports numba: DTW on long continuous paths (hundreds of points each
side, fastdtw's recursive windows) is where compiled loops pay. The kernels are compiled on first
use and cached; a first call that takes over a second says so on stderr.
"""

from __future__ import annotations

import math
from typing import Any

import numba
import numpy as np

from vlneval._compiling import first_call
from vlneval.errors import InvalidInputError, UnknownNameError
from vlneval.metrics._kernels import ndtw_from_dtw
from vlneval.metrics.info import variant

__all__ = [
    "as_points",
    "drop_repeats",
    "point_path_length",
    "point_dtw",
    "fast_dtw",
    "point_ndtw",
    "ndtw_from_dtw",
    "check_dtw_costs",
    "FASTDTW_VARIANTS",
    "INFO",
]

FASTDTW_VARIANTS = ("compiled", "python")

_jit = numba.njit(cache=True, nogil=True, error_model="numpy")
_UP, _LEFT, _DIAG = 0, 1, 2


def as_points(value: Any, name: str = "positions", *, allow_empty: bool = False) -> np.ndarray:
    """``value`` as a C-contiguous float64 ``(n, d)`` array of finite coordinates.

    Raises:
        InvalidInputError: not a 2-D numeric array, a NaN or infinite coordinate, or empty when
            ``allow_empty`` is False.

    Example:
        >>> as_points([[0, 0, 0], [1, 2, 3]]).shape
        (2, 3)
    """
    try:
        arr = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise InvalidInputError(f"{name} must be an (n, d) array of numbers ({exc})") from None
    if arr.ndim != 2 or (arr.shape[0] and arr.shape[1] == 0):
        raise InvalidInputError(f"{name} must be an (n, d) array of points; got shape {arr.shape}")
    if arr.shape[0] == 0 and not allow_empty:
        raise InvalidInputError(f"{name} must hold at least one point")
    if not np.isfinite(arr).all():
        row = int(np.flatnonzero(~np.isfinite(arr).all(axis=1))[0])
        raise InvalidInputError(f"{name}[{row}] holds NaN or infinity: {arr[row].tolist()}")
    return np.ascontiguousarray(arr)


def drop_repeats(positions: Any) -> np.ndarray:
    """The positions without consecutive exact repeats (a turn in place leaves one point).

    VLN-CE's ``NDTW`` measure appends the agent's position only when it differs from the last
    appended one (``current_position == self.locations[-1]``: exact equality, no tolerance).

    Example:
        >>> drop_repeats([[0, 0, 0], [0, 0, 0], [1, 0, 0], [0, 0, 0]]).tolist()
        [[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 0.0]]
    """
    p = as_points(positions, allow_empty=True)
    if len(p) < 2:
        return p.copy()
    keep = np.ones(len(p), dtype=np.bool_)
    keep[1:] = (p[1:] != p[:-1]).any(axis=1)
    return p[keep]


def point_path_length(positions: Any) -> float:
    """Trajectory length: the sum of straight-line steps between consecutive positions.

    ``TL = Σ_j ||p_{j+1} − p_j||`` (VLN-CE's ``PathLength`` measure; spec/graphs.md). It is only
    as long as the log is dense: a curved motion logged sparsely is under-counted, which is why
    vlneval's environments log every control step.

    Example:
        >>> point_path_length([[0, 0, 0], [3, 4, 0], [3, 4, 0], [3, 4, 1]])
        6.0
    """
    p = as_points(positions, allow_empty=True)
    if len(p) < 2:
        return 0.0
    return float(np.sqrt(((p[1:] - p[:-1]) ** 2).sum(axis=1)).sum())


@_jit
def _cost(a, i, b, j):
    s = 0.0
    for d in range(a.shape[1]):
        diff = b[j, d] - a[i, d]
        s += diff * diff
    return math.sqrt(s)


@_jit
def _exact_dtw(a, b):
    """Exact DTW over a rolling row of the shorter series."""
    if a.shape[0] < b.shape[0]:
        a, b = b, a
    n, m = a.shape[0], b.shape[0]
    if m == 0:
        return np.inf
    row = np.empty(m)
    acc = 0.0
    for j in range(m):
        acc += _cost(a, 0, b, j)
        row[j] = acc
    for i in range(1, n):
        diag = np.inf
        left = np.inf
        for j in range(m):
            up = row[j]
            best = up if up < left else left
            if diag < best:
                best = diag
            left = _cost(a, i, b, j) + best
            diag = up
            row[j] = left
    return row[m - 1]


@_jit
def _reduce_by_half(x):
    k = x.shape[0] // 2
    out = np.empty((k, x.shape[1]))
    for i in range(k):
        for d in range(x.shape[1]):
            out[i, d] = (x[2 * i, d] + x[2 * i + 1, d]) / 2
    return out


@_jit
def _window_dtw(x, y, lo, hi, compiled, top_quirk):
    """DTW restricted to rows ``i`` x columns ``lo[i]..hi[i]``; returns (cost, path_i, path_j)."""
    n = x.shape[0]
    start = np.zeros(n + 1, dtype=np.int64)
    for i in range(n):
        start[i + 1] = start[i] + hi[i] - lo[i] + 1
    cost = np.empty(start[n])
    move = np.empty(start[n], dtype=np.int8)
    for i in range(n):
        for j in range(lo[i], hi[i] + 1):
            dt = _cost(x, i, y, j)
            up = np.inf
            left = np.inf
            diag = np.inf
            if i == 0 and j == 0:
                diag = 0.0
            else:
                if i > 0 and lo[i - 1] <= j <= hi[i - 1]:
                    up = cost[start[i - 1] + j - lo[i - 1]]
                if j - 1 >= lo[i]:
                    left = cost[start[i] + j - 1 - lo[i]]
                if i > 0 and lo[i - 1] <= j - 1 <= hi[i - 1] and not (top_quirk and j > hi[i - 1]):
                    diag = cost[start[i - 1] + j - 1 - lo[i - 1]]
            k = start[i] + j - lo[i]
            if compiled:  # _fastdtw.pyx: up only if strictly smallest, then left, else diagonal
                if up < left and up < diag:
                    cost[k] = up + dt
                    move[k] = _UP
                elif left < diag:
                    cost[k] = left + dt
                    move[k] = _LEFT
                else:
                    cost[k] = diag + dt
                    move[k] = _DIAG
            else:  # fastdtw.py: min((up+dt), (left+dt), (diag+dt)), the first minimum wins
                best = up + dt
                mv = _UP
                if left + dt < best:
                    best = left + dt
                    mv = _LEFT
                if diag + dt < best:
                    best = diag + dt
                    mv = _DIAG
                cost[k] = best
                move[k] = mv
    m = y.shape[0]
    last = start[n] - 1 if compiled else start[n - 1] + (m - 1) - lo[n - 1]
    total = cost[last] if (compiled or hi[n - 1] == m - 1) else np.inf
    pi = np.empty(n + m, dtype=np.int64)
    pj = np.empty(n + m, dtype=np.int64)
    i, j = n - 1, hi[n - 1]
    length = 0
    while True:
        pi[length] = i
        pj[length] = j
        length += 1
        if i == 0 and j == 0:
            break
        mv = move[start[i] + j - lo[i]]
        if mv == _UP:
            i -= 1
        elif mv == _LEFT:
            j -= 1
        else:
            i -= 1
            j -= 1
    return total, pi[:length][::-1].copy(), pj[:length][::-1].copy()


@_jit
def _expand_window(pi, pj, len_x, len_y, radius, compiled):
    max_x = pi[-1]
    max_y = pj[-1]
    ylo = np.empty(max_x + 1, dtype=np.int64)
    yhi = np.empty(max_x + 1, dtype=np.int64)
    cur = -1
    for k in range(pi.shape[0]):
        if pi[k] != cur:
            cur = pi[k]
            ylo[cur] = pj[k]
        yhi[cur] = pj[k]
    lo = np.zeros(len_x, dtype=np.int64)
    hi = np.zeros(len_x, dtype=np.int64)
    low2 = 0
    high2 = 0
    for X in range(max_x + radius + 1):
        if max_x >= X:
            low2 = max(0, ylo[max(0, X - radius)] - radius)
            high2 = min(max_y + radius, yhi[min(max_x, X + radius)] + radius)
        elif not compiled:  # fastdtw.py dilates the path: the extra rows follow the path
            low2 = max(0, ylo[max(0, X - radius)] - radius)
            high2 = yhi[max_x] + radius
        # else: _fastdtw.pyx copies the bounds of the previous row
        for r in (2 * X, 2 * X + 1):
            if r < len_x:
                lo[r] = 2 * low2
                hi[r] = min(len_y - 1, 2 * high2 + 1)
    return lo, hi


@_jit
def _fast_dtw(x, y, radius, compiled):
    # The pyramid of halved series, coarsest last (fastdtw's recursion, unrolled).
    xs = [x]
    ys = [y]
    while xs[-1].shape[0] >= radius + 2 and ys[-1].shape[0] >= radius + 2:
        xs.append(_reduce_by_half(xs[-1]))
        ys.append(_reduce_by_half(ys[-1]))
    top = len(xs) - 1
    cx, cy = xs[top], ys[top]
    lo = np.zeros(cx.shape[0], dtype=np.int64)
    hi = np.full(cx.shape[0], cy.shape[0] - 1, dtype=np.int64)
    total, pi, pj = _window_dtw(cx, cy, lo, hi, compiled, False)
    for level in range(top - 1, -1, -1):
        fx, fy = xs[level], ys[level]
        lo, hi = _expand_window(pi, pj, fx.shape[0], fy.shape[0], radius, compiled)
        total, pi, pj = _window_dtw(fx, fy, lo, hi, compiled, compiled)
    return total


def point_dtw(reference: Any, trajectory: Any) -> float:
    """Exact dynamic time warping between two point sequences, Euclidean point costs.

    ``D[0,0] = 0``, ``D[k,0] = D[0,j] = inf``,
    ``D[k,j] = ||r_k − p_j|| + min(D[k−1,j], D[k,j−1], D[k−1,j−1])``; ``DTW = D[m,n]``
    (spec/metrics.md; Ilharco et al. 2019). Symmetric in its arguments.

    Args:
        reference: ``(m, d)`` reference points (VLN-CE: the dense ``_gt`` locations).
        trajectory: ``(n, d)`` executed points; empty gives ``inf``.

    Raises:
        InvalidInputError: as :func:`as_points`, different dimensions, or points so far apart
            that the DTW overflows (:func:`check_dtw_costs`).

    Example:
        >>> point_dtw([[0, 0], [1, 0], [2, 0]], [[0, 0], [2, 0]])
        1.0
    """
    ref = as_points(reference, "reference")
    traj = as_points(trajectory, "trajectory", allow_empty=True)
    if traj.shape[0] and traj.shape[1] != ref.shape[1]:
        raise InvalidInputError(
            f"reference and trajectory must have the same dimension; got {ref.shape[1]} and "
            f"{traj.shape[1]}"
        )
    if len(traj):
        check_dtw_costs(ref, traj, "reference and trajectory")
    with first_call("the continuous DTW kernel"):
        return float(_exact_dtw(ref, traj))


def fast_dtw(x: Any, y: Any, *, radius: int = 1, variant: str = "compiled") -> float:
    """The ``fastdtw`` package's approximate DTW distance, ``fastdtw(x, y, radius, dist=L2)[0]``.

    VLN-CE calls ``fastdtw(agent_locations, gt_locations, dist=euclidean_distance)``: the
    agent's points come FIRST (the approximation is not symmetric). The result is at least the
    exact :func:`point_dtw` and equals it for short series (fewer than ``radius + 2`` points).

    Args:
        x, y: ``(n, d)`` and ``(m, d)`` non-empty point sequences.
        radius: the window radius, >= 1 (fastdtw's default and VLN-CE's is 1; with 0 the
            package's own code fails on some inputs).
        variant: ``compiled`` (the package's C++ extension) or ``python`` (its fallback).

    Raises:
        InvalidInputError: as :func:`point_dtw` (the package itself crashes on points whose
            costs overflow; they are refused first).

    Example:
        >>> x = [[0.0, 0], [1, 0], [2, 0], [3, 0], [4, 0]]
        >>> fast_dtw(x, [[0.0, 0], [2, 1], [4, 0]]), round(point_dtw(x, [[0.0, 0], [2, 1], [4, 0]]), 4)
        (3.0, 3.0)
    """
    if variant not in FASTDTW_VARIANTS:
        raise UnknownNameError("fastdtw variant", variant, FASTDTW_VARIANTS)
    if isinstance(radius, bool) or not isinstance(radius, (int, np.integer)) or radius < 1:
        raise InvalidInputError(f"radius must be an integer >= 1; got {radius!r}")
    a = as_points(x, "x")
    b = as_points(y, "y")
    if a.shape[1] != b.shape[1]:
        raise InvalidInputError(
            f"x and y must have the same dimension; got {a.shape[1]} and {b.shape[1]}"
        )
    check_dtw_costs(a, b)  # guarded first: infinite costs send the kernel out of its window
    with first_call("the fastdtw kernel"):
        return float(_fast_dtw(a, b, int(radius), variant == "compiled"))


def point_ndtw(
    reference: Any,
    trajectory: Any,
    *,
    threshold: float = 3.0,
    method: str = "exact",
    radius: int = 1,
    variant: str = "compiled",
) -> float:
    """Normalised DTW of a trajectory against a dense reference, as VLN-CE scores it.

    ``nDTW = exp(−DTW(P', R) / (|R| · δ))`` with ``P'`` the trajectory without consecutive
    repeated points (:func:`drop_repeats`) and ``|R|`` the number of reference points (not
    metres). ``method="fastdtw"`` uses :func:`fast_dtw` (agent first), VLN-CE's default;
    ``method="exact"`` the exact DTW.

    Example:
        >>> ref = [[0.0, 0, 0], [1, 0, 0], [2, 0, 0]]
        >>> point_ndtw(ref, [[0.0, 0, 0], [1, 0, 0], [1, 0, 0], [2, 0, 0]])
        1.0
        >>> round(point_ndtw(ref, [[0.0, 0, 0], [2, 0, 0]]), 4)
        0.8948
    """
    ref = as_points(reference, "reference")
    traj = drop_repeats(trajectory)
    if len(traj) == 0:
        return 0.0
    if method == "exact":
        value = point_dtw(ref, traj)
    elif method == "fastdtw":
        value = fast_dtw(traj, ref, radius=radius, variant=variant)
    else:
        raise UnknownNameError("DTW method", method, ("exact", "fastdtw"))
    return ndtw_from_dtw(value, len(ref), threshold)


def check_dtw_costs(a: np.ndarray, b: np.ndarray, names: str = "x and y") -> None:
    """Refuses two point sequences whose DTW would overflow a 64-bit float.

    Every warping path has fewer than ``len(a) + len(b)`` steps and each step costs at most the
    diagonal of the points' bounding box, so ``diagonal · (len(a) + len(b))`` bounds the DTW;
    when that bound is not finite (coordinates near 1e154 or beyond, far from metres in one
    building) the point costs overflow, and the fastdtw kernel, like the ``fastdtw`` package,
    would follow an infinite-cost path out of its window. Finite arrays are assumed.

    Raises:
        InvalidInputError: the bound is not finite.

    Example:
        >>> check_dtw_costs(np.zeros((2, 3)), np.ones((3, 3)))
        >>> try:
        ...     check_dtw_costs(np.zeros((2, 3)), np.full((1, 3), 1e200))
        ... except InvalidInputError as e:
        ...     print(str(e)[:60])
        error: x and y hold a coordinate of 1e+200 m: their DTW over
    """
    with np.errstate(over="ignore", invalid="ignore"):
        pts = np.concatenate([a, b])
        span = pts.max(axis=0) - pts.min(axis=0)
        diagonal = math.sqrt(float((span * span).sum()))
        bound = diagonal * (len(a) + len(b))
    if not math.isfinite(bound):
        largest = float(np.abs(pts).max())
        raise InvalidInputError(
            f"{names} hold a coordinate of {largest:.3g} m: their DTW overflows a 64-bit float "
            f"(the points' bounding box is {diagonal:.3g} m across); positions are metres in "
            "one building"
        )


INFO = (
    variant("TL", "point_path_length", "sum of straight-line steps of the recorded motion"),
    variant("DTW", "point_dtw", "exact DTW with Euclidean point costs"),
    variant("nDTW", "point_ndtw", "exp(-DTW / (m·δ)) against dense points"),
)
