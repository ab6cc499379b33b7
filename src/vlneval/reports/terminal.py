"""The terminal table of a summary (rich): metrics, profile, checks and warnings."""

from __future__ import annotations

import io
from typing import Any

from vlneval.metrics.info import LABELS

__all__ = ["render_summary", "format_value", "shown_unit", "RATE_LABELS"]

#: The labels shown as percentages (rates and [0, 1] scores), from the metric table.
RATE_LABELS = frozenset(label for label, info in LABELS.items() if info.is_rate)


def shown_unit(label: str, unit: str | None = None) -> str:
    """The unit a value of ``label`` is shown in: ``unit`` when given (a summary's own
    ``units``), else the metric table's (``%``, ``m``, ``hops``, ``px``, ``count``); empty for
    a label the table does not know.

    Example:
        >>> shown_unit("SR"), shown_unit("SPD"), shown_unit("NE", "hops"), shown_unit("X")
        ('%', 'hops', 'hops', '')
    """
    if unit:
        return unit
    info = LABELS.get(label)
    return info.shown_unit if info is not None else ""


def format_value(
    label: str, value: float | None, unit: str | None = None, *, signed: bool = False
) -> str:
    """Rates as percentages with two decimals, other values as they are (``unit`` "%" forces a
    rate); a signed rate is a difference in percentage points.

    Example:
        >>> format_value("SR", 0.5), format_value("NE", 3.14159), format_value("SPL", None)
        ('50.00', '3.14', 'n/a')
        >>> format_value("SPD", 1.5), format_value("SR", -0.012, signed=True)
        ('1.50', '-1.20')
    """
    if value is None:
        return "n/a"
    scale = 100.0 if shown_unit(label, unit) == "%" else 1.0
    return f"{scale * value:{'+' if signed else ''}.2f}"


def render_summary(summary: dict[str, Any], *, color: bool | None = None) -> str:
    """The summary as a table (string), with failed checks and warnings below it."""
    from rich.console import Console
    from rich.table import Table

    prof = summary["profile"]
    title = (
        f"{summary['task']} {summary['split']} · profile {prof['name']} v{prof['version']} · "
        f"{summary['n_episodes']} episodes" + (" (partial)" if summary.get("partial") else "")
    )
    table = Table(title=title)
    units = summary.get("units") or {}  # a task's own units (hops, px, count), by label
    for label in summary["metrics"]:
        unit = shown_unit(label, units.get(label))
        table.add_column(f"{label} ({unit})" if unit else label, justify="right")
    table.add_row(*(format_value(k, v, units.get(k)) for k, v in summary["metrics"].items()))
    console = Console(record=True, force_terminal=color, width=120, file=io.StringIO())
    console.print(table)
    for c in summary.get("checks", []):
        if not c["holds"]:
            style = "yellow" if "quirk" in c else "bold red"
            note = f" ({c['quirk']})" if "quirk" in c else ""
            console.print(f"[{style}]check failed: {c['name']}: {c['detail']}{note}[/]")
    for w in summary.get("warnings", []):
        if not w.startswith("consistency check failed"):
            console.print(f"[yellow]warning: {w}[/]")
    return console.export_text(styles=bool(color))
