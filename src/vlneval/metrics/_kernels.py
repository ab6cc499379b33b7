"""Numba-compiled metric cores, shared by the single-episode functions and ``score_batch``.

Private: callers validate their inputs first. Every core reads distances from a flat row-major
buffer ``dist`` whose table of interest starts at ``off`` and has ``n`` nodes per row, so the same
compiled code serves one 2-D table (``off = 0``) and the concatenated per-scan tables of a batch.
Paths are int32 arrays (or views) of local node ids. No core allocates except ``*_alloc``.

Importing this module imports numba; the public modules import it inside function bodies so that
``import vlneval.metrics`` stays light.
"""

from __future__ import annotations

import math

import numba
import numpy as np

# error_model="numpy": no ZeroDivisionError checks in the loops (the cores guard 0 themselves).
_jit = numba.njit(cache=True, nogil=True, error_model="numpy")

INF = np.inf


@_jit
def nearest(dist, off, n, nodes, targets):
    """min over u in nodes, v in targets of d(u, v); +inf when either is empty."""
    best = INF
    for u in nodes:
        base = off + u * n
        for v in targets:
            x = dist[base + v]
            if x < best:
                best = x
    return best


@_jit
def path_length(dist, off, n, path):
    """Sum of d(p_j, p_j+1); a repeated node adds exactly 0, whatever the table's diagonal."""
    total = 0.0
    for j in range(1, path.shape[0]):
        a = path[j - 1]
        b = path[j]
        if a != b:
            total += dist[off + a * n + b]
    return total


@_jit
def is_success(error, threshold, inclusive):
    """1.0 when error < threshold (error <= threshold if inclusive), else 0.0; NaN fails."""
    if inclusive:
        return 1.0 if error <= threshold else 0.0
    return 1.0 if error < threshold else 0.0


@_jit
def spl(success, ell, tl, floor):
    """S * ell / max(ell, tl, floor); 0/0 (ell = tl = floor = 0) is the CVDN rule: S."""
    if success == 0.0 or not ell < INF:  # also avoids 0 * inf and inf / inf
        return 0.0
    denom = max(ell, tl, floor)
    if denom == 0.0:
        return success
    return success * ell / denom


@_jit
def count_repeats(path):
    """Number of positions equal to their predecessor."""
    repeats = 0
    for j in range(1, path.shape[0]):
        if path[j] == path[j - 1]:
            repeats += 1
    return repeats


@_jit
def collapse_into(path, out):
    """Writes path without consecutive duplicates into out[:k] and returns k."""
    k = 0
    for j in range(path.shape[0]):
        if k == 0 or path[j] != out[k - 1]:
            out[k] = path[j]
            k += 1
    return k


@_jit
def _dtw_rows(dist, off, outer, inner, row, s_out, s_in):
    # One row of the accumulated matrix over `inner`; cost(i, j) = dist[off + o*s_out + i*s_in].
    k = inner.shape[0]
    base = off + outer[0] * s_out
    acc = 0.0
    for j in range(k):
        acc += dist[base + inner[j] * s_in]
        row[j] = acc
    for i in range(1, outer.shape[0]):
        base = off + outer[i] * s_out
        diag = INF
        left = INF
        for j in range(k):
            up = row[j]
            best = up if up < left else left
            if diag < best:
                best = diag
            left = dist[base + inner[j] * s_in] + best
            diag = up
            row[j] = left
    return row[k - 1]


@_jit
def dtw(dist, off, n, ref, traj, row):
    """Exact DTW(ref, traj); row needs min(len(ref), len(traj)) slots; +inf if one is empty."""
    m = ref.shape[0]
    k = traj.shape[0]
    if m == 0 or k == 0:
        return INF
    if k <= m:  # keep the row over the shorter sequence: O(min(m, k)) memory
        return _dtw_rows(dist, off, ref, traj, row, n, 1)
    return _dtw_rows(dist, off, traj, ref, row, 1, n)


@_jit
def dtw_alloc(dist, off, n, ref, traj):
    """dtw with its own row buffer (single-episode use)."""
    row = np.empty(max(1, min(ref.shape[0], traj.shape[0])), dtype=np.float64)
    return dtw(dist, off, n, ref, traj, row)


@_jit
def ndtw_from_dtw(dtw_value, m, threshold):
    """exp(-DTW / (m * threshold)); 0 when DTW is +inf (empty or unreachable)."""
    if m == 0 or not dtw_value < INF:
        return 0.0
    return math.exp(-dtw_value / (m * threshold))


@_jit
def cls(dist, off, n, traj, ref, threshold, traj_len, ref_len):
    """Coverage weighted by length score (Jain et al. 2019), given L(P) and L(R)."""
    m = ref.shape[0]
    if m == 0:
        return 0.0
    pc = 0.0
    for r in ref:
        base = off + r * n
        closest = INF
        for p in traj:
            x = dist[base + p]
            if x < closest:
                closest = x
        pc += math.exp(-closest / threshold)
    pc /= m
    # PC = 0: nothing covered (0 * inf must not leak). L(R) = inf: a reference with an
    # unreachable hop has no finite expected length; LS = 0 by definition.
    if pc == 0.0 or not ref_len < INF:
        return 0.0
    epl = pc * ref_len
    denom = epl + abs(epl - traj_len)
    ls = 1.0 if denom == 0.0 else epl / denom
    return pc * ls


@_jit
def score_batch(
    dist,
    table_offsets,
    table_sizes,
    scan_index,
    traj,
    traj_offsets,
    ref,
    ref_offsets,
    goals,
    goal_offsets,
    threshold,
    success_inclusive,
    sdtw_inclusive,
    use_reference_length,
    spl_floor,
    collapse,
    cls_threshold,
    out,
    scratch,
    row,
    lo,
    hi,
):
    """Fills out[:, i] for episodes ``lo <= i < hi``; rows follow batch.COLUMNS. No allocation
    per episode; ``scratch`` and ``row`` are this call's own (one pair per thread)."""
    for i in range(lo, hi):
        s = scan_index[i]
        off = table_offsets[s]
        n = table_sizes[s]
        p = traj[traj_offsets[i] : traj_offsets[i + 1]]
        r = ref[ref_offsets[i] : ref_offsets[i + 1]]
        g = goals[goal_offsets[i] : goal_offsets[i + 1]]
        k = p.shape[0]

        ne = nearest(dist, off, n, p[k - 1 :], g) if k > 0 else INF
        oe = nearest(dist, off, n, p, g)
        tl = path_length(dist, off, n, p)
        rl = path_length(dist, off, n, r)
        ell = rl if use_reference_length else nearest(dist, off, n, r[:1], g)
        sr = is_success(ne, threshold, success_inclusive)

        repeats = count_repeats(p)
        q = scratch[: collapse_into(p, scratch)] if collapse else p
        d = dtw(dist, off, n, r, q, row)
        nd = ndtw_from_dtw(d, r.shape[0], threshold)

        out[0, i] = ne
        out[1, i] = oe
        out[2, i] = sr
        out[3, i] = is_success(oe, threshold, success_inclusive)
        out[4, i] = tl
        out[5, i] = ell
        out[6, i] = rl
        out[7, i] = spl(sr, ell, tl, spl_floor)
        out[8, i] = d
        out[9, i] = nd
        out[10, i] = is_success(ne, threshold, sdtw_inclusive) * nd
        # Collapsing drops only zero-length hops, so L(q) == tl exactly.
        out[11, i] = cls(dist, off, n, q, r, cls_threshold, tl, rl)
        out[12, i] = max(k - 1, 0)
        out[13, i] = repeats
