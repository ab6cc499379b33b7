"""Edit distances on panorama sequences and success weighted by edit distance (SED, Touchdown).

``SED = S · (1 − lev(P, R) / max(|P|, |R|))`` (Chen et al. 2019, "Touchdown"), on the executed
and reference panorama sequences with consecutive repeats removed (turning in place is not a
move). ``lev`` is the Levenshtein distance (insertions, deletions, substitutions). The scorers of
VLN-Transformer and map2seq use ``pyxdameraulevenshtein``, whose distance is the *optimal string
alignment* (restricted Damerau-Levenshtein: an adjacent transposition also costs 1), on the
sequences as written: ``transpositions=True, collapse_repeats=False`` reproduces them.

Sequences are compared element by element: node indices, or any hashable ids (mapped to ints).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from vlneval.errors import InvalidInputError
from vlneval.metrics import _validate
from vlneval.metrics._kernels import moves, offsets_of, owners
from vlneval.metrics.info import LABELS

__all__ = ["edit_distance", "sed", "sed_batch", "SED"]

SED = LABELS["SED"]


def _collapsed(seq: np.ndarray, offsets: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each segment without consecutive repeats, and the new offsets."""
    keep = ~moves(seq, offsets)[1]
    lengths = np.bincount(owners(offsets)[keep], minlength=offsets.shape[0] - 1)
    return seq[keep], offsets_of(lengths)


def _distances(
    a: np.ndarray, a_off: np.ndarray, b: np.ndarray, b_off: np.ndarray, osa: bool
) -> np.ndarray:
    """Levenshtein (or optimal string alignment when ``osa``) distance of every pair of segments.

    Both distances are symmetric, so each pair puts its shorter sequence first; pairs are
    computed together in buckets of like lengths (the same power of two for the shorter length
    and for the sum), so a pair's cost is proportional to its own lengths, whatever the others.
    """
    la, lb = np.diff(a_off), np.diff(b_off)
    out = np.maximum(la, lb).astype(np.int64)  # one side empty: insert or delete everything
    live = np.flatnonzero((la > 0) & (lb > 0))
    seq = np.concatenate((a, b))
    la, lb, a0, b0 = la[live], lb[live], a_off[live], b_off[live] + a.shape[0]
    swap = la > lb
    short, long = np.where(swap, lb, la), np.where(swap, la, lb)
    x0, y0 = np.where(swap, b0, a0), np.where(swap, a0, b0)
    bucket = np.frexp(short)[1] * 64 + np.frexp(short + long)[1]
    for key in np.unique(bucket).tolist():
        pick = np.flatnonzero(bucket == key)
        out[live[pick]] = _pairs(seq, x0[pick], short[pick], y0[pick], long[pick], osa)
    return out


def _pairs(
    seq: np.ndarray, a0: np.ndarray, la: np.ndarray, b0: np.ndarray, lb: np.ndarray, osa: bool
) -> np.ndarray:
    """Distance of each pair ``seq[a0:a0 + la]``, ``seq[b0:b0 + lb]`` (non-empty).

    ``D[i, j] = min(D[i-1, j] + 1, D[i, j-1] + 1, D[i-1, j-1] + [a_i != b_j])`` (and
    ``D[i-2, j-2] + 1`` after an adjacent transposition when ``osa``), ``D[i, 0] = i``,
    ``D[0, j] = j``. The cells of one anti-diagonal ``i + j = t`` depend only on earlier ones, so
    each step fills one anti-diagonal of every pair at once.
    """
    width = int(la.max())
    i = np.arange(1, width + 1)
    a_pad = seq[a0[:, None] + np.minimum(i - 1, la[:, None] - 1)]  # a_pad[:, i-1] = a_i
    b_top = (lb - 1)[:, None]
    rows = np.arange(la.size)
    diagonals = [np.zeros((la.size, width + 1), dtype=np.int64) for _ in range(4)]  # t-1..t-4
    res = np.empty(la.size, dtype=np.int64)
    for t in range(1, int((la + lb).max()) + 1):
        d1, d2, _, d4 = diagonals
        cur = np.empty_like(d1)
        cur[:, 0] = t  # D[0, t]
        hi = min(t - 1, width)  # cells 1 <= i <= hi have j = t - i >= 1
        if hi >= 1:
            ii = i[:hi]
            # Cells past a pair's own lengths read clipped (valid) elements; no real cell
            # depends on them.
            bj = seq[b0[:, None] + np.minimum(t - ii - 1, b_top)]  # b_j with j = t - i
            best = np.minimum(d1[:, :hi] + 1, d1[:, 1 : hi + 1] + 1)
            np.minimum(best, d2[:, :hi] + (a_pad[:, :hi] != bj), out=best)
            if osa and hi >= 2 and t >= 4:
                bj1 = seq[b0[:, None] + np.clip(t - ii[1:] - 2, 0, b_top)]  # b_{j-1}
                swap = (a_pad[:, 1:hi] == bj1) & (a_pad[:, : hi - 1] == bj[:, 1:])
                swap &= t - ii[1:] >= 2
                best[:, 1:] = np.where(
                    swap, np.minimum(best[:, 1:], d4[:, : hi - 1] + 1), best[:, 1:]
                )
            cur[:, 1 : hi + 1] = best
        if t <= width:
            cur[:, t] = t  # D[t, 0]
        end = np.flatnonzero(la + lb == t)
        res[end] = cur[rows[end], la[end]]
        diagonals = [cur, d1, d2, diagonals[2]]
    return res


def _sed_batch(
    traj: np.ndarray,
    traj_off: np.ndarray,
    ref: np.ndarray,
    ref_off: np.ndarray,
    success: np.ndarray,
    osa: bool,
    collapse: bool = True,
) -> tuple[np.ndarray, np.ndarray]:
    p, p_off = _collapsed(traj, traj_off) if collapse else (traj, traj_off)
    r, r_off = _collapsed(ref, ref_off) if collapse else (ref, ref_off)
    d = _distances(p, p_off, r, r_off, osa)
    longer = np.maximum(np.diff(p_off), np.diff(r_off))
    with np.errstate(divide="ignore", invalid="ignore"):
        sed = np.where((success == 0.0) | (longer == 0), 0.0, success * (1.0 - d / longer))
    return sed, d.astype(np.float64)


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
    one = np.array([0, len(x)]), np.array([0, len(y)])
    return int(_distances(x, one[0], y, one[1], bool(transpositions))[0])


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
    s = _validate.as_indicator(success)
    x, y = _encode(trajectory, reference)
    out_sed, _ = _sed_batch(
        x, np.array([0, len(x)]), y, np.array([0, len(y)]), np.array([s]), bool(transpositions)
    )
    return float(out_sed[0])


def sed_batch(
    traj: np.ndarray,
    traj_offsets: np.ndarray,
    ref: np.ndarray,
    ref_offsets: np.ndarray,
    success: np.ndarray,
    *,
    transpositions: bool = False,
    collapse_repeats: bool = True,
) -> tuple[np.ndarray, np.ndarray]:
    """SED of many episodes packed in CSR arrays (``traj[traj_offsets[e]:traj_offsets[e+1]]``).

    ``collapse_repeats=False`` compares the sequences as given, as the VLN-Transformer and
    map2seq scorers do (their rollouts never write a repeat; another agent's file may).

    Returns:
        ``(sed, distance)``: per-episode SED and the edit distance on the compared sequences.

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
    return _sed_batch(t, to, r, ro, s, bool(transpositions), bool(collapse_repeats))
