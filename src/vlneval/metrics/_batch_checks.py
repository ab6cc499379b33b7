"""Vectorised checks of score_batch's packed arrays (O(total size), no Python loop per episode)."""

from __future__ import annotations

from typing import Any

import numpy as np

from vlneval.errors import InvalidInputError

__all__ = ["check_batch"]


def _vector(value: Any, name: str, kinds: str) -> np.ndarray:
    try:
        arr = np.asarray(value)
    except (ValueError, TypeError) as exc:
        raise InvalidInputError(
            f"{name} must be a 1-D array; could not convert it ({exc})"
        ) from None
    if arr.ndim != 1:
        raise InvalidInputError(f"{name} must be a 1-D array; got shape {arr.shape}")
    if arr.size and arr.dtype.kind not in kinds:
        what = "integers" if kinds == "iu" else "real numbers"
        raise InvalidInputError(f"{name} must hold {what}; got dtype {arr.dtype}")
    return arr


def _offsets(value: Any, name: str, count: int, total: int) -> np.ndarray:
    off = _vector(value, name, "iu")
    if off.shape[0] != count + 1:
        raise InvalidInputError(
            f"{name} must have N + 1 = {count + 1} entries (one per episode, plus the end); "
            f"got {off.shape[0]}"
        )
    if off[0] != 0 or off[-1] != total:
        raise InvalidInputError(
            f"{name} must start at 0 and end at the flat array's length {total}; "
            f"got {int(off[0])} .. {int(off[-1])}"
        )
    bad = np.flatnonzero(np.diff(off) < 0)
    if bad.size:
        raise InvalidInputError(f"{name} must not decrease; it does at episode {int(bad[0])}")
    return off


def _nodes(flat: Any, name: str, offsets: Any, off_name: str, sizes: np.ndarray) -> None:
    nodes = _vector(flat, name, "iu")
    off = _offsets(offsets, off_name, sizes.shape[0], nodes.shape[0])
    lengths = np.diff(off)
    if name != "traj":  # references and goal sets need a node; an empty trajectory scores 0
        empty = np.flatnonzero(lengths == 0)
        if empty.size:
            raise InvalidInputError(
                f"{name}: episode {int(empty[0])} is empty ({empty.size} empty episode(s) in "
                "all); every episode needs at least one node"
            )
    limit = np.repeat(sizes.astype(np.int32 if sizes.max(initial=0) < 2**31 else np.int64), lengths)
    bad = np.flatnonzero((nodes < 0) | (nodes >= limit))
    if bad.size:
        k = int(bad[0])
        i = int(np.searchsorted(off, k, side="right")) - 1
        raise InvalidInputError(
            f"{name}[{k}] (episode {i}, position {k - int(off[i])}) = {int(nodes[k])} is out "
            f"of range for its scan's table of {int(limit[k])} nodes "
            f"(expected 0..{int(limit[k]) - 1})"
        )


def check_batch(
    dist_flat: Any,
    table_offsets: Any,
    table_sizes: Any,
    scan_index: Any,
    traj: Any,
    traj_offsets: Any,
    ref: Any,
    ref_offsets: Any,
    goals: Any,
    goal_offsets: Any,
) -> None:
    """Raises InvalidInputError naming the first problem in score_batch's arrays."""
    dist = _vector(dist_flat, "dist_flat", "fiu")
    starts = _vector(table_offsets, "table_offsets", "iu")
    sizes = _vector(table_sizes, "table_sizes", "iu")
    if starts.shape != sizes.shape or starts.size == 0:
        raise InvalidInputError(
            "table_offsets and table_sizes must have one entry per scan (S >= 1); "
            f"got {starts.size} and {sizes.size}"
        )
    if np.any(sizes < 1) or np.any(starts < 0):
        raise InvalidInputError("table_sizes must be >= 1 and table_offsets >= 0")
    ends = starts + sizes.astype(np.int64) ** 2
    over = np.flatnonzero(ends > dist.shape[0])
    if over.size:
        s = int(over[0])
        raise InvalidInputError(
            f"scan {s}'s table ({int(sizes[s])} x {int(sizes[s])} at offset {int(starts[s])}) "
            f"runs past the end of dist_flat ({dist.shape[0]} values)"
        )
    scans = _vector(scan_index, "scan_index", "iu")
    bad = np.flatnonzero((scans < 0) | (scans >= starts.shape[0]))
    if bad.size:
        i = int(bad[0])
        raise InvalidInputError(
            f"scan_index[{i}] = {int(scans[i])} is out of range for {starts.shape[0]} scan "
            f"table(s) (expected 0..{starts.shape[0] - 1})"
        )
    per_episode = sizes[scans] if scans.size else np.empty(0, dtype=np.int64)
    _nodes(traj, "traj", traj_offsets, "traj_offsets", per_episode)
    _nodes(ref, "ref", ref_offsets, "ref_offsets", per_episode)
    _nodes(goals, "goals", goal_offsets, "goal_offsets", per_episode)
