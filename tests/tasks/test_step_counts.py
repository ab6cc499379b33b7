"""The rule checks' per-episode counts (``step_counts``) match the metric kernels' for every
task: repeats as ``score_batch`` counts them, across chunk boundaries and empty episodes."""

from __future__ import annotations

import numpy as np
import pytest

from vlneval.metrics._kernels import moves, owners
from vlneval.tasks.common import _steps


@pytest.mark.parametrize("chunk", [1, 3, 16_384])
def test_repeats_are_the_kernels_count(chunk: int, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_steps, "CHUNK", chunk)
    rng = np.random.default_rng(7)
    lengths = rng.integers(0, 9, size=40)
    offsets = np.concatenate([[0], np.cumsum(lengths)])
    traj = rng.integers(0, 3, size=int(offsets[-1])).astype(np.int32)  # 3 nodes: many repeats
    adjacency = np.ones(9, dtype=np.bool_)
    one = np.zeros(40, dtype=np.int64)
    jumps, first, repeats = _steps.step_counts(
        traj, offsets, one, adjacency, np.array([0]), np.array([3])
    )
    want = np.bincount(owners(offsets)[moves(traj, offsets)[1]], minlength=40)
    np.testing.assert_array_equal(repeats, want)
    assert repeats.dtype == np.int64 and not jumps.any() and (first == -1).all()
