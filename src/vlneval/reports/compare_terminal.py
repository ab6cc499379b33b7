"""Tables of a paired comparison, of several runs against one baseline and of a seed
aggregate: rich text for the terminal, Markdown or LaTeX for a paper (stdout); their notes
(card differences worth reading, episodes left out) go to stderr."""

from __future__ import annotations

import math
import shutil
from collections.abc import Sequence

from rich.table import Table
from rich.text import Text

from vlneval.diagnostics.intervals import resampling_text
from vlneval.diagnostics.scored import ScoredRun
from vlneval.reports.compare import (
    AggregateResult,
    MultiComparison,
    RunComparison,
    b_is_better,
    p_floor,
    p_value_tests,
    scan_interval_note,
    significance_level,
    significant,
)
from vlneval.reports.paper import render_table
from vlneval.reports.terminal import (
    Notice,
    column_name,
    fit_names,
    format_value,
    grouped_notes,
    level_label,
    recording_console,
    unavailable_reasons,
    warning_notices,
)
from vlneval.stats import Comparison
from vlneval.tasks.common.protocol import episodes_text

__all__ = [
    "render_aggregate",
    "render_comparison",
    "render_multi",
    "comparison_notices",
    "not_compared_notices",
    "p_floor_notice",
    "run_notices",
    "aggregate_notices",
]


def _delta_style(label: str, c: Comparison) -> str:
    """Green when the Holm-significant difference favours B by the metric's direction, red when
    it does not, none when not significant (or the metric has no direction)."""
    better = b_is_better(label, c)
    return "" if not significant(c) or better is None else ("green" if better else "red")


def _ci(label: str, c: Comparison) -> str:
    return f"[{format_value(label, c.ci_low, signed=True)}, {format_value(label, c.ci_high, signed=True)}]"


def _partial(cmp: RunComparison, run: str) -> str:
    """`` (partial: 12 of 36)`` when ``run`` ("A" or "B") scored a subset (``--subset``), else
    "": the paired episodes are then no whole split."""
    episodes = episodes_text(cmp.cards.get(run, {}))
    return f" ({episodes})" if episodes.startswith("partial") else ""


def _scan_caption(cmp: RunComparison) -> str:
    note = scan_interval_note(cmp)
    return f"; {note}" if note else ""


def _row_name(label: str, c: Comparison, cmp: RunComparison) -> str:
    """The metric's name, with its pairs when it is paired on fewer episodes than the others
    (NE without the unreachable episodes): its means are over those pairs only."""
    name = column_name(label)
    return name if c.n >= cmp.n_paired else f"{name} [{c.n} of {cmp.n_paired} pairs]"


def _fewer_pairs(runs: Sequence[RunComparison]) -> str:
    """The paper note's account of the metrics paired on fewer episodes, or ""."""
    few = [
        f"{r.label_b + ': ' if len(runs) > 1 else ''}{m} over {c.n} of {r.n_paired} pairs"
        for r in runs
        for m, c in r.metrics.items()
        if c.n < r.n_paired
    ]
    return f"; {'; '.join(few)}" if few else ""


def _raw_p(c: Comparison, cmp: RunComparison) -> str:
    """The p cell: "≤" the Monte Carlo floor when the p-value is at it."""
    floor = p_floor(c, cmp.settings.get("n_permutations", 10000))
    return _p(c.p_value) if floor is None else f"≤{floor:.2g}"


def _p(p: float | None) -> str:
    if p is None:
        return "–"
    return "<0.0001" if p < 1e-4 else f"{p:.4f}"


def render_comparison(cmp: RunComparison, *, color: bool | None = None, fmt: str = "text") -> str:
    """The comparison as a terminal table (rich): means, Δ = B − A, interval, p-values.

    Rates are in % and their differences in percentage points; other metrics in the unit
    their row names. A significant difference is green when B is better by the metric's
    direction (:func:`~vlneval.reports.compare.b_is_better`) and red when worse. Markdown
    and LaTeX: :func:`render_multi`'s paper table.
    """
    if fmt != "text":
        return render_multi(MultiComparison(cmp.label_a, [cmp]), fmt=fmt)

    level = level_label(cmp.settings.get("confidence", 0.95))
    table = Table(
        caption="rates in %, differences in percentage points; other units as named; p: "
        f"{p_value_tests([cmp])}, Holm-adjusted over {len(cmp.metrics)} metrics"
        + _scan_caption(cmp),
    )
    for name, justify in (
        ("metric", "left"),
        ("A", "right"),
        ("B", "right"),
        ("Δ = B − A", "right"),
        (f"{level} CI of Δ", "right"),
        ("p", "right"),
        ("p (Holm)", "right"),
        ("test", "left"),
    ):
        table.add_column(name, justify=justify, no_wrap=name == "metric")  # type: ignore[arg-type]
    for label, c in cmp.metrics.items():
        style = _delta_style(label, c)
        table.add_row(
            _row_name(label, c, cmp),
            format_value(label, c.mean_b),
            format_value(label, c.mean_a),
            f"[{style}]{format_value(label, c.difference, signed=True)}[/]"
            if style
            else format_value(label, c.difference, signed=True),
            _ci(label, c),
            _raw_p(c, cmp),
            _p(c.p_adjusted),
            c.test,
        )
    for label in cmp.unavailable:  # why: on stderr (not_compared_notices) and in the JSON
        table.add_row(column_name(label), "n/a", "n/a", "n/a", "", "", "", "no finite pair")
    console = recording_console(color)
    card = cmp.cards.get("B", {})
    scoring = card.get("scoring", {})
    console.print(Text(f"A (baseline): {cmp.label_a}{_partial(cmp, 'A')}"))
    console.print(Text(f"B (candidate): {cmp.label_b}{_partial(cmp, 'B')}"))
    console.print(
        f"{cmp.n_paired} paired episodes · {card.get('task')} {card.get('split')} · profile "
        f"{scoring.get('profile')} v{scoring.get('profile_version')} · "
        f"resampled {resampling_text(cmp.settings)}, seed {cmp.settings.get('seed')}"
    )
    console.print(table)
    if cmp.success is not None:
        s = cmp.success
        console.print(
            f"success pairs: both {s['both']}, only A {s['only_a']}, only B {s['only_b']}, "
            f"neither {s['neither']}"
        )
    for d in cmp.differences:
        console.print(Text(f"FORCED: protocol cards differ: {d}", style="bold red"))
    return console.export_text(styles=bool(color))


def comparison_notices(cmp: RunComparison | MultiComparison) -> list[Notice]:
    """The notes of a comparison, for stderr: episodes left out of the pairing, other
    protocol fields that differ."""
    runs = cmp.runs if isinstance(cmp, MultiComparison) else [cmp]
    out: list[Notice] = []
    for r in runs:
        who = "B" if len(runs) == 1 else r.label_b
        if r.n_only_a or r.n_only_b:
            out.append((
                f"note: {r.n_only_a} episode(s) scored only by A and {r.n_only_b} only by "
                f"{who} are left out of the paired comparison", "yellow",
            ))  # fmt: skip
        for n in r.notes:
            note = n if len(runs) == 1 else n.replace("(B)", f"({who})")
            out.append((f"note: protocol field differs: {note}", "yellow"))
    n_tests = sum(len(r.metrics) for r in runs)
    return out + _few_scans(runs[0], n_tests) + p_floor_notice(runs)


def _few_scans(cmp: RunComparison, n_tests: int) -> list[Notice]:
    """A warning when --by-scan has too few scans for its test to reach the significance
    level: over k scans the smallest two-sided p of the sign flips is 2 / 2^k, and Holm over
    ``n_tests`` multiplies the smallest p by ``n_tests``; p = α is not significant.

    Example:
        >>> from vlneval.reports.compare import RunComparison
        >>> cmp = RunComparison("a", "b", {}, 36, 0, 0, None, settings={"n_scans": 3})
        >>> print(_few_scans(cmp, 1)[0][0])
        warning: --by-scan over 3 scans: the cluster test's smallest possible p is 2/2^3 = 0.25, so no difference can reach p < 0.05; the interval from resampling 3 scans is unreliable too
        >>> cmp.settings["n_scans"] = 6
        >>> print(_few_scans(cmp, 8)[0][0])
        warning: --by-scan over 6 scans: the cluster test's smallest possible p is 2/2^6 = 0.0312, 0.25 after Holm over 8 tests, so no difference can reach p < 0.05; the interval from resampling 6 scans is unreliable too
    """
    k = cmp.settings.get("n_scans")
    alpha = significance_level(cmp.settings.get("confidence", 0.95))
    if k is None or n_tests * 2.0 / 2**k < alpha:
        return []
    smallest = min(1.0, 2.0 / 2**k)
    holm = ""
    if smallest < alpha:  # Holm, not the test alone, keeps it from significance
        holm = f", {min(1.0, n_tests * smallest):.3g} after Holm over {n_tests} tests"
    scans = f"{k} scan{'s' if k > 1 else ''}"
    return [(
        f"warning: --by-scan over {scans}: the cluster test's smallest possible p is "
        f"2/2^{k} = {smallest:.3g}{holm}, so no difference can reach p < {alpha:g}; the "
        f"interval from resampling {scans} is unreliable too", "yellow",
    )]  # fmt: skip


def p_floor_notice(runs: Sequence[RunComparison]) -> list[Notice]:
    """A warning when the Monte Carlo p-value floor ``1 / (N + 1)`` (N sign flips) times the
    number m of Monte Carlo tests in the Holm family (over all ``runs``) is at least α: no
    Monte Carlo test can then reach significance (printed by ``compare`` and ``report
    --compare``, and on the report's page). m, not the family size, is the best Holm
    multiplier a Monte Carlo test can get: exact tests (McNemar's under ``--by-episode``) may
    all rank before it.

    Example:
        >>> from vlneval.reports.compare import RunComparison
        >>> from vlneval.stats import Comparison
        >>> mc = Comparison("TL", 1.0, 2.0, -1.0, -1.5, -0.5, 0.01, "permutation-monte-carlo",
        ...                 50, 0.95)
        >>> exact = Comparison("SR", 0.1, 0.2, -0.1, -0.2, 0.0, 0.01, "mcnemar-exact", 50, 0.95)
        >>> cmp = RunComparison("a", "b", {"TL": mc, "NE": mc, "SR": exact}, 50, 0, 0, None,
        ...                     settings={"n_permutations": 30, "confidence": 0.95})
        >>> print(p_floor_notice([cmp, cmp])[0][0])
        warning: --permutations 30: a Monte Carlo p is at least 1/31 = 0.0323, 0.129 after Holm over 4 Monte Carlo tests, so no Monte Carlo test can reach p < 0.05; use --permutations 80 or more
        >>> cmp.settings["n_permutations"] = 40  # 2 Monte Carlo tests: 2/41 < 0.05
        >>> p_floor_notice([cmp])
        []
    """
    m = sum(c.test.endswith("monte-carlo") for r in runs for c in r.metrics.values())
    if not m:
        return []
    n = int(runs[0].settings.get("n_permutations", 10000))
    alpha = significance_level(runs[0].settings.get("confidence", 0.95))
    floor = 1.0 / (n + 1)
    if m * floor < alpha:
        return []
    need = math.floor(round(m / alpha, 9))  # the fewest N with m / (N + 1) < α
    tests = f"{m} Monte Carlo test{'s' if m > 1 else ''}"
    return [(
        f"warning: --permutations {n}: a Monte Carlo p is at least 1/{n + 1} = {floor:.3g}, "
        f"{min(1.0, m * floor):.3g} after Holm over {tests}, so no Monte Carlo "
        f"test can reach p < {alpha:g}; use --permutations {need} or more", "yellow",
    )]  # fmt: skip


def run_notices(runs: Sequence[tuple[str, ScoredRun]]) -> list[Notice]:
    """Each run's failed checks and scoring warnings, for stderr, after its name (``A
    (label): warning: ...``): a comparison rests on them as a score does."""
    out: list[Notice] = []
    for name, run in runs:
        out += warning_notices(run.evaluation.to_dict(), f"{name} ({run.label}): ")
    return out


def not_compared_notices(
    runs: Sequence[tuple[str, ScoredRun]], cmp: RunComparison | MultiComparison
) -> list[Notice]:
    """Why each metric that is n/a in some run is not in the comparison (the first such run,
    its label and reason), labels with one reason together, for stderr."""
    pairs = cmp.runs if isinstance(cmp, MultiComparison) else [cmp]
    compared = {m for r in pairs for m in r.metrics}
    why: dict[str, str] = {}
    for r in pairs:
        for label, reason in r.unavailable.items():
            who = "" if len(pairs) == 1 else f"{r.label_b}: "
            why.setdefault(label, f"n/a, {who}{reason}")
    for name, run in runs:
        for label, reason in unavailable_reasons(run.evaluation.to_dict()).items():
            if label not in compared:
                why.setdefault(label, f"n/a in {name} ({run.label}): {reason}")
    return [(f"note: {t}", "yellow") for t in grouped_notes(why, "left out of the comparison")]


def render_aggregate(
    result: AggregateResult, *, color: bool | None = None, fmt: str = "text"
) -> str:
    """The aggregate as a table: rich text (mean, std, min, max, interval by metric), or one
    paper row of ``mean ± std`` by metric (Markdown, LaTeX)."""
    if fmt != "text":
        return _paper_aggregate(result, fmt)

    first = next(iter(result.metrics.values()))
    level = level_label(first.confidence)
    clipped = [m for m, r in result.metrics.items() if r.clipped_to]
    table = Table(
        title=Text(f"{len(result.labels)} runs: {', '.join(result.labels)}"),
        caption=f"rates in %, other units as named; std over runs (ddof = 1); {level} Student-t "
        "interval of the mean over runs (seed variation only)"
        + ("; * clipped to the metric's range" if clipped else ""),
    )
    for name in ("metric", "mean", "std", "min", "max", f"{level} CI"):
        table.add_column(name, justify="left" if name == "metric" else "right")
    for label, r in result.metrics.items():

        def f(v: float | None, label: str = label) -> str:
            return "–" if v is None else format_value(label, v)

        ci = "–" if r.ci_low is None else f"[{f(r.ci_low)}, {f(r.ci_high)}]"
        ci += " *" if r.clipped_to else ""
        table.add_row(column_name(label), f(r.mean), f(r.std), f(r.min), f(r.max), ci)
    console = recording_console(color)
    console.print(table)
    for d in result.differences:
        console.print(Text(f"FORCED: protocol cards differ: {d}", style="bold red"))
    return console.export_text(styles=bool(color))


def aggregate_notices(result: AggregateResult) -> list[Notice]:
    """The aggregate's warnings, why each metric left out of it is, the card fields its runs
    differ in, and why a ``–`` is one, for stderr."""
    out = [(f"warning: {w}", "yellow") for w in result.warnings]
    out += [
        (f"note: {label} is left out of the aggregate: {why}", "yellow")
        for label, why in result.left_out.items()
    ]
    differs = result.card.get("differs_between_runs")
    if differs:
        out.append((
            f"note: the runs' protocol cards differ in {', '.join(differs)}: the aggregate's "
            "card gives each run's value",
            "yellow",
        ))  # fmt: skip
    if len(result.labels) == 1:
        out.append(("note: std and the interval are – : they need at least two runs", "yellow"))
    elif not isinstance(result.card.get("seeds"), list):
        out.append((
            "note: the runs declare no seeds: the interval is seed variation only if they are "
            "seeds of one model, not checkpoints or different models", "yellow",
        ))  # fmt: skip
    clipped = [m for m, r in result.metrics.items() if r.clipped_to]
    if clipped:
        out.append((
            f"note: the interval of {', '.join(clipped)} is clipped to the metric's range (*): "
            f"the t interval over {len(result.labels)} runs reaches past it, so the runs "
            "locate the mean poorly on that side",
            "yellow",
        ))  # fmt: skip
    return out


def _paper_aggregate(result: AggregateResult, fmt: str) -> str:
    first = next(iter(result.metrics.values()))
    header = ["runs", *(column_name(m) for m in result.metrics)]
    cells = [f"{len(result.labels)}"]
    for label, r in result.metrics.items():
        std = "" if r.std is None else f" ± {format_value(label, r.std)}"
        cells.append(f"{format_value(label, r.mean)}{std}")
    note = (
        f"mean ± std over {len(result.labels)} runs ({', '.join(result.labels)}); std ddof = 1; "
        f"rates in %; {level_label(first.confidence)} intervals in the JSON"
    )
    if result.differences:
        note += "\nFORCED: protocol cards differ: " + "; ".join(result.differences)
    return render_table(fmt, header, [cells], "l" + "r" * len(result.metrics), note=note)


def render_multi(multi: MultiComparison, *, color: bool | None = None, fmt: str = "text") -> str:
    """Several candidates against one baseline in one table.

    Text: one row per candidate × metric (A's mean, the candidate's, Δ, interval, p, Holm p
    over every row). Markdown and LaTeX (a paper's table): one row per run, A first, one column
    per metric; a candidate's cell is its mean and Δ vs A, starred when the Holm-adjusted p is
    below 1 − confidence.
    """
    if fmt != "text":
        return _paper_multi(multi, fmt)

    first = multi.runs[0]
    level = level_label(first.settings.get("confidence", 0.95))
    table = Table(
        caption=f"rates in %, differences in percentage points; p: {p_value_tests(multi.runs)}, "
        f"Holm-adjusted over all {multi.n_tests} rows" + _scan_caption(first)
    )
    header = ["run", "metric", "A", "run mean", "Δ = run − A", f"{level} CI of Δ", "p",
              "p (Holm)", "test"]  # fmt: skip
    for name in header:
        table.add_column(
            name,
            justify="left" if name in ("run", "metric", "test") else "right",
            no_wrap=name in ("run", "metric"),
        )
    cells = [(k, label, c) for k, r in enumerate(multi.runs) for label, c in r.metrics.items()]
    rows = [
        [multi.runs[k].label_b, _row_name(label, c, multi.runs[k]), format_value(label, c.mean_b),
         format_value(label, c.mean_a), format_value(label, c.difference, signed=True),
         _ci(label, c), _raw_p(c, multi.runs[k]), _p(c.p_adjusted), c.test]
        for k, label, c in cells
    ]  # fmt: skip
    width = shutil.get_terminal_size((160, 24)).columns
    others = sum(max(len(row[j]) for row in [header, *rows]) + 3 for j in range(1, len(header)))
    names = fit_names([r.label_b for r in multi.runs], max(12, width - 4 - others))
    for (k, label, c), row in zip(cells, rows, strict=True):  # names told apart, to fit
        table.add_row(
            Text(names[k]), *row[1:4], Text(row[4], style=_delta_style(label, c)), *row[5:]
        )
    console = recording_console(color, width=max(width, 4 + others + 12))
    console.print(Text(f"A (baseline): {multi.label_a}{_partial(first, 'A')}"))
    console.print(Text(f"runs: {', '.join(r.label_b + _partial(r, 'B') for r in multi.runs)}"))
    console.print(f"resampled {resampling_text(first.settings)}, seed {first.settings.get('seed')}")
    console.print(table)
    for r in multi.runs:
        for d in r.differences:
            console.print(
                Text(f"FORCED: {r.label_b}: protocol cards differ: {d}", style="bold red")
            )
    return console.export_text(styles=bool(color))


def _paper_multi(multi: MultiComparison, fmt: str) -> str:
    """One row per run: A's mean over all its episodes, then each candidate's mean and Δ vs A.
    When A's mean on the episodes a candidate shares with it prints otherwise than A's row
    (fewer pairs), the cell names it (``21.67 (+2.00 vs A 19.67)``), so each Δ is the
    difference of the means printed beside it whatever the order of the runs; a candidate
    paired on fewer of A's episodes says so after its name."""
    labels = list(dict.fromkeys(m for r in multi.runs for m in r.metrics))
    header = ["run", *(column_name(m) for m in labels)]
    # one candidate (render_comparison): A's row is its mean on the pairs
    base = multi.means_a or {m: c.mean_b for m, c in multi.runs[0].metrics.items()}
    infinite = [m for m in labels if m in base and not math.isfinite(base[m])]
    rows = [
        [
            f"{multi.label_a} (A)",
            *("n/a" if m in infinite else format_value(m, base[m]) if m in base else "–"
              for m in labels),
        ]
    ]  # fmt: skip
    level = 0.95
    for r in multi.runs:
        n_a = r.n_paired + r.n_only_a
        cells = [
            r.label_b if r.n_paired >= n_a else f"{r.label_b} [{r.n_paired} of {n_a} episodes]"
        ]
        for m in labels:
            c = r.metrics.get(m)
            if c is None:
                cells.append("–")
                continue
            level = c.confidence
            star = "*" if significant(c) else ""
            a_here = format_value(m, c.mean_b)
            vs = "" if m in base and a_here == format_value(m, base[m]) else f" vs A {a_here}"
            delta = format_value(m, c.difference, signed=True)
            cells.append(f"{format_value(m, c.mean_a)} ({delta}{vs}){star}")
        rows.append(cells)
    over = "all its" if multi.means_a else "the paired"
    note = (
        f"A = baseline, its mean over {over} episodes; each run: mean (Δ vs A; 'vs A x': A's "
        f"mean on the episodes that run shares with it); * Holm-adjusted p < "
        f"{significance_level(level):g} "
        f"over {multi.n_tests} tests ({p_value_tests(multi.runs)}); "
        "rates in %, differences in percentage points"
        + _fewer_pairs(multi.runs)
        + _scan_caption(multi.runs[0])
        + (
            f"; n/a: A's {', '.join(infinite)} is infinite in some of its episodes (no mean); "
            "each run's cell compares the episodes where both are finite"
            if infinite
            else ""
        )
    )
    forced = [f"{r.label_b}: {d}" for r in multi.runs for d in r.differences]
    if forced:
        note += "\nFORCED: protocol cards differ: " + "; ".join(forced)
    return render_table(fmt, header, rows, "l" + "r" * len(labels), note=note)
