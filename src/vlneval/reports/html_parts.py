"""Building blocks of the HTML report: escaped tables, figures, cards (used by ``html.py``).

Everything that goes into the page passes through :func:`html.escape` here; callers hand in
either plain text or the output of these functions.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence
from html import escape
from typing import Any

from vlneval.diagnostics.breakdowns import GroupRow
from vlneval.diagnostics.diagnose import Diagnostics
from vlneval.diagnostics.failures import CLASS_LABELS, FAILURE_CLASSES
from vlneval.diagnostics.intervals import resampling_text
from vlneval.diagnostics.scored import ScoredRun
from vlneval.metrics.info import LABELS
from vlneval.reports.compare import (
    RunComparison,
    p_floor,
    p_value_tests,
    scan_interval_note,
    verdict,
)
from vlneval.reports.plots_base import figure_png, png_data_uri
from vlneval.reports.plots_trajectory import plot_episode
from vlneval.reports.terminal import format_value, level_label, shown_unit
from vlneval.stats import Interval
from vlneval.tasks.profiles import Profile

__all__ = [
    "CLASS_TEXT",
    "METRIC_TEXT",
    "class_text",
    "metric_text",
    "banner",
    "card",
    "clip",
    "comparison_table",
    "episode_card",
    "figure",
    "fmt",
    "fmt_ci",
    "group_table",
    "headline",
    "muted",
    "num",
    "pill",
    "section",
    "short_labels",
    "table",
]

#: Label -> what it measures (the metric table's description).
METRIC_TEXT = {label: info.description for label, info in LABELS.items()}
CLASS_TEXT = {
    "success": "success: the stop is within δ of a goal",
    "passed_goal": "not a success, but some position was within δ (oracle success); share = "
    "OSR − SR",
    "step_limit": "never within δ, and the trajectory used the whole step limit T (steps ≥ T)",
    "stopped_early": "never within δ, no step limit hit, walked less than the shortest distance "
    "d* (TL < d*)",
    "wandered": "never within δ, no step limit hit, walked at least d* (TL ≥ d*) and ended "
    "elsewhere",
}


def class_text(profile: Profile, texts: Mapping[str, str] = CLASS_TEXT) -> dict[str, str]:
    """``texts`` (the outcome classes' definitions, or their names) in the words of the
    profile's success rule: "within δ" of a goal only when success is NE within the threshold
    (REVERIE's is the target object's visibility).

    Example:
        >>> from vlneval.tasks.profiles import get_profile
        >>> class_text(get_profile("r2r")) == CLASS_TEXT
        True
        >>> class_text(get_profile("touchdown"))["success"]
        'success: the stop meets the success rule (SPD <= 1 hop (the goal or a neighbour))'
    """
    if profile.success_metric == "NE":
        return dict(texts)
    words = (
        (
            "the stop is within δ of a goal",
            f"the stop meets the success rule ({profile.comparison})",
        ),
        ("some position was within δ", "some position met the success rule"),
        ("never within δ", "never met the success rule"),
        ("passed within δ", "met the rule in passing"),
    )
    out = {}
    for name, text in texts.items():
        for old, new in words:
            text = text.replace(old, new)
        out[name] = text
    return out


def metric_text(label: str, profile: Profile) -> str:
    """What ``label`` measures; SR's rule is the profile's own when it is not NE's.

    Example:
        >>> from vlneval.tasks.profiles import get_profile
        >>> metric_text("SR", get_profile("reverie"))[:60]
        "1 when the stop meets the task's success rule (target object"
    """
    text = METRIC_TEXT.get(label, "")
    if label == "SR" and profile.success_metric != "NE":
        return f"1 when the stop meets the task's success rule ({profile.comparison})"
    return text


def short_labels(a: str, b: str, *, keep: int = 28) -> tuple[str, str]:
    """Two labels with their long common prefix cut at a ``_``/``-`` boundary (one word kept).

    Example:
        >>> short_labels("seq2seq_sample_imagenet_val_unseen_iter_5000",
        ...              "seq2seq_sample_imagenet_val_unseen_iter_20000")
        ('iter_5000', 'iter_20000')
        >>> short_labels("navillm", "seq2seq")
        ('navillm', 'seq2seq')
    """
    if max(len(a), len(b)) <= keep:
        return a, b
    n = len(os.path.commonprefix([a, b]))
    cuts = [i + 1 for i in range(n) if a[i] in "_-"]
    if len(cuts) < 2:
        return a, b
    start = cuts[-2]
    return a[start:], b[start:]


def clip(label: str, width: int = 32) -> str:
    """``label``, or when longer its start and its end around ``…``, each cut between words
    (``_ - .``) when a boundary is near: a run's file name usually names the model at its start
    and the split or checkpoint at its end, so neither is lost.

    Example:
        >>> clip("val-seq2seq-all-trusted_path-40-sample-imagenet_val_unseen_iter_100")
        'val-seq2seq-all…unseen_iter_100'
        >>> clip("navillm_val_unseen")
        'navillm_val_unseen'
    """
    if len(label) <= width:
        return label
    words = re.split(r"(?<=[_.-])", label)  # each word keeps the separator after it

    def shown(head: int, tail: int) -> str:  # words[:head], "…", words[tail:]
        return "".join(words[:head]).rstrip("_.-") + "…" + "".join(words[tail:])

    head, tail = 0, len(words)
    for turn in range(2 * len(words)):  # a word from the end, then one from the start
        h, t = (head, tail - 1) if turn % 2 == 0 else (head + 1, tail)
        if h <= t and len(shown(h, t)) <= width:
            head, tail = h, t
    if head == 0 or tail == len(words):  # a word too long to keep whole: cut characters
        return label[: (width - 1) // 2] + "…" + label[len(label) - width // 2 :]
    return shown(head, tail)


def fmt(label: str, value: float | None, *, signed: bool = False) -> str:
    """Rates as percentages (differences in percentage points), other values with their unit
    from the metric table, two decimals.

    Example:
        >>> fmt("SR", 0.5), fmt("NE", 3.14159), fmt("SR", -0.012, signed=True), fmt("SPL", None)
        ('50.00%', '3.14 m', '-1.20 pp', '–')
        >>> fmt("SPD", 1.5), fmt("SDR_dist", 12.0)
        ('1.50 hops', '12.00 px')
    """
    if value is None:
        return "–"
    text, unit = format_value(label, value, signed=signed), shown_unit(label)
    if unit == "%":
        return text + (" pp" if signed else "%")
    return text + (f" {unit}" if unit and unit != "count" else "")


def fmt_ci(label: str, ci: Interval | None) -> str:
    """``[low, high]`` in the metric's unit.

    Example:
        >>> from vlneval.stats import Interval
        >>> fmt_ci("SR", Interval(0.5, 0.4, 0.6, 0.95, 100, "bootstrap-percentile", 10))
        '[40.00, 60.00]'
    """
    if ci is None:
        return "–"
    return f"[{format_value(label, ci.low)}, {format_value(label, ci.high)}]"


def num(text: str, extra: str = "") -> str:
    """A right-aligned numeric cell's content (escaped)."""
    return f"<!--num {extra}-->{escape(text)}"


def pill(text: str, kind: str) -> str:
    """A coloured label (``ok``, ``fail`` or ``quirk``)."""
    return f"<span class='pill {kind}'>{escape(text)}</span>"


def muted(text: str) -> str:
    """A grey paragraph (empty for empty text)."""
    return f"<p class='muted'>{escape(text)}</p>" if text else ""


def table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """A table; cells made with :func:`num` are right-aligned, header cells escaped.

    Example:
        >>> table(["a", "b"], [["x", num("1")]])
        '<table><thead><tr><th>a</th><th class="num">b</th></tr></thead><tbody><tr><td>x</td><td class="num">1</td></tr></tbody></table>'
    """
    numeric = [
        bool(rows) and all(r[j].startswith("<!--num") for r in rows) for j in range(len(header))
    ]
    head = "".join(
        f'<th class="num">{escape(h)}</th>' if numeric[j] else f"<th>{escape(h)}</th>"
        for j, h in enumerate(header)
    )
    body = []
    for r in rows:
        cells = []
        for c in r:
            if c.startswith("<!--num"):
                extra = c[len("<!--num ") : c.index("-->")].strip()
                cls = f"num {extra}".strip()
                cells.append(f'<td class="{cls}">{c[c.index("-->") + 3 :]}</td>')
            else:
                cells.append(f"<td>{c}</td>")
        body.append("<tr>" + "".join(cells) + "</tr>")
    return f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"


def banner(title: str, items: Sequence[str], kind: str = "") -> str:
    """A highlighted box: a bold title over a list of items (``kind``: ``danger`` or none)."""
    lis = "".join(f"<li>{escape(item)}</li>" for item in items)
    return f"<div class='{f'banner {kind}' if kind else 'banner'}'><b>{escape(title)}</b><ul>{lis}</ul></div>"


def section(sid: str, title: str, content: str) -> str:
    """A titled section with an anchor."""
    return f'<section id="{escape(sid)}"><h2>{escape(title)}</h2>{content}</section>'


def figure(png: bytes, caption: str, *, alt: str | None = None) -> str:
    """An embedded PNG with a caption (also the alt text unless ``alt`` is given)."""
    text = f"<figcaption>{escape(caption)}</figcaption>" if caption else ""
    return f'<figure><img src="{png_data_uri(png)}" alt="{escape(alt or caption)}">{text}</figure>'


def _value(value: Any) -> str:
    if value is None:  # e.g. data_version of a benchmark with a single release
        return "<span class='undeclared'>n/a</span>"
    if isinstance(value, str) and value.startswith("not declared"):
        return f"<span class='undeclared'>{escape(value)}</span>"
    if isinstance(value, dict):
        return "; ".join(f"{escape(str(k))}: {escape(str(v))}" for k, v in value.items())
    return escape(str(value))


def card(protocol: Mapping[str, Any]) -> str:
    """A protocol card as a definition list; undeclared fields in grey italics."""
    items = []
    for key, value in protocol.items():
        items.append(f"<dt>{escape(key.replace('_', ' '))}</dt><dd>{_value(value)}</dd>")
    return "<dl class='card'>" + "".join(items) + "</dl>"


def comparison_table(cmp: RunComparison) -> str:
    """The paired comparison as a table, with success pairs and a reading note."""
    level = level_label(cmp.settings.get("confidence", 0.95))
    rows = []
    for label, c in cmp.metrics.items():
        said = verdict(label, c)
        if said in ("B better", "B worse"):
            shown = pill(said, "ok" if said == "B better" else "fail")
        elif said.startswith("B "):  # a significant difference in a metric without direction
            shown = f"<span class='muted'>B's {escape(label)} is {said[2:]}</span>"
        else:
            shown = f"<span class='muted'>{said}</span>"
        pairs = f" <span class='muted'>({c.n} of {cmp.n_paired} pairs)</span>"
        rows.append(
            [
                f"<b>{escape(label)}</b>" + (pairs if c.n < cmp.n_paired else ""),
                num(fmt(label, c.mean_b)),
                num(fmt(label, c.mean_a)),
                num(fmt(label, c.difference, signed=True)),
                num(fmt_ci(label, _ci(c)), "ci"),
                num(_p(c.p_value, p_floor(c, cmp.settings.get("n_permutations", 10000)))),
                num(_p(c.p_adjusted)),
                escape(c.test),
                shown,
            ]
        )
    header = ["metric", "A", "B", "Δ = B − A", f"{level} CI of Δ", "p", "p (Holm)", "test", ""]
    out = (
        f"<p><b>A</b> = {escape(cmp.label_a)} (baseline), <b>B</b> = {escape(cmp.label_b)}; "
        f"{cmp.n_paired} episodes scored by both, compared episode by episode; resampled "
        f"{escape(resampling_text(cmp.settings))}, seed {cmp.settings.get('seed')}.</p>"
    )
    out += table(header, rows)
    tests = p_value_tests([cmp])
    if cmp.success is not None:
        s = cmp.success
        mcnemar = tests.startswith("McNemar")
        out += (
            f"<p>Success pairs: both succeed <b>{s['both']}</b>, only A <b>{s['only_a']}</b>, only "
            f"B <b>{s['only_b']}</b>, neither <b>{s['neither']}</b>"
            + (
                f" (McNemar's test uses the {s['only_a'] + s['only_b']} discordant episodes)"
                if mcnemar
                else ""
            )
            + ".</p>"
        )
    for label, reason in cmp.unavailable.items():
        out += muted(f"{label}: n/a, {reason}.")
    if cmp.n_only_a or cmp.n_only_b:
        out += muted(
            f"{cmp.n_only_a} episode(s) scored only by A and {cmp.n_only_b} only by B are left "
            "out of the paired comparison."
        )
    unit = "scans'" if "per scan" in tests else "paths'"
    what = (
        "McNemar's exact test for 0/1 metrics, a paired sign-flip permutation test for the others"
        if tests.startswith("McNemar")
        else f"a permutation test flipping the signs of whole {unit} differences, for every metric"
    )
    scans = scan_interval_note(cmp)
    scans = f"{scans[0].upper()}{scans[1:]}. " if scans else ""
    return out + muted(f"p: {what}; Holm-adjusted across the metrics. {scans}" + _neutral_note(cmp))


def _neutral_note(cmp: RunComparison) -> str:
    """Names the compared metrics that have no better direction (TL, help requests)."""
    names = [m for m in cmp.metrics if m in LABELS and LABELS[m].direction == "neutral"]
    if not names:
        return ""
    return f"{', '.join(names)} {'has' if len(names) == 1 else 'have'} no better direction."


def _ci(c: Any) -> Interval:
    return Interval(c.difference, c.ci_low, c.ci_high, c.confidence, 0, "", c.n)


def _p(p: float | None, floor: float | None = None) -> str:
    if floor is not None:  # a Monte Carlo p at its floor: the test resolves no smaller p
        return f"≤ {floor:.2g}"
    if p is None:
        return "–"
    return "< 0.0001" if p < 1e-4 else f"{p:.4f}"


def group_table(rows: Sequence[GroupRow], base: Mapping[str, GroupRow]) -> str:
    """One row per group: n, share and the metric means (and the baseline's
    :func:`headline` metric when given)."""
    if not rows:
        return "<p>No groups.</p>"
    labels = list(rows[0].means)
    key = headline(labels)
    header = ["group", "n", *labels] + ([f"{key} of A (baseline)"] if base else [])
    out = []
    for r in rows:
        cells = [escape(r.group), num(str(r.n))]
        for label in labels:
            cells.append(num(fmt(label, r.means[label])))
        if base:
            b = base.get(r.group)
            cells.append(num(fmt(key, b.means.get(key) if b else None)))
        out.append(cells)
    return table(header, out)


def headline(labels: Sequence[str]) -> str:
    """The metric a baseline is shown by in the breakdowns: SR, else the first (TC, SDR@40).

    Example:
        >>> headline(["NE", "SR"]), headline(["TC", "SPD"])
        ('SR', 'TC')
    """
    return "SR" if "SR" in labels or not labels else labels[0]


def episode_card(run: ScoredRun, diag: Diagnostics, k: int, baseline: ScoredRun | None) -> str:
    """One episode: its plot, instruction, outcome and metrics (and the baseline's outcome)."""
    ev = run.evaluation
    i = int(ev.scored[k])
    ep = ev.episodes
    per = ev.per_episode
    graph = run.graphs.graph(ep.scans[i])  # type: ignore[union-attr]
    index = graph.index
    success = bool(per["success"][k])
    cls = FAILURE_CLASSES[int(diag.failures.codes[k])] if diag.failures is not None else None
    kb = baseline.positions.get(ep.ids[i]) if baseline is not None else None
    other = None
    if baseline is not None and kb is not None and baseline.has_trajectories:
        assert baseline.graphs is not None  # has_trajectories says so
        if baseline.graphs.graph(ep.scans[i]).ids == graph.ids:
            other = baseline.trajectory(kb)
    fig = plot_episode(
        graph,
        reference=[index[v] for v in ep.paths[i]],
        trajectory=run.trajectory(k),
        goals=[index[v] for v in ep.goals[i]],
        threshold=ev.profile.threshold,
        success=success,
        baseline=other,
        compared=baseline is not None,
        labels=("executed path (B)", "baseline path (A)")
        if baseline is not None
        else ("executed path", "baseline path"),
    )
    d = float(diag.context.shortest[k])
    facts = [
        f"NE {per['nav_error'][k]:.2f} m",
        f"TL {per['path_length'][k]:.2f} m",
        f"d* {d:.2f} m",
        f"nDTW {per['ndtw'][k]:.2f}" if "ndtw" in per else "",
        f"SPL {per['spl'][k]:.2f}" if "spl" in per else "",
        f"{int(per['steps'][k])} steps" if "steps" in per else "",
        f"{int(per['jumps'][k])} jump(s) between non-adjacent viewpoints"
        if "jumps" in per and per["jumps"][k]
        else "",
    ]
    outcome = (
        f"<span class='class-{cls}'>{escape(CLASS_LABELS[cls])}</span>"
        if cls
        else escape("success" if success else "failure")
    )
    fact = _baseline_fact(baseline, kb) if baseline is not None else ""
    img = figure(figure_png(fig), "", alt=f"Episode {ep.ids[i]}: top-down view of the paths")
    return (
        f"<div class='{'episode wide' if len(fig.axes) > 1 else 'episode'}'><h4>{escape(ep.id_field)} {escape(ep.ids[i])} · {outcome}</h4>"
        f"<p class='facts'>scan {escape(ep.scans[i])} · {escape(' · '.join(f for f in facts if f))}"
        f"</p>{fact}<p class='instruction'>“{escape(ep.instructions[i].strip())}”</p>{img}</div>"
    )


def _baseline_fact(baseline: ScoredRun, k: int | None) -> str:
    if k is None:
        return "<p class='facts'>baseline A: not scored</p>"
    per = baseline.evaluation.per_episode
    verdict = "success" if per["success"][k] else "failure"
    return (
        f"<p class='facts'>baseline A: {verdict}, NE {per['nav_error'][k]:.2f} m, "
        f"TL {per['path_length'][k]:.2f} m (dashed blue path)</p>"
    )
