"""Pre-extracted panorama features in the formats the field uses.

- R2R TSV (``ResNet-152-imagenet.tsv`` and its kin): one line per viewpoint, tab-separated
  fields ``scanId, viewpointId, image_w, image_h, vfov, features``, where ``features`` is the
  base64 of 36 × D little-endian float32 (the 36 discrete views in view-index order).
- HDF5 (HAMT / DUET and later): one dataset per viewpoint named ``<scan>_<viewpoint>`` of shape
  ``(36, D)``. Reading it needs h5py (``pip install 'vlneval[features]'``).

Files are indexed when opened and decoded one viewpoint at a time (the R2R TSV is 3 GB), with
a small cache. Every problem names the file, the viewpoint and the field.
"""

from __future__ import annotations

import base64
import binascii
from collections import OrderedDict
from collections.abc import Iterable
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from vlneval.errors import InvalidInputError, MissingDataError, VLNEvalError

__all__ = [
    "FeatureStore",
    "TsvFeatures",
    "Hdf5Features",
    "open_features",
    "check_covers",
    "TSV_FIELDS",
    "VIEWS",
]

TSV_FIELDS = ("scanId", "viewpointId", "image_w", "image_h", "vfov", "features")
VIEWS = 36
#: Decoded panoramas kept in memory, in bytes (a ResNet-152 panorama is 36 x 2048 x 4 = 295 kB).
CACHE_BYTES = 256 * 2**20


class FeatureStore(Protocol):
    """Features of every viewpoint's panorama: ``get(scan, viewpoint)`` is ``(36, dim)``."""

    source: str
    dim: int
    kind: str

    def get(self, scan: str, viewpoint: str) -> np.ndarray:
        """The read-only ``(36, dim)`` float32 features of one panorama."""
        ...

    def describe(self) -> str:
        """One line for the protocol card."""
        ...


class _Cached:
    """An LRU cache of decoded panoramas (read-only arrays), at most ``CACHE_BYTES``."""

    source: str
    dim: int
    kind: str

    def __init__(self) -> None:
        self._cache: OrderedDict[tuple[str, str], np.ndarray] = OrderedDict()
        self._bytes = 0

    def get(self, scan: str, viewpoint: str) -> np.ndarray:
        key = (scan, viewpoint)
        hit = self._cache.get(key)
        if hit is not None:
            self._cache.move_to_end(key)
            return hit
        arr = np.ascontiguousarray(self._load(scan, viewpoint), dtype=np.float32)
        arr.setflags(write=False)
        self._cache[key] = arr
        self._bytes += arr.nbytes
        while self._bytes > CACHE_BYTES and len(self._cache) > 1:
            self._bytes -= self._cache.popitem(last=False)[1].nbytes
        return arr

    def _load(self, scan: str, viewpoint: str) -> np.ndarray:
        raise NotImplementedError

    def _missing(self, scan: str, viewpoint: str) -> InvalidInputError:
        return InvalidInputError(
            f"{self.source}: no features for viewpoint {viewpoint} of scan {scan} "
            f"(key {scan}_{viewpoint}); the file covers other viewpoints"
        )

    def describe(self) -> str:
        return f"pre-extracted panorama features: {self.source} ({self.kind}, 36 x {self.dim})"


class TsvFeatures(_Cached):
    """The R2R TSV format, indexed on open, decoded on demand.

    Example:
        >>> import base64, tempfile, numpy as np
        >>> feats = np.arange(72, dtype=np.float32).reshape(36, 2)
        >>> line = "\\t".join(["sc", "vp", "640", "480", "60", base64.b64encode(feats).decode()])
        >>> path = tempfile.mkdtemp() + "/f.tsv"
        >>> _ = open(path, "w").write(line + "\\n")
        >>> store = TsvFeatures(path)
        >>> store.dim, store.get("sc", "vp")[1].tolist()
        (2, [2.0, 3.0])
    """

    kind = "R2R TSV, base64 float32"

    def __init__(self, path: str | Path) -> None:
        super().__init__()
        self.path = Path(path)
        self.source = str(self.path)
        self._offsets: dict[tuple[str, str], int] = {}
        self._index()
        first = next(iter(self._offsets))
        self.dim = int(self._load(*first).shape[1])

    def _index(self) -> None:
        if not self.path.is_file():
            raise MissingDataError(f"{self.path}: no such features file")
        with self.path.open("rb") as fh:
            offset = 0
            for lineno, line in enumerate(fh, start=1):
                parts = line.split(b"\t", 2)
                if len(parts) < 3 and line.strip():
                    raise InvalidInputError(
                        f"{self.source}: line {lineno}: expected {len(TSV_FIELDS)} tab-separated "
                        f"fields ({', '.join(TSV_FIELDS)})"
                    )
                if line.strip():
                    key = (parts[0].decode("utf-8", "replace"), parts[1].decode("utf-8", "replace"))
                    if key in self._offsets:
                        raise InvalidInputError(
                            f"{self.source}: line {lineno}: duplicate viewpoint {key[1]} of scan {key[0]}"
                        )
                    self._offsets[key] = offset
                offset += len(line)
        if not self._offsets:
            raise InvalidInputError(f"{self.source}: the features file is empty")

    def _load(self, scan: str, viewpoint: str) -> np.ndarray:
        offset = self._offsets.get((scan, viewpoint))
        if offset is None:
            raise self._missing(scan, viewpoint)
        with self.path.open("rb") as fh:
            fh.seek(offset)
            line = fh.readline().rstrip(b"\r\n")
        return self._decode(line.split(b"\t"), scan, viewpoint)

    def _decode(self, fields: list[bytes], scan: str, viewpoint: str) -> np.ndarray:
        where = f"{self.source}: scan {scan} viewpoint {viewpoint}"
        if len(fields) != len(TSV_FIELDS):
            raise InvalidInputError(
                f"{where}: expected {len(TSV_FIELDS)} fields ({', '.join(TSV_FIELDS)}), got {len(fields)}"
            )
        for name, value in zip(TSV_FIELDS[2:5], fields[2:5], strict=True):
            try:
                float(value)
            except ValueError:
                raise InvalidInputError(
                    f"{where}: field {name}: not a number: {value[:20]!r}"
                ) from None
        try:
            raw = base64.b64decode(fields[5], validate=True)
        except (binascii.Error, ValueError) as exc:
            raise InvalidInputError(f"{where}: field features: not valid base64 ({exc})") from None
        if len(raw) == 0 or len(raw) % (VIEWS * 4):
            raise InvalidInputError(
                f"{where}: field features: {len(raw)} bytes is not 36 views of float32 values"
            )
        arr = np.frombuffer(raw, dtype="<f4").reshape(VIEWS, -1)
        if hasattr(self, "dim") and arr.shape[1] != self.dim:
            raise InvalidInputError(
                f"{where}: field features: {arr.shape[1]} values per view, other viewpoints have {self.dim}"
            )
        return arr

    def keys(self) -> list[tuple[str, str]]:
        """Every ``(scan, viewpoint)`` in the file."""
        return list(self._offsets)

    def covers(self, scan: str, viewpoint: str) -> bool:
        """Whether the file has the viewpoint's panorama (from the index: nothing is read)."""
        return (scan, viewpoint) in self._offsets


class Hdf5Features(_Cached):
    """HDF5 features keyed by ``<scan>_<viewpoint>`` (needs h5py)."""

    kind = "HDF5, one (36, D) dataset per scan_viewpoint"

    def __init__(self, path: str | Path) -> None:
        super().__init__()
        h5py = _import_h5py()
        self.path = Path(path)
        self.source = str(self.path)
        if not self.path.is_file():
            raise MissingDataError(f"{self.path}: no such features file")
        try:
            self._file: Any = h5py.File(self.path, "r")
        except OSError as exc:
            raise InvalidInputError(f"{self.source}: not a readable HDF5 file ({exc})") from None
        keys = list(self._file.keys())
        if not keys:
            raise InvalidInputError(f"{self.source}: the features file holds no dataset")
        self._keys = set(keys)
        self.dim = int(self._check(keys[0], keys[0]).shape[1])

    def covers(self, scan: str, viewpoint: str) -> bool:
        """Whether the file has the viewpoint's dataset (from its key listing)."""
        return f"{scan}_{viewpoint}" in self._keys

    def _check(self, key: str, label: str) -> np.ndarray:
        arr = np.asarray(self._file[key][()])
        if arr.ndim != 2 or arr.shape[0] != VIEWS:
            raise InvalidInputError(
                f"{self.source}: {label}: expected a (36, D) dataset, got shape {arr.shape}"
            )
        return arr

    def _load(self, scan: str, viewpoint: str) -> np.ndarray:
        key = f"{scan}_{viewpoint}"
        if key not in self._file:
            raise self._missing(scan, viewpoint)
        arr = self._check(key, key)
        if arr.shape[1] != self.dim:
            raise InvalidInputError(
                f"{self.source}: {key}: {arr.shape[1]} values per view, other viewpoints have {self.dim}"
            )
        return arr

    def close(self) -> None:
        """Closes the file."""
        self._file.close()


def _import_h5py() -> Any:
    try:
        import h5py  # deferred: h5py
    except ImportError:
        raise VLNEvalError(
            "reading HDF5 features needs h5py, which is not installed: "
            "pip install 'vlneval[features]'"
        ) from None
    return h5py


def check_covers(
    store: FeatureStore, viewpoints: Iterable[tuple[str, str]], episodes: Iterable[tuple[str, str]]
) -> None:
    """Refuses ``store`` unless it has every ``(scan, viewpoint)`` of ``viewpoints`` (those a
    run can reach), before the run's first step rather than when one is reached. The error
    names the file, the count, the first missing viewpoint and the ``(id, scan)`` episodes in
    its scan. A store without ``covers(scan, viewpoint)`` (a user's own) is not checked.

    Example:
        >>> import base64, tempfile, numpy as np
        >>> line = "\\t".join(["sc", "a", "640", "480", "60", base64.b64encode(bytes(144)).decode()])
        >>> path = tempfile.mkdtemp() + "/f.tsv"
        >>> _ = open(path, "w").write(line + "\\n")
        >>> check_covers(TsvFeatures(path), [("sc", "a"), ("sc", "b")], [("7_0", "sc")])
        Traceback (most recent call last):
        ...
        vlneval.errors.InvalidInputError: ...f.tsv: no features for 1 of the 2 viewpoints the run can reach (every viewpoint of its episodes' scans): viewpoint b of scan sc (key sc_b) is missing, and episode 7_0 is in that scan; checked before the first step
    """
    covers = getattr(store, "covers", None)
    if covers is None:
        return
    total, missing = 0, []
    for scan, viewpoint in viewpoints:
        total += 1
        if not covers(scan, viewpoint):
            missing.append((scan, viewpoint))
    if not missing:
        return
    scan, viewpoint = missing[0]
    inside = [eid for eid, s in episodes if s == scan]
    n = len(inside)
    where = f"episode {inside[0]} is" if n == 1 else f"episodes {inside[0]} and {n - 1} more are"
    raise InvalidInputError(
        f"{store.source}: no features for {len(missing)} of the {total} viewpoints the run can "
        f"reach (every viewpoint of its episodes' scans): viewpoint {viewpoint} of scan {scan} "
        f"(key {scan}_{viewpoint}) is missing, and {where} in that scan; "
        "checked before the first step"
    )


def open_features(path: str | Path) -> TsvFeatures | Hdf5Features:
    """Opens a features file by its suffix: ``.tsv`` (R2R) or ``.h5`` / ``.hdf5``."""
    p = Path(path)
    suffix = p.suffix.lower()
    if suffix == ".tsv":
        return TsvFeatures(p)
    if suffix in (".h5", ".hdf5", ".hdf"):
        return Hdf5Features(p)
    raise InvalidInputError(
        f"{p}: unknown features format {suffix or '(no suffix)'}: expected .tsv (R2R: scanId, "
        "viewpointId, image_w, image_h, vfov, base64 features) or .h5/.hdf5 (scan_viewpoint keys)"
    )
