"""Edit distances on panorama sequences and success weighted by edit distance (SED, Touchdown).

``SED = S · (1 − lev(P, R) / max(|P|, |R|))`` (Chen et al. 2019, "Touchdown"), on the executed
and reference panorama sequences with consecutive repeats removed (turning in place is not a
move). ``lev`` is the Levenshtein distance (insertions, deletions, substitutions). The scorers of
VLN-Transformer and map2seq use ``pyxdameraulevenshtein``, whose distance is the *optimal string
alignment* (restricted Damerau-Levenshtein: an adjacent transposition also costs 1):
``transpositions=True`` reproduces it.

Sequences are compared element by element: node indices, or any hashable ids (mapped to ints).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numba
import numpy as np

from vlneval.errors import InvalidInputError
from vlneval.metrics.info import LABELS

__all__ = ["edit_distance", "sed", "sed_batch", "SED"]

SED = LABELS["SED"]

_jit = numba.njit(cache=True, nogil=True)


@_jit
def _collapse(seq, out):
    """Copies ``seq`` into ``out`` without consecutive repeats; returns the new length."""
    m = 0
    for j in range(seq.shape[0]):
        if m == 0 or seq[j] != out[m - 1]:
            out[m] = seq[j]
            m += 1
    return m


@_jit
def _distance(a, b, osa, prev2, prev, cur):
    """Levenshtein (or optimal string alignment when ``osa``) distance; rows need len(b)+1."""
    m = b.shape[0]
    for j in range(m + 1):
        prev[j] = j
    for i in range(1, a.shape[0] + 1):
        cur[0] = i
        for j in range(1, m + 1):
            cost = 0 if a[i - 1] == b[j - 1] else 1
            best = min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost)
            if osa and i > 1 and j > 1 and a[i - 1] == b[j - 2] and a[i - 2] == b[j - 1]:
                best = min(best, prev2[j - 2] + 1)
            cur[j] = best
        for j in range(m + 1):
            prev2[j] = prev[j]
            prev[j] = cur[j]
    return prev[m]


@_jit
def _sed_batch(traj, traj_off, ref, ref_off, success, osa, out_sed, out_dist):
    n_ep = traj_off.shape[0] - 1
    longest = 1
    for e in range(n_ep):
        longest = max(longest, traj_off[e + 1] - traj_off[e], ref_off[e + 1] - ref_off[e])
    p = np.empty(longest, dtype=traj.dtype)
    r = np.empty(longest, dtype=ref.dtype)
    prev2 = np.empty(longest + 1, dtype=np.int64)
    prev = np.empty(longest + 1, dtype=np.int64)
    cur = np.empty(longest + 1, dtype=np.int64)
    for e in range(n_ep):
        lp = _collapse(traj[traj_off[e] : traj_off[e + 1]], p)
        lr = _collapse(ref[ref_off[e] : ref_off[e + 1]], r)
        d = _distance(p[:lp], r[:lr], osa, prev2, prev, cur)
        out_dist[e] = d
        longer = max(lp, lr)
        out_sed[e] = 0.0 if success[e] == 0.0 or longer == 0 else success[e] * (1.0 - d / longer)


def _as_ids(seq: Any, name: str) -> np.ndarray:
    if isinstance(seq, np.ndarray) and seq.dtype.kind in "iu":
        if seq.ndim != 1:
            raise InvalidInputError(f"{name} must be 1-D; got shape {seq.shape}")
        return np.ascontiguousarray(seq, dtype=np.int64)
    if isinstance(seq, (str, bytes)) or not isinstance(seq, Sequence | np.ndarray):
        raise InvalidInputError(f"{name} must be a sequence of ids; got {type(seq).__name__}")
    return np.asarray(seq, dtype=object)


def _encode(a: Any, b: Any) -> tuple[np.ndarray, np.ndarray]:
    x, y = _as_ids(a, "first sequence"), _as_ids(b, "second sequence")
    if x.dtype != object and y.dtype != object:
        return x, y
    codes: dict[Any, int] = {}
    try:
        ex = np.array([codes.setdefault(v, len(codes)) for v in x.tolist()], dtype=np.int64)
        ey = np.array([codes.setdefault(v, len(codes)) for v in y.tolist()], dtype=np.int64)
    except TypeError as exc:
        raise InvalidInputError(f"sequence elements must be hashable ids ({exc})") from None
    return ex, ey


def edit_distance(a: Any, b: Any, *, transpositions: bool = False) -> int:
    """Levenshtein distance between two sequences (ids compared for equality).

    With ``transpositions=True``, the optimal string alignment distance (restricted
    Damerau-Levenshtein), as ``pyxdameraulevenshtein`` computes it. Repeats are NOT removed here.

    Args:
        a, b: sequences of hashable ids (or 1-D integer arrays).
        transpositions: also count swapping two adjacent elements as one edit.

    Example:
        >>> edit_distance(["a", "b", "c"], ["a", "c", "b"])
        2
        >>> edit_distance(["a", "b", "c"], ["a", "c", "b"], transpositions=True)
        1
        >>> edit_distance(list("kitten"), list("sitting"))
        3
    """
    x, y = _encode(a, b)
    rows = [np.empty(len(y) + 1, dtype=np.int64) for _ in range(3)]
    return int(_distance(x, y, bool(transpositions), *rows))


def sed(trajectory: Any, reference: Any, *, success: Any, transpositions: bool = False) -> float:
    """Success weighted by edit distance (Touchdown's SED) of one episode.

    ``SED = S · (1 − lev(P', R') / max(|P'|, |R'|))`` where ``P'`` and ``R'`` are the executed
    and reference panorama sequences with consecutive repeats removed; 0 when not successful.

    Args:
        trajectory: the executed panoramas (ids or node indices), start included.
        reference: the reference route.
        success: the episode's task completion (0/1 or bool).
        transpositions: use the optimal string alignment distance (VLN-Transformer, map2seq).

    Returns:
        A value in [0, 1]; 1 only for a successful execution of exactly the reference route.

    Example:
        >>> sed(["a", "b", "b", "c", "d"], ["a", "b", "c", "d"], success=1)
        1.0
        >>> sed(["a", "x", "c", "d"], ["a", "b", "c", "d"], success=True)
        0.75
        >>> sed(["a", "b", "c", "d"], ["a", "b", "c", "d"], success=0)
        0.0
    """
    from vlneval.metrics import _validate

    s = _validate.as_indicator(success)
    x, y = _encode(trajectory, reference)
    out_sed, out_dist = np.empty(1), np.empty(1)
    _sed_batch(
        x, np.array([0, len(x)]), y, np.array([0, len(y)]), np.array([s]),
        bool(transpositions), out_sed, out_dist,
    )  # fmt: skip
    return float(out_sed[0])


def sed_batch(
    traj: np.ndarray,
    traj_offsets: np.ndarray,
    ref: np.ndarray,
    ref_offsets: np.ndarray,
    success: np.ndarray,
    *,
    transpositions: bool = False,
) -> tuple[np.ndarray, np.ndarray]:
    """SED of many episodes packed in CSR arrays (``traj[traj_offsets[e]:traj_offsets[e+1]]``).

    Returns:
        ``(sed, distance)``: per-episode SED and the edit distance on the collapsed sequences.

    Example:
        >>> import numpy as np
        >>> s, d = sed_batch(np.array([0, 1, 2, 0, 3]), np.array([0, 3, 5]),
        ...                  np.array([0, 1, 2, 0, 1, 2]), np.array([0, 3, 6]), np.array([1.0, 1.0]))
        >>> s.round(4).tolist(), d.tolist()
        ([1.0, 0.3333], [0.0, 2.0])
    """
    t = np.ascontiguousarray(traj, dtype=np.int64)
    r = np.ascontiguousarray(ref, dtype=np.int64)
    to = np.ascontiguousarray(traj_offsets, dtype=np.int64)
    ro = np.ascontiguousarray(ref_offsets, dtype=np.int64)
    s = np.ascontiguousarray(success, dtype=np.float64)
    n = len(to) - 1
    if len(ro) != n + 1 or len(s) != n or n < 0:
        raise InvalidInputError("sed_batch: offsets and success must describe the same episodes")
    out_sed, out_dist = np.empty(n), np.empty(n)
    _sed_batch(t, to, r, ro, s, bool(transpositions), out_sed, out_dist)
    return out_sed, out_dist
