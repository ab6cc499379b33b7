"""The waypoint planner's bounded search gives scipy's answer: the same target cell and the same
path as a full ``scipy.sparse.csgraph.dijkstra`` search (``World.search``), ties included."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from vlneval.continuous import _search_kernels as sk
from vlneval.continuous.motion import Mover
from vlneval.continuous.world import World
from vlneval.envs.continuous.executor import _target_node
from vlneval.envs.continuous.spaces import WAYPOINT


def _reference(world: World, start: int, target: tuple[float, float, float | None]) -> list[int]:
    """The planner as it was: scipy's search over the whole limit, keys with Python's round."""
    space = WAYPOINT
    dist, pred = world.search(start, limit=4.0 * space.max_range + 2.0)
    x, y, z = target
    i0, j0 = world.cell(x, y)
    reach = int(math.ceil(space.snap / world.resolution))
    best, key = -1, (math.inf, math.inf, math.inf)
    for i in range(i0 - reach, i0 + reach + 1):
        for j in range(j0 - reach, j0 + reach + 1):
            if not world.inside(i, j):
                continue
            off = math.hypot(
                world.origin[0] + j * world.resolution - x,
                world.origin[1] + i * world.resolution - y,
            )
            if off > max(space.snap, world.resolution * 0.71):
                continue
            for layer in np.flatnonzero(world.free[:, i, j]):
                node = int(world.node_id[layer, i, j])
                if not math.isfinite(dist[node]):
                    continue
                dz = abs(world.height[layer, i, j] - z) if z is not None else 0.0
                k = (round(dz, 6), round(off, 6), dist[node]) if z is not None else (
                    round(off, 6), dist[node], 0.0)  # fmt: skip
                if k < key:
                    best, key = node, k
    if best < 0:
        return []
    nodes = [best]
    while nodes[-1] != start:
        nodes.append(int(pred[nodes[-1]]))
    return nodes[::-1]


def _fast(world: World, start: int, target: tuple[float, float, float | None]) -> list[int]:
    mover = Mover(world)
    node = _target_node(mover, start, target, WAYPOINT)
    if node < 0:
        return []
    path = world.path_points(world.target_search().path(node))
    cells = [world.cell(x, y) for x, y in path[:, :2].tolist()]
    return [int(world.node_id[int(k), i, j]) for (i, j), k in zip(cells, path[:, 2], strict=True)]


def _compare(world: World, rng: np.random.Generator, n: int, *, with_z: bool) -> int:
    """Random robot cells and targets up to 3 m away; returns how many had a tie."""
    search = world.target_search()
    before = search.fallbacks
    for _ in range(n):
        start = int(rng.integers(world.n_nodes))
        here = world.centre(start)
        r, a = rng.uniform(0, 3.0), rng.uniform(-math.pi, math.pi)
        z = float(here[2] + rng.choice([0.0, 0.05, 2.5])) if with_z else None
        target = (here[0] + r * math.sin(a), here[1] + r * math.cos(a), z)
        assert _fast(world, start, target) == _reference(world, start, target), (start, target)
    return search.fallbacks - before


def test_open_floor() -> None:
    free = np.ones((40, 50), dtype=bool)
    free[10:30, 20] = False  # a wall, for detours
    world = World.from_array(free, resolution=0.1)
    rng = np.random.default_rng(0)
    _compare(world, rng, 300, with_z=False)
    _compare(world, rng, 200, with_z=True)


def test_mirror_routes_tie_and_fall_back_to_scipy() -> None:
    """Around a wall on the axis the two routes are mirror images, the same floats: the cell
    behind it has two predecessors of equal distance, and the path is scipy's."""
    free = np.ones((21, 21), dtype=bool)
    free[4:17, 10] = False
    world = World.from_array(free, resolution=0.1)
    start = int(world.node_id[0, 10, 5])
    search = world.target_search()
    for col in range(11, 19):
        target = (col * 0.1, 1.0, None)
        assert _fast(world, start, target) == _reference(world, start, target)
    assert search.fallbacks > 0


def test_two_floors_and_a_ramp() -> None:
    free = np.zeros((2, 30, 60), dtype=bool)
    free[0, 5:25, 5:55] = True
    free[1, 5:25, 5:25] = True
    height = np.zeros(free.shape)
    height[1] = 2.5
    height[0, 5:10, 30:55] = np.linspace(0.0, 2.4, 25)[None, :]  # a ramp on the lower layer
    world = World("floors", free, height, (0.0, 0.0), 0.1)
    rng = np.random.default_rng(1)
    _compare(world, rng, 200, with_z=True)
    _compare(world, rng, 100, with_z=False)


def test_real_twin_worlds(data_root: Path) -> None:
    from vlneval.tasks import get_task
    from vlneval.tasks.vlnce.score import load_twin_split

    eps, worlds = load_twin_split(get_task("r2r-twin"), "val_unseen", root=data_root)
    rng = np.random.default_rng(2)
    for scan in sorted(set(eps.scans))[:3]:
        _compare(worlds(scan), rng, 60, with_z=True)


@pytest.mark.parametrize("seed", [0, 1])
def test_micro_is_pythons_round(seed: int) -> None:
    """``micro(x) / 1e6 == round(x, 6)``, half-way products (dyadic x) included."""
    rng = np.random.default_rng(seed)
    xs = np.concatenate(
        [
            rng.uniform(0, 5, 20_000),
            rng.uniform(0, 1e-5, 5_000),
            (rng.integers(0, 5_000_000, 20_000) + 0.5) / 1e6,
            rng.integers(0, 640, 5_000) / 128,
        ]
    )
    xs = np.concatenate([xs, np.nextafter(xs, 10), np.nextafter(xs, -1).clip(0)])
    assert [sk.micro(x) / 1e6 for x in xs.tolist()] == [round(x, 6) for x in xs.tolist()]
