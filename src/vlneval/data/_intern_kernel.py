"""The compiled part of :mod:`vlneval.data.intern` (imported on first use)."""

from __future__ import annotations

import numpy as np

from vlneval.data._hash_kernels import same_bytes, span_hash
from vlneval.data._json_kernels import _jit, borrow_u8

__all__ = ["find_spans", "intern_spans", "rehash"]


@_jit
def rehash(hashes, n, size):  # pragma: no cover - compiled
    """A fresh open-addressing table of ``size`` slots (a power of two) over entries ``:n``."""
    slots = np.full(size, -1, np.int32)
    mask = np.uint64(size - 1)
    for e in range(n):
        s = hashes[e] & mask
        while slots[s] >= 0:
            s = (s + np.uint64(1)) & mask
        slots[s] = e
    return slots


@_jit
def intern_spans(raw, starts, ends, codes, begin, table, blob, slots, used):  # pragma: no cover
    """Sets ``codes[q]`` to the code of span ``q`` of ``raw`` from ``begin`` on, adding unseen
    texts; returns where it stopped: the end, or where the table became half full.

    ``table`` is (starts, ends, hashes) of the entries and ``used`` is ``[entries, blob
    bytes]``, updated; the caller has made room in the entries and the blob for every span.
    """
    u_starts, u_ends, hashes = table
    buf = borrow_u8(raw)
    mask = np.uint64(slots.shape[0] - 1)
    limit = slots.shape[0] // 2
    n, size = used[0], used[1]
    q = begin
    while q < starts.shape[0] and n < limit:
        a, b = starts[q], ends[q]
        h = span_hash(buf, a, b)
        s = h & mask
        while True:
            e = slots[s]
            if e < 0:
                blob[size : size + b - a] = buf[a:b]
                u_starts[n], u_ends[n], hashes[n] = size, size + b - a, h
                size += b - a
                slots[s] = n
                codes[q] = n
                n += 1
                break
            if hashes[e] == h and same_bytes(buf, a, b, blob, u_starts[e], u_ends[e]):
                codes[q] = e
                break
            s = (s + np.uint64(1)) & mask
        q += 1
    used[0], used[1] = n, size
    return q


@_jit
def find_spans(raw, starts, ends, table, blob, slots):  # pragma: no cover - compiled
    """The code of each span's text in the table, -1 where it is not there."""
    u_starts, u_ends, hashes = table
    buf = borrow_u8(raw)
    mask = np.uint64(slots.shape[0] - 1)
    codes = np.full(starts.shape[0], -1, np.int32)
    for q in range(starts.shape[0]):
        a, b = starts[q], ends[q]
        h = span_hash(buf, a, b)
        s = h & mask
        while slots[s] >= 0:
            e = slots[s]
            if hashes[e] == h and same_bytes(buf, a, b, blob, u_starts[e], u_ends[e]):
                codes[q] = e
                break
            s = (s + np.uint64(1)) & mask
    return codes
