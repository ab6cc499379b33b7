"""Compiled cores of continuous motion: the cell walk, sub-stepped translation and unicycle
driving, the path follower, the waypoint executor's control loop and grid path descent.

These are the only implementation of the rules documented in :mod:`vlneval.continuous.motion`,
:mod:`vlneval.continuous.control` and :mod:`vlneval.envs.continuous.executor`; those modules
wrap them. A world is passed as ``free`` (L, H, W) bool, ``height`` (L, H, W) float and
``geo = [resolution, origin x, origin y, climb, slope]``. A pose is ``(x, y, layer, z)``
(plus a heading where it turns). Arithmetic follows the order of the plain-Python formulas
step by step, and :func:`hypot` is correctly rounded like CPython's ``math.hypot``, so results
are the same floats as Python computes.

Importing this module imports numba: only the modules above import it.
"""

from __future__ import annotations

import math

import numba
import numpy as np

__all__ = [
    "hypot",
    "enter",
    "segment",
    "move",
    "drive",
    "disk_min",
    "discrete_choice",
    "NO_TURN",
    "follow",
    "run_waypoint",
    "descend_path",
    "REACHED",
    "TIMEOUT",
    "STALLED",
]

_jit = numba.njit(cache=True, nogil=True)
_TWO_PI = 2.0 * math.pi
_SPLIT = 134217729.0  # 2**27 + 1: Veltkamp's splitting constant for doubles
REACHED, TIMEOUT, STALLED = 0, 1, 2
#: discrete_choice when no step makes progress
NO_TURN = -(1 << 30)


@_jit
def _two_prod(a, b):  # type: ignore[no-untyped-def]
    """``(p, e)`` with ``p = fl(a * b)`` and ``a * b = p + e`` exactly (Dekker)."""
    p = a * b
    c = _SPLIT * a
    ah = c - (c - a)
    al = a - ah
    c = _SPLIT * b
    bh = c - (c - b)
    bl = b - bh
    return p, ((ah * bh - p) + ah * bl + al * bh) + al * bl


@_jit
def hypot(x, y):  # type: ignore[no-untyped-def]
    """``sqrt(x² + y²)`` correctly rounded (CPython's ``math.hypot`` is, from 3.10 on).

    The sum of squares is kept as a double-double after scaling by a power of two, and the
    square root gets one Newton correction: about 100 correct bits before the last rounding.
    """
    x, y = abs(x), abs(y)
    if math.isinf(x) or math.isinf(y):
        return math.inf
    if math.isnan(x) or math.isnan(y):
        return math.nan
    if x < y:
        x, y = y, x
    if y == 0.0:
        return x
    e = math.frexp(x)[1]
    a, b = math.ldexp(x, -e), math.ldexp(y, -e)
    p, pe = _two_prod(a, a)
    q, qe = _two_prod(b, b)
    s = p + q
    lo = ((p - s) + q) + (pe + qe)
    t = s + lo
    lo = (s - t) + lo
    h = math.sqrt(t)
    hh, he = _two_prod(h, h)
    h = h + (((t - hh) - he) + lo) / (2.0 * h)
    return math.ldexp(h, e)


@_jit
def _cell(geo, x, y):  # type: ignore[no-untyped-def]
    return (
        int(math.floor((y - geo[2]) / geo[0] + 0.5)),
        int(math.floor((x - geo[1]) / geo[0] + 0.5)),
    )


@_jit
def enter(free, height, geo, layer, i, j, i2, j2):  # type: ignore[no-untyped-def]
    """The layer entered by the side step from (layer, i, j) to (i2, j2); -1 if blocked."""
    if not (0 <= i2 < free.shape[1] and 0 <= j2 < free.shape[2]):
        return -1
    h0 = height[layer, i, j]
    di, dj = abs(i2 - i), abs(j2 - j)
    dxy = geo[0] if di + dj == 1 else geo[0] * hypot(float(di), float(dj))  # hypot(1, 0) == 1
    limit = geo[3] + geo[4] * dxy
    best, best_dh = -1, math.inf
    for k in range(free.shape[0]):
        if not free[k, i2, j2]:
            continue
        dh = abs(height[k, i2, j2] - h0)
        if dh <= limit and (dh < best_dh or (dh == best_dh and k == layer)):
            best, best_dh = k, dh
    return best


@_jit
def _around(free, height, geo, layer, i, j, si, sj):  # type: ignore[no-untyped-def]
    """A diagonal step through a corner: by the row first, else by the column first."""
    k = enter(free, height, geo, layer, i, j, i + si, j)
    if k >= 0:
        k = enter(free, height, geo, k, i + si, j, i + si, j + sj)
        if k >= 0:
            return k
    k = enter(free, height, geo, layer, i, j, i, j + sj)
    if k >= 0:
        k = enter(free, height, geo, k, i, j + sj, i + si, j + sj)
        if k >= 0:
            return k
    return -1


@_jit
def segment(free, height, geo, x0, y0, layer, x1, y1):  # type: ignore[no-untyped-def]
    """The layer at (x1, y1) after the straight segment from (x0, y0, layer); -1 if a cell
    it crosses cannot be entered. Cells are visited in the order the segment crosses them."""
    res = geo[0]
    u0, v0 = (x0 - geo[1]) / res + 0.5, (y0 - geo[2]) / res + 0.5
    u1, v1 = (x1 - geo[1]) / res + 0.5, (y1 - geo[2]) / res + 0.5
    j, i = int(math.floor(u0)), int(math.floor(v0))
    j2, i2 = int(math.floor(u1)), int(math.floor(v1))
    if i == i2 and j == j2:
        return layer
    du, dv = u1 - u0, v1 - v0
    sj = 1 if du > 0 else -1
    si = 1 if dv > 0 else -1
    tj = ((j + (1 if sj > 0 else 0)) - u0) / du if du else math.inf
    ti = ((i + (1 if si > 0 else 0)) - v0) / dv if dv else math.inf
    dtj = abs(1.0 / du) if du else math.inf
    dti = abs(1.0 / dv) if dv else math.inf
    scale = max(abs(du), abs(dv))
    for _ in range(abs(i2 - i) + abs(j2 - j)):
        if i == i2 and j == j2:
            break
        if abs(tj - ti) * scale < 1e-6:  # through a corner (to 1e-6 cell): either side
            tj += dtj
            ti += dti
            k = _around(free, height, geo, layer, i, j, si, sj)
            if k < 0:
                return -1
            layer, i, j = k, i + si, j + sj
            continue
        if tj < ti:
            ni, nj = i, j + sj
            tj += dtj
        else:
            ni, nj = i + si, j
            ti += dti
        k = enter(free, height, geo, layer, i, j, ni, nj)
        if k < 0:
            return -1
        layer, i, j = k, ni, nj
    if i != i2 or j != j2:  # rounding at a boundary: finish with side steps
        if i2 != i:  # to (i2, j), then to (i2, j2) unless there already
            k = enter(free, height, geo, layer, i, j, i2, j) if abs(i2 - i) == 1 else -1
            if k < 0:
                return -1
            layer, i = k, i2
            if j2 != j:
                k = enter(free, height, geo, layer, i, j, i2, j2) if abs(j2 - j) == 1 else -1
                if k < 0:
                    return -1
                layer = k
        else:
            k = enter(free, height, geo, layer, i, j, i, j2) if abs(j2 - j) == 1 else -1
            if k < 0:
                return -1
            layer = k
    return layer


@_jit
def move(free, height, geo, substep, x, y, layer, z, dx, dy, slide, partial, record):  # type: ignore[no-untyped-def]
    """Moves by (dx, dy) in straight sub-steps (see ``Mover.translate``).

    Returns ``(x, y, layer, z, length, blocked, trail)``: the length and the trail (rows x, y,
    layer, z, one per sub-step that moved) only when ``record``, else 0 and empty (a test
    of where a motion ends).
    """
    n = max(1, int(math.ceil(hypot(dx, dy) / substep)))
    sx, sy = dx / n, dy / n
    trail = np.empty((n if record else 0, 4))
    count, blocked = 0, False
    length, run = 0.0, 0.0
    cx, cy, cl, cz = x, y, layer, z
    for _ in range(n):
        nx, ny = cx + sx, cy + sy
        nl = segment(free, height, geo, cx, cy, cl, nx, ny)
        if nl < 0:
            blocked = True
            if not slide:
                break
            first_x = abs(sx) >= abs(sy)
            for a in range(2):
                ax = sx if (a == 0) == first_x else 0.0
                ay = 0.0 if (a == 0) == first_x else sy
                if ax != 0.0 or ay != 0.0:
                    nx, ny = cx + ax, cy + ay
                    nl = segment(free, height, geo, cx, cy, cl, nx, ny)
                    if nl >= 0:
                        break
            if nl < 0:
                break
        ci, cj = _cell(geo, nx, ny)
        nz = height[nl, ci, cj]
        if record:
            run += hypot(nx - cx, ny - cy)
            if nz != cz:
                length += hypot(run, nz - cz)
                run = 0.0
        cx, cy, cl, cz = nx, ny, nl, nz
        if record:
            trail[count, 0], trail[count, 1], trail[count, 2], trail[count, 3] = cx, cy, cl, cz
        count += 1
    if blocked and not slide and not partial:
        return x, y, layer, z, 0.0, True, trail[:0]
    return cx, cy, cl, cz, length + run, blocked, trail[:count]


@_jit
def drive(free, height, geo, substep, x, y, layer, z, heading, v, w, duration):  # type: ignore[no-untyped-def]
    """Unicycle motion (see ``Mover.drive``): ``(x, y, layer, z, heading, length, blocked,
    trail)`` with trail rows (x, y, layer, z, heading), one per sub-step."""
    steps = max(
        1,
        int(math.ceil(abs(v) * duration / substep)),
        int(math.ceil(abs(w) * duration / 0.05)),
    )
    dt = duration / steps
    trail = np.empty((steps, 5))
    blocked = False
    length, run = 0.0, 0.0
    for s in range(steps):
        mid = heading + 0.5 * w * dt
        if v != 0.0 and not blocked:
            nx = x + v * dt * math.sin(mid)
            ny = y + v * dt * math.cos(mid)
            nl = segment(free, height, geo, x, y, layer, nx, ny)
            if nl < 0:
                blocked = True
            else:
                ci, cj = _cell(geo, nx, ny)
                nz = height[nl, ci, cj]
                run += hypot(nx - x, ny - y)
                if nz != z:
                    length += hypot(run, nz - z)
                    run = 0.0
                x, y, layer, z = nx, ny, nl, nz
        heading = (heading + w * dt) % _TWO_PI
        trail[s, 0], trail[s, 1], trail[s, 2], trail[s, 3], trail[s, 4] = x, y, layer, z, heading
    return x, y, layer, z, heading, length + run, blocked, trail


@_jit
def _forward_node(free, height, geo, node_id, substep, x, y, layer, z, h, distance, slide, partial):  # type: ignore[no-untyped-def]
    dx, dy = math.sin(h), math.cos(h)
    fx, fy, fl, _, _, _, _ = move(
        free, height, geo, substep, x, y, layer, z, dx * distance, dy * distance,
        slide, partial, False,
    )  # fmt: skip
    i, j = _cell(geo, fx, fy)
    return node_id[fl, i, j]


@_jit
def disk_min(field, node_id, geo, x, y, radius):  # type: ignore[no-untyped-def]
    """The least ``field`` value of the free cells (any layer) that hold a point within
    ``radius`` of (x, y) (a cell's square, edges included, meets the disk); inf if none."""
    res, best = geo[0], math.inf
    half, r2 = 0.5 * geo[0], radius * radius
    i0, j0 = _cell(geo, x - radius, y - radius)
    i1, j1 = _cell(geo, x + radius, y + radius)
    for i in range(max(i0 - 1, 0), min(i1 + 1, node_id.shape[1] - 1) + 1):
        gy = max(abs(geo[2] + i * res - y) - half, 0.0)
        for j in range(max(j0 - 1, 0), min(j1 + 1, node_id.shape[2] - 1) + 1):
            gx = max(abs(geo[1] + j * res - x) - half, 0.0)
            if gx * gx + gy * gy > r2:
                continue
            for k in range(node_id.shape[0]):
                node = node_id[k, i, j]
                if node >= 0 and field[node] < best:
                    best = field[node]
    return best


@_jit
def discrete_choice(
    free,
    height,
    geo,
    node_id,
    substep,
    field,
    x,
    y,
    layer,
    z,
    heading,
    ks,
    turn,
    distance,
    slide,
    partial,
    here,
):  # type: ignore[no-untyped-def]
    """The discrete teacher's choice: the first ``k`` of ``ks`` whose forward step (after
    turning ``k * turn``) lowers the ``field`` the most, by more than 0.01 m below ``here``
    and 1e-9 below the best so far; ``NO_TURN`` (no step makes progress) when none does.

    A step ends within ``distance`` of (x, y) (its sub-steps, slid or not, are no longer than
    ``distance / n``), in a cell that holds such a point: no step reaches a value below the
    least of those cells' (``bound``; the radius has a micrometre to spare for rounding). Once the best so far is within 1e-9 of that bound no later ``k`` can
    beat it, and the remaining steps are not simulated (the choice is the same).
    """
    bound = disk_min(field, node_id, geo, x, y, distance + 1e-6)
    best_k, best = NO_TURN, here - 0.01
    for n in range(len(ks)):
        if best - 1e-9 <= bound:
            break
        value = field[
            _forward_node(
                free, height, geo, node_id, substep, x, y, layer, z, heading + ks[n] * turn,
                distance, slide, partial,
            )
        ]  # fmt: skip
        if value < best - 1e-9:
            best_k, best = ks[n], value
    return best_k


# -- the path follower (state: [has target, tx, ty, t layer, base, target index]) --------------
@_jit
def _wrap_pi(angle):  # type: ignore[no-untyped-def]
    a = np.fmod(angle, _TWO_PI)  # exact, as C fmod
    if a > math.pi:
        a -= _TWO_PI
    elif a <= -math.pi:
        a += _TWO_PI
    return a


@_jit
def _drivable(free, height, geo, substep, x, y, layer, z, px, py, player):  # type: ignore[no-untyped-def]
    fx, fy, fl, _, _, blocked, _ = move(
        free, height, geo, substep, x, y, layer, z, px - x, py - y, False, True, False
    )
    if blocked or fl != int(player):
        return False
    fi, fj = _cell(geo, fx, fy)
    pi, pj = _cell(geo, px, py)
    return fi == pi and fj == pj


@_jit
def _choose(free, height, geo, substep, path, arc, horizon, st, x, y, layer, z):  # type: ignore[no-untyped-def]
    base = int(st[4])
    best = -1
    for j in range(base, len(path)):
        if best >= 0 and arc[j] - arc[base] > horizon:
            break
        if _drivable(
            free, height, geo, substep, x, y, layer, z, path[j, 0], path[j, 1], path[j, 2]
        ):
            best = j
        elif best >= 0:
            break
    st[0] = 1.0
    if best < 0:  # nothing in sight: back to the centre of the robot's own cell
        ci, cj = _cell(geo, x, y)
        st[1], st[2], st[3] = geo[1] + cj * geo[0], geo[2] + ci * geo[0], float(layer)
        st[5] = -1.0
    else:
        st[1], st[2], st[3] = path[best, 0], path[best, 1], path[best, 2]
        st[5] = float(best)


@_jit
def follow(free, height, geo, substep, path, arc, limits, st, x, y, layer, z, heading, collided):  # type: ignore[no-untyped-def]
    """``(v, w)`` of the path follower for the next period; ``limits = [speed, angular_max,
    period, reach, horizon]``; updates the state ``st`` in place (``PathFollower.command``)."""
    near = st[0] != 0.0 and hypot(st[1] - x, st[2] - y) <= limits[3]
    if near and st[5] >= 0:
        st[4] = st[5]
    if st[0] == 0.0 or collided or near:
        _choose(free, height, geo, substep, path, arc, limits[4], st, x, y, layer, z)
    tx, ty = st[1], st[2]
    dist = hypot(tx - x, ty - y)
    if dist <= 1e-9:
        return 0.0, 0.0
    err = _wrap_pi(math.atan2(tx - x, ty - y) % _TWO_PI - heading)
    if abs(err) > 1e-9:  # turn in place first, so that the drive is the straight line tested
        return 0.0, max(-limits[1], min(limits[1], err / limits[2]))
    return min(limits[0], dist / limits[2]), 0.0


@_jit
def run_waypoint(
    free,
    height,
    geo,
    substep,
    path,
    arc,
    limits,
    x,
    y,
    layer,
    z,
    heading,
    tolerance,
    budget,
    stall_s,
):  # type: ignore[no-untyped-def]
    """The executor's control loop: follow ``path`` until within ``tolerance`` of its last
    point (on its layer), a stall of ``stall_s`` seconds, or ``budget`` seconds.

    Returns ``(status, length, time, trail)``, trail rows (x, y, layer, z, heading) per tick.
    """
    dt = limits[2]
    gx, gy, glayer = path[-1, 0], path[-1, 1], int(path[-1, 2])
    st = np.zeros(6)
    trail = np.empty((int(budget / dt) + 8, 5))
    count, length, elapsed, stall, collided = 0, 0.0, 0.0, 0.0, False
    while elapsed < budget:
        if hypot(gx - x, gy - y) <= tolerance and layer == glayer:
            return REACHED, length, elapsed, trail[:count]
        v, w = follow(
            free, height, geo, substep, path, arc, limits, st, x, y, layer, z, heading, collided
        )
        x, y, layer, z, heading, m_len, collided, _ = drive(
            free, height, geo, substep, x, y, layer, z, heading, v, w, dt
        )
        length += m_len
        elapsed += dt
        if count == len(trail):
            trail = np.concatenate((trail, np.empty_like(trail)))
        trail[count, 0], trail[count, 1], trail[count, 2] = x, y, layer
        trail[count, 3], trail[count, 4] = z, heading
        count += 1
        stall = 0.0 if (m_len > 0 or w != 0) else stall + dt
        if stall >= stall_s:
            return STALLED, length, elapsed, trail[:count]
    return TIMEOUT, length, elapsed, trail[:count]


@_jit
def descend_path(indptr, indices, weights, field, node, limit):  # type: ignore[no-untyped-def]
    """Nodes of the path from ``node`` down the distance ``field`` to its source: each step
    goes to the neighbour minimising ``weight + field`` (the first such), while that lowers
    the field (``geodesic.shortest_path``)."""
    out = np.empty(16, dtype=np.int64)
    out[0] = node
    n = 1
    if not np.isfinite(field[node]):
        return out[:1]
    while field[out[n - 1]] > 0 and n < limit:
        cur = out[n - 1]
        lo, hi = indptr[cur], indptr[cur + 1]
        if hi == lo:
            break
        best = lo
        best_value = weights[lo] + field[indices[lo]]
        for e in range(lo + 1, hi):
            value = weights[e] + field[indices[e]]
            if value < best_value:
                best, best_value = e, value
        nxt = indices[best]
        if not field[nxt] < field[cur]:
            break
        if n == len(out):
            out = np.concatenate((out, np.empty_like(out)))
        out[n] = nxt
        n += 1
    return out[:n]
