"""Compiled helpers for ragged (CSR) arrays (imported on first use)."""

from __future__ import annotations

import numpy as np
from numba import njit

__all__ = ["take_ragged", "nodes_in_scans"]

_jit = njit(cache=True, nogil=True)


@_jit
def take_ragged(values, offsets, rows):  # pragma: no cover - compiled
    """The sequences ``rows`` of a ragged array, one after another, and their offsets."""
    out_offsets = np.zeros(rows.shape[0] + 1, np.int64)
    for k in range(rows.shape[0]):
        r = rows[k]
        out_offsets[k + 1] = out_offsets[k] + offsets[r + 1] - offsets[r]
    out = np.empty(out_offsets[-1], values.dtype)
    for k in range(rows.shape[0]):
        r = rows[k]
        a = offsets[r]
        p = out_offsets[k]
        for t in range(offsets[r + 1] - a):
            out[p + t] = values[a + t]
    return out, out_offsets


@_jit
def nodes_in_scans(codes, lengths, record_scan, text_scan, text_node):  # pragma: no cover
    """The node of each step (``text_node[code]``) where its text is a node of its record's
    scan, and the positions of the steps where it is not (to be looked up again)."""
    nodes = np.empty(codes.shape[0], np.int32)
    off = np.empty(codes.shape[0], np.int64)
    n_off = 0
    j = 0
    for k in range(lengths.shape[0]):
        scan = record_scan[k]
        for _ in range(lengths[k]):
            c = codes[j]
            nodes[j] = text_node[c]
            if text_scan[c] != scan:
                off[n_off] = j
                n_off += 1
            j += 1
    return nodes, off[:n_off].copy()
