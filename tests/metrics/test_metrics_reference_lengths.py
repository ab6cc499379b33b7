"""batch.reference_lengths: the episode-only columns, given back to score_batch unchanged."""

from __future__ import annotations

import numpy as np
import pytest

from vlneval.metrics import batch
from vlneval.metrics.batch import reference_lengths, score_batch


def _batch(seed: int) -> tuple[np.ndarray, ...]:
    rng = np.random.default_rng(seed)
    sizes = np.array([5, 7])
    tables = [rng.uniform(0.5, 9.0, (n, n)) for n in sizes]
    for t in tables:
        t[:] = (t + t.T) / 2
        np.fill_diagonal(t, 0.0)
    offsets = np.array([0, 25])
    scans = rng.integers(0, 2, 40).astype(np.int32)

    def ragged(lo: int, hi: int) -> tuple[np.ndarray, np.ndarray]:
        lens = rng.integers(lo, hi, scans.shape[0])
        flat = np.concatenate(
            [rng.integers(0, sizes[s], n) for s, n in zip(scans, lens, strict=True)]
        )
        return flat.astype(np.int32), np.concatenate([[0], np.cumsum(lens)]).astype(np.int64)

    dist = np.concatenate([t.ravel() for t in tables])
    return (dist, offsets, sizes, scans, *ragged(1, 9), *ragged(2, 6), *ragged(1, 3))


@pytest.mark.parametrize("chunk", [batch.CHUNK, 8])  # 8: chunks of one scan's episodes
@pytest.mark.parametrize("spl_reference", ["shortest", "reference"])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_given_lengths_change_nothing(
    seed: int, spl_reference: str, chunk: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(batch, "CHUNK", chunk)
    arrays = _batch(seed)
    dist, offsets, sizes, scans, _, _, ref, ref_off, goals, goal_off = arrays
    rl, ell = reference_lengths(dist, offsets, sizes, scans, ref, ref_off, goals, goal_off,
                                spl_reference=spl_reference)  # fmt: skip
    plain = score_batch(*arrays, spl_reference=spl_reference)
    given = score_batch(*arrays, spl_reference=spl_reference, lengths=(rl, ell))
    assert rl.tobytes() == plain["reference_length"].tobytes()
    assert ell.tobytes() == plain["shortest_length"].tobytes()
    for name, column in plain.items():
        assert column.tobytes() == given[name].tobytes(), name


def test_normalise_gives_each_array_its_dtype() -> None:
    """Both callers' layouts (with and without trajectories) get one dtype per array, in
    order; any other count of arrays is a programming error, not a silent misalignment."""
    from vlneval.metrics.batch import _normalise

    table = ([0.0], [0], [1], [0])
    pair = ([0], [0, 1])
    for pairs in (2, 3):
        out = _normalise(table + pair * pairs)
        assert [a.dtype.name for a in out] == ["float64", "int64", "int64", "int32"] + [
            "int32", "int64"
        ] * pairs  # fmt: skip
    for bad in (table + pair, table + pair * 2 + ([0],), table + pair * 4):
        with pytest.raises(ValueError, match="expected 4 table arrays and 2 or 3 ragged pairs"):
            _normalise(bad)
