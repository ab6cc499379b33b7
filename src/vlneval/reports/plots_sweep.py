"""The sweep plot: each chosen metric by checkpoint, with its interval band and the selected
checkpoint.

x is the checkpoint's step (the last number in its file name, VLN-CE's ``ckpt.{index}.pth``), in
numeric order, ticked at the steps there are; y is the mean over seeds (one seed: the run's
value), in the unit the tables show (``SR (%)``), each seed's own value a small dot. The band is
the seeds' percentile bootstrap intervals (over paths or episodes, as the table resampled): one seed, its interval; several, from
the lowest lower end to the highest upper end. Each run folder is its own line (a legend names
them when there are several), so two runs that both save ``ckpt.10000.pth`` are never joined. A
checkpoint without a number in its name (``latest.pth``) has no step: it is a labelled marker
with its interval at the right edge, past a dotted line, never on the line. The selected
checkpoint the report records (:attr:`~vlneval.distributed.sweep_report.SweepTable.selection`:
the best mean of the first metric by its direction, none with one checkpoint) is marked on every
panel that has its value with a dashed line and a star.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from vlneval.distributed.sweep_report import SweepTable, selected_checkpoint
from vlneval.errors import VLNEvalError
from vlneval.metrics.info import column_name
from vlneval.reports.plots_base import COLORS, RUN_COLORS, new_figure
from vlneval.reports.terminal import level_label

__all__ = ["plot_sweep"]


def plot_sweep(table: SweepTable, metrics: Sequence[str]) -> Any:
    """One panel per metric of ``metrics``: its mean over seeds by checkpoint step (one line per
    run folder), its band, each seed's value, and the checkpoint ``table.selection`` records.

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
    have = list(dict.fromkeys(k for s in table.summary for k in s["metrics"]))
    if not metrics:
        raise VLNEvalError(f"no metric to plot given (the sweep has: {', '.join(have) or 'none'})")
    unknown = [m for m in metrics if m not in have]
    if unknown:
        raise VLNEvalError(
            f"{', '.join(unknown)}: not {'a metric' if len(unknown) == 1 else 'metrics'} of this "
            f"sweep (it has: {', '.join(have) or 'none'})"
        )
    chosen = table.selection
    points = _points(table)
    fig = new_figure(6.4, 0.9 + 1.9 * len(metrics), layout="constrained")
    axes = fig.subplots(len(metrics), 1, squeeze=False, sharex=True)[:, 0]
    for ax, metric in zip(axes, metrics, strict=True):
        _panel(ax, table, metric, points, None if chosen is None else chosen["checkpoint"])
    _ticks(axes[-1], points)
    if len({p.folder for p in points}) > 1:
        axes[0].legend(fontsize=7, loc="best")
    fig.suptitle(f"{', '.join(metrics)} by checkpoint ({table.split}); "
                 f"{_picked(table, metrics[0])}\n{_band(table)}",
                 fontsize=9, x=0.01, ha="left", linespacing=1.5)  # fmt: skip
    return fig


@dataclass
class _Point:
    """One checkpoint: its run folder, its x (its step, or a place at the right edge when its
    name has no number), its summary row and its runs (one per seed)."""

    folder: str
    x: float
    numbered: bool
    row: dict[str, Any]
    runs: list[dict[str, Any]] = field(default_factory=list)


def _points(table: SweepTable) -> list[_Point]:
    """The checkpoints, numbered ones by step, then the unnumbered ones at the right edge."""
    points = []
    for row in table.summary:
        runs = [r for r in table.runs if r["label"] == row["label"]]
        path = runs[0].get("checkpoint", row["label"]) if runs else row["label"]
        name = Path(path).name if path else ""
        folder = Path(path).parent.as_posix() if path else "."
        points.append(_Point(folder, row["step"], bool(re.search("[0-9]", name)), row, runs))
    steps = [p.x for p in points if p.numbered]
    left, right = (min(steps), max(steps)) if steps else (0, 0)
    gap = (right - left) / 8 or 1.0
    loose = [p for p in points if not p.numbered]
    for k, p in enumerate(loose):
        p.x = right + gap * (k + 1) if steps else k
    return sorted([p for p in points if p.numbered], key=lambda p: p.x) + loose


def _panel(
    ax: Any, table: SweepTable, metric: str, points: list[_Point], chosen: str | None
) -> None:
    """The metric's line and band per run folder, the unnumbered checkpoints' markers, the
    selected checkpoint's mark, and each seed's value."""
    unit = table.units.get(metric, "")
    scale = 100.0 if unit == "%" else 1.0
    folders = list(dict.fromkeys(p.folder for p in points))
    for k, folder in enumerate(folders):
        color = RUN_COLORS[k % len(RUN_COLORS)]
        mine = [p for p in points if p.folder == folder]
        line = [p for p in mine if p.numbered]
        x = [p.x for p in line]
        y, low, high = (_values(line, metric, end) * scale for end in ("mean", "low", "high"))
        ax.fill_between(x, low, high, color=color, alpha=0.2, linewidth=0)
        ax.plot(x, y, color=color, marker="o", markersize=4, linewidth=1.5, label=folder)
        loose = [p for p in mine if not p.numbered]
        if loose:
            x = [p.x for p in loose]
            y, low, high = (_values(loose, metric, end) * scale for end in ("mean", "low", "high"))
            ax.vlines(x, low, high, color=color, alpha=0.5, linewidth=4)
            ax.scatter(x, y, color=color, marker="D", s=22, zorder=3)
    if any(not p.numbered for p in points) and any(p.numbered for p in points):
        edge = max(p.x for p in points if p.numbered)
        gap = min(p.x for p in points if not p.numbered) - edge
        ax.axvline(edge + gap / 2, color=COLORS["grid"], linestyle=":", linewidth=1.2)
    star = next((p for p in points if p.row["label"] == chosen), None)
    if star is not None and star.row["metrics"].get(metric, {}).get("mean") is not None:
        ax.axvline(star.x, color=COLORS["neutral"], linestyle="--", linewidth=0.9)
        ax.scatter([star.x], [star.row["metrics"][metric]["mean"] * scale], marker="*", s=140,
                   color=COLORS["success"], zorder=4)  # fmt: skip
    seeds = [(p.x, m["value"] * scale) for p in points for r in p.runs
             if (m := r["metrics"].get(metric)) is not None and m["value"] is not None]  # fmt: skip
    if seeds:
        ax.scatter(*zip(*seeds, strict=True), s=9, color=COLORS["neutral"], alpha=0.6, zorder=3,
                   linewidths=0)  # fmt: skip
    ax.set_ylabel(column_name(metric, unit))
    ax.grid(True, color=COLORS["grid"], linewidth=0.8)
    ax.set_axisbelow(True)


def _values(points: list[_Point], metric: str, end: str) -> np.ndarray:
    """The points' means (``end="mean"``), or their seeds' lowest ``low`` or highest ``high``;
    NaN where there is none."""
    if end == "mean":
        return np.array([p.row["metrics"].get(metric, {}).get("mean", np.nan) for p in points],
                        dtype=float)  # fmt: skip
    out = []
    for p in points:
        ends = [m[end] for r in p.runs
                if (m := r["metrics"].get(metric)) is not None and m[end] is not None]  # fmt: skip
        out.append((min(ends) if end == "low" else max(ends)) if ends else np.nan)
    return np.array(out, dtype=float)


def _ticks(ax: Any, points: list[_Point]) -> None:
    """x ticks at the checkpoints' steps (at most 12 labelled) and at each unnumbered one's
    place, labelled with its name."""
    steps = sorted({p.x for p in points if p.numbered})
    every = -(-len(steps) // 12) or 1
    ticks = [(x, f"{x:g}") for x in steps[::every]]
    ticks += [(p.x, p.row["label"]) for p in points if not p.numbered]
    ax.set_xticks([x for x, _ in ticks], [t for _, t in ticks], fontsize=7)
    ax.set_xlabel("checkpoint step" if steps else "checkpoint")


def _picked(table: SweepTable, metric: str) -> str:
    """The caption's part on the selected checkpoint."""
    chosen = table.selection
    if chosen is not None:
        return f"selected: {chosen['checkpoint']}, the best mean {chosen['metric']}"
    if len(table.summary) < 2:
        return "none selected: one checkpoint"
    if selected_checkpoint(table, metric) is None:
        return f"none selected: {metric} has no better direction"
    return "none selected"


def _band(table: SweepTable) -> str:
    """The caption's part on the band: its coverage and how many seeds it spans."""
    counts = sorted({len(s["seeds"]) for s in table.summary})
    band = f"band: {level_label(table.confidence)} bootstrap interval over {table.resampling}"
    if counts[-1] < 2:
        return band
    seeds = f"{counts[0]}-{counts[-1]}" if len(counts) > 1 else f"{counts[0]}"
    return f"{band}, from the lowest to the highest of {seeds} seeds"
