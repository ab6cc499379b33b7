"""The kernels against a plain-Python reference implementation written straight from the spec."""

from __future__ import annotations

import itertools
import math
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vlneval import metrics as M

INF = math.inf
Table = list[list[float]]


# ---- reference implementation (spec/metrics.md, literally; O(mn) memory, no shortcuts) ----


def ref_path_length(d: Table, p: list[int]) -> float:
    return sum(d[a][b] for a, b in itertools.pairwise(p) if a != b)


def ref_dtw(d: Table, r: list[int], p: list[int]) -> float:
    m, n = len(r), len(p)
    acc = [[INF] * (n + 1) for _ in range(m + 1)]
    acc[0][0] = 0.0
    for k in range(1, m + 1):
        for j in range(1, n + 1):
            best = min(acc[k - 1][j], acc[k][j - 1], acc[k - 1][j - 1])
            acc[k][j] = d[r[k - 1]][p[j - 1]] + best
    return acc[m][n]


def ref_ndtw(d: Table, r: list[int], p: list[int], delta: float) -> float:
    return 0.0 if not p else math.exp(-ref_dtw(d, r, p) / (len(r) * delta))


def ref_cls(d: Table, p: list[int], r: list[int], delta: float) -> float:
    pc = sum(math.exp(-min((d[x][y] for y in p), default=INF) / delta) for x in r) / len(r)
    if pc == 0.0:
        return 0.0
    length_r, length_p = ref_path_length(d, r), ref_path_length(d, p)
    if length_r == INF:
        return 0.0
    epl = pc * length_r
    denom = epl + abs(epl - length_p)
    return pc * (1.0 if denom == 0 else epl / denom)


def ref_spl(s: float, ell: float, tl: float, floor: float) -> float:
    if s == 0 or ell == INF:
        return 0.0
    denom = max(ell, tl, floor)
    return s if denom == 0 else s * ell / denom


def ref_collapse(p: list[int]) -> list[int]:
    return [x for j, x in enumerate(p) if j == 0 or x != p[j - 1]]


def ref_episode(d: Table, p: list[int], r: list[int], goals: list[int], o: Any) -> dict[str, float]:
    def ok(err: float, inclusive: bool) -> float:
        return float(err <= o.threshold if inclusive else err < o.threshold)

    ne = min(d[p[-1]][g] for g in goals) if p else INF
    oe = min((d[x][g] for x in p for g in goals), default=INF)
    tl, rl = ref_path_length(d, p), ref_path_length(d, r)
    ell = rl if o.spl_reference == "reference" else min(d[r[0]][g] for g in goals)
    q = ref_collapse(p) if o.collapse_repeats else p
    nd = ref_ndtw(d, r, q, o.threshold)
    cls_delta = o.threshold if o.cls_threshold is None else o.cls_threshold
    return {
        "nav_error": ne,
        "oracle_error": oe,
        "success": ok(ne, o.success_inclusive),
        "oracle_success": ok(oe, o.success_inclusive),
        "path_length": tl,
        "shortest_length": ell,
        "reference_length": rl,
        "spl": ref_spl(ok(ne, o.success_inclusive), ell, tl, o.spl_floor),
        "dtw": ref_dtw(d, r, q),
        "ndtw": nd,
        "sdtw": ok(ne, o.sdtw_inclusive) * nd,
        "cls": ref_cls(d, q, r, cls_delta),
        "steps": float(max(len(p) - 1, 0)),
        "repeats": float(len(p) - len(ref_collapse(p))),
    }


# ---- comparisons ----


def _close(got: float, want: float) -> bool:
    return got == want or got == pytest.approx(want, rel=1e-12, abs=1e-300)


OPTIONS = [
    {},
    {"success_inclusive": True, "sdtw_inclusive": True, "threshold": 1.5},
    {"spl_reference": "reference", "spl_floor": 0.01, "collapse_repeats": False},
    {"threshold": 4.0, "cls_threshold": 2.0, "sdtw_inclusive": True},
    {"spl_floor": 1.0, "threshold": 0.75},
]


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("options", OPTIONS, ids=lambda o: ",".join(o) or "defaults")
def test_batch_matches_reference(seed: int, options: dict[str, Any], kit, score_world) -> None:  # type: ignore[no-untyped-def]
    world = kit.random_world(seed, scans=4, episodes=80)
    out = score_world(world, **options)
    defaults = {
        "threshold": 3.0,
        "success_inclusive": False,
        "sdtw_inclusive": False,
        "spl_reference": "shortest",
        "spl_floor": 0.0,
        "collapse_repeats": True,
        "cls_threshold": None,
    }
    o = SimpleNamespace(**{**defaults, **options})
    assert set(out) == set(M.COLUMNS)
    for i, ep in enumerate(world.episodes):
        want = ref_episode(world.tables[ep.scan], ep.traj, ep.ref, ep.goals, o)
        for key, value in want.items():
            assert _close(float(out[key][i]), value), (i, key, float(out[key][i]), value, ep)


@pytest.mark.parametrize("seed", range(4))
def test_single_episode_functions_match_reference(seed: int, kit) -> None:  # type: ignore[no-untyped-def]
    world = kit.random_world(100 + seed, scans=3, episodes=50)
    for ep in world.episodes:
        d, table = world.tables[ep.scan], world.table(ep.scan)
        p, r, g = ep.traj, ep.ref, ep.goals
        assert _close(M.path_length(p, distances=table), ref_path_length(d, p))
        assert _close(M.dtw(r, p, distances=table), ref_dtw(d, r, p))
        assert _close(M.ndtw(r, p, distances=table, threshold=2.0), ref_ndtw(d, r, p, 2.0))
        assert _close(M.cls(p, r, distances=table, threshold=2.0), ref_cls(d, p, r, 2.0))
        assert M.collapse_repeats(p).tolist() == ref_collapse(p)
        if p:
            ne = M.navigation_error(p, g, distances=table)
            assert ne == min(d[p[-1]][x] for x in g)
            assert M.oracle_error(p, g, distances=table) == min(d[x][y] for x in p for y in g)
            sdtw = M.sdtw(r, p, distances=table, success=M.success(ne))
            assert _close(sdtw, float(ne < 3.0) * ref_ndtw(d, r, p, 3.0))


@st.composite
def episodes(draw: st.DrawFn) -> tuple[Table, list[int], list[int]]:
    n = draw(st.integers(1, 7))
    weights = st.one_of(st.just(INF), st.floats(0.1, 10.0, allow_nan=False))
    symmetric = draw(st.booleans())
    d = [[0.0] * n for _ in range(n)]
    for a in range(n):
        for b in range(a + 1, n):
            d[a][b] = draw(weights)  # any table, metric or not: the kernels read d(u, v) as given
            d[b][a] = d[a][b] if symmetric else draw(weights)
    nodes = st.integers(0, n - 1)
    return d, draw(st.lists(nodes, min_size=1, max_size=9)), draw(st.lists(nodes, max_size=12))


@settings(max_examples=300, deadline=None)
@given(episodes(), st.floats(0.5, 5.0))
def test_fidelity_matches_reference_on_any_table(case, delta: float) -> None:  # type: ignore[no-untyped-def]
    d, r, p = case
    table = np.array(d)
    assert _close(M.dtw(r, p, distances=table), ref_dtw(d, r, p))
    assert _close(M.ndtw(r, p, distances=table, threshold=delta), ref_ndtw(d, r, p, delta))
    assert _close(M.cls(p, r, distances=table, threshold=delta), ref_cls(d, p, r, delta))
    assert _close(M.path_length(p, distances=table), ref_path_length(d, p))
