"""Fixtures for the metric tests: tiny hand-made graphs, random graphs, and batch packing."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest

INF = math.inf


def floyd_warshall(n: int, edges: Sequence[tuple[int, int, float]]) -> list[list[float]]:
    """All-pairs shortest distances of an undirected weighted graph, plain Python."""
    d = [[0.0 if i == j else INF for j in range(n)] for i in range(n)]
    for a, b, w in edges:
        if w < d[a][b]:
            d[a][b] = d[b][a] = float(w)
    for k in range(n):
        dk = d[k]
        for i in range(n):
            dik = d[i][k]
            if dik == INF:
                continue
            di = d[i]
            for j in range(n):
                if dik + dk[j] < di[j]:
                    di[j] = dik + dk[j]
    return d


def shortest_path_nodes(d: list[list[float]], adj: list[list[int]], a: int, b: int) -> list[int]:
    """One shortest path a -> b (nodes), following neighbours that stay on a shortest path."""
    path = [a]
    while path[-1] != b:
        u = path[-1]
        path.append(min(adj[u], key=lambda v: (abs(d[u][v] + d[v][b] - d[u][b]), v)))
    return path


@dataclass
class Episode:
    scan: int
    traj: list[int]
    ref: list[int]
    goals: list[int]


@dataclass
class World:
    """Tables (one per scan, lists of lists) and the episodes scored on them."""

    tables: list[list[list[float]]]
    episodes: list[Episode] = field(default_factory=list)
    adjacency: list[list[list[int]]] = field(default_factory=list)

    def table(self, scan: int) -> np.ndarray:
        return np.array(self.tables[scan], dtype=np.float64)


def pack(world: World) -> dict[str, np.ndarray]:
    """score_batch's positional arrays (as keywords) for every episode of the world."""
    tables = [world.table(s) for s in range(len(world.tables))]
    sizes = np.array([t.shape[0] for t in tables], dtype=np.int64)
    starts = np.concatenate([[0], np.cumsum(sizes**2)[:-1]]).astype(np.int64)

    def flat(lists: list[list[int]]) -> tuple[np.ndarray, np.ndarray]:
        values = np.array([v for x in lists for v in x], dtype=np.int32)
        offsets = np.concatenate([[0], np.cumsum([len(x) for x in lists])]).astype(np.int64)
        return values, offsets

    eps = world.episodes
    traj, traj_offsets = flat([e.traj for e in eps])
    ref, ref_offsets = flat([e.ref for e in eps])
    goals, goal_offsets = flat([e.goals for e in eps])
    return {
        "dist_flat": np.concatenate([t.ravel() for t in tables]),
        "table_offsets": starts,
        "table_sizes": sizes,
        "scan_index": np.array([e.scan for e in eps], dtype=np.int32),
        "traj": traj,
        "traj_offsets": traj_offsets,
        "ref": ref,
        "ref_offsets": ref_offsets,
        "goals": goals,
        "goal_offsets": goal_offsets,
    }


def random_world(seed: int, *, scans: int = 3, episodes: int = 60) -> World:
    """Small random graphs (sometimes disconnected), random walks with repeats and jumps."""
    rng = np.random.default_rng(seed)
    world = World(tables=[])
    for _ in range(scans):
        n = int(rng.integers(1, 10))
        edges = []
        adj: list[list[int]] = [[] for _ in range(n)]
        for a in range(n):
            for b in range(a + 1, n):
                if rng.random() < 0.35:
                    edges.append((a, b, float(rng.choice([0.5, 1.0, 1.5, 2.25, 3.0, 4.0]))))
                    adj[a].append(b)
                    adj[b].append(a)
        world.tables.append(floyd_warshall(n, edges))
        world.adjacency.append(adj)
    for _ in range(episodes):
        s = int(rng.integers(scans))
        n = len(world.tables[s])
        world.episodes.append(
            Episode(
                scan=s,
                traj=_walk(rng, world.adjacency[s], n, int(rng.integers(0, 14))),
                ref=_walk(rng, world.adjacency[s], n, int(rng.integers(1, 9))),
                goals=[int(g) for g in rng.integers(0, n, size=int(rng.integers(1, 3)))],
            )
        )
    return world


def _walk(rng: np.random.Generator, adj: list[list[int]], n: int, length: int) -> list[int]:
    path: list[int] = []
    for _ in range(length):
        if not path or not adj[path[-1]] or rng.random() < 0.1:
            path.append(int(rng.integers(n)))  # a start, a jump, or a dead end
        elif rng.random() < 0.15:
            path.append(path[-1])  # turning in place
        else:
            path.append(int(rng.choice(adj[path[-1]])))
    return path


@pytest.fixture
def square() -> np.ndarray:
    """spec/metrics.md worked example 1: S, A, B, G = 0..3 on the cycle S-A-B-G-S, 4 m edges."""
    return np.array([[0, 4, 8, 4], [4, 0, 4, 8], [8, 4, 0, 4], [4, 8, 4, 0]], dtype=np.float64)


@pytest.fixture
def line() -> Callable[[int, float], np.ndarray]:
    """A path graph 0 - 1 - ... - (n-1) with equal edges: d(i, j) = step * |i - j|."""

    def make(n: int, step: float) -> np.ndarray:
        idx = np.arange(n)
        return step * np.abs(idx[:, None] - idx[None, :]).astype(np.float64)

    return make


@pytest.fixture
def score_world() -> Callable[..., dict[str, np.ndarray]]:
    """Scores every episode of a World with score_batch."""
    from vlneval.metrics import score_batch

    def run(world: World, **options: Any) -> dict[str, np.ndarray]:
        return score_batch(**pack(world), **options)

    return run


@pytest.fixture
def kit() -> SimpleNamespace:
    """The helpers above, for tests that build their own worlds."""
    return SimpleNamespace(
        World=World,
        Episode=Episode,
        pack=pack,
        random_world=random_world,
        floyd_warshall=floyd_warshall,
        shortest_path_nodes=shortest_path_nodes,
    )
