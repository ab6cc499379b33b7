"""Continuous worlds: grid geodesics by hand, layers and ramps, images, oracles, twins."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from vlneval.continuous.motion import Mover
from vlneval.continuous.oracle import CarriedDistances, GridOracle, distances_along
from vlneval.continuous.world import World
from vlneval.errors import InvalidInputError


def test_open_grid_distances_by_hand() -> None:
    w = World.from_array(np.ones((5, 5)), resolution=0.5)
    assert w.distance((0, 0, 0), (2.0, 0, 0)) == pytest.approx(2.0)  # 4 side steps
    assert w.distance((0, 0, 0), (1.0, 1.0, 0)) == pytest.approx(math.sqrt(2))  # 2 diagonals
    assert w.distance((0, 0, 0), (1.0, 0.5, 0)) == pytest.approx(math.sqrt(1.25))  # 1 knight move


def test_walls_force_detours() -> None:
    # A U-shaped corridor: from (0,0) to (2,0) around a wall in column 1, rows 0..1.
    free = np.array([[1, 0, 1], [1, 0, 1], [1, 1, 1]])
    w = World.from_array(free, resolution=1.0)
    # Up column 0, across row 2, down column 2: 6 side steps. No diagonal or knight move
    # short-cuts a corner: each would pass a wall cell ((1, 1) or (0, 1)).
    assert w.distance((0, 0, 0), (2, 0, 0)) == pytest.approx(6.0)
    assert w.distance((0, 0, 0), (1, 0, 0)) == math.inf  # a wall cell is off the map


def test_layers_join_only_where_heights_meet() -> None:
    # One row, two layers: floor 1 (3 m up, layer 1) lies over floor 0 (layer 0) in plan.
    free = np.zeros((2, 1, 8), bool)
    height = np.full((2, 1, 8), np.nan)
    free[0, 0, :6], height[0, 0, :6] = True, 0.0
    free[1, 0, :], height[1, 0, :] = True, 3.0
    stacked = World("stacked", free, height, (0.0, 0.0), 1.0)
    assert stacked.distance((0, 0, 0), (0, 0, 3.0)) == math.inf  # no stairs: never joined
    # Now a ramp on layer 0 climbs from x = 2 to floor 1's height at x = 6.
    free[0, 0, 6:] = True
    height[0, 0, :] = [0, 0, 0, 0.8, 1.6, 2.4, 3.0, 3.0]
    free[1, 0, 6:] = False
    ramp = World("ramp", free, height, (0.0, 0.0), 1.0, slope=1.0)
    d = ramp.distance((0, 0, 0), (0, 0, 3.0))
    # Up the ramp to x = 5 (2.4 m); a step back to x = 4 enters floor 1 (0.6 m away) rather
    # than the ramp (0.8 m away): the nearest height wins. Then 4 m along floor 1.
    assert d == pytest.approx(2 + 3 * math.hypot(1, 0.8) + math.hypot(1, 0.6) + 4)
    # The point (3, 0) exists on both layers: its z picks the layer.
    assert ramp.locate((3, 0, 0.8))[0] != ramp.locate((3, 0, 3.0))[0]


def test_pgm_image_world(tmp_path: Path) -> None:
    pgm = tmp_path / "map.pgm"
    # 2 rows x 3 columns, top row first: white = free. The top row is the largest y.
    pgm.write_bytes(b"P2\n3 2\n255\n255 255 255\n255 0 255\n")
    w = World.from_image(pgm, resolution=1.0)
    assert w.free[0, 0].tolist() == [True, False, True]  # bottom row (y = 0)
    assert w.free[0, 1].tolist() == [True, True, True]
    assert w.distance((0, 0, 0), (2, 0, 0)) == pytest.approx(4.0)  # up, across, down
    with pytest.raises(InvalidInputError, match="not a readable image"):
        (tmp_path / "bad.pgm").write_bytes(b"XX")
        World.from_image(tmp_path / "bad.pgm", resolution=1.0)


def test_grid_oracle_and_carried_distances() -> None:
    w = World.from_array(np.ones((1, 6)), resolution=1.0)
    grid = GridOracle(w, snap=0.5)
    assert grid.distance((0, 0, 0), (5, 0, 0)) == 5.0
    assert grid.distance((0, 0.4, 0), (5, 0, 0)) == pytest.approx(5.4)  # offset to the cell
    assert grid.distance((0, 3, 0), (5, 0, 0)) == math.inf  # off the map, beyond snap
    assert distances_along(grid, [[0, 0, 0], [4, 0, 0]], [5, 0, 0]).tolist() == [5.0, 1.0]
    carried = CarriedDistances([[0, 0, 0]], [2.5], goal=[5, 0, 0])
    assert carried.distance([0, 0, 0], [5, 0, 0]) == 2.5
    with pytest.raises(InvalidInputError, match="no distance was carried"):
        carried.distance([1, 0, 0], [5, 0, 0])
    with pytest.raises(InvalidInputError, match="never NaN"):
        CarriedDistances([[0, 0, 0]], [math.nan], goal=[5, 0, 0])


def test_motion_blocks_slides_and_measures() -> None:
    # A 1-cell-wide corridor along x at row 0, a wall above except one free cell at (1, 3).
    free = np.zeros((3, 8), bool)
    free[0, :] = True
    free[1, 3] = True
    w = World.from_array(free, resolution=0.25)
    mover = Mover(w)
    pose = mover.place(np.array([0.0, 0.0, 0.0]), math.radians(90))  # facing +x
    assert pose is not None
    m = mover.forward(pose, 0.5)
    assert (m.pose.x, m.pose.y, m.blocked, m.length) == pytest.approx((0.5, 0.0, False, 0.5))
    # Facing 45° up-right: blocked at once without sliding; sliding keeps the x component.
    diag = mover.forward(m.pose.__class__(0.0, 0.0, 0, 0.0, math.radians(45)), 0.5)
    assert diag.blocked and diag.length < 0.2
    slid = mover.forward(m.pose.__class__(0.0, 0.0, 0, 0.0, math.radians(45)), 0.5, slide=True)
    assert slid.blocked and slid.pose.y < 0.13 and slid.pose.x > 0.3


def test_unicycle_drive() -> None:
    w = World.from_array(np.ones((40, 40)), resolution=0.1)
    mover = Mover(w)
    pose = mover.place(np.array([1.0, 1.0, 0.0]), 0.0)
    assert pose is not None
    straight = mover.drive(pose, 0.5, 0.0, 1.0)
    assert straight.pose.y == pytest.approx(1.5) and straight.length == pytest.approx(0.5)
    spin = mover.drive(pose, 0.0, math.pi / 2, 1.0)
    assert spin.pose.heading == pytest.approx(math.pi / 2) and spin.length == 0.0
    # A quarter circle of radius 0.5 m: length π/4, ends 0.5 m right and 0.5 m up.
    arc = mover.drive(pose, 0.5 * math.pi / 2, math.pi / 2, 1.0)
    assert arc.length == pytest.approx(math.pi / 4, rel=1e-3)
    assert (arc.pose.x, arc.pose.y) == pytest.approx((1.5, 1.5), abs=2e-3)


def test_fields_and_graph_kept_on_disk(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """A second world of the same content reads the graph and fields the first one wrote, and
    they are the same arrays; a world of other content does not."""
    free = np.ones((2, 12, 15), dtype=bool)
    free[1, :, :6] = False
    height = np.zeros(free.shape)
    height[1] = 2.5
    first = World("w", free, height, (0.0, 0.0), 0.1, cache=tmp_path)
    g, f = first.graph(), first.field(7)
    folder = next(tmp_path.iterdir())
    assert sorted(p.name for p in folder.iterdir()) == ["7.npy", "graph.npz"]
    second = World("w", free, height, (0.0, 0.0), 0.1, cache=tmp_path)
    g2 = second.graph()
    assert second._graph is not None and (g2 != g).nnz == 0
    assert np.array_equal(g2.indptr, g.indptr) and np.array_equal(g2.indices, g.indices)
    assert np.array_equal(second.field(7), f)
    other = World("w", free, height, (0.0, 0.0), 0.1, climb=0.3, cache=tmp_path)
    assert other._load_graph() is None and other._load_field(7) is None


def test_a_cache_that_cannot_be_written_is_skipped(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """A cache folder that is a file: the graph and fields are computed, nothing is kept."""
    free = np.ones((1, 12, 15), dtype=bool)
    (tmp_path / "cache").write_text("a file")
    world = World("w", free, np.zeros(free.shape), (0.0, 0.0), 0.1, cache=tmp_path / "cache")
    reference = World("w", free, np.zeros(free.shape), (0.0, 0.0), 0.1, cache=None)
    assert (world.graph() != reference.graph()).nnz == 0
    assert np.array_equal(world.field(7), reference.field(7))
    assert (tmp_path / "cache").read_text() == "a file"


def test_mapped_fields_are_bounded(tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """Fields read from the cache stay mapped at most MAX_OPEN_MAPS at a time, over every world
    (each map counts against vm.max_map_count); an evicted field is mapped again, same values."""
    import gc

    from vlneval.continuous import world as world_module

    monkeypatch.setattr(world_module, "MAX_OPEN_MAPS", 3)
    monkeypatch.setattr(world_module, "_MAPS", type(world_module._MAPS)())
    free = np.ones((1, 6, 7), dtype=bool)
    height = np.zeros(free.shape)
    first = World("w", free, height, (0.0, 0.0), 0.1, cache=tmp_path)
    computed = {g: first.field(g).copy() for g in range(8)}

    def open_maps() -> int:
        gc.collect()
        with open("/proc/self/maps") as f:
            return sum(str(tmp_path) in line for line in f)

    readers = [World("w", free, height, (0.0, 0.0), 0.1, cache=tmp_path) for _ in range(4)]
    for g in range(8):
        for w in readers:
            assert np.array_equal(w.field(g), computed[g])
    assert len(world_module._MAPS) == 3
    if Path("/proc/self/maps").exists():
        assert open_maps() <= 3
    assert np.array_equal(readers[0].field(0), computed[0])  # evicted, mapped again
    assert readers[1].field(0) is readers[0].field(0)  # one map per file, shared
