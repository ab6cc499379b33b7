"""Lazy, cached access to the navigation graphs of a folder of connectivity files."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from vlneval.errors import MissingDataError, UnknownNameError
from vlneval.graph import distances as dist
from vlneval.graph.matterport import (
    MAX_COORDINATE,
    NavGraph,
    chosen_connectivity,
    connectivity_from_bytes,
)

__all__ = ["GraphStore"]


class GraphStore:
    """Loads ``<scan>_connectivity.json[.gz]`` files on demand, with distance tables (which
    file of a scan is read: :func:`~vlneval.graph.matterport.connectivity_file`).

    Args:
        folder: the folder of connectivity files.
        use_cache: read and write the on-disk distance cache.
    """

    def __init__(self, folder: str | Path, *, use_cache: bool = True) -> None:
        self.folder = Path(folder)
        if not self.folder.is_dir():
            raise MissingDataError(f"graph folder {self.folder} does not exist")
        self.use_cache = use_cache
        self._files = self._index()
        self._graphs: dict[str, NavGraph] = {}
        self._tables: dict[str, np.ndarray] = {}

    def _index(self) -> set[str]:
        """The scans with a file (the file of each is chosen when it is read)."""
        return {
            p.name.removesuffix(".gz").removesuffix("_connectivity.json")
            for pattern in ("*_connectivity.json", "*_connectivity.json.gz")
            for p in self.folder.glob(pattern)
        }

    @property
    def scans(self) -> list[str]:
        """The scans with a connectivity file, sorted."""
        return sorted(self._files)

    def __contains__(self, scan: object) -> bool:
        return scan in self._files

    def graph(self, scan: str) -> NavGraph:
        """The graph of ``scan``."""
        self._load(scan)
        return self._graphs[scan]

    def distances(self, scan: str) -> np.ndarray:
        """The geodesic distance table of ``scan`` (node order of :meth:`graph`)."""
        self._load(scan)
        return self._tables[scan]

    def share_tables(self, scans: list[str]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The tables of ``scans`` laid end to end in one buffer, (flat, offsets, sizes).

        The store keeps views into that buffer instead of its own tables, so the distances of a
        large split are held once, not twice.

        Example:
            >>> import tempfile, pathlib, json
            >>> d = pathlib.Path(tempfile.mkdtemp())
            >>> eye = lambda x: [1, 0, 0, x, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1]
            >>> recs = [{"image_id": v, "pose": eye(3.0 * k), "included": True,
            ...          "unobstructed": [k != j for j in range(2)]} for k, v in enumerate("ab")]
            >>> _ = (d / "s_connectivity.json").write_text(json.dumps(recs))
            >>> store = GraphStore(d, use_cache=False)
            >>> flat, offsets, sizes = store.share_tables(["s"])
            >>> flat.tolist(), store.distances("s").base is flat
            ([0.0, 3.0, 3.0, 0.0], True)
        """
        tables = [self.distances(s) for s in scans]
        sizes = np.array([t.shape[0] for t in tables], dtype=np.int64)
        offsets = np.zeros(len(tables), dtype=np.int64)
        if len(tables) > 1:
            np.cumsum(sizes[:-1] ** 2, out=offsets[1:])
        flat = np.concatenate([t.ravel() for t in tables]) if tables else np.zeros(0)
        for scan, off, n in zip(scans, offsets.tolist(), sizes.tolist(), strict=True):
            self._tables[scan] = flat[off : off + n * n].reshape(n, n)
        return flat, offsets, sizes

    def _load(self, scan: str) -> None:
        if scan in self._graphs:
            return
        if scan not in self._files:
            raise UnknownNameError(
                f"scan (no connectivity file in {self.folder})", scan, self._files
            )
        self._graphs[scan], self._tables[scan] = self._read(scan)

    def _why_missing(self, scan: str) -> str:
        """Why the file of indexed ``scan`` cannot be read: it was removed, or is a folder."""
        plain = self.folder / f"{scan}_connectivity.json"
        there = next((p for p in (plain, Path(f"{plain}.gz")) if p.exists()), None)
        if there is None:
            return f"{self.folder}: the file of scan {scan} was removed"
        what = "a folder" if there.is_dir() else "not a regular file"
        return f"{there}: is {what}, expected the connectivity file of scan {scan}"

    def _read(self, scan: str) -> tuple[NavGraph, np.ndarray]:
        """The graph and table of ``scan``: from the disk cache, or computed (and cached)."""
        path, raw = chosen_connectivity(self.folder, scan)
        if path is None:
            raise MissingDataError(self._why_missing(scan))
        if raw is None:  # read once: hashed for the cache key, parsed on a miss
            raw = path.read_bytes()
        key = dist.file_key(raw, scan) if self.use_cache else ""
        cached = dist.load_cached(key, scan, str(path)) if self.use_cache else None
        # a table cached before coordinates were bounded is parsed again (and refused)
        if cached is not None and np.abs(cached[0].positions).max(initial=0) <= MAX_COORDINATE:
            return cached
        graph = connectivity_from_bytes(raw, scan, str(path))
        table = dist.distance_table(graph)
        if self.use_cache:
            dist.save_cached(key, graph, table)
        return graph, table
