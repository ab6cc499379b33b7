"""Compiled ragged-array helpers agree with plain Python."""

from __future__ import annotations

import numpy as np

from vlneval.data._ragged_kernel import nodes_in_scans, take_ragged
from vlneval.data.predictions import _episode_order


def test_take_ragged_concatenates_the_rows_asked_for() -> None:
    rng = np.random.default_rng(0)
    lengths = rng.integers(0, 5, size=30)
    offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    values = rng.integers(0, 100, size=int(offsets[-1])).astype(np.int32)
    rows = rng.integers(0, 30, size=50).astype(np.int64)  # repeats allowed
    out, out_offsets = take_ragged(values, offsets, rows)
    expected = [values[offsets[r] : offsets[r + 1]].tolist() for r in rows]
    got = [out[a:b].tolist() for a, b in zip(out_offsets[:-1], out_offsets[1:], strict=True)]
    assert got == expected and out.dtype == np.int32


def test_nodes_in_scans_flags_steps_named_in_another_scan() -> None:
    text_scan = np.array([0, 1, 1], np.int32)  # text 0 is in scan 0, texts 1 and 2 in scan 1
    text_node = np.array([5, 6, 7], np.int32)
    codes = np.array([0, 1, 2, 0, 2], np.int32)
    lengths = np.array([1, 2, 2], np.int64)  # records of scans 0, 1, 1
    nodes, elsewhere = nodes_in_scans(
        codes, lengths, np.array([0, 1, 1], np.int32), text_scan, text_node
    )
    assert nodes.tolist() == [5, 6, 7, 5, 7]
    assert elsewhere.tolist() == [3]  # text 0 asked for in scan 1


def test_episode_order_is_a_stable_sort() -> None:
    for rec_ep in ([3, 0, 2], [4, 1, 4, 0, 1], []):
        arr = np.array(rec_ep, dtype=np.int64)
        assert _episode_order(arr, 5).tolist() == np.argsort(arr, kind="stable").tolist()
