"""Geodesic distance tables and their on-disk cache.

A table is the all-pairs shortest-path lengths of one scan's graph (scipy's csgraph Dijkstra on
the metre weights: the same numbers as the official networkx Dijkstra to ~1e-12). Tables are
cached under ``$VLNEVAL_CACHE`` (default ``~/.cache/vlneval``), keyed by the SHA-256 of the
connectivity file's bytes, so a changed file is never served a stale table.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import tempfile
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import BinaryIO

import msgspec
import numpy as np

from vlneval.graph.matterport import NavGraph
from vlneval.io.paths import env_path

__all__ = ["distance_table", "cache_dir", "write_cache_file", "CACHE_FORMAT"]

CACHE_FORMAT = 3


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
    from scipy.sparse import coo_matrix  # deferred: scipy
    from scipy.sparse.csgraph import shortest_path  # deferred: scipy

    n = graph.n
    e = graph.edges
    # Zero-length edges would vanish from a sparse matrix; a tiny weight keeps them as edges.
    w = np.where(graph.weights > 0, graph.weights, 1e-300)
    m = coo_matrix((w, (e[:, 0], e[:, 1])), shape=(n, n)).tocsr()
    d = shortest_path(m, method="D", directed=False)
    d[d < 1e-200] = 0.0
    return np.ascontiguousarray(d, dtype=np.float64)


def cache_dir() -> Path:
    """The cache folder: ``$VLNEVAL_CACHE`` or ``~/.cache/vlneval`` (``~`` expanded in both).

    Example:
        >>> from unittest import mock
        >>> with mock.patch.dict("os.environ", {"HOME": "/home/ada", "VLNEVAL_CACHE": "~/c"}):
        ...     print(cache_dir())
        /home/ada/c
    """
    return env_path("VLNEVAL_CACHE", "~/.cache/vlneval")


def file_key(raw: bytes, scan: str) -> str:
    """Cache key of a connectivity file: scan, format version and content hash."""
    digest = hashlib.sha256(raw).hexdigest()[:24]
    return f"{scan}-v{CACHE_FORMAT}-{digest}"


_MAGIC = b"VLNGRAPH"
_ARRAYS = ("positions", "edges", "weights", "heights", "table")


class _Header(msgspec.Struct):
    ids: list[str]
    isolated: list[str]
    excluded: list[str]
    arrays: list[tuple[str, str, list[int], int]]  # name, dtype, shape, byte offset
    crc32: int = -1  # of everything after the header


def _pack(graph: NavGraph, table: np.ndarray) -> list[bytes | np.ndarray]:
    """The cache file's parts: magic, header length, header, then each array's raw bytes
    (8-byte aligned)."""
    heights = graph.heights if graph.heights is not None else np.zeros(0)
    values = (graph.positions, graph.edges, graph.weights, heights, table)
    arrays = [np.ascontiguousarray(v) for v in values]
    specs, offset = [], 0
    for name, a in zip(_ARRAYS, arrays, strict=True):
        specs.append((name, a.dtype.str, list(a.shape), offset))
        offset += -(-a.nbytes // 8) * 8
    payload: list[bytes | np.ndarray] = []
    crc = 0
    for a in arrays:
        for part in (a, b"\0" * (-a.nbytes % 8)):
            payload.append(part)
            crc = zlib.crc32(part, crc)  # type: ignore[arg-type]
    header = msgspec.json.encode(
        _Header(graph.ids, sorted(graph.isolated), sorted(graph.excluded), specs, crc)
    )
    header += b" " * (-len(header) % 8)
    return [_MAGIC, len(header).to_bytes(8, "little"), header, *payload]


def write_cache_file(path: Path, write: Callable[[BinaryIO], object]) -> None:
    """Writes a cache file atomically, ``write`` filling it; a cache that cannot be written (a
    read-only or missing folder, a full disk) is simply skipped: a cache never fails the work
    it speeds up. Every cache of vlneval is written by it."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
    except OSError:
        return
    try:
        with os.fdopen(fd, "wb") as fh:
            write(fh)
        os.replace(tmp, path)
    except BaseException as exc:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        if not isinstance(exc, OSError):
            raise


def save_cached(key: str, graph: NavGraph, table: np.ndarray) -> None:
    """Writes a graph and its table with :func:`write_cache_file`."""
    path = cache_dir() / "graphs" / f"{key}.bin"
    write_cache_file(path, lambda fh: fh.writelines(_pack(graph, table)))  # type: ignore[arg-type]


def load_cached(key: str, scan: str, source: str) -> tuple[NavGraph, np.ndarray] | None:
    """The cached graph and table for ``key``, or None (absent, or not a readable cache file).

    One read and zero-copy views: a cache of 90 scans loads in a few milliseconds.
    """
    path = cache_dir() / "graphs" / f"{key}.bin"
    try:
        raw = bytearray(path.read_bytes())
        size = int.from_bytes(raw[8:16], "little")
        if raw[:8] != _MAGIC:
            return None
        head = msgspec.json.decode(raw[16 : 16 + size], type=_Header)
        base = 16 + size
        if zlib.crc32(memoryview(raw)[base:]) != head.crc32:
            return None  # damaged or cut short: computed again
        arrays = {
            name: np.frombuffer(
                raw, dtype=np.dtype(dtype), count=int(np.prod(shape)), offset=base + offset
            ).reshape(shape)
            for name, dtype, shape, offset in head.arrays
        }
        # The graph's arrays are copied out so that the buffer lives only as long as the
        # table (the store may replace the table by a view into a shared buffer).
        arrays.update({k: v.copy() for k, v in arrays.items() if k != "table"})
        n = len(head.ids)
        if arrays["table"].shape != (n, n) or arrays["positions"].shape != (n, 3):
            return None
        graph = NavGraph(
            scan=scan,
            ids=head.ids,
            positions=arrays["positions"],
            edges=arrays["edges"],
            weights=arrays["weights"],
            isolated=frozenset(head.isolated),
            excluded=frozenset(head.excluded),
            heights=arrays["heights"] if arrays["heights"].size else None,
            source=source,
        )
        return graph, arrays["table"]
    except (OSError, ValueError, KeyError, TypeError, msgspec.MsgspecError):
        return None
