"""The terminal table of a summary (rich): metrics, profile, checks and warnings."""

from __future__ import annotations

import io
from typing import Any

__all__ = ["render_summary", "format_value", "RATE_LABELS"]

RATE_LABELS = {
    "SR",
    "OSR",
    "SPL",
    "nDTW",
    "sDTW",
    "CLS",
    "RGS",
    "RGSPL",
    "TC",
    "SED",
    "det_SR",
    "det_SPL",
}


def format_value(label: str, value: float | None, unit: str | None = None) -> str:
    """Rates as percentages with two decimals, lengths in metres (``unit`` "%" forces a rate).

    Example:
        >>> format_value("SR", 0.5), format_value("NE", 3.14159), format_value("SPL", None)
        ('50.00', '3.14', 'n/a')
    """
    if value is None:
        return "n/a"
    rate = unit == "%" if unit else label in RATE_LABELS
    return f"{100 * value:.2f}" if rate else f"{value:.2f}"


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
        unit = units.get(label) or ("%" if label in RATE_LABELS else "m")
        table.add_column(f"{label} ({unit})", justify="right")
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
