"""REVERIE object boxes: which objects each viewpoint sees, in which views, with which 2-D box.

Three layouts are read, all with the same per-object record
``{"name": str, "visible_pos": [view, ...], "bbox2d": [[x, y, w, h], ...]}``:

- a folder ``BBox/`` of ``<scan>_<viewpoint>.json`` files, each ``{viewpoint: {objId: record}}``
  (the REVERIE repository's ``tasks/REVERIE/data/BBox``, the v1 boxes);
- the same folder as a ``.tar.gz`` (read without unpacking);
- one JSON file ``{"<scan>_<viewpoint>": {objId: record}}`` (``BBoxes.json``, the layout of the
  v2 boxes and of VLN-DUET's annotations).

Views are the simulator's 36 discrete views (``12·elevation_index + heading_index``). An object
is *visible* from a viewpoint when its ``visible_pos`` is non-empty; the files also list objects
near the viewpoint that no view sees (empty lists), which the official scorer ignores.
"""

from __future__ import annotations

import contextlib
import hashlib
import tarfile
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, Literal

import msgspec

from vlneval.errors import MissingDataError, ProblemCollector
from vlneval.graph.distances import cache_dir, write_cache_file
from vlneval.io import decode_json, gc_paused, read_bytes

__all__ = ["ObjectView", "ObjectBoxes", "load_boxes", "find_boxes"]


@dataclass(frozen=True, slots=True)
class ObjectView:
    """One object as seen from one viewpoint.

    Attributes:
        object_id: the object id (a string, as in the files).
        name: its category name (``#`` joins words, e.g. ``bath#cabinet``).
        views: the discrete views (0..35) that see it; empty when none does.
        boxes: one ``(x, y, w, h)`` pixel box per view, in the order of ``views``.
    """

    object_id: str
    name: str
    views: tuple[int, ...]
    boxes: tuple[tuple[float, float, float, float], ...]


@dataclass
class ObjectBoxes:
    """Every viewpoint's objects, indexed by scan and viewpoint.

    Attributes:
        source: the file or folder read.
        layout: ``folder``, ``tar.gz`` or ``json``.
        version: the release the boxes belong to (``v1``, ``v2``) or ``unknown``.
        by_viewpoint: ``(scan, viewpoint) -> {objId: ObjectView}``.
    """

    source: str
    layout: str
    version: str
    by_viewpoint: dict[tuple[str, str], dict[str, ObjectView]]
    _seen_from: dict[tuple[str, str], frozenset[str]] | None = field(default=None, repr=False)

    def objects(self, scan: str, viewpoint: str) -> dict[str, ObjectView]:
        """The objects listed at a viewpoint (empty when the viewpoint has no file)."""
        return self.by_viewpoint.get((scan, viewpoint), {})

    def visible_objects(self, scan: str, viewpoint: str) -> list[ObjectView]:
        """The objects some view of the viewpoint sees, in file order."""
        return [o for o in self.objects(scan, viewpoint).values() if o.views]

    def seen_from(self, scan: str, object_id: str) -> frozenset[str]:
        """The viewpoints from which ``object_id`` is visible (its goal viewpoints)."""
        if self._seen_from is None:
            index: dict[tuple[str, str], set[str]] = {}
            for (s, vp), objs in self.by_viewpoint.items():
                for oid, o in objs.items():
                    if o.views:
                        index.setdefault((s, oid), set()).add(vp)
            self._seen_from = {k: frozenset(v) for k, v in index.items()}
        return self._seen_from.get((scan, str(object_id)), frozenset())

    def describe(self) -> dict[str, Any]:
        """What the protocol card records about the boxes."""
        return {
            "version": self.version,
            "source": self.source,
            "layout": self.layout,
            "viewpoints": len(self.by_viewpoint),
            "objects": sum(len(v) for v in self.by_viewpoint.values()),
        }


def _record(oid: str, rec: Any, where: str, pc: ProblemCollector) -> ObjectView | None:
    if not isinstance(rec, dict):
        pc.add("expected an object record {name, visible_pos, bbox2d}", field=where)
        return None
    views, boxes = rec.get("visible_pos", []), rec.get("bbox2d", [])
    if not isinstance(views, list) or not all(type(v) is int and 0 <= v < 36 for v in views):
        pc.add("visible_pos must be a list of view indices 0..35", field=f"{where}.visible_pos")
        return None
    ok_boxes = isinstance(boxes, list) and all(
        isinstance(b, list) and len(b) == 4 and all(type(x) in (int, float) for x in b)
        for b in boxes
    )
    if not ok_boxes or len(boxes) != len(views):
        pc.add(
            f"bbox2d must hold one [x, y, w, h] per view of visible_pos ({len(views)})",
            field=f"{where}.bbox2d",
        )
        return None
    name = rec.get("name", "")
    return ObjectView(
        oid,
        name if isinstance(name, str) else str(name),
        tuple(views),
        tuple((float(b[0]), float(b[1]), float(b[2]), float(b[3])) for b in boxes),
    )


def _add_viewpoint(
    out: dict[tuple[str, str], dict[str, ObjectView]],
    scan: str,
    viewpoint: str,
    objs: Any,
    where: str,
    pc: ProblemCollector,
) -> None:
    if not isinstance(objs, dict):
        pc.add("expected {objId: record}", field=where)
        return
    table: dict[str, ObjectView] = {}
    for oid, rec in objs.items():
        view = _record(str(oid), rec, f"{where}.{oid}", pc)
        if view is not None:
            table[str(oid)] = view
    out[(scan, viewpoint)] = table


def _typed_decoder() -> Any:
    class _Rec(msgspec.Struct):
        visible_pos: list[int]
        bbox2d: list[tuple[float, float, float, float]]
        name: str = ""

    return msgspec.json.Decoder(dict[str, dict[str, _Rec]])


def _fast_views(objs: dict[str, Any]) -> dict[str, ObjectView] | None:
    table: dict[str, ObjectView] = {}
    for oid, r in objs.items():
        views = r.visible_pos
        if len(views) != len(r.bbox2d) or any(not 0 <= v < 36 for v in views):
            return None
        table[oid] = ObjectView(oid, r.name, tuple(views), tuple(r.bbox2d))
    return table


def _add_file(
    out: dict[tuple[str, str], dict[str, ObjectView]],
    name: str,
    raw: bytes,
    pc: ProblemCollector,
    decoder: Any,
) -> None:
    stem = Path(name).name[: -len(".json")]
    if "_" not in stem:
        pc.add("file name must be <scan>_<viewpoint>.json", field=name)
        return
    scan, viewpoint = stem.split("_", 1)
    try:
        typed = decoder.decode(raw)
    except (msgspec.DecodeError, msgspec.ValidationError):
        typed = None
    if typed is not None and list(typed) == [viewpoint]:
        table = _fast_views(typed[viewpoint])
        if table is not None:
            out[(scan, viewpoint)] = table
            return
    value = decode_json(raw, name)  # the slow path names the problem
    if not isinstance(value, dict) or list(value) != [viewpoint]:
        keys = list(value)[:3] if isinstance(value, dict) else type(value).__name__
        pc.add(f"expected {{{viewpoint!r}: {{objId: record}}}}, got {keys}", field=name)
        return
    _add_viewpoint(out, scan, viewpoint, value[viewpoint], name, pc)


def _read_files(
    files: Iterable[tuple[str, bytes]], pc: ProblemCollector
) -> dict[tuple[str, str], dict[str, ObjectView]]:
    """The boxes of ``(name, content)`` pairs of ``<scan>_<viewpoint>.json`` files."""
    out: dict[tuple[str, str], dict[str, ObjectView]] = {}
    decoder = _typed_decoder()
    for name, raw in files:
        _add_file(out, name, raw, pc, decoder)
    return out


def _tar_files(path: Path, pc: ProblemCollector) -> Iterator[tuple[str, bytes]]:
    """The ``.json`` members of a tar archive, read without unpacking it."""
    try:
        with tarfile.open(path, "r:*") as tf:
            for member in tf:
                json_file = member.isfile() and member.name.endswith(".json")
                fh = tf.extractfile(member) if json_file else None
                if fh is not None:
                    yield member.name, fh.read()
    except (tarfile.TarError, OSError, EOFError) as exc:
        pc.add(f"not a readable tar archive ({exc})")


def _read_json(path: Path, pc: ProblemCollector) -> dict[tuple[str, str], dict[str, ObjectView]]:
    raw = read_bytes(path)
    out: dict[tuple[str, str], dict[str, ObjectView]] = {}
    try:
        typed = _typed_decoder().decode(raw)
    except (msgspec.DecodeError, msgspec.ValidationError):
        typed = {}
    for key, objs in typed.items():
        table = _fast_views(objs) if "_" in key else None
        if table is None:
            break
        scan, viewpoint = key.split("_", 1)
        out[(scan, viewpoint)] = table
    else:
        if typed:
            return out
    out.clear()
    value = decode_json(raw, str(path))  # the slow path names the problem
    if not isinstance(value, dict):
        pc.add('expected {"<scan>_<viewpoint>": {objId: record}}')
        return out
    for key, objs in value.items():
        if "_" not in key:
            pc.add("keys must be <scan>_<viewpoint>", field=str(key))
            continue
        scan, viewpoint = key.split("_", 1)
        _add_viewpoint(out, scan, viewpoint, objs, key, pc)
    return out


def load_boxes(path: str | Path, *, version: str = "unknown") -> ObjectBoxes:
    """Reads REVERIE object boxes from a folder, a ``.tar.gz`` of it, or one JSON file.

    Args:
        path: ``BBox/``, ``BBox.tar.gz`` or ``BBoxes.json``.
        version: the release the boxes belong to, recorded on the protocol card.

    Raises:
        MissingDataError: ``path`` does not exist.
        InvalidInputError: malformed records, each named by file and field.

    Example:
        >>> import json, pathlib, tempfile
        >>> d = pathlib.Path(tempfile.mkdtemp())
        >>> rec = {"vp1": {"7": {"name": "sofa", "visible_pos": [12], "bbox2d": [[1, 2, 3, 4]]}}}
        >>> _ = (d / "scanA_vp1.json").write_text(json.dumps(rec))
        >>> boxes = load_boxes(d, version="v1")
        >>> [o.object_id for o in boxes.visible_objects("scanA", "vp1")], boxes.seen_from("scanA", "7")
        (['7'], frozenset({'vp1'}))
    """
    path = Path(path)
    if not path.exists():
        raise MissingDataError(f"{path}: no such object-box file or folder")
    if path.is_dir():  # a folder's files may change without changing it: read it each time
        return _load(path, version)
    stat = path.stat()
    key = (str(path.resolve()), stat.st_mtime_ns, stat.st_size, version)
    cached = _CACHE.get(key)
    if cached is not None:
        return cached
    boxes = _parsed(path, version)
    if len(_CACHE) >= _CACHE_SIZE:
        _CACHE.pop(next(iter(_CACHE)))
    _CACHE[key] = boxes
    return boxes


#: Box files (tar.gz, json) already read, by (path, mtime, size, version): parsed once.
_CACHE: dict[tuple[str, int, int, str], ObjectBoxes] = {}
_CACHE_SIZE = 4
#: The layout of the parsed boxes kept on disk; a new layout is a new cache key.
_FORMAT = 1
#: Its shape: a known layout and at least one viewpoint (anything else is a damaged copy).
_PARSED = msgspec.msgpack.Decoder(
    tuple[
        Literal["folder", "tar.gz", "json"],
        Annotated[list[tuple[str, str, dict[str, ObjectView]]], msgspec.Meta(min_length=1)],
    ]
)


def _parsed(path: Path, version: str) -> ObjectBoxes:
    """The boxes of a file, from the parsed copy kept in the vlneval cache (``reverie/`` in
    ``$VLNEVAL_CACHE``, keyed by the SHA-256 of the file's bytes) when there is one: parsing
    the v1 tarball's 10,567 members costs most of a second in every process, its copy a fifth
    of that. A copy that cannot be read or written is passed over."""
    digest = hashlib.sha256(path.read_bytes()).hexdigest()[:32]
    kept = cache_dir() / "reverie" / f"boxes-v{_FORMAT}-{digest}.msgpack"
    with contextlib.suppress(OSError, msgspec.MsgspecError), gc_paused():
        layout, rows = _PARSED.decode(kept.read_bytes())
        return ObjectBoxes(str(path), layout, version, {(s, v): o for s, v, o in rows})
    boxes = _load(path, version)
    rows = [(s, v, objs) for (s, v), objs in boxes.by_viewpoint.items()]
    write_cache_file(kept, lambda fh: fh.write(msgspec.msgpack.encode((boxes.layout, rows))))
    return boxes


def _load(path: Path, version: str) -> ObjectBoxes:
    pc = ProblemCollector(str(path))
    if path.is_dir():
        files = ((f.name, f.read_bytes()) for f in sorted(path.glob("*.json")))
        layout, table = "folder", _read_files(files, pc)
    elif path.name.endswith((".tar.gz", ".tgz", ".tar")):
        layout, table = "tar.gz", _read_files(_tar_files(path, pc), pc)
    else:
        layout, table = "json", _read_json(path, pc)
    if not table and not pc.problems:
        pc.add("holds no object boxes")
    pc.raise_if_any()
    return ObjectBoxes(str(path), layout, version, table)


#: Where each release's boxes are looked for under ``<root>/reverie``, in order.
_CANDIDATES = {
    "v2": ("data_v2/BBoxes.json", "data_v2/BBox", "data_v2/BBox.tar.gz"),
    "v1": ("BBoxes.json", "BBox", "BBox.tar.gz", "data/BBox", "bbox"),
}


def find_boxes(folder: Path, version: str) -> tuple[Path, str] | None:
    """The boxes of ``version`` under a REVERIE folder, falling back to v1 boxes for v2.

    Returns:
        ``(path, version_of_the_boxes_found)`` or None when there are none.
    """
    order = ("v2", "v1") if version == "v2" else ("v1",)
    for v in order:
        for rel in _CANDIDATES[v]:
            p = folder / rel
            if p.exists():
                return p, v
    return None
