"""The fused batch kernel: every per-episode metric of many episodes in one vectorised pass.

Episodes are packed in flat arrays (CSR layout): episode ``i``'s trajectory is
``traj[traj_offsets[i]:traj_offsets[i + 1]]``, and likewise for references and goal sets. Node ids
are local to the episode's scan, whose n x n table starts at ``dist_flat[table_offsets[s]]``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from vlneval.errors import InvalidInputError
from vlneval.metrics import _kernels, _validate
from vlneval.metrics._batch_checks import check_batch

__all__ = ["score_batch", "reference_lengths", "COLUMNS", "COLUMN_METRIC"]

#: Keys of the dict returned by :func:`score_batch`, in the kernel's row order.
COLUMNS = (
    "nav_error",
    "oracle_error",
    "success",
    "oracle_success",
    "path_length",
    "shortest_length",
    "reference_length",
    "spl",
    "dtw",
    "ndtw",
    "sdtw",
    "cls",
    "steps",
    "repeats",
)

#: The ``METRICS`` entry (label, direction, unit) of each column that is a metric.
COLUMN_METRIC = {
    "nav_error": "navigation_error",
    "oracle_error": "oracle_error",
    "success": "success",
    "oracle_success": "oracle_success",
    "path_length": "path_length",
    "spl": "spl",
    "dtw": "dtw",
    "ndtw": "ndtw",
    "sdtw": "sdtw",
    "cls": "cls",
}


@_validate.public
def score_batch(
    dist_flat: np.ndarray,
    table_offsets: np.ndarray,
    table_sizes: np.ndarray,
    scan_index: np.ndarray,
    traj: np.ndarray,
    traj_offsets: np.ndarray,
    ref: np.ndarray,
    ref_offsets: np.ndarray,
    goals: np.ndarray,
    goal_offsets: np.ndarray,
    *,
    threshold: float = 3.0,
    success_inclusive: bool = False,
    sdtw_inclusive: bool = False,
    spl_reference: str = "shortest",
    spl_floor: float = 0.0,
    collapse_repeats: bool = True,
    cls_threshold: float | None = None,
    validate: bool = True,
    threads: int | None = None,
    lengths: tuple[np.ndarray, np.ndarray] | None = None,
    fidelity: bool = True,
) -> dict[str, np.ndarray]:
    """Scores N episodes in one pass; the same cores as the single-episode functions.

    Per episode, with ``P`` the trajectory, ``R`` the reference and ``G`` the goal set:
    NE = ``min_g d(p_n, g)``; OE = ``min_{j,g} d(p_j, g)``; success/oracle_success compare them
    with ``threshold`` (``<=`` if ``success_inclusive`` else ``<``); TL = Σ hop distances;
    ``shortest_length`` is SPL's ``ℓ``: ``min_g d(r_1, g)`` (``spl_reference="shortest"``, R2R)
    or ``L(R)`` (``"reference"``, HAMT/DUET); SPL = ``S·ℓ / max(ℓ, TL, spl_floor)`` with the
    rules of :func:`vlneval.metrics.spl`; DTW/nDTW/CLS as :mod:`vlneval.metrics.fidelity`, on
    ``P`` with consecutive repeats dropped when ``collapse_repeats`` (TL/NE never collapse);
    sDTW = ``1[NE < δ] · nDTW`` (``<=`` if ``sdtw_inclusive``). ``steps = max(len(P) - 1, 0)``;
    ``repeats`` = positions equal to their predecessor (what collapsing drops), counted whatever
    ``collapse_repeats`` says. An empty trajectory scores NE = OE = inf and 0 everywhere else.

    Args:
        dist_flat: float64, every scan's table concatenated, row-major.
        table_offsets: int64[S], where scan ``s``'s table starts in ``dist_flat``.
        table_sizes: int64[S], ``n_s`` (table ``s`` is ``n_s x n_s``, ``d(u, v)`` at ``[u, v]``).
        scan_index: int32[N], the scan of each episode.
        traj: int32, trajectories' local node ids, flat; ``traj_offsets``: int64[N + 1].
        ref: int32 reference paths (>= 1 node each); ``ref_offsets``: int64[N + 1].
        goals: int32 goal sets (>= 1 node each); ``goal_offsets``: int64[N + 1].
        traj_offsets: see ``traj``.
        ref_offsets: see ``ref``.
        goal_offsets: see ``goals``.
        threshold: δ (> 0) for success, oracle success, sDTW and the nDTW normalisation.
        success_inclusive: success and oracle success use ``<=``.
        sdtw_inclusive: sDTW's own success uses ``<=`` (google-research ``r4r``).
        spl_reference: ``"shortest"`` or ``"reference"``, see above.
        spl_floor: lower bound of SPL's denominator (0.01 in EnvDrop/DUET), >= 0.
        collapse_repeats: drop consecutive repeats before DTW, nDTW, sDTW and CLS.
        cls_threshold: δ of CLS; None means ``threshold``.
        validate: check every array (vectorised, O(total size)); pass False only for arrays
            that were already checked.
        lengths: ``reference_length`` and ``shortest_length`` of the episodes, as
            :func:`reference_lengths` gives them for the same arrays and ``spl_reference``
            (a scorer of many files computes them once); None: computed here.
        fidelity: compute DTW, nDTW, sDTW and CLS; False (a profile that reports none of
            them) leaves those columns NaN and skips their cost.
        threads: how many threads share the episodes; None means one. numpy releases the
            GIL only inside its array operations, so extra threads gain little (none on the
            200,000-episode benchmark) and each holds its own chunk's temporaries.

    Returns:
        ``{column: float64[N]}`` for every name in :data:`COLUMNS`.

    Raises:
        InvalidInputError: a malformed array or option (only options when ``validate=False``).

    Example:
        >>> import numpy as np
        >>> D = np.array([[0, 4, 8, 4], [4, 0, 4, 8], [8, 4, 0, 4], [4, 8, 4, 0]], float)
        >>> off = lambda *lens: np.cumsum([0, *lens])
        >>> out = score_batch(
        ...     D.ravel(), np.array([0]), np.array([4]), np.array([0, 0]),
        ...     np.array([0, 1, 2, 3, 0, 3]), off(4, 2),      # executed S,A,B,G and S,G
        ...     np.array([0, 1, 2, 3] * 2), off(4, 4),        # reference S,A,B,G twice
        ...     np.array([3, 3]), off(1, 1))                  # goal G
        >>> out["path_length"].tolist(), out["spl"].round(4).tolist()
        ([12.0, 4.0], [0.3333, 1.0])
        >>> out["ndtw"].round(4).tolist(), out["cls"].round(4).tolist()
        ([1.0, 0.5134], [1.0, 0.4291])
    """
    use_reference = _use_reference(spl_reference)
    delta = _validate.as_threshold(threshold)
    floor = _validate.as_threshold(spl_floor, "spl_floor", allow_zero=True)
    cls_delta = (
        delta if cls_threshold is None else _validate.as_threshold(cls_threshold, "cls_threshold")
    )
    arrays = (
        dist_flat, table_offsets, table_sizes, scan_index,
        traj, traj_offsets, ref, ref_offsets, goals, goal_offsets,
    )  # fmt: skip
    if validate:
        check_batch(*arrays)
    dist, starts, sizes, scans, tr, tr_off, rf, rf_off, gl, gl_off = _normalise(arrays)
    # Large batches go chunk by chunk, one scan's episodes together: a chunk then reads a few
    # tables, from cache, and its temporaries stay small.
    order = np.argsort(scans, kind="stable") if scans.shape[0] > CHUNK else None
    out = np.empty((len(COLUMNS), scans.shape[0]), dtype=np.float64)

    def run(lo: int, hi: int) -> None:
        for a in range(lo, hi, CHUNK):
            b = min(a + CHUNK, hi)
            pick = slice(a, b) if order is None else order[a:b]
            scan = scans[pick]
            start, size = starts[scan], sizes[scan]
            rf_pick = _take(rf, rf_off, pick)
            gl_pick = _take(gl, gl_off, pick)
            if lengths is None:
                given = _kernels.reference_lengths(
                    dist, start, size, *rf_pick, *gl_pick, use_reference
                )
            else:
                given = lengths[0][pick], lengths[1][pick]
            out[:, pick] = _kernels.score_batch(
                dist, start, size, *_take(tr, tr_off, pick), *rf_pick, *gl_pick, given,
                threshold=delta, success_inclusive=bool(success_inclusive),
                sdtw_inclusive=bool(sdtw_inclusive), spl_floor=floor,
                collapse_repeats=bool(collapse_repeats), cls_threshold=cls_delta,
                fidelity=bool(fidelity),
            )  # fmt: skip

    _in_parts(run, scans.shape[0], _thread_count(threads))
    return dict(zip(COLUMNS, out, strict=True))


def reference_lengths(
    dist_flat: np.ndarray,
    table_offsets: np.ndarray,
    table_sizes: np.ndarray,
    scan_index: np.ndarray,
    ref: np.ndarray,
    ref_offsets: np.ndarray,
    goals: np.ndarray,
    goal_offsets: np.ndarray,
    *,
    spl_reference: str = "shortest",
) -> tuple[np.ndarray, np.ndarray]:
    """The columns of :func:`score_batch` that depend on the episodes only, for its
    ``lengths``: ``reference_length`` (L(R)) and ``shortest_length`` (SPL's ``ell``). The
    arrays are those :func:`score_batch` is given, already checked.

    Example:
        >>> import numpy as np
        >>> D = np.array([[0, 4, 8, 4], [4, 0, 4, 8], [8, 4, 0, 4], [4, 8, 4, 0]], float)
        >>> rl, ell = reference_lengths(D.ravel(), np.array([0]), np.array([4]), np.array([0]),
        ...     np.array([0, 1, 2, 3]), np.array([0, 4]), np.array([3]), np.array([0, 1]))
        >>> rl.tolist(), ell.tolist()
        ([12.0], [4.0])
    """
    use_reference = _use_reference(spl_reference)
    arrays = (
        dist_flat, table_offsets, table_sizes, scan_index, ref, ref_offsets, goals, goal_offsets,
    )  # fmt: skip
    dist, starts, sizes, scans, rf, rf_off, gl, gl_off = _normalise(arrays)
    start, size = starts[scans], sizes[scans]
    return _kernels.reference_lengths(dist, start, size, rf, rf_off, gl, gl_off, use_reference)


def _use_reference(spl_reference: str) -> bool:
    if spl_reference not in ("shortest", "reference"):
        raise InvalidInputError(
            f"spl_reference must be 'shortest' or 'reference'; got {spl_reference!r}"
        )
    return spl_reference == "reference"


def _take(
    flat: np.ndarray, offsets: np.ndarray, pick: slice | np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Episodes ``pick`` of a ragged array (a slice: views), as their own flat array and offsets."""
    if isinstance(pick, slice):
        lo, hi = pick.start, pick.stop
        return flat[offsets[lo] : offsets[hi]], offsets[lo : hi + 1] - offsets[lo]
    return _kernels.reorder(flat, offsets, pick)


CHUNK = 8_192  # episodes scored together: a real split (1k-15k) in one or two vectorised passes


def _thread_count(threads: int | None) -> int:
    if threads is None:
        return 1
    if isinstance(threads, bool) or not isinstance(threads, int) or threads < 1:
        raise InvalidInputError(f"threads must be a positive integer or None; got {threads!r}")
    return threads


def _in_parts(run: Any, n: int, threads: int) -> None:
    """``run(lo, hi)`` over ``[0, n)`` cut into ``threads`` parts, one per thread, the last
    part in the calling thread."""
    bounds = [n * k // threads for k in range(threads + 1)]
    if threads == 1:
        run(0, n)
        return
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(threads - 1, thread_name_prefix="vlneval-score") as pool:
        parts = [pool.submit(run, a, b) for a, b in zip(bounds[:-2], bounds[1:-1], strict=True)]
        run(bounds[-2], bounds[-1])
        for part in parts:
            part.result()


def _normalise(arrays: tuple[Any, ...]) -> list[np.ndarray]:
    """The table arrays (float64 distances, int64 table offsets and sizes, int32 scans) and
    then (node ids, offsets) pairs (int32, int64): three for a batch, two without trajectories."""
    pairs, odd = divmod(len(arrays) - 4, 2)
    if odd or pairs not in (2, 3):
        raise ValueError(f"expected 4 table arrays and 2 or 3 ragged pairs, got {len(arrays)}")
    dtypes = (np.float64, np.int64, np.int64, np.int32) + (np.int32, np.int64) * pairs
    return [np.ascontiguousarray(x, dtype=t) for x, t in zip(arrays, dtypes, strict=True)]
