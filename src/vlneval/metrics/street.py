"""Touchdown metrics: task completion (TC), shortest-path distance (SPD) and SDR pixel accuracy.

Navigation (Chen et al. 2019, "Touchdown"): the agent succeeds when its final panorama is the
goal or one hop from it; SPD is the hop distance from the final panorama to the goal on the
undirected street graph (:class:`vlneval.graph.street.StreetGraph`). Since "one hop" is measured
on the same undirected graph, ``TC = 1[SPD <= 1]``.

Spatial description resolution (SDR): the Euclidean distance in pixels between the predicted
and the true location of Touchdown the bear on the panorama; accuracy at 40, 80 and 120 px counts
distances strictly below the radius (``accuracy`` in lil-lab/touchdown ``sdr/train.py``; the
pixel rule of ``predict_baselines`` in ``sdr/predict.py``, commit 5aeb42d, removed in ba9dad8).
The official code ignores that a panorama wraps around at 360°: two points on either side of the
seam are a panorama width apart. ``width`` gives the wrapped distance instead.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from vlneval.errors import InvalidInputError
from vlneval.metrics.info import LABELS

__all__ = [
    "task_completion",
    "shortest_path_distance",
    "sdr_distance",
    "sdr_accuracy",
    "INFO",
    "SDR_RADII",
]

SDR_RADII = (40.0, 80.0, 120.0)

TASK_COMPLETION = LABELS["TC"]
SHORTEST_PATH_DISTANCE = LABELS["SPD"]
SDR_DISTANCE = LABELS["SDR_dist"]


def task_completion(spd: Any) -> Any:
    """Task completion from the shortest-path distance: ``1[SPD <= 1 hop]``.

    Touchdown's rule "the final panorama is the goal or one of its neighbours" measured on the
    undirected street graph, as the VLN-Transformer and map2seq scorers do (``nx.Graph`` of the
    links). An unreachable goal (``inf``) fails.

    Args:
        spd: hop distance(s), a float or an array (>= 0, may be ``inf``).

    Returns:
        1.0 / 0.0, or a float array of them.

    Example:
        >>> task_completion(0.0), task_completion(1.0), task_completion(2.0)
        (1.0, 1.0, 0.0)
        >>> task_completion(np.array([0.0, 3.0, np.inf])).tolist()
        [1.0, 0.0, 0.0]
    """
    d = np.asarray(spd, dtype=np.float64)
    if np.isnan(d).any() or (d < 0).any():
        raise InvalidInputError(
            "task_completion: hop distances must be >= 0 (inf allowed), not NaN"
        )
    out = (d <= 1.0).astype(np.float64)
    return float(out) if out.ndim == 0 else out


def shortest_path_distance(final: Any, goal: Any, *, graph: Any) -> Any:
    """Shortest-path distance (SPD) in hops from the final panorama(s) to the goal(s).

    Args:
        final, goal: node indices of ``graph`` (ints or equal-length int arrays).
        graph: a :class:`vlneval.graph.street.StreetGraph`.

    Returns:
        Hops as float (``inf`` when unreachable), or a float array.

    Example:
        >>> from vlneval.graph.street import parse_street_graph
        >>> g = parse_street_graph([f"{c},0,40,-73" for c in "abcd"], ["a,0,b", "b,0,c", "c,0,d"])
        >>> shortest_path_distance(0, 3, graph=g), task_completion(shortest_path_distance(2, 3, graph=g))
        (3.0, 1.0)
    """
    f = np.atleast_1d(np.asarray(final))
    g = np.atleast_1d(np.asarray(goal))
    for name, arr in (("final", f), ("goal", g)):
        if arr.dtype.kind not in "iu":
            raise InvalidInputError(
                f"shortest_path_distance: {name} must hold integer node indices"
            )
    out = graph.hops(f, g)
    return float(out[0]) if np.ndim(final) == 0 and np.ndim(goal) == 0 else out


def _points(value: Any, name: str) -> np.ndarray:
    arr = np.asarray(value, dtype=np.float64)
    if arr.shape[-1:] != (2,) or arr.ndim > 2:
        raise InvalidInputError(f"{name} must be (x, y) pixel coordinates or an (n, 2) array")
    if not np.isfinite(arr).all():
        raise InvalidInputError(f"{name} holds NaN or infinity")
    return arr


def sdr_distance(predicted: Any, target: Any, *, width: float | None = None) -> Any:
    """Pixel distance between predicted and true SDR locations.

    ``sqrt(dx² + dy²)`` with ``dx``, ``dy`` the coordinate differences (x along the panorama's
    width). With ``width`` (the panorama width in pixels), the horizontal difference wraps around
    the 360° seam: ``dx = min(|dx|, width − |dx|)``. Without it, as the official code computes.

    Args:
        predicted, target: ``(x, y)`` or ``(n, 2)`` arrays of pixel coordinates.
        width: panorama width for the wrapped distance; None reproduces the official distance.

    Example:
        >>> sdr_distance((10, 0), (3670, 0)), sdr_distance((10, 0), (3670, 0), width=3680)
        (3660.0, 20.0)
        >>> sdr_distance([[0, 0], [3, 4]], [[0, 0], [0, 0]]).tolist()
        [0.0, 5.0]
    """
    p, t = _points(predicted, "predicted"), _points(target, "target")
    if p.shape != t.shape:
        raise InvalidInputError(f"predicted {p.shape} and target {t.shape} differ in shape")
    dx = np.abs(p[..., 0] - t[..., 0])
    if width is not None:
        if not np.isfinite(width) or width <= 0:
            raise InvalidInputError(f"width must be a positive number of pixels; got {width!r}")
        dx = np.mod(dx, width)
        dx = np.minimum(dx, width - dx)
    out = np.hypot(dx, p[..., 1] - t[..., 1])
    return float(out) if out.ndim == 0 else out


def sdr_accuracy(distance: Any, *, radius: float) -> Any:
    """1 when the SDR distance is strictly below ``radius`` pixels (``distance < margin`` in
    lil-lab/touchdown ``sdr/train.py``); the mean is the accuracy at that radius.

    Example:
        >>> sdr_accuracy(39.9, radius=40), sdr_accuracy(40.0, radius=40)
        (1.0, 0.0)
    """
    d = np.asarray(distance, dtype=np.float64)
    if np.isnan(d).any() or (d < 0).any():
        raise InvalidInputError("sdr_accuracy: distances must be >= 0 and not NaN")
    out = (d < float(radius)).astype(np.float64)
    return float(out) if out.ndim == 0 else out


INFO = (
    TASK_COMPLETION,
    SHORTEST_PATH_DISTANCE,
    SDR_DISTANCE,
    *(LABELS[f"SDR@{r:g}"] for r in SDR_RADII),
)
