"""Terminal tables (rich) of a paired comparison and of a seed aggregate."""

from __future__ import annotations

import io

from vlneval.reports.compare import AggregateResult, RunComparison, b_is_better
from vlneval.reports.terminal import format_value, shown_unit

__all__ = ["render_aggregate", "render_comparison"]


def _fmt(label: str, value: float, *, signed: bool = False) -> str:
    return format_value(label, value, signed=signed)


def _name(label: str) -> str:
    """``SR (%)``, ``SPD (hops)``: the label and its shown unit."""
    unit = shown_unit(label)
    return f"{label} ({unit})" if unit else label


def _p(p: float | None) -> str:
    if p is None:
        return "–"
    return "<0.0001" if p < 1e-4 else f"{p:.4f}"


def render_comparison(cmp: RunComparison, *, color: bool | None = None) -> str:
    """The comparison as a terminal table (rich): means, Δ = B − A, interval, p-values.

    Rates are in % and their differences in percentage points; other metrics in the unit
    their row names. A significant difference is green when B is better by the metric's
    direction (:func:`~vlneval.reports.compare.b_is_better`) and red when worse.
    """
    from rich.console import Console
    from rich.table import Table

    level = int(round(100 * cmp.settings.get("confidence", 0.95)))
    table = Table(
        caption="rates in %, differences in percentage points; other units as named; p: McNemar "
        f"exact (0/1 metrics) or paired permutation, Holm-adjusted over {len(cmp.metrics)} "
        "metrics",
    )
    for name, justify in (
        ("metric", "left"),
        ("A", "right"),
        ("B", "right"),
        ("Δ = B − A", "right"),
        (f"{level}% CI of Δ", "right"),
        ("p", "right"),
        ("p (Holm)", "right"),
        ("test", "left"),
    ):
        table.add_column(name, justify=justify)  # type: ignore[arg-type]
    for label, c in cmp.metrics.items():
        significant = c.p_adjusted is not None and c.p_adjusted < 1 - c.confidence
        better = b_is_better(label, c)
        style = "" if not significant or better is None else ("green" if better else "red")
        table.add_row(
            _name(label),
            _fmt(label, c.mean_b),
            _fmt(label, c.mean_a),
            f"[{style}]{_fmt(label, c.difference, signed=True)}[/]"
            if style
            else _fmt(label, c.difference, signed=True),
            f"[{_fmt(label, c.ci_low, signed=True)}, {_fmt(label, c.ci_high, signed=True)}]",
            _p(c.p_value),
            _p(c.p_adjusted),
            c.test,
        )
    console = Console(record=True, force_terminal=color, width=120, file=io.StringIO())
    card = cmp.cards.get("B", {})
    scoring = card.get("scoring", {})
    console.print(f"A (baseline): {cmp.label_a}")
    console.print(f"B (candidate): {cmp.label_b}")
    console.print(
        f"{cmp.n_paired} paired episodes · {card.get('task')} {card.get('split')} · profile "
        f"{scoring.get('profile')} v{scoring.get('profile_version')} · "
        f"{cmp.settings.get('resampling', 'episodes')} resampled"
    )
    console.print(table)
    if cmp.success is not None:
        s = cmp.success
        console.print(
            f"success pairs: both {s['both']}, only A {s['only_a']}, only B {s['only_b']}, "
            f"neither {s['neither']}"
        )
    if cmp.n_only_a or cmp.n_only_b:
        console.print(
            f"[yellow]note: {cmp.n_only_a} episode(s) scored only by A and {cmp.n_only_b} only "
            "by B are left out of the paired comparison[/]"
        )
    for d in cmp.differences:
        console.print(f"[bold red]FORCED: protocol cards differ: {d}[/]")
    for n in cmp.notes:
        console.print(f"[yellow]note: protocol field differs: {n}[/]")
    return console.export_text(styles=bool(color))


def render_aggregate(result: AggregateResult, *, color: bool | None = None) -> str:
    """The aggregate as a terminal table (rich)."""
    from rich.console import Console
    from rich.table import Table

    first = next(iter(result.metrics.values()))
    level = int(round(100 * first.confidence))
    table = Table(
        title=f"{len(result.labels)} runs: {', '.join(result.labels)}",
        caption=f"rates in %, other units as named; std over runs (ddof = 1); {level}% Student-t "
        "interval of the mean over runs (seed variation only)",
    )
    for name in ("metric", "mean", "std", "min", "max", f"{level}% CI"):
        table.add_column(name, justify="left" if name == "metric" else "right")
    for label, r in result.metrics.items():

        def f(v: float | None, label: str = label) -> str:
            return "–" if v is None else _fmt(label, v)

        ci = "–" if r.ci_low is None else f"[{f(r.ci_low)}, {f(r.ci_high)}]"
        table.add_row(_name(label), f(r.mean), f(r.std), f(r.min), f(r.max), ci)
    console = Console(record=True, force_terminal=color, width=120, file=io.StringIO())
    console.print(table)
    for d in result.differences:
        console.print(f"[bold red]FORCED: protocol cards differ: {d}[/]")
    return console.export_text(styles=bool(color))
