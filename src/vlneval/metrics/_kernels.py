"""Metric cores in vectorised numpy, shared by the single-episode functions and ``score_batch``.

Private: callers validate their inputs first. Distances are read from a flat row-major buffer
``dist``; a table of ``n`` nodes starting at ``off`` holds ``d(u, v)`` at ``off + u * n + v``, so
the same code serves one 2-D table (``off = 0``) and the concatenated per-scan tables of a batch.

Many episodes are ragged arrays: flat node ids plus offsets (episode ``e`` is
``flat[offsets[e]:offsets[e + 1]]``). Every core loops in Python only over positions *within* an
episode (at most the longest path) and does the work of all episodes at once in each step, so a
split of thousands of episodes costs a few hundred numpy calls, and nothing is compiled.

The results are bit-for-bit those of a plain per-episode loop: sums are added left to right
(:func:`sequential_sum`; ``np.add.reduceat`` would add pairwise), every DTW cell is the same one
addition, and exponentials come from the C library's ``exp`` (:func:`exp`; numpy's vectorised
``np.exp`` differs in the last bit on some CPUs).
"""

from __future__ import annotations

import math

import numpy as np

INF = np.inf
#: At most this many episodes per DTW block, and at most DTW_CELLS padded costs per block.
DTW_BLOCK = 16_384
DTW_CELLS = 1 << 20

# ---- ragged helpers ----


def owners(offsets: np.ndarray) -> np.ndarray:
    """The episode of each flat position."""
    return np.repeat(np.arange(offsets.shape[0] - 1), np.diff(offsets))


def offsets_of(lengths: np.ndarray) -> np.ndarray:
    """``[0, l0, l0 + l1, ...]`` as int64."""
    out = np.zeros(lengths.shape[0] + 1, dtype=np.int64)
    np.cumsum(lengths, out=out[1:])
    return out


def reorder(
    flat: np.ndarray, offsets: np.ndarray, order: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """The ragged array's segments ``order[0], order[1], ...`` (a subset, in any order): their
    flat values and offsets."""
    lengths = np.diff(offsets)[order]
    new = offsets_of(lengths)
    source = np.repeat(offsets[:-1][order] - new[:-1], lengths) + np.arange(new[-1])
    return flat[source], new


def sequential_sum(values: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """Sum of each segment, added left to right from 0.0 (exactly what a loop adds).

    One step per position of the longest segment; the segments still running at step ``j``
    are a prefix once they are ordered by decreasing length.
    """
    lengths = np.diff(offsets)
    order = np.argsort(-lengths, kind="stable")
    longest = np.negative(lengths[order])  # ascending
    starts = offsets[:-1][order]
    running = np.searchsorted(longest, -np.arange(-longest[0] if longest.size else 0), "left")
    acc = np.zeros(lengths.shape[0])
    for j, k in enumerate(running.tolist()):
        acc[:k] += values[starts[:k] + j]
    out = np.empty_like(acc)
    out[order] = acc
    return out


def segment_min(values: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """Minimum of each segment; +inf for an empty one."""
    out = np.full(offsets.shape[0] - 1, INF)
    full = offsets[1:] > offsets[:-1]
    if values.size:
        # Empty segments between the starts are zero-length, so each run ends where it should.
        out[full] = np.minimum.reduceat(values, offsets[:-1][full])
    return out


def exp(values: np.ndarray) -> np.ndarray:
    """``exp`` elementwise with the C library's ``exp``, as a scalar loop computes it.

    ``exp(0) = 1`` and ``exp(-inf) = 0`` exactly, so only the other values (a minority in
    CLS, where most reference nodes are visited) go through the C library one by one.
    """
    out = np.where(values == 0.0, 1.0, 0.0)
    rest = np.flatnonzero((values != 0.0) & (values != -INF))
    out[rest] = np.fromiter(map(math.exp, values[rest].tolist()), np.float64, rest.shape[0])
    return out


# ---- batch cores (scan of every flat position given as table start and size) ----


def nearest_each(
    dist: np.ndarray,
    row_start: np.ndarray,
    size: np.ndarray,
    nodes: np.ndarray,
    owner: np.ndarray,
    targets: np.ndarray,
    target_offsets: np.ndarray,
) -> np.ndarray:
    """For each flat position ``k``: ``min_t d(nodes[k], t)`` over the targets of episode
    ``owner[k]`` (+inf when that set is empty). ``row_start[k]``, ``size[k]``: ``k``'s table.

    One step per target slot (the largest set's size); the positions whose set still has a
    target in slot ``j`` are a prefix once ordered by decreasing set size.
    """
    return nearest_rows(
        dist, row_start + nodes.astype(np.int64) * size, owner, targets, target_offsets
    )


def nearest_rows(
    dist: np.ndarray,
    rows: np.ndarray,
    owner: np.ndarray,
    targets: np.ndarray,
    target_offsets: np.ndarray,
) -> np.ndarray:
    """:func:`nearest_each` given where each position's distances start (``rows[k]``)."""
    first = target_offsets[:-1][owner]
    count = np.diff(target_offsets)[owner]
    if count.size == 0:
        return np.full(0, INF)
    if count.min() == count.max():
        order = None
        running = [count.shape[0]] * int(count[0])
    else:
        order = np.argsort(-count, kind="stable")
        rows, first, count = rows[order], first[order], count[order]
        running = np.searchsorted(-count, -np.arange(count[0]), "left").tolist()
    best = np.full(rows.shape[0], INF)
    for j, k in enumerate(running):
        np.minimum(best[:k], dist[rows[:k] + targets[first[:k] + j]], out=best[:k])
    if order is None:
        return best
    out = np.empty_like(best)
    out[order] = best
    return out


def moves(path: np.ndarray, offsets: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per flat position: whether it differs from its predecessor in the same episode, and
    whether it equals it (both False at an episode's first position)."""
    moved = np.zeros(path.shape[0], dtype=bool)
    same = np.zeros(path.shape[0], dtype=bool)
    np.not_equal(path[1:], path[:-1], out=moved[1:])
    np.logical_not(moved[1:], out=same[1:])
    firsts = offsets[:-1][offsets[:-1] < path.shape[0]]
    moved[firsts] = same[firsts] = False
    return moved, same


def hop_lengths(
    dist: np.ndarray, rows: np.ndarray, path: np.ndarray, moved: np.ndarray
) -> np.ndarray:
    """Per flat position, ``d(p_{j-1}, p_j)`` where it ``moved`` (:func:`moves`), else 0 (a
    repeated node adds exactly 0, whatever the table's diagonal). ``rows[k]``: where
    ``d(path[k], .)`` starts in ``dist``."""
    hops = np.zeros(path.shape[0])
    at = np.flatnonzero(moved)
    hops[at] = dist[rows[at - 1] + path[at]]
    return hops


def dtw_batch(
    dist: np.ndarray,
    start: np.ndarray,
    size: np.ndarray,
    ref: np.ndarray,
    ref_offsets: np.ndarray,
    traj: np.ndarray,
    traj_offsets: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    """Exact DTW(ref_e, traj_e) of every episode (cost ``d(r_i, p_j)``), +inf if one is empty;
    and, per reference node ``r_i``, ``min_j d(r_i, p_j)`` (CLS's coverage), +inf if empty.

    ``D[i, j] = d(r_i, p_j) + min(D[i-1, j], D[i, j-1], D[i-1, j-1])`` with ``D[-1, -1] = 0``
    and the rest of the border +inf. The cells of one anti-diagonal ``i + j = t`` depend only on
    the two before it, so each step computes one anti-diagonal of every episode at once. Every
    cost is read once, so each reference node's nearest trajectory node comes with it.
    """
    m, k = np.diff(ref_offsets), np.diff(traj_offsets)
    out = np.full(start.shape[0], INF)
    closest = np.full(ref.shape[0], INF)
    own = owners(ref_offsets)
    rows = start[own] + ref.astype(np.int64) * size[own]  # where d(r_i, .) starts in dist
    last = m + k - 2  # the anti-diagonal of the final cell
    live = np.flatnonzero((m > 0) & (k > 0))
    live = live[np.argsort(-last[live], kind="stable")]
    lo = 0
    for count in dtw_blocks(m[live], k[live]):
        block = live[lo : lo + count]
        lo += count
        e = block[0]
        if count == 1 and m[e] * k[e] > DTW_CELLS:  # alone over the cap: streamed
            r = slice(ref_offsets[e], ref_offsets[e + 1])
            p = traj[traj_offsets[e] : traj_offsets[e + 1]].astype(np.int64)
            out[e], closest[r] = _dtw_long(dist, rows[r], p)
            continue
        # (slot, episode): the positions of each episode's reference and trajectory nodes.
        i_ref = ref_offsets[block] + np.minimum(np.arange(m[block].max())[:, None], m[block] - 1)
        j_traj = traj_offsets[block] + np.minimum(np.arange(k[block].max())[:, None], k[block] - 1)
        # Laid out as cost[i, j, e] = d(r_i, p_j) of episode e (read in that order, no copy),
        # so that every step below works on contiguous runs of episodes.
        cost = dist[rows[i_ref][:, None, :] + traj[j_traj][None, :, :]]
        out[block], near = _dtw_block(cost, m[block], last[block])
        keep = np.arange(near.shape[1]) < m[block, None]
        closest[i_ref.T[keep]] = near[keep]
    return out, closest


def dtw_blocks(m: np.ndarray, k: np.ndarray) -> list[int]:
    """How many episodes (reference and trajectory lengths ``m``, ``k``, in :func:`dtw_batch`'s
    order) each DTW block takes, in order: at most DTW_BLOCK, and at most DTW_CELLS padded
    costs (``count * max m * max k``); an episode that alone has more is a block of one, whose
    costs are read one anti-diagonal at a time.

    Example:
        >>> dtw_blocks(np.array([4, 2, 2, 2]), np.array([300_000, 3, 3, 3]))
        [1, 3]
    """
    counts: list[int] = []
    lo = 0
    while lo < m.shape[0]:
        # The first episode's own costs bound the count; larger later ones cut it shorter.
        most = max(1, min(DTW_BLOCK, DTW_CELLS // int(m[lo] * k[lo])))
        part = slice(lo, lo + most)
        cells = np.maximum.accumulate(m[part]) * np.maximum.accumulate(k[part])
        cells *= np.arange(1, cells.shape[0] + 1)
        counts.append(max(1, int(np.searchsorted(cells, DTW_CELLS, "right"))))
        lo += counts[-1]
    return counts


def _dtw_long(dist: np.ndarray, rows: np.ndarray, traj: np.ndarray) -> tuple[float, np.ndarray]:
    """:func:`_dtw_block` of one episode, its costs read one anti-diagonal at a time (memory
    in the reference's length only): the DTW and each reference node's minimum cost."""
    m, k = rows.shape[0], traj.shape[0]
    prev2, prev1, cur = (np.full(m + 1, INF) for _ in range(3))
    prev2[0] = 0.0  # D[-1, -1]
    near = np.full(m, INF)
    for t in range(m + k - 1):
        lo, hi = max(0, t - k + 1), min(t, m - 1)
        diagonal = dist[rows[lo : hi + 1] + traj[t - hi : t - lo + 1][::-1]]  # d(r_i, p_{t-i})
        np.minimum(near[lo : hi + 1], diagonal, out=near[lo : hi + 1])
        best = np.minimum(prev1[lo : hi + 1], prev1[lo + 1 : hi + 2])
        np.minimum(best, prev2[lo : hi + 1], out=best)
        np.add(diagonal, best, out=cur[lo + 1 : hi + 2])
        if t == 0:
            prev2[0] = INF
        prev2, prev1, cur = prev1, cur, prev2
    return float(prev1[m]), near


def _dtw_block(cost: np.ndarray, m: np.ndarray, last: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """DTW of a block from its ``(i, j, episode)`` costs, episodes in decreasing ``last``; and
    the minimum cost of each row ``i`` (as ``(episode, i)``).

    Rows and columns past an episode's own lengths repeat its last node: real pairs, so the
    minima stay exact, and no real cell of ``D`` depends on them.
    """
    width, most, n_ep = cost.shape
    steps = int(last[0]) + 1
    s_i, s_j, s_ep = cost.strides
    neg_last = np.negative(last)
    running = np.searchsorted(neg_last, -np.arange(steps), "right").tolist()  # last >= t
    finished = np.searchsorted(neg_last, -np.arange(steps), "left").tolist()  # last > t
    res = np.empty(n_ep)
    # Three rotating anti-diagonals; row c holds cell i = c - 1 (row 0: the border).
    prev2, prev1, cur = (np.full((width + 1, n_ep), INF) for _ in range(3))
    prev2[0] = 0.0  # D[-1, -1]
    for t in range(steps):
        run, done = running[t], finished[t]
        hi = min(t, width - 1)
        lo = max(0, t - most + 1)  # below lo, j = t - i is past every trajectory
        # cost[i, t - i, :run] for lo <= i <= hi, as a strided view (no copy; the ndarray
        # constructor makes it in a microsecond, ten times faster than ``as_strided``).
        diagonal = np.ndarray(
            (hi - lo + 1, run), cost.dtype, cost, lo * s_i + (t - lo) * s_j, (s_i - s_j, s_ep)
        )
        best = np.minimum(prev1[lo : hi + 1, :run], prev1[lo + 1 : hi + 2, :run])
        np.minimum(best, prev2[lo : hi + 1, :run], out=best)
        np.add(diagonal, best, out=cur[lo + 1 : hi + 2, :run])
        if done < run:
            res[done:run] = cur[m[done:run], np.arange(done, run)]
        if t == 0:
            prev2[0] = INF  # reused as a later diagonal, whose border is +inf
        prev2, prev1, cur = prev1, cur, prev2
    return res, cost.min(axis=1).T


# ---- the formulas, elementwise on arrays or on floats ----


def success_of(error: np.ndarray, threshold: float, inclusive: bool) -> np.ndarray:
    """1.0 when error < threshold (error <= threshold if inclusive), else 0.0; NaN fails."""
    ok = error <= threshold if inclusive else error < threshold
    return ok.astype(np.float64)  # type: ignore[no-any-return]


def spl_of(success: np.ndarray, ell: np.ndarray, tl: np.ndarray, floor: float) -> np.ndarray:
    """S * ell / max(ell, tl, floor); 0/0 (ell = tl = floor = 0) is the CVDN rule: S; 0 when
    S = 0 or ell = inf (no 0 * inf, no inf / inf)."""
    denom = np.maximum(np.maximum(ell, tl), floor)
    scored = (success != 0.0) & (ell < INF)
    with np.errstate(divide="ignore", invalid="ignore"):
        value = np.where(denom == 0.0, success, success * ell / denom)
    return np.where(scored, value, 0.0)


def ndtw_of(dtw_value: np.ndarray, m: np.ndarray, threshold: float) -> np.ndarray:
    """exp(-DTW / (m * threshold)); 0 when DTW is not finite (empty or unreachable) or m = 0."""
    finite = (m > 0) & np.isfinite(dtw_value)
    out = np.zeros(dtw_value.shape[0])
    out[finite] = exp(np.negative(dtw_value[finite]) / (m[finite] * threshold))
    return out


def cls_of(pc: np.ndarray, tl: np.ndarray, rl: np.ndarray) -> np.ndarray:
    """PC * LS with EPL = PC * L(R), LS = EPL / (EPL + |EPL - L(P)|) (1 when that is 0).

    PC = 0: nothing covered (0 * inf must not leak). L(R) = inf: a reference with an
    unreachable hop has no finite expected length; LS = 0 by definition.
    """
    epl = pc * np.where(rl < INF, rl, 0.0)
    denom = epl + np.abs(epl - tl)
    with np.errstate(divide="ignore", invalid="ignore"):
        ls = np.where(denom == 0.0, 1.0, epl / denom)
    return np.where((pc != 0.0) & (rl < INF), pc * ls, 0.0)


def coverage(closest: np.ndarray, ref_offsets: np.ndarray, threshold: float) -> np.ndarray:
    """CLS's path coverage PC = (1/m) Σ_k exp(-min_j d(r_k, p_j) / δ) of every episode, from
    each reference node's nearest trajectory distance (:func:`dtw_batch`)."""
    score = exp(np.negative(closest) / threshold)
    with np.errstate(invalid="ignore", divide="ignore"):
        return sequential_sum(score, ref_offsets) / np.diff(ref_offsets)  # type: ignore[no-any-return]


# ---- one episode (a 1-D path over one table) ----


def _one(path: np.ndarray) -> np.ndarray:
    return np.array([0, path.shape[0]], dtype=np.int64)


def nearest(dist: np.ndarray, n: int, nodes: np.ndarray, targets: np.ndarray) -> float:
    """min over u in nodes, v in targets of d(u, v); +inf when either is empty."""
    if nodes.shape[0] == 0 or targets.shape[0] == 0:
        return INF
    return float(dist[nodes.astype(np.int64)[:, None] * n + targets[None, :]].min())


def path_length(dist: np.ndarray, n: int, path: np.ndarray) -> float:
    """Sum of d(p_j, p_j+1), left to right; a repeated node adds exactly 0."""
    total = 0.0
    a = path.astype(np.int64)
    for hop in dist[a[:-1] * n + a[1:]][a[:-1] != a[1:]].tolist():
        total += hop
    return total


def is_success(error: float, threshold: float, inclusive: bool) -> float:
    """1.0 when error < threshold (error <= threshold if inclusive), else 0.0; NaN fails."""
    return 1.0 if (error <= threshold if inclusive else error < threshold) else 0.0


def spl(success: float, ell: float, tl: float, floor: float) -> float:
    """S * ell / max(ell, tl, floor), with the rules of :func:`spl_of`."""
    if success == 0.0 or not ell < INF:
        return 0.0
    denom = max(ell, tl, floor)
    return success if denom == 0.0 else success * ell / denom


def collapse(path: np.ndarray) -> np.ndarray:
    """The path without consecutive duplicates (a new array)."""
    return path[~moves(path, _one(path))[1]]


def dtw(dist: np.ndarray, n: int, ref: np.ndarray, traj: np.ndarray) -> float:
    """Exact DTW(ref, traj) on one table; +inf if one is empty."""
    return float(
        dtw_batch(dist, np.array([0]), np.array([n]), ref, _one(ref), traj, _one(traj))[0][0]
    )


def ndtw_from_dtw(dtw: float, n_reference: int, threshold: float = 3.0) -> float:
    """``exp(−DTW / (m · δ))`` with ``m`` the number of reference points; 0 when DTW is inf.

    Example:
        >>> round(ndtw_from_dtw(3.0, 2, 3.0), 4)
        0.6065
    """
    if n_reference <= 0 or not math.isfinite(dtw):
        return 0.0
    return math.exp(-dtw / (n_reference * threshold))


def cls(
    dist: np.ndarray,
    n: int,
    traj: np.ndarray,
    ref: np.ndarray,
    threshold: float,
    traj_len: float,
    ref_len: float,
) -> float:
    """Coverage weighted by length score (Jain et al. 2019), given L(P) and L(R)."""
    if ref.shape[0] == 0:
        return 0.0
    _, closest = dtw_batch(dist, np.array([0]), np.array([n]), ref, _one(ref), traj, _one(traj))
    pc = coverage(closest, _one(ref), threshold)
    return float(cls_of(pc, np.array([traj_len]), np.array([ref_len]))[0])


# ---- every column of score_batch (``start``, ``size``: each episode's table) ----


def reference_lengths(
    dist: np.ndarray,
    start: np.ndarray,
    size: np.ndarray,
    ref: np.ndarray,
    ref_offsets: np.ndarray,
    goals: np.ndarray,
    goal_offsets: np.ndarray,
    use_reference_length: bool,
) -> tuple[np.ndarray, np.ndarray]:
    """Per episode, L(R) and SPL's ``ell`` (L(R), or ``min_g d(r_1, g)``): they depend on the
    episodes only, so a scorer of many files can compute them once."""
    r_own = owners(ref_offsets)
    rows = start[r_own] + ref.astype(np.int64) * size[r_own]
    hops = hop_lengths(dist, rows, ref, moves(ref, ref_offsets)[0])
    rl = sequential_sum(hops, ref_offsets)
    if use_reference_length:
        return rl, rl
    first = ref[ref_offsets[:-1]]
    return rl, nearest_each(
        dist, start, size, first, np.arange(start.shape[0]), goals, goal_offsets
    )


def score_batch(
    dist: np.ndarray,
    start: np.ndarray,
    size: np.ndarray,
    traj: np.ndarray,
    traj_offsets: np.ndarray,
    ref: np.ndarray,
    ref_offsets: np.ndarray,
    goals: np.ndarray,
    goal_offsets: np.ndarray,
    lengths: tuple[np.ndarray, np.ndarray],
    *,
    threshold: float,
    success_inclusive: bool,
    sdtw_inclusive: bool,
    spl_floor: float,
    collapse_repeats: bool,
    cls_threshold: float,
    fidelity: bool = True,
) -> np.ndarray:
    """The (len(batch.COLUMNS), N) table of every per-episode metric; rows follow COLUMNS.

    ``lengths``: :func:`reference_lengths` of these episodes. ``fidelity=False``: DTW, nDTW,
    sDTW and CLS are not computed (NaN).
    """
    k = np.diff(traj_offsets)
    t_own = owners(traj_offsets)
    rows = start[t_own] + traj.astype(np.int64) * size[t_own]  # where d(p_j, .) starts
    to_goal = nearest_rows(dist, rows, t_own, goals, goal_offsets)
    ne = np.full(k.shape[0], INF)
    ne[k > 0] = to_goal[traj_offsets[1:][k > 0] - 1]
    oe = segment_min(to_goal, traj_offsets)
    moved, same = moves(traj, traj_offsets)
    tl = sequential_sum(hop_lengths(dist, rows, traj, moved), traj_offsets)
    rl, ell = lengths
    sr = success_of(ne, threshold, success_inclusive)
    repeats = np.bincount(t_own[same], minlength=k.shape[0])
    d = nd = sdtw = cls = np.full(k.shape[0], np.nan)
    if fidelity:
        q, q_off = traj, traj_offsets
        if collapse_repeats:
            q, q_off = traj[~same], offsets_of(k - repeats)
        d, closest = dtw_batch(dist, start, size, ref, ref_offsets, q, q_off)
        nd = ndtw_of(d, np.diff(ref_offsets), threshold)
        sdtw = success_of(ne, threshold, sdtw_inclusive) * nd
        # Collapsing drops only zero-length hops, so L(q) == tl exactly.
        cls = cls_of(coverage(closest, ref_offsets, cls_threshold), tl, rl)
    return np.stack(
        (
            ne,
            oe,
            sr,
            success_of(oe, threshold, success_inclusive),
            tl,
            ell,
            rl,
            spl_of(sr, ell, tl, spl_floor),
            d,
            nd,
            sdtw,
            cls,
            np.maximum(k - 1, 0),
            repeats,
        ),  # fmt: skip
        axis=0,
    ).astype(np.float64)
