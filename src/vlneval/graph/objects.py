"""Object geometry for REVERIE: which of the 36 panoramic views see an object, and its 2-D box.

The camera is the Matterport3D simulator's: at a viewpoint's position (the connectivity pose's
translation), heading clockwise from +y, elevation up, 60° vertical field of view at 640 x 480,
square pixels (focal length ``240 / tan 30°`` ≈ 415.7 px in both axes). View ``v`` looks at
heading ``30° · (v mod 12)`` and elevation ``30° · (v div 12 − 1)``.

An object annotation is a centre ``c``, and where known three unit axes ``a_1..a_3`` and radii
``r_1..r_3`` (Matterport3D's house segmentation); its corners are ``c ± r_1 a_1 ± r_2 a_2 ±
r_3 a_3``. Its box in a view is the axis-aligned hull of the projection of the part of the box
in front of the camera (the box is clipped by the near plane, never projected through it),
clipped to the image. With a centre only, an object is seen by the views whose image contains
the centre's projection, with a zero-size box there. A box fully covered by a nearer object's
box in the same view is occluded (spec/graphs.md).

This follows the REVERIE paper's description; the code that made the released boxes is not
public. Measured against all 10,567 released v1 BBox files with the centres of ``objpos.json``
(38,258 listed objects; see :func:`agreement` and ``tests/tasks/reverie/test_object_geometry.py``):
the projected centre lies in the released box for 89.2 % of the 44,899 boxes that do not touch
the image border (median 11.6 px from the box centre); centre-only view prediction has
precision 0.714 and recall 0.508 against ``visible_pos`` (an object spans more views than its
centre; occlusion needs the mesh); 96.6 % of the objects some released view sees are seen by
some predicted view; all but 10 listed objects (at 4 viewpoints) are within 2.0 m of the camera,
although the paper says 3 m.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = [
    "Camera",
    "ObjectGeometry",
    "view_angles",
    "camera_frame",
    "project",
    "box_corners",
    "view_box",
    "object_views",
    "occluded",
    "viewpoint_objects",
    "agreement",
    "Agreement",
    "PAPER_MAX_DISTANCE",
    "RELEASED_MAX_DISTANCE",
]

#: The REVERIE paper keeps objects within 3 m of the viewpoint.
PAPER_MAX_DISTANCE = 3.0
#: Every object listed in the released v1 BBox files is within 2.0 m (3-D, centre to camera).
RELEASED_MAX_DISTANCE = 2.0
VIEW_STEP = math.radians(30.0)


@dataclass(frozen=True)
class Camera:
    """A pinhole camera: image size in pixels and vertical field of view in radians.

    Example:
        >>> round(Camera().focal, 3)
        415.692
    """

    width: int = 640
    height: int = 480
    vfov: float = math.radians(60.0)

    @property
    def focal(self) -> float:
        """Focal length in pixels (square pixels)."""
        return (self.height / 2.0) / math.tan(self.vfov / 2.0)


@dataclass(frozen=True)
class ObjectGeometry:
    """An object: centre, and optionally axes ``(3, 3)`` (rows) and radii ``(3,)``, in metres."""

    centre: tuple[float, float, float]
    axes: tuple[tuple[float, float, float], ...] | None = None
    radii: tuple[float, float, float] | None = None
    name: str = ""


def view_angles(view: int) -> tuple[float, float]:
    """Heading and elevation (radians) of discrete view ``view`` (0..35).

    Example:
        >>> [round(math.degrees(a)) for a in view_angles(13)]
        [30, 0]
    """
    if not 0 <= view < 36:
        raise ValueError(f"view must be 0..35, got {view}")
    return (view % 12) * VIEW_STEP, (view // 12 - 1) * VIEW_STEP


def camera_frame(heading: float, elevation: float) -> np.ndarray:
    """Rows: the camera's right, up and forward unit vectors in world coordinates (z up).

    Example:
        >>> (camera_frame(0.0, 0.0).round(6) + 0.0).tolist()
        [[1.0, 0.0, 0.0], [0.0, 0.0, 1.0], [0.0, 1.0, 0.0]]
    """
    ch, sh, ce, se = math.cos(heading), math.sin(heading), math.cos(elevation), math.sin(elevation)
    forward = np.array([sh * ce, ch * ce, se])
    right = np.array([ch, -sh, 0.0])
    up = np.cross(right, forward)
    return np.stack([right, up, forward])


def project(
    points: Any, position: Any, heading: float, elevation: float, camera: Camera = Camera()
) -> tuple[np.ndarray, np.ndarray]:
    """Pixel coordinates ``(n, 2)`` and depths ``(n,)`` of world points seen from a view.

    ``x = W/2 + f·X/Z``, ``y = H/2 − f·Y/Z`` with ``(X, Y, Z)`` the point in the camera frame
    (right, up, forward). Points behind the camera (``Z <= 0``) get NaN pixels.

    Example:
        >>> px, depth = project([[0.0, 2.0, 0.0], [1.0, 2.0, 0.0]], [0, 0, 0], 0.0, 0.0)
        >>> px.round(1).tolist(), depth.tolist()
        ([[320.0, 240.0], [527.8, 240.0]], [2.0, 2.0])
    """
    rel = np.atleast_2d(np.asarray(points, dtype=np.float64)) - np.asarray(
        position, dtype=np.float64
    )
    cam = rel @ camera_frame(heading, elevation).T
    z = cam[:, 2]
    with np.errstate(divide="ignore", invalid="ignore"):
        px = np.where(z > 0, camera.width / 2 + camera.focal * cam[:, 0] / z, np.nan)
        py = np.where(z > 0, camera.height / 2 - camera.focal * cam[:, 1] / z, np.nan)
    return np.stack([px, py], axis=1), z


def box_corners(centre: Any, axes: Any, radii: Any) -> np.ndarray:
    """The 8 corners ``c ± r_1 a_1 ± r_2 a_2 ± r_3 a_3``; corner ``k``'s signs are its bits.

    Example:
        >>> box_corners([0, 0, 0], np.eye(3), [1, 2, 3])[[0, 7]].tolist()
        [[-1.0, -2.0, -3.0], [1.0, 2.0, 3.0]]
    """
    c = np.asarray(centre, dtype=np.float64)
    a = np.asarray(axes, dtype=np.float64) * np.asarray(radii, dtype=np.float64)[:, None]
    signs = np.array([[1 if k >> b & 1 else -1 for b in range(3)] for k in range(8)], float)
    return c + signs @ a


_EDGES = [(i, i | 1 << b) for i in range(8) for b in range(3) if not i >> b & 1]


def _clipped_points(cam: np.ndarray, near: float) -> np.ndarray:
    """Camera-frame vertices of the box's part in front of the near plane."""
    z = cam[:, 2]
    pts = [cam[z >= near]]
    for i, j in _EDGES:
        if (z[i] >= near) != (z[j] >= near):
            t = (near - z[i]) / (z[j] - z[i])
            pts.append((cam[i] + t * (cam[j] - cam[i]))[None, :])
    return np.concatenate(pts)


def view_box(
    corners: Any, position: Any, view: int, camera: Camera = Camera(), *, near: float = 1e-3
) -> tuple[int, int, int, int] | None:
    """The object's ``(x, y, w, h)`` box in ``view`` (integer pixels), or None if unseen.

    The part of the box in front of the plane ``Z = near`` is projected; its hull is clipped
    to the image ``[0, W] x [0, H]`` and rounded outwards (``x = floor``, ``x + w = ceil``).

    Example:
        >>> c = box_corners([0.0, 2.0, 0.0], np.eye(3), [0.5, 0.5, 0.5])
        >>> view_box(c, [0, 0, 0], 12)   # straight ahead: a square around the image centre
        (181, 101, 278, 278)
        >>> view_box(c, [0, 0, 0], 18) is None   # behind
        True
    """
    heading, elevation = view_angles(view)
    rel = np.asarray(corners, dtype=np.float64) - np.asarray(position, dtype=np.float64)
    cam = rel @ camera_frame(heading, elevation).T
    pts = _clipped_points(cam, near)
    if len(pts) == 0:
        return None
    x = camera.width / 2 + camera.focal * pts[:, 0] / pts[:, 2]
    y = camera.height / 2 - camera.focal * pts[:, 1] / pts[:, 2]
    x0, x1 = max(float(x.min()), 0.0), min(float(x.max()), float(camera.width))
    y0, y1 = max(float(y.min()), 0.0), min(float(y.max()), float(camera.height))
    if x0 >= x1 or y0 >= y1:
        return None
    ix, iy = math.floor(x0), math.floor(y0)
    return ix, iy, math.ceil(x1) - ix, math.ceil(y1) - iy


def object_views(
    position: Any, obj: ObjectGeometry, camera: Camera = Camera()
) -> dict[int, tuple[tuple[int, int, int, int], float]]:
    """The views that see ``obj`` from ``position``: ``view -> (box, depth of the centre)``.

    With axes and radii, the box of :func:`view_box`; with a centre only, the views whose
    image contains the centre's projection, with a zero-size box there.

    Neighbouring views overlap (30° apart, 75° x 60° wide): a point straight ahead at the
    horizon is in the images of 8 views.

    Example:
        >>> sorted(object_views([0, 0, 0], ObjectGeometry((0.0, 2.0, 0.0))))
        [0, 1, 11, 12, 13, 23, 24, 35]
    """
    out = {}
    corners = None
    if obj.axes is not None and obj.radii is not None:
        corners = box_corners(obj.centre, obj.axes, obj.radii)
    for view in range(36):
        h, e = view_angles(view)
        px, depth = project([obj.centre], position, h, e, camera)
        if corners is not None:
            box = view_box(corners, position, view, camera)
        else:
            x, y = px[0]
            inside = depth[0] > 0 and 0 <= x < camera.width and 0 <= y < camera.height
            box = (math.floor(x), math.floor(y), 0, 0) if inside else None
        if box is not None:
            out[view] = (box, float(depth[0]))
    return out


def occluded(boxes: Any, depths: Any) -> np.ndarray:
    """Whether each box is fully covered by the box of a nearer object (same view).

    Example:
        >>> occluded([[0, 0, 100, 100], [10, 10, 20, 20], [90, 90, 20, 20]], [1.0, 2.0, 3.0]).tolist()
        [False, True, False]
    """
    b = np.asarray(boxes, dtype=np.float64).reshape(-1, 4)
    d = np.asarray(depths, dtype=np.float64)
    x0, y0, x1, y1 = b[:, 0], b[:, 1], b[:, 0] + b[:, 2], b[:, 1] + b[:, 3]
    covers = (
        (x0[:, None] <= x0[None, :])
        & (y0[:, None] <= y0[None, :])
        & (x1[:, None] >= x1[None, :])
        & (y1[:, None] >= y1[None, :])
        & (d[:, None] < d[None, :])
    )
    return np.asarray(covers.any(axis=0))


def viewpoint_objects(
    position: Any,
    objects: Mapping[str, ObjectGeometry],
    *,
    max_distance: float = PAPER_MAX_DISTANCE,
    camera: Camera = Camera(),
    occlusion: bool = True,
) -> dict[str, dict[str, Any]]:
    """One viewpoint's BBox record ``{objId: {name, visible_pos, bbox2d}}`` (released schema).

    Objects whose centre is within ``max_distance`` of the camera are listed (an object no view
    sees keeps an empty ``visible_pos``, as the released files do); occluded boxes are dropped
    per view when ``occlusion``. Use ``RELEASED_MAX_DISTANCE`` to match the released files.

    Example:
        >>> objs = {"1": ObjectGeometry((0.0, 1.0, 0.0), np.eye(3), (0.1, 0.1, 0.1), "cup"),
        ...         "2": ObjectGeometry((0.0, 2.0, 0.0), np.eye(3), (0.05, 0.05, 0.05), "pen")}
        >>> rec = viewpoint_objects([0, 0, 0], objs)
        >>> rec["1"]["visible_pos"], rec["2"]["visible_pos"]  # the pen is behind the cup
        ([0, 1, 11, 12, 13, 23, 24, 25, 35], [])
    """
    pos = np.asarray(position, dtype=np.float64)
    near = {
        k: o
        for k, o in objects.items()
        if np.linalg.norm(np.asarray(o.centre) - pos) <= max_distance
    }
    seen = {k: object_views(pos, o, camera) for k, o in near.items()}
    if occlusion:
        for view in range(36):
            ids = [k for k, v in seen.items() if view in v]
            if len(ids) > 1:
                hidden = occluded([seen[k][view][0] for k in ids], [seen[k][view][1] for k in ids])
                for k, h in zip(ids, hidden.tolist(), strict=True):
                    if h:
                        del seen[k][view]
    return {
        k: {
            "name": near[k].name,
            "visible_pos": sorted(v),
            "bbox2d": [list(v[view][0]) for view in sorted(v)],
        }
        for k, v in seen.items()
    }


@dataclass(frozen=True)
class Agreement:
    """How far centre-based geometry agrees with released boxes (see :func:`agreement`).

    Attributes:
        interior_boxes: released boxes that do not touch the image border.
        centre_in_box: fraction of those that contain the projected centre.
        median_centre_offset: median pixel distance, projected centre to box centre.
        view_precision, view_recall: centre-only view prediction against ``visible_pos``.
        object_recall: of objects some released view sees, the fraction we see in some view.
        within_released_distance: fraction of listed objects within ``RELEASED_MAX_DISTANCE``.
        max_distance: the largest centre-to-camera distance of a listed object (metres).
        objects: listed objects compared.
    """

    interior_boxes: int
    centre_in_box: float
    median_centre_offset: float
    view_precision: float
    view_recall: float
    object_recall: float
    within_released_distance: float
    max_distance: float
    objects: int


def agreement(
    records: Iterable[tuple[Any, Any, tuple[int, ...], tuple[tuple[float, ...], ...]]],
    camera: Camera = Camera(),
) -> Agreement:
    """Compares centre-only geometry with released boxes.

    Args:
        records: ``(camera position, object centre, released views, released boxes)`` per
            listed object and viewpoint.

    Example:
        >>> r = agreement([([0, 0, 0], [0, 2, 0], (12,), ((300.0, 220.0, 40.0, 40.0),))])
        >>> r.centre_in_box, r.view_precision, r.view_recall   # 8 views predicted, 1 released
        (1.0, 0.125, 1.0)
    """
    inside = offsets = tp = predicted = released = seen_obj = rel_obj = n = near = 0
    offs: list[float] = []
    far = 0.0
    for position, centre, views, boxes in records:
        n += 1
        dist = float(np.linalg.norm(np.asarray(centre, float) - np.asarray(position, float)))
        far = max(far, dist)
        near += dist <= RELEASED_MAX_DISTANCE
        pred = object_views(position, ObjectGeometry(tuple(centre)), camera)
        predicted += len(pred)
        released += len(views)
        tp += len(set(pred) & set(views))
        rel_obj += bool(views)
        seen_obj += bool(views) and bool(pred)
        for view, (bx, by, bw, bh) in zip(views, boxes, strict=True):
            if bx <= 0 or by <= 0 or bx + bw >= camera.width or by + bh >= camera.height:
                continue
            h, e = view_angles(view)
            px, depth = project([centre], position, h, e, camera)
            if depth[0] <= 0:
                continue
            x, y = px[0]
            offsets += 1
            inside += bool(bx <= x <= bx + bw and by <= y <= by + bh)
            offs.append(math.hypot(x - (bx + bw / 2), y - (by + bh / 2)))
    return Agreement(
        offsets,
        inside / offsets if offsets else math.nan,
        float(np.median(offs)) if offs else math.nan,
        tp / predicted if predicted else math.nan,
        tp / released if released else math.nan,
        seen_obj / rel_obj if rel_obj else math.nan,
        near / n if n else math.nan,
        far,
        n,
    )
