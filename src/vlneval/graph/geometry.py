"""Headings, elevations and discrete views, following the R2R simulator's conventions.

Heading is measured clockwise from +y in radians, in [0, 2π); elevation is positive upward.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = [
    "direction",
    "view_index",
    "wrap_pi",
    "snap_heading",
    "snap_elevation",
]

TWO_PI = 2.0 * math.pi
VIEW_STEP = math.radians(30.0)


def direction(delta: np.ndarray) -> tuple[float, float]:
    """Heading and elevation of the vector ``delta = pos(v) − pos(u)``.

    Example:
        >>> h, e = direction(np.array([1.0, 0.0, 0.0]))
        >>> round(math.degrees(h), 6), round(math.degrees(e), 6)
        (90.0, 0.0)
    """
    dx, dy, dz = (float(x) for x in delta)
    heading = math.atan2(dx, dy) % TWO_PI
    elevation = math.atan2(dz, math.hypot(dx, dy))
    return heading, elevation


def wrap_pi(angle: float) -> float:
    """``angle`` wrapped to (−π, π].

    Example:
        >>> wrap_pi(3 * math.pi / 2) == -math.pi / 2, wrap_pi(-math.pi) == math.pi
        (True, True)
    """
    a = math.fmod(angle, TWO_PI)
    if a > math.pi:
        a -= TWO_PI
    elif a <= -math.pi:
        a += TWO_PI
    return a


def _lround(x: float) -> int:
    """C ``lround``: half away from zero (Python's ``round`` rounds half to even)."""
    return int(math.floor(x + 0.5)) if x >= 0 else -int(math.floor(-x + 0.5))


def snap_heading(heading: float) -> int:
    """Heading index 0..11 of the nearest of the 12 discrete headings, as the simulator snaps.

    Example:
        >>> snap_heading(math.radians(15.0)), snap_heading(math.radians(344.0))
        (1, 11)
    """
    return _lround((heading % TWO_PI) / VIEW_STEP) % 12


def snap_elevation(elevation: float) -> int:
    """Elevation index: 0 below −15°, 2 above +15°, else 1 (±15° included in 1)."""
    deg = math.degrees(elevation)
    if deg < -15.0:
        return 0
    if deg > 15.0:
        return 2
    return 1


def view_index(heading: float, elevation: float) -> int:
    """Discrete view index ``12·elev_idx + heading_idx`` of 36.

    Example:
        >>> view_index(0.0, 0.0), view_index(math.radians(30), math.radians(-30))
        (12, 1)
    """
    return 12 * snap_elevation(elevation) + snap_heading(heading)
