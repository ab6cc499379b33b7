"""Candidate tables: what the R2R simulator shows at every viewpoint, heading and elevation.

With discretised viewing angles (as every R2R-family environment runs the simulator) the agent's
state is a node, one of 12 headings and one of 3 elevations, so everything an agent can be shown
is computed once per scan, with numpy, and looked up afterwards.

Egocentric lists follow ``Simulator::populateNavigable`` of the Matterport3D simulator
(spec/graphs.md): a neighbour is navigable when the cosine of the horizontal angle between the
camera's view direction and the neighbour is at least ``cos(40°)`` (``vfov · width / height / 2``
at 60°, 640×480); index 0 is the current viewpoint; the rest are sorted by
``sqrt(rel_heading² + rel_elevation²)``. The simulator computes the direction vectors and the
cosine in single precision (``glm::vec3``); the tables reproduce that, so that a neighbour on the
edge of the field of view is classified as the simulator classifies it.

Panoramic lists follow the Speaker-Follower / REVERIE convention (spec/graphs.md): scan the 36
views starting from the agent's heading column looking down; keep each neighbour in the view
where its angular offset from that view's centre is smallest (the first such view on ties); the
list is ``[STOP] + candidates`` sorted by ``|rel_heading|`` (stable: first-seen order on ties).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np

from vlneval.graph.matterport import NavGraph

__all__ = [
    "Candidate",
    "ScanTables",
    "build_tables",
    "HEADING_STEP",
    "ELEVATION_STEP",
    "COS_HALF_HFOV",
    "heading_of",
    "elevation_of",
]

#: The simulator's heading increment, ``M_PI * 2.0 / 12`` (30°).
HEADING_STEP = math.pi * 2.0 / 12
#: The simulator's elevation increment, ``M_PI / 6.0`` (30°).
ELEVATION_STEP = math.pi / 6.0
#: Speaker-Follower's ``angle_inc`` used when scanning the panorama (30°).
_ANGLE_INC = np.pi / 6
#: ``cos(vfov · width / height / 2)`` with vfov = 60°, 640×480: the simulator's cos(40°).
COS_HALF_HFOV = math.cos(math.radians(60) * 640 / 480 / 2.0)


def heading_of(h: int) -> float:
    """Heading in radians of heading index ``h`` (the simulator's value, bit for bit).

    Example:
        >>> heading_of(11)
        5.759586531581287
    """
    return h * HEADING_STEP


def elevation_of(e: int) -> float:
    """Elevation in radians of elevation index ``e`` (0: −30°, 1: 0°, 2: +30°).

    Example:
        >>> elevation_of(0), elevation_of(1)
        (-0.5235987755982988, 0.0)
    """
    return (e - 1) * ELEVATION_STEP


class Candidate(NamedTuple):
    """One entry of an observation's candidate list (index 0 is the current viewpoint: STOP).

    Attributes:
        viewpoint: the viewpoint id.
        rel_heading: heading relative to the agent's heading, radians in (−π, π].
        rel_elevation: elevation relative to the agent's elevation, radians.
        distance: straight-line distance from the agent, metres.
        view_index: the discrete view (0..35) it is seen in (panoramic: the view the agent turns
            to before moving there; egocentric: the current view).
    """

    viewpoint: str
    rel_heading: float
    rel_elevation: float
    distance: float
    view_index: int


@dataclass(eq=False)
class ScanTables:
    """Precomputed candidate lists of one scan (node indices are the graph's).

    Egocentric arrays are indexed ``[node, view]`` with ``view = 12 · elevation + heading``;
    panoramic arrays ``[node, heading]`` (the list does not depend on the agent's elevation).
    Entry 0 of every list is the current node; unused entries hold −1.

    Attributes:
        graph: the scan's navigation graph.
        ego_count: ``(n, 36)`` list lengths (including entry 0).
        ego_node: ``(n, 36, k)`` nodes.
        ego_rel_heading, ego_rel_elevation: ``(n, 36, k)`` angles relative to the view, radians.
        ego_distance: ``(n, 36, k)`` straight-line distances, metres.
        pano_count, pano_node, pano_view: ``(n, 12)`` and ``(n, 12, k)``: lengths (including
            STOP), nodes and the absolute view each candidate is reached through.
        pano_rel_heading: ``(n, 12, k)`` heading relative to the agent's heading.
        pano_elevation: ``(n, 12, k)`` elevation above the horizontal (absolute).
        pano_distance: ``(n, 12, k)`` straight-line distances, metres.
    """

    graph: NavGraph
    ego_count: np.ndarray
    ego_node: np.ndarray
    ego_rel_heading: np.ndarray
    ego_rel_elevation: np.ndarray
    ego_distance: np.ndarray
    pano_count: np.ndarray
    pano_node: np.ndarray
    pano_view: np.ndarray
    pano_rel_heading: np.ndarray
    pano_elevation: np.ndarray
    pano_distance: np.ndarray
    _cache: dict[tuple[int, int, int, int], tuple[Candidate, ...]] = field(
        default_factory=dict, repr=False
    )

    @property
    def width(self) -> int:
        """The padded list length ``k``."""
        return int(self.ego_node.shape[2])

    def candidates(self, panoramic: bool, node: int, h: int, e: int) -> tuple[Candidate, ...]:
        """The candidate list at ``(node, h, e)``, built once and then shared (it is immutable)."""
        key = (int(panoramic), node, h, e)
        hit = self._cache.get(key)
        if hit is None:
            hit = self._pano(node, h, e) if panoramic else self._ego(node, h, e)
            self._cache[key] = hit
        return hit

    def _ego(self, node: int, h: int, e: int) -> tuple[Candidate, ...]:
        v = 12 * e + h
        ids = self.graph.ids
        n = int(self.ego_count[node, v])
        return tuple(
            Candidate(
                ids[int(self.ego_node[node, v, k])],
                float(self.ego_rel_heading[node, v, k]),
                float(self.ego_rel_elevation[node, v, k]),
                float(self.ego_distance[node, v, k]),
                v,
            )
            for k in range(n)
        )

    def _pano(self, node: int, h: int, e: int) -> tuple[Candidate, ...]:
        ids = self.graph.ids
        elev = elevation_of(e)
        out = [Candidate(ids[node], 0.0, 0.0, 0.0, 12 * e + h)]
        for k in range(1, int(self.pano_count[node, h])):
            out.append(
                Candidate(
                    ids[int(self.pano_node[node, h, k])],
                    float(self.pano_rel_heading[node, h, k]),
                    float(self.pano_elevation[node, h, k]) - elev,
                    float(self.pano_distance[node, h, k]),
                    int(self.pano_view[node, h, k]),
                )
            )
        return tuple(out)


@dataclass
class _Edges:
    """Directed edges ``src -> dst`` with the simulator's single-precision geometry."""

    src: np.ndarray
    dst: np.ndarray
    visible: np.ndarray  # (E, 12) bool: dst in the field of view at heading index h
    rel_heading: np.ndarray  # (E, 12) relative to heading index h, in (−π, π]
    direction_elevation: np.ndarray  # (E,) atan2(dz, horizontal length)
    distance: np.ndarray  # (E,) 3-D length


def _directed_edges(graph: NavGraph) -> _Edges:
    e = graph.edges.astype(np.int64).reshape(-1, 2)
    src = np.concatenate([e[:, 0], e[:, 1]])
    dst = np.concatenate([e[:, 1], e[:, 0]])
    order = np.lexsort((dst, src))
    src, dst = src[order], dst[order]
    pos = graph.positions.astype(np.float32)
    target = pos[dst] - pos[src]  # glm::vec3 arithmetic, float32
    tz = target[:, 2].astype(np.float64)
    horiz = target.copy()
    horiz[:, 2] = np.float32(0.0)
    hlen = np.sqrt((horiz * horiz).sum(axis=1, dtype=np.float32)).astype(np.float32)
    with np.errstate(divide="ignore", invalid="ignore"):
        normed = horiz * (np.float32(1.0) / hlen)[:, None]
    headings = np.arange(12) * HEADING_STEP
    adjusted = np.pi / 2.0 - headings
    cam = np.stack([np.cos(adjusted), np.sin(adjusted)], axis=1).astype(np.float32)  # (12, 2)
    cos_angle = normed[:, None, 0] * cam[None, :, 0] + normed[:, None, 1] * cam[None, :, 1]
    visible = cos_angle.astype(np.float64) >= COS_HALF_HFOV  # NaN (vertical) is never visible
    cross = horiz[:, None, 0] * cam[None, :, 1] - horiz[:, None, 1] * cam[None, :, 0]
    dot = horiz[:, None, 0] * cam[None, :, 0] + horiz[:, None, 1] * cam[None, :, 1]
    rel_heading = np.arctan2(cross.astype(np.float64), dot.astype(np.float64))
    length = np.sqrt((target * target).sum(axis=1, dtype=np.float32)).astype(np.float64)
    elev = np.arctan2(tz, hlen.astype(np.float64))
    return _Edges(src, dst, visible, rel_heading, elev, length)


def _egocentric(n: int, ed: _Edges, width: int) -> tuple[np.ndarray, ...]:
    count = np.ones((n, 36), dtype=np.int32)
    node = np.full((n, 36, width), -1, dtype=np.int32)
    node[:, :, 0] = np.arange(n, dtype=np.int32)[:, None]
    rh = np.zeros((n, 36, width))
    re = np.zeros((n, 36, width))
    dist = np.zeros((n, 36, width))
    rank = np.full((len(ed.src), 36), -1, dtype=np.int64)
    for view in range(36):
        h, e = view % 12, view // 12
        sel = np.flatnonzero(ed.visible[:, h])
        rel_e = ed.direction_elevation[sel] - elevation_of(e)
        offset = np.sqrt(ed.rel_heading[sel, h] ** 2 + rel_e**2)
        order = np.lexsort((ed.dst[sel], offset, ed.src[sel]))
        sel, rel_e = sel[order], rel_e[order]
        src = ed.src[sel]
        starts = np.searchsorted(src, src, side="left")
        k = np.arange(len(sel)) - starts + 1
        rank[sel, view] = k
        node[src, view, k] = ed.dst[sel]
        rh[src, view, k] = ed.rel_heading[sel, h]
        re[src, view, k] = rel_e
        dist[src, view, k] = ed.distance[sel]
        np.add.at(count[:, view], src, 1)
    return count, node, rh, re, dist, rank


def _canonical(x: np.ndarray) -> np.ndarray:
    """Speaker-Follower's ``_canonical_angle``: ``x − 2π · round(x / 2π)``."""
    return x - 2 * np.pi * np.round(x / (2 * np.pi))


def _panoramic(n: int, ed: _Edges, rank: np.ndarray, width: int) -> tuple[np.ndarray, ...]:
    count = np.ones((n, 12), dtype=np.int32)
    node = np.full((n, 12, width), -1, dtype=np.int32)
    node[:, :, 0] = np.arange(n, dtype=np.int32)[:, None]
    view = np.zeros((n, 12, width), dtype=np.int32)
    rh = np.zeros((n, 12, width))
    el = np.zeros((n, 12, width))
    dist = np.zeros((n, 12, width))
    rows = np.arange(36) // 12
    e_count = len(ed.src)
    rel_e = ed.direction_elevation[:, None] - (np.arange(3)[None, :] - 1) * ELEVATION_STEP
    for h0 in range(12):
        cols = (h0 + np.arange(36) % 12) % 12  # scan order: relViewIndex r -> heading column
        vis = ed.visible[:, cols]  # (E, 36)
        off = np.sqrt(ed.rel_heading[:, cols] ** 2 + rel_e[:, rows] ** 2)
        off = np.where(vis, off, np.inf)
        best = np.argmin(off, axis=1)  # first minimum: the first view in scan order wins ties
        seen = np.isfinite(off[np.arange(e_count), best])
        idx = np.flatnonzero(seen)
        b = best[idx]
        hc, er = cols[b], rows[b]
        rel_h = _canonical((b % 12) * _ANGLE_INC + ed.rel_heading[idx, hc])
        elev = (er - 1) * _ANGLE_INC + rel_e[idx, er]
        first = np.argmax(vis[idx], axis=1)  # first view seen (row 0), then its list position
        first_rank = rank[idx, cols[first]]
        order = np.lexsort((first_rank, first, np.abs(rel_h), ed.src[idx]))
        idx, hc, er, rel_h, elev = idx[order], hc[order], er[order], rel_h[order], elev[order]
        src = ed.src[idx]
        k = np.arange(len(idx)) - np.searchsorted(src, src, side="left") + 1
        node[src, h0, k] = ed.dst[idx]
        view[src, h0, k] = 12 * er + hc
        rh[src, h0, k] = rel_h
        el[src, h0, k] = elev
        dist[src, h0, k] = ed.distance[idx]
        np.add.at(count[:, h0], src, 1)
    return count, node, view, rh, el, dist


def build_tables(graph: NavGraph) -> ScanTables:
    """Every egocentric and panoramic candidate list of ``graph``.

    Example (a neighbour 2 m north of the start, another 2 m east):
        >>> import numpy as np
        >>> g = NavGraph("toy", ["s", "n", "e"], np.array([[0., 0, 0], [0, 2, 0], [2, 0, 0]]),
        ...              np.array([[0, 1], [0, 2]]), np.array([2.0, 2.0]))
        >>> t = build_tables(g)
        >>> [c.viewpoint for c in t.candidates(False, 0, 0, 1)]  # heading 0: only north is in view
        ['s', 'n']
        >>> pano = t.candidates(True, 0, 0, 1)  # STOP, then by |relative heading|
        >>> [(c.viewpoint, round(abs(c.rel_heading), 4), c.view_index) for c in pano]
        [('s', 0.0, 12), ('n', 0.0, 12), ('e', 1.5708, 15)]
    """
    n = graph.n
    ed = _directed_edges(graph)
    degree = np.bincount(ed.src, minlength=n) if len(ed.src) else np.zeros(n, dtype=np.int64)
    width = int(degree.max(initial=0)) + 1
    e_count, e_node, e_rh, e_re, e_dist, rank = _egocentric(n, ed, width)
    p_count, p_node, p_view, p_rh, p_el, p_dist = _panoramic(n, ed, rank, width)
    return ScanTables(
        graph, e_count, e_node, e_rh, e_re, e_dist, p_count, p_node, p_view, p_rh, p_el, p_dist
    )
