"""The sweep plot: each chosen metric by checkpoint, with its interval band and the selected
checkpoint.

x is the checkpoint's step (the last number in its name, VLN-CE's ``ckpt.{index}.pth``; a name
without one: its place in the plan), in numeric order; y is the mean over seeds (one seed: the
run's value), in the unit the tables show (``SR (%)``). The band is the seeds' percentile
bootstrap intervals over episodes: one seed, its interval; several, from the lowest lower end to
the highest upper end. The selected checkpoint, the best mean of the first metric by its
direction (:func:`~vlneval.distributed.sweep_report.selected_checkpoint`), is marked on every
panel with a dashed line and a star.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from vlneval.distributed.sweep_report import SweepTable, selected_checkpoint
from vlneval.errors import VLNEvalError
from vlneval.metrics.info import column_name
from vlneval.reports.plots_base import COLORS, RUN_COLORS, new_figure

__all__ = ["plot_sweep"]


def plot_sweep(table: SweepTable, metrics: Sequence[str]) -> Any:
    """One panel per metric of ``metrics``: its mean over seeds by checkpoint step, its band, and
    the checkpoint selected by the first metric.

    Raises:
        VLNEvalError: no metric, or one the sweep has no mean of (names those it has).

    Example:
        >>> runs = [{"label": f"ckpt.{s}.pth", "step": s, "seed": 0,
        ...          "metrics": {"SR": {"value": v, "low": v - 0.1, "high": v + 0.1}}}
        ...         for s, v in ((200, 0.4), (100, 0.5))]
        >>> summary = [{"label": r["label"], "step": r["step"], "seeds": [0],
        ...             "metrics": {"SR": {"mean": r["metrics"]["SR"]["value"]}}} for r in runs]
        >>> fig = plot_sweep(SweepTable("val", runs, summary, units={"SR": "%"}), ["SR"])
        >>> line = fig.axes[0].get_lines()[0]
        >>> line.get_xdata().tolist(), line.get_ydata().tolist(), fig.axes[0].get_ylabel()
        ([100, 200], [50.0, 40.0], 'SR (%)')
    """
    have = list(table.summary[0]["metrics"]) if table.summary else []
    unknown = [m for m in metrics if m not in have]
    if not metrics or unknown:
        raise VLNEvalError(
            f"--plot-metrics {' '.join(unknown)}: not a metric of this sweep (it has: "
            f"{', '.join(have) or 'none'})"
        )
    chosen = selected_checkpoint(table, metrics[0])
    fig = new_figure(6.4, 0.9 + 1.9 * len(metrics), layout="constrained")
    axes = fig.subplots(len(metrics), 1, squeeze=False, sharex=True)[:, 0]
    for ax, metric in zip(axes, metrics, strict=True):
        _panel(ax, table, metric, chosen)
    axes[-1].set_xlabel("checkpoint step")
    seeds = max(len(s["seeds"]) for s in table.summary)
    band = f"band: {round(100 * table.confidence)}% bootstrap interval over episodes"
    band += f", from the lowest to the highest of {seeds} seeds" if seeds > 1 else ""
    picked = (
        f"selected: {chosen['label']}, the best mean {metrics[0]}"
        if chosen is not None
        else f"none selected: {metrics[0]} has no better direction"
    )
    fig.suptitle(f"{', '.join(metrics)} by checkpoint ({table.split}); {picked}\n{band}",
                 fontsize=9, x=0.01, ha="left", linespacing=1.5)  # fmt: skip
    return fig


def _panel(ax: Any, table: SweepTable, metric: str, chosen: dict[str, Any] | None) -> None:
    """The metric's line, band and the selected checkpoint's mark."""
    unit = table.units.get(metric, "")
    scale = 100.0 if unit == "%" else 1.0
    rows = sorted(table.summary, key=lambda s: s["step"])
    x = [s["step"] for s in rows]
    y = np.array([s["metrics"].get(metric, {}).get("mean", np.nan) for s in rows]) * scale
    low, high = (np.array([_end(table, s["label"], metric, end) for s in rows]) * scale
                 for end in ("low", "high"))  # fmt: skip
    ax.fill_between(x, low, high, color=RUN_COLORS[0], alpha=0.2, linewidth=0)
    ax.plot(x, y, color=RUN_COLORS[0], marker="o", markersize=4, linewidth=1.5)
    if chosen is not None:
        at = chosen["step"]
        ax.axvline(at, color=COLORS["neutral"], linestyle="--", linewidth=0.9)
        ax.scatter([at], [chosen["metrics"][metric]["mean"] * scale], marker="*", s=140,
                   color=COLORS["success"], zorder=3)  # fmt: skip
    ax.set_ylabel(column_name(metric, unit))
    ax.grid(True, color=COLORS["grid"], linewidth=0.8)
    ax.set_axisbelow(True)


def _end(table: SweepTable, label: str, metric: str, end: str) -> float:
    """The lowest ``low`` (or highest ``high``) of the checkpoint's seeds; NaN without one."""
    ends = [m[end] for r in table.runs if r["label"] == label
            if (m := r["metrics"].get(metric)) is not None and m[end] is not None]  # fmt: skip
    if not ends:
        return float("nan")
    return float(min(ends) if end == "low" else max(ends))
