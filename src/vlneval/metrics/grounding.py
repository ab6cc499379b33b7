"""Object metrics: remote grounding (REVERIE), visibility success, SOON localisation.

Pure functions on arrays: no file, graph or simulator is read here. Conventions:

- REVERIE (Qi et al. 2020, ``YuankaiQi/REVERIE tasks/REVERIE/eval_release.py``): navigation
  succeeds when the target object is *visible* from the final viewpoint (its BBox entry there has
  a non-empty ``visible_pos``), oracle success when it is visible from any visited viewpoint;
  ``RGS = 1[str(predicted) == str(target)]`` (not gated by navigation) and
  ``RGSPL = RGS · ℓ / max(ℓ, TL)``.
- SOON (Zhu et al. 2021, ``ZhuFengdaaa/SOON r2r_src/eval.py``): a target box is four corners in
  normalised angle space ``(heading / 2π, (elevation + π) / 2π)``; localisation succeeds when the
  predicted point lies strictly inside the polygon ``left_top, right_top, right_bottom,
  left_bottom`` (shapely's ``Polygon.contains``: the boundary is outside).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from vlneval.errors import InvalidInputError
from vlneval.metrics._kernels import spl_of
from vlneval.metrics.info import LABELS, variant

__all__ = [
    "INFO",
    "remote_grounding_success",
    "length_weighted",
    "visibility_success",
    "official_normalised",
    "duet_normalised",
    "point_in_polygon",
    "localisation_success",
]

TWO_PI = 2.0 * math.pi

RGS = LABELS["RGS"]
RGSPL = LABELS["RGSPL"]
VISIBLE = variant(
    "SR",
    "visibility_success",
    "the target object is visible from the final viewpoint (REVERIE navigation success)",
)
DET_SR = LABELS["det_SR"]
DET_SPL = LABELS["det_SPL"]

#: Metadata of the metrics in this module.
INFO = (RGS, RGSPL, VISIBLE, DET_SR, DET_SPL)


def remote_grounding_success(predicted: Sequence[Any], target: Sequence[Any]) -> np.ndarray:
    """Remote grounding success per episode: ``1[str(predicted) == str(target)]``.

    Ids are compared as strings, as the official REVERIE scorer does (``objId == str(predObjId)``);
    a missing prediction (``None``) never matches. Not conditioned on navigation success.

    Args:
        predicted: the predicted object id of each episode (int, str or None).
        target: the target object id of each episode.

    Returns:
        float64 array of 0/1, one per episode.

    Raises:
        InvalidInputError: the two sequences differ in length.

    Example:
        >>> remote_grounding_success([215, "7", None], ["215", "8", "3"]).tolist()
        [1.0, 0.0, 0.0]
    """
    if len(predicted) != len(target):
        raise InvalidInputError(
            f"remote_grounding_success: {len(predicted)} predictions for {len(target)} targets"
        )
    return np.fromiter(
        (p is not None and str(p) == str(t) for p, t in zip(predicted, target, strict=True)),
        dtype=np.float64,
        count=len(target),
    )


def length_weighted(
    success: Any, shortest_length: Any, path_length: Any, *, floor: float = 0.0
) -> np.ndarray:
    """``S · ℓ / max(ℓ, TL, floor)`` per episode: SPL, RGSPL and det SPL.

    The same rule as :func:`vlneval.metrics.spl`, vectorised: with ``ℓ = 0`` and ``floor = 0``
    the CVDN rule (1 if successful and ``TL = 0``, else 0); ``ℓ = inf`` gives 0; never NaN.
    ``floor = 0`` reproduces the REVERIE scorer, ``0.01`` the SOON and VLN-DUET scorers.

    Args:
        success: 0/1 per episode.
        shortest_length: ``ℓ`` per episode (>= 0, may be inf).
        path_length: ``TL`` per episode (>= 0, may be inf).
        floor: lower bound of the denominator (finite, >= 0).

    Returns:
        float64 array in [0, 1].

    Raises:
        InvalidInputError: shapes differ, success is not 0/1, a length is NaN or negative.

    Example:
        >>> length_weighted([1, 1, 0, 1], [4.0, 4.0, 4.0, 0.0], [12.0, 4.0, 4.0, 0.0]).round(4).tolist()
        [0.3333, 1.0, 0.0, 1.0]
        >>> length_weighted([1], [0.0], [0.0], floor=0.01).tolist()
        [0.0]
    """
    s = np.asarray(success, dtype=np.float64)
    ell = np.asarray(shortest_length, dtype=np.float64)
    tl = np.asarray(path_length, dtype=np.float64)
    if not (s.shape == ell.shape == tl.shape) or s.ndim != 1:
        raise InvalidInputError(
            f"length_weighted: success, shortest_length and path_length must be 1-D of one length; "
            f"got shapes {s.shape}, {ell.shape}, {tl.shape}"
        )
    if not np.isin(s, (0.0, 1.0)).all():
        raise InvalidInputError("length_weighted: success must be 0 or 1")
    for name, x in (("shortest_length", ell), ("path_length", tl)):
        if np.isnan(x).any() or (x < 0).any():
            raise InvalidInputError(f"length_weighted: {name} must be >= 0 (NaN found or negative)")
    if not (math.isfinite(floor) and floor >= 0):
        raise InvalidInputError(f"length_weighted: floor must be finite and >= 0, got {floor}")
    return spl_of(s, ell, tl, float(floor))


def visibility_success(visible_at: Any, offsets: Any) -> tuple[np.ndarray, np.ndarray]:
    """REVERIE navigation success and oracle success from per-step visibility.

    ``visible_at[p]`` says whether the target object is visible from the viewpoint at flat
    trajectory position ``p`` (its BBox entry there lists at least one view); episode ``i`` is
    ``visible_at[offsets[i]:offsets[i + 1]]``. Success = visible from the last position; oracle
    success = visible from any position (start included).

    Args:
        visible_at: 1-D bool array over all trajectory positions, flat.
        offsets: int array ``N + 1``, non-decreasing; every episode non-empty.

    Returns:
        ``(success, oracle_success)``, float64 arrays of 0/1.

    Raises:
        InvalidInputError: malformed offsets or an empty trajectory.

    Example:
        >>> s, o = visibility_success([False, True, False, True, False], [0, 3, 5])
        >>> s.tolist(), o.tolist()
        ([0.0, 0.0], [1.0, 1.0])
    """
    vis = np.asarray(visible_at, dtype=np.bool_)
    off = np.asarray(offsets, dtype=np.int64)
    if vis.ndim != 1 or off.ndim != 1 or len(off) < 1 or off[0] != 0 or off[-1] != len(vis):
        raise InvalidInputError("visibility_success: offsets must run from 0 to len(visible_at)")
    lengths = np.diff(off)
    if (lengths <= 0).any():
        raise InvalidInputError("visibility_success: every trajectory needs at least one position")
    if len(lengths) == 0:
        return np.zeros(0), np.zeros(0)
    success = vis[off[1:] - 1].astype(np.float64)
    oracle = np.maximum.reduceat(vis.astype(np.int8), off[:-1]).astype(np.float64)
    return success, oracle


def official_normalised(heading: Any, elevation: Any) -> tuple[np.ndarray, np.ndarray]:
    """Angles in radians to SOON's normalised space as the official loader converts boxes.

    ``(heading / 2π, (elevation + π) / 2π)``, no wrapping (``r2r_src/utils.py load_datasets``).
    The official scorer compares predictions with boxes converted this way and does not convert
    the predictions: it expects them normalised already.

    Example:
        >>> h, e = official_normalised([math.pi, -0.1], [0.0, -math.pi / 2])
        >>> h.round(4).tolist(), e.round(4).tolist()
        ([0.5, -0.0159], [0.5, 0.25])
    """
    h = np.asarray(heading, dtype=np.float64)
    e = np.asarray(elevation, dtype=np.float64)
    return h / TWO_PI, (e + math.pi) / TWO_PI


def duet_normalised(heading: Any, elevation: Any) -> tuple[np.ndarray, np.ndarray]:
    """Predicted angles in radians to SOON's normalised space as VLN-DUET converts them.

    ``heading mod 2π / 2π`` (in [0, 1)) and ``(wrap(elevation) + π) / 2π`` with ``wrap`` to
    (−π, π] (``map_nav_src/soon/data_utils.py``: ``convert_heading``, ``convert_elevation``).

    Example:
        >>> h, e = duet_normalised([-0.1, 7.0], [0.0, math.pi])
        >>> h.round(4).tolist(), e.round(4).tolist()
        ([0.9841, 0.1141], [0.5, 1.0])
    """
    h = np.asarray(heading, dtype=np.float64)
    e = np.asarray(elevation, dtype=np.float64)
    hn = np.mod(h, TWO_PI) / TWO_PI
    ew = np.mod(e, TWO_PI)
    ew = np.where(ew > math.pi, ew - TWO_PI, ew)
    return hn, (ew + math.pi) / TWO_PI


def _on_segment(px: float, py: float, ax: float, ay: float, bx: float, by: float) -> bool:
    cross = (bx - ax) * (py - ay) - (by - ay) * (px - ax)
    scale = max(abs(bx - ax), abs(by - ay), abs(px - ax), abs(py - ay), 1.0)
    if abs(cross) > 1e-12 * scale * scale:
        return False
    return min(ax, bx) <= px <= max(ax, bx) and min(ay, by) <= py <= max(ay, by)


def point_in_polygon(x: float, y: float, polygon: Any) -> bool:
    """Whether ``(x, y)`` lies strictly inside ``polygon`` (a point on the boundary is outside).

    Even-odd ray casting plus an explicit boundary test, which is what shapely's
    ``Polygon.contains(Point)`` answers for the simple quadrilaterals SOON uses (for a
    self-intersecting quadrilateral shapely's answer is undefined; this function keeps even-odd).

    Args:
        x, y: the point.
        polygon: ``(k, 2)`` vertices in order, k >= 3, not closed.

    Example:
        >>> square = [(0, 0), (1, 0), (1, 1), (0, 1)]
        >>> point_in_polygon(0.5, 0.5, square), point_in_polygon(1.0, 0.5, square)
        (True, False)
    """
    pts = np.asarray(polygon, dtype=np.float64)
    if pts.ndim != 2 or pts.shape[1] != 2 or pts.shape[0] < 3:
        raise InvalidInputError(f"point_in_polygon: expected (k >= 3, 2) vertices, got {pts.shape}")
    if not (math.isfinite(x) and math.isfinite(y)):
        return False
    inside = False
    k = len(pts)
    for i in range(k):
        ax, ay = pts[i]
        bx, by = pts[(i + 1) % k]
        if _on_segment(x, y, ax, ay, bx, by):
            return False
        if (ay > y) != (by > y):
            cross_x = ax + (y - ay) * (bx - ax) / (by - ay)
            if x < cross_x:
                inside = not inside
    return inside


def localisation_success(x: float, y: float, corners: Any, *, wrap: bool = False) -> bool:
    """SOON localisation: the normalised point lies strictly inside the target box polygon.

    ``corners`` are the box's ``left_top, right_top, right_bottom, left_bottom`` in normalised
    space ``(heading / 2π, (elevation + π) / 2π)``. The official scorer ignores heading
    wrap-around (``wrap=False``): a box that straddles heading 0 becomes a polygon spanning the
    wrong side of the panorama. ``wrap=True`` fixes it: the corners' headings are unwrapped to
    lie within half a turn of the first corner, and the point is tested at ``x + k``, k in
    {−1, 0, 1}.

    Example:
        >>> box = [(0.98, 0.6), (0.02, 0.6), (0.02, 0.4), (0.98, 0.4)]  # straddles heading 0
        >>> localisation_success(0.99, 0.5, box), localisation_success(0.99, 0.5, box, wrap=True)
        (False, True)
        >>> localisation_success(0.5, 0.5, box), localisation_success(0.5, 0.5, box, wrap=True)
        (True, False)
    """
    pts = np.array(corners, dtype=np.float64)
    if pts.shape != (4, 2):
        raise InvalidInputError(f"localisation_success: expected 4 corners (4, 2), got {pts.shape}")
    if not wrap:
        return point_in_polygon(x, y, pts)
    pts[:, 0] -= np.round(pts[:, 0] - pts[0, 0])
    return any(point_in_polygon(x + k, y, pts) for k in (-1.0, 0.0, 1.0))
