# Explicit comparisons and loops compile to plain branches in numba; keep them.
# ruff: noqa: SIM109, SIM110
"""Numba cores of the field scanner (:mod:`vlneval.data.scan`).

Private. Every core reads a JSON document as a ``uint8`` array and returns byte spans into it;
none creates a Python object per field. The input has passed a strict syntax check (msgspec)
before, so the cores only follow the structure; every read is still bounds-checked, so that
invalid input can make a core decline but never read outside the buffer.

A core returns a status first: 0 when it read the file, else a ``DECLINE_*`` code (the Python
side turns it into a reason) and the byte offset where it stopped.

Importing this module imports numba; :mod:`vlneval.data.scan` imports it on first use.
"""

from __future__ import annotations

import numba
import numpy as np
from numba import types
from numba.extending import intrinsic

from vlneval.data._words import has_byte, load_u64

_jit = numba.njit(cache=True, nogil=True)

QUOTE, BACKSLASH, COMMA, COLON, MINUS, DOT = 34, 92, 44, 58, 45, 46
LBRACK, RBRACK, LBRACE, RBRACE = 91, 93, 123, 125
QUOTES, BACKSLASHES = np.uint64(0x2222222222222222), np.uint64(0x5C5C5C5C5C5C5C5C)

# Trajectory forms.
AUTO, TRIPLE, PLAIN, NESTED = 0, 1, 2, 3
# Kinds of an id value.
KIND_STRING, KIND_INT = 1, 2
# Number classes returned by ``number_end``.
NOT_NUMBER, UNSAFE, INTEGER, REAL = 0, -1, 1, 2
# Where a number is read as a float, its integer digits plus its (positive) exponent may not
# pass this, so that the value is below 1e300 and finite (the largest double is 1.8e308).
MAX_DIGITS = 300

DECLINE_NOT_LIST = 1
DECLINE_NOT_OBJECT = 2
DECLINE_ESCAPED_KEY = 3
DECLINE_DUPLICATE_KEY = 4
DECLINE_MISSING_ID = 5
DECLINE_ID_TYPE = 6
DECLINE_ESCAPED_STRING = 7
DECLINE_MISSING_TRAJECTORY = 8
DECLINE_NOT_ARRAY = 9
DECLINE_STEP_SHAPE = 10
DECLINE_NOT_STRING = 11
DECLINE_NUMBER = 12
DECLINE_UNDETECTABLE = 13
DECLINE_MALFORMED = 14
DECLINE_MISSING_SCAN = 15
DECLINE_MISSING_PATH = 16
DECLINE_NULL_OR_TYPE = 17
# Not a decline: the span arrays are full; the caller grows them and reads the record again.
FULL = 99

# Episode fields, in the order of the key table the Python side passes.
EP_PATH_ID, EP_SCAN, EP_PATH, EP_HEADING, EP_INSTRUCTIONS, EP_DISTANCE = 0, 1, 2, 3, 4, 5


# --- borrowed views ----------------------------------------------------------------------------
# Every array handed to a compiled helper costs an atomic reference-count increment and
# decrement per call, which is most of the time of a parser that calls small helpers per byte
# range. The entry points therefore pass the helpers views without an owner (``borrow_*``), made
# from the data pointer, while they themselves keep the owning arrays alive.


@intrinsic
def _u8_pointer(typingctx, address):
    def codegen(context, builder, signature, args):
        return builder.inttoptr(args[0], context.get_value_type(types.CPointer(types.uint8)))

    return types.CPointer(types.uint8)(types.uintp), codegen


@intrinsic
def _i64_pointer(typingctx, address):
    def codegen(context, builder, signature, args):
        return builder.inttoptr(args[0], context.get_value_type(types.CPointer(types.int64)))

    return types.CPointer(types.int64)(types.uintp), codegen


@_jit
def borrow_u8(a):
    """An ownerless view of the C-contiguous ``uint8`` vector ``a`` (keep ``a`` alive)."""
    return numba.carray(_u8_pointer(a.ctypes.data), a.shape[0])  # type: ignore[call-arg]


@_jit
def borrow_i64(a):
    """An ownerless view of the C-contiguous ``int64`` vector ``a`` (keep ``a`` alive)."""
    return numba.carray(_i64_pointer(a.ctypes.data), a.shape[0])  # type: ignore[call-arg]


@_jit
def borrow_rows(a):
    """An ownerless view of the C-contiguous ``int64`` matrix ``a`` (keep ``a`` alive)."""
    return numba.carray(_i64_pointer(a.ctypes.data), (a.shape[0], a.shape[1]))  # type: ignore[call-arg]


@_jit
def at(buf, i, n):
    """``buf[i]``, or 0 past the end."""
    if i < n:
        return buf[i]
    return 0


@_jit
def ws(buf, i, n):
    """The first offset at or after ``i`` that is not JSON whitespace."""
    # (Loop shapes here are chosen for speed: the condition in the loop header, no break.)
    if i < n and buf[i] > 32:
        return i
    while i < n and (buf[i] == 32 or buf[i] == 10 or buf[i] == 13 or buf[i] == 9):
        i += 1
    return i


@_jit
def string_end(buf, i, n):
    """Offset of the closing quote of the string opening at ``i`` (-1 if none), and whether it
    holds an escape sequence."""
    j = i + 1
    while j + 8 <= n:  # eight bytes at a time while none is a quote or a backslash
        w = load_u64(buf, j)  # type: ignore[call-arg,var-annotated]
        if has_byte(w, QUOTES) or has_byte(w, BACKSLASHES):
            break
        j += 8
    while j < n and buf[j] != QUOTE and buf[j] != BACKSLASH:
        j += 1
    if j < n and buf[j] == QUOTE:
        return j, False
    while j < n and buf[j] != QUOTE:
        j += 2 if buf[j] == BACKSLASH else 1
    return (j if j < n else -1), True


@_jit
def number_end(buf, i, n):
    """End of the JSON number at ``i`` and its class (``NOT_NUMBER``, ``INTEGER``, ``REAL``,
    or ``UNSAFE`` when it might not be a finite float)."""
    j = i + 1 if i < n and buf[i] == MINUS else i
    d0 = j
    while j < n and buf[j] >= 48 and buf[j] <= 57:
        j += 1
    int_digits = j - d0
    if int_digits == 0:
        return i, NOT_NUMBER
    kind = INTEGER
    if j < n and buf[j] == DOT:
        f0 = j + 1
        j = f0
        while j < n and buf[j] >= 48 and buf[j] <= 57:
            j += 1
        if j == f0:
            return i, NOT_NUMBER
        kind = REAL
    if j < n and (buf[j] == 101 or buf[j] == 69):  # e, E
        j += 1
        negative = j < n and buf[j] == MINUS
        if j < n and (buf[j] == MINUS or buf[j] == 43):
            j += 1
        e0 = j
        exponent = 0
        while j < n and buf[j] >= 48 and buf[j] <= 57:
            exponent = min(exponent * 10 + (buf[j] - 48), 100000)
            j += 1
        if j == e0:
            return i, NOT_NUMBER
        if not negative:  # a negative exponent only rounds towards 0.0, which is finite
            int_digits += exponent
        kind = REAL
    if int_digits > MAX_DIGITS:
        return j, UNSAFE
    return j, kind


@_jit
def skip_value(buf, i, n):
    """Offset just past the JSON value at ``i`` (-1 if the input ends first)."""
    c = at(buf, i, n)
    if c == QUOTE:
        e, _ = string_end(buf, i, n)
        return e + 1 if e >= 0 else -1
    if c == LBRACE or c == LBRACK:
        depth = 0
        j = i
        while j < n:
            c = buf[j]
            if c == QUOTE:
                e, _ = string_end(buf, j, n)
                if e < 0:
                    return -1
                j = e + 1
                continue
            if c == LBRACE or c == LBRACK:
                depth += 1
            elif c == RBRACE or c == RBRACK:
                depth -= 1
                if depth == 0:
                    return j + 1
            j += 1
        return -1
    j = i
    while j < n:
        c = buf[j]
        if c == COMMA or c == RBRACE or c == RBRACK or c == 32 or c == 10 or c == 13 or c == 9:
            break
        j += 1
    return j if j > i else -1


@_jit
def match_key(buf, a, b, keys, key_offsets):
    """Index of the key equal to ``buf[a:b]`` in the packed ``keys``, or -1."""
    size = b - a
    for k in range(key_offsets.shape[0] - 1):
        k0 = key_offsets[k]
        if key_offsets[k + 1] - k0 != size:
            continue
        same = True
        for t in range(size):
            if buf[a + t] != keys[k0 + t]:
                same = False
                break
        if same:
            return k
    return -1


@_jit
def key_colon(buf, i, n, keys, key_offsets):
    """Reads ``"key" :`` at ``i``: (status, key index, offset of the value)."""
    if at(buf, i, n) != QUOTE:
        return DECLINE_MALFORMED, -1, i
    e, escaped = string_end(buf, i, n)
    if e < 0:
        return DECLINE_MALFORMED, -1, i
    if escaped:
        return DECLINE_ESCAPED_KEY, -1, i
    k = match_key(buf, i + 1, e, keys, key_offsets)
    j = ws(buf, e + 1, n)
    if at(buf, j, n) != COLON:
        return DECLINE_MALFORMED, -1, j
    return 0, k, ws(buf, j + 1, n)


@_jit
def after_member(buf, i, n, close):
    """After a value inside a container: (status, next offset, whether the container closed)."""
    j = ws(buf, i, n)
    c = at(buf, j, n)
    if c == COMMA:
        return 0, ws(buf, j + 1, n), False
    if c == close:
        return 0, j + 1, True
    return DECLINE_MALFORMED, j, False


@_jit
def plain_string(buf, i, n):
    """A string without escapes at ``i``: (status, content start, content end, next offset)."""
    if at(buf, i, n) != QUOTE:
        return DECLINE_NOT_STRING, 0, 0, i
    e, escaped = string_end(buf, i, n)
    if e < 0:
        return DECLINE_MALFORMED, 0, 0, i
    if escaped:
        return DECLINE_ESCAPED_STRING, 0, 0, i
    return 0, i + 1, e, e + 1


@_jit
def id_value(buf, i, n):
    """A string (no escapes) or integer id: (status, start, end, kind, next offset)."""
    c = at(buf, i, n)
    if c == QUOTE:
        status, a, b, j = plain_string(buf, i, n)
        return status, a, b, KIND_STRING, j
    j, kind = number_end(buf, i, n)
    if kind == NOT_NUMBER:
        return DECLINE_ID_TYPE, 0, 0, 0, i
    if kind == REAL or (j - i == 2 and c == MINUS and buf[i + 1] == 48):
        return DECLINE_ID_TYPE, 0, 0, 0, i  # a float, or -0 (whose str() is "0")
    return 0, i, j, KIND_INT, j


@_jit
def float_value(buf, i, n):
    """A JSON number read as a finite float: (status, start, end, next offset)."""
    j, kind = number_end(buf, i, n)
    if kind == NOT_NUMBER:
        return DECLINE_NULL_OR_TYPE, 0, 0, i
    if kind == UNSAFE:
        return DECLINE_NUMBER, 0, 0, i
    return 0, i, j, j


@_jit
def grow(a, need):
    """``a`` itself when it holds ``need`` items, else a copy with at least twice the room."""
    if need <= a.shape[0]:
        return a
    out = np.empty(max(need, 2 * a.shape[0]), a.dtype)
    for t in range(a.shape[0]):
        out[t] = a[t]
    return out


@_jit
def grow_rows(a, need):
    """``a`` itself when it has ``need`` rows, else a copy with at least twice the rows."""
    if need <= a.shape[0]:
        return a
    out = np.empty((max(need, 2 * a.shape[0]), a.shape[1]), a.dtype)
    for t in range(a.shape[0]):
        for c in range(a.shape[1]):
            out[t, c] = a[t, c]
    return out


@_jit
def first_element(buf):
    """The byte span of the first element of the top-level array; (-1, -1) if the array is
    empty, (-2, -2) if the top level is not an array."""
    n = buf.shape[0]
    i = ws(buf, 0, n)
    if at(buf, i, n) != LBRACK:
        return -2, -2
    j = ws(buf, i + 1, n)
    if at(buf, j, n) == RBRACK:
        return -1, -1
    e = skip_value(buf, j, n)
    return (j, e) if e > 0 else (-1, -1)


# --- predictions -------------------------------------------------------------------------------


@_jit
def detect_form(buf, j, n):
    """The form of a trajectory whose first step is at ``j``, by the rules of
    ``vlneval.data.predictions._detect`` (``TRIPLE`` when nothing else fits)."""
    c = at(buf, j, n)
    if c == QUOTE:
        return PLAIN
    if c != LBRACK:
        return TRIPLE
    k = ws(buf, j + 1, n)
    if at(buf, k, n) == RBRACK:
        return TRIPLE
    count = 0
    all_strings = True
    first_string = False
    second_string = False
    while True:
        is_string = at(buf, k, n) == QUOTE
        if count == 0:
            first_string = is_string
        elif count == 1:
            second_string = is_string
        all_strings = all_strings and is_string
        k = skip_value(buf, k, n)
        if k < 0:
            return TRIPLE
        count += 1
        k = ws(buf, k, n)
        if at(buf, k, n) != COMMA:
            break
        k = ws(buf, k + 1, n)
    if count == 3 and first_string and not second_string:
        return TRIPLE
    return NESTED if all_strings else TRIPLE


@_jit
def triple_step(buf, j, n):
    """``[viewpoint, number, number]`` at ``j``: (status, start, end, next offset)."""
    if at(buf, j, n) != LBRACK:
        return DECLINE_STEP_SHAPE, 0, 0, j
    status, a, b, j = plain_string(buf, ws(buf, j + 1, n), n)
    if status:
        return (DECLINE_STEP_SHAPE if status == DECLINE_NOT_STRING else status), 0, 0, j
    for _ in range(2):
        j = ws(buf, j, n)
        if at(buf, j, n) != COMMA:
            return DECLINE_STEP_SHAPE, 0, 0, j
        j = ws(buf, j + 1, n)
        e, kind = number_end(buf, j, n)
        if kind == NOT_NUMBER:
            return DECLINE_STEP_SHAPE, 0, 0, j
        if kind == UNSAFE:
            return DECLINE_NUMBER, 0, 0, j
        j = e
    j = ws(buf, j, n)
    if at(buf, j, n) != RBRACK:
        return DECLINE_STEP_SHAPE, 0, 0, j
    return 0, a, b, j + 1


@_jit
def string_list(buf, i, n, starts, ends, m, literal):
    """A JSON array of strings at ``i``, written from ``m``: content spans without escapes, or
    (``literal``) whole string literals with any escapes. Returns (status, next, m)."""
    if at(buf, i, n) != LBRACK:
        return DECLINE_NOT_ARRAY, i, m
    j = ws(buf, i + 1, n)
    if at(buf, j, n) == RBRACK:
        return 0, j + 1, m
    while True:
        if literal:
            if at(buf, j, n) != QUOTE:
                return DECLINE_NOT_STRING, j, m
            e, _ = string_end(buf, j, n)
            if e < 0:
                return DECLINE_MALFORMED, j, m
            a, b, j = j, e + 1, e + 1
        else:
            status, a, b, j = plain_string(buf, j, n)
            if status:
                return status, j, m
        if m == starts.shape[0]:
            return FULL, j, m
        starts[m] = a
        ends[m] = b
        m += 1
        status, j, closed = after_member(buf, j, n, RBRACK)
        if status or closed:
            return status, j, m


@_jit
def trajectory(buf, i, n, form, starts, ends, m):
    """The trajectory array at ``i``, its viewpoints written from ``m``.
    Returns (status, next, form, m)."""
    if at(buf, i, n) != LBRACK:
        return DECLINE_NOT_ARRAY, i, form, m
    j = ws(buf, i + 1, n)
    if at(buf, j, n) == RBRACK:
        return (DECLINE_UNDETECTABLE if form == AUTO else 0), j + 1, form, m
    if form == AUTO:
        form = detect_form(buf, j, n)
    while True:
        if form == NESTED:
            status, j, m = string_list(buf, j, n, starts, ends, m, False)
            if status == DECLINE_NOT_ARRAY or status == DECLINE_NOT_STRING:
                status = DECLINE_STEP_SHAPE
        else:
            if form == PLAIN:
                status, a, b, j = plain_string(buf, j, n)
                if status == DECLINE_NOT_STRING:
                    status = DECLINE_STEP_SHAPE
            else:
                status, a, b, j = triple_step(buf, j, n)
            if status == 0:
                if m == starts.shape[0]:
                    return FULL, j, form, m
                starts[m] = a
                ends[m] = b
                m += 1
        if status:
            return status, j, form, m
        status, j, closed = after_member(buf, j, n, RBRACK)
        if status or closed:
            return status, j, form, m


@_jit
def prediction_record(buf, i, n, keys, key_offsets, form, rows, r, starts, ends, m):
    """Record ``r`` (``{id, trajectory, ...}``) into ``rows[r]`` (id start, end, kind).
    Returns (status, next, form, m)."""
    if at(buf, i, n) != LBRACE:
        return DECLINE_NOT_OBJECT, i, form, m
    i = ws(buf, i + 1, n)
    mask = 0
    status = 0
    if at(buf, i, n) == RBRACE:
        i += 1
    else:
        while True:
            status, k, i = key_colon(buf, i, n, keys, key_offsets)
            if status == 0 and k >= 0:
                if mask & (1 << k):
                    status = DECLINE_DUPLICATE_KEY
                mask |= 1 << k
            if status:
                break
            if k == 0:
                status, a, b, kind, i = id_value(buf, i, n)
                rows[r, 0] = a
                rows[r, 1] = b
                rows[r, 2] = kind
            elif k == 1:
                status, i, form, m = trajectory(buf, i, n, form, starts, ends, m)
            else:
                i = skip_value(buf, i, n)
                if i < 0:
                    return DECLINE_MALFORMED, n, form, m
            if status:
                break
            status, i, closed = after_member(buf, i, n, RBRACE)
            if status or closed:
                break
    if status == 0 and not mask & 1:
        status = DECLINE_MISSING_ID
    if status == 0 and not mask & 2:
        status = DECLINE_MISSING_TRAJECTORY
    return status, i, form, m


@_jit
def scan_predictions(raw, raw_keys, raw_key_offsets, form):
    """Every record of a predictions list. Returns (status, offset, form, records, starts,
    ends): one row ``(id start, id end, id kind, viewpoint count)`` per record and the
    viewpoint spans of all records in order."""
    buf, keys, key_offsets = borrow_u8(raw), borrow_u8(raw_keys), borrow_i64(raw_key_offsets)
    n = buf.shape[0]
    own_rows = np.empty((n // 512 + 16, 4), np.int64)
    # A [viewpoint, heading, elevation] step with a Matterport3D id takes at least 41 bytes.
    own_starts = np.empty(n // 40 + 16, np.int64)
    own_ends = np.empty(n // 40 + 16, np.int64)
    rows, starts, ends = borrow_rows(own_rows), borrow_i64(own_starts), borrow_i64(own_ends)
    r, m, status = 0, 0, 0
    i = ws(buf, 0, n)
    if at(buf, i, n) != LBRACK:
        status = DECLINE_NOT_LIST
    else:
        i = ws(buf, i + 1, n)
        closed = at(buf, i, n) == RBRACK
        while not closed:
            if r == rows.shape[0]:
                own_rows = grow_rows(own_rows, r + 1)
                rows = borrow_rows(own_rows)
            m0, i0, form0 = m, i, form
            status, i, form, m = prediction_record(
                buf, i, n, keys, key_offsets, form, rows, r, starts, ends, m
            )
            if status == FULL:  # grow and read the record again
                own_starts, own_ends = grow(own_starts, m + 1), grow(own_ends, m + 1)
                starts, ends = borrow_i64(own_starts), borrow_i64(own_ends)
                m, i, form = m0, i0, form0
                continue
            if status:
                break
            rows[r, 3] = m - m0
            r += 1
            status, i, closed = after_member(buf, i, n, RBRACK)
            if status:
                break
    # Views, not copies: a copy would double the peak memory for a moment.
    return status, i, form, own_rows[:r], own_starts[:m], own_ends[:m]


# --- R2R episodes ------------------------------------------------------------------------------

# Columns of an episode row.
(
    COL_PID_START,
    COL_PID_END,
    COL_PID_KIND,
    COL_SCAN_START,
    COL_SCAN_END,
    COL_HEADING_START,
    COL_HEADING_END,
    COL_DISTANCE,
    COL_PATH_COUNT,
    COL_INSTR_COUNT,
) = range(10)
EPISODE_COLUMNS = 10
REQUIRED_EPISODE_KEYS = (1 << EP_PATH_ID) | (1 << EP_SCAN) | (1 << EP_PATH)


@_jit
def episode_field(buf, i, n, k, row, vs, ve, m, ts, te, t):
    """The value of episode field ``k`` at ``i`` into ``row``, path steps written from ``m``
    and instructions from ``t``. Returns (status, next, m, t)."""
    status = 0
    if k == EP_PATH_ID:
        status, a, b, kind, i = id_value(buf, i, n)
        row[COL_PID_START] = a
        row[COL_PID_END] = b
        row[COL_PID_KIND] = kind
    elif k == EP_SCAN:
        status, a, b, i = plain_string(buf, i, n)
        row[COL_SCAN_START] = a
        row[COL_SCAN_END] = b
    elif k == EP_PATH:
        m0 = m
        status, i, m = string_list(buf, i, n, vs, ve, m, False)
        row[COL_PATH_COUNT] = m - m0
    elif k == EP_INSTRUCTIONS:
        t0 = t
        status, i, t = string_list(buf, i, n, ts, te, t, True)
        row[COL_INSTR_COUNT] = t - t0
    elif k == EP_DISTANCE and at(buf, i, n) == 110:  # null: the same as absent
        i += 4
    else:  # heading or distance: a number
        status, a, b, i = float_value(buf, i, n)
        if k == EP_HEADING:
            row[COL_HEADING_START] = a
            row[COL_HEADING_END] = b
        else:
            row[COL_DISTANCE] = 1
    return status, i, m, t


@_jit
def episode_record(buf, i, n, keys, key_offsets, row, vs, ve, m, ts, te, t):
    """One R2R record into ``row``. Returns (status, next, m, t)."""
    if at(buf, i, n) != LBRACE:
        return DECLINE_NOT_OBJECT, i, m, t
    row[COL_HEADING_START] = -1
    row[COL_HEADING_END] = -1
    row[COL_DISTANCE] = 0
    row[COL_PATH_COUNT] = 0
    row[COL_INSTR_COUNT] = 0
    i = ws(buf, i + 1, n)
    mask = 0
    status = 0
    if at(buf, i, n) == RBRACE:
        i += 1
    else:
        while True:
            status, k, i = key_colon(buf, i, n, keys, key_offsets)
            if status == 0 and k >= 0:
                if mask & (1 << k):
                    status = DECLINE_DUPLICATE_KEY
                mask |= 1 << k
            if status:
                break
            if k >= 0:
                status, i, m, t = episode_field(buf, i, n, k, row, vs, ve, m, ts, te, t)
            else:
                i = skip_value(buf, i, n)
                if i < 0:
                    return DECLINE_MALFORMED, n, m, t
            if status:
                break
            status, i, closed = after_member(buf, i, n, RBRACE)
            if status or closed:
                break
    if status == 0 and mask & REQUIRED_EPISODE_KEYS != REQUIRED_EPISODE_KEYS:
        if not mask & (1 << EP_PATH_ID):
            status = DECLINE_MISSING_ID
        elif not mask & (1 << EP_SCAN):
            status = DECLINE_MISSING_SCAN
        else:
            status = DECLINE_MISSING_PATH
    return status, i, m, t


@_jit
def scan_episodes(raw, raw_keys, raw_key_offsets):
    """Every record of an R2R list. Returns (status, offset, rows, path starts, path ends,
    instruction starts, instruction ends); rows have ``EPISODE_COLUMNS`` columns."""
    buf, keys, key_offsets = borrow_u8(raw), borrow_u8(raw_keys), borrow_i64(raw_key_offsets)
    n = buf.shape[0]
    own_rows = np.empty((n // 512 + 16, EPISODE_COLUMNS), np.int64)
    own = (
        np.empty(n // 48 + 16, np.int64),
        np.empty(n // 48 + 16, np.int64),
        np.empty(n // 256 + 16, np.int64),
        np.empty(n // 256 + 16, np.int64),
    )
    rows = borrow_rows(own_rows)
    vs, ve, ts, te = borrow_i64(own[0]), borrow_i64(own[1]), borrow_i64(own[2]), borrow_i64(own[3])
    r, m, t, status = 0, 0, 0, 0
    i = ws(buf, 0, n)
    if at(buf, i, n) != LBRACK:
        status = DECLINE_NOT_LIST
    else:
        i = ws(buf, i + 1, n)
        closed = at(buf, i, n) == RBRACK
        while not closed:
            if r == rows.shape[0]:
                own_rows = grow_rows(own_rows, r + 1)
                rows = borrow_rows(own_rows)
            m0, t0, i0 = m, t, i
            status, i, m, t = episode_record(
                buf, i, n, keys, key_offsets, rows[r], vs, ve, m, ts, te, t
            )
            if status == FULL:  # grow both (only one is full) and read the record again
                own = (
                    grow(own[0], m + 1),
                    grow(own[1], m + 1),
                    grow(own[2], t + 1),
                    grow(own[3], t + 1),
                )
                vs, ve = borrow_i64(own[0]), borrow_i64(own[1])
                ts, te = borrow_i64(own[2]), borrow_i64(own[3])
                m, t, i = m0, t0, i0
                continue
            if status:
                break
            r += 1
            status, i, closed = after_member(buf, i, n, RBRACK)
            if status:
                break
    return (
        status,
        i,
        own_rows[:r],
        own[0][:m],
        own[1][:m],
        own[2][:t],
        own[3][:t],
    )


# --- gathering and hashing spans ---------------------------------------------------------------

FNV_OFFSET = np.uint64(14695981039346656037)
FNV_PRIME = np.uint64(1099511628211)
MIX = np.uint64(0xFF51AFD7ED558CCD)
# The value of each byte as a lower-case hexadecimal digit, -1 for other bytes.
HEX_VALUE = np.full(256, -1, np.int64)
HEX_VALUE[48:58] = np.arange(10)
HEX_VALUE[97:103] = np.arange(10, 16)


@_jit
def gather(buf, starts, ends, sep):
    """The bytes of every span, joined by the byte ``sep``."""
    k = starts.shape[0]
    total = max(k - 1, 0)
    for q in range(k):
        total += ends[q] - starts[q]
    out = np.empty(total, np.uint8)
    p = 0
    for q in range(k):
        if q:
            out[p] = sep
            p += 1
        for t in range(starts[q], ends[q]):
            out[p] = buf[t]
            p += 1
    return out


@_jit
def span_hash(buf, a, b):
    """A 64-bit hash of ``buf[a:b]``: FNV-style over 8-byte words, then a murmur3 finaliser
    (the table uses the low bits)."""
    h = FNV_OFFSET ^ np.uint64(b - a)
    t = a
    while t + 8 <= b:
        w = np.uint64(0)
        for q in range(8):
            w |= np.uint64(buf[t + q]) << np.uint64(8 * q)
        h = (h ^ w) * FNV_PRIME
        t += 8
    while t < b:
        h = (h ^ np.uint64(buf[t])) * FNV_PRIME
        t += 1
    h ^= h >> np.uint64(33)
    h *= MIX
    h ^= h >> np.uint64(33)
    return h


@_jit
def mix(h):
    """The murmur3 64-bit finaliser."""
    h ^= h >> np.uint64(33)
    h *= MIX
    h ^= h >> np.uint64(33)
    return h


@_jit
def hex_pair(buf, a, b):
    """(True, high, low) when ``buf[a:b]`` is 32 lower-case hexadecimal digits (a Matterport3D
    viewpoint id) read as two 64-bit numbers, else (False, 0, 0)."""
    high = np.uint64(0)
    low = np.uint64(0)
    if b - a != 32:
        return False, high, low
    bad = 0
    for t in range(16):
        v = HEX_VALUE[buf[a + t]]
        w = HEX_VALUE[buf[a + 16 + t]]
        bad |= v | w
        high = (high << np.uint64(4)) | np.uint64(v & 15)
        low = (low << np.uint64(4)) | np.uint64(w & 15)
    if bad < 0:
        return False, np.uint64(0), np.uint64(0)
    return True, high, low


@_jit
def span_key(buf, a, b):
    """(is hex, high, low, hash) of ``buf[a:b]``: hex ids are compared as two numbers, other
    ids by their bytes."""
    is_hex, high, low = hex_pair(buf, a, b)
    if is_hex:
        return True, high, low, mix(high * FNV_PRIME ^ low)
    return False, high, low, span_hash(buf, a, b)


@_jit
def same_bytes(buf, a, b, other, c, d):
    """``buf[a:b] == other[c:d]``."""
    if b - a != d - c:
        return False
    for t in range(b - a):
        if buf[a + t] != other[c + t]:
            return False
    return True


@_jit
def slot_count(k):
    """A power of two at least twice ``k``: the open-addressing table size."""
    size = 16
    while size < 2 * k:
        size *= 2
    return size


@_jit
def hash_table(raw_blob, starts, ends):
    """Open-addressing table over the spans of ``blob`` (linear probing): (hashes, slots, is
    hex, high, low); ``slots`` holds span indices, -1 where free; equal spans each get their
    own slot."""
    blob = borrow_u8(raw_blob)
    k = starts.shape[0]
    hashes = np.empty(k, np.uint64)
    is_hex = np.empty(k, np.bool_)
    high = np.empty(k, np.uint64)
    low = np.empty(k, np.uint64)
    slots = np.full(slot_count(k), -1, np.int32)
    mask = np.uint64(slots.shape[0] - 1)
    for q in range(k):
        is_hex[q], high[q], low[q], h = span_key(blob, starts[q], ends[q])
        hashes[q] = h
        s = h & mask
        while slots[s] >= 0:
            s = (s + np.uint64(1)) & mask
        slots[s] = q
    return hashes, slots, is_hex, high, low


@_jit
def lookup(raw, starts, ends, want, use_want, raw_blob, table, t_scan, t_node):
    """(scan, node) of each span of ``buf`` in the table; with ``use_want``, only the entry of
    scan ``want[q]`` counts; without, an id held by several scans is ambiguous. -1 when none.
    ``table`` is (starts, ends, hashes, slots, is hex, high, low) of the entries."""
    t_starts, t_ends, hashes, slots, t_hex, t_high, t_low = table
    buf, blob = borrow_u8(raw), borrow_u8(raw_blob)
    k = starts.shape[0]
    scan_out = np.full(k, -1, np.int32)
    node_out = np.full(k, -1, np.int32)
    mask = np.uint64(slots.shape[0] - 1)
    for q in range(k):
        a, b = starts[q], ends[q]
        is_hex, high, low, h = span_key(buf, a, b)
        s = h & mask
        found, count = -1, 0
        while slots[s] >= 0:
            e = slots[s]
            if hashes[e] == h:
                if is_hex:
                    same = t_hex[e] and t_high[e] == high and t_low[e] == low
                else:
                    same = not t_hex[e] and same_bytes(buf, a, b, blob, t_starts[e], t_ends[e])
                if same and not use_want:
                    found, count = e, count + 1
                elif same and t_scan[e] == want[q]:
                    found, count = e, 1
                    break
            s = (s + np.uint64(1)) & mask
        if count == 1:
            scan_out[q] = t_scan[found]
            node_out[q] = t_node[found]
    return scan_out, node_out


@_jit
def unique_spans(raw, starts, ends):
    """Groups equal spans: (index of the first span of each group, group of each span)."""
    buf = borrow_u8(raw)
    k = starts.shape[0]
    slots = np.full(slot_count(k), -1, np.int32)
    mask = np.uint64(slots.shape[0] - 1)
    first = np.empty(k, np.int64)
    group_hash = np.empty(k, np.uint64)
    inverse = np.empty(k, np.int64)
    g = 0
    for q in range(k):
        a, b = starts[q], ends[q]
        h = span_key(buf, a, b)[3]
        s = h & mask
        while True:
            e = slots[s]
            if e < 0:
                slots[s] = g
                first[g] = q
                group_hash[g] = h
                inverse[q] = g
                g += 1
                break
            r = first[e]
            if group_hash[e] == h and same_bytes(buf, a, b, buf, starts[r], ends[r]):
                inverse[q] = e
                break
            s = (s + np.uint64(1)) & mask
    return first[:g].copy(), inverse


@_jit
def plain_ascii(buf, starts, ends):
    """Whether each string literal span (quotes included) is ASCII without escapes."""
    k = starts.shape[0]
    out = np.ones(k, np.bool_)
    for q in range(k):
        for t in range(starts[q] + 1, ends[q] - 1):
            c = buf[t]
            if c >= 128 or c == BACKSLASH:
                out[q] = False
                break
    return out
