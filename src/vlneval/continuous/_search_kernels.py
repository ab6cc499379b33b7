"""Compiled cores of the waypoint executor's search: the candidate cells around a target and a
Dijkstra search from the robot's cell that stops once every candidate is settled.

The search relaxes edges exactly as ``scipy.sparse.csgraph.dijkstra`` does (a node's distance
and predecessor change only when ``distance + weight`` is strictly smaller, and only values
``<= limit`` count), so its distances are scipy's floats and a node's predecessor is scipy's
whenever one node of least distance gives the node its distance. When two such nodes of equal
distance give the same value, scipy's answer depends on the order its heap returns them: the
node is flagged ``tied`` and the caller asks scipy for that path
(:class:`vlneval.continuous.search.TargetSearch`).

Importing this module imports numba: only :mod:`vlneval.continuous.search` imports it.
"""

from __future__ import annotations

import math

import numba
import numpy as np

from vlneval.continuous._motion_kernels import _two_prod, hypot

__all__ = ["candidates", "best_target", "micro", "trace", "reset"]

_jit = numba.njit(cache=True, nogil=True)
_REACHED, _SETTLED, _TIED, _GOAL = 1, 2, 4, 8


@_jit
def reset(dist, pred, state, touched, count):  # type: ignore[no-untyped-def]
    """Clears the nodes the last search touched (the scratch arrays are reused)."""
    for k in range(count):
        v = touched[k]
        dist[v] = math.inf
        pred[v] = -9999
        state[v] = 0


@_jit
def _push(keys, vals, size, key, val):  # type: ignore[no-untyped-def]
    k = size
    while k > 0:
        parent = (k - 1) >> 1
        if keys[parent] <= key:
            break
        keys[k], vals[k] = keys[parent], vals[parent]
        k = parent
    keys[k], vals[k] = key, val


@_jit
def _pop(keys, vals, size):  # type: ignore[no-untyped-def]
    """Removes the root of a heap of ``size`` entries (the caller read it first)."""
    size -= 1
    key, val = keys[size], vals[size]
    k = 0
    while True:
        c = 2 * k + 1
        if c >= size:
            break
        if c + 1 < size and keys[c + 1] < keys[c]:
            c += 1
        if keys[c] >= key:
            break
        keys[k], vals[k] = keys[c], vals[c]
        k = c
    if size > 0:
        keys[k], vals[k] = key, val


@_jit
def micro(x):  # type: ignore[no-untyped-def]
    """``x * 1e6`` rounded to the nearest integer (half to even) for finite ``0 <= x < 1e9``:
    Python's ``round(x, 6)`` is ``micro(x) / 1e6``, so comparing micros compares Python's
    rounded values.

    ``x * 1e6`` is kept exactly as ``p + e`` (Dekker), so the rounding is of the exact
    product, as Python's correctly rounded ``round`` does.
    """
    p, e = _two_prod(x, 1e6)
    m = math.floor(p + 0.5)  # exact for p < 2**52
    d = p - m  # exact, in [-0.5, 0.5)
    if d == -0.5:  # p is half-way: the exact product is below, above or at it
        if e < 0.0 or (e == 0.0 and m % 2.0 == 1.0):
            m -= 1.0
    elif d + e < -0.5:
        m -= 1.0
    elif d + e >= 0.5:
        m += 1.0
    return int(m)


@_jit
def candidates(free, height, node_id, geo, x, y, z, has_z, snap):  # type: ignore[no-untyped-def]
    """The free cells whose centre is within ``max(snap, 0.71 res)`` of (x, y), in row, column
    and layer order, and their keys: ``(nodes, k1, k2)``, the micros of (height difference,
    offset) with a height ``z``, else of (offset, 0)."""
    res = geo[0]
    i0 = int(math.floor((y - geo[2]) / res + 0.5))
    j0 = int(math.floor((x - geo[1]) / res + 0.5))
    reach = int(math.ceil(snap / res))
    bound = max(snap, res * 0.71)
    side = 2 * reach + 1
    n_max = side * side * free.shape[0]
    nodes = np.empty(n_max, dtype=np.int64)
    k1 = np.empty(n_max, dtype=np.int64)
    k2 = np.empty(n_max, dtype=np.int64)
    n = 0
    for i in range(i0 - reach, i0 + reach + 1):
        for j in range(j0 - reach, j0 + reach + 1):
            if not (0 <= i < free.shape[1] and 0 <= j < free.shape[2]):
                continue
            o = hypot(geo[1] + j * res - x, geo[2] + i * res - y)
            if o > bound:
                continue
            for layer in range(free.shape[0]):
                if free[layer, i, j]:
                    nodes[n] = node_id[layer, i, j]
                    if has_z:
                        k1[n], k2[n] = micro(abs(height[layer, i, j] - z)), micro(o)
                    else:
                        k1[n], k2[n] = micro(o), 0
                    n += 1
    return nodes[:n], k1[:n], k2[:n]


@_jit
def _better(k1, k2, d, t, best_k1, best_k2, best_d, best_t):  # type: ignore[no-untyped-def]
    if k1 != best_k1:
        return k1 < best_k1
    if k2 != best_k2:
        return k2 < best_k2
    if d != best_d:
        return d < best_d
    return t < best_t


@_jit
def best_target(
    indptr, indices, weights, start, limit, targets, k1, k2, dist, pred, state, touched
):  # type: ignore[no-untyped-def]
    """The index in ``targets`` of the target of least key ``(k1, k2, distance from start)``
    among those within ``limit`` (the first on ties; -1 when none is), by a Dijkstra search
    from ``start`` that stops once no unsettled target can beat it.

    Fills ``dist``, ``pred`` and ``state`` (bits: 1 reached, 2 settled, 4 tied) of the nodes
    it touches, listed in ``touched``; returns ``(count touched, index)``.
    """
    n_t = len(targets)
    for t in range(n_t):
        state[targets[t]] |= _GOAL
    done = np.zeros(n_t, dtype=np.bool_)
    keys = np.empty(1024)
    vals = np.empty(1024, dtype=np.int64)
    count, size = 1, 1
    dist[start], touched[0] = 0.0, start
    state[start] |= _REACHED
    keys[0], vals[0] = 0.0, start
    best, best_d, blocking = -1, math.inf, n_t
    while size > 0:
        d, u = keys[0], vals[0]
        if best >= 0 and blocking == 0 and d > best_d:
            break  # every target still to come is worse than the best
        _pop(keys, vals, size)
        size -= 1
        if state[u] & _SETTLED or d > dist[u]:
            continue  # a stale heap entry
        state[u] |= _SETTLED
        if state[u] & _GOAL:
            for t in range(n_t):
                if targets[t] == u and not done[t]:
                    done[t] = True
                    b1 = k1[best] if best >= 0 else 1 << 62
                    b2 = k2[best] if best >= 0 else 1 << 62
                    if best < 0 or _better(k1[t], k2[t], d, t, b1, b2, best_d, best):
                        best, best_d = t, d
            blocking = 0  # unsettled targets whose (k1, k2) beats the best's
            for t in range(n_t):
                if not done[t] and (k1[t] < k1[best] or (k1[t] == k1[best] and k2[t] < k2[best])):
                    blocking += 1
        for e in range(indptr[u], indptr[u + 1]):
            v = indices[e]
            if state[v] & _SETTLED:
                continue
            new = d + weights[e]
            if new > limit:
                continue
            if not state[v] & _REACHED:
                state[v] |= _REACHED
                touched[count] = v
                count += 1
            if new < dist[v]:
                dist[v], pred[v] = new, u
                state[v] &= ~_TIED
                if size == len(keys):
                    keys = np.concatenate((keys, np.empty_like(keys)))
                    vals = np.concatenate((vals, np.empty_like(vals)))
                _push(keys, vals, size, new, v)
                size += 1
            elif new == dist[v] and dist[pred[v]] == d:
                state[v] |= _TIED  # scipy's heap order picks one of two equal predecessors
    for t in range(n_t):
        state[targets[t]] &= ~_GOAL
    return count, best


@_jit
def trace(pred, state, start, node):  # type: ignore[no-untyped-def]
    """The nodes from ``start`` to ``node`` along ``pred``; empty when a node on the way is
    tied (its predecessor is not determined by distances alone)."""
    out = np.empty(64, dtype=np.int64)
    n = 0
    v = node
    while True:
        if n == len(out):
            out = np.concatenate((out, np.empty_like(out)))
        out[n] = v
        n += 1
        if v == start:
            break
        if state[v] & _TIED:
            return out[:0]
        v = pred[v]
    return out[n - 1 :: -1].copy()
