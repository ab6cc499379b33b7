"""Flat arrays for the batch kernels: per-scan tables and ragged paths, built once."""

from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import dataclass, field
from itertools import chain
from typing import Any

import numpy as np

from vlneval.errors import ProblemCollector
from vlneval.graph.store import GraphStore
from vlneval.metrics._kernels import offsets_of
from vlneval.tasks.common.episodes import EpisodeTable, PathColumn
from vlneval.tasks.common.predictions import Predictions, codes_of, local_nodes

__all__ = ["ScoringArrays", "SplitArrays", "build_arrays"]


@dataclass
class ScoringArrays:
    """Everything the batch kernel needs, for the episodes that have a prediction.

    ``table_offsets[s]`` is where scan ``s``'s ``n_s x n_s`` table starts in ``dist_flat``;
    ``scan_index[e]`` is episode ``e``'s scan; paths are flat scan-local node ids with offsets.
    """

    scans: list[str]
    dist_flat: np.ndarray
    table_offsets: np.ndarray
    table_sizes: np.ndarray
    scan_index: np.ndarray
    traj: np.ndarray
    traj_offsets: np.ndarray
    ref: np.ndarray
    ref_offsets: np.ndarray
    goals: np.ndarray
    goal_offsets: np.ndarray
    #: Values that depend only on the episodes (shared by every file scoring the same ones).
    shared: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    def adjacency_flat(self, graphs: GraphStore) -> np.ndarray:
        """Boolean adjacency tables laid out like ``dist_flat`` (built once per episode set)."""
        adjacency = self.shared.get("adjacency")
        if adjacency is None:
            adjacency = np.concatenate([graphs.graph(s).adjacency().ravel() for s in self.scans])
            self.shared["adjacency"] = adjacency
        return adjacency  # type: ignore[no-any-return]


class SplitArrays:
    """The episode side of :class:`ScoringArrays` of one split, kept by its scorer.

    Scoring many files of the same split (a training loop, a sweep) scores the same episodes
    each time: their scans' tables, reference paths and goals as node ids, and values derived
    from them only, are laid out on first use and reused. The few most recent sets of scored
    episodes are kept (a complete file always scores the same set).
    """

    KEEP = 4

    def __init__(self) -> None:
        self._sets: OrderedDict[bytes, ScoringArrays] = OrderedDict()
        self._lock = threading.Lock()  # a scorer may score from several threads

    def get(self, order: np.ndarray) -> ScoringArrays | None:
        """The arrays laid out for the episodes ``order``, if kept (their ``traj`` is stale)."""
        key = order.tobytes()
        with self._lock:
            found = self._sets.get(key)
            if found is not None:
                self._sets.move_to_end(key)
        return found

    def put(self, order: np.ndarray, arrays: ScoringArrays) -> None:
        """Keeps ``arrays`` for the episodes ``order`` (dropping the oldest beyond KEEP)."""
        with self._lock:
            self._sets[order.tobytes()] = arrays
            while len(self._sets) > self.KEEP:
                self._sets.popitem(last=False)


def _ragged(
    seqs: list[tuple[str, ...]], idx: list[dict[str, int]]
) -> tuple[np.ndarray, np.ndarray]:
    """Flat scan-local node ids (-1 where unknown) and offsets of ``seqs``."""
    offsets = offsets_of(np.fromiter(map(len, seqs), dtype=np.int64, count=len(seqs)))
    flat = np.fromiter(
        (idx[k].get(v, -1) for k, s in enumerate(seqs) for v in s),
        dtype=np.int32,
        count=int(offsets[-1]),
    )
    return flat, offsets


def _ragged_fast(
    seqs: list[tuple[str, ...]], codes: dict[str, int], slot_of_seq: np.ndarray
) -> tuple[np.ndarray, np.ndarray] | None:
    """As :func:`_ragged` with one C-level map over global viewpoint codes; None on any miss."""
    lengths = np.fromiter(map(len, seqs), dtype=np.int64, count=len(seqs))
    offsets = offsets_of(lengths)
    try:
        flat = np.fromiter(
            map(codes.__getitem__, chain.from_iterable(seqs)),
            dtype=np.int64,
            count=int(offsets[-1]),
        )
    except KeyError:
        return None
    nodes, elsewhere = local_nodes(flat, np.repeat(slot_of_seq, lengths))
    return None if elsewhere.any() else (nodes, offsets)


class _LazyRows:
    """``[column[i] for i in order]``, built only if a slower path needs it."""

    def __init__(self, column: Any, order: np.ndarray) -> None:
        self.column, self.order = column, order
        self._rows: list[tuple[str, ...]] | None = None

    def rows(self) -> list[tuple[str, ...]]:
        if self._rows is None:
            self._rows = [self.column[i] for i in self.order.tolist()]
        return self._rows


def _column_fast(
    column: PathColumn, order: np.ndarray, codes: dict[str, int], slot_of_row: np.ndarray
) -> tuple[np.ndarray, np.ndarray] | None:
    """Node ids of a :class:`PathColumn`'s rows ``order``: one lookup per distinct viewpoint."""
    vocab_code = np.fromiter(
        (codes.get(v, -1) for v in column.vocab), dtype=np.int64, count=len(column.vocab)
    )
    flat_codes, offsets = column.gather(order)
    code = vocab_code[flat_codes]
    nodes, elsewhere = local_nodes(code, np.repeat(slot_of_row, np.diff(offsets)))
    # a viewpoint not coded (-1) or of another scan: looked up per episode
    return None if elsewhere.any() else (nodes, offsets)


def build_arrays(
    episodes: EpisodeTable,
    preds: Predictions,
    graphs: GraphStore,
    cache: SplitArrays | None = None,
) -> ScoringArrays:
    """Lays out the scored episodes' paths and their scans' distance tables.

    With ``cache`` (kept by the split's scorer, for these ``episodes`` and ``graphs`` only)
    the episode side is laid out once per set of scored episodes and reused.

    Raises:
        InvalidInputError: a reference path or goal names a viewpoint that is not a graph node.
    """
    order = preds.episodes
    kept = cache.get(order) if cache is not None else None
    if kept is None:
        kept = _episode_side(episodes, order, graphs)
        if cache is not None:
            cache.put(order.copy(), kept)
    return ScoringArrays(
        kept.scans, kept.dist_flat, kept.table_offsets, kept.table_sizes, kept.scan_index,
        preds.nodes, preds.offsets, kept.ref, kept.ref_offsets, kept.goals, kept.goal_offsets,
        shared=kept.shared,
    )  # fmt: skip


def _episode_side(episodes: EpisodeTable, order: np.ndarray, graphs: GraphStore) -> ScoringArrays:
    """:class:`ScoringArrays` of the episodes ``order`` with empty trajectories."""
    scan_names, scan_index = episodes.scans_of(order)
    dist_flat, offsets, sizes = graphs.share_tables(scan_names)
    paths: Any = _LazyRows(episodes.paths, order)
    goal_sets: Any = _LazyRows(episodes.goals, order)
    store_codes = codes_of(graphs)  # the reader's viewpoint codes of these graphs
    codes, slot = store_codes.code, store_codes.slots(graphs, scan_names)[scan_index]
    if isinstance(episodes.paths, PathColumn) and isinstance(episodes.goals, PathColumn):
        fast_ref = _column_fast(episodes.paths, order, codes, slot)
        fast_goal = _column_fast(episodes.goals, order, codes, slot)
    else:
        fast_ref = _ragged_fast(paths.rows(), codes, slot)
        fast_goal = _ragged_fast(goal_sets.rows(), codes, slot)
    if fast_ref is not None and fast_goal is not None:
        (ref, ref_off), (goals, goal_off) = fast_ref, fast_goal
    else:
        index_maps = [graphs.graph(s).index for s in scan_names]
        per_ep = [index_maps[s] for s in scan_index]
        ref, ref_off = _ragged(paths.rows(), per_ep)
        goals, goal_off = _ragged(goal_sets.rows(), per_ep)
    _check_known(episodes, order, ref, ref_off, goals, goal_off, graphs)
    return ScoringArrays(
        scan_names,
        dist_flat,
        offsets,
        sizes,
        scan_index,
        np.zeros(0, dtype=np.int32),
        np.zeros(len(order) + 1, dtype=np.int64),
        ref,
        ref_off,
        goals,
        goal_off,
    )


def _check_known(
    episodes: EpisodeTable,
    order: np.ndarray,
    ref: np.ndarray,
    ref_off: np.ndarray,
    goals: np.ndarray,
    goal_off: np.ndarray,
    graphs: GraphStore,
) -> None:
    """Raises every unknown viewpoint of the episodes, named by the file's own field; a goal
    that is the path's end (R2R) is named once, with the path."""
    pc = ProblemCollector(episodes.source)
    named: set[tuple[int, str]] = set()
    for flat, off, column in ((ref, ref_off, "paths"), (goals, goal_off, "goals")):
        for pos in np.flatnonzero(flat < 0)[:50]:
            k = int(np.searchsorted(off, pos, side="right") - 1)
            i = int(order[k])
            vp = getattr(episodes, column)[i][int(pos - off[k])]
            if (i, vp) not in named:
                named.add((i, vp))
                pc.add(
                    graphs.graph(episodes.scans[i]).describe_missing(vp),
                    episode=episodes.label(i),
                    field=episodes.file_fields.get(column, column),
                )
    pc.raise_if_any()
