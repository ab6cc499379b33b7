"""Properties every metric must have, checked on random worlds through the batch kernel."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from vlneval import metrics as M

SEEDS = range(5)
OPTIONS = [{}, {"spl_reference": "reference", "spl_floor": 0.01, "collapse_repeats": False}]
UNIT_INTERVAL = ("success", "oracle_success", "spl", "ndtw", "sdtw", "cls")


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("options", OPTIONS)
def test_bounds_and_orderings(seed: int, options: dict[str, Any], kit, score_world) -> None:  # type: ignore[no-untyped-def]
    out = score_world(kit.random_world(seed, episodes=200), **options)
    for key, values in out.items():
        assert not np.isnan(values).any(), key
        assert (values >= 0).all(), key
    for key in UNIT_INTERVAL:
        assert (out[key] <= 1).all(), key
    assert set(np.unique(out["success"])) <= {0.0, 1.0}
    assert (out["oracle_error"] <= out["nav_error"]).all()
    assert (out["oracle_success"] >= out["success"]).all()
    assert (out["spl"] <= out["success"]).all()
    assert (out["sdtw"] <= out["ndtw"]).all() and (out["sdtw"] <= out["success"]).all()
    assert (out["repeats"] <= out["steps"]).all()
    finite = np.isfinite(out["dtw"])
    assert (out["ndtw"][finite] > 0).all() and (out["ndtw"][~finite] == 0).all()
    assert ((out["dtw"] == 0) == (out["ndtw"] == 1)).all()


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("collapse", [True, False])
def test_perfect_trajectory_scores_best(seed: int, collapse: bool, kit, score_world) -> None:  # type: ignore[no-untyped-def]
    world = kit.random_world(seed, episodes=0)
    rng = np.random.default_rng(seed)
    for s, table in enumerate(world.tables):
        for a in range(len(table)):
            for b in range(len(table)):
                if table[a][b] == np.inf or rng.random() < 0.5:
                    continue
                path = kit.shortest_path_nodes(table, world.adjacency[s], a, b)
                if rng.random() < 0.3:  # turning in place on the way changes nothing below
                    path = path[:1] + path
                world.episodes.append(kit.Episode(s, path, path, [b]))
    assert world.episodes
    out = score_world(world, collapse_repeats=collapse)
    for key in ("success", "oracle_success", "spl", "ndtw", "sdtw", "cls"):
        assert (out[key] == 1.0).all(), key
    assert (out["nav_error"] == 0).all() and (out["dtw"] == 0).all()
    assert np.allclose(out["path_length"], out["shortest_length"], rtol=1e-12, atol=0)


def _relabel(world, rng: np.random.Generator, kit):  # type: ignore[no-untyped-def]
    perms = [rng.permutation(len(t)) for t in world.tables]
    tables = []
    for table, perm in zip(world.tables, perms, strict=True):
        new = np.empty((len(table), len(table)))
        new[np.ix_(perm, perm)] = np.array(table)
        tables.append(new.tolist())
    episodes = [
        kit.Episode(e.scan, *([int(perms[e.scan][v]) for v in x] for x in (e.traj, e.ref, e.goals)))
        for e in world.episodes
    ]
    return kit.World(tables, episodes)


@pytest.mark.parametrize("seed", SEEDS)
def test_invariant_to_relabelling_nodes(seed: int, kit, score_world) -> None:  # type: ignore[no-untyped-def]
    world = kit.random_world(seed, episodes=150)
    before = score_world(world)
    after = score_world(_relabel(world, np.random.default_rng(seed), kit))
    for key in M.COLUMNS:
        np.testing.assert_array_equal(after[key], before[key], err_msg=key)


@pytest.mark.parametrize("seed", SEEDS)
def test_invariant_to_episode_order_goal_order_and_table_placement(seed, kit, score_world):  # type: ignore[no-untyped-def]
    world = kit.random_world(seed, episodes=120)
    before = score_world(world)
    order = np.random.default_rng(seed).permutation(len(world.episodes))
    shuffled = kit.World(
        world.tables,
        [
            kit.Episode(e.scan, e.traj, e.ref, e.goals[::-1] * 2)
            for e in [world.episodes[i] for i in order]
        ],
    )
    after = score_world(shuffled)
    for key in M.COLUMNS:
        np.testing.assert_array_equal(after[key], before[key][order], err_msg=key)

    # Tables stored in reverse order with NaN gaps between them: only the offsets matter.
    arrays = kit.pack(world)
    sizes = arrays["table_sizes"]
    starts = np.zeros_like(sizes)
    chunks: list[np.ndarray] = []
    for s in reversed(range(len(sizes))):
        chunks.append(np.full(3, np.nan))
        starts[s] = sum(c.size for c in chunks)
        chunks.append(world.table(s).ravel())
    arrays.update(dist_flat=np.concatenate(chunks), table_offsets=starts)
    moved = M.score_batch(**arrays)
    for key in M.COLUMNS:
        np.testing.assert_array_equal(moved[key], before[key], err_msg=key)


@pytest.mark.parametrize("seed", SEEDS)
def test_batch_and_single_episode_functions_agree_exactly(seed: int, kit, score_world) -> None:  # type: ignore[no-untyped-def]
    world = kit.random_world(seed, episodes=60)
    out = score_world(world, collapse_repeats=False)
    for i, e in enumerate(world.episodes):
        d = world.table(e.scan)
        assert out["path_length"][i] == M.path_length(e.traj, distances=d)
        assert out["reference_length"][i] == M.path_length(e.ref, distances=d)
        assert out["dtw"][i] == M.dtw(e.ref, e.traj, distances=d)
        assert out["ndtw"][i] == M.ndtw(e.ref, e.traj, distances=d)
        assert out["cls"][i] == M.cls(e.traj, e.ref, distances=d)
        if e.traj:
            assert out["nav_error"][i] == M.navigation_error(e.traj, e.goals, distances=d)
            assert out["oracle_error"][i] == M.oracle_error(e.traj, e.goals, distances=d)
            sr = M.success(out["nav_error"][i])
            assert out["success"][i] == sr
            assert out["oracle_success"][i] == M.oracle_success(out["oracle_error"][i])
            assert out["spl"][i] == M.spl(sr, out["shortest_length"][i], out["path_length"][i])
            assert out["sdtw"][i] == M.sdtw(e.ref, e.traj, distances=d, success=sr)


def test_integer_dtypes_are_accepted(square: np.ndarray) -> None:
    for dtype in (np.int8, np.uint16, np.int32, np.int64):
        path = np.array([0, 3], dtype=dtype)
        assert M.cls(path, np.array([0, 1, 2, 3], dtype=dtype), distances=square) > 0
        assert M.navigation_error(path, np.array([3], dtype=dtype), distances=square) == 0.0
    assert M.path_length([0, 3], distances=square.astype(np.float32)) == 4.0
    assert M.path_length([0, 3], distances=square.astype(np.int64)) == 4.0


@pytest.mark.parametrize("threads", [2, 3, 7])
def test_threads_split_the_episodes_without_changing_a_value(threads: int, kit) -> None:  # type: ignore[no-untyped-def]
    world = kit.random_world(11, episodes=101)
    one = M.score_batch(**kit.pack(world), threads=1)
    many = M.score_batch(**kit.pack(world), threads=threads)
    for key in M.COLUMNS:
        np.testing.assert_array_equal(many[key], one[key], err_msg=key)


@pytest.mark.parametrize("threads", [0, -1, 1.5, True, "2"])
def test_threads_must_be_a_positive_integer(threads: Any, kit) -> None:  # type: ignore[no-untyped-def]
    from vlneval.errors import InvalidInputError

    with pytest.raises(InvalidInputError, match="threads must be a positive integer"):
        M.score_batch(**kit.pack(kit.random_world(0, episodes=3)), threads=threads)


def test_dtw_blocks_hold_the_memory_cap_whatever_the_lengths() -> None:
    from vlneval.metrics._kernels import DTW_CELLS, dtw_blocks

    # A 100,000-step record among short ones (dtw_batch's order: longest first) used to
    # share a block of 64 padded to 100,000 columns: 20 x 100,000 x 64 costs (1 GB, twice).
    m = np.array([20, 2, 3, *[5] * 300, 40, *[6] * 50])
    k = np.array([100_000, 80_000, 3, *[30] * 300, 2, *[4] * 50])
    counts = dtw_blocks(m, k)
    assert counts == [1, 2, 351]  # 20 x 100,000 alone: streamed
    lo = 0
    for count in counts:
        cells = count * m[lo : lo + count].max() * k[lo : lo + count].max()
        assert cells <= DTW_CELLS or (count == 1 and cells > DTW_CELLS)  # alone: streamed
        lo += count
    assert dtw_blocks(np.array([3] * 20_000), np.array([4] * 20_000)) == [16_384, 3_616]


def test_a_pair_too_long_for_a_block_has_the_same_dtw(monkeypatch: pytest.MonkeyPatch) -> None:
    from vlneval.metrics import _kernels

    rng = np.random.default_rng(5)
    table = rng.random((6, 6)).round(3) * 10
    table = table + table.T
    m, k = np.array([5, 3, 4, 1]), np.array([300, 40, 1, 7])
    ref, traj = rng.integers(0, 6, m.sum()), rng.integers(0, 6, k.sum())
    args = (table.ravel(), np.zeros(4, np.int64), np.full(4, 6), ref, np.cumsum([0, *m]),
            traj, np.cumsum([0, *k]))  # fmt: skip
    blocked = _kernels.dtw_batch(*args)
    monkeypatch.setattr(_kernels, "DTW_CELLS", 100)  # the first two pairs are streamed
    assert _kernels.dtw_blocks(m[[0, 1, 3, 2]], k[[0, 1, 3, 2]]) == [1, 1, 2]
    streamed = _kernels.dtw_batch(*args)
    for a, b in zip(blocked, streamed, strict=True):
        assert a.tobytes() == b.tobytes()
    assert blocked[0][2] == sum(table[r, traj[340]] for r in ref[8:12])


def test_fidelity_off_skips_only_the_dtw_columns(kit) -> None:  # type: ignore[no-untyped-def]
    world = kit.random_world(4, episodes=60)
    full = M.score_batch(**kit.pack(world))
    lean = M.score_batch(**kit.pack(world), fidelity=False)
    for key in M.COLUMNS:
        if key in ("dtw", "ndtw", "sdtw", "cls"):
            assert np.isnan(lean[key]).all(), key
        else:
            assert lean[key].tobytes() == full[key].tobytes(), key
