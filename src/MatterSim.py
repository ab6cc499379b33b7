"""The Matterport3D simulator's Python API, graph-only: ``import MatterSim`` without the C++ build.

Almost every R2R-family code base (the simulator's own ``tasks/R2R``, R2R-EnvDrop,
Recurrent-VLN-BERT, VLN-SIG, REVERIE, HAMT, DUET, ScaleVLN, NaviLLM, MapGPT) runs the simulator
with rendering off and pre-extracted image features, so all it needs is the navigation graph.
This module offers the same ``Simulator``, ``SimState`` and ``ViewPoint`` as the compiled
``MatterSim`` extension of peteanderson80/Matterport3DSimulator, computed from the connectivity
files alone:

* both public APIs, told apart by how they are called: v0.1 (``init()``, scalar ``newEpisode`` /
  ``makeAction``, ``getState()`` returning one snapshot, ``ViewPoint.point``) and master
  (``initialize()``, list arguments and batches, ``getState()`` returning the live states,
  ``ViewPoint.x/y/z``); ``init()`` or ``initialize()``, else the first ``newEpisode``, fixes the
  API, and in master mode scalar ``newEpisode`` arguments are a TypeError, as in the original;
* the simulator's rules exactly: heading wrap and 30° snapping (C ``lround``), elevation snapping
  and saturation at ±30°, elevation limits in continuous mode, the field-of-view rule with the
  camera's resolution and vertical FOV, restricted navigation, float32 positions and geometry,
  the file index ``ix``, the candidate order, the 8 included viewpoints with no neighbour
  (their list is just the location), and the error types and messages of the original;
* graphs read lazily per scan from ``<scan>_connectivity.json`` or ``.json.gz`` and cached for
  the process, so that constructing a simulator costs nothing.

Where the graphs are: ``setNavGraphPath(folder)`` if called; else ``./connectivity`` (the
original's default) when that folder exists; else ``$VLNEVAL_DATA/matterport3d/connectivity``
when the user set ``VLNEVAL_DATA``; else a ValueError naming ``./connectivity`` and suggesting
both (no other folder is searched). Rendering is out of scope: with rendering off ``rgb``/``depth`` are
zero images of the camera's size (as in the original); with rendering on, reading them raises
NotImplementedError (use the real simulator to render).

A real build wins: when a compiled ``MatterSim`` extension is on ``sys.path`` (clients do
``sys.path.append('build')``), importing this module loads that extension instead.
``VLNEVAL_MATTERSIM=shim`` (or its older alias ``vlneval``) forces this module, ``real`` requires
the extension, ``auto`` (the default) prefers it. ``MatterSim.__vlneval__`` says which one loaded (``"vlneval"`` or ``"real"``).

Known departures (no client depends on them): the original rewrites the chosen ``ViewPoint``
object itself into the new location (so an old ``navigableLocations`` list sees its ``rel_*``
become 0); here locations and candidates are shared immutable objects and the new location is a
separate object. ``rel_heading`` is the double-precision ``atan2`` the simulator's README shows;
builds where ``atan2`` resolves to the float overload differ by about 1e-8 rad. Graphs are
cached per (folder, scan) instead of one process-wide graph fixed by the first simulator.
With discretised angles, a NaN heading (or turn) and an infinite absolute heading are a
ValueError raised before any slot changes; the C++ ``lround``s them into a view that depends on
the build.

Example (a real scan, with the graphs at ``./connectivity``)::

    import MatterSim, math
    sim = MatterSim.Simulator()
    sim.setRenderingEnabled(False)
    sim.setDiscretizedViewingAngles(True)
    sim.setCameraResolution(640, 480)
    sim.setCameraVFOV(math.radians(60))
    sim.initialize()
    sim.newEpisode(["2t7WUuJeko7"], ["1e6b606b44df4a6086c0f97e826d4d15"], [0], [0])
    state = sim.getState()[0]
    [v.viewpointId for v in state.navigableLocations]
"""

from __future__ import annotations

import importlib.machinery
import math
import os
import sys
import time
import warnings

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: importing typing would double the import time
    from typing import Any

__all__ = ["Simulator", "SimState", "ViewPoint", "cbf"]  # and Mat (numpy.ndarray), on access
__vlneval__ = "vlneval"

_TWO_PI = math.pi * 2.0
_HEADING_INC = math.pi * 2.0 / 12  # the simulator's M_PI*2.0/headingCount
_ELEVATION_INC = math.pi / 6.0  # elevationIncrement
_HALF_ELEVATION = _ELEVATION_INC / 2.0
_UINT_MAX = 0xFFFFFFFF
#: cos of the half-angle with the R2R camera (60° VFOV, 640×480): the precomputed tables' rule.
_R2R_COS_HALF = math.cos(math.radians(60) * 640 / 480 / 2.0)
_CACHE_LIMIT = 60_000  # candidate lists kept per process (about 30 MB); cleared when exceeded
_RENDER_MESSAGE = (
    "MatterSim (vlneval) is graph-only and does not render images: call "
    "setRenderingEnabled(False) to get zero {0} images of the camera's size, or build the real "
    "Matterport3D simulator (github.com/peteanderson80/Matterport3DSimulator) to render."
)
_oset = object.__setattr__


# --------------------------------------------------------------------------------------------
# ViewPoint and SimState


class _ReadOnly:
    """The extension's bound types: no constructor, no setters (fields set with ``_oset``)."""

    __slots__ = ()

    def __init__(self, *args: Any) -> None:
        raise TypeError(f"MatterSim.{type(self).__name__}: No constructor defined!")

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"property {name!r} of {type(self).__name__!r} object has no setter")


class ViewPoint(_ReadOnly):
    """A viewpoint as the simulator reports it (read-only).

    Attributes:
        viewpointId: the viewpoint id.
        ix: the index of its record in the scan's connectivity file (excluded records count).
        x, y, z: the camera position, rounded to float32 as the simulator reads poses.
        point: ``[x, y, z]`` (the v0.1 name).
        rel_heading: horizontal angle from the camera direction, positive to the right.
        rel_elevation: elevation of the direction to it minus the camera elevation.
        rel_distance: 3-D distance from the agent (float32); all three are 0 for the location.
    """

    __slots__ = ("viewpointId", "ix", "x", "y", "z", "rel_heading", "rel_elevation", "rel_distance")
    viewpointId: str
    ix: int
    x: float
    y: float
    z: float
    rel_heading: float
    rel_elevation: float
    rel_distance: float

    @property
    def point(self) -> list[float]:
        """``[x, y, z]``, as v0.1's ``ViewPoint.point``."""
        return [self.x, self.y, self.z]

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        return _viewpoint, tuple(getattr(self, k) for k in ViewPoint.__slots__)

    def __repr__(self) -> str:
        return (
            f"<MatterSim.ViewPoint {self.viewpointId} ix={self.ix} "
            f"rel_heading={self.rel_heading:.6g} rel_elevation={self.rel_elevation:.6g} "
            f"rel_distance={self.rel_distance:.6g}>"
        )


def _viewpoint(
    vid: str, ix: int, x: float, y: float, z: float, rh: float, re: float, rd: float
) -> ViewPoint:
    vp = object.__new__(ViewPoint)
    for name, value in zip(ViewPoint.__slots__, (vid, ix, x, y, z, rh, re, rd), strict=True):
        _oset(vp, name, value)
    return vp


class SimState(_ReadOnly):
    """One agent's state (read-only; master ``getState()`` returns the live objects).

    Attributes:
        scanId: the scan of the current episode.
        step: ``makeAction`` calls since ``newEpisode``.
        rgb: ``(height, width, 3)`` uint8 zeros with rendering off (v0.1: None).
        depth: ``(height, width, 1)`` uint16 zeros with rendering off (v0.1: None).
        location: the current :class:`ViewPoint` (its ``rel_*`` are 0).
        heading: radians in [0, 2π), clockwise from +y.
        elevation: radians, positive up.
        viewIndex: 12 · row + heading step (discretised angles only; otherwise 0).
        navigableLocations: ``[location, candidates...]``, a new list on each access.
    """

    __slots__ = (
        "scanId",
        "step",
        "location",
        "heading",
        "elevation",
        "viewIndex",
        "_nav",
        "_world",
        "_frame",
        "_rgb",
        "_depth",
    )
    scanId: str
    step: int
    location: ViewPoint | None
    heading: float
    elevation: float
    viewIndex: int
    _nav: tuple[ViewPoint, ...]
    _world: _World  # None until the first episode
    _frame: Any
    _rgb: Any
    _depth: Any

    @property
    def navigableLocations(self) -> list[ViewPoint]:
        """The location (index 0) and the viewpoints one can move to, closest to the image
        centre first."""
        return list(self._nav)

    @property
    def rgb(self) -> Any:
        """Zero BGR image with rendering off (None in the v0.1 API)."""
        return self._image("_rgb", 3, "uint8")

    @property
    def depth(self) -> Any:
        """Zero depth image with rendering off (None in the v0.1 API)."""
        return self._image("_depth", 1, "uint16")

    def _image(self, slot: str, channels: int, dtype: str) -> Any:
        frame = self._frame
        if frame is None:
            return None
        if frame == "render":
            raise NotImplementedError(_RENDER_MESSAGE.format(slot[1:]))
        arr = getattr(self, slot)
        if arr is None:
            import numpy as np  # deferred: `import MatterSim` itself costs a few ms

            arr = np.zeros((frame[0], frame[1], channels), dtype=dtype)
            _oset(self, slot, arr)
        return arr

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        key = None if self._world is None else self._world.key
        fields = (self.scanId, self.step, self.location, self.heading, self.elevation)
        return _state_from, (fields, self.viewIndex, tuple(self._nav), key, self._frame)

    def __repr__(self) -> str:
        where = self.location.viewpointId if self.location is not None else None
        return (
            f"<MatterSim.SimState {self.scanId}/{where} step={self.step} "
            f"heading={self.heading:.6g} elevation={self.elevation:.6g} "
            f"viewIndex={self.viewIndex} navigable={len(self._nav)}>"
        )


_STATE_FIELDS = ("scanId", "step", "location", "heading", "elevation", "viewIndex", "_nav")


def _new_state(frame: Any, values: tuple[Any, ...] = ("", 0, None, 0.0, 0.0, 0, ())) -> SimState:
    """A state with ``values`` for :data:`_STATE_FIELDS`, no world and no images yet."""
    st = object.__new__(SimState)
    for name, value in zip(_STATE_FIELDS, values, strict=True):
        _oset(st, name, value)
    for name, value in (("_world", None), ("_frame", frame), ("_rgb", None), ("_depth", None)):
        _oset(st, name, value)
    return st


def _state_from(
    fields: tuple[Any, ...], view: int, nav: tuple[ViewPoint, ...], key: Any, frame: Any
) -> SimState:
    st = _new_state(frame, (*fields, view, nav))
    if key is not None:
        _oset(st, "_world", _world(*key))
    return st


def _snapshot(st: SimState) -> SimState:
    """A v0.1 ``getState()`` result: a copy, with no images."""
    frame = None if st._frame != "render" else "render"
    return _new_state(frame, tuple(getattr(st, name) for name in _STATE_FIELDS))


# --------------------------------------------------------------------------------------------
# Graphs: one _World per (folder, scan), shared by every simulator of the process

_WORLDS: dict[tuple[str, str], _World] = {}
_CACHED = [0]  # candidate lists cached across all worlds


class _World:
    """A scan's records plus the ViewPoint objects built from them (shared, immutable)."""

    def __init__(self, key: tuple[str, str], data: Any) -> None:
        self.key = key
        self.data = data  # vlneval.graph.simscan.SimScan
        self.ids: list[str] = data.ids
        self.index: dict[str, int] = data.index
        self.included = data.included.tolist()
        self.xyz: list[tuple[float, float, float]] = data.xyz
        self.locations: list[ViewPoint | None] = [None] * len(self.ids)
        self.views: dict[tuple[float, bool], dict[int, tuple[ViewPoint, ...]]] = {}

    def location(self, ix: int) -> ViewPoint:
        vp = self.locations[ix]
        if vp is None:
            x, y, z = self.xyz[ix]
            vp = _viewpoint(self.ids[ix], ix, x, y, z, 0.0, 0.0, 0.0)
            self.locations[ix] = vp
        return vp

    def find(self, viewpoint: str) -> int:
        ix = self.index.get(viewpoint)
        if ix is None:
            raise ValueError(
                f"MatterSim: Could not find viewpointId: {viewpoint}, is viewpoint id valid?"
            )
        if not self.included[ix]:
            raise ValueError(
                f"MatterSim: ViewpointId: {viewpoint}, is excluded from the connectivity graph."
            )
        return ix

    def navigable(
        self, ix: int, heading: float, elevation: float, cos_half: float, restricted: bool
    ) -> tuple[ViewPoint, ...]:
        """``[location] + candidates`` at any heading and elevation (not cached)."""
        lists = self.data.candidates(ix, heading, elevation, cos_half, restricted)
        return self._build(ix, lists)

    def view(self, ix: int, view: int, cos_half: float, restricted: bool) -> tuple[ViewPoint, ...]:
        """``[location] + candidates`` at discrete view ``view``, cached."""
        views = self.views.get((cos_half, restricted))
        if views is None:
            views = self.views[(cos_half, restricted)] = {}
        key = ix * 36 + view
        nav = views.get(key)
        if nav is None:
            if restricted and cos_half == _R2R_COS_HALF:
                lists = self.data.table_candidates(ix, view)
            else:
                heading = (view % 12) * _HEADING_INC
                elevation = (view // 12 - 1) * _ELEVATION_INC
                lists = self.data.candidates(ix, heading, elevation, cos_half, restricted)
            nav = self._build(ix, lists)
            if _CACHED[0] >= _CACHE_LIMIT:
                for world in _WORLDS.values():
                    world.views.clear()
                views = self.views[(cos_half, restricted)] = {}
                _CACHED[0] = 0
            views[key] = nav
            _CACHED[0] += 1
        return nav

    def _build(self, ix: int, lists: Any) -> tuple[ViewPoint, ...]:
        ids, xyz = self.ids, self.xyz
        out = [self.location(ix)]
        for j, rh, re, rd in zip(*lists, strict=True):
            x, y, z = xyz[j]
            out.append(_viewpoint(ids[j], j, x, y, z, rh, re, rd))
        return tuple(out)


def _default_graphs(default: str) -> str:
    """The graphs of a simulator whose default ``./connectivity`` is missing (spec/mattersim.md
    6.4): ``$VLNEVAL_DATA/matterport3d/connectivity`` when the user set ``VLNEVAL_DATA`` (the
    remedy the error suggests; ``~`` expanded, as vlneval expands it), else a ValueError; no
    other data set is substituted."""
    root = os.path.expanduser(os.environ.get("VLNEVAL_DATA", ""))  # "" stays ""
    remedy = (
        "Call Simulator.setNavGraphPath(folder) with the folder of the Matterport3D "
        "connectivity files (<scan>_connectivity.json or .json.gz), or set VLNEVAL_DATA to a "
        "vlneval data root (graphs in $VLNEVAL_DATA/matterport3d/connectivity, where "
        "`vlneval data fetch r2r` puts them)."
    )
    if not root:
        raise ValueError(
            f"MatterSim: navigation graphs not found: {default} (the default navigation graph "
            f"path, ./connectivity in the working directory) is not a folder. {remedy}"
        )
    folder = os.path.join(root, "matterport3d", "connectivity")
    if not os.path.isdir(folder):
        raise ValueError(
            f"MatterSim: navigation graphs not found: looked in {default} (the default "
            f"navigation graph path) and in {folder} ($VLNEVAL_DATA/matterport3d/connectivity); "
            f"neither is a folder. {remedy}"
        )
    return folder


def _world(folder: str, scan: str, listed_only: bool = False) -> _World:
    """The (cached) world of ``scan`` in ``folder``.

    Raises:
        ValueError: the folder or the scan's file is missing, or the file is malformed.
        IndexError: (``listed_only``) the folder has a ``scans.txt`` that does not list the scan,
            as the original raises for an unknown scan id.
    """
    key = (folder, scan)
    world = _WORLDS.get(key)
    if world is not None:
        return world
    if not os.path.isdir(folder):
        raise ValueError(
            f"MatterSim: navigation graphs not found: {folder} is not a folder. Put the "
            "Matterport3D connectivity files (<scan>_connectivity.json or .json.gz) there, call "
            "Simulator.setNavGraphPath(folder), or set VLNEVAL_DATA to a vlneval data root "
            "(graphs in $VLNEVAL_DATA/matterport3d/connectivity)."
        )
    # the graph reader loads numpy and vlneval.errors (60 ms); ``import MatterSim`` loads neither
    from vlneval.graph.simscan import find_sim_scan  # deferred: numpy

    base = os.path.join(folder, f"{scan}_connectivity.json")
    data = find_sim_scan(folder, scan)
    if data is None:
        listing = os.path.join(folder, "scans.txt")
        if listed_only and os.path.isfile(listing):
            with open(listing, encoding="utf-8") as fh:
                if scan not in fh.read().split():
                    raise IndexError(
                        f"map::at (MatterSim: unknown scan id {scan!r}: not in {listing})"
                    )
        raise ValueError(
            f"MatterSim: Could not open navigation graph file: {base} (or {base}.gz), "
            "is scan id valid?"
        )
    world = _World(key, data)
    _WORLDS[key] = world
    return world


# --------------------------------------------------------------------------------------------
# libstdc++'s default_random_engine (minstd_rand0) and distributions, for random starts


class _MinstdRand0:
    """``std::minstd_rand0``: x ← 16807 · x mod (2³¹ − 1)."""

    def __init__(self, seed: int = 1) -> None:
        s = (seed % 2**64) % 2147483647
        self.x = 1 if s == 0 else s

    def __call__(self) -> int:
        self.x = (16807 * self.x) % 2147483647
        return self.x

    def uniform_int(self, low: int, high: int) -> int:
        """``std::uniform_int_distribution<int>(low, high)`` (libstdc++'s downscaling)."""
        urange = high - low
        erange = urange + 1
        scaling = 2147483645 // erange
        past = erange * scaling
        while True:
            ret = self() - 1
            if ret < past:
                return ret // scaling + low

    def uniform_real(self, low: float, high: float) -> float:
        """``std::uniform_real_distribution<double>`` via ``generate_canonical<double, 53>``
        (two draws: 53 bits from a 31-bit engine)."""
        r = 2147483646.0
        total, scale = 0.0, 1.0
        for _ in range(2):
            total += float(self() - 1) * scale
            scale *= r
        ret = total / scale
        if ret >= 1.0:
            ret = math.nextafter(1.0, 0.0)
        return ret * (high - low) + low


_GRAPH_ENGINE: list[_MinstdRand0] = []  # the process-wide graph's engine, seeded once


def _random_viewpoint(world: _World, engine: _MinstdRand0) -> str:
    n = len(world.ids)
    start = ix = engine.uniform_int(0, n - 1)
    while not world.included[ix]:
        ix += 1
        if ix >= n:
            ix = 0
        if ix == start:
            raise RuntimeError(f"MatterSim: ScanId: {world.key[1]} has no included viewpoints!")
    return world.ids[ix]


# --------------------------------------------------------------------------------------------
# Argument conversion, as pybind11 converts (TypeError when it cannot)


def _incompatible(name: str, signatures: str, args: tuple[Any, ...]) -> TypeError:
    shown = ", ".join(["<MatterSim.Simulator object>"] + [repr(a) for a in args])
    return TypeError(
        f"{name}(): incompatible function arguments. The following argument types are "
        f"supported:\n{signatures}\n\nInvoked with: {shown}"
    )


def _to_integer(x: Any, low: int, high: int) -> int | None:
    """``x`` as pybind11 converts it to a C integer in ``[low, high]`` (no float, no text)."""
    if type(x) is int:
        v = x
    elif isinstance(x, (float, str, bytes)):
        return None
    else:
        index = getattr(type(x), "__index__", None)
        if index is None:
            return None
        v = int(index(x))
    return v if low <= v <= high else None


def _to_uint(x: Any) -> int | None:
    return _to_integer(x, 0, _UINT_MAX)


def _to_int(x: Any) -> int | None:
    return _to_integer(x, -(2**31), 2**31 - 1)


def _to_float(x: Any) -> float | None:
    t = type(x)
    if t is float or t is int:
        return float(x)
    if isinstance(x, (str, bytes)):
        return None
    conv = getattr(t, "__float__", None)
    if conv is not None:
        return float(conv(x))
    index = getattr(t, "__index__", None)
    return None if index is None else float(index(x))


def _to_str(x: Any) -> str | None:
    if isinstance(x, str):
        return str(x)
    if isinstance(x, bytes):
        return x.decode("utf-8")
    return None


def _to_bool(x: Any) -> bool | None:
    if x is True or x is False:
        return x
    if x is None:
        return False
    if isinstance(x, (str, bytes)):
        return None
    conv = getattr(type(x), "__bool__", None)
    if conv is None and getattr(type(x), "__index__", None) is None:
        return None
    return bool(x)


def _is_sequence(x: Any) -> bool:
    return (
        not isinstance(x, (str, bytes, dict))
        and hasattr(type(x), "__getitem__")
        and hasattr(type(x), "__len__")
    )


def _to_list(x: Any, conv: Any) -> list[Any] | None:
    if not _is_sequence(x):
        return None
    out = []
    for item in x:
        v = conv(item)
        if v is None:
            return None
        out.append(v)
    return out


def _at(values: list[Any], i: int) -> Any:
    """``std::vector::at``: IndexError past the end."""
    if i >= len(values):
        raise IndexError(
            f"vector::_M_range_check: __n (which is {i}) >= this->size() (which is {len(values)})"
        )
    return values[i]


_SIG_EPISODE_MASTER = (
    "    1. (self: MatterSim.Simulator, arg0: list[str], arg1: list[str], arg2: list[float], "
    "arg3: list[float]) -> None"
)
_SIG_EPISODE = (
    _SIG_EPISODE_MASTER + "\n"
    "    2. (self: MatterSim.Simulator, arg0: str, arg1: str, arg2: float, arg3: float) -> None"
    "  (v0.1 API, batch size 1)"
)
_SIG_ACTION = (
    "    1. (self: MatterSim.Simulator, arg0: list[int], arg1: list[float], arg2: list[float]) "
    "-> None\n"
    "    2. (self: MatterSim.Simulator, arg0: int, arg1: float, arg2: float) -> None"
    "  (v0.1 API, batch size 1)"
)


# --------------------------------------------------------------------------------------------
# The simulator


class Simulator:
    """The Matterport3D simulator, graph-only (see the module docstring).

    Settings and their defaults are the original's: 320×240 camera, vertical FOV 0.8 rad,
    elevation limits ±0.94, rendering on, continuous angles, restricted navigation, batch size 1,
    graphs in ``./connectivity``. Setters marked "guarded" in the original are ignored once the
    simulator is initialised; the camera resolution, FOV and elevation limits stay live.
    """

    def __init__(self) -> None:
        self._width = 320
        self._height = 240
        self._vfov = 0.8
        self._min_elevation = -0.94
        self._max_elevation = 0.94
        self._nav_graph_path = "./connectivity"
        self._nav_graph_set = False
        self._dataset_path = "./data/v1/scans/"
        self._initialized = False
        self._rendering = True
        self._discretized = False
        self._restricted = True
        self._preload = False
        self._depth = False
        self._batch_size = 1
        self._cache_size = 200
        self._seed = 1
        self._api: str | None = None
        self._states: list[SimState] = []
        self._folder: str | None = None
        self._engine: _MinstdRand0 | None = None  # v0.1 random starts
        self._frames = 0
        self._update()

    # ---- settings ------------------------------------------------------------------------

    def _guarded(self) -> bool:
        return self._initialized and self._api != "v0.1"

    def _path(self, name: str, path: Any) -> str | None:
        """``path`` as a string (checked as the binding does); None once the settings are fixed."""
        p = _to_str(path)
        if p is None:
            raise _incompatible(name, "    1. (self, arg0: str) -> None", (path,))
        return None if self._guarded() else p

    def setDatasetPath(self, path: Any) -> None:
        """Skybox folder: only used for rendering (accepted and kept)."""
        if (p := self._path("setDatasetPath", path)) is not None:
            self._dataset_path = p

    def setNavGraphPath(self, path: Any) -> None:
        """Folder of ``<scan>_connectivity.json`` (or ``.json.gz``) files."""
        if (p := self._path("setNavGraphPath", path)) is not None:
            self._nav_graph_path = p
            self._nav_graph_set = True
            self._folder = None

    def _set_flag(self, name: str, attr: str, value: Any) -> None:
        v = _to_bool(value)
        if v is None:
            raise _incompatible(name, "    1. (self, arg0: bool) -> None", (value,))
        if not self._initialized:
            setattr(self, attr, v)
            self._update()

    def setRenderingEnabled(self, value: Any) -> None:
        """Off: no images (zeros). On: reading ``rgb``/``depth`` raises NotImplementedError."""
        self._set_flag("setRenderingEnabled", "_rendering", value)

    def setDiscretizedViewingAngles(self, value: Any) -> None:
        """30° heading and elevation steps, and ``viewIndex``."""
        self._set_flag("setDiscretizedViewingAngles", "_discretized", value)

    def setRestrictedNavigation(self, value: Any) -> None:
        """Off: every adjacent viewpoint is navigable, not only those in the field of view."""
        self._set_flag("setRestrictedNavigation", "_restricted", value)

    def setPreloadingEnabled(self, value: Any) -> None:
        """Skybox preloading: accepted and ignored (no images here)."""
        self._set_flag("setPreloadingEnabled", "_preload", value)

    def setDepthEnabled(self, value: Any) -> None:
        """Depth rendering: accepted and ignored (no images here)."""
        self._set_flag("setDepthEnabled", "_depth", value)

    def setCameraResolution(self, width: Any, height: Any) -> None:
        """Image size; enters the field-of-view rule (``vfov · width / height / 2``)."""
        w, h = _to_int(width), _to_int(height)
        if w is None or h is None:
            raise _incompatible(
                "setCameraResolution",
                "    1. (self, arg0: int, arg1: int) -> None",
                (width, height),
            )
        self._width, self._height = w, h
        self._update()

    def setCameraVFOV(self, vfov: Any) -> None:
        """Vertical field of view in radians; enters the field-of-view rule."""
        v = _to_float(vfov)
        if v is None:
            raise _incompatible("setCameraVFOV", "    1. (self, arg0: float) -> None", (vfov,))
        self._vfov = v
        self._update()

    def setElevationLimits(self, min: Any, max: Any) -> bool:
        """Continuous-mode elevation limits; False (and no change) unless
        −π/2 < min < 0 < max < π/2."""
        lo, hi = _to_float(min), _to_float(max)
        if lo is None or hi is None:
            raise _incompatible(
                "setElevationLimits", "    1. (self, arg0: float, arg1: float) -> bool", (min, max)
            )
        if lo < 0.0 and lo > -math.pi / 2.0 and hi > 0.0 and hi < math.pi / 2.0:
            self._min_elevation, self._max_elevation = lo, hi
            return True
        return False

    def _set_count(self, name: str, attr: str, value: Any, conv: Any) -> None:
        v = conv(value)
        if v is None:
            raise _incompatible(name, "    1. (self, arg0: int) -> None", (value,))
        if attr == "_seed":  # v0.1 reseeds its engine at once, at any time
            self._engine = _MinstdRand0(v)
        if not self._guarded():
            setattr(self, attr, v)

    def setBatchSize(self, size: Any) -> None:
        """Number of agents (slots) in this simulator."""
        self._set_count("setBatchSize", "_batch_size", size, _to_uint)

    def setCacheSize(self, size: Any) -> None:
        """Texture cache size: accepted and ignored."""
        self._set_count("setCacheSize", "_cache_size", size, _to_uint)

    def setSeed(self, seed: Any) -> None:
        """Seed of the random starts (``newRandomEpisode``; v0.1: an empty viewpoint id)."""
        self._set_count("setSeed", "_seed", seed, _to_int)

    def _update(self) -> None:
        self._cos_half = _cos_half(self._vfov, self._width, self._height)
        self._view_key = (self._cos_half, self._restricted)
        self._fast = self._initialized and self._discretized and len(self._states) == 1

    # ---- lifecycle -----------------------------------------------------------------------

    def _frame(self) -> Any:
        if self._rendering:
            return "render"
        if self._api == "v0.1":
            return None
        return (self._height, self._width)

    def initialize(self) -> None:
        """Master API: appends ``batchSize`` fresh states (as the original, also when called
        again) and marks the simulator initialised."""
        if self._api is None:
            self._api = "master"
        frame = self._frame()
        self._states.extend(_new_state(frame) for _ in range(self._batch_size))
        self._initialized = True
        self._update()

    def init(self) -> None:
        """v0.1 API: one state; ``getState()`` then returns a single snapshot."""
        self._api = "v0.1"
        if not self._states:
            self._states.extend(_new_state(None) for _ in range(self._batch_size))
        self._initialized = True
        self._update()

    def close(self) -> None:
        """Clears the initialised flag (as the original; the states are kept)."""
        self._initialized = False
        self._update()

    def resetTimers(self) -> None:
        """Timing bookkeeping: resets the frame count."""
        self._frames = 0

    def timingInfo(self) -> str:
        """The original's timing report (no rendering: every time is 0)."""
        f = float(self._frames)
        return (
            "Preloading images: 0 minutes\n"
            f"Rendered {f:g} frames\n"
            "Wall time: 0 ms, (inf fps)\nProcess time: 0 ms, (inf fps)\n"
            "\tImage loading: 0 ms\n\tRendering: 0 ms\n\tReading rendered image: 0 ms\n"
        )

    # ---- episodes ------------------------------------------------------------------------

    def _graph_folder(self) -> str:
        folder = self._folder
        if folder is None:
            path = self._nav_graph_path
            if not self._nav_graph_set and not os.path.isdir(path):
                path = _default_graphs(os.path.abspath(path))
            folder = self._folder = os.path.abspath(path)
        return folder

    def newEpisode(self, *args: Any) -> None:
        """Starts an episode in every slot.

        master: ``newEpisode(scanIds, viewpointIds, headings, elevations)`` with lists of at
        least ``batchSize`` elements. v0.1: ``newEpisode(scanId, viewpointId, heading,
        elevation)`` (batch size 1; an empty ``viewpointId`` starts at a random viewpoint).

        Raises:
            TypeError: scalar arguments once the simulator is in master mode (``initialize()``,
                or an earlier call with lists), as the master binding takes lists only.
        """
        if len(args) == 4 and isinstance(args[0], (str, bytes)):
            if self._api == "master":  # initialize() or a list call: the master binding's
                raise _incompatible("newEpisode", _SIG_EPISODE_MASTER, args)  # lists only
            scan, vp = _to_str(args[0]), _to_str(args[1])
            h, e = _to_float(args[2]), _to_float(args[3])
            if scan is None or vp is None or h is None or e is None or self._slots() != 1:
                raise _incompatible("newEpisode", _SIG_EPISODE, args)
            if self._api is None:
                self._api = "v0.1"
            self._new_episode([scan], [vp], [h], [e], v01=True)
            return
        if len(args) != 4:
            raise _incompatible("newEpisode", _SIG_EPISODE, args)
        scans = _to_list(args[0], _to_str)
        vps = _to_list(args[1], _to_str)
        hs = _to_list(args[2], _to_float)
        es = _to_list(args[3], _to_float)
        if scans is None or vps is None or hs is None or es is None:
            raise _incompatible("newEpisode", _SIG_EPISODE, args)
        if self._api is None:
            self._api = "master"
        self._new_episode(scans, vps, hs, es, v01=self._api == "v0.1")

    def _slots(self) -> int:
        return len(self._states) if self._initialized else self._batch_size

    def _new_episode(
        self, scans: list[str], vps: list[str], hs: list[float], es: list[float], v01: bool
    ) -> None:
        if not self._initialized:
            if self._api == "v0.1":
                self.init()
            else:
                self.initialize()
        states = self._states
        self._check_headings(hs, len(states))
        for i, st in enumerate(states):
            self._set_angles(st, _at(hs, i), _at(es, i))
        folder = self._graph_folder()
        if not v01 and not _GRAPH_ENGINE:
            _GRAPH_ENGINE.append(_MinstdRand0(self._seed))
        for i, st in enumerate(states):
            _oset(st, "step", 0)
            scan = _at(scans, i)
            _oset(st, "scanId", scan)
            world = _world(folder, scan, listed_only=not v01)
            vp = _at(vps, i)
            if v01 and not vp:
                if self._engine is None:  # v0.1 seeds with time(NULL) unless setSeed
                    self._engine = _MinstdRand0(_time_seed())
                vp = _random_viewpoint(world, self._engine)
            ix = world.find(vp)
            _oset(st, "_world", world)
            _oset(st, "location", world.location(ix))
        for st in states:
            self._populate(st)

    def newRandomEpisode(self, scanIds: Any) -> None:
        """Master: a random included viewpoint per scan, a random heading, elevation 0 (the
        original's libstdc++ random engines, reproduced)."""
        scans = _to_list(scanIds, _to_str)
        if scans is None:
            raise _incompatible(
                "newRandomEpisode", "    1. (self, arg0: list[str]) -> None", (scanIds,)
            )
        if not _GRAPH_ENGINE:
            _GRAPH_ENGINE.append(_MinstdRand0(self._seed))
        engine = _GRAPH_ENGINE[0]
        heading_engine = _MinstdRand0(1)
        folder = self._graph_folder()
        vps, hs = [], []
        for scan in scans:
            vps.append(_random_viewpoint(_world(folder, scan, listed_only=True), engine))
            hs.append(heading_engine.uniform_real(0.0, _TWO_PI))
        if self._api is None:
            self._api = "master"
        self._new_episode(scans, vps, hs, [0.0] * len(scans), v01=False)

    # ---- state and actions ---------------------------------------------------------------

    def getState(self) -> Any:
        """master: the list of live states. v0.1: one snapshot of the state."""
        if self._api == "v0.1":
            states = self._states
            if len(states) == 1:
                return _snapshot(states[0])
            return [_snapshot(st) for st in states]
        return self._states[:]

    def makeAction(self, index: Any, heading: Any, elevation: Any) -> None:
        """Moves to ``navigableLocations[index]`` and then turns by ``heading`` and
        ``elevation`` (with discretised angles: one 30° step in the sign's direction), in every
        slot (lists of at least ``batchSize`` elements; scalars with batch size 1).

        Raises:
            RuntimeError: before the first ``newEpisode``.
            ValueError: an index past the end of the list.
            TypeError: arguments of the wrong type, or a negative index.
        """
        if type(index) is list and type(heading) is list and type(elevation) is list:
            if self._fast and len(index) == 1 and len(heading) == 1 and len(elevation) == 1:
                k, h, e = index[0], heading[0], elevation[0]
                th, te = type(h), type(e)
                if (
                    type(k) is int
                    and 0 <= k <= _UINT_MAX
                    and (th is float or th is int)
                    and (te is float or te is int)
                    and h == h  # a NaN turn takes the general rule (as the C++ does), not
                    and e == e  # the tables' "no turn"
                ):
                    self._step_one(k, h, e)
                    return
            ix, hs, es = _fast_uints(index), _fast_floats(heading), _fast_floats(elevation)
        elif not (_is_sequence(index) or _is_sequence(heading) or _is_sequence(elevation)):
            self._make_scalar_action(index, heading, elevation)
            return
        else:
            ix = hs = es = None
        if ix is None or hs is None or es is None:  # not plain lists: converted as pybind11 does
            ix = _to_list(index, _to_uint)
            hs = _to_list(heading, _to_float)
            es = _to_list(elevation, _to_float)
            if ix is None or hs is None or es is None:
                raise _incompatible("makeAction", _SIG_ACTION, (index, heading, elevation))
        if not self._initialized:
            raise RuntimeError("MatterSim: newEpisode must be called before makeAction")
        states = self._states
        self._check_headings(hs, len(states), turn=True)
        targets = []
        for i, st in enumerate(states):
            k = _at(ix, i)
            nav = st._nav
            if k >= len(nav):
                raise ValueError(
                    f"MatterSim: Invalid action index: {k} in environment {i} of {self._batch_size}"
                )
            if k:
                _oset(st, "location", st._world.location(nav[k].ix))
            _oset(st, "step", st.step + 1)
            h, e = self._turn(_at(hs, i), _at(es, i))
            targets.append((st.heading + h, st.elevation + e))
        for st, (h, e) in zip(states, targets, strict=True):
            self._set_angles(st, h, e)
            self._populate(st)

    def _step_one(self, k: int, h: float, e: float) -> None:
        """:meth:`makeAction` for one slot with discretised angles (the common case), with the
        30° steps looked up in tables made by the general rule."""
        st = self._states[0]
        nav = st._nav
        if k >= len(nav):
            raise ValueError(
                f"MatterSim: Invalid action index: {k} in environment 0 of {self._batch_size}"
            )
        world = st._world
        if k:
            j = nav[k].ix
            loc = world.locations[j] or world.location(j)
            _oset(st, "location", loc)
        else:
            j = st.location.ix  # type: ignore[union-attr]
        _oset(st, "step", st.step + 1)
        view = st.viewIndex
        row, step = (
            _ROW_AFTER[view // 12][(e > 0.0) - (e < 0.0)],
            _STEP_AFTER[view % 12][(h > 0.0) - (h < 0.0)],
        )
        view = row * 12 + step
        _oset(st, "viewIndex", view)
        _oset(st, "heading", _HEADINGS[step])
        _oset(st, "elevation", _ELEVATIONS[row])
        views = world.views.get(self._view_key)
        cached = views.get(j * 36 + view) if views is not None else None
        if cached is None:
            cached = world.view(j, view, self._cos_half, self._restricted)
        _oset(st, "_nav", cached)

    def _make_scalar_action(self, index: Any, heading: Any, elevation: Any) -> None:
        k = _to_int(index)
        h, e = _to_float(heading), _to_float(elevation)
        if k is None or h is None or e is None or self._slots() != 1:
            raise _incompatible("makeAction", _SIG_ACTION, (index, heading, elevation))
        st = self._states[0] if self._states else None
        if not self._initialized or st is None or k < 0 or k >= len(st._nav):
            raise ValueError(f"MatterSim: Invalid action index: {k}")
        self._check_headings([h], 1, turn=True)
        if k:
            _oset(st, "location", st._world.location(st._nav[k].ix))
        _oset(st, "step", st.step + 1)
        h, e = self._turn(h, e)
        self._set_angles(st, st.heading + h, st.elevation + e)
        self._populate(st)

    def _check_headings(self, headings: list[float], slots: int, turn: bool = False) -> None:
        """Refuses, before any slot changes, a heading that discretised angles cannot snap:
        NaN, or (as an absolute heading, not a turn) ±inf, whose C ``fmod`` is NaN. The C++
        ``lround``s it into a build-dependent view; an error is clearer."""
        if not self._discretized:
            return
        for i in range(min(slots, len(headings))):
            h = headings[i]
            if h != h or (not turn and h in (math.inf, -math.inf)):
                raise ValueError(_heading_error(h))

    def _turn(self, h: float, e: float) -> tuple[float, float]:
        """The turn an action asks for: with discretised angles, one 30° step by its sign."""
        if self._discretized:
            h = _HEADING_INC if h > 0.0 else (-_HEADING_INC if h < 0.0 else h)
            e = _ELEVATION_INC if e > 0.0 else (-_ELEVATION_INC if e < 0.0 else e)
        return h, e

    def _set_angles(self, st: SimState, heading: float, elevation: float) -> None:
        """``Simulator::setHeadingElevation`` for one slot."""
        try:
            h = math.fmod(heading, _TWO_PI)
        except ValueError:  # C's fmod(±inf) is NaN
            h = math.nan
        while h < 0.0:
            h += _TWO_PI
        if self._discretized:
            if h != h:  # _check_headings refuses it first, before any slot changes
                raise ValueError(_heading_error(heading))
            x = h / _HEADING_INC
            f = math.floor(x)
            step = int(f) + (x - f >= 0.5)  # C lround: halves away from zero
            if step == 12:
                step = 0
            h = step * _HEADING_INC
            if elevation < -_HALF_ELEVATION:
                e, view = -_ELEVATION_INC, step
            elif elevation > _HALF_ELEVATION:
                e, view = _ELEVATION_INC, step + 24
            else:
                e, view = 0.0, step + 12
            _oset(st, "viewIndex", view)
        else:
            e = float(max(min(elevation, self._max_elevation), self._min_elevation))
        _oset(st, "heading", h)
        _oset(st, "elevation", e)

    def _populate(self, st: SimState) -> None:
        """``Simulator::populateNavigable`` for one slot."""
        world = st._world
        if world is None:
            return
        ix = st.location.ix  # type: ignore[union-attr]
        if self._discretized:
            nav = world.view(ix, st.viewIndex, self._cos_half, self._restricted)
        else:
            nav = world.navigable(ix, st.heading, st.elevation, self._cos_half, self._restricted)
        _oset(st, "_nav", nav)


def _heading_error(heading: float) -> str:
    return f"MatterSim: heading must be a finite number, got {heading!r}"


def _fast_uints(values: list[Any]) -> list[Any] | None:
    for k in values:
        if type(k) is not int or k < 0 or k > _UINT_MAX:
            return None
    return values


def _fast_floats(values: list[Any]) -> list[Any] | None:
    for v in values:
        t = type(v)
        if t is not float and t is not int:
            return None
    return values


def _cos_half(vfov: float, width: int, height: int) -> float:
    """``cos(vfov * width / height / 2.0)`` as C evaluates it (NaN where C gets NaN)."""
    try:
        return math.cos(vfov * width / height / 2.0)
    except (ZeroDivisionError, ValueError, OverflowError):
        return math.nan


def _after_turns() -> tuple[list[list[int]], list[list[int]], list[float], list[float]]:
    """Discretised 30° steps, made once by the general rule (``_set_angles``): the heading step
    and the elevation row after a turn of sign −1, 0 or +1 (indexable by the sign)."""
    sim = Simulator()
    sim._discretized = True
    st = _new_state(None)
    headings = [s * _HEADING_INC for s in range(12)]
    elevations = [-_ELEVATION_INC, 0.0, _ELEVATION_INC]
    step_after = [[0, 0, 0] for _ in range(12)]
    row_after = [[0, 0, 0] for _ in range(3)]
    for step in range(12):
        for sign in (-1, 0, 1):
            sim._set_angles(st, headings[step] + sign * _HEADING_INC, 0.0)
            step_after[step][sign] = st.viewIndex % 12
    for row in range(3):
        for sign in (-1, 0, 1):
            sim._set_angles(st, 0.0, elevations[row] + sign * _ELEVATION_INC)
            row_after[row][sign] = st.viewIndex // 12
    return step_after, row_after, headings, elevations


_STEP_AFTER, _ROW_AFTER, _HEADINGS, _ELEVATIONS = _after_turns()


def _time_seed() -> int:
    return int(time.time())


def cbf(depth: Any, intensity: Any, mask: Any, result: Any) -> None:
    """The original's cross-bilateral depth filter: not available without the real build."""
    raise NotImplementedError(
        "MatterSim.cbf (the cross-bilateral depth filter) needs the real Matterport3D "
        "simulator (github.com/peteanderson80/Matterport3DSimulator); vlneval's MatterSim is "
        "graph-only."
    )


def __getattr__(name: str) -> Any:
    if name == "Mat":  # the original's image type; here images are numpy arrays
        import numpy as np

        return np.ndarray
    raise AttributeError(f"module 'MatterSim' has no attribute {name!r}")


# --------------------------------------------------------------------------------------------
# Defer to a compiled MatterSim extension when there is one


def _real_build() -> Any:
    """The compiled ``MatterSim`` extension on ``sys.path``, loaded, or None (see
    ``VLNEVAL_MATTERSIM``)."""
    mode = os.environ.get("VLNEVAL_MATTERSIM", "auto").strip().lower() or "auto"
    if mode not in ("auto", "shim", "vlneval", "real"):
        raise ImportError(
            f"VLNEVAL_MATTERSIM must be 'auto', 'shim' (alias 'vlneval') or 'real', got {mode!r}"
        )
    if mode in ("shim", "vlneval"):  # spec/mattersim.md 6.1 names it shim; vlneval: older name
        return None
    own = os.path.realpath(__file__)
    tried = []
    for entry in list(sys.path):
        if not isinstance(entry, str):
            continue
        for suffix in importlib.machinery.EXTENSION_SUFFIXES:
            path = os.path.join(entry or ".", "MatterSim" + suffix)
            if not os.path.isfile(path) or os.path.realpath(path) == own:
                continue
            loader = importlib.machinery.ExtensionFileLoader("MatterSim", path)
            spec = importlib.machinery.ModuleSpec("MatterSim", loader, origin=path)
            try:
                module = loader.create_module(spec)
                loader.exec_module(module)
            except ImportError as exc:
                tried.append(f"{path}: {exc}")
                continue
            try:
                module.__vlneval__ = "real"  # type: ignore[attr-defined]
                module.__spec__ = spec
            except (AttributeError, TypeError):
                pass
            return module
    if mode == "real":
        detail = "; ".join(tried) if tried else "no MatterSim extension on sys.path"
        raise ImportError(
            f"VLNEVAL_MATTERSIM=real but the compiled simulator could not be loaded ({detail})"
        )
    if tried:
        warnings.warn(
            "a compiled MatterSim was found but could not be loaded; using vlneval's graph-only "
            "MatterSim (" + "; ".join(tried) + ")",
            RuntimeWarning,
            stacklevel=2,
        )
    return None


_REAL = _real_build()
if _REAL is not None:
    sys.modules[__name__] = _REAL
