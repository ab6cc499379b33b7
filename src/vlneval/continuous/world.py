"""Continuous worlds: multi-level occupancy grids in metres, with geodesic distances.

A :class:`World` is a stack of 2-D occupancy grids (``layers``, roughly one per floor; several
where floors, landings and stairs overlap in plan view). Each free cell has a floor height, so a
position is ``(x, y, z)`` with ``z`` the floor under the agent (the Matterport3D frame: metres,
z up, heading clockwise from +y). Two neighbouring free cells (8 neighbours plus the 8
knight moves) are connected when their heights differ by at most
``climb + slope * horizontal distance``, so stairs built as ramps connect floors while floors
stacked 2 m apart never touch. The geodesic distance is the shortest path over those
connections with 3-D edge lengths (scipy's csgraph Dijkstra): it overestimates the straight
line by at most 2.7 % in open space (the 16-neighbour stencil) and is resolved to one cell.
"""

from __future__ import annotations

import hashlib
import math
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from vlneval.continuous.geodesic import build_graph
from vlneval.continuous.images import read_gray
from vlneval.continuous.search import TargetSearch
from vlneval.errors import InvalidInputError
from vlneval.graph.distances import write_cache_file

__all__ = ["World"]

#: Version of the on-disk field cache (a change of how fields are computed bumps it).
FIELD_FORMAT = 1
#: At most this many cached field files are mapped at once, over all worlds: each open map
#: counts against the kernel's per-process limit (Linux ``vm.max_map_count``, 65,530).
MAX_OPEN_MAPS = 1024
# Mapped field files by (cache folder, goal node), least recently used first.
_MAPS: OrderedDict[tuple[Path, int], np.ndarray] = OrderedDict()


@dataclass(eq=False)
class World:
    """A multi-level occupancy grid.

    Attributes:
        name: e.g. the scan id.
        free: ``(L, H, W)`` bool, True where the agent may stand.
        height: ``(L, H, W)`` float, the floor height of each free cell (metres).
        origin: world ``(x, y)`` of the centre of cell ``(row 0, col 0)``; rows grow with y,
            columns with x.
        resolution: cell size in metres.
        climb: height step allowed between neighbouring cells regardless of distance (m).
        slope: extra height allowed per metre of horizontal distance (a ramp or stair).
    """

    name: str
    free: np.ndarray
    height: np.ndarray
    origin: tuple[float, float]
    resolution: float
    climb: float = 0.25
    slope: float = 1.6
    cache: str | Path | None = None
    _digest: str | None = field(default=None, init=False, repr=False)
    _folder: tuple[Any, Path] | None = field(default=None, init=False, repr=False)
    _graph: Any = field(default=None, init=False, repr=False)
    _reverse: Any = field(default=None, init=False, repr=False)
    _target_search: Any = field(default=None, init=False, repr=False)
    _fields: OrderedDict[int, np.ndarray] = field(
        default_factory=OrderedDict, init=False, repr=False
    )
    _searches: OrderedDict[tuple[int, float], tuple[np.ndarray, np.ndarray]] = field(
        default_factory=OrderedDict, init=False, repr=False
    )

    def __post_init__(self) -> None:
        if self.free.ndim == 2:
            self.free = self.free[None]
        if self.height.ndim == 2:
            self.height = self.height[None]
        if self.free.shape != self.height.shape or self.free.ndim != 3:
            raise InvalidInputError(
                f"world {self.name}: free and height must be (L, H, W) arrays of one shape; got "
                f"{self.free.shape} and {self.height.shape}"
            )
        if not (self.resolution > 0 and math.isfinite(self.resolution)):
            raise InvalidInputError(
                f"world {self.name}: resolution must be > 0, got {self.resolution}"
            )
        self.free = np.ascontiguousarray(self.free, dtype=np.bool_)
        self.height = np.ascontiguousarray(
            np.where(self.free, self.height, np.nan), dtype=np.float64
        )
        self.node_id = np.full(self.free.shape, -1, dtype=np.int64)
        self.node_id[self.free] = np.arange(int(self.free.sum()))
        self.node_cells = np.argwhere(self.free)

    # ----- construction ---------------------------------------------------------------------
    @classmethod
    def from_array(
        cls,
        free: Any,
        *,
        resolution: float,
        origin: tuple[float, float] = (0.0, 0.0),
        floor_height: float | Any = 0.0,
        name: str = "array",
        **kw: Any,
    ) -> World:
        """A world from a boolean array (``(H, W)`` one floor, or ``(L, H, W)``).

        ``floor_height`` is one number, one per layer, or an array shaped like ``free``.

        Example:
            >>> w = World.from_array([[1, 1, 1], [0, 0, 1]], resolution=1.0)
            >>> w.n_nodes, w.distance((0.0, 0.0, 0.0), (2.0, 1.0, 0.0))
            (4, 3.0)
        """
        arr = np.asarray(free)
        if arr.ndim not in (2, 3) or arr.size == 0:
            raise InvalidInputError(f"world {name}: expected a non-empty (H, W) or (L, H, W) array")
        arr = arr.astype(bool) if arr.ndim == 3 else arr.astype(bool)[None]
        h = np.asarray(floor_height, dtype=np.float64)
        if h.ndim == 1:
            h = h[:, None, None]
        heights = np.broadcast_to(h, arr.shape).astype(np.float64)
        return cls(
            name, arr, heights, (float(origin[0]), float(origin[1])), float(resolution), **kw
        )

    @classmethod
    def from_image(
        cls,
        path: str | Path,
        *,
        resolution: float,
        origin: tuple[float, float] = (0.0, 0.0),
        free_threshold: float = 0.5,
        negate: bool = False,
        **kw: Any,
    ) -> World:
        """A one-floor world from a map image (PGM/PPM natively; PNG and others with Pillow).

        As ROS ``map_server`` reads maps: a pixel is free when its brightness (0..1) is above
        ``free_threshold`` (white = free); ``negate`` swaps that. The image's top row is the
        largest y, as a map is drawn.
        """
        gray = read_gray(Path(path))
        free = (gray < free_threshold) if negate else (gray > free_threshold)
        return cls.from_array(
            free[::-1], resolution=resolution, origin=origin, name=Path(path).stem, **kw
        )

    # ----- geometry -------------------------------------------------------------------------
    @property
    def n_layers(self) -> int:
        """Number of layers."""
        return int(self.free.shape[0])

    @property
    def n_nodes(self) -> int:
        """Number of free cells."""
        return int(self.node_cells.shape[0])

    def cell(self, x: float, y: float) -> tuple[int, int]:
        """The (row, col) of the cell containing ``(x, y)`` (may be outside the grid)."""
        return (
            int(math.floor((y - self.origin[1]) / self.resolution + 0.5)),
            int(math.floor((x - self.origin[0]) / self.resolution + 0.5)),
        )

    def centre(self, node: int) -> np.ndarray:
        """The 3-D centre (x, y, floor height) of a node."""
        layer, i, j = self.node_cells[node]
        return np.array(
            [
                self.origin[0] + j * self.resolution,
                self.origin[1] + i * self.resolution,
                self.height[layer, i, j],
            ]
        )

    def path_points(self, nodes: Sequence[int] | np.ndarray) -> np.ndarray:
        """``(k, 3)`` rows ``(x, y, layer)``: the cell centres of ``nodes`` and their layers."""
        cells = self.node_cells[nodes]
        return np.stack(
            [
                self.origin[0] + cells[:, 2] * self.resolution,
                self.origin[1] + cells[:, 1] * self.resolution,
                cells[:, 0],
            ],
            axis=1,
        ).astype(np.float64)

    def inside(self, i: int, j: int) -> bool:
        """Whether (row, col) is on the grid."""
        return 0 <= i < self.free.shape[1] and 0 <= j < self.free.shape[2]

    def layer_at(self, i: int, j: int, z: float, tolerance: float) -> int:
        """The free layer at (i, j) whose floor is nearest ``z`` within ``tolerance``; -1 if none."""
        if not self.inside(i, j):
            return -1
        col = self.free[:, i, j]
        if not col.any():
            return -1
        dz = np.where(col, np.abs(self.height[:, i, j] - z), np.inf)
        k = int(np.argmin(dz))
        return k if dz[k] <= tolerance else -1

    def locate(
        self, position: Any, *, z_tolerance: float = 1.0, snap: float = 0.0
    ) -> tuple[int, float]:
        """The node of ``position`` and the horizontal distance to that node's centre.

        The cell containing the point is used when it is free at a floor within
        ``z_tolerance`` of the point's z; otherwise the nearest such cell within ``snap``
        metres (horizontally). Returns ``(-1, inf)`` when there is none.
        """
        x, y, z = (float(v) for v in position)
        i0, j0 = self.cell(x, y)
        k = self.layer_at(i0, j0, z, z_tolerance)
        if k >= 0:
            node = int(self.node_id[k, i0, j0])
            return node, float(np.hypot(*(self.centre(node)[:2] - (x, y))))
        reach = int(math.ceil(snap / self.resolution))
        if reach == 0:
            return -1, math.inf
        h, w = self.free.shape[1:]
        i_lo, i_hi = max(i0 - reach, 0), min(i0 + reach + 1, h)
        j_lo, j_hi = max(j0 - reach, 0), min(j0 + reach + 1, w)
        if i_lo >= i_hi or j_lo >= j_hi:
            return -1, math.inf
        free = self.free[:, i_lo:i_hi, j_lo:j_hi]
        dz = np.abs(self.height[:, i_lo:i_hi, j_lo:j_hi] - z)
        ii, jj = np.mgrid[i_lo:i_hi, j_lo:j_hi]
        off = np.hypot(
            self.origin[0] + jj * self.resolution - x, self.origin[1] + ii * self.resolution - y
        )
        ok = free & (dz <= z_tolerance) & (off <= snap)[None]
        if not ok.any():
            return -1, math.inf
        # The nearest cell; among layers there, the floor nearest in height.
        cost = np.where(ok, off[None] + 1e-9 * dz, np.inf)
        kk, ci, cj = (int(v) for v in np.unravel_index(int(np.argmin(cost)), cost.shape))
        return int(self.node_id[kk, i_lo + ci, j_lo + cj]), float(off[ci, cj])

    def locate_many(
        self, positions: Any, *, z_tolerance: float = 1.0, snap: float = 0.0
    ) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`locate` of every row of ``positions`` (``(n, 3)``): nodes (-1 for none) and
        horizontal offsets (inf for none). The cells containing the points are looked up at
        once; only points off the free space there go through :meth:`locate` one by one.

        Example:
            >>> w = World.from_array([[1, 1, 0]], resolution=1.0)
            >>> nodes, offsets = w.locate_many([[0.2, 0, 0], [2, 0, 0], [2, 0, 0]], snap=1.0)
            >>> nodes.tolist(), offsets.tolist()
            ([0, 1, 1], [0.2, 1.0, 1.0])
        """
        p = np.asarray(positions, dtype=np.float64).reshape(-1, 3)
        ii = np.floor((p[:, 1] - self.origin[1]) / self.resolution + 0.5).astype(np.int64)
        jj = np.floor((p[:, 0] - self.origin[0]) / self.resolution + 0.5).astype(np.int64)
        h, w = self.free.shape[1:]
        inside = (ii >= 0) & (ii < h) & (jj >= 0) & (jj < w)
        ci, cj = np.where(inside, ii, 0), np.where(inside, jj, 0)
        free = self.free[:, ci, cj] & inside  # (L, n)
        dz = np.where(free, np.abs(self.height[:, ci, cj] - p[:, 2]), np.inf)
        k = np.argmin(dz, axis=0)
        found = dz[k, np.arange(len(p))] <= z_tolerance
        nodes = np.where(found, self.node_id[k, ci, cj], -1)
        offsets = np.hypot(
            self.origin[0] + cj * self.resolution - p[:, 0],
            self.origin[1] + ci * self.resolution - p[:, 1],
        )
        offsets[~found] = np.inf
        for n in np.flatnonzero(~found).tolist():  # the nearest free cell within snap
            nodes[n], offsets[n] = self.locate(p[n], z_tolerance=z_tolerance, snap=snap)
        return nodes, offsets

    # ----- graph and geodesics --------------------------------------------------------------
    def graph(self) -> Any:
        """The sparse (CSR) graph of free cells, edges weighted by 3-D length (built once)."""
        if self._graph is None:
            self._graph = self._load_graph()
        if self._graph is None:
            self._graph = build_graph(self)
            self._save_graph(self._graph)
        return self._graph

    def field(self, goal_node: int) -> np.ndarray:
        """Geodesic distance from every node to ``goal_node`` (metres; inf when unreachable).

        Fields read from the cache folder are kept mapped in :data:`MAX_OPEN_MAPS` maps shared
        by every world; computed ones stay in memory, the last 64 of each world.
        """
        cached = self._fields.get(goal_node)
        if cached is not None:
            self._fields.move_to_end(goal_node)
            return cached
        values = self._load_field(goal_node)
        if values is not None:
            return values
        from scipy.sparse.csgraph import dijkstra  # deferred: scipy

        if self._reverse is None:
            self._reverse = self.graph().T.tocsr()
        values = dijkstra(self._reverse, directed=True, indices=goal_node)
        self._save_field(goal_node, values)
        self._fields[goal_node] = values
        if len(self._fields) > 64:
            self._fields.popitem(last=False)
        return values

    # A field depends on the grid alone, so runs over the same split (each action space, every
    # checkpoint of a sweep) share them on disk when ``cache`` names a folder (TwinWorlds does).
    def _cache_folder(self) -> Path | None:
        if self.cache is None:
            return None
        if self._digest is None:
            h = hashlib.sha256(
                f"{self.resolution} {self.origin} {self.climb} {self.slope}".encode()
            )
            h.update(self.free.tobytes())
            h.update(self.height.tobytes())
            self._digest = h.hexdigest()[:24]
        if (
            self._folder is None or self._folder[0] != self.cache
        ):  # the path built once, not per call
            folder = Path(self.cache) / f"{self.name}-v{FIELD_FORMAT}-{self._digest}"
            self._folder = (self.cache, folder)
        return self._folder[1]

    def _load_graph(self) -> Any:
        folder = self._cache_folder()
        path = None if folder is None else folder / "graph.npz"
        if path is None or not path.is_file():
            return None
        try:
            with np.load(path, allow_pickle=False) as f:
                indptr, indices, data = f["indptr"], f["indices"], f["data"]
        except (OSError, ValueError, KeyError):
            return None
        n = self.n_nodes
        if indptr.shape != (n + 1,) or indices.shape != data.shape or data.dtype != np.float64:
            return None
        from scipy.sparse import csr_matrix  # deferred: scipy

        return csr_matrix((data, indices, indptr), shape=(n, n))

    def _save_graph(self, graph: Any) -> None:
        folder = self._cache_folder()
        if folder is not None:
            arrays = {"indptr": graph.indptr, "indices": graph.indices, "data": graph.data}
            self._save(folder / "graph.npz", arrays)

    def _load_field(self, goal_node: int) -> np.ndarray | None:
        folder = self._cache_folder()
        if folder is None:
            return None
        key = (folder, goal_node)
        values = _MAPS.get(key)
        if values is not None:
            _MAPS.move_to_end(key)  # the most recently used last
            return values
        values = _mapped(folder / f"{goal_node}.npy", self.n_nodes)
        if values is None:
            return None
        _MAPS[key] = values
        while len(_MAPS) > MAX_OPEN_MAPS:  # a map closes when its last user drops it
            _MAPS.popitem(last=False)
        return values

    def _save_field(self, goal_node: int, values: np.ndarray) -> None:
        folder = self._cache_folder()
        if folder is not None:
            self._save(folder / f"{goal_node}.npy", {"": values})

    @staticmethod
    def _save(path: Path, arrays: dict[str, np.ndarray]) -> None:
        """One array (key ``""``) as .npy, else an .npz, as a cache file (skipped on errors)."""
        if "" in arrays:
            write_cache_file(path, lambda fh: np.save(fh, arrays[""], allow_pickle=False))
        else:
            write_cache_file(path, lambda fh: np.savez(fh, **arrays))  # type: ignore[arg-type]

    def search(self, node: int, *, limit: float) -> tuple[np.ndarray, np.ndarray]:
        """Geodesic distances FROM ``node`` to every node within ``limit`` metres (inf beyond)
        and the Dijkstra predecessors (-9999 where none), read-only; the last 16 are kept,
        since a robot starts many motions from the same cell."""
        key = (int(node), float(limit))
        cached = self._searches.get(key)
        if cached is not None:
            self._searches.move_to_end(key)
            return cached
        from scipy.sparse.csgraph import dijkstra  # deferred: scipy

        dist, pred = dijkstra(
            self.graph(), directed=True, indices=key[0], return_predecessors=True, limit=limit
        )
        dist.setflags(write=False)
        pred.setflags(write=False)
        self._searches[key] = (dist, pred)
        if len(self._searches) > 16:
            self._searches.popitem(last=False)
        return dist, pred

    def target_search(self) -> Any:
        """The world's :class:`~vlneval.continuous.search.TargetSearch` (made once): searches
        from a cell that stop when a few target cells are settled, with ``search``'s floats
        and paths."""
        if self._target_search is None:
            self._target_search = TargetSearch(self)
        return self._target_search

    def distance(self, a: Any, b: Any, *, z_tolerance: float = 1.0, snap: float = 0.0) -> float:
        """Geodesic distance between two positions (inf when either is off the map or the two
        are not connected); each end adds its horizontal offset to its cell centre.
        """
        na, oa = self.locate(a, z_tolerance=z_tolerance, snap=snap)
        nb, ob = self.locate(b, z_tolerance=z_tolerance, snap=snap)
        if na < 0 or nb < 0:
            return math.inf
        d = float(self.field(nb)[na])
        return d + oa + ob if math.isfinite(d) else math.inf


def _mapped(path: Path, n: int) -> np.ndarray | None:
    """The field file mapped copy-on-write (a run reads a few pages of each field, not all of
    it); None when it is missing, unreadable or not ``n`` contiguous float64 values."""
    if not path.is_file():
        return None
    try:
        values = np.load(path, allow_pickle=False, mmap_mode="c").view(np.ndarray)
    except (OSError, ValueError):
        return None
    ok = values.shape == (n,) and values.dtype == np.float64
    return values if ok and values.flags.c_contiguous else None
