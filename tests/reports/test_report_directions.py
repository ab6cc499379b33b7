"""Every registered metric's direction decides which run is "better" in every output: the
comparison record, the terminal table, the HTML table, the forest plot and the leaderboard."""

from __future__ import annotations

import dataclasses
import datetime as dt
from pathlib import Path

import numpy as np
import pytest

from vlneval.diagnostics import score_run
from vlneval.evaluation import Scorer
from vlneval.metrics import LABELS, metric_info
from vlneval.reports.compare import RunComparison, b_is_better, compare_scored
from vlneval.reports.compare_terminal import render_comparison
from vlneval.reports.html_parts import comparison_table
from vlneval.stats import compare_runs

N = 60


def _values(label: str, better: bool) -> tuple[np.ndarray, np.ndarray]:
    """Baseline A and candidate B on N episodes, B better (or worse) by the label's direction
    on every episode that differs (so that the difference is clearly significant)."""
    info = metric_info(label)
    rng = np.random.default_rng(7)
    if info.kind == "rate":
        low, high = np.zeros(N), np.zeros(N)
        low[:10] = 1.0
        high[:40] = 1.0
    else:
        low = rng.uniform(0.1, 0.4, N) * (1.0 if info.is_rate else 10.0)
        high = low + (0.3 if info.is_rate else 5.0)
    b_high = (info.direction != "lower") == better
    return (low, high) if b_high else (high, low)


def _comparison(label: str, better: bool) -> RunComparison:
    a, b = _values(label, better)
    table = compare_runs({label: b}, {label: a}, rng=0, n_resamples=300, n_permutations=2000)
    c = dataclasses.replace(table[label], p_adjusted=table[label].p_value, correction="holm")
    assert c.p_value < 0.01, label  # the test data is unambiguous
    return RunComparison("A", "B", {label: c}, N, 0, 0, None,
                         settings={"confidence": 0.95})  # fmt: skip


def _row_of(text: str, label: str) -> str:
    return next(line for line in text.splitlines() if line.lstrip("│ ").startswith(label + " "))


@pytest.mark.parametrize("better", [True, False], ids=["B-better", "B-worse"])
@pytest.mark.parametrize("label", sorted(LABELS))
def test_better_follows_the_declared_direction(label: str, better: bool) -> None:
    info = metric_info(label)
    cmp = _comparison(label, better)
    c = cmp.metrics[label]
    neutral = info.direction == "neutral"
    expected = None if neutral else better
    assert b_is_better(label, c) is expected
    row = cmp.to_dict()["metrics"][0]
    assert row["direction"] == info.direction_text and row["B_is_better"] is expected

    green, red = "\x1b[32m", "\x1b[31m"
    line = _row_of(render_comparison(cmp, color=True), label)
    assert (green in line, red in line) == (expected is True, expected is False), line
    unit = info.shown_unit
    assert _row_of(render_comparison(cmp), label).lstrip("│ ").startswith(f"{label} ({unit})")

    html = comparison_table(cmp)
    assert ("B better" in html, "B worse" in html) == (expected is True, expected is False)
    if neutral:
        assert f"{label} has no better direction" in html


@pytest.mark.parametrize("label", sorted(LABELS))
def test_forest_plot_colours_follow_the_direction(label: str) -> None:
    pytest.importorskip("matplotlib")
    from matplotlib.colors import to_hex

    from vlneval.reports.plots_base import COLORS
    from vlneval.reports.plots_compare import plot_comparison

    info = metric_info(label)
    for better in (True, False):
        fig = plot_comparison(_comparison(label, better))
        colour = to_hex(fig.axes[0].lines[0].get_color())
        expected = (
            COLORS["neutral"]
            if info.direction == "neutral"
            else COLORS["success"]
            if better
            else COLORS["fail"]
        )
        assert colour == to_hex(expected), (label, better)
        unit = {"%": "percentage points", "m": "metres", "px": "pixels"}.get(info.shown_unit)
        assert fig.axes[0].get_xlabel() == f"Δ = B − A ({unit or info.shown_unit})"


@pytest.mark.parametrize("label", sorted(LABELS))
def test_leaderboard_ranks_the_best_value_first(label: str) -> None:
    from vlneval.server.services.admin import primary_metric_of
    from vlneval.server.services.leaderboard import rank
    from vlneval.tasks import TASKS
    from vlneval.tasks.profiles import get_profile

    info = metric_info(label)
    phases = [(t.name, p) for t in TASKS.values() for p in t.profiles
              if label in t.metric_labels(get_profile(p))]  # fmt: skip
    t = dt.datetime(2026, 1, 1)
    for task, profile in phases or [("", "")]:
        higher = primary_metric_of(task, profile, label)[1] if task else info.higher_is_better
        assert higher == info.higher_is_better, (task, profile, label)
        rows = [(1, 0.25, t, "small"), (2, 4.0, t, "large"), (3, 1.0, t, "middle")]
        expected = ["large", "middle", "small"] if info.direction == "higher" else [
            "small", "middle", "large"]  # fmt: skip
        assert rank(rows, higher) == expected, label


def test_touchdown_comparison_with_a_lower_spd_reports_b_better(tmp_path: Path) -> None:
    """The issue's bug, end to end: B stops on the goal where A stopped two hops away."""
    from tests.tasks.touchdown.fixture import RUNS, make_root, nav

    root = make_root(tmp_path / "root")
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    a = score_run(Scorer("touchdown", "dev", root=root), nav(tmp_path / "a"), label="A")
    better = {**RUNS, 2: ["p0", "p1", "p2", "p5"]}
    b = score_run(Scorer("touchdown", "dev", root=root), nav(tmp_path / "b", better), label="B")
    cmp = compare_scored(a, b, rng=0, n_resamples=200, n_permutations=500)
    assert list(cmp.metrics) == ["TC", "SPD", "SED"]
    assert cmp.metrics["SPD"].difference == pytest.approx(-2 / 3)  # B − A: 2 hops less in one
    rows = {r["metric"]: r for r in cmp.to_dict()["metrics"]}
    assert rows["SPD"]["direction"] == "lower is better" and rows["SPD"]["B_is_better"] is True
    assert rows["TC"]["B_is_better"] is True and rows["SED"]["B_is_better"] is True
    assert "SPD (hops)" in render_comparison(cmp)


@pytest.mark.parametrize(
    ("label", "better", "p_holm", "said"),
    [
        ("SR", True, 0.001, "B better"),
        ("NE", False, 0.001, "B worse"),
        ("TL", True, 0.001, "B higher"),
        ("SR", True, 0.5, "no detectable difference"),
    ],
)
def test_json_verdict_beside_the_direction(
    label: str, better: bool, p_holm: float, said: str
) -> None:
    """``verdict`` reads the Holm p with the direction; ``B_is_better`` stays the direction of
    Δ (a non-significant B_is_better: true says "no detectable difference" beside it)."""
    cmp = _comparison(label, better)
    cmp.metrics[label] = dataclasses.replace(cmp.metrics[label], p_adjusted=p_holm)
    row = cmp.to_dict()["metrics"][0]
    assert row["verdict"] == said
    assert row["B_is_better"] is (None if label == "TL" else better)
    html = comparison_table(cmp)
    shown = {"B higher": "B's TL is higher"}.get(said, said)
    assert shown in html
