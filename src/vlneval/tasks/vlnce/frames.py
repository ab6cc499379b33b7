"""VLN-CE coordinate frames: Habitat's (metres, y up) and the Matterport3D world frame (z up).

VLN-CE files hold positions in Habitat's frame and start rotations as Habitat quaternions
``[x, y, z, w]``; :class:`~vlneval.tasks.vlnce.episodes.ContinuousEpisode` holds its positions
in the world frame.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

__all__ = ["habitat_to_world", "world_to_habitat", "heading_from_quaternion"]


def habitat_to_world(points: Any) -> np.ndarray:
    """Habitat ``(x, y_up, z)`` to the Matterport3D world frame ``(x, −z, y_up)`` (z up).

    VLN-CE's reference points are the R2R viewpoints in this frame: their horizontal
    coordinates equal the connectivity poses' ``(x, y)`` exactly.

    Example:
        >>> habitat_to_world([[1.0, 0.5, -2.0]]).tolist()
        [[1.0, 2.0, 0.5]]
    """
    p = np.asarray(points, dtype=np.float64)
    return np.stack([p[..., 0], -p[..., 2], p[..., 1]], axis=-1)


def world_to_habitat(points: Any) -> np.ndarray:
    """Inverse of :func:`habitat_to_world`.

    Example:
        >>> world_to_habitat(habitat_to_world([[1.0, 0.5, -2.0]])).tolist()
        [[1.0, 0.5, -2.0]]
    """
    p = np.asarray(points, dtype=np.float64)
    return np.stack([p[..., 0], p[..., 2], -p[..., 1]], axis=-1)


def heading_from_quaternion(q: Any) -> float:
    """World heading (radians clockwise from +y, in [0, 2π)) of a Habitat rotation ``[x, y, z, w]``.

    Habitat's agent looks along −z and turns about +y; in the world frame of
    :func:`habitat_to_world` a yaw of θ (counter-clockwise) is the heading −θ.

    Example:
        >>> round(math.degrees(heading_from_quaternion([0.0, 0.5, 0.0, math.sqrt(0.75)])), 6)
        300.0
    """
    x, y, z, w = (float(v) for v in q)
    fx = -2.0 * (x * z + w * y)  # the rotated (0, 0, -1): forward in Habitat coordinates
    fz = -(1.0 - 2.0 * (x * x + y * y))
    return math.atan2(fx, -fz) % (2.0 * math.pi)
