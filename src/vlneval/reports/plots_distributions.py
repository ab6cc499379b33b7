"""Distributions over episodes, one or several runs overlaid: NE, TL/d*, budgets, outcomes.

Every function takes ``series``: a list of ``(run label, per-episode values)`` pairs, drawn in
the colours of :data:`~vlneval.reports.plots_base.RUN_COLORS` in order.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from vlneval.diagnostics.budget import within_budget
from vlneval.diagnostics.failures import CLASS_LABELS, FAILURE_CLASSES
from vlneval.metrics import MetricInfo
from vlneval.metrics.info import LABELS
from vlneval.reports.plots_base import COLORS, RUN_COLORS, drawable_text, new_figure

__all__ = [
    "plot_error_ecdf",
    "plot_length_ratio",
    "plot_budget_curve",
    "plot_outcomes",
    "OUTCOME_COLORS",
    "OUTCOME_TEXT_COLORS",
]

Series = Sequence[tuple[str, np.ndarray]]
#: Success and failure as in the episode plots; the five stay apart under colour blindness.
OUTCOME_COLORS = {
    "success": COLORS["success"],
    "passed_goal": "#56b4e9",
    "step_limit": "#ced4da",
    "stopped_early": "#f0e442",
    "wandered": COLORS["fail"],
}
#: The same colours as text on the report's white page: the yellow and the light grey, too
#: faint to read there, darkened (the same hues).
OUTCOME_TEXT_COLORS = {
    **OUTCOME_COLORS,
    "step_limit": COLORS["neutral"],
    "stopped_early": "#7a7000",
}


#: A share of episodes is a rate: its axis is in the unit the metric table shows SR in (%), as
#: the report's tables are; the plotted values stay fractions, the tick labels are scaled.
_RATE_UNIT = LABELS["SR"].shown_unit


def _in_percent(axis: Any) -> None:
    """Tick labels of a fraction-valued ``axis`` (``ax.xaxis`` or ``ax.yaxis``) in percent."""
    axis.set_major_formatter(lambda value, _: f"{100 * value:.4g}")


def _legend(fig: Any, ax: Any) -> None:
    """The runs' legend below the axes (labels can be long file names)."""
    handles, labels = ax.get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside lower center", ncols=min(len(labels), 2))


def _inside(ax: Any, x: tuple[float, float], y: tuple[float, float]) -> None:
    """Axis limits ``x`` and ``y`` widened by 2 % (``y`` both ways, ``x`` on the left), so that
    a curve at a limit (SR = 0, every episode within δ, a rise at x = 0) is drawn inside the
    frame, not on it."""
    ax.set_xlim(x[0] - 0.02 * (x[1] - x[0]), x[1])
    ax.set_ylim(y[0] - 0.02 * (y[1] - y[0]), y[1] + 0.02 * (y[1] - y[0]))


def _axes(xlabel: str, ylabel: str, title: str) -> tuple[Any, Any]:
    """A gridded figure of one run-overlay plot, with its axis labels and title."""
    fig = new_figure(5.6, 3.4, layout="constrained")
    ax = fig.subplots()
    ax.grid(True, color=COLORS["grid"], linewidth=0.8)
    ax.set_axisbelow(True)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title, loc="left")
    return fig, ax


def plot_error_ecdf(
    series: Series,
    *,
    threshold: float | None,
    info: MetricInfo = LABELS["NE"],
    x_max: float | None = None,
) -> Any:
    """ECDF of an error metric (NE by default): the share of episodes with an error ``≤ x``.

    The curve's height at δ (``threshold``; none drawn when None) is the success rate (for a
    strict ``NE < δ`` up to ties). An infinite error (unreachable final viewpoint) never
    counts. The x axis ends at ``x_max``: by default 20 for metres, else the largest finite
    value.

    Example:
        >>> fig = plot_error_ecdf([("a", np.array([0.5, 2.0, 7.0, np.inf]))], threshold=3.0)
        >>> fig.axes[0].get_xlabel()
        'navigation error NE (m)'
        >>> fig = plot_error_ecdf([("a", np.array([0, 3, 9]))], threshold=1.0, info=LABELS["SPD"])
        >>> fig.axes[0].get_xlabel(), float(fig.axes[0].get_xlim()[1])
        ('shortest path distance SPD (hops)', 9.0)
    """
    unit = info.shown_unit
    fig, ax = _axes(
        f"{info.name.replace('_', ' ')} {info.label} ({unit})",
        f"share of episodes with {info.label} ≤ x ({_RATE_UNIT})",
        info.description[:1].upper() + info.description[1:],
    )
    top = max((float(np.max(v[np.isfinite(v)], initial=0.0)) for _, v in series), default=0.0)
    end = x_max or (20.0 if info.kind == "distance" else max(top, threshold or 0.0, 1.0))
    for (label, values), color in zip(series, RUN_COLORS, strict=False):
        v = np.sort(np.asarray(values, dtype=np.float64))
        n = v.size
        finite = v[np.isfinite(v)]
        xs = np.concatenate([[0.0], finite, [max(end, finite.max(initial=0.0))]])
        ys = np.concatenate([[0.0], np.arange(1, finite.size + 1) / n, [finite.size / n]])
        ax.step(xs, ys, where="post", color=color, linewidth=1.6, label=label)
    if threshold is not None:
        heights = [float(np.mean(np.asarray(v) <= threshold)) for _, v in series]
        _mark_threshold(ax, threshold, unit, low=max(heights, default=0.0) < 0.8)
    _inside(ax, (0.0, end), (0.0, 1.0))
    _in_percent(ax.yaxis)
    _legend(fig, ax)
    return fig


def _mark_threshold(ax: Any, threshold: float, unit: str, *, low: bool) -> None:
    """δ as a dashed line, labelled near the top when the curves are ``low`` at δ, else near
    the bottom: where no curve runs just right of the line."""
    ax.axvline(threshold, color=COLORS["goal_edge"], linestyle="--", linewidth=1.0)
    unit = unit[:-1] if threshold == 1 and unit.endswith("s") else unit  # 1 hop, 2 hops
    ax.annotate(f"δ = {threshold:g} {unit}", (threshold, 0.97 if low else 0.03),
                xycoords=("data", "axes fraction"), xytext=(4, 0), textcoords="offset points",
                va="top" if low else "bottom", color=COLORS["goal_edge"], fontsize=8,
                bbox={"facecolor": "white", "edgecolor": "none", "alpha": 0.8, "pad": 1})  # fmt: skip


def plot_length_ratio(series: Series, *, cap: float = 4.0) -> Any:
    """Histogram of ``TL / d*`` (path length over the shortest distance), capped at ``cap``.

    Values above ``cap`` are counted in the last bin (labelled ``≥ cap``); ``d* = 0`` episodes
    (NaN ratio) are left out.

    Example:
        >>> fig = plot_length_ratio([("a", np.array([0.0, 1.0, 1.2, 9.0]))])
        >>> fig.axes[0].get_xlabel()
        'path length / shortest distance (TL / d*)'
    """
    fig, ax = _axes(
        "path length / shortest distance (TL / d*)",
        f"share of episodes ({_RATE_UNIT})",
        "How far the agent walks, relative to the shortest route",
    )
    bins = np.arange(0.0, cap + 0.125, 0.125)
    for (label, values), color in zip(series, RUN_COLORS, strict=False):
        v = np.asarray(values, dtype=np.float64)
        v = np.minimum(v[np.isfinite(v)], cap - 1e-9)
        weights = np.full(v.shape, 1.0 / max(v.size, 1))
        ax.hist(v, bins=bins, weights=weights, histtype="step", linewidth=1.6, color=color,
                label=label)  # fmt: skip
    ax.axvline(1.0, color=COLORS["reference"], linestyle="--", linewidth=1.0)
    ax.text(1.0, ax.get_ylim()[1] * 0.92, " shortest route", color=COLORS["reference"], fontsize=8)
    ax.set_xlim(0, cap)
    ticks = np.arange(0, cap + 0.5, 0.5)
    ax.set_xticks(ticks, [f"{t:g}" for t in ticks[:-1]] + [f"≥{cap:g}"])
    _in_percent(ax.yaxis)
    _legend(fig, ax)
    return fig


def plot_budget_curve(
    runs: Sequence[tuple[str, Mapping[str, np.ndarray]]],
    *,
    budgets: Sequence[float] = (),
    b_max: float = 4.0,
) -> Any:
    """Budgeted success ``SR@b`` as the budget ``b`` grows, with each run's SR as a dotted line.

    Args:
        runs: ``(label, {"success", "path_length", "shortest"})`` per run.
        budgets: budgets to mark on the x axis (e.g. the report's table).
        b_max: the largest budget drawn.

    Example:
        >>> cols = {"success": np.array([1.0, 1.0, 0.0]), "path_length": np.array([10.0, 18.0, 4.0]),
        ...         "shortest": np.array([10.0, 10.0, 10.0])}
        >>> fig = plot_budget_curve([("a", cols)], budgets=[1.5])
        >>> fig.axes[0].get_ylabel()
        'SR@b (%): success with TL ≤ b · d*'
    """
    fig, ax = _axes(
        "path-length budget b (multiple of the shortest distance d*)",
        f"SR@b ({_RATE_UNIT}): success with TL ≤ b · d*",
        "Success within a path-length budget",
    )
    grid = np.linspace(1.0, b_max, 121)
    for (label, cols), color in zip(runs, RUN_COLORS, strict=False):
        s, tl, d = cols["success"], cols["path_length"], cols["shortest"]
        curve = [within_budget(s, tl, d, b).mean() for b in grid]
        ax.plot(grid, curve, color=color, linewidth=1.6, label=label)
        ax.axhline(float(np.mean(s)), color=color, linestyle=":", linewidth=1.0)
    for b in budgets:
        ax.axvline(b, color="#ced4da", linewidth=0.8, zorder=0)
    top = max((float(np.mean(cols["success"])) for _, cols in runs), default=1.0)
    _inside(ax, (1.0, b_max), (0.0, min(1.0, 0.1 * np.ceil(10 * top * 1.15 + 0.5))))
    _in_percent(ax.yaxis)
    _legend(fig, ax)
    return fig


def plot_outcomes(runs: Sequence[tuple[str, Mapping[str, float | None]]]) -> Any:
    """One horizontal bar per run, split into the outcome classes' shares.

    Example:
        >>> shares = {"success": 0.5, "passed_goal": 0.1, "step_limit": None,
        ...           "stopped_early": 0.2, "wandered": 0.2}
        >>> fig = plot_outcomes([("a", shares)])
        >>> fig.axes[0].get_xlabel()
        'share of episodes (%)'
    """
    fig = new_figure(7.2, 1.1 + 0.45 * len(runs), layout="constrained")
    ax = fig.subplots()
    labels = [label for label, _ in runs]
    y = np.arange(len(runs))[::-1]
    left = np.zeros(len(runs))
    for name in FAILURE_CLASSES:
        widths = np.array([shares.get(name) or 0.0 for _, shares in runs])
        if not widths.any():
            continue
        ax.barh(y, widths, left=left, color=OUTCOME_COLORS[name], label=CLASS_LABELS[name],
                height=0.6, edgecolor="white", linewidth=0.8)  # fmt: skip
        for yi, w, x0 in zip(y, widths, left, strict=True):
            if w >= 0.06:
                ax.text(x0 + w / 2, yi, f"{100 * w:.0f}%", ha="center", va="center", fontsize=7.5,
                        color="white" if name in ("success", "wandered") else "#212529")  # fmt: skip
        left += widths
    ax.set_yticks(y, [drawable_text(label) for label in labels])  # drawn at savefig, after
    ax.set_xlim(0, 1)
    ax.set_xlabel(f"share of episodes ({_RATE_UNIT})")
    _in_percent(ax.xaxis)
    ax.spines["left"].set_visible(False)
    ax.tick_params(axis="y", length=0)
    fig.legend(loc="outside upper center", ncols=3, fontsize=7.5, handlelength=1.2)
    return fig
