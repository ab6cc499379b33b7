"""Breakdowns, quantile bins, floors, intervals and episode selection."""

from __future__ import annotations

import numpy as np
import pytest

from vlneval.diagnostics import (
    ScoredRun,
    breakdown,
    cluster_floors,
    column_intervals,
    diagnose,
    graph_floors,
    quantile_bins,
    sample_episodes,
    worst_episodes,
)
from vlneval.errors import InvalidInputError


def test_breakdown_by_hand() -> None:
    rows = breakdown(
        ["b", "a", "a", "b", "b"],
        {"SR": [1.0, 0.0, 1.0, 1.0, 0.0], "NE": [1.0, 5.0, np.inf, 2.0, 9.0]},
    )
    assert [(r.group, r.n, r.share) for r in rows] == [("a", 2, 0.4), ("b", 3, 0.6)]
    assert rows[0].means == {"SR": 0.5, "NE": 5.0}  # the infinite NE is left out, as in summaries
    assert rows[1].means == {"SR": pytest.approx(2 / 3), "NE": 4.0}
    assert breakdown(["a"], {"NE": [np.inf]})[0].means == {"NE": None}


def test_breakdown_order_and_mismatch() -> None:
    rows = breakdown(["x", "y"], {"SR": [1.0, 0.0]}, order=["y", "x", "z"])
    assert [r.group for r in rows] == ["y", "x"]
    with pytest.raises(InvalidInputError, match="has 1 values"):
        breakdown(["x", "y"], {"SR": [1.0]})


def test_quantile_bins() -> None:
    labels, order = quantile_bins(np.arange(1, 9), n_bins=4, unit="words")
    assert order == ["[1, 3) words", "[3, 4) words", "[4, 6) words", "[6, 8] words"]
    assert labels.tolist() == [order[0]] * 2 + [order[1]] + [order[2]] * 2 + [order[3]] * 3
    same, order = quantile_bins([5.0, 5.0, 5.0])
    assert order == ["[5, 5]"] and set(same.tolist()) == {"[5, 5]"}
    labels, order = quantile_bins([1.0, np.nan, 3.0], n_bins=1, decimals=1, unit="m")
    assert labels.tolist() == ["[1.0, 3.0] m", "unknown", "[1.0, 3.0] m"]
    assert order[-1] == "unknown"


def test_cluster_floors_split_level_and_stairs() -> None:
    # a split level (0 and 0.9 m) stays one floor; stair viewpoints go to the nearest floor
    z = np.array([0.0] * 5 + [0.9] * 4 + [1.6, 2.2] + [3.1] * 5)
    f = cluster_floors(z)
    assert f.count == 2
    assert f.elevations.tolist() == pytest.approx([0.0, 3.1])
    assert f.of_node.tolist() == [0] * 9 + [1, 1] + [1] * 5
    assert cluster_floors(np.zeros(0)).count == 0
    assert cluster_floors(np.array([2.0])).of_node.tolist() == [0]


def test_house_floors(house_run: ScoredRun) -> None:
    assert house_run.graphs is not None
    g = house_run.graphs.graph("house")
    f = graph_floors(g)
    by_id = {vp: int(f.of_node[g.index[vp]]) for vp in g.ids}
    assert f.count == 2
    assert {k for k, v in by_id.items() if v == 1} == {"U0", "U1", "U2", "U3"}


def test_real_floors(data_root) -> None:  # type: ignore[no-untyped-def]
    from vlneval.graph.store import GraphStore

    store = GraphStore(data_root / "matterport3d" / "connectivity")
    counts = {s: graph_floors(store.graph(s)).count for s in
              ("Z6MFQCViBuw", "2azQ1b91cZZ", "TbHJrupSAjP", "oLBMNvg9in8")}  # fmt: skip
    assert counts == {"Z6MFQCViBuw": 1, "2azQ1b91cZZ": 2, "TbHJrupSAjP": 3, "oLBMNvg9in8": 4}


def test_column_intervals() -> None:
    out = column_intervals(
        {"SR": [1.0, 0.0, 1.0, 1.0], "NE": [1.0, np.inf, 2.0, 3.0], "X": [np.inf] * 4},
        rng=1,
        n_resamples=300,
    )
    assert out["SR"] is not None and out["SR"].estimate == 0.75 and out["SR"].n == 4
    assert out["NE"] is not None and (out["NE"].estimate, out["NE"].n) == (2.0, 3)
    assert out["X"] is None
    again = column_intervals({"SR": [1.0, 0.0, 1.0, 1.0]}, rng=1, n_resamples=300)
    assert again["SR"] == out["SR"]  # same seed, same interval
    grouped = column_intervals({"SR": [1.0, 0.0, 1.0, 1.0]}, rng=1, groups=list("aabb"))
    assert grouped["SR"] is not None and grouped["SR"].method.endswith("two-stage")


def test_selection() -> None:
    ne = [1.0, np.inf, 7.5, 7.5, np.nan]
    assert worst_episodes(ne, [0.9, 0.1, 0.4, 0.2, 0.5], 3).tolist() == [1, 3, 2]
    assert worst_episodes(ne, None, 10).tolist() == [1, 2, 3, 0, 4]
    picked = sample_episodes(50, 5, exclude=[0, 1, 2], rng=4)
    assert len(picked) == 5 and not set(picked.tolist()) & {0, 1, 2}
    assert picked.tolist() == sample_episodes(50, 5, exclude=[0, 1, 2], rng=4).tolist()
    assert sample_episodes(3, 5, exclude=[0, 1, 2]).size == 0


def test_house_groups_and_intervals(house_run: ScoredRun) -> None:
    d = diagnose(house_run, n_resamples=200, rng=5)
    m = house_run.evaluation.metrics
    assert {k: ci.estimate for k, ci in d.intervals.items() if ci} == pytest.approx(m)
    scan = d.groups["scan"]
    assert [(r.group, r.n) for r in scan] == [("house", 6)]
    assert scan[0].means["SR"] == pytest.approx(2 / 6)
    assert sum(r.n for r in d.groups["reference length"]) == 6
    assert sum(r.n for r in d.groups["instruction length"]) == 6
    clustered = diagnose(house_run, n_resamples=50, cluster_by_scan=True)
    assert clustered.settings["resampling"] == "scans, then episodes"
    # one scan only: the two-stage bootstrap resamples one group, so SR still varies by episode
    assert clustered.intervals["SR"] is not None
