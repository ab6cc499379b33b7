"""A structural pre-scan of JSON bytes, so that no hostile file is ever decoded.

Before a JSON text is decoded into Python objects the scan measures, in vectorised passes over
chunks of the bytes, how deep lists and objects nest, how many values there are, and the longest
string and number literal. A file past a limit is refused with its line and byte offset, before
a decoder could recurse too deep, build a billion-element list or parse a 100,000-digit integer.

Escaped quotes are found by the parity of the backslash run before each quote. Bytes that are
not valid JSON may make the scan misjudge what follows them, but the decoder that runs afterwards
stops at the first invalid byte, so nothing the scan misjudged is ever decoded.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["JsonShape", "scan_json", "ScanLimits"]

CHUNK = 1 << 22
_NUMERIC = np.zeros(256, dtype=np.bool_)
_NUMERIC[list(b"0123456789+-.eE")] = True


@dataclass(frozen=True)
class ScanLimits:
    """Where the scan stops; ``None`` is no limit."""

    max_depth: int | None = None
    max_values: int | None = None
    max_string: int | None = None
    max_number: int | None = None


@dataclass
class JsonShape:
    """What the scan measured, and the first limit crossed (if any).

    Attributes:
        depth: deepest nesting of lists and objects.
        values: an upper bound on the number of JSON values (commas + containers + 1).
        longest_string: bytes in the longest string literal, quotes excluded.
        longest_number: characters in the longest number literal.
        exceeded: ``"depth"``, ``"values"``, ``"string"`` or ``"number"`` when a limit was crossed.
        offset: the byte offset where it was crossed.
    """

    depth: int = 0
    values: int = 1
    longest_string: int = 0
    longest_number: int = 0
    exceeded: str | None = None
    offset: int = 0


class _State:
    def __init__(self) -> None:
        self.in_string = False
        self.string_start = 0
        self.backslashes = 0
        self.depth = 0
        self.number_run = 0


def _real_quotes(b: np.ndarray, st: _State) -> np.ndarray:
    """Chunk-local offsets of the quotes that no odd run of backslashes escapes."""
    qi = np.flatnonzero(b == 34)
    if len(qi) == 0:
        return qi
    last_non = np.maximum.accumulate(np.where(b == 92, -1, np.arange(len(b), dtype=np.int64)))
    prev = qi - 1
    lp = np.where(prev >= 0, last_non[np.maximum(prev, 0)], -1)
    run = np.where(prev >= 0, prev - lp, 0) + np.where(lp == -1, st.backslashes, 0)
    return qi[run % 2 == 0]


def _trailing_backslashes(b: np.ndarray, st: _State) -> int:
    nz = np.flatnonzero(b != 92)
    if len(nz) == 0:
        return st.backslashes + len(b)
    return len(b) - 1 - int(nz[-1])


def _strings(real: np.ndarray, base: int, st: _State, shape: JsonShape, lim: ScanLimits) -> None:
    """Measures the strings that close in this chunk; tracks the one left open."""
    pos = real.astype(np.int64) + base
    first_is_close = st.in_string
    opens = pos[1::2] if first_is_close else pos[0::2]
    closes = pos[0::2] if first_is_close else pos[1::2]
    starts = np.concatenate([[st.string_start], opens]) if first_is_close else opens
    n = min(len(starts), len(closes))
    if n:
        lengths = closes[:n] - starts[:n] - 1
        k = int(np.argmax(lengths))
        shape.longest_string = max(shape.longest_string, int(lengths[k]))
        if lim.max_string is not None and lengths[k] > lim.max_string and shape.exceeded is None:
            shape.exceeded, shape.offset = "string", int(starts[k])
    if len(real) % 2:
        st.in_string = not st.in_string
    if st.in_string:
        st.string_start = int(starts[-1]) if len(starts) > n else st.string_start


def _scan_chunk(b: np.ndarray, base: int, st: _State, shape: JsonShape, lim: ScanLimits) -> None:
    was_in = st.in_string
    real = _real_quotes(b, st)
    st.backslashes = _trailing_backslashes(b, st)
    _strings(real, base, st, shape, lim)
    toggles = np.zeros(len(b), dtype=np.int8)
    toggles[real] = 1
    inside = (np.cumsum(toggles, dtype=np.int32) + int(was_in)) & 1
    if lim.max_string is not None and st.in_string and shape.exceeded is None:
        open_len = base + len(b) - st.string_start - 1
        if open_len > lim.max_string:
            shape.exceeded, shape.offset = "string", st.string_start
    outside = inside == 0
    outside[real] = False
    opens = outside & ((b == 91) | (b == 123))
    closes = outside & ((b == 93) | (b == 125))
    step = opens.astype(np.int32) - closes.astype(np.int32)
    depth = np.cumsum(step, dtype=np.int64) + st.depth
    if len(depth):
        k = int(np.argmax(depth))
        shape.depth = max(shape.depth, int(depth[k]))
        if lim.max_depth is not None and depth[k] > lim.max_depth and shape.exceeded is None:
            over = int(np.argmax(depth > lim.max_depth))
            shape.exceeded, shape.offset = "depth", base + over
        st.depth = int(depth[-1])
    shape.values += int(np.count_nonzero(outside & (b == 44))) + int(np.count_nonzero(opens))
    if lim.max_values is not None and shape.values > lim.max_values and shape.exceeded is None:
        shape.exceeded, shape.offset = "values", base
    _numbers(outside & _NUMERIC[b], base, st, shape, lim)


def _numbers(mask: np.ndarray, base: int, st: _State, shape: JsonShape, lim: ScanLimits) -> None:
    if not len(mask):
        return
    m = np.concatenate([[False], mask, [False]]).astype(np.int8)
    d = np.diff(m)
    starts, ends = np.flatnonzero(d == 1), np.flatnonzero(d == -1)
    if len(starts) == 0:
        st.number_run = 0
        return
    lengths = ends - starts
    if starts[0] == 0:
        lengths[0] += st.number_run
    k = int(np.argmax(lengths))
    shape.longest_number = max(shape.longest_number, int(lengths[k]))
    if lim.max_number is not None and lengths[k] > lim.max_number and shape.exceeded is None:
        shape.exceeded, shape.offset = "number", base + int(starts[k])
    st.number_run = int(lengths[-1]) if ends[-1] == len(mask) else 0


def scan_json(raw: bytes, limits: ScanLimits | None = None, *, chunk: int = CHUNK) -> JsonShape:
    """Measures the structure of the JSON text ``raw`` without decoding it.

    Stops at the first chunk in which a limit is crossed.

    Example:
        >>> s = scan_json(b'[{"id": "a\\\\"]", "t": [[1, 2.5]]}]')
        >>> s.depth, s.values, s.longest_string, s.longest_number
        (4, 7, 4, 3)
        >>> scan_json(b"[[[[1]]]]", ScanLimits(max_depth=3)).exceeded
        'depth'
    """
    lim = limits or ScanLimits()
    shape, st = JsonShape(), _State()
    view = np.frombuffer(raw, dtype=np.uint8)
    for base in range(0, len(view), chunk):
        _scan_chunk(view[base : base + chunk], base, st, shape, lim)
        if shape.exceeded is not None:
            break
    return shape
