# Explicit comparisons and loops compile to plain branches in numba; keep them.
# ruff: noqa: SIM109, SIM110
"""Numba cores of the field scanner (:mod:`vlneval.data.scan`).

Private. Every core reads a JSON document as a ``uint8`` array and returns byte spans into it;
none creates a Python object per field. The input has passed a strict syntax check (msgspec)
before, so the cores only follow the structure; every read is still bounds-checked, so that
invalid input can make a core decline but never read outside the buffer.

A core returns a status first: 0 when it read the file, else a ``DECLINE_*`` code (the Python
side turns it into a reason) and the byte offset where it stopped.

The JSON primitives live in :mod:`vlneval.data._json_kernels`, the span hashing in
:mod:`vlneval.data._hash_kernels`; this module re-exports what :mod:`vlneval.data.scan` calls.
Importing it imports numba; :mod:`vlneval.data.scan` imports it on first use.
"""

from __future__ import annotations

import numpy as np

from vlneval.data._hash_kernels import (  # noqa: F401 - scan.py uses them through this module
    gather,
    hash_table,
    lookup,
    plain_ascii,
    unique_spans,
)
from vlneval.data._json_kernels import (  # noqa: F401 - scan.py uses some through this module
    AUTO,
    COMMA,
    DECLINE_DUPLICATE_KEY,
    DECLINE_MALFORMED,
    DECLINE_MISSING_ID,
    DECLINE_MISSING_PATH,
    DECLINE_MISSING_SCAN,
    DECLINE_MISSING_TRAJECTORY,
    DECLINE_NOT_ARRAY,
    DECLINE_NOT_LIST,
    DECLINE_NOT_OBJECT,
    DECLINE_NOT_STRING,
    DECLINE_NUMBER,
    DECLINE_STEP_SHAPE,
    DECLINE_UNDETECTABLE,
    EP_DISTANCE,
    EP_HEADING,
    EP_INSTRUCTIONS,
    EP_PATH,
    EP_PATH_ID,
    EP_SCAN,
    FULL,
    KIND_INT,
    LBRACE,
    LBRACK,
    NESTED,
    NOT_NUMBER,
    PLAIN,
    QUOTE,
    RBRACE,
    RBRACK,
    TRIPLE,
    UNSAFE,
    _jit,
    after_member,
    at,
    borrow_i64,
    borrow_rows,
    borrow_u8,
    first_element,
    float_value,
    grow,
    grow_rows,
    id_value,
    key_colon,
    number_end,
    plain_string,
    skip_value,
    string_end,
    ws,
)

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
