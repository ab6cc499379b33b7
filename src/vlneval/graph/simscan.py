"""One scan as the Matterport3D simulator sees it: every connectivity record, in file order.

The simulator (``src/lib/NavGraph.cpp`` and ``Simulator::populateNavigable`` of
peteanderson80/Matterport3DSimulator) indexes viewpoints by their position in the connectivity
file (``ViewPoint.ix``), accepts every *included* record as a location (also the few with no
navigable neighbour, which :class:`~vlneval.graph.matterport.NavGraph` leaves out), reads poses as
single-precision floats and computes the egocentric candidate list of a location with
single-precision vector arithmetic:

* neighbours of record ``i``: every included ``j != i`` with ``unobstructed[i][j]``, ascending;
* ``d = p_j - p_i``; ``rel_distance = |d|``; ``L = |(d_x, d_y)|`` (float32);
  ``rel_elevation = atan2(d_z, L) - elevation`` (double);
* camera direction ``c = float32((cos(π/2 - θ), sin(π/2 - θ)))``; a neighbour is shown when
  ``(d_x, d_y) / L · c >= cos(vfov · width / height / 2)`` (the dot product in float32), or always
  when navigation is not restricted;
* ``rel_heading = atan2(d_x c_y - d_y c_x, d_x c_x + d_y c_y)`` of float32 arguments, evaluated
  in double (the variant the simulator's README reports; builds where ``atan2`` resolves to the
  float overload differ by about 1e-8 rad);
* the list is sorted stably by ``sqrt(rel_heading² + rel_elevation²)``.

With the R2R camera (60° vertical FOV, 640×480) and discretised angles the membership and order
come from the precomputed :class:`~vlneval.graph.tables.ScanTables`; any other camera, continuous
angles or unrestricted navigation use the same rule per location (vectorised over its
neighbours).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from operator import itemgetter
from pathlib import Path

import msgspec
import numpy as np

from vlneval.errors import InvalidInputError
from vlneval.graph.matterport import NavGraph, connectivity_from_bytes
from vlneval.graph.tables import COS_HALF_HFOV, ScanTables, build_tables, elevation_of, heading_of
from vlneval.io import json_text

__all__ = ["SimScan", "Candidates", "load_sim_scan", "sim_scan_from_bytes", "COS_HALF_HFOV"]

#: One candidate list: parallel tuples of file indices, relative headings, relative elevations
#: and distances (the current location, entry 0 of the simulator's list, is not included).
Candidates = tuple[tuple[int, ...], tuple[float, ...], tuple[float, ...], tuple[float, ...]]


class _Record(msgspec.Struct):
    """The fields of a connectivity record the simulator reads besides ``unobstructed``."""

    image_id: str | int  # the graph reader takes an integer id too (as text)
    pose: list[float]
    included: bool


@dataclass
class _Neighbours:
    """Float32 geometry from one location to its neighbours (ascending file order)."""

    ix: np.ndarray  # (k,) file indices
    dx: np.ndarray  # (k,) float32 horizontal offset
    dy: np.ndarray
    nx: np.ndarray  # (k,) float32 normalised horizontal direction (NaN when straight above)
    ny: np.ndarray
    elevation: tuple[float, ...]  # atan2(dz, L) in double
    distance: tuple[float, ...]  # float32 3-D length, widened
    position: dict[int, int]  # file index -> position in this list


@dataclass(eq=False)
class SimScan:
    """Every record of one scan's connectivity file, as the simulator indexes them.

    Attributes:
        scan: the scan id.
        ids: viewpoint ids of all records, in file order (the simulator's ``ix``).
        included: ``(n,)`` the records' ``included`` flags.
        positions: ``(n, 3)`` float32 camera positions ``pose[3], pose[7], pose[11]``.
        xyz: the same positions as Python floats (the values the simulator reports).
        graph: the navigation graph (included records with at least one edge).
        index: viewpoint id -> file index.
        node_of: ``(n,)`` file index -> graph node, −1 for records that are not nodes.
        source: where the file came from.
    """

    scan: str
    ids: list[str]
    included: np.ndarray
    positions: np.ndarray
    graph: NavGraph
    source: str
    xyz: list[tuple[float, float, float]] = field(init=False, repr=False)
    index: dict[str, int] = field(init=False, repr=False)
    node_of: np.ndarray = field(init=False, repr=False)
    _ix_of_node: np.ndarray = field(init=False, repr=False)
    _tables: ScanTables | None = field(default=None, init=False, repr=False)
    _near: dict[int, _Neighbours] = field(default_factory=dict, init=False, repr=False)

    def __post_init__(self) -> None:
        self.xyz = [(float(a), float(b), float(c)) for a, b, c in self.positions.tolist()]
        # one record per id: the graph reader refuses two records sharing one
        self.index = {vp: i for i, vp in enumerate(self.ids)}
        self._ix_of_node = np.array([self.index[v] for v in self.graph.ids], dtype=np.int64)
        node_of = np.full(len(self.ids), -1, dtype=np.int64)
        node_of[self._ix_of_node] = np.arange(self.graph.n)
        self.node_of = node_of

    def tables(self) -> ScanTables:
        """The scan's candidate tables (built on first use)."""
        if self._tables is None:
            self._tables = build_tables(self.graph)
        return self._tables

    def neighbours(self, ix: int) -> _Neighbours:
        """The float32 geometry from record ``ix`` to its neighbours (computed once)."""
        near = self._near.get(ix)
        if near is None:
            near = self._geometry(ix)
            self._near[ix] = near
        return near

    def _geometry(self, ix: int) -> _Neighbours:
        node = int(self.node_of[ix])
        nodes = self.graph.neighbours(node) if node >= 0 else np.zeros(0, dtype=np.int32)
        nb = np.sort(self._ix_of_node[nodes])
        d = self.positions[nb] - self.positions[ix]  # glm::vec3 arithmetic, float32
        dx, dy, dz = d[:, 0], d[:, 1], d[:, 2]
        length = np.sqrt((dx * dx + dy * dy) + dz * dz)
        horizontal = np.sqrt(dx * dx + dy * dy)
        with np.errstate(divide="ignore", invalid="ignore"):
            inv = np.float32(1.0) / horizontal
            nx, ny = dx * inv, dy * inv
        elevation = tuple(
            math.atan2(z, h) for z, h in zip(dz.tolist(), horizontal.tolist(), strict=True)
        )
        return _Neighbours(
            nb,
            dx,
            dy,
            nx,
            ny,
            elevation,
            tuple(length.tolist()),
            {int(j): k for k, j in enumerate(nb.tolist())},
        )

    def candidates(
        self,
        ix: int,
        heading: float,
        elevation: float,
        cos_half_hfov: float,
        restricted: bool = True,
    ) -> Candidates:
        """The simulator's candidate list at record ``ix`` (without the location itself).

        Args:
            ix: the file index of the location.
            heading: the camera heading (radians, clockwise from +y; already normalised).
            elevation: the camera elevation (radians).
            cos_half_hfov: ``cos(vfov · width / height / 2)``.
            restricted: only neighbours in the field of view (the simulator's default).
        """
        near = self.neighbours(ix)
        if not len(near.ix):
            return (), (), (), ()
        adjusted = math.pi / 2.0 - heading
        cx, cy = np.float32(math.cos(adjusted)), np.float32(math.sin(adjusted))
        if restricted:
            cos_angle = (near.nx * cx + near.ny * cy).astype(np.float64)
            keep = np.flatnonzero(cos_angle >= cos_half_hfov).tolist()
        else:
            keep = list(range(len(near.ix)))
        cross = (near.dx * cy - near.dy * cx).tolist()
        dot = (near.dx * cx + near.dy * cy).tolist()
        rows = []
        for k in keep:
            rel_h = math.atan2(cross[k], dot[k])
            rel_e = near.elevation[k] - elevation
            rows.append((math.sqrt(rel_h * rel_h + rel_e * rel_e), k, rel_h, rel_e))
        # stable: equal offsets keep file order, as the simulator's sort does
        rows.sort(key=itemgetter(0))
        ixs = near.ix.tolist()
        return (
            tuple(ixs[k] for _, k, _, _ in rows),
            tuple(r[2] for r in rows),
            tuple(r[3] for r in rows),
            tuple(near.distance[k] for _, k, _, _ in rows),
        )

    def table_candidates(self, ix: int, view: int) -> Candidates:
        """:meth:`candidates` at discrete view ``view`` (0..35) with the R2R camera, taking
        membership and order from the :class:`ScanTables` (same rule, precomputed)."""
        node = int(self.node_of[ix])
        if node < 0:
            return (), (), (), ()
        tables = self.tables()
        count = int(tables.ego_count[node, view])
        nodes = tables.ego_node[node, view, 1:count].tolist()
        near = self.neighbours(ix)
        ixs = self._ix_of_node[nodes].tolist()
        elevation = elevation_of(view // 12)
        adjusted = math.pi / 2.0 - heading_of(view % 12)
        cx, cy = np.float32(math.cos(adjusted)), np.float32(math.sin(adjusted))
        pos = [near.position[j] for j in ixs]
        cross = (near.dx[pos] * cy - near.dy[pos] * cx).tolist()
        dot = (near.dx[pos] * cx + near.dy[pos] * cy).tolist()
        return (
            tuple(ixs),
            tuple(math.atan2(a, b) for a, b in zip(cross, dot, strict=True)),
            tuple(near.elevation[k] - elevation for k in pos),
            tuple(near.distance[k] for k in pos),
        )


def sim_scan_from_bytes(raw: bytes, scan: str, source: str) -> SimScan:
    """The :class:`SimScan` of a connectivity file's bytes (gzipped or not).

    Raises:
        InvalidInputError: the file is malformed (named by ``source``).

    Example:
        >>> import json
        >>> eye = lambda x, y: [1, 0, 0, x, 0, 1, 0, y, 0, 0, 1, 1.5, 0, 0, 0, 1]
        >>> recs = [
        ...     {"image_id": "a", "pose": eye(0, 0), "included": True, "unobstructed": [False, False, True]},
        ...     {"image_id": "x", "pose": eye(9, 9), "included": False, "unobstructed": [False, False, False]},
        ...     {"image_id": "b", "pose": eye(0, 2), "included": True, "unobstructed": [True, False, False]},
        ... ]
        >>> s = sim_scan_from_bytes(json.dumps(recs).encode(), "toy", "toy.json")
        >>> s.index["b"], s.xyz[2]
        (2, (0.0, 2.0, 1.5))
        >>> ixs, rel_h, rel_e, dist = s.candidates(0, 0.0, 0.0, COS_HALF_HFOV)
        >>> ixs, round(rel_h[0], 9), rel_e, dist  # b is straight ahead (north), 2 m away
        ((2,), -0.0, (0.0,), (2.0,))
    """
    raw = json_text(raw, source)
    graph = connectivity_from_bytes(raw, scan, source)
    try:  # checked by the graph reader; what it reads and this does not (NaN in `visible`) is named
        records = msgspec.json.decode(raw, type=list[_Record])
    except msgspec.MsgspecError as exc:
        raise InvalidInputError(f"{source}: {exc}") from None
    poses = np.array([r.pose for r in records], dtype=np.float64)
    return SimScan(
        scan=scan,
        ids=[str(r.image_id) for r in records],
        included=np.array([r.included for r in records], dtype=np.bool_),
        positions=np.ascontiguousarray(poses[:, [3, 7, 11]].astype(np.float32)),
        graph=graph,
        source=source,
    )


def load_sim_scan(path: str | Path, scan: str) -> SimScan:
    """Reads ``<scan>_connectivity.json`` or ``.json.gz`` at ``path`` (see
    :func:`sim_scan_from_bytes`)."""
    path = Path(path)
    return sim_scan_from_bytes(path.read_bytes(), scan, str(path))
