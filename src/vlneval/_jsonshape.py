"""A structural scan of JSON bytes that measures a file before anything decodes it.

Before a JSON text is decoded into Python objects the scan measures how deep lists and objects
nest, how many values there are, and the longest string and number literal. A file past a limit
is refused with its line and byte offset, before a decoder could recurse too deep, build a
billion-element list or parse a 100,000-digit integer.

The scan works a chunk at a time on the *structural* bytes only (quotes, brackets, commas and
backslashes, found by ``bytes.translate``), which are a small fraction of a predictions file.
A quote is escaped when an odd run of backslashes precedes it. Bytes that are not valid JSON may
make the scan misjudge what follows them, but the decoder that runs afterwards stops at the
first invalid byte, so nothing the scan misjudged is ever decoded.

The server scans every upload; the file reader (:mod:`vlneval.io`) scans only the files msgspec
rejects, before its explaining pass hands them to Python's ``json``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["JsonShape", "scan_json", "ScanLimits"]

CHUNK = 1 << 22
OPEN, CLOSE, QUOTE, COMMA, BACKSLASH = 1, 2, 3, 4, 5


def _table(codes: dict[bytes, int]) -> bytes:
    """A ``bytes.translate`` table mapping each listed byte to its code and the rest to 0."""
    table = bytearray(256)
    for chars, code in codes.items():
        for byte in chars:
            table[byte] = code
    return bytes(table)


STRUCT = _table({b"[{": OPEN, b"]}": CLOSE, b'"': QUOTE, b",": COMMA, b"\\": BACKSLASH})
NUMERIC = _table({b"0123456789+-.eE": 1})


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

    def cross(self, what: str, offset: int) -> None:
        """Records the first limit crossed."""
        if self.exceeded is None:
            self.exceeded, self.offset = what, int(offset)


class _State:
    """What carries over from one chunk to the next."""

    def __init__(self) -> None:
        self.in_string = False
        self.string_start = 0
        self.backslashes = 0
        self.depth = 0
        self.number_run = 0


def _escaped(pos: np.ndarray, codes: np.ndarray, st: _State) -> np.ndarray:
    """For each structural byte, whether an odd run of backslashes directly precedes it.

    Every backslash is a structural byte, so the bytes just before ``pos[k]`` are backslashes
    exactly when the entries before ``k`` are backslashes at consecutive offsets.
    """
    n = len(pos)
    bs = codes == BACKSLASH
    idx = np.arange(n, dtype=np.int64)
    adjacent = np.zeros(n, dtype=np.bool_)  # entry k-1 is a backslash right before entry k
    adjacent[1:] = bs[:-1] & (np.diff(pos) == 1)
    run_start = np.maximum.accumulate(np.where(bs & ~(adjacent & bs), idx, -1))
    run_len = np.where(bs, idx - run_start + 1, 0)
    before = np.zeros(n, dtype=np.int64)
    before[1:] = np.where(adjacent[1:], run_len[:-1], 0)
    # a run that starts at the chunk's first byte continues the previous chunk's trailing run
    from_start = np.zeros(n, dtype=np.bool_)
    from_start[1:] = adjacent[1:] & (pos[np.maximum(run_start[:-1], 0)] == 0)
    before += np.where(from_start, st.backslashes, 0)
    if n and pos[0] == 0:
        before[0] = st.backslashes
    return before % 2 == 1


def _trailing_backslashes(chunk: bytes, st: _State) -> int:
    stripped = len(chunk) - len(chunk.rstrip(b"\\"))
    return st.backslashes + stripped if stripped == len(chunk) else stripped


def _strings(real: np.ndarray, end: int, st: _State, shape: JsonShape, lim: ScanLimits) -> None:
    """Measures the strings that close in this chunk; tracks the one left open."""
    was_in = st.in_string
    opens = real[1::2] if was_in else real[0::2]
    closes = real[0::2] if was_in else real[1::2]
    starts = np.concatenate([[st.string_start], opens]) if was_in else opens
    n = min(len(starts), len(closes))
    if n:
        lengths = closes[:n] - starts[:n] - 1
        k = int(np.argmax(lengths))
        shape.longest_string = max(shape.longest_string, int(lengths[k]))
        if lim.max_string is not None and lengths[k] > lim.max_string:
            shape.cross("string", starts[k])
    st.in_string = was_in ^ bool(len(real) % 2)
    if st.in_string:
        if len(starts) > n:
            st.string_start = int(starts[-1])
        if lim.max_string is not None and end - st.string_start - 1 > lim.max_string:
            shape.cross("string", st.string_start)


def _numbers(chunk: bytes, base: int, real: np.ndarray, was_in: bool, st: _State,
             shape: JsonShape, lim: ScanLimits) -> None:  # fmt: skip
    """The longest run of number characters outside strings (a run may span chunks).

    Runs inside strings (digits of hexadecimal ids) are many and short; lengths are tried from
    the longest down, so only a few runs are ever located against the quotes.
    """
    num = np.frombuffer(chunk.translate(NUMERIC), dtype=np.int8)
    edges = np.flatnonzero(np.diff(num, prepend=np.int8(0), append=np.int8(0)))
    if len(edges) == 0:
        st.number_run = 0
        return
    starts, ends = edges[0::2], edges[1::2]
    lengths = ends - starts

    def outside(sel: np.ndarray) -> np.ndarray:
        return ((np.searchsorted(real, starts[sel] + base) + int(was_in)) % 2) == 0

    first_out = bool(outside(np.array([0]))[0])
    if starts[0] == 0 and first_out:
        lengths[0] += st.number_run
    last_out = bool(outside(np.array([len(starts) - 1]))[0])
    st.number_run = int(lengths[-1]) if ends[-1] == len(num) and last_out else 0
    for length in np.unique(lengths)[::-1]:
        if length <= shape.longest_number:
            return
        sel = np.flatnonzero(lengths == length)
        hit = sel[outside(sel)]
        if len(hit):
            shape.longest_number = int(length)
            if lim.max_number is not None and length > lim.max_number:
                shape.cross("number", base + starts[hit[0]])
            return


def _scan_chunk(chunk: bytes, base: int, st: _State, shape: JsonShape, lim: ScanLimits) -> None:
    codes_all = np.frombuffer(chunk.translate(STRUCT), dtype=np.uint8)
    pos = np.flatnonzero(codes_all)
    codes = codes_all[pos]
    was_in = st.in_string
    quote = codes == QUOTE
    if b"\\" in chunk or st.backslashes:
        quote &= ~_escaped(pos, codes, st)
    st.backslashes = _trailing_backslashes(chunk, st)
    real = pos[quote] + base
    _strings(real, base + len(chunk), st, shape, lim)
    inside = (np.bitwise_xor.accumulate(quote.astype(np.uint8)) ^ np.uint8(was_in)).astype(np.bool_)
    outside = ~inside & ~quote
    opens = outside & (codes == OPEN)
    step = opens.astype(np.int64) - (outside & (codes == CLOSE))
    if len(step):
        depth = np.cumsum(step) + st.depth
        k = int(np.argmax(depth))
        shape.depth = max(shape.depth, int(depth[k]))
        if lim.max_depth is not None and depth[k] > lim.max_depth:
            shape.cross("depth", base + pos[int(np.argmax(depth > lim.max_depth))])
        st.depth = int(depth[-1])
    shape.values += int(np.count_nonzero(outside & (codes == COMMA))) + int(np.count_nonzero(opens))
    if lim.max_values is not None and shape.values > lim.max_values:
        shape.cross("values", base)
    _numbers(chunk, base, real, was_in, st, shape, lim)


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
    view = memoryview(raw)
    for base in range(0, len(raw), chunk):
        _scan_chunk(bytes(view[base : base + chunk]), base, st, shape, lim)
        if shape.exceeded is not None:
            break
    return shape
