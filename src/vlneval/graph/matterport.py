"""Matterport3D connectivity files read exactly as the official evaluators read them.

A connectivity file ``<scan>_connectivity.json`` is a list of viewpoint records with
``image_id``, ``pose`` (4x4 camera-to-world, row-major), ``included`` and ``unobstructed``.
An undirected edge joins two included viewpoints that are mutually unobstructed; its weight is
the 3-D Euclidean distance between their positions. Every official scorer builds its graph from
edges only, so an included viewpoint without any edge is not a node of the evaluation graph.
"""

from __future__ import annotations

import json
import math
import numbers
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any

import msgspec
import numpy as np

from vlneval.errors import InvalidInputError, ProblemCollector
from vlneval.io import brief, clip, explain, json_text, read_bytes

__all__ = [
    "NavGraph",
    "chosen_connectivity",
    "connectivity_file",
    "connectivity_from_bytes",
    "load_connectivity",
    "parse_connectivity",
]


class Viewpoint(msgspec.Struct):
    """One record of a ``<scan>_connectivity.json`` file, typed for msgspec's checked decoding
    (other fields are ignored)."""

    image_id: str
    pose: Annotated[list[float], msgspec.Meta(min_length=16, max_length=16)]
    included: bool
    unobstructed: list[bool]
    height: float | msgspec.UnsetType = msgspec.UNSET


@dataclass(eq=False)
class NavGraph:
    """A navigation graph of one scan.

    Attributes:
        scan: the scan id.
        ids: viewpoint ids of the graph's nodes (viewpoints with at least one edge).
        positions: ``(n, 3)`` node positions in metres (z up).
        edges: ``(e, 2)`` undirected edges as node index pairs ``i < j``.
        weights: ``(e,)`` edge lengths in metres.
        isolated: included viewpoints with no edge (not nodes; named in error messages).
        excluded: viewpoints whose ``included`` flag is false.
        heights: camera height above the floor per node (metres), when the file gives it.
        source: where the graph came from.
    """

    scan: str
    ids: list[str]
    positions: np.ndarray
    edges: np.ndarray
    weights: np.ndarray
    isolated: frozenset[str] = frozenset()
    excluded: frozenset[str] = frozenset()
    heights: np.ndarray | None = None
    source: str = ""
    index: dict[str, int] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self.index = {vp: i for i, vp in enumerate(self.ids)}
        self._neighbours: list[np.ndarray] | None = None
        self._adjacency: np.ndarray | None = None

    @property
    def n(self) -> int:
        """Number of nodes."""
        return len(self.ids)

    def neighbours(self, node: int) -> np.ndarray:
        """Indices of the nodes adjacent to ``node``, ascending."""
        if self._neighbours is None:
            lists: list[list[int]] = [[] for _ in range(self.n)]
            for i, j in self.edges.tolist():
                lists[i].append(j)
                lists[j].append(i)
            self._neighbours = [np.array(sorted(x), dtype=np.int32) for x in lists]
        return self._neighbours[node]

    def adjacency(self) -> np.ndarray:
        """Dense boolean adjacency matrix (the diagonal is False)."""
        if self._adjacency is None:
            adj = np.zeros((self.n, self.n), dtype=np.bool_)
            adj[self.edges[:, 0], self.edges[:, 1]] = True
            adj[self.edges[:, 1], self.edges[:, 0]] = True
            self._adjacency = adj
        return self._adjacency

    def describe_missing(self, viewpoint: str) -> str:
        """Why ``viewpoint`` is not a node, phrased for an error message (a long id clipped)."""
        if viewpoint in self.isolated:
            return (
                f"viewpoint {viewpoint} is included in scan {self.scan} but has no navigable "
                "edge, so it is not a node of the evaluation graph"
            )
        if viewpoint in self.excluded:
            return f"viewpoint {viewpoint} is marked not included in scan {self.scan}"
        return f"viewpoint {clip(viewpoint)} is not in scan {self.scan}"


def connectivity_file(folder: str | Path, scan: str) -> Path | None:
    """The connectivity file of ``scan`` in ``folder``, the one choice every reader makes:
    ``<scan>_connectivity.json``, else ``<scan>_connectivity.json.gz`` (vlneval's data root
    stores the latter); None when neither exists. When both exist they must hold the same text
    (the ``.gz`` one unzipped), and the ``.json`` one is read.

    Raises:
        InvalidInputError: both exist and their texts differ (which one is meant is unknown).

    Example:
        >>> import gzip, tempfile
        >>> d = Path(tempfile.mkdtemp())
        >>> _ = (d / "s_connectivity.json.gz").write_bytes(gzip.compress(b"[]"))
        >>> connectivity_file(d, "s").name, connectivity_file(d, "t")
        ('s_connectivity.json.gz', None)
        >>> _ = (d / "s_connectivity.json").write_bytes(b"[ ]")
        >>> connectivity_file(d, "s")  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        vlneval.errors.InvalidInputError: error: .../s_connectivity.json and .../s_connectivity.json.gz both hold scan s's graph but differ: remove one, or make them the same file
    """
    return chosen_connectivity(folder, scan)[0]


def chosen_connectivity(folder: str | Path, scan: str) -> tuple[Path | None, bytes | None]:
    """The file :func:`connectivity_file` chooses, and its bytes when choosing read them (both
    files exist and were compared), so that a reader reads each file once."""
    plain = Path(folder) / f"{scan}_connectivity.json"
    zipped = plain.with_name(plain.name + ".gz")
    if not zipped.is_file():
        return (plain if plain.is_file() else None), None
    if not plain.is_file():
        return zipped, None
    raw = plain.read_bytes()
    if json_text(raw, str(plain)) != read_bytes(zipped):
        raise InvalidInputError(
            f"{plain} and {zipped} both hold scan {scan}'s graph but differ: remove one, or make "
            "them the same file"
        )
    return plain, raw


def load_connectivity(path: str | Path, scan: str | None = None) -> NavGraph:
    """Reads one connectivity file (``.json`` or ``.json.gz``).

    Args:
        path: the file.
        scan: the scan id; by default the file name up to ``_connectivity``.

    Raises:
        InvalidInputError: the file is malformed or not symmetric.
    """
    path = Path(path)
    if scan is None:
        scan = path.name.split("_connectivity")[0]
    return connectivity_from_bytes(path.read_bytes(), scan, str(path))


def connectivity_from_bytes(raw: bytes, scan: str, source: str) -> NavGraph:
    """The graph of a connectivity file's bytes (gzipped or not); ``source`` names it in
    errors. See :func:`load_connectivity`."""
    raw = json_text(raw, source)
    fast = _typed(raw, scan, source)
    if fast is not None:
        return fast
    return parse_connectivity(explain(raw, source), scan=scan, source=source)


def _typed(raw: bytes, scan: str, source: str) -> NavGraph | None:
    """The graph of a well-formed file, decoded straight into typed records (msgspec checks
    every type in C); None for anything else (also for nesting too deep for msgspec's
    recursion, e.g. in an unknown field), which :func:`parse_connectivity` then explains."""
    try:
        records = msgspec.json.decode(raw, type=list[Viewpoint])
    except (msgspec.MsgspecError, RecursionError):
        return None
    n = len(records)
    if not n or any(len(r.unobstructed) != n for r in records):
        return None
    heights = [r.height for r in records]
    return _build(
        [r.image_id for r in records],
        np.array([r.pose for r in records], dtype=np.float64),
        np.array([r.unobstructed for r in records], dtype=np.bool_),
        np.array([r.included for r in records], dtype=np.bool_),
        None if any(h is msgspec.UNSET for h in heights) else np.array(heights, np.float64),
        scan,
        source,
    )


def _is_number(x: Any) -> bool:
    """A real number that float64 holds (numpy's too; not a bool, nor an integer of 400
    digits)."""
    if isinstance(x, bool) or not isinstance(x, numbers.Real):
        return False
    try:
        float(x)
    except OverflowError:
        return False
    return True


def _label(rec: dict[str, Any]) -> str | None:
    """``image_id "…"`` of a record whose id is valid (a long id clipped), else None."""
    vp = rec.get("image_id")
    ok = isinstance(vp, (str, int)) and not isinstance(vp, bool)
    return f"image_id {json.dumps(clip(str(vp)), ensure_ascii=False)}" if ok else None


def _check_record(rec: dict[str, Any], where: str, n: int, pc: ProblemCollector) -> None:
    """Adds every problem of one record: ``where`` names it (``record k``), its image_id too."""
    label = _label(rec)
    for key in ("image_id", "pose", "included", "unobstructed"):
        if key not in rec:
            pc.add(f"missing field {key!r}", episode=label, field=where)
    if "image_id" in rec and label is None:
        pc.add(
            "image_id must be a string (or an integer, read as its text), got "
            f"{brief(rec['image_id'])}",
            field=f"{where}.image_id",
        )
    pose, unob = rec.get("pose"), rec.get("unobstructed")
    if "pose" in rec and (
        not isinstance(pose, list) or len(pose) != 16 or not all(_is_number(x) for x in pose)
    ):
        pc.add("pose must be a list of 16 numbers", episode=label, field=f"{where}.pose")
    if "included" in rec and not isinstance(rec["included"], bool):
        pc.add(
            f"included must be true or false, got {brief(rec['included'])}",
            episode=label, field=f"{where}.included",
        )  # fmt: skip
    if "unobstructed" in rec and (why := _unobstructed_problem(unob, n)):
        pc.add(why, episode=label, field=f"{where}.unobstructed")
    height = rec.get("height", 0.0)
    if not _is_number(height) or not math.isfinite(float(height)):
        pc.add(
            f"height must be a finite number (metres), got {brief(height)}",
            episode=label, field=f"{where}.height",
        )  # fmt: skip


def _unobstructed_problem(unob: Any, n: int) -> str:
    """What is wrong with a record's ``unobstructed`` ("" when nothing): a string such as
    ``"false"`` would read as true."""
    if not isinstance(unob, list) or len(unob) != n:
        return f"unobstructed must be a list of {n} booleans"
    j = next((j for j, x in enumerate(unob) if not isinstance(x, bool)), -1)
    return f"unobstructed[{j}] must be true or false, got {brief(unob[j])}" if j >= 0 else ""


def _check_records(records: Any, source: str) -> int:
    """The number of records, after every problem of every record was raised at once."""
    pc = ProblemCollector(source)
    if not isinstance(records, list) or not records:
        pc.add("expected a non-empty JSON list of viewpoint records")
        pc.raise_if_any()
    n = len(records)
    for k, rec in enumerate(records):
        if isinstance(rec, dict):
            _check_record(rec, f"record {k}", n, pc)
        else:
            pc.add("expected an object", field=f"record {k}")
    pc.raise_if_any()
    return n


def parse_connectivity(records: Any, *, scan: str, source: str = "<memory>") -> NavGraph:
    """Builds a :class:`NavGraph` from parsed connectivity records.

    Raises:
        InvalidInputError: every malformed record at once (file, record index, image_id and
            field named), or an asymmetric ``unobstructed``.

    Example:
        >>> eye = lambda x, y: [1, 0, 0, x, 0, 1, 0, y, 0, 0, 1, 0, 0, 0, 0, 1]
        >>> recs = [
        ...     {"image_id": "a", "pose": eye(0, 0), "included": True, "unobstructed": [False, True, False]},
        ...     {"image_id": "b", "pose": eye(3, 4), "included": True, "unobstructed": [True, False, False]},
        ...     {"image_id": "c", "pose": eye(9, 9), "included": True, "unobstructed": [False, False, False]},
        ... ]
        >>> g = parse_connectivity(recs, scan="toy")
        >>> g.ids, g.weights.tolist(), sorted(g.isolated)
        (['a', 'b'], [5.0], ['c'])
        >>> recs[1]["height"] = None
        >>> parse_connectivity(recs, scan="toy", source="toy.json")
        Traceback (most recent call last):
        ...
        vlneval.errors.InvalidInputError: error: toy.json: image_id "b": record 1.height: height must be a finite number (metres), got None
    """
    _check_records(records, source)
    heights = None
    if all("height" in r for r in records):
        heights = np.asarray([r["height"] for r in records], dtype=np.float64)
    return _build(
        [str(r["image_id"]) for r in records],
        np.asarray([r["pose"] for r in records], dtype=np.float64),
        np.asarray([r["unobstructed"] for r in records], dtype=np.bool_),
        np.asarray([r["included"] for r in records], dtype=np.bool_),
        heights,
        scan,
        source,
    )


#: The largest position coordinate of a viewpoint (``pose[3]``, ``[7]``, ``[11]``), metres: a
#: building is far within it, and beyond it edge lengths and path sums can overflow.
MAX_COORDINATE = 1e6


def _check_poses(ids: list[str], poses: np.ndarray, source: str) -> None:
    """Refuses a pose entry that is not a finite number, or a position coordinate beyond
    ±:data:`MAX_COORDINATE`, naming the file, the viewpoint and the entry.

    Example:
        >>> poses = np.eye(4).reshape(1, 16).repeat(2, axis=0)
        >>> poses[1, 3] = 1e308
        >>> _check_poses(["a", "b"], poses, "x.json")
        Traceback (most recent call last):
        ...
        vlneval.errors.InvalidInputError: error: x.json: image_id "b": pose[3]: 1e+308 is beyond ±1e+06 m (a position coordinate, in metres)
    """
    with np.errstate(invalid="ignore"):
        bad = ~np.isfinite(poses)
        bad[:, [3, 7, 11]] |= np.abs(poses[:, [3, 7, 11]]) > MAX_COORDINATE
    if not bad.any():
        return
    pc = ProblemCollector(source)
    for k, j in np.argwhere(bad)[:20].tolist():
        v = float(poses[k, j])
        pc.add(
            f"{v!r} is not a finite number (a pose holds numbers only)"
            if not np.isfinite(v)
            else f"{v!r} is beyond ±{MAX_COORDINATE:g} m (a position coordinate, in metres)",
            episode=f"image_id {json.dumps(ids[k], ensure_ascii=False)}",
            field=f"pose[{j}]",
        )
    pc.raise_if_any()


def _build(
    ids: list[str],
    poses: np.ndarray,
    unob: np.ndarray,
    included: np.ndarray,
    heights: np.ndarray | None,
    scan: str,
    source: str,
) -> NavGraph:
    """The graph of checked records: poses ``(n, 16)``, ``unobstructed`` ``(n, n)``."""
    n = len(ids)
    _check_poses(ids, poses, source)
    first: dict[str, int] = {}
    for k, vp in enumerate(ids):  # the simulator indexes records, the graph ids: one each
        if first.setdefault(vp, k) != k:
            raise InvalidInputError(
                f'{source}: record {k}: image_id "{vp}" is also record {first[vp]}\'s'
            )
    if not np.array_equal(unob, unob.T):
        i, j = np.argwhere(unob != unob.T)[0]
        raise InvalidInputError(
            f"{source}: unobstructed is not symmetric: {ids[i]} -> {ids[j]} is "
            f"{bool(unob[i, j])} but {ids[j]} -> {ids[i]} is {bool(unob[j, i])}"
        )
    mask = unob & included[:, None] & included[None, :]
    np.fill_diagonal(mask, False)
    has_edge: np.ndarray = np.asarray(mask.any(axis=1))
    keep = np.flatnonzero(has_edge)
    remap = -np.ones(n, dtype=np.int64)
    remap[keep] = np.arange(len(keep))
    pos_all = poses[:, [3, 7, 11]]
    ii, jj = np.nonzero(np.triu(mask, 1))
    edges = np.stack([remap[ii], remap[jj]], axis=1).astype(np.int32)
    weights = np.linalg.norm(pos_all[ii] - pos_all[jj], axis=1)
    return NavGraph(
        scan=scan,
        ids=[ids[k] for k in keep],
        positions=np.ascontiguousarray(pos_all[keep]),
        edges=edges.reshape(-1, 2),
        weights=weights,
        isolated=frozenset(ids[k] for k in range(n) if included[k] and not has_edge[k]),
        excluded=frozenset(ids[k] for k in range(n) if not included[k]),
        heights=None if heights is None else heights[keep],
        source=source,
    )
