"""Plots: what each one draws (from the figure's artists), lazy import, missing matplotlib."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from tests.reports.house import REFERENCES
from vlneval.diagnostics import ScoredRun, diagnose
from vlneval.distributed.sweep_report import SweepTable, selection
from vlneval.errors import VLNEvalError
from vlneval.reports import plots_base
from vlneval.reports.compare import compare_scored
from vlneval.reports.plots_base import COLORS, RUN_COLORS, figure_png
from vlneval.reports.plots_compare import plot_comparison
from vlneval.reports.plots_distributions import (
    plot_budget_curve,
    plot_error_ecdf,
    plot_length_ratio,
    plot_outcomes,
)
from vlneval.reports.plots_sweep import plot_sweep
from vlneval.reports.plots_trajectory import plot_episode


def _episode(run: ScoredRun, eid: str):  # type: ignore[no-untyped-def]
    assert run.graphs is not None
    g = run.graphs.graph("house")
    k = run.episode_ids.index(eid)
    ref = [g.index[v] for v in REFERENCES[int(eid.split("_")[0])]]
    fig = plot_episode(
        g, reference=ref, trajectory=run.trajectory(k), goals=[ref[-1]], threshold=3.0,
        success=bool(run.evaluation.per_episode["success"][k]), title=eid,
    )  # fmt: skip
    return g, fig


def _segments(ax, color: str) -> list[np.ndarray]:  # type: ignore[no-untyped-def]
    from matplotlib.colors import to_hex

    out = []
    for c in ax.collections:
        if hasattr(c, "get_segments") and to_hex(c.get_colors()[0]) == color:
            out += c.get_segments()
    return out


def _within(ax):  # type: ignore[no-untyped-def]
    """The marks of the viewpoints within δ of a goal (ringed discs)."""
    return [line for line in ax.get_lines() if line.get_marker() == "o"]


def test_episode_on_one_floor(runs: tuple[ScoredRun, ScoredRun]) -> None:
    g, fig = _episode(runs[0], "2_0")
    (ax,) = fig.axes
    assert ax.get_title() == "floor 1 of 2 (elevation +0.0 m)"
    executed = _segments(ax, COLORS["executed"])
    assert len(executed) == 4  # F0-F1-F2-F3-F4
    assert [tuple(s[1]) for s in executed] == [(4.0 * k, 0.0) for k in range(1, 5)]
    assert len(_segments(ax, COLORS["reference"])) == 3
    # the goal F3 is the only viewpoint within δ = 3 m (its neighbours are 4 m away)
    assert [line.get_xydata().tolist() for line in _within(ax)] == [[[12.0, 0.0]]]
    legend = [t.get_text() for t in fig.legends[0].get_texts()]
    assert legend == [
        "reference path", "executed path", "goal", "within δ = 3 m (geodesic)", "start",
        "stop",
    ]  # fmt: skip
    assert fig._suptitle.get_text() == "2_0"


def test_episode_across_floors_gets_a_panel_per_floor(runs: tuple[ScoredRun, ScoredRun]) -> None:
    _, fig = _episode(runs[0], "5_0")
    titles = [ax.get_title() for ax in fig.axes]
    assert titles == ["floor 1 of 2 (elevation +0.0 m)", "floor 2 of 2 (elevation +3.0 m)"]
    lower, upper = fig.axes
    # F4-F5-S on the lower floor; U0-U1 on the upper; S-U0 crosses (dashed, labelled)
    assert len(_segments(lower, COLORS["executed"])) == 3
    assert len(_segments(upper, COLORS["executed"])) == 2
    assert [t.get_text() for t in lower.texts] == ["to floor 2", "to floor 2"]
    assert [t.get_text() for t in upper.texts] == ["to floor 1", "to floor 1"]


def test_png_bytes_are_reproducible(runs: tuple[ScoredRun, ScoredRun]) -> None:
    one = figure_png(_episode(runs[0], "4_0")[1])
    two = figure_png(_episode(runs[0], "4_0")[1])
    assert one == two and one.startswith(b"\x89PNG")


def test_distribution_and_comparison_plots(runs: tuple[ScoredRun, ScoredRun]) -> None:
    a, b = runs
    da, db = diagnose(a, n_resamples=50), diagnose(b, n_resamples=50)
    ne = [
        ("A", a.evaluation.per_episode["nav_error"]),
        ("B", b.evaluation.per_episode["nav_error"]),
    ]
    fig = plot_error_ecdf(ne, threshold=3.0)
    lines = fig.axes[0].get_lines()
    # run A: NE = 0, 4, 12, 20, 0, 8 -> the ECDF is 2/6 at 0 and 6/6 from 20 on
    ys = lines[0].get_ydata()
    assert ys[1] == pytest.approx(1 / 6) and ys[2] == pytest.approx(2 / 6) and ys[-1] == 1.0
    assert [t.get_text() for t in fig.legends[0].get_texts()] == ["A", "B"]
    assert figure_png(plot_length_ratio([("A", da.ratio), ("B", db.ratio)])).startswith(b"\x89PNG")
    cols = {"success": a.evaluation.per_episode["success"],
            "path_length": a.evaluation.per_episode["path_length"], "shortest": da.context.shortest}  # fmt: skip
    curve = plot_budget_curve([("A", cols)])
    assert curve.axes[0].get_lines()[0].get_ydata()[0] == pytest.approx(2 / 6)
    assert da.failures is not None
    bars = plot_outcomes([("A", da.failures.shares)])
    assert [t.get_text() for t in bars.axes[0].texts] == ["33%", "17%", "33%", "17%"]
    cmp = compare_scored(a, b, n_resamples=100)
    forest = plot_comparison(cmp)
    assert [t.get_text() for t in forest.axes[0].get_yticklabels()] == [
        "OSR", "SR", "SPL", "nDTW", "sDTW", "CLS",
    ]  # fmt: skip
    assert [t.get_text() for t in forest.axes[1].get_yticklabels()] == ["TL", "NE"]


def test_plots_import_matplotlib_lazily() -> None:
    code = (
        "import sys, vlneval.reports.plots_compare, vlneval.reports.plots_distributions, "
        "vlneval.reports.plots_trajectory, vlneval.reports.plots_sweep, vlneval.reports.html, "
        "vlneval.cli.main; "
        "print('matplotlib' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_missing_matplotlib_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    with pytest.raises(VLNEvalError, match=r"pip install 'vlneval\[plots\]'"):
        plots_base.require_matplotlib()


def test_episode_with_a_baseline_path(runs: tuple[ScoredRun, ScoredRun]) -> None:
    a, b = runs
    assert b.graphs is not None
    g = b.graphs.graph("house")
    k = b.episode_ids.index("3_0")
    ref = [g.index[v] for v in REFERENCES[3]]
    fig = plot_episode(
        g, reference=ref, trajectory=b.trajectory(k), goals=[ref[-1]], threshold=3.0,
        baseline=a.trajectory(k), labels=("B path", "A path"),
    )  # fmt: skip
    ax = fig.axes[0]
    # A in the first run colour, B in the second, as in the report's ECDF and histograms
    assert len(_segments(ax, RUN_COLORS[0])) == 1  # A: F0-F1
    assert len(_segments(ax, RUN_COLORS[1])) == 4  # B: F0..F4
    legend = [t.get_text() for t in fig.legends[0].get_texts()]
    assert legend[:4] == ["reference path", "B path", "A path", "goal"]


def test_goal_and_stops_never_take_a_run_colour(runs: tuple[ScoredRun, ScoredRun]) -> None:
    # The goal star and the goal circle's rim were run A's orange, like A's stop cross.
    from matplotlib.collections import PathCollection
    from matplotlib.colors import to_hex

    a, b = runs
    assert b.graphs is not None
    g = b.graphs.graph("house")
    k = b.episode_ids.index("3_0")
    ref = [g.index[v] for v in REFERENCES[3]]
    fig = plot_episode(
        g, reference=ref, trajectory=b.trajectory(k), goals=[ref[-1]], threshold=3.0,
        baseline=a.trajectory(k), success=False,
    )  # fmt: skip
    ax = fig.axes[0]
    (within,) = _within(ax)
    marks = {(c.get_zorder(), to_hex(c.get_facecolor()[0])) for c in ax.collections
             if isinstance(c, PathCollection) and c.get_zorder() > 2}  # fmt: skip
    # the goal star (6), the start disc (8), A's stop above it (8.5), B's stop, a failure (9)
    assert marks == {(6, "#212529"), (8, "#ffffff"), (8.5, RUN_COLORS[0]), (9, COLORS["fail"])}
    goal = {to_hex(within.get_markerfacecolor()), to_hex(within.get_markeredgecolor()), "#212529"}
    assert goal == {COLORS["goal_fill"], COLORS["goal_edge"]}
    assert not goal & {*RUN_COLORS, COLORS["success"], COLORS["fail"], COLORS["reference"]}
    handles = dict(zip([t.get_text() for t in fig.legends[0].get_texts()],
                       fig.legends[0].legend_handles, strict=True))  # fmt: skip
    assert (handles["goal"].get_marker(), handles["goal"].get_color()) == ("*", "#212529")


def test_run_b_keeps_its_colour_on_an_episode_without_a_baseline_path(
    runs: tuple[ScoredRun, ScoredRun],
) -> None:
    _, b = runs
    assert b.graphs is not None
    g = b.graphs.graph("house")
    k = b.episode_ids.index("3_0")
    ref = [g.index[v] for v in REFERENCES[3]]
    fig = plot_episode(g, reference=ref, trajectory=b.trajectory(k), goals=[ref[-1]],
                       threshold=3.0, compared=True)  # fmt: skip
    assert len(_segments(fig.axes[0], RUN_COLORS[1])) == 4
    assert _segments(fig.axes[0], RUN_COLORS[0]) == []


def test_goal_threshold_in_the_error_plot_is_the_goal_colour_not_a_run_colour() -> None:
    fig = plot_error_ecdf([("A", np.array([1.0, 5.0])), ("B", np.array([2.0, 4.0]))], threshold=3.0)
    lines = fig.axes[0].get_lines()
    assert [line.get_color() for line in lines[:2]] == list(RUN_COLORS[:2])
    assert lines[-1].get_color() == COLORS["goal_edge"] not in RUN_COLORS


def _toy(positions: dict[str, tuple[float, float, float]], edges: list[tuple[str, str]]):  # type: ignore[no-untyped-def]
    from tests.fixtures import connectivity
    from vlneval.graph.matterport import parse_connectivity

    return parse_connectivity(connectivity(positions, edges), scan="toy")


def test_goal_region_is_the_viewpoints_within_geodesic_delta_not_a_disc() -> None:
    # W is 2 m from the goal G as the crow flies but 4 + 4 + 2 = 10 m along the graph (behind
    # a wall): a stop at W fails, so W is not marked; N, 2 m along an edge, is.
    g = _toy(
        {"S": (0.0, 4.0, 1.5), "W": (0.0, 2.0, 1.5), "G": (0.0, 0.0, 1.5), "N": (2.0, 0.0, 1.5),
         "E": (4.0, 4.0, 1.5)},
        [("S", "W"), ("S", "E"), ("E", "N"), ("N", "G")],
    )  # fmt: skip
    i = g.index
    fig = plot_episode(g, reference=[i["S"], i["E"], i["N"], i["G"]],
                       trajectory=[i["S"], i["W"]], goals=[i["G"]], threshold=3.0, success=False)  # fmt: skip
    ax = fig.axes[0]
    (within,) = _within(ax)
    assert sorted(map(tuple, within.get_xydata().tolist())) == [(0.0, 0.0), (2.0, 0.0)]
    assert not [p for p in ax.patches if hasattr(p, "get_radius")]  # no Euclidean disc
    texts = [t.get_text() for t in fig.legends[0].get_texts()]
    assert "within δ = 3 m (geodesic)" in texts and "goal region (δ = 3 m)" not in texts


def _crosses(ax, color: str) -> list[tuple[float, float]]:  # type: ignore[no-untyped-def]
    from matplotlib.collections import PathCollection
    from matplotlib.colors import to_hex

    return [tuple(c.get_offsets()[0].tolist()) for c in ax.collections
            if isinstance(c, PathCollection) and c.get_zorder() == 8.5
            and to_hex(c.get_facecolor()[0]) == color]  # fmt: skip


def test_baseline_stop_is_drawn_after_a_last_move_to_another_floor_or_no_move(
    runs: tuple[ScoredRun, ScoredRun],
) -> None:
    _, b = runs
    assert b.graphs is not None
    g = b.graphs.graph("house")
    k = b.episode_ids.index("5_0")
    ref = [g.index[v] for v in REFERENCES[5]]
    up = [g.index[v] for v in ("F4", "F5", "S", "U0")]  # its last move, S-U0, goes upstairs
    fig = plot_episode(g, reference=ref, trajectory=b.trajectory(k), goals=[ref[-1]],
                       threshold=3.0, baseline=up)  # fmt: skip
    lower, upper = fig.axes
    assert _crosses(lower, RUN_COLORS[0]) == []
    assert _crosses(upper, RUN_COLORS[0]) == [(20.0, 4.0)]  # A's stop, U0
    still = plot_episode(g, reference=ref, trajectory=b.trajectory(k), goals=[ref[-1]],
                         threshold=3.0, baseline=[g.index["F4"]])  # fmt: skip
    assert _crosses(still.axes[0], RUN_COLORS[0]) == [(16.0, 0.0)]  # A never moved: F4
    (start,) = [c for c in still.axes[0].collections if c.get_zorder() == 8]  # B's start, F4
    assert tuple(start.get_offsets()[0].tolist()) == (16.0, 0.0)  # A's cross is drawn above it


def test_a_jump_is_drawn_dash_dotted_labelled_and_in_the_legend(
    runs: tuple[ScoredRun, ScoredRun],
) -> None:
    from matplotlib.colors import to_hex

    a, _ = runs
    assert a.graphs is not None
    g = a.graphs.graph("house")
    i = g.index
    # F0-F1 is an edge; F1-F4 and F4-U3 (to the upper floor) are jumps: no edge joins them
    traj = [i["F0"], i["F1"], i["F4"], i["U3"]]
    fig = plot_episode(g, reference=[i[v] for v in REFERENCES[3]], trajectory=traj,
                       goals=[i["F4"]], threshold=3.0)  # fmt: skip
    lower, upper = fig.axes
    styles = {}
    for c in lower.collections:
        if hasattr(c, "get_segments") and to_hex(c.get_colors()[0]) == COLORS["executed"]:
            for seg in c.get_segments():
                styles[tuple(map(tuple, seg.tolist()))] = c.get_linestyle()[0][1]
    assert styles[((0.0, 0.0), (4.0, 0.0))] is None  # an edge: solid
    assert len(styles[((4.0, 0.0), (16.0, 0.0))]) == 4  # a jump: dash, gap, dot, gap
    assert len(styles[((16.0, 0.0), (8.0, 4.0))]) == 4
    assert [t.get_text() for t in lower.texts] == ["jump to floor 2", "jump"]
    assert [t.get_text() for t in upper.texts] == ["jump to floor 1"]
    assert fig.legends[0].get_texts()[-1].get_text() == "jump (no edge)"
    plain = plot_episode(g, reference=traj[:2], trajectory=traj[:2], goals=[i["F1"]], threshold=3.0)
    assert "jump (no edge)" not in [t.get_text() for t in plain.legends[0].get_texts()]


def test_forest_plot_title_keeps_its_key_at_any_confidence_and_has_a_colour_legend() -> None:
    from vlneval.reports.compare import RunComparison
    from vlneval.stats import Comparison

    def c(label: str, diff: float, p: float) -> Comparison:
        return Comparison(label, 0.5 + diff, 0.5, diff, diff - 0.05, diff + 0.05, p,
                          "paired-bootstrap", 12345, 0.9, p, "holm")  # fmt: skip

    metrics = {"SR": c("SR", 0.1, 0.001), "NE": c("NE", 0.2, 0.5)}
    cmp = RunComparison("a", "b", metrics, 12345, 0, 0, None, settings={"n_scans": 11})
    fig = plot_comparison(cmp)
    assert fig._suptitle.get_text() == (
        "Paired differences B − A with 90% bootstrap intervals (12345 episodes, 11 scans "
        "resampled)\nfilled: Holm-adjusted p < 0.1; better or worse by each metric's direction"
    )
    assert [t.get_text() for t in fig.legends[0].get_texts()] == [
        "B better", "B worse", "B higher or lower (no better direction)", "no detectable difference",
    ]  # fmt: skip
    fig.canvas.draw()  # the title fits the figure: its right edge is inside it
    box = fig._suptitle.get_window_extent()
    assert box.x1 <= fig.bbox.x1


def test_threshold_label_is_singular_and_sits_where_no_curve_runs() -> None:
    from vlneval.metrics.info import LABELS

    spd = np.arange(50.0)  # a random walker: 2 % of episodes within 1 hop
    fig = plot_error_ecdf([("td", spd)], threshold=1.0, info=LABELS["SPD"])
    (label,) = fig.axes[0].texts
    assert (label.get_text(), label.xy, label.get_va()) == ("δ = 1 hop", (1.0, 0.97), "top")
    fig = plot_error_ecdf([("oracle", np.zeros(5))], threshold=3.0)  # every curve at 1 by δ
    (label,) = fig.axes[0].texts
    assert (label.get_text(), label.xy, label.get_va()) == ("δ = 3 m", (3.0, 0.03), "bottom")
    two = plot_error_ecdf([("a", spd)], threshold=2.0, info=LABELS["SPD"]).axes[0].texts[0]
    assert two.get_text() == "δ = 2 hops"


def test_curves_at_zero_or_one_are_drawn_inside_the_frame() -> None:
    # An oracle (NE = 0, SR@b = 1) and a stop agent (SR@b = 0): the curves lie on y = 1 and
    # y = 0, which must not coincide with the frame.
    ecdf = plot_error_ecdf([("oracle", np.zeros(4))], threshold=3.0).axes[0]
    assert ecdf.get_ylim() == pytest.approx((-0.02, 1.02))
    assert ecdf.get_xlim() == pytest.approx((-0.4, 20.0))  # the rise at x = 0 is off the spine
    ones, zeros = np.ones(4), np.zeros(4)
    cols = {"success": ones, "path_length": np.full(4, 10.0), "shortest": np.full(4, 10.0)}
    full = plot_budget_curve([("oracle", cols)]).axes[0]
    assert full.get_ylim() == pytest.approx((-0.02, 1.02))
    assert list(full.get_lines()[0].get_ydata()[:2]) == [1.0, 1.0]
    stop = plot_budget_curve([("stop", {**cols, "success": zeros})]).axes[0]
    assert stop.get_ylim() == pytest.approx((-0.002, 0.102))
    assert full.get_xlim() == pytest.approx((0.94, 4.0))


def test_shares_and_rates_are_in_percent_as_in_the_tables() -> None:
    def ticks(axis, values=(0.0, 0.05, 0.2, 1.0)) -> list[str]:  # type: ignore[no-untyped-def]
        return [axis.get_major_formatter()(v, 0) for v in values]

    ecdf = plot_error_ecdf([("a", np.array([0.5, 2.0, 7.0]))], threshold=3.0).axes[0]
    assert ecdf.get_ylabel() == "share of episodes with NE ≤ x (%)"
    assert ticks(ecdf.yaxis) == ["0", "5", "20", "100"]
    assert ecdf.get_lines()[0].get_ydata()[1] == pytest.approx(1 / 3)  # the data stay fractions
    cols = {"success": np.array([1.0, 0.0, 0.0, 0.0]), "path_length": np.full(4, 10.0),
            "shortest": np.full(4, 10.0)}  # fmt: skip
    budget = plot_budget_curve([("a", cols)]).axes[0]
    assert budget.get_ylabel() == "SR@b (%): success with TL ≤ b · d*"
    assert ticks(budget.yaxis) == ["0", "5", "20", "100"]
    ratio = plot_length_ratio([("a", np.array([1.0, 1.5]))]).axes[0]
    assert (ratio.get_ylabel(), ticks(ratio.yaxis)) == (
        "share of episodes (%)",
        ["0", "5", "20", "100"],
    )
    bars = plot_outcomes([("a", {"success": 0.25, "wandered": 0.75})]).axes[0]
    assert (bars.get_xlabel(), ticks(bars.xaxis)) == (
        "share of episodes (%)",
        ["0", "5", "20", "100"],
    )


def test_characters_no_font_has_are_drawn_as_question_marks_without_warnings(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import warnings

    # As on a machine with DejaVu Sans only: no CJK glyphs (a CJK font would draw them).
    monkeypatch.setattr(plots_base, "_drawable", lambda: frozenset(map(ord, "abδ≤_ -")))
    name = "模型_基线"
    shares = {"success": 0.5, "wandered": 0.5}
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # "Glyph … missing from font(s)" was one per character
        ecdf = plot_error_ecdf([(name, np.array([1.0, 4.0]))], threshold=3.0)
        figure_png(ecdf)
        bars = plot_outcomes([(name, shares)])
        figure_png(bars)
    assert [t.get_text() for t in ecdf.legends[0].get_texts()] == ["??_??"]
    assert [t.get_text() for t in bars.axes[0].get_yticklabels()] == ["??_??"]
    assert plots_base.drawable_text("a\nδ≤b") == "a\nδ≤b"


def _sweep_table(select: str = "SR") -> SweepTable:
    """Three checkpoints (listed out of step order), two seeds each; SR a rate, NE in metres;
    the checkpoint ``select`` selects recorded, as the sweep report records it."""
    runs: list[dict[str, Any]] = []
    summary: list[dict[str, Any]] = []
    for step, srs, nes in ((20, (0.5, 0.7), (4.0, 3.0)), (100, (0.25, 0.25), (6.0, 5.0)),
                           (3, (0.5, 0.5), (5.0, 5.0))):  # fmt: skip
        label = f"ckpt_{step}.pth"
        for seed, (sr, ne) in enumerate(zip(srs, nes, strict=True)):
            runs.append({"label": label, "step": step, "seed": seed, "metrics": {
                "SR": {"value": sr, "low": sr - 0.125, "high": sr + 0.125},
                "NE": {"value": ne, "low": ne - 1.0, "high": ne + 1.5}}})  # fmt: skip
        summary.append({"label": label, "step": step, "seeds": [0, 1], "metrics": {
            "SR": {"mean": sum(srs) / 2, "std": 0.1}, "NE": {"mean": sum(nes) / 2, "std": 0.5}}})  # fmt: skip
    table = SweepTable("val_unseen", runs, summary, units={"SR": "%", "NE": "m"})
    table.selection = selection(table, select)
    return table


def test_sweep_plot_draws_each_metric_by_step_with_its_band_and_the_selected_checkpoint(
    tmp_path: Path,
) -> None:
    fig = plot_sweep(_sweep_table(), ["SR", "NE"])
    sr_ax, ne_ax = fig.axes
    assert [ax.get_ylabel() for ax in fig.axes] == ["SR (%)", "NE (m)"]
    assert ne_ax.get_xlabel() == "checkpoint step"
    line, selected = sr_ax.get_lines()  # the means, then the dashed line at the selected step
    assert line.get_xdata().tolist() == [3, 20, 100]  # numeric order
    assert line.get_ydata().tolist() == [50.0, 60.0, 25.0]  # percent, as the tables show
    assert selected.get_xdata() == [20, 20] and selected.get_linestyle() == "--"
    (band,) = sr_ax.collections[:1]  # lowest low to highest high of the two seeds
    vertices = {tuple(v) for v in band.get_paths()[0].vertices.tolist()}
    assert {(3, 37.5), (20, 37.5), (100, 12.5), (3, 62.5), (20, 82.5), (100, 37.5)} <= vertices
    star = ne_ax.collections[1]  # SR's best checkpoint, marked on NE's panel too
    assert star.get_offsets().tolist() == [[20.0, 3.5]]
    assert ne_ax.get_lines()[0].get_ydata().tolist() == [5.0, 3.5, 5.5]
    assert fig.texts[0].get_text() == (
        "SR, NE by checkpoint (val_unseen); selected: ckpt_20.pth, the best mean SR\n"
        "band: 95% bootstrap interval over episodes, from the lowest to the highest of 2 seeds"
    )
    out = tmp_path / "sweep.png"
    out.write_bytes(figure_png(fig))
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_sweep_plot_selects_by_direction_and_refuses_a_metric_it_lacks() -> None:
    fig = plot_sweep(_sweep_table("NE"), ["NE"])  # lower is better: ckpt_20 (3.5 m)
    assert fig.axes[0].collections[1].get_offsets().tolist() == [[20.0, 3.5]]
    with pytest.raises(VLNEvalError) as exc:
        plot_sweep(_sweep_table(), ["SPL", "NE"])
    assert str(exc.value) == "SPL: not a metric of this sweep (it has: SR, NE)"


def _checkpoints(*rows: tuple[str, int, dict[str, list[float]]]) -> SweepTable:
    """A sweep of ``(checkpoint path, step, metric -> one value per seed)`` rows; each seed's
    interval is its value ± 0.1; the checkpoint SR selects recorded, as the report records it."""
    from vlneval.distributed.sweep import checkpoint_label

    runs: list[dict[str, Any]] = []
    summary: list[dict[str, Any]] = []
    taken: set[str] = set()
    for path, step, values in rows:
        label = checkpoint_label(path, taken)
        n = len(next(iter(values.values())))
        for seed in range(n):
            runs.append({"checkpoint": path, "label": label, "step": step, "seed": seed,
                         "metrics": {k: {"value": v[seed], "low": v[seed] - 0.1,
                                         "high": v[seed] + 0.1} for k, v in values.items()}})  # fmt: skip
        summary.append({"label": label, "step": step, "seeds": list(range(n)),
                        "metrics": {k: {"mean": sum(v) / n} for k, v in values.items()}})  # fmt: skip
    table = SweepTable("val", runs, summary, units={"SR": "%", "NE": "m"})
    table.selection = selection(table, "SR")
    return table


def test_a_checkpoint_without_a_number_is_a_labelled_marker_off_the_line() -> None:
    """``latest.pth`` (step 1: its place in the plan) is not joined into the curve at x=1."""
    table = _checkpoints(("r2r/ckpt_2.pth", 2, {"SR": [0.25]}),
                         ("r2r/latest.pth", 1, {"SR": [0.75]}),
                         ("r2r/ckpt_100.pth", 100, {"SR": [0.5]}))  # fmt: skip
    ax = plot_sweep(table, ["SR"]).axes[0]
    curve, edge, selected = ax.get_lines()
    assert curve.get_xdata().tolist() == [2, 100] and curve.get_ydata().tolist() == [25.0, 50.0]
    assert edge.get_xdata() == [106.125, 106.125] and edge.get_linestyle() == ":"
    assert selected.get_xdata() == [112.25, 112.25]  # latest is the best: starred where it is
    _, interval, marker, star, seeds = ax.collections  # the band first
    assert interval.get_segments()[0].tolist() == [[112.25, 65.0], [112.25, 85.0]]
    assert marker.get_offsets().tolist() == star.get_offsets().tolist() == [[112.25, 75.0]]
    assert seeds.get_offsets().tolist() == [[2, 25], [100, 50], [112.25, 75]]
    assert [(t.get_position()[0], t.get_text()) for t in ax.get_xticklabels()] == [
        (2.0, "2"), (100.0, "100"), (112.25, "latest.pth"),
    ]  # fmt: skip


def test_two_runs_with_the_same_steps_are_two_lines_with_a_legend() -> None:
    table = _checkpoints(("run_a/ckpt.5000.pth", 5000, {"SR": [0.25]}),
                         ("run_a/ckpt.10000.pth", 10000, {"SR": [0.5]}),
                         ("run_b/ckpt.10000.pth", 10000, {"SR": [0.75]}))  # fmt: skip
    ax = plot_sweep(table, ["SR"]).axes[0]
    a, b, _ = ax.get_lines()
    assert (a.get_xdata().tolist(), a.get_ydata().tolist()) == ([5000, 10000], [25.0, 50.0])
    assert (b.get_xdata().tolist(), b.get_ydata().tolist()) == ([10000], [75.0])
    assert a.get_color() == RUN_COLORS[0] and b.get_color() == RUN_COLORS[1]
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["run_a", "run_b"]
    assert [t.get_text() for t in ax.get_xticklabels()] == ["5000", "10000"]


def test_a_panel_whose_metric_the_selected_checkpoint_lacks_has_no_star() -> None:
    table = _checkpoints(("c/ckpt_1.pth", 1, {"SR": [0.75]}),
                         ("c/ckpt_2.pth", 2, {"SR": [0.25], "NE": [3.0]}))  # fmt: skip
    fig = plot_sweep(table, ["SR", "NE"])  # ckpt_1 is selected; it has no NE
    sr, ne = fig.axes
    assert ne.get_lines()[0].get_ydata().tolist()[1] == 3.0 and len(ne.get_lines()) == 1
    assert [c.get_offsets().tolist() for c in ne.collections[1:]] == [[[2.0, 3.0]]]  # the seed
    assert sr.collections[1].get_offsets().tolist() == [[1.0, 75.0]]  # the star


def test_one_checkpoint_is_not_marked_selected_as_the_report_selects_none() -> None:
    table = _checkpoints(("c/ckpt_1.pth", 1, {"SR": [0.75]}))
    assert table.selection is None
    fig = plot_sweep(table, ["SR"])
    assert len(fig.axes[0].get_lines()) == 1  # the means only: no dashed line
    assert [c.get_offsets().tolist() for c in fig.axes[0].collections[1:]] == [[[1.0, 75.0]]]
    assert fig.texts[0].get_text().splitlines()[0] == (
        "SR by checkpoint (val); none selected: one checkpoint"
    )


def test_sweep_plot_refuses_no_metric_without_naming_a_flag() -> None:
    with pytest.raises(VLNEvalError) as exc:
        plot_sweep(_sweep_table(), [])
    assert str(exc.value) == "no metric to plot given (the sweep has: SR, NE)"
    with pytest.raises(VLNEvalError) as exc:
        plot_sweep(_sweep_table(), ["SPL", "RGS"])
    assert str(exc.value) == "SPL, RGS: not metrics of this sweep (it has: SR, NE)"


def test_sweep_caption_keeps_the_coverage_digits_and_the_range_of_seeds() -> None:
    table = _checkpoints(("c/ckpt_1.pth", 1, {"SR": [0.5, 0.25]}),
                         ("c/ckpt_2.pth", 2, {"SR": [0.5, 0.25, 0.75]}))  # fmt: skip
    table.confidence = 0.975
    fig = plot_sweep(table, ["SR"])
    assert fig.texts[0].get_text().splitlines()[1] == (
        "band: 97.5% bootstrap interval over episodes, from the lowest to the highest of 2-3 seeds"
    )
    seeds = fig.axes[0].collections[2]  # after the band and the star: every seed's value
    assert seeds.get_offsets().tolist() == [[1, 50], [1, 25], [2, 50], [2, 25], [2, 75]]
    assert [t.get_text() for t in fig.axes[0].get_xticklabels()] == ["1", "2"]


def test_sweep_caption_names_the_unit_the_intervals_resampled() -> None:
    """A sweep resampled by path says so; the band is not over episodes then."""
    table = _checkpoints(("c/ckpt_1.pth", 1, {"SR": [0.5]}), ("c/ckpt_2.pth", 2, {"SR": [0.25]}))
    table.resampling = "paths"
    caption = plot_sweep(table, ["SR"]).texts[0].get_text().splitlines()[1]
    assert caption == "band: 95% bootstrap interval over paths"
