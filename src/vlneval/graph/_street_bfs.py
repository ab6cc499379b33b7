"""Breadth-first searches on the street graph's CSR adjacency, compiled with numba.

Imported by :class:`vlneval.graph.street.StreetGraph` on its first distance query, so that
reading the graph does not import numba. A level-synchronous search in numpy or scipy would
visit every panorama per query; these stop as soon as the two searches meet.
"""

from __future__ import annotations

import numba
import numpy as np

__all__ = ["pair_hops", "row_hops"]

_jit = numba.njit(cache=True, nogil=True)


@_jit
def _expand(indptr, indices, queue, head, tail, dist, mark, other_dist, other_mark, stamp):
    """Expands one BFS level ``queue[head:tail]``; returns (new tail, meeting distance or -1)."""
    end = tail
    for q in range(head, tail):
        u = queue[q]
        for k in range(indptr[u], indptr[u + 1]):
            v = indices[k]
            if mark[v] == stamp:
                continue
            if other_mark[v] == stamp:
                # Level-synchronous search: the first meeting is a shortest path (see pair_hops).
                return end, dist[u] + 1 + other_dist[v]
            mark[v] = stamp
            dist[v] = dist[u] + 1
            queue[end] = v
            end += 1
    return end, -1


@_jit
def pair_hops(indptr, indices, src, dst):
    """Hop distance of each (src[k], dst[k]) by bidirectional BFS, expanding the smaller frontier.

    Before a level is expanded no node is known to both sides, so the shortest length D exceeds
    the two explored radii together; any meeting found while expanding the next level has length
    at most radius_f + radius_b + 1 <= D, hence exactly D: the first meeting is returned.
    """
    n = indptr.shape[0] - 1
    out = np.empty(src.shape[0], dtype=np.float64)
    dist_f = np.zeros(n, dtype=np.int32)
    dist_b = np.zeros(n, dtype=np.int32)
    mark_f = np.zeros(n, dtype=np.int64)
    mark_b = np.zeros(n, dtype=np.int64)
    queue_f = np.empty(n, dtype=np.int32)
    queue_b = np.empty(n, dtype=np.int32)
    for k in range(src.shape[0]):
        s, t = src[k], dst[k]
        if s == t:
            out[k] = 0.0
            continue
        stamp = k + 1
        mark_f[s] = stamp
        mark_b[t] = stamp
        dist_f[s] = 0
        dist_b[t] = 0
        queue_f[0] = s
        queue_b[0] = t
        hf, tf, hb, tb = 0, 1, 0, 1
        found = -1
        while found < 0 and hf < tf and hb < tb:
            if tf - hf <= tb - hb:
                new, found = _expand(
                    indptr, indices, queue_f, hf, tf, dist_f, mark_f, dist_b, mark_b, stamp
                )
                hf, tf = tf, new
            else:
                new, found = _expand(
                    indptr, indices, queue_b, hb, tb, dist_b, mark_b, dist_f, mark_f, stamp
                )
                hb, tb = tb, new
        out[k] = np.inf if found < 0 else float(found)
    return out


@_jit
def row_hops(indptr, indices, source):
    """Hop distance from ``source`` to every node (BFS); ``inf`` when unreachable."""
    n = indptr.shape[0] - 1
    out = np.full(n, np.inf)
    queue = np.empty(n, dtype=np.int32)
    out[source] = 0.0
    queue[0] = source
    head, tail = 0, 1
    while head < tail:
        u = queue[head]
        head += 1
        for k in range(indptr[u], indptr[u + 1]):
            v = indices[k]
            if out[v] == np.inf:
                out[v] = out[u] + 1.0
                queue[tail] = v
                tail += 1
    return out
