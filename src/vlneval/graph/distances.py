"""Geodesic distance tables and their on-disk cache.

A table is the all-pairs shortest-path lengths of one scan's graph (scipy's csgraph Dijkstra on
the metre weights: the same numbers as the official networkx Dijkstra to ~1e-12). Tables are
cached under ``$VLNEVAL_CACHE`` (default ``~/.cache/vlneval``), keyed by the SHA-256 of the
connectivity file's bytes, so a changed file is never served a stale table.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from pathlib import Path

import numpy as np

from vlneval.graph.matterport import NavGraph

__all__ = ["distance_table", "cache_dir", "CACHE_FORMAT"]

CACHE_FORMAT = 1


def distance_table(graph: NavGraph) -> np.ndarray:
    """All-pairs geodesic distances of ``graph`` in metres (inf between components).

    Example:
        >>> import numpy as np
        >>> from vlneval.graph.matterport import NavGraph
        >>> g = NavGraph("toy", ["a", "b", "c"], np.zeros((3, 3)),
        ...              np.array([[0, 1], [1, 2]]), np.array([3.0, 4.0]))
        >>> distance_table(g).tolist()
        [[0.0, 3.0, 7.0], [3.0, 0.0, 4.0], [7.0, 4.0, 0.0]]
    """
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import shortest_path

    n = graph.n
    e = graph.edges
    # Zero-length edges would vanish from a sparse matrix; a tiny weight keeps them as edges.
    w = np.where(graph.weights > 0, graph.weights, 1e-300)
    m = coo_matrix((w, (e[:, 0], e[:, 1])), shape=(n, n)).tocsr()
    d = shortest_path(m, method="D", directed=False)
    d[d < 1e-200] = 0.0
    return np.ascontiguousarray(d, dtype=np.float64)


def cache_dir() -> Path:
    """The cache folder: ``$VLNEVAL_CACHE`` or ``~/.cache/vlneval``."""
    env = os.environ.get("VLNEVAL_CACHE")
    return Path(env) if env else Path.home() / ".cache" / "vlneval"


def file_key(raw: bytes, scan: str) -> str:
    """Cache key of a connectivity file: scan, format version and content hash."""
    digest = hashlib.sha256(raw).hexdigest()[:24]
    return f"{scan}-v{CACHE_FORMAT}-{digest}"


def save_cached(key: str, graph: NavGraph, table: np.ndarray) -> None:
    """Writes a graph and its table atomically; a cache that cannot be written is skipped."""
    folder = cache_dir() / "graphs"
    try:
        folder.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=folder, suffix=".tmp")
        with os.fdopen(fd, "wb") as fh:
            np.savez(
                fh,
                ids=np.array(graph.ids),
                positions=graph.positions,
                edges=graph.edges,
                weights=graph.weights,
                isolated=np.array(sorted(graph.isolated), dtype=str),
                excluded=np.array(sorted(graph.excluded), dtype=str),
                heights=graph.heights if graph.heights is not None else np.zeros(0),
                table=table,
            )
        os.replace(tmp, folder / f"{key}.npz")
    except OSError:
        return


def load_cached(key: str, scan: str, source: str) -> tuple[NavGraph, np.ndarray] | None:
    """The cached graph and table for ``key``, or None."""
    path = cache_dir() / "graphs" / f"{key}.npz"
    if not path.exists():
        return None
    try:
        with np.load(path, allow_pickle=False) as z:
            heights = z["heights"]
            graph = NavGraph(
                scan=scan,
                ids=z["ids"].tolist(),
                positions=z["positions"],
                edges=z["edges"],
                weights=z["weights"],
                isolated=frozenset(z["isolated"].tolist()),
                excluded=frozenset(z["excluded"].tolist()),
                heights=heights if heights.size else None,
                source=source,
            )
            return graph, z["table"]
    except (OSError, ValueError, KeyError):
        return None
