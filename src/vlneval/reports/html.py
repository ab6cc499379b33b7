"""The HTML report: one self-contained file a reviewer can read offline (sections: see
:func:`build_report`).

Images are embedded as base64 PNG; the page has no script, no external resource and no
timestamp (the same inputs give the same bytes). Only the drawn episodes are plotted, so a
report of a full split renders in seconds.
"""

from __future__ import annotations

import base64
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from html import escape
from importlib import resources
from string import Template
from typing import Any

import numpy as np

from vlneval import __version__
from vlneval.diagnostics.budget import DEFAULT_BUDGETS
from vlneval.diagnostics.diagnose import Diagnostics, budget_label, diagnose
from vlneval.diagnostics.failures import CLASS_LABELS, FAILURE_CLASSES, step_limit_from_card
from vlneval.diagnostics.intervals import resampling_text
from vlneval.diagnostics.scored import ScoredRun
from vlneval.diagnostics.selection import sample_episodes, worst_episodes
from vlneval.metrics import MetricInfo
from vlneval.metrics.info import LABELS
from vlneval.reports import html_parts as hp
from vlneval.reports.compare import RunComparison, compare_scored, paired_runs
from vlneval.reports.compare_terminal import p_floor_notice
from vlneval.reports.plots_base import figure_png
from vlneval.reports.plots_compare import plot_comparison
from vlneval.reports.plots_distributions import (
    OUTCOME_TEXT_COLORS,
    plot_budget_curve,
    plot_error_ecdf,
    plot_length_ratio,
    plot_outcomes,
)
from vlneval.reports.tables import rows_bytes
from vlneval.reports.terminal import (
    SAME_RUN,
    level_label,
    oracle_notices,
    same_results,
    unavailable_notices,
)

__all__ = [
    "Report",
    "ReportOptions",
    "build_report",
    "error_metric",
    "identical_notes",
    "jump_note",
    "report_css",
]


@dataclass(frozen=True)
class ReportOptions:
    """What a report computes and draws.

    Attributes:
        n_worst: episodes drawn among the worst (largest NE).
        n_sample: other episodes drawn at random (seeded).
        n_disagree: with a baseline, episodes where exactly one run succeeds (half where only
            B does, half where only A does; seeded).
        seed: seed of the bootstrap, the permutation tests and the sample.
        n_resamples: bootstrap resamples.
        n_permutations: Monte Carlo sign flips of the comparison's tests.
        confidence: coverage of the intervals.
        cluster_by_scan: resample scans, then episodes (two-stage bootstrap).
        by_episode: resample episodes even when they share paths (default: whole paths).
        budgets: path-length budgets (multiples of d*) for budgeted success.
        step_limit: the run's step limit (default: from its protocol card).
        baseline_step_limit: the baseline's (default: from its card, else ``step_limit``).
        force: compare with a baseline whose protocol card differs (the report says so).
        title: the page title (default: task, split and run).
    """

    n_worst: int = 6
    n_sample: int = 6
    n_disagree: int = 4
    seed: int = 0
    n_resamples: int = 2000
    n_permutations: int = 10000
    confidence: float = 0.95
    cluster_by_scan: bool = False
    by_episode: bool = False
    budgets: tuple[float, ...] = DEFAULT_BUDGETS
    step_limit: int | None = None
    baseline_step_limit: int | None = None
    force: bool = False
    title: str | None = None

    def steps(self, compared: bool) -> int:
        """The most progress calls :func:`build_report` makes (fewer when fewer episodes are
        drawn): diagnosing, the distributions and each episode, and with a baseline
        (``compared``) the comparison, its figure and the episodes only one run solves.

        Example:
            >>> ReportOptions(n_worst=2, n_sample=1).steps(False), ReportOptions().steps(True)
            (5, 20)
        """
        return 2 + self.n_worst + self.n_sample + (2 + self.n_disagree if compared else 0)


@dataclass
class Report:
    """A rendered report: the HTML page, the same content as a JSON record (the run's summary
    record, ``spec/outputs.md``, as ``score --json`` writes it, so that ``aggregate`` and
    ``compare`` read it, with the report's ``diagnostics``, ``baseline`` and ``comparison``), and
    the comparison with the baseline (for the command's warnings)."""

    html: str
    data: dict[str, Any]
    comparison: RunComparison | None = None


Progress = Callable[[str], None]
#: (display name, run, its diagnostics) of each run shown side by side, the baseline first.
Shown = list[tuple[str, ScoredRun, Diagnostics]]


def build_report(
    run: ScoredRun,
    *,
    baseline: ScoredRun | None = None,
    options: ReportOptions = ReportOptions(),
    progress: Progress | None = None,
) -> Report:
    """Diagnoses ``run`` (and compares it with ``baseline``) and renders the report: summary
    with bootstrap intervals, checks and warnings, protocol card, the paired comparison, outcome
    classes, budgeted success, distributions of NE and TL/d*, breakdowns by scan, reference and
    instruction length, and the worst and a seeded sample of episodes drawn on their graphs.

    Args:
        run: the run reported on (B in a comparison).
        baseline: a run to compare with (A); its protocol card must match unless
            ``options.force``.
        options: see :class:`ReportOptions`.
        progress: called with a short message after each step (for a progress bar).

    Raises:
        VLNEvalError: incomparable protocol cards without ``force``; matplotlib missing.

    Example:
        >>> from vlneval.evaluation import Scorer
        >>> from vlneval.tasks.common.root import demo_root
        >>> from vlneval.diagnostics import score_run
        >>> run = score_run(Scorer("demo"), demo_root() / "demo" / "predictions_val.json")
        >>> report = build_report(run, options=ReportOptions(n_worst=1, n_sample=1, n_resamples=100))
        >>> report.html.startswith("<!DOCTYPE html>"), report.data["diagnostics"]["label"]
        (True, 'predictions_val')
    """
    step = progress or (lambda _msg: None)
    # The comparison draws from the integer seed, as `compare` does, so the same pair gives the
    # same numbers in both; the run, the baseline, and the baseline and the run re-diagnosed on
    # the episodes both scored each have a child 1-4 of the seed's SeedSequence.
    streams = [np.random.default_rng(s) for s in np.random.SeedSequence(options.seed).spawn(5)]
    stats: dict[str, Any] = {
        "n_resamples": options.n_resamples,
        "confidence": options.confidence,
        "cluster_by_scan": options.cluster_by_scan,
        "by_episode": options.by_episode,
    }
    comparison = None
    if baseline is not None:
        comparison = compare_scored(baseline, run, force=options.force, rng=options.seed,
                                    n_permutations=options.n_permutations, **stats)  # fmt: skip
        step("compared with the baseline")
    stats.update(budgets=options.budgets, step_limit=options.step_limit)
    diag = diagnose(run, rng=streams[1], **stats)
    diag.settings["seed"] = options.seed
    base_stats = {**stats, "step_limit": _baseline_limit(baseline, options)}
    base_diag = None
    if baseline is not None:
        base_diag = diagnose(baseline, rng=streams[2], **base_stats)
        base_diag.settings["seed"] = options.seed
    step("diagnosed")
    shown = _shown(
        run, diag, baseline, base_diag, stats, base_stats["step_limit"], (streams[3], streams[4])
    )
    paired = _paired_note(run, baseline, shown)
    sections = [
        ("summary", "Summary", "Summary", _summary(run, diag, options)),
        ("checks", "Checks", "Consistency checks and warnings", _checks(shown)),
        ("protocol", "Protocol", "Protocol card", _protocol(run, baseline)),
    ]
    if comparison is not None and baseline is not None:
        sections.append((
            "comparison", "Comparison", "Comparison with the baseline",
            _comparison(comparison, identical_notes(run, baseline)),
        ))  # fmt: skip
        step("drew the comparison")
    sections += [
        ("outcomes", "Outcomes", "Why episodes fail", paired + _outcomes(diag, shown)),
        ("budget", "Budgets", "Success within a path-length budget",
         paired + _budget(diag, shown)),
        ("distributions", "Distributions", _distributions_title(run, diag),
         paired + _distributions(run, shown)),
        ("breakdowns", "Breakdowns", "Breakdowns by " + _and(list(diag.groups)),
         paired + _groups(shown[-1][2], shown[0][2] if baseline is not None else None)),
    ]  # fmt: skip
    step("drew the distributions")
    sections.append(
        ("episodes", "Episodes", "Episodes", _episodes(run, diag, baseline, options, step))
    )
    html = _page(run, baseline, sections, options)
    data = {
        **run.evaluation.to_dict(),
        "diagnostics": diag.to_dict(),
        "baseline": None
        if baseline is None or base_diag is None
        else {**baseline.evaluation.to_dict(), "diagnostics": base_diag.to_dict()},
        "comparison": None if comparison is None else comparison.to_dict(),
    }
    return Report(html, data, comparison)


def _baseline_limit(baseline: ScoredRun | None, options: ReportOptions) -> int | None:
    """The baseline's step limit: given for it, else its card's, else the run's option (the
    runs may have had different limits)."""
    if options.baseline_step_limit is not None or baseline is None:
        return options.baseline_step_limit
    return step_limit_from_card(dict(baseline.evaluation.protocol)) or options.step_limit


def _shown(
    run: ScoredRun,
    diag: Diagnostics,
    baseline: ScoredRun | None,
    base: Diagnostics | None,
    stats: dict[str, Any],
    base_limit: int | None,
    rngs: tuple[np.random.Generator, np.random.Generator],
) -> Shown:
    """The runs side by side: ``A: …`` (the baseline) then ``B: …``, or the run alone, each
    named by its clipped label. Side by side, both are on the episodes both scored (diagnosed
    again with ``stats``, A's ``base_limit`` and A's, B's stream of ``rngs`` when one scored
    others): a column on other episodes is no comparison.
    """
    if baseline is None or base is None:
        return [(hp.clip(run.label), run, diag)]
    a, b = hp.short_labels(baseline.label, run.label)
    pa, pb = paired_runs(baseline, run)
    rng_a, rng_b = rngs
    base = (
        base if pa is baseline else diagnose(pa, rng=rng_a, **{**stats, "step_limit": base_limit})
    )
    diag = diag if pb is run else diagnose(pb, rng=rng_b, **stats)
    return [(f"A: {hp.clip(a)}", pa, base), (f"B: {hp.clip(b)}", pb, diag)]


def _paired_note(run: ScoredRun, baseline: ScoredRun | None, shown: Shown) -> str:
    """What the side-by-side sections are on, when a run scored episodes the other did not."""
    if baseline is None or (shown[0][1] is baseline and shown[-1][1] is run):
        return ""
    return hp.muted(
        f"A and B side by side on the {len(shown[-1][1].episode_ids)} episodes both scored "
        f"(A scored {len(baseline.episode_ids)}, B {len(run.episode_ids)}); the Summary is B's "
        "on all its episodes."
    )


def report_css() -> str:
    """The page's style sheet: ``report.css`` and the colours of success, failure and the
    outcome classes, those of the plots (one table: ``OUTCOME_TEXT_COLORS``).

    Example:
        >>> ".class-success { color: #009e73; font-weight: 600; }" in report_css()
        True
    """
    good, bad = OUTCOME_TEXT_COLORS["success"], OUTCOME_TEXT_COLORS["wandered"]
    rules = [f":root {{ --good: {good}; --bad: {bad}; }}"]
    rules += [
        f".class-{name} {{ color: {color}; font-weight: 600; }}"
        for name, color in OUTCOME_TEXT_COLORS.items()
    ]
    return _template("report.css") + "\n".join(rules) + "\n"


def _template(name: str) -> str:
    return resources.files("vlneval.reports").joinpath("templates", name).read_text("utf-8")


def _page(
    run: ScoredRun,
    baseline: ScoredRun | None,
    sections: list[tuple[str, str, str, str]],
    options: ReportOptions,
) -> str:
    s = run.evaluation.to_dict()
    prof = s["profile"]
    title = options.title or (
        f"{s['task']} {s['split']} · profile {prof['name']} v{prof['version']} · {run.label}"
    )
    scored = f"{s['n_episodes']} of {s['n_expected']} episodes" + (
        " (partial)" if s.get("partial") else ""
    )
    profile = run.evaluation.profile  # a bare threshold gets its measure's unit: "NE < 3.0 m"
    rule, measure = profile.comparison, LABELS.get(profile.success_metric or "")
    rule += f" {measure.unit}" if measure is not None and rule[-1:].isdigit() else ""
    lede = (
        f"Run <b>{escape(run.label)}</b> (<span class='mono'>{escape(str(s['predictions']))}"
        f"</span>): {scored} of <b>{escape(s['task'])} {escape(s['split'])}</b>, scored with "
        f"profile <b>{escape(prof['name'])} v{escape(str(prof['version']))}</b> "
        f"({escape(prof['reproduces'])}); success is {escape(rule)}."
    )
    if baseline is not None:
        lede += f" Compared with the baseline <b>{escape(baseline.label)}</b>."
    nav = "".join(f'<a href="#{sid}">{escape(short)}</a>' for sid, short, _, _ in sections)
    body = "\n".join(hp.section(sid, t, content) for sid, _, t, content in sections)
    footer = (
        f"vlneval {escape(__version__)} · intervals: percentile bootstrap, "
        f"{options.n_resamples} resamples, seed {options.seed} · "
        "regenerate with the same command and seed to get the same page"
    )
    return Template(_template("report.html")).substitute(
        version=escape(__version__),
        title=escape(title),
        css=report_css(),
        lede=lede,
        nav=nav,
        body=body,
        footer=footer,
    )


def _summary(run: ScoredRun, diag: Diagnostics, options: ReportOptions) -> str:
    s = run.evaluation.to_dict()
    rows = []
    for label, value in s["metrics"].items():
        ci = diag.intervals.get(label)
        rows.append(
            [
                f"<b>{escape(label)}</b>",
                escape(hp.metric_text(label, run.evaluation.profile)),
                hp.num("n/a" if value is None else hp.fmt(label, value)),
                hp.num(hp.fmt_ci(label, ci if ci is not None and ci.n > 1 else None), "ci"),
                hp.num(str(ci.n) if ci is not None else "–"),
            ]
        )
    level = level_label(options.confidence)
    table = hp.table(["metric", "what it measures", "value", f"{level} CI", "n"], rows)
    note = (
        f"<p class='muted'>Intervals: percentile bootstrap of the mean over episodes, resampled "
        f"{escape(resampling_text(diag.settings))} ({options.n_resamples} resamples, seed "
        f"{options.seed}). {_units_note(list(s['metrics']))} An interval says how much the number "
        "would move on another draw of episodes like these; two runs are compared by the "
        "paired test, not by overlapping intervals.</p>"
    )
    why = unavailable_notices(s)  # the reasons stderr gives, for a reader of the page alone
    return (
        table + (hp.banner("Not available", why) if why else "") + note + _zero_width(diag)
        + _download(run, diag)
    )  # fmt: skip


def _zero_width(diag: Diagnostics) -> str:
    """A note on intervals of zero width: a column that is the same in every episode (SPL of
    1) resamples to itself, which is no certainty about other episodes; a rate at 0 or 100 %
    gets the Clopper-Pearson interval instead, said so; a column of one episode gets no
    interval (its cell is ``–``) and says why."""
    known = [(k, ci) for k, ci in diag.intervals.items() if ci is not None]
    flat = [k for k, ci in known if ci.n > 1 and ci.low == ci.high]
    single = [k for k, ci in known if ci.n == 1]
    exact = [k for k, ci in known if ci.n > 1 and ci.method == "clopper-pearson"]
    units = {"paths": "paths", "scans, then episodes": "scans"}.get(
        diag.settings.get("resampling", ""), "episodes"
    )
    out = hp.muted(
        f"{', '.join(single)}: no interval, as the value is of one episode only; a bootstrap "
        "resamples that one value, which says nothing about other episodes."
        if single
        else ""
    )
    out += hp.muted(
        f"{', '.join(exact)}: the same outcome in every episode (a rate of 0 or 100 %), where a "
        "bootstrap interval has zero width; the interval shown is the Clopper-Pearson (exact "
        f"binomial) interval over the {units}."
        if exact
        else ""
    )
    return out + hp.muted(
        f"{', '.join(flat)}: the interval has zero width because the value is the same in "
        "every episode; a bootstrap cannot vary it, so it is no certainty about other episodes."
        if flat
        else ""
    )


def _and(names: list[str]) -> str:
    """``a, b and c``.

    Example:
        >>> _and(["scan"]), _and(["scan", "reference length", "instruction length"])
        ('scan', 'scan, reference length and instruction length')
    """
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"


def _units_note(labels: list[str]) -> str:
    """The units of the Summary's values: rates in %, then each other unit but counts.

    Example:
        >>> _units_note(["TL", "NE", "SR"]), _units_note(["SPD", "TC", "SED"])
        ('Rates in %, lengths in metres.', 'Rates in %; SPD in hops.')
    """
    units: dict[str, list[str]] = {}
    for label in labels:
        if label in LABELS and LABELS[label].unit not in ("fraction", "count"):
            units.setdefault(LABELS[label].unit, []).append(label)
    out = "Rates in %" + (", lengths in metres" if units.pop("m", None) else "")
    return out + "".join(f"; {', '.join(names)} in {unit}" for unit, names in units.items()) + "."


def _download(run: ScoredRun, diag: Diagnostics) -> str:
    """A link that downloads the per-episode table (CSV, embedded as a data URI): the rows of
    ``vlneval score --per-episode``, d* when the table lacks it, and the outcome class."""
    rows = run.evaluation.rows()
    shortest = diag.context.shortest
    per = run.evaluation.per_episode
    has_d = np.isfinite(shortest).any() and not (
        "shortest_length" in per and np.allclose(per["shortest_length"], shortest, equal_nan=True)
    )
    codes = diag.failures.codes.tolist() if diag.failures is not None else None
    for k, row in enumerate(rows):
        if has_d:
            row["shortest_distance"] = float(shortest[k])
        if codes is not None:
            row["outcome"] = FAILURE_CLASSES[codes[k]]
    text = rows_bytes(rows, "csv")
    uri = "data:text/csv;base64," + base64.b64encode(text).decode("ascii")
    name = f"{run.label.replace('/', '_')}_per_episode.csv"  # a label may keep its folder
    extra = [
        w
        for w, shown in (
            ("the shortest distance d*", has_d),
            ("the outcome class", codes is not None),
        )
        if shown
    ]
    return (
        f'<p>Per-episode results: <a download="{escape(name)}" href="{uri}">'
        f"{escape(name)}</a> ({len(run.episode_ids)} rows: every metric"
        + "".join(f", {w}" for w in extra[:-1])
        + (f" and {extra[-1]}" if extra else "")
        + ").</p>"
    )


def _checks(shown: Shown) -> str:
    """Each run's checks and warnings (the baseline's first, under its name, when there is
    one): the comparison rests on both."""
    if len(shown) == 1:
        return _run_checks(shown[0][1])
    return "".join(f"<h3>{escape(name)}</h3>{_run_checks(run)}" for name, run, _ in shown)


def _run_checks(run: ScoredRun) -> str:
    s = run.evaluation.to_dict()
    rows = []
    for c in s.get("checks", []):
        if c["holds"]:
            pill = hp.pill("holds", "ok")
        elif "quirk" in c:
            pill = hp.pill("breaks (known quirk)", "quirk")
        else:
            pill = hp.pill("FAILS", "fail")
        rows.append([escape(c["name"]), pill, escape(c["detail"]) + hp.muted(c.get("quirk", ""))])
    out = hp.table(["check", "result", "detail"], rows) if rows else "<p>No checks apply.</p>"
    # the notes `vlneval report` prints for the run besides its n/a reasons (the Summary's)
    notes = [*s.get("warnings", []), *(t for t, _ in oracle_notices(s)), jump_note(run)]
    if any(notes):
        out += hp.banner("Warnings and notes", [n for n in notes if n])
    else:
        out += "<p class='muted'>No warnings.</p>"
    return out


def jump_note(run: ScoredRun) -> str | None:
    """How many episodes jump between non-adjacent viewpoints, and the rule of the profile
    that scored them (a profile with the adjacency check refuses such a file), or None.

    Example:
        >>> from vlneval.evaluation import Scorer
        >>> from vlneval.tasks.common.root import demo_root
        >>> from vlneval.diagnostics import score_run
        >>> jump_note(score_run(Scorer("demo"), demo_root() / "demo" / "predictions_val.json"))
    """
    jumps = run.evaluation.per_episode.get("jumps")
    if jumps is None or not np.any(jumps):
        return None
    profile = run.evaluation.profile
    rules = [n for n in profile.notes if "jump" in n or "adjacency" in n] or ["no adjacency check"]
    return (
        f"note: {np.count_nonzero(jumps)} of {len(jumps)} episodes jump between non-adjacent "
        f"viewpoints ({int(np.sum(jumps))} jumps), scored under profile {profile.name} "
        f"v{profile.version} ({'; '.join(rules)}): TL counts each jump at its shortest distance"
    )


def _protocol(run: ScoredRun, baseline: ScoredRun | None) -> str:
    out = hp.card(run.evaluation.protocol)
    if baseline is not None:
        out = f"<h3>{escape(run.label)} (B)</h3>" + out
        out += f"<h3>{escape(baseline.label)} (A, baseline)</h3>"
        out += hp.card(baseline.evaluation.protocol)
    return out


def identical_notes(run: ScoredRun, baseline: ScoredRun) -> list[str]:
    """A warning when the run's results equal the baseline's to the last digit (as
    ``vlneval compare`` warns): most likely one run given twice."""
    texts = same_results(
        [baseline.evaluation.to_dict(), run.evaluation.to_dict()],
        [f"A ({baseline.label})", f"B ({run.label})"],
        SAME_RUN,
    )
    return [f"warning: {t}" for t in texts]


def _comparison(cmp: RunComparison, notes: list[str]) -> str:
    notes = notes + [text for text, _ in p_floor_notice([cmp])]  # as stderr's
    out = hp.banner("Warnings", notes) if notes else ""
    if cmp.differences:
        forced = (
            "Forced comparison: the protocol cards differ, so these numbers are not comparable."
        )
        out += hp.banner(forced, cmp.differences, "danger")
    if cmp.notes:
        out += hp.banner("Other protocol differences", cmp.notes)
    out += hp.comparison_table(cmp)
    out += hp.figure(figure_png(plot_comparison(cmp)), "Paired differences B − A with intervals")
    return out


def _outcomes(diag: Diagnostics, shown: Shown) -> str:
    if diag.failures is None:
        return "<p>Not available: the shortest distances d* are unknown for this task.</p>"
    runs = [(n, d.failures) for n, _, d in shown if d.failures is not None]
    profile = shown[-1][1].evaluation.profile
    words, names = hp.class_text(profile), hp.class_text(profile, CLASS_LABELS)
    header = ["outcome", *[f"{n} (n, %)" for n, _ in runs], "definition"]
    rows = []
    for name in FAILURE_CLASSES:
        cells = [f"<span class='class-{name}'>{escape(names[name])}</span>"]
        for _, f in runs:
            count, share = f.counts[name], f.shares[name]
            text = "–" if count is None or share is None else f"{count} ({100 * share:.1f}%)"
            cells.append(hp.num(text))
        cells.append(escape(words[name]))
        rows.append(cells)
    out = hp.table(header, rows)
    for n, f in runs:
        who = f"{n}: " if len(runs) > 1 else ""
        out += hp.muted(
            f"{who}Step limit T = {f.step_limit} (positions recorded after the start)."
            if f.step_limit is not None
            else f"{who}The step limit is unknown (pass --step-limit N, or declare "
            "inference_budget in --protocol), so no episode is classed as hitting it."
        )
        out += "".join(hp.muted(f"{who}{note}") for note in f.notes)
    shares = [(n, f.shares) for n, f in runs]
    return out + hp.figure(
        figure_png(plot_outcomes(shares)), "Outcome classes, as shares of the episodes"
    )


def _budget(diag: Diagnostics, shown: Shown) -> str:
    if not diag.budgets:
        return "<p>Not available: the shortest distances d* are unknown for this task.</p>"
    compared = len(shown) > 1
    rows = []
    for b in diag.budgets:
        cells = [f"<b>{escape(budget_label(b))}</b>"]
        for _, _, d in shown:
            ci = d.budgets.get(b)
            cells += [
                hp.num(hp.fmt("SR", ci.estimate if ci else None)),
                hp.num(hp.fmt_ci("SR", ci), "ci"),
            ]
        rows.append(cells)
    header = ["budget"]
    for n, _, _ in shown:
        header += [n if compared else "SR@b", "CI"]
    out = (
        "<p>SR@b is the share of episodes that succeed with a path no longer than b times the "
        "shortest distance d* from the start to the goal (TL ≤ b · d*): what a robot whose "
        "battery allows b times the shortest route would achieve.</p>"
    )
    cols = [
        (n, {"success": r.evaluation.per_episode["success"],
             "path_length": r.evaluation.per_episode["path_length"],
             "shortest": d.context.shortest})
        for n, r, d in shown
    ]  # fmt: skip
    plot = hp.figure(
        figure_png(plot_budget_curve(cols)), "SR@b as the budget grows; dotted: SR without budget"
    )
    if compared:
        return out + hp.table(header, rows) + f"<div class='grid2'>{plot}</div>"
    return out + f"<div class='grid2'><div>{hp.table(header, rows)}</div>{plot}</div>"


def error_metric(run: ScoredRun) -> MetricInfo | None:
    """The metric the distribution and the worst episodes are about: the first lower-is-better
    measure the run reports (NE; SPD on Touchdown, SDR_dist on SDR), else the first registered
    one its per-episode table has (REVERIE measures NE without reporting it); None if neither.

    Example:
        >>> from vlneval.evaluation import Scorer
        >>> from vlneval.tasks.common.root import demo_root
        >>> from vlneval.diagnostics import score_run
        >>> error_metric(score_run(Scorer("demo"), demo_root() / "demo" / "predictions_val.json")).label
        'NE'
    """
    per = run.evaluation.per_episode
    reported = [LABELS[m] for m in run.evaluation.metrics if m in LABELS]
    for info in [*reported, *LABELS.values()]:
        if info.direction == "lower" and info.kind != "count" and info.column in per:
            return info
    return None


def _distributions_title(run: ScoredRun, diag: Diagnostics) -> str:
    info = error_metric(run)
    shown = ([info.label] if info else []) + (["TL / d*"] if np.isfinite(diag.ratio).any() else [])
    return "Distributions of " + (" and ".join(shown) or "the metrics")


def _distributions(run: ScoredRun, shown: Shown) -> str:
    info = error_metric(run)
    figures = []
    if info is not None:
        profile = run.evaluation.profile
        # δ is the threshold of this metric only when the success rule compares it (not SDR's).
        at = profile.threshold if profile.success_metric == info.label else None
        values = [(n, r.evaluation.per_episode[info.column]) for n, r, _ in shown]
        what = f"ECDF of {info.label}: the share of episodes with {info.label} ≤ x "
        what += info.shown_unit
        what += "; its height at δ is about the success rate" if at is not None else ""
        figures.append(hp.figure(
            figure_png(plot_error_ecdf(values, threshold=at, info=info)),
            what + _beyond_axis(values, info) + ".",
        ))  # fmt: skip
    ratio = [(n, d.ratio) for n, _, d in shown]
    if any(np.isfinite(r).any() for _, r in ratio):
        figures.append(hp.figure(
            figure_png(plot_length_ratio(ratio)),
            "Path length over shortest distance; above 1 the agent walked more than needed.",
        ))  # fmt: skip
    if not figures:
        return "<p>Not available: this task reports no error metric and no path length.</p>"
    return "<div class='grid2'>" + "".join(figures) + "</div>"


def _beyond_axis(values: list[tuple[str, np.ndarray]], info: MetricInfo) -> str:
    """The share of each run's episodes right of the ECDF's axis (it ends at 20 m for a
    distance) or without a finite value, when there are any: the curves end below 1 there.

    Example:
        >>> _beyond_axis([("A", np.array([1.0, 25.0, np.inf, 2.0]))], LABELS["NE"])
        '; the x axis ends at 20 m: beyond it (or without a value) lie 50.0% of the episodes of A'
    """
    if info.kind != "distance":
        return ""
    shares = [(n, float(np.mean(~(np.asarray(v, dtype=np.float64) <= 20.0)))) for n, v in values]
    if not any(share for _, share in shares):
        return ""
    runs = ", ".join(f"{100 * share:.1f}% of the episodes of {n}" for n, share in shares)
    return f"; the x axis ends at 20 {info.shown_unit}: beyond it (or without a value) lie {runs}"


def _groups(diag: Diagnostics, base: Diagnostics | None) -> str:
    out = ""
    for name, rows in diag.groups.items():
        base_rows = {r.group: r for r in base.groups.get(name, [])} if base is not None else {}
        out += f"<h3>By {escape(name)}</h3>" + hp.group_table(rows, base_rows)
    if base is not None:
        key = hp.headline(list(diag.intervals))
        out += hp.muted(
            f"The metric columns are run B's; the last column is the baseline A's {key}."
        )
    return out + hp.muted(
        "Groups of numeric lengths are quantile bins (about equal counts). Small groups vary a "
        "lot: read n before reading a difference."
    )


def _episodes(
    run: ScoredRun,
    diag: Diagnostics,
    baseline: ScoredRun | None,
    options: ReportOptions,
    step: Progress,
) -> str:
    if not run.has_trajectories:
        return "<p>Not available: this task's scorer does not keep trajectories.</p>"
    per, info = run.evaluation.per_episode, error_metric(run)
    worst = np.zeros(0, dtype=np.int64)
    groups = []
    if info is not None:  # no error metric: no worst episodes either
        worst = worst_episodes(per[info.column], per.get("ndtw"), options.n_worst)
        groups.append(("Worst episodes", worst, _worst_order(info, per)))
    rng = np.random.default_rng([options.seed, 1])
    sample = sample_episodes(len(run.evaluation.scored), options.n_sample, exclude=worst, rng=rng)
    groups.append(("A random sample of the other episodes", sample, f"seed {options.seed}"))
    if baseline is not None:
        groups += _disagreements(run, baseline, options)
    out = ""
    for title, picked, intro in groups:
        cards = []
        for k in picked.tolist():
            cards.append(hp.episode_card(run, diag, int(k), baseline))
            step("drew an episode")
        if picked.size == 0:
            continue
        out += f"<h3>{escape(title)}</h3><p class='muted'>{escape(intro)}</p>"
        out += "<div class='episodes'>" + "".join(cards) + "</div>"
    return out


def _worst_order(info: MetricInfo, per: Mapping[str, np.ndarray]) -> str:
    """How the worst episodes are ranked: by ``info``'s metric, or when every episode has the
    same value (an oracle's NE of 0) by the lower nDTW, else in episode order, saying so.

    Example:
        >>> _worst_order(LABELS["NE"], {"nav_error": np.array([0.0, 2.0])})
        'largest navigation error first'
        >>> _worst_order(LABELS["NE"], {"nav_error": np.zeros(2), "ndtw": np.array([1.0, 0.5])})
        'every episode has the same navigation error (0.00 m), so none is worse: lowest nDTW first'
    """
    values, name = per[info.column], info.name.replace("_", " ")
    if not values.size or not np.all(values == values[0]):
        return f"largest {name} first"
    same = f"every episode has the same {name} ({hp.fmt(info.label, float(values[0]))})"
    ndtw = per.get("ndtw")
    if ndtw is not None and not np.all(ndtw == ndtw[0]):
        return f"{same}, so none is worse: lowest nDTW first"
    return f"{same}, so none is worse: the first episodes in order"


def _disagreements(
    run: ScoredRun, baseline: ScoredRun, options: ReportOptions
) -> list[tuple[str, np.ndarray, str]]:
    """Positions (in ``run``) of a seeded sample of the episodes only B, or only A, solves."""
    success_b = run.evaluation.per_episode["success"] != 0
    success_a = np.zeros_like(success_b)
    scored_a = np.zeros_like(success_b)
    per_a = baseline.evaluation.per_episode["success"]
    for k, eid in enumerate(run.episode_ids):
        kb = baseline.positions.get(eid)
        if kb is not None:
            scored_a[k], success_a[k] = True, per_a[kb] != 0
    rng = np.random.default_rng([options.seed, 2])
    half = options.n_disagree - options.n_disagree // 2
    out = []
    for title, mask, n in (
        ("Episodes only B solves", success_b & scored_a & ~success_a, half),
        (
            "Episodes only A (the baseline) solves",
            success_a & ~success_b,
            options.n_disagree - half,
        ),
    ):
        pool = np.flatnonzero(mask)
        picked = np.sort(rng.choice(pool, size=min(n, pool.size), replace=False))
        out.append((title, picked, f"{picked.size} of {pool.size}, drawn at random"))
    return out
