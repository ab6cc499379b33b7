# Explicit comparisons and loops compile to plain branches in numba; keep them.
# ruff: noqa: SIM109, SIM110
"""Compiled gathering, hashing and lookup of byte spans (:mod:`vlneval.data.scan`).

Private; imported with numba, on first use.
"""

from __future__ import annotations

import numpy as np

from vlneval.data._json_kernels import BACKSLASH, _jit, borrow_u8
from vlneval.data._words import load_u64

# --- gathering and hashing spans ---------------------------------------------------------------

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
def span_hash(buf, a, b):
    """A 64-bit hash of ``buf[a:b]``, eight bytes at a time (FNV-style steps with a murmur3
    finaliser; the tables use the low bits)."""
    h = np.uint64(b - a) * FNV_PRIME
    t = a
    while t + 8 <= b:
        h = mix(h ^ load_u64(buf, t)) * FNV_PRIME  # type: ignore[call-arg]
        t += 8
    while t < b:
        h = (h ^ np.uint64(buf[t])) * FNV_PRIME
        t += 1
    return mix(h)


@_jit
def same_bytes(buf, a, b, other, c, d):
    """``buf[a:b] == other[c:d]``, eight bytes at a time."""
    if b - a != d - c:
        return False
    t = 0
    while a + t + 8 <= b:
        if load_u64(buf, a + t) != load_u64(other, c + t):  # type: ignore[call-arg]
            return False
        t += 8
    while a + t < b:
        if buf[a + t] != other[c + t]:
            return False
        t += 1
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
