# Explicit comparisons and loops compile to plain branches in numba; keep them.
# ruff: noqa: SIM109, SIM110
"""JSON primitives of the compiled field scanner: constants, borrowed views, strings, numbers,
keys and skipping values (:mod:`vlneval.data._scan_kernels` builds on them).

Private. Every function reads a JSON document as a ``uint8`` array; every read is bounds-checked,
so invalid input can make a scanner decline but never read outside the buffer.
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
