"""The two-run comparison plot: every metric's paired difference B − A with its interval.

Rates (percentage points), lengths (metres), hops and pixels get separate panels, since they
share no unit. A difference whose Holm-adjusted p-value is below ``1 − confidence`` is drawn
filled, in green when B is better by the metric's direction and red when worse (grey for a
metric with no better direction, such as TL); the others are drawn hollow in grey. The title
(two lines, so that it is never cut) gives the p threshold at every confidence level, and a
legend the colours, in the words of the comparison table's verdicts.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from vlneval.reports.compare import (
    RunComparison,
    b_is_better,
    significance_level,
    significant,
)
from vlneval.reports.plots_base import COLORS, new_figure
from vlneval.reports.terminal import level_label, shown_unit

__all__ = ["plot_comparison"]

#: Axis text of a panel, by shown unit.
_AXIS = {"%": "percentage points", "m": "metres", "px": "pixels"}
#: A difference that is not significant: hollow, in light grey.
_NOT_SIGNIFICANT = "#adb5bd"


def plot_comparison(cmp: RunComparison) -> Any:
    """A forest plot of the paired differences of :class:`~vlneval.reports.compare.RunComparison`.

    Example:
        >>> from vlneval.stats import Comparison
        >>> c = Comparison("SR", 0.6, 0.5, 0.1, 0.05, 0.15, 0.001, "mcnemar-exact", 100, 0.95,
        ...                0.002, "holm")
        >>> cmp = RunComparison("a", "b", {"SR": c}, 100, 0, 0, None)
        >>> fig = plot_comparison(cmp)
        >>> fig.axes[0].get_xlabel()
        'Δ = B − A (percentage points)'
    """
    by_unit: dict[str, list[str]] = {}
    for m in sorted(cmp.metrics, key=lambda m: shown_unit(m) != "%"):  # rates first
        by_unit.setdefault(shown_unit(m), []).append(m)
    panels = list(by_unit.items())
    rows = max(len(names) for _, names in panels) if panels else 1
    fig = new_figure(7.2, 0.9 + 0.34 * rows, layout="constrained")
    ratios = [2.2 if unit == "%" else 1.0 for unit, _ in panels] or [1.0]
    axes = fig.subplots(1, max(len(panels), 1), squeeze=False, width_ratios=ratios)[0]
    for ax, (unit, names) in zip(axes, panels, strict=False):
        _panel(ax, cmp, names, scale=100.0 if unit == "%" else 1.0)
        ax.set_xlabel(f"Δ = B − A ({_AXIS.get(unit, unit or 'value')})")
    confidence = next(iter(cmp.metrics.values())).confidence if cmp.metrics else 0.95
    k, paths = cmp.settings.get("n_scans"), cmp.settings.get("n_paths")
    what = f"{cmp.n_paired} episodes" + ("" if k is None else f", {k} scans resampled")
    what += "" if k is not None or paths is None else f", {paths} paths resampled"
    fig.suptitle(
        f"Paired differences B − A with {level_label(confidence)} bootstrap intervals ({what})\n"
        f"filled: Holm-adjusted p < {significance_level(confidence):g}; better or worse by each metric's direction",
        fontsize=9,
        x=0.01,
        ha="left",
        linespacing=1.5,
    )
    fig.legend(handles=_key(), loc="outside lower center", ncols=4, fontsize=7.5)
    return fig


def _key() -> list[Any]:
    """The colour key, in the words of the comparison table's verdicts."""
    from matplotlib.lines import Line2D  # deferred: matplotlib

    marks = [("B better", COLORS["success"]), ("B worse", COLORS["fail"]),
             ("B higher or lower (no better direction)", COLORS["neutral"]),
             ("no detectable difference", _NOT_SIGNIFICANT)]  # fmt: skip
    return [
        Line2D([], [], color=c, linewidth=2.2, marker="o", markersize=6, markeredgewidth=1.5,
               markerfacecolor="white" if c == _NOT_SIGNIFICANT else c, label=label)
        for label, c in marks
    ]  # fmt: skip


def _panel(ax: Any, cmp: RunComparison, names: list[str], *, scale: float) -> None:
    y = np.arange(len(names))[::-1]
    for yi, name in zip(y, names, strict=True):
        c = cmp.metrics[name]
        sig = significant(c)
        better = b_is_better(name, c)
        if not sig or better is None:
            color = COLORS["neutral"] if sig else _NOT_SIGNIFICANT
        else:
            color = COLORS["success"] if better else COLORS["fail"]
        ax.plot([c.ci_low * scale, c.ci_high * scale], [yi, yi], color=color, linewidth=2.2,
                solid_capstyle="butt")  # fmt: skip
        ax.scatter([c.difference * scale], [yi], s=38, zorder=3, color=color if sig else "white",
                   edgecolors=color, linewidths=1.5)  # fmt: skip
    ax.axvline(0.0, color="#495057", linewidth=0.8)
    ax.set_yticks(y, names)
    ax.tick_params(axis="y", length=0)
    ax.spines["left"].set_visible(False)
    ax.grid(True, axis="x", color=COLORS["grid"], linewidth=0.8)
    ax.set_axisbelow(True)
    lo = min(min(cmp.metrics[n].ci_low for n in names) * scale, 0.0)
    hi = max(max(cmp.metrics[n].ci_high for n in names) * scale, 0.0)
    pad = 0.08 * max(hi - lo, 1e-9)
    ax.set_xlim(lo - pad, hi + pad)
    ax.set_ylim(-0.6, len(names) - 0.4)
