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

The file is read as the simulator reads it (:func:`sim_scan_from_bytes`), which takes files the
scorer's stricter reader refuses. With the R2R camera (60° vertical FOV, 640×480) and discretised
angles the membership and order come from the precomputed
:class:`~vlneval.graph.tables.ScanTables` when the scorer's reader takes the file too; any other
camera, continuous
angles or unrestricted navigation use the same rule per location (vectorised over its
neighbours).
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from operator import itemgetter
from pathlib import Path
from typing import Annotated, Any

import msgspec
import numpy as np

from vlneval.errors import InvalidInputError, ProblemCollector, VLNEvalError
from vlneval.graph.matterport import NavGraph, connectivity_file, connectivity_from_bytes
from vlneval.graph.tables import COS_HALF_HFOV, ScanTables, build_tables, elevation_of, heading_of
from vlneval.io import brief, clip, explain, json_text

__all__ = [
    "SimScan",
    "Candidates",
    "find_sim_scan",
    "load_sim_scan",
    "sim_scan_from_bytes",
    "COS_HALF_HFOV",
]

#: One candidate list: parallel tuples of file indices, relative headings, relative elevations
#: and distances (the current location, entry 0 of the simulator's list, is not included).
Candidates = tuple[tuple[int, ...], tuple[float, ...], tuple[float, ...], tuple[float, ...]]


class _Record(msgspec.Struct):
    """The four fields of a connectivity record the simulator reads (``NavGraph::Location``),
    typed for the fast decode; a file this refuses is read leniently by :func:`_lenient`."""

    image_id: str | int  # the graph reader takes an integer id too (as text)
    pose: Annotated[list[float], msgspec.Meta(min_length=16, max_length=16)]
    unobstructed: list[bool]
    included: bool = False  # jsoncpp's asBool() of a missing member is false


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
        unobstructed: ``(n, n)`` the records' ``unobstructed`` rows (row ``i`` is all the
            simulator reads for record ``i``: symmetry is never checked).
        graph: the navigation graph (included records with at least one edge), or None when
            the file is one the simulator reads but the scorer's reader refuses (an asymmetric
            ``unobstructed``, a repeated ``image_id``, a ``height`` of null, 0/1 for booleans,
            ...); then every list comes from the rule, none from the tables.
        xyz: the same positions as Python floats (the values the simulator reports).
        index: viewpoint id -> file index (the first record with that id, as
            ``NavGraph::index`` finds it).
        node_of: ``(n,)`` file index -> graph node, −1 for records that are not nodes.
        source: where the file came from.
    """

    scan: str
    ids: list[str]
    included: np.ndarray
    positions: np.ndarray
    unobstructed: np.ndarray
    graph: NavGraph | None
    source: str
    xyz: list[tuple[float, float, float]] = field(init=False, repr=False)
    index: dict[str, int] = field(init=False, repr=False)
    node_of: np.ndarray = field(init=False, repr=False)
    _ix_of_node: np.ndarray = field(init=False, repr=False)
    _tables: ScanTables | None = field(default=None, init=False, repr=False)
    _near: dict[int, _Neighbours] = field(default_factory=dict, init=False, repr=False)

    def __post_init__(self) -> None:
        self.xyz = [(float(a), float(b), float(c)) for a, b, c in self.positions.tolist()]
        index: dict[str, int] = {}
        for i, vp in enumerate(self.ids):
            index.setdefault(vp, i)
        self.index = index
        nodes = [] if self.graph is None else self.graph.ids
        self._ix_of_node = np.array([index[v] for v in nodes], dtype=np.int64)
        node_of = np.full(len(self.ids), -1, dtype=np.int64)
        node_of[self._ix_of_node] = np.arange(len(nodes))
        self.node_of = node_of

    def tables(self) -> ScanTables:
        """The scan's candidate tables (built on first use; needs :attr:`graph`)."""
        if self._tables is None:
            if self.graph is None:
                raise ValueError(f"{self.source}: no navigation graph, so no tables")
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
        # NavGraph::adjacentViewpointIndices: every included j != ix with unobstructed[ix][j]
        row = self.unobstructed[ix] & self.included
        row[ix] = False
        nb = np.flatnonzero(row)
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
        membership and order from the :class:`ScanTables` (same rule, precomputed; without
        :attr:`graph`, from the rule)."""
        if self.graph is None:
            return self.candidates(
                ix, heading_of(view % 12), elevation_of(view // 12), COS_HALF_HFOV
            )
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
    """The :class:`SimScan` of a connectivity file's bytes (gzipped or not), read as the
    simulator reads it (``NavGraph::Location``, jsoncpp): only ``image_id``, ``included``,
    ``pose`` and ``unobstructed`` are read; ``height``, ``visible`` and any other field are
    ignored; two records may share an ``image_id`` (the first is the one found) and
    ``unobstructed`` need not be symmetric. A boolean field takes true/false, a number (non-zero
    is true) or null (false), as jsoncpp's ``asBool``; a missing ``included`` is false.

    Raises:
        InvalidInputError: the file cannot be read at all: not JSON, not a list of objects, a
            record without ``image_id``, ``pose`` or ``unobstructed``, a ``pose`` that is not 16
            numbers, an ``unobstructed`` row that is not one boolean per record, or a position
            beyond float32 (every such problem at once, naming ``source``, the record, its
            ``image_id`` and the field).

    Example:
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
        >>> del recs[2]["pose"]
        >>> sim_scan_from_bytes(json.dumps(recs).encode(), "toy", "toy.json")
        Traceback (most recent call last):
        ...
        vlneval.errors.InvalidInputError: error: toy.json: image_id "b": record 2: missing field 'pose'
    """
    raw = json_text(raw, source)
    ids, poses, included, unob = _read(raw, source)
    with np.errstate(over="ignore"):  # beyond float32: inf, refused next
        positions = poses[:, [3, 7, 11]].astype(np.float32)
    _check_positions(ids, positions, source)
    try:  # the scorer's graph, for the precomputed tables, when its stricter reader takes it
        graph: NavGraph | None = connectivity_from_bytes(raw, scan, source)
    except InvalidInputError:
        graph = None
    return SimScan(
        scan=scan,
        ids=ids,
        included=included,
        positions=np.ascontiguousarray(positions),
        unobstructed=unob,
        graph=graph,
        source=source,
    )


_Arrays = tuple[list[str], np.ndarray, np.ndarray, np.ndarray]


def _read(raw: bytes, source: str) -> _Arrays:
    """ids, poses ``(n, 16)``, included ``(n,)`` and unobstructed ``(n, n)`` of a file."""
    try:
        records = msgspec.json.decode(raw, type=list[_Record])
    except (msgspec.MsgspecError, RecursionError):
        records = None
    n = 0 if records is None else len(records)
    if records is None or any(len(r.unobstructed) != n for r in records):
        return _lenient(_generic(raw, source), source)
    return (
        [str(r.image_id) for r in records],
        np.array([r.pose for r in records], dtype=np.float64).reshape(n, 16),
        np.array([r.included for r in records], dtype=np.bool_),
        np.array([r.unobstructed for r in records], dtype=np.bool_).reshape(n, n),
    )


def _generic(raw: bytes, source: str) -> Any:
    """The JSON value of a file the fast decode refused (strict JSON, as jsoncpp reads it)."""
    try:
        return msgspec.json.decode(raw)
    except (msgspec.MsgspecError, RecursionError) as exc:
        explain(raw, source)  # names what is wrong (not JSON, too deep, ...) when it can
        raise InvalidInputError(
            f"{source}: not valid JSON ({exc}; NaN and Infinity are not JSON numbers)"
        ) from None


def _as_bool(x: Any) -> bool | None:
    """jsoncpp's ``asBool``: a boolean, a number (non-zero is true) or null (false); None for
    what it cannot convert (a string, a list, an object)."""
    if x is None:
        return False
    if isinstance(x, (bool, int, float)):
        return bool(x)
    return None


def _as_number(x: Any) -> float | None:
    """A JSON number as a float, or None (a boolean, null, a string, an integer beyond
    float64)."""
    if isinstance(x, bool) or not isinstance(x, (int, float)):
        return None
    try:
        return float(x)
    except OverflowError:
        return None


def _lenient(records: Any, source: str) -> _Arrays:
    """:func:`_read` of decoded records, with every problem of every record raised at once."""
    pc = ProblemCollector(source)
    if not isinstance(records, list):
        pc.add("expected a JSON list of viewpoint records")
        pc.raise_if_any()
    n = len(records)
    ids, poses = [], np.zeros((n, 16), dtype=np.float64)
    included, unob = np.zeros(n, dtype=np.bool_), np.zeros((n, n), dtype=np.bool_)
    for k, rec in enumerate(records):
        where = f"record {k}"
        if not isinstance(rec, dict):
            pc.add(f"expected an object, got {brief(rec)}", field=where)
            ids.append("")
            continue
        vp = rec.get("image_id")
        good_id = isinstance(vp, (str, int)) and not isinstance(vp, bool)
        ids.append(str(vp) if good_id else "")
        label = f"image_id {json.dumps(clip(str(vp)), ensure_ascii=False)}" if good_id else None
        for key in ("image_id", "pose", "unobstructed"):
            if key not in rec:
                pc.add(f"missing field {key!r}", episode=label, field=where)
        if "image_id" in rec and not good_id:
            pc.add(
                f"image_id must be a string (or an integer, read as its text), got {brief(vp)}",
                field=f"{where}.image_id",
            )
        flag = _as_bool(rec.get("included"))
        if flag is None:
            pc.add(
                f"included must be a boolean (true, false, a number or null), got {brief(rec['included'])}",
                episode=label, field=f"{where}.included",
            )  # fmt: skip
        included[k] = bool(flag)
        if "pose" in rec:
            _pose(rec["pose"], poses[k], pc, label, f"{where}.pose")
        if "unobstructed" in rec:
            _row(rec["unobstructed"], unob[k], pc, label, f"{where}.unobstructed")
    pc.raise_if_any()
    return ids, poses, included, unob


def _pose(pose: Any, out: np.ndarray, pc: ProblemCollector, label: str | None, at: str) -> None:
    """Fills ``out`` with a record's 16 pose numbers, or adds the problem."""
    values = [_as_number(x) for x in pose] if isinstance(pose, list) else []
    if len(values) != 16 or None in values:
        pc.add(f"pose must be a list of 16 numbers, got {brief(pose)}", episode=label, field=at)
        return
    out[:] = values


def _row(row: Any, out: np.ndarray, pc: ProblemCollector, label: str | None, at: str) -> None:
    """Fills ``out`` with a record's ``unobstructed`` row, or adds the problem."""
    n = len(out)
    if not isinstance(row, list) or len(row) != n:
        got = f"{len(row)} entries" if isinstance(row, list) else brief(row)
        pc.add(
            f"unobstructed must be a list of {n} booleans (one per record), got {got}",
            episode=label, field=at,
        )  # fmt: skip
        return
    for j, x in enumerate(row):
        v = _as_bool(x)
        if v is None:
            pc.add(
                f"must be a boolean (true, false, a number or null), got {brief(x)}",
                episode=label,
                field=f"{at}[{j}]",
            )
            return
        out[j] = v


def _check_positions(ids: list[str], positions: np.ndarray, source: str) -> None:
    """Refuses a position (``pose[3]``, ``[7]``, ``[11]``) that float32 cannot hold."""
    bad = np.argwhere(~np.isfinite(positions))
    if not len(bad):
        return
    pc = ProblemCollector(source)
    for k, c in bad[:20].tolist():
        pc.add(
            "is beyond what a float32 holds (the simulator reads poses as float32)",
            episode=f"image_id {json.dumps(clip(ids[k]), ensure_ascii=False)}",
            field=f"record {k}.pose[{(3, 7, 11)[c]}]",
        )
    pc.raise_if_any()


def load_sim_scan(path: str | Path, scan: str) -> SimScan:
    """Reads ``<scan>_connectivity.json`` or ``.json.gz`` at ``path`` (see
    :func:`sim_scan_from_bytes`)."""
    path = Path(path)
    return sim_scan_from_bytes(path.read_bytes(), scan, str(path))


def find_sim_scan(folder: str, scan: str) -> SimScan | None:
    """The scan's :class:`SimScan` from ``folder``, ``<scan>_connectivity.json`` or ``.json.gz``
    (the choice scoring makes), or None when neither is there.

    Raises:
        ValueError: the file is malformed; the message starts ``MatterSim:``, as the
            simulator's own errors do.

    Example:
        >>> find_sim_scan("/nonexistent", "scan") is None
        True
    """
    try:
        path = connectivity_file(folder, scan)
        return None if path is None else load_sim_scan(path, scan)
    except VLNEvalError as exc:
        raise ValueError(f"MatterSim: {exc}") from exc
