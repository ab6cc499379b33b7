"""Ragged (CSR) arrays: flat values with offsets, gathered with numpy."""

from __future__ import annotations

import numpy as np

__all__ = ["offsets_of", "take_ragged", "nodes_in_scans"]


def offsets_of(lengths: np.ndarray) -> np.ndarray:
    """The offsets of sequences of ``lengths``: ``[0, l0, l0 + l1, ...]``.

    Example:
        >>> offsets_of(np.array([2, 0, 3])).tolist()
        [0, 2, 2, 5]
    """
    out = np.zeros(len(lengths) + 1, dtype=np.int64)
    np.cumsum(lengths, out=out[1:])
    return out


def take_ragged(
    values: np.ndarray, offsets: np.ndarray, rows: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """The sequences ``rows`` of a ragged array, one after another, and their offsets.

    Example:
        >>> out, off = take_ragged(np.array([1, 2, 3, 4]), np.array([0, 1, 4]), np.array([1, 0, 1]))
        >>> out.tolist(), off.tolist()
        ([2, 3, 4, 1, 2, 3, 4], [0, 3, 4, 7])
    """
    rows = np.asarray(rows, dtype=np.int64)
    starts = offsets[rows]
    lengths = offsets[rows + 1] - starts
    out_offsets = offsets_of(lengths)
    # position t of the output is value starts[k] + (t - out_offsets[k]) for its row k
    index = np.arange(out_offsets[-1], dtype=np.int64) + np.repeat(
        starts - out_offsets[:-1], lengths
    )
    return values[index], out_offsets


def nodes_in_scans(
    codes: np.ndarray,
    lengths: np.ndarray,
    record_scan: np.ndarray,
    text_scan: np.ndarray,
    text_node: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    """The node of each step (``text_node[code]``), and the positions of the steps whose text
    is not a node of their record's scan (to be looked up again).

    Example:
        >>> nodes, elsewhere = nodes_in_scans(np.array([0, 1]), np.array([2]), np.array([1]),
        ...                                   np.array([0, 1]), np.array([5, 6]))
        >>> nodes.tolist(), elsewhere.tolist()
        ([5, 6], [0])
    """
    nodes = np.asarray(text_node, dtype=np.int32)[codes]
    step_scan = np.repeat(np.asarray(record_scan), np.asarray(lengths, dtype=np.int64))
    return nodes, np.flatnonzero(np.asarray(text_scan)[codes] != step_scan)
