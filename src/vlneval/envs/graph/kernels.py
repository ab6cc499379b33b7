"""Compiled step and observation loops of the vectorised graph environment.

State is one row per slot (node, heading index, elevation index, steps, episode); tables are the
candidate tables of every scan concatenated with global node ids (see ``vector.FlatTables``).
Importing this module imports numba: only ``vlneval.envs.graph.vector`` imports it, on first use.
"""

from __future__ import annotations

import numba
import numpy as np

__all__ = ["step_batch", "start_batch", "RUNNING", "STOPPED", "TRUNCATED", "POSE_COLUMNS"]

RUNNING, STOPPED, TRUNCATED = 0, 1, 2
#: Columns of the ``pose`` observation array.
POSE_COLUMNS = ("active", "scan", "node", "h", "e", "view", "step", "episode", "count")
_TURN_LEFT, _TURN_RIGHT, _LOOK_UP, _LOOK_DOWN = -1, -2, -3, -4
_ELEV = np.pi / 6.0

_jit = numba.njit(cache=True, nogil=True)


@_jit
def _valid(pano: bool, a: int, n: int) -> bool:
    if 0 <= a < n:
        return True
    return (not pano) and -4 <= a <= -1


@_jit
def _finish(slot, ep, code, path, out):  # type: ignore[no-untyped-def]
    """Copies the slot's executed path to the output store."""
    path_node, path_h, path_e, path_len = path
    out_node, out_h, out_e, out_offset, out_len, out_status, out_pos = out
    n = path_len[slot]
    p = out_pos[0]
    for t in range(n):
        out_node[p + t] = path_node[slot, t]
        out_h[p + t] = path_h[slot, t]
        out_e[p + t] = path_e[slot, t]
    out_offset[ep] = p
    out_len[ep] = n
    out_status[ep] = code
    out_pos[0] = p + n


@_jit
def _refill(slot, state, episodes, path):  # type: ignore[no-untyped-def]
    """Starts the next queued episode in ``slot`` (none left: the slot stays idle)."""
    node, h, e, steps, slot_ep = state
    ep_start, ep_h, queue, qpos = episodes
    path_node, path_h, path_e, path_len = path
    if qpos[0] >= queue.shape[0]:
        return
    q = queue[qpos[0]]
    qpos[0] += 1
    node[slot] = ep_start[q]
    h[slot] = ep_h[q]
    e[slot] = 1
    steps[slot] = 0
    slot_ep[slot] = q
    path_node[slot, 0] = node[slot]
    path_h[slot, 0] = h[slot]
    path_e[slot, 0] = 1
    path_len[slot] = 1


@_jit
def _move(pano, slot, a, node, h, e, tnode, tview):  # type: ignore[no-untyped-def]
    g, hh, ee = node[slot], h[slot], e[slot]
    if a >= 1:
        if pano:
            view = tview[g, hh, a]
            node[slot] = tnode[g, hh, a]
            h[slot] = view % 12
            e[slot] = view // 12
        else:
            node[slot] = tnode[g, 12 * ee + hh, a]
    elif a == _TURN_RIGHT:
        h[slot] = (hh + 1) % 12
    elif a == _TURN_LEFT:
        h[slot] = (hh + 11) % 12
    elif a == _LOOK_UP:
        e[slot] = min(ee + 1, 2)
    elif a == _LOOK_DOWN:
        e[slot] = max(ee - 1, 0)


@_jit
def _no_candidate(slot, k, cint, cflt):  # type: ignore[no-untyped-def]
    cint[slot, 0, k] = -1
    cint[slot, 1, k] = -1
    cflt[slot, 0, k] = 0.0
    cflt[slot, 1, k] = 0.0
    cflt[slot, 2, k] = 0.0


@_jit
def _observe(pano, slot, state, tables, obs):  # type: ignore[no-untyped-def]
    """Writes slot ``slot``'s observation: ``pose`` row (active, scan, node, h, e, view, step,
    episode, count), candidate ids and views (``cint``) and angles and distances (``cflt``)."""
    node, h, e, steps, slot_ep = state
    node_scan, tcount, tnode, tview, trh, tel, tdist = tables
    pose, cint, cflt = obs
    width = cint.shape[2]
    q = slot_ep[slot]
    if q < 0:
        for c in range(9):
            pose[slot, c] = -1
        pose[slot, 0] = 0
        pose[slot, 8] = 0
        for k in range(width):
            _no_candidate(slot, k, cint, cflt)
        return
    g, hh, ee = node[slot], h[slot], e[slot]
    view = 12 * ee + hh
    row = hh if pano else view
    n = tcount[g, row]
    elev = (ee - 1) * _ELEV
    pose[slot, 0] = 1
    pose[slot, 1] = node_scan[g]
    pose[slot, 2] = g
    pose[slot, 3] = hh
    pose[slot, 4] = ee
    pose[slot, 5] = view
    pose[slot, 6] = steps[slot]
    pose[slot, 7] = q
    pose[slot, 8] = n
    for k in range(width):
        if k >= n:
            _no_candidate(slot, k, cint, cflt)
        elif k == 0:
            cint[slot, 0, 0] = g
            cint[slot, 1, 0] = view
            cflt[slot, 0, 0] = 0.0
            cflt[slot, 1, 0] = 0.0
            cflt[slot, 2, 0] = 0.0
        else:
            cint[slot, 0, k] = tnode[g, row, k]
            cint[slot, 1, k] = tview[g, row, k] if pano else view
            cflt[slot, 0, k] = trh[g, row, k]
            cflt[slot, 1, k] = tel[g, row, k] - elev if pano else tel[g, row, k]
            cflt[slot, 2, k] = tdist[g, row, k]


@_jit
def step_batch(
    pano, actions, max_steps, state, tables, episodes, path, out, obs, terminated, truncated
):  # type: ignore[no-untyped-def]
    """Steps every active slot, records finished paths, starts queued episodes, observes.

    Returns ``(−1, finished)``, or ``(slot, 0)`` for the first slot whose action is invalid (then
    nothing has moved).
    """
    node, h, e, steps, slot_ep = state
    tcount, tnode, tview = tables[1], tables[2], tables[3]
    path_node, path_h, path_e, path_len = path
    batch = actions.shape[0]
    for slot in range(batch):
        if slot_ep[slot] >= 0:
            g = node[slot]
            row = h[slot] if pano else 12 * e[slot] + h[slot]
            if not _valid(pano, actions[slot], tcount[g, row]):
                return slot, 0
    finished = 0
    for slot in range(batch):
        terminated[slot] = False
        truncated[slot] = False
        ep = slot_ep[slot]
        if ep < 0:
            continue
        a = actions[slot]
        steps[slot] += 1
        code = RUNNING
        if a == 0:
            code = STOPPED
        else:
            _move(pano, slot, a, node, h, e, tnode, tview)
            t = path_len[slot]
            path_node[slot, t] = node[slot]
            path_h[slot, t] = h[slot]
            path_e[slot, t] = e[slot]
            path_len[slot] = t + 1
            if steps[slot] >= max_steps:
                code = TRUNCATED
        if code == RUNNING:
            continue
        finished += 1
        terminated[slot] = code == STOPPED
        truncated[slot] = code == TRUNCATED
        _finish(slot, ep, code, path, out)
        slot_ep[slot] = -1
        _refill(slot, state, episodes, path)
    for slot in range(batch):
        _observe(pano, slot, state, tables, obs)
    return -1, finished


@_jit
def start_batch(pano, state, tables, episodes, path, obs):  # type: ignore[no-untyped-def]
    """Fills every slot from the queue (idle when it runs out) and observes."""
    slot_ep = state[4]
    for slot in range(slot_ep.shape[0]):
        slot_ep[slot] = -1
        _refill(slot, state, episodes, path)
        _observe(pano, slot, state, tables, obs)
