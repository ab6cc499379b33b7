"""Every diagnostic of one scored run in one record: intervals, outcome classes, budgets, groups."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from vlneval.diagnostics.breakdowns import GroupRow, breakdown, quantile_bins
from vlneval.diagnostics.budget import DEFAULT_BUDGETS, length_ratio, within_budget
from vlneval.diagnostics.context import EpisodeContext, episode_context, path_groups
from vlneval.diagnostics.failures import FailureBreakdown, failure_breakdown, step_limit_from_card
from vlneval.diagnostics.intervals import column_intervals, resampling_unit
from vlneval.diagnostics.scored import ScoredRun
from vlneval.metrics.info import LABELS
from vlneval.stats import Interval

__all__ = ["Diagnostics", "diagnose", "metric_columns", "budget_label", "GROUP_METRICS"]

#: Metrics shown per group (when the profile reports them).
GROUP_METRICS = ("SR", "OSR", "SPL", "NE", "nDTW")


def budget_label(budget: float) -> str:
    """``SR@1.5×`` for a budget of 1.5.

    Example:
        >>> budget_label(1.0), budget_label(1.25)
        ('SR@1×', 'SR@1.25×')
    """
    return f"SR@{budget:g}×"


@dataclass
class Diagnostics:
    """Diagnostics of one run.

    Attributes:
        label: the run's name.
        context: per-episode facts (scan, d*, reference and instruction lengths).
        intervals: metric label -> bootstrap interval of its mean (None if no finite value).
        failures: the outcome classes, or None when d* is unknown.
        budgets: budget b -> SR@b with its interval (empty when d* is unknown).
        ratio: ``TL / d*`` per episode.
        groups: name of the grouping -> rows (``scan``, ``reference length``,
            ``instruction length``).
        settings: how the intervals were made (resamples, confidence, seed, clustering).
    """

    label: str
    context: EpisodeContext
    intervals: dict[str, Interval | None]
    failures: FailureBreakdown | None
    budgets: dict[float, Interval]
    ratio: np.ndarray
    groups: dict[str, list[GroupRow]]
    settings: dict[str, Any]

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON values (no per-episode arrays)."""
        return {
            "label": self.label,
            "intervals": {
                k: (None if v is None else v.to_dict()) for k, v in self.intervals.items()
            },
            "failures": None if self.failures is None else self.failures.to_dict(),
            "budgeted_success": [
                {"budget": b, "label": budget_label(b), **ci.to_dict()}
                for b, ci in self.budgets.items()
            ],
            "groups": {k: [r.to_dict() for r in rows] for k, rows in self.groups.items()},
            "settings": self.settings,
        }


def metric_columns(run: ScoredRun) -> dict[str, np.ndarray]:
    """Label -> per-episode values of every metric the run's profile reports.

    A label's column is the metric table's (``SPD`` -> ``spd``); a label the table does not
    know is looked up as a column of its own name.

    Example:
        >>> from vlneval.evaluation import Scorer
        >>> from vlneval.tasks.common.root import demo_root
        >>> from vlneval.diagnostics.scored import score_run
        >>> run = score_run(Scorer("demo"), demo_root() / "demo" / "predictions_val.json")
        >>> list(metric_columns(run))[:4]
        ['TL', 'NE', 'OSR', 'SR']
    """
    per = run.evaluation.per_episode
    out = {}
    for label in run.evaluation.metrics:
        column = LABELS[label].column if label in LABELS else label
        if column in per:
            out[label] = np.asarray(per[column], dtype=np.float64)
    return out


def diagnose(
    run: ScoredRun,
    *,
    rng: np.random.Generator | int = 0,
    n_resamples: int = 2000,
    confidence: float = 0.95,
    cluster_by_scan: bool = False,
    by_episode: bool = False,
    budgets: Sequence[float] = DEFAULT_BUDGETS,
    step_limit: int | None = None,
    n_bins: int = 4,
) -> Diagnostics:
    """Intervals, outcome classes, budgeted success and group breakdowns of ``run``.

    Args:
        run: a scored run (:func:`vlneval.diagnostics.score_run`).
        rng: generator or seed of the bootstrap.
        n_resamples, confidence: of the bootstrap intervals.
        cluster_by_scan: resample scans, then episodes within them (two-stage bootstrap),
            since episodes of one house are not independent.
        by_episode: resample episodes even when some share a path (by default whole paths
            are resampled, :func:`~vlneval.diagnostics.intervals.resampling_unit`).
        budgets: path-length budgets (multiples of d*) for budgeted success.
        step_limit: the run's step limit; default: the one its protocol card records.
        n_bins: number of quantile bins for reference and instruction lengths.

    Example:
        >>> from vlneval.evaluation import Scorer
        >>> from vlneval.tasks.common.root import demo_root
        >>> from vlneval.diagnostics.scored import score_run
        >>> run = score_run(Scorer("demo"), demo_root() / "demo" / "predictions_val.json")
        >>> d = diagnose(run, n_resamples=200)
        >>> d.intervals["SR"].estimate == run.evaluation.metrics["SR"]
        True
        >>> sum(d.failures.counts[c] or 0 for c in d.failures.counts) == len(run.evaluation.scored)
        True
    """
    ev = run.evaluation
    per = ev.per_episode
    ctx = episode_context(ev, run.graphs)
    gen = np.random.default_rng(rng)
    limit = step_limit if step_limit is not None else step_limit_from_card(dict(ev.protocol))
    metrics = metric_columns(run)
    known = bool(np.isfinite(ctx.shortest).all()) and "success" in per
    failures = None
    budget_columns: dict[str, np.ndarray] = {}
    if known:
        failures = failure_breakdown(
            per["success"],
            per["oracle_success"],
            per["path_length"],
            ctx.shortest,
            steps=per.get("steps"),
            step_limit=limit,
            episode_ids=run.episode_ids,
        )
        budget_columns = {
            budget_label(b): within_budget(per["success"], per["path_length"], ctx.shortest, b)
            for b in budgets
        }
    # One bootstrap for the metrics and the budgets: the same resamples for all of them.
    groups, two_stage, unit = resampling_unit(
        ctx.scans, path_groups(ev), by_scan=cluster_by_scan, by_episode=by_episode
    )
    table = column_intervals(
        {**metrics, **budget_columns},
        rng=gen,
        n_resamples=n_resamples,
        confidence=confidence,
        groups=groups,
        two_stage=two_stage,
        rates=[*(k for k in metrics if k in LABELS and LABELS[k].kind == "rate"), *budget_columns],
    )
    intervals = {k: table[k] for k in metrics}
    budget_ci: dict[float, Interval] = {}
    for b in budgets if known else ():
        ci = table[budget_label(b)]
        if ci is not None:
            budget_ci[float(b)] = ci
    shown = {k: metrics[k] for k in GROUP_METRICS if k in metrics} or metrics  # Touchdown, SDR: all
    return Diagnostics(
        label=run.label,
        context=ctx,
        intervals=intervals,
        failures=failures,
        budgets=budget_ci,
        ratio=_ratio(per, ctx),
        groups=_groups(ctx, shown, n_bins),
        settings={
            "n_resamples": n_resamples,
            "confidence": confidence,
            **unit,
            "step_limit": limit,
            "budgets": [float(b) for b in budgets],
        },
    )


def _ratio(per: Mapping[str, np.ndarray], ctx: EpisodeContext) -> np.ndarray:
    if "path_length" not in per:
        return np.full(ctx.shortest.shape, np.nan)
    return length_ratio(per["path_length"], ctx.shortest)


def _groups(
    ctx: EpisodeContext, shown: dict[str, np.ndarray], n_bins: int
) -> dict[str, list[GroupRow]]:
    out = {"scan": breakdown(ctx.scans, shown)}
    if np.isfinite(ctx.reference_length).any():
        keys, order = quantile_bins(ctx.reference_length, n_bins=n_bins, unit="m", decimals=1)
        out["reference length"] = breakdown(keys, shown, order=order)
    keys, order = quantile_bins(ctx.instruction_words, n_bins=n_bins, unit="words")
    out["instruction length"] = breakdown(keys, shown, order=order)
    return out
