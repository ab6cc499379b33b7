"""A compiled field scanner for large, valid R2R-format files: byte spans, not Python objects.

One numba pass over the bytes of a predictions file or an R2R episode file finds the fields the
scorer needs and returns their byte spans in numpy arrays; viewpoint spans are then mapped to
node indices by :class:`ViewpointTable` without creating a Python string per step. This is a
fast path only: whenever a file is not exactly of the expected shape (a missing or duplicate
field, a wrong type, an escape sequence inside an id, viewpoint or scan, a number that might not
be a finite float, a key written with escapes) the scanner declines and returns None, and the
validating path reads the file again to explain what is wrong.

The scanner relies on the input being syntactically valid JSON, which it checks first with
msgspec (about 0.1 s per 100 MB) unless the caller says it already did (``validated=True``).
It accepts any whitespace, any key order, and unknown fields with any nested value.

Example:
    >>> raw = b'[{"instr_id": "7_0", "trajectory": [["a1", 0.5, 0.0], ["b2", 1.0, 0.0]]}]'
    >>> scanned = scan_predictions(raw, id_field="instr_id", key="trajectory")
    >>> scanned.form, scanned.ids, scanned.viewpoints()
    ('triple', ['7_0'], ['a1', 'b2'])
    >>> table = ViewpointTable.from_ids([["b2", "a1"]])
    >>> table.lookup_in(raw, scanned.vp_starts, scanned.vp_ends, np.zeros(2, np.int32)).tolist()
    [1, 0]
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

__all__ = [
    "Declined",
    "append_spans",
    "is_json",
    "ScannedEpisodes",
    "ScannedPredictions",
    "ViewpointTable",
    "scan_predictions",
    "scan_r2r_episodes",
    "span_strings",
    "try_scan_predictions",
    "try_scan_r2r_episodes",
    "unique_strings",
]

Buffer = bytes | bytearray | memoryview | np.ndarray

FORM_CODES = {"auto": 0, "triple": 1, "plain": 2, "nested": 3}
FORM_NAMES = {1: "triple", 2: "plain", 3: "nested"}
EPISODE_KEYS = ("path_id", "scan", "path", "heading", "instructions", "distance")

REASONS = {
    1: "the top level is not a JSON list",
    2: "a record is not a JSON object",
    3: "a field name is written with escape sequences",
    4: "a record has the same field twice",
    5: "a record has no id field",
    6: "an id is neither a string nor an integer",
    7: "an id, scan or viewpoint string holds an escape sequence",
    8: "a record has no trajectory field",
    9: "a trajectory, path or instruction list is not a JSON list",
    10: "a trajectory step does not have the file's form",
    11: "a scan, path element or instruction is not a string",
    12: "a number is too large or too small to be read safely as a float",
    13: "the first trajectory is empty: its form cannot be detected",
    14: "the JSON structure is not as expected",
    15: "a record has no scan field",
    16: "a record has no path field",
    17: "a field has the wrong type (or is null)",
}


def _kernels() -> Any:
    from vlneval.data import _scan_kernels

    return _scan_kernels


def _buffer(raw: Buffer) -> np.ndarray:
    """A C-contiguous ``uint8`` array over ``raw`` (the kernels read it through its pointer)."""
    if isinstance(raw, np.ndarray):
        return np.ascontiguousarray(raw, dtype=np.uint8)
    return np.frombuffer(raw, dtype=np.uint8)


def _int64(a: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(a, dtype=np.int64)


def _pack_keys(keys: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
    encoded = [k.encode() for k in keys]
    offsets = np.zeros(len(encoded) + 1, dtype=np.int64)
    np.cumsum([len(e) for e in encoded], out=offsets[1:])
    return np.frombuffer(b"".join(encoded) or b"\0", dtype=np.uint8), offsets


def _offsets(counts: np.ndarray) -> np.ndarray:
    out = np.zeros(len(counts) + 1, dtype=np.int64)
    np.cumsum(counts, out=out[1:])
    return out


def is_json(raw: bytes | bytearray | memoryview) -> bool:
    """Whether ``raw`` is one syntactically valid JSON document (msgspec's check, no objects
    built; deep nesting counts as invalid).

    Example:
        >>> is_json(b'[1, {"a": "]"}]'), is_json(b"[1, 2")
        (True, False)
    """
    import msgspec

    try:
        msgspec.json.decode(raw, type=msgspec.Raw)
    except (msgspec.MsgspecError, RecursionError):
        return False
    return True


def span_strings(raw: Buffer, starts: np.ndarray, ends: np.ndarray) -> list[str]:
    """The UTF-8 text of each span (spans of JSON string contents without escapes, or numbers).

    One gather and one split, instead of a slice and a decode per span.

    Raises:
        UnicodeDecodeError: a span is not valid UTF-8.

    Example:
        >>> span_strings(b'["ab","c"]', np.array([2, 7]), np.array([4, 8]))
        ['ab', 'c']
    """
    if len(starts) == 0:
        return []
    joined = _kernels().gather(_buffer(raw), _int64(starts), _int64(ends), 10)
    return joined.tobytes().decode("utf-8").split("\n")


def append_spans(
    blob: bytearray, raw: Buffer, starts: np.ndarray, ends: np.ndarray, sep: int
) -> tuple[np.ndarray, np.ndarray]:
    """Appends the bytes of each span of ``raw`` to ``blob``, each followed by the byte ``sep``,
    in one gather; returns where they now are in ``blob`` (starts, ends).

    Example:
        >>> blob = bytearray(b"x,")
        >>> s, e = append_spans(blob, b"ab cd", np.array([0, 3]), np.array([2, 5]), 44)
        >>> bytes(blob), s.tolist(), e.tolist()
        (b'x,ab,cd,', [2, 5], [4, 7])
    """
    starts, ends = _int64(starts), _int64(ends)
    lengths = ends - starts
    at = len(blob) + np.cumsum(lengths + 1) - lengths - 1
    if len(starts):
        blob += memoryview(_kernels().gather(_buffer(raw), starts, ends, sep))
        blob.append(sep)
    return at, at + lengths


def unique_strings(
    raw: Buffer, starts: np.ndarray, ends: np.ndarray
) -> tuple[list[str], np.ndarray]:
    """The distinct texts of the spans (interned) and, per span, the index of its text.

    Only one Python string is made per distinct text, however many spans repeat it.

    Example:
        >>> texts, inverse = unique_strings(b"abab", np.array([0, 2]), np.array([2, 4]))
        >>> texts, inverse.tolist()
        (['ab'], [0, 0])
    """
    buf = _buffer(raw)
    starts, ends = _int64(starts), _int64(ends)
    first, inverse = _kernels().unique_spans(buf, starts, ends)
    texts = list(map(sys.intern, span_strings(buf, starts[first], ends[first])))
    return texts, inverse


@dataclass(frozen=True)
class Declined:
    """Why the scanner declined a file, and the byte offset where it stopped (-1: anywhere)."""

    reason: str
    offset: int = -1


@dataclass(frozen=True, eq=False)
class ScannedPredictions:
    """The fields of a predictions list, as byte spans into ``buffer``.

    Attributes:
        buffer: the file's bytes (``uint8``; a view of the ``bytes`` given to the scanner).
        form: the trajectory form: ``triple``, ``plain`` or ``nested`` (flattened in order).
        id_starts, id_ends: each record's id, ``buffer[id_starts[k]:id_ends[k]]``: the text of a
            string id, the digits of an integer id (valid UTF-8; see :attr:`ids`).
        id_is_int: True where the id was a JSON integer rather than a string.
        offsets: record ``k``'s viewpoints are steps ``offsets[k]:offsets[k + 1]``.
        vp_starts, vp_ends: each step's viewpoint id, ``buffer[vp_starts[j]:vp_ends[j]]``.
    """

    buffer: np.ndarray = field(repr=False)
    form: str
    id_starts: np.ndarray = field(repr=False)
    id_ends: np.ndarray = field(repr=False)
    id_is_int: np.ndarray = field(repr=False)
    offsets: np.ndarray = field(repr=False)
    vp_starts: np.ndarray = field(repr=False)
    vp_ends: np.ndarray = field(repr=False)

    def __len__(self) -> int:
        return len(self.id_starts)

    @property
    def ids(self) -> list[str]:
        """Each record's id as text (decoded on each call; the spans are the stored form)."""
        return span_strings(self.buffer, self.id_starts, self.id_ends)

    @property
    def counts(self) -> np.ndarray:
        """The number of viewpoints of each record."""
        return np.diff(self.offsets)

    def viewpoints(self) -> list[str]:
        """Every step's viewpoint id as a string (for inspection; scoring uses the spans)."""
        return span_strings(self.buffer, self.vp_starts, self.vp_ends)


@dataclass(frozen=True, eq=False)
class ScannedEpisodes:
    """The fields of an R2R episode list (``R2R_<split>.json``), as byte spans into ``buffer``.

    Attributes:
        buffer: the file's bytes.
        path_ids: each record's ``path_id`` as text, in file order.
        path_id_is_int: True where ``path_id`` was a JSON integer.
        scans: each record's scan id (interned strings).
        headings: each record's ``heading`` (0.0 where absent), as msgspec decodes it.
        has_heading: whether the record has a ``heading``.
        has_distance: whether the record has a numeric ``distance`` (null counts as absent).
        path_offsets: record ``k``'s path is steps ``path_offsets[k]:path_offsets[k + 1]``.
        vp_starts, vp_ends: each path step's viewpoint id span.
        instruction_offsets: record ``k``'s instructions are
            ``instruction_offsets[k]:instruction_offsets[k + 1]``.
        instruction_starts, instruction_ends: each instruction's JSON string literal (quotes
            included, escapes as written); decode with :meth:`instructions`.
    """

    buffer: np.ndarray = field(repr=False)
    path_ids: list[str] = field(repr=False)
    path_id_is_int: np.ndarray = field(repr=False)
    scans: list[str] = field(repr=False)
    headings: np.ndarray = field(repr=False)
    has_heading: np.ndarray = field(repr=False)
    has_distance: np.ndarray = field(repr=False)
    path_offsets: np.ndarray = field(repr=False)
    vp_starts: np.ndarray = field(repr=False)
    vp_ends: np.ndarray = field(repr=False)
    instruction_offsets: np.ndarray = field(repr=False)
    instruction_starts: np.ndarray = field(repr=False)
    instruction_ends: np.ndarray = field(repr=False)
    _plain: np.ndarray = field(repr=False)

    def __len__(self) -> int:
        return len(self.path_ids)

    def paths(self) -> list[tuple[str, ...]]:
        """Each record's path as a tuple of interned viewpoint ids (one string per distinct id)."""
        texts, inverse = unique_strings(self.buffer, self.vp_starts, self.vp_ends)
        steps = np.asarray(texts, dtype=object)[inverse] if texts else np.zeros(0, object)
        off = self.path_offsets.tolist()
        return [tuple(steps[a:b]) for a, b in zip(off[:-1], off[1:], strict=True)]

    def instructions(self, which: np.ndarray | None = None) -> list[str]:
        """The decoded text of instructions ``which`` (default all, flat, in file order).

        ASCII instructions without escapes are cut from one gathered buffer; the others are
        decoded by msgspec in one call, so that unescaping is exactly msgspec's.
        """
        import msgspec

        idx = np.arange(len(self.instruction_starts)) if which is None else np.asarray(which)
        starts, ends = self.instruction_starts[idx], self.instruction_ends[idx]
        plain = self._plain[idx]
        out: list[str] = [""] * len(idx)
        simple = np.flatnonzero(plain)
        for k, text in zip(
            simple.tolist(),
            span_strings(self.buffer, starts[simple] + 1, ends[simple] - 1),
            strict=True,
        ):
            out[k] = text
        other = np.flatnonzero(~plain)
        if len(other):
            literals = _kernels().gather(self.buffer, starts[other], ends[other], 44)
            texts = msgspec.json.decode(b"[" + literals.tobytes() + b"]", type=list[str])
            for k, text in zip(other.tolist(), texts, strict=True):
                out[k] = text
        return out


def try_scan_predictions(
    raw: bytes | memoryview,
    *,
    id_field: str,
    key: str | Sequence[str],
    form: str = "auto",
    validated: bool = False,
) -> ScannedPredictions | Declined:
    """As :func:`scan_predictions`, but says why it declined.

    Example:
        >>> try_scan_predictions(b'[{"instr_id": 1.5, "trajectory": []}]', id_field="instr_id",
        ...                      key="trajectory")
        Declined(reason='an id is neither a string nor an integer', offset=14)
    """
    if form not in FORM_CODES:
        raise ValueError(f"unknown trajectory form {form!r}; expected one of {list(FORM_CODES)}")
    if not validated and not is_json(raw):
        return Declined("not valid JSON")
    buf = _buffer(raw)
    first = _kernels().first_element(buf)
    if first[0] < 0:
        return Declined(REASONS[1] if first[0] == -2 else "the file holds no predictions")
    chosen = key if isinstance(key, str) else _first_key(buf[first[0] : first[1]], key)
    if isinstance(chosen, Declined):
        return chosen
    if chosen == id_field:
        raise ValueError("the id field and the trajectory field must differ")
    keys, key_offsets = _pack_keys((id_field, chosen))
    status, offset, code, rows, starts, ends = _kernels().scan_predictions(
        buf, keys, key_offsets, FORM_CODES[form]
    )
    if status:
        return Declined(REASONS[status], int(offset))
    id_starts, id_ends = rows[:, 0].copy(), rows[:, 1].copy()
    try:  # one decode of all the ids together checks them
        _kernels().gather(buf, id_starts, id_ends, 10).tobytes().decode("utf-8")
    except UnicodeDecodeError:
        return Declined("an id is not valid UTF-8")
    return ScannedPredictions(
        buf,
        FORM_NAMES[code],
        id_starts,
        id_ends,
        rows[:, 2] == 2,
        _offsets(rows[:, 3]),
        starts,
        ends,
    )


def scan_predictions(
    raw: bytes | memoryview,
    *,
    id_field: str,
    key: str | Sequence[str],
    form: str = "auto",
    validated: bool = False,
) -> ScannedPredictions | None:
    """Scans a JSON list of prediction records ``{id_field: ..., key: [...], ...}``.

    Args:
        raw: the file's bytes (gunzipped).
        id_field: the id field (``instr_id``...): a string without escapes, or an integer.
        key: the trajectory field; or candidates, the first present in the first record
            being required in every record.
        form: ``auto`` (detected from the first step of the first record, as the validating
            parser does), ``triple``, ``plain`` or ``nested``; every record must have it.
        validated: the caller has already checked that ``raw`` is valid JSON.

    Returns:
        The spans, or None when the file needs the validating path. Empty trajectories are
        returned with no steps (except the first record's, under ``auto``): the caller decides.

    Example:
        >>> scan_predictions(b'[{"instr_id": "1_0", "trajectory": ["a", "b"]}, 7]',
        ...                  id_field="instr_id", key="trajectory") is None
        True
    """
    out = try_scan_predictions(raw, id_field=id_field, key=key, form=form, validated=validated)
    return None if isinstance(out, Declined) else out


def _first_key(record: np.ndarray, candidates: Sequence[str]) -> str | Declined:
    """The first of ``candidates`` that the (first) ``record`` has."""
    import msgspec

    try:
        first = msgspec.json.decode(record.tobytes())
    except msgspec.MsgspecError as exc:
        return Declined(f"the first record cannot be decoded ({exc})")
    if not isinstance(first, dict):
        return Declined(REASONS[2])
    chosen = next((k for k in candidates if k in first), None)
    if chosen is None:
        return Declined(
            "the first record has none of the trajectory fields " + ", ".join(candidates)
        )
    return chosen


def try_scan_r2r_episodes(
    raw: bytes | memoryview, *, validated: bool = False
) -> ScannedEpisodes | Declined:
    """As :func:`scan_r2r_episodes`, but says why it declined.

    Example:
        >>> try_scan_r2r_episodes(b'[{"path_id": 1, "path": ["a"]}]')
        Declined(reason='a record has no scan field', offset=30)
    """
    if not validated and not is_json(raw):
        return Declined("not valid JSON")
    buf = _buffer(raw)
    k = _kernels()
    status, offset, rows, vs, ve, ts, te = k.scan_episodes(buf, *_pack_keys(EPISODE_KEYS))
    if status:
        return Declined(REASONS[status], int(offset))
    plain = k.plain_ascii(buf, ts, te)
    try:
        _check_instructions(buf, ts[~plain], te[~plain])
        pids = span_strings(buf, rows[:, k.COL_PID_START], rows[:, k.COL_PID_END])
        scan_texts, scan_of = unique_strings(
            buf, rows[:, k.COL_SCAN_START], rows[:, k.COL_SCAN_END]
        )
    except (UnicodeDecodeError, ValueError):
        return Declined("a string is not valid UTF-8 or not decodable")
    has_heading = rows[:, k.COL_HEADING_START] >= 0
    return ScannedEpisodes(
        buf,
        pids,
        rows[:, k.COL_PID_KIND] == k.KIND_INT,
        [scan_texts[i] for i in scan_of.tolist()],
        _headings(buf, rows[:, k.COL_HEADING_START], rows[:, k.COL_HEADING_END], has_heading),
        has_heading,
        rows[:, k.COL_DISTANCE] == 1,
        _offsets(rows[:, k.COL_PATH_COUNT]),
        vs,
        ve,
        _offsets(rows[:, k.COL_INSTR_COUNT]),
        ts,
        te,
        plain,
    )


def scan_r2r_episodes(
    raw: bytes | memoryview, *, validated: bool = False
) -> ScannedEpisodes | None:
    """Scans an R2R episode list ``[{path_id, scan, path, heading?, instructions?, distance?}]``.

    ``path_id`` is a string without escapes or an integer; ``scan`` and the path's viewpoint
    ids are strings without escapes; ``heading`` and ``distance`` are numbers (``distance`` may
    be null); ``instructions`` is a list of strings (any escapes). Other fields may hold anything.

    Returns:
        The spans, or None when the file needs the validating path. Empty paths and records
        without instructions are returned as they are: the caller decides.

    Example:
        >>> eps = scan_r2r_episodes(b'[{"scan": "s1", "path_id": 4, "path": ["a", "b"],'
        ...                         b' "instructions": ["Go \\\\"up\\\\"."], "heading": 1}]')
        >>> eps.path_ids, eps.scans, eps.headings.tolist(), eps.paths(), eps.instructions()
        (['4'], ['s1'], [1.0], [('a', 'b')], ['Go "up".'])
    """
    out = try_scan_r2r_episodes(raw, validated=validated)
    return None if isinstance(out, Declined) else out


def _check_instructions(buf: np.ndarray, starts: np.ndarray, ends: np.ndarray) -> None:
    """Decodes the instructions that are not plain ASCII once, so that invalid UTF-8 declines
    now rather than when the text is asked for."""
    import msgspec

    if len(starts):
        literals = _kernels().gather(buf, starts, ends, 44)
        try:
            msgspec.json.decode(b"[" + literals.tobytes() + b"]", type=list[str])
        except msgspec.MsgspecError as exc:
            raise ValueError(str(exc)) from exc


def _headings(
    buf: np.ndarray, starts: np.ndarray, ends: np.ndarray, present: np.ndarray
) -> np.ndarray:
    """The numbers of the heading spans, parsed by msgspec in one call (0.0 where absent)."""
    import msgspec

    out = np.zeros(len(starts), dtype=np.float64)
    idx = np.flatnonzero(present)
    if len(idx):
        text = _kernels().gather(buf, starts[idx], ends[idx], 44).tobytes()
        out[idx] = msgspec.json.decode(b"[" + text + b"]", type=list[float])
    return out


@dataclass(frozen=True, eq=False)
class ViewpointTable:
    """Every viewpoint id of a set of scans, for compiled lookups of byte spans.

    An open-addressing hash table over the ids. A Matterport3D id (32 lower-case hexadecimal
    digits) is read as two 64-bit numbers, which are hashed and compared; any other id text (a
    test graph's ``"A"``) is hashed and compared by its bytes, so every id works and a hit is
    always exact. An id that several scans share is found by :meth:`lookup_in` in the scan asked
    for, and is ambiguous (-1) for :meth:`lookup`.

    Attributes:
        blob: the ids' UTF-8 bytes, concatenated; entry ``e`` is ``blob[starts[e]:ends[e]]``.
        scan, node: entry ``e`` is node ``node[e]`` of scan position ``scan[e]``.
        hashes, slots: the hash of each entry, and the table (entry index, -1 where free).
        is_hex, high, low: whether entry ``e`` is 32 lower-case hexadecimal digits, read as
            the two 64-bit numbers ``high``, ``low`` (compared instead of the bytes).

    Example:
        >>> table = ViewpointTable.from_ids([["a", "b"], ["c"]])
        >>> scans, nodes = table.lookup(b"c b x", np.array([0, 2, 4]), np.array([1, 3, 5]))
        >>> scans.tolist(), nodes.tolist()
        ([1, 0, -1], [0, 1, -1])
    """

    blob: np.ndarray = field(repr=False)
    starts: np.ndarray = field(repr=False)
    ends: np.ndarray = field(repr=False)
    scan: np.ndarray = field(repr=False)
    node: np.ndarray = field(repr=False)
    hashes: np.ndarray = field(repr=False)
    slots: np.ndarray = field(repr=False)
    is_hex: np.ndarray = field(repr=False)
    high: np.ndarray = field(repr=False)
    low: np.ndarray = field(repr=False)
    n_scans: int

    @classmethod
    def from_ids(cls, ids_per_scan: Sequence[Sequence[str]]) -> ViewpointTable:
        """The table of ``ids_per_scan[s][k]`` = node ``k`` of scan position ``s``."""
        encoded = [vp.encode() for ids in ids_per_scan for vp in ids]
        sizes = np.fromiter(map(len, encoded), dtype=np.int64, count=len(encoded))
        ends = np.cumsum(sizes)
        starts = ends - sizes
        blob = np.frombuffer(b"".join(encoded) or b"\0", dtype=np.uint8)
        scan = np.repeat(
            np.arange(len(ids_per_scan), dtype=np.int32), [len(s) for s in ids_per_scan]
        )
        node = np.concatenate(
            [np.arange(len(s), dtype=np.int32) for s in ids_per_scan] or [np.zeros(0, np.int32)]
        )
        hashes, slots, is_hex, high, low = _kernels().hash_table(blob, starts, ends)
        return cls(
            blob, starts, ends, scan, node, hashes, slots, is_hex, high, low, len(ids_per_scan)
        )

    def __len__(self) -> int:
        return len(self.starts)

    def _run(
        self,
        raw: Buffer,
        starts: np.ndarray,
        ends: np.ndarray,
        want: np.ndarray,
        use: bool,
    ) -> tuple[np.ndarray, np.ndarray]:
        return _kernels().lookup(
            _buffer(raw),
            _int64(starts),
            _int64(ends),
            want,
            use,
            self.blob,
            (self.starts, self.ends, self.hashes, self.slots, self.is_hex, self.high, self.low),
            self.scan,
            self.node,
        )

    def lookup(
        self, raw: Buffer, starts: np.ndarray, ends: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray]:
        """(scan position, node index) of each span of ``raw``; both -1 where the id is unknown
        or held by several scans."""
        return self._run(raw, starts, ends, np.zeros(0, np.int32), False)

    def lookup_in(
        self, raw: Buffer, starts: np.ndarray, ends: np.ndarray, scans: np.ndarray
    ) -> np.ndarray:
        """Node index of each span in scan position ``scans[j]``; -1 where that scan lacks it."""
        want = np.ascontiguousarray(scans, dtype=np.int32)
        if len(want) != len(starts):
            raise ValueError("one scan position per span is needed")
        return self._run(raw, starts, ends, want, True)[1]
