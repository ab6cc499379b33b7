"""The Touchdown street graph (StreetLearn panoramas of Manhattan), read as its scorers read it.

``nodes.txt``: one line ``panoid,pano_yaw_angle,lat,lng`` per panorama; ``links.txt``: one line
``start_panoid,heading,end_panoid`` per directed link, keyed by its heading in whole degrees (the
simulator, ``base_navigator.py`` of lil-lab/touchdown, moves along these links). The scorers of
the community (VLN-Transformer, map2seq) measure on the *undirected* graph of the links, in hops:
a panorama is one hop from another when a link joins them in either direction.

The graph has 29,641 panoramas: an all-pairs table would need 7 GB, so distances are computed
per query with a breadth-first search, bidirectional for a single pair (it only explores the two
balls of half the distance) and from one source for a full row (cached per source). The two
searches are numba kernels (:mod:`vlneval.graph._street_bfs`, imported on the first query): in
numpy or scipy the 800 pair queries of the dev split take seconds; compiled, under a millisecond.
"""

from __future__ import annotations

import functools
from collections import OrderedDict
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from vlneval._compiling import first_call
from vlneval.errors import InvalidInputError, MissingDataError, ProblemCollector
from vlneval.io import clip, read_bytes

__all__ = ["StreetGraph", "load_street_graph", "parse_street_graph", "street_graph"]

NODE_FILES = ("nodes.txt", "nodes.txt.gz")
LINK_FILES = ("links.txt", "links.txt.gz")
ROW_CACHE = 64  # rows of hop counts kept per graph (237 KB each on the Touchdown graph)


@dataclass(eq=False)
class StreetGraph:
    """A street graph: panoramas and their directed, heading-keyed links.

    Attributes:
        ids: panorama ids, in ``nodes.txt`` order.
        yaw: ``(n,)`` int, each panorama's yaw angle in degrees (``pano_yaw_angle``).
        latlng: ``(n, 2)`` latitude and longitude in degrees.
        link_src, link_dst: ``(e,)`` int32, the directed links as node indices, file order.
        link_heading: ``(e,)`` int, the heading of each link in degrees.
        source: the folder (or text) the graph came from.
        indptr, indices: the undirected adjacency in CSR form (sorted neighbours per node).
    """

    ids: list[str]
    yaw: np.ndarray
    latlng: np.ndarray
    link_src: np.ndarray
    link_dst: np.ndarray
    link_heading: np.ndarray
    source: str = ""
    index: dict[str, int] = field(init=False, repr=False)
    indptr: np.ndarray = field(init=False, repr=False)
    indices: np.ndarray = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self.index = {p: i for i, p in enumerate(self.ids)}
        n = len(self.ids)
        a = np.concatenate([self.link_src, self.link_dst]).astype(np.int64)
        b = np.concatenate([self.link_dst, self.link_src]).astype(np.int64)
        keys = np.unique(a * n + b)  # sorted, both directions, each undirected pair once per side
        self._keys = keys
        src = (keys // n).astype(np.int64)
        self.indices = np.ascontiguousarray(keys % n, dtype=np.int32)
        self.indptr = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(np.bincount(src, minlength=n), out=self.indptr[1:])
        self._rows: OrderedDict[int, np.ndarray] = OrderedDict()

    @property
    def n(self) -> int:
        """Number of panoramas."""
        return len(self.ids)

    def describe_missing(self, panoid: str) -> str:
        """Why ``panoid`` is not a node, phrased for an error message (a long id clipped)."""
        return f"panorama {clip(panoid)} is not in the Touchdown street graph ({self.source})"

    def neighbours(self, node: int) -> np.ndarray:
        """Nodes one hop from ``node`` (a link in either direction), ascending."""
        return self.indices[self.indptr[node] : self.indptr[node + 1]]

    def links(self, node: int) -> dict[int, int]:
        """The simulator's view of ``node``: ``{heading in degrees: next node}`` (outgoing links).

        Example:
            >>> g = parse_street_graph(["a,0,40.0,-73.0", "b,0,40.001,-73.0"], ["a,0,b", "b,180,a"])
            >>> g.links(0), g.links(1)
            ({0: 1}, {180: 0})
        """
        rows = np.flatnonzero(self.link_src == node)
        return {int(self.link_heading[k]): int(self.link_dst[k]) for k in rows}

    def adjacent(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        """Elementwise: ``a[k]`` and ``b[k]`` are one hop apart (a link in either direction).

        Example:
            >>> g = parse_street_graph(["a,0,40,-73", "b,0,40,-73", "c,0,40,-73"], ["a,0,b", "c,0,b"])
            >>> g.adjacent(np.array([0, 1, 0]), np.array([1, 2, 2])).tolist()
            [True, True, False]
        """
        query = np.asarray(a, dtype=np.int64) * self.n + np.asarray(b, dtype=np.int64)
        pos = np.searchsorted(self._keys, query)
        pos = np.minimum(pos, len(self._keys) - 1)
        return (
            np.asarray(self._keys[pos] == query) if len(self._keys) else np.zeros(len(query), bool)
        )

    def hops(self, sources: np.ndarray, targets: np.ndarray) -> np.ndarray:
        """Hop distances ``d(sources[k], targets[k])`` on the undirected graph (``inf`` when
        unreachable), one bidirectional breadth-first search per pair.

        Example:
            >>> g = parse_street_graph([f"{c},0,40,-73" for c in "abcde"],
            ...                        ["a,0,b", "b,0,c", "c,0,d"])
            >>> g.hops(np.array([0, 0, 3, 0]), np.array([3, 0, 1, 4])).tolist()
            [3.0, 0.0, 2.0, inf]
        """
        src = np.ascontiguousarray(sources, dtype=np.int32)
        dst = np.ascontiguousarray(targets, dtype=np.int32)
        if src.shape != dst.shape:
            raise InvalidInputError("hops: sources and targets must have the same length")
        self._check_nodes(src)
        self._check_nodes(dst)
        from vlneval.graph import _street_bfs  # deferred: numba (compiled on the first query)

        with first_call("the street graph's breadth-first search"):
            return _street_bfs.pair_hops(self.indptr, self.indices, src, dst)  # type: ignore[no-any-return]

    def hops_from(self, source: int) -> np.ndarray:
        """Hop distance from ``source`` to every node (``inf`` when unreachable), cached.

        An environment asks an episode's goal row once and reads it at every step.

        Example:
            >>> g = parse_street_graph([f"{c},0,40,-73" for c in "abc"], ["a,0,b", "c,0,b"])
            >>> g.hops_from(0).tolist()
            [0.0, 1.0, 2.0]
        """
        self._check_nodes(np.array([source]))
        row = self._rows.get(source)
        if row is None:
            from vlneval.graph import _street_bfs  # deferred: numba (compiled on the first query)

            with first_call("the street graph's breadth-first search (rows)"):
                row = _street_bfs.row_hops(self.indptr, self.indices, np.int32(source))
            row.setflags(write=False)
            self._rows[source] = row
            if len(self._rows) > ROW_CACHE:
                self._rows.popitem(last=False)
        else:
            self._rows.move_to_end(source)
        return row

    def _check_nodes(self, nodes: np.ndarray) -> None:
        if nodes.size and (int(nodes.min()) < 0 or int(nodes.max()) >= self.n):
            raise InvalidInputError(f"node index out of range for a street graph of {self.n} nodes")


def _rows(lines: list[str]) -> Iterator[tuple[int, str, list[str]]]:
    """``(line number, stripped line, comma-separated fields)`` of each non-blank line."""
    for k, line in enumerate(lines, start=1):
        if stripped := line.strip():
            yield k, stripped, stripped.split(",")


def _parse_nodes(
    lines: list[str], pc: ProblemCollector
) -> tuple[list[str], list[int], list[tuple[float, float]]]:
    ids: list[str] = []
    yaw: list[int] = []
    latlng: list[tuple[float, float]] = []
    seen: set[str] = set()
    for k, line, parts in _rows(lines):
        if len(parts) != 4:
            pc.add(
                f"expected panoid,pano_yaw_angle,lat,lng; got {line!r:.80}", field=f"nodes line {k}"
            )
            continue
        try:
            y, lat, lng = int(parts[1]), float(parts[2]), float(parts[3])
        except ValueError:
            pc.add(
                f"yaw must be an integer and lat/lng numbers; got {line!r:.80}",
                field=f"nodes line {k}",
            )
            continue
        if parts[0] in seen:
            pc.add(f"panorama {parts[0]} is listed twice", field=f"nodes line {k}")
            continue
        seen.add(parts[0])
        ids.append(parts[0])
        yaw.append(y)
        latlng.append((lat, lng))
    return ids, yaw, latlng


def _parse_links(lines: list[str], index: dict[str, int], pc: ProblemCollector) -> np.ndarray:
    rows: list[tuple[int, int, int]] = []
    keyed: set[tuple[int, int]] = set()
    for k, line, parts in _rows(lines):
        where = f"links line {k}"
        if len(parts) != 3:
            pc.add(f"expected start_panoid,heading,end_panoid; got {line!r:.80}", field=where)
            continue
        try:
            heading = int(parts[1])
        except ValueError:
            pc.add(f"heading must be an integer number of degrees; got {parts[1]!r}", field=where)
            continue
        missing = [p for p in (parts[0], parts[2]) if p not in index]
        if missing:
            pc.add(f"panorama {missing[0]} is not in nodes.txt", field=where)
            continue
        a, b = index[parts[0]], index[parts[2]]
        if a == b:
            pc.add(f"link from panorama {parts[0]} to itself", field=where)
            continue
        if (a, heading) in keyed:
            pc.add(f"panorama {parts[0]} has two links with heading {heading}", field=where)
            continue
        keyed.add((a, heading))
        rows.append((a, heading, b))
    return np.array(rows, dtype=np.int64).reshape(-1, 3)


def parse_street_graph(
    node_lines: list[str], link_lines: list[str], *, source: str = "<memory>"
) -> StreetGraph:
    """Builds a :class:`StreetGraph` from the lines of ``nodes.txt`` and ``links.txt``.

    Raises:
        InvalidInputError: every malformed line (file and line number named), unknown panoramas
            in links, duplicate panoramas, self-links and two links of one panorama with the same
            heading (the simulator keys links by heading, so one would hide the other).

    Example:
        >>> g = parse_street_graph(["a,10,40.0,-73.0", "b,20,40.1,-73.1"], ["a,90,b", "b,270,a"])
        >>> g.ids, g.neighbours(0).tolist(), g.yaw.tolist()
        (['a', 'b'], [1], [10, 20])
    """
    pc = ProblemCollector(source)
    ids, yaw, latlng = _parse_nodes(node_lines, pc)
    index = {p: i for i, p in enumerate(ids)}
    links = _parse_links(link_lines, index, pc)
    if not ids:
        pc.add("nodes.txt holds no panoramas")
    pc.raise_if_any()
    return StreetGraph(
        ids=ids,
        yaw=np.asarray(yaw, dtype=np.int16),
        latlng=np.asarray(latlng, dtype=np.float64).reshape(-1, 2),
        link_src=np.ascontiguousarray(links[:, 0], dtype=np.int32),
        link_dst=np.ascontiguousarray(links[:, 2], dtype=np.int32),
        link_heading=np.ascontiguousarray(links[:, 1], dtype=np.int16),
        source=source,
    )


def _read_lines(folder: Path, names: tuple[str, ...]) -> list[str]:
    for name in names:
        path = folder / name
        if path.exists():
            raw = read_bytes(path)
            try:
                return raw.decode("utf-8").splitlines()
            except UnicodeDecodeError as exc:
                raise InvalidInputError(f"{path}: not UTF-8 text (byte {exc.start})") from exc
    raise MissingDataError(
        f"no {' or '.join(names)} in {folder}; the Touchdown graph folder holds nodes.txt and "
        "links.txt (pass --graphs DIR or --data-root DIR)"
    )


def load_street_graph(folder: str | Path) -> StreetGraph:
    """Reads ``nodes.txt`` and ``links.txt`` (each optionally ``.gz``) from ``folder``.

    Raises:
        MissingDataError: the folder or a file is missing.
        InvalidInputError: a malformed file (see :func:`parse_street_graph`).
    """
    folder = Path(folder)
    if not folder.is_dir():
        raise MissingDataError(f"Touchdown graph folder {folder} does not exist")
    nodes = _read_lines(folder, NODE_FILES)
    links = _read_lines(folder, LINK_FILES)
    return parse_street_graph(nodes, links, source=str(folder))


@functools.lru_cache(maxsize=4)
def _cached(folder: str, stamp: tuple[int, ...]) -> StreetGraph:
    return load_street_graph(folder)


def street_graph(folder: str | Path) -> StreetGraph:
    """:func:`load_street_graph`, cached per folder for the life of the process (a changed file
    is read again: the cache key includes the files' modification times and sizes)."""
    folder = Path(folder).resolve()
    stamp: list[int] = []
    for name in NODE_FILES + LINK_FILES:
        p = folder / name
        if p.exists():
            st = p.stat()
            stamp += [st.st_mtime_ns, st.st_size]
    return _cached(str(folder), tuple(stamp))
