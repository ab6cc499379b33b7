"""Fair comparison of two runs: comparable protocol cards, then paired tests on shared episodes.

Two results are compared only when their protocol cards agree on the task, the split, the
dataset version, the scoring profile (name and version), every other ``scoring`` field (the
ground truth and rules they were scored by: threshold, comparison, NDH path type, VLN-CE
distance source...) and privileged access (``spec/protocol.md``); otherwise
:func:`check_comparable` refuses unless forced, and a forced comparison lists the differences
in every output. Other card differences (observations, action space, budget...) are listed as
notes. Runs aggregated over seeds must also have scored the same number of episodes.

The comparison itself is paired, episode by episode, on the episodes both runs scored:
``Δ = B − A`` (run B, the candidate, minus run A, the baseline) with a paired bootstrap
interval and a paired sign-flip permutation test, Holm-adjusted across the metrics
(:func:`vlneval.stats.compare_runs`). The unit resampled is the path when episodes share one
(R2R's three instructions of a path are not independent): whole paths are resampled and the
signs of their sums of differences flipped together. With ``by_episode`` (or no shared path)
episodes are the unit and 0/1 metrics (SR, OSR) get McNemar's exact test.
"""

from __future__ import annotations

import dataclasses
import difflib
import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from vlneval.diagnostics.context import path_groups
from vlneval.diagnostics.diagnose import metric_columns
from vlneval.diagnostics.intervals import resampling_unit
from vlneval.diagnostics.scored import ScoredRun
from vlneval.distributed.merge import without_calls
from vlneval.errors import VLNEvalError
from vlneval.metrics.info import LABELS
from vlneval.reports.terminal import same_results
from vlneval.stats import Comparison, RunSummary, aggregate_runs, compare_runs, holm_adjust
from vlneval.tasks import get_profile
from vlneval.tasks.common.protocol import episodes_text

__all__ = [
    "AggregateResult",
    "RunComparison",
    "MultiComparison",
    "compare_many",
    "b_is_better",
    "significant",
    "significance_level",
    "verdict",
    "scan_interval_note",
    "p_floor",
    "p_value_tests",
    "direction_text",
    "aggregate_summaries",
    "card_differences",
    "card_notes",
    "check_comparable",
    "merged_card",
    "compare_scored",
    "paired_runs",
]

_NOTE_FIELDS = (
    "observations",
    "map",
    "action_space",
    "inference_budget",
    "executed_path",
    "checkpoint_selection",
)


def _refusal_view(card: Mapping[str, Any], episodes: bool) -> dict[str, str]:
    """The card fields that must agree. ``reproduces`` is left out: it describes the profile,
    whose name and version are compared."""
    scoring = _hops_threshold(dict(card.get("scoring") or {}))
    scoring.pop("reproduces", None)
    view = {k: str(card.get(k)) for k in ("task", "split", "data_version")}
    if episodes:
        view["episodes"] = episodes_text(card)
    view["profile"] = f"{scoring.pop('profile', None)} v{scoring.pop('profile_version', None)}"
    view |= {k: str(v) for k, v in scoring.items()}
    return view | {"privileged": _access(card)}


def _hops_threshold(scoring: dict[str, Any]) -> dict[str, Any]:
    """``scoring`` with the ``threshold_m`` of a street profile's card written before the key
    was named for its unit read as ``threshold_hops`` (the same threshold, in hops).

    Example:
        >>> _hops_threshold({"profile": "touchdown", "threshold_m": 1.0})
        {'profile': 'touchdown', 'threshold_hops': 1.0}
    """
    if "threshold_m" not in scoring:
        return scoring
    try:
        unit = get_profile(str(scoring.get("profile"))).threshold_unit
    except VLNEvalError:  # a profile this vlneval does not know: its key stays as written
        return scoring
    if unit != "m":
        scoring[f"threshold_{unit}"] = scoring.pop("threshold_m")
    return scoring


def _access(card: Mapping[str, Any]) -> str:
    """The card's privileged access without its call count (the environment appends how often
    a run used its privileged channel; that count varies from seed to seed, so the refusal
    compares what the channel gives, and the count is a note).

    Example:
        >>> _access({"privileged": "goals through env.privileged() (3 calls)"})
        'goals through env.privileged()'
    """
    return without_calls(str(card.get("privileged")))


def card_differences(
    card_a: Mapping[str, Any], card_b: Mapping[str, Any], *, episodes: bool = False
) -> list[str]:
    """The fields that make two results incomparable: task, split, dataset version, profile,
    every other ``scoring`` field, privileged access (what the channel gives, not how often
    it was used), and with ``episodes`` the episodes
    scored (a seed aggregate; a comparison pairs the episodes both runs scored instead).

    Example:
        >>> a = {"task": "r2r", "split": "val_unseen", "privileged": "none",
        ...      "scoring": {"profile": "r2r", "profile_version": "1"}}
        >>> card_differences(a, {**a, "split": "val_seen"})
        ['split: val_unseen (A) vs val_seen (B)']
        >>> ndh = {**a, "scoring": {**a["scoring"], "path_type": "planner_path"}}
        >>> card_differences(a, ndh)
        ['path_type: None (A) vs planner_path (B)']
    """
    view_a, view_b = _refusal_view(card_a, episodes), _refusal_view(card_b, episodes)
    if _one_version_unknown(card_a, card_b):  # a note (card_notes), not a refusal
        del view_a["data_version"], view_b["data_version"]
    return _differing(view_a, view_b, dict.fromkeys([*view_a, *view_b]))


def _one_version_unknown(card_a: Mapping[str, Any], card_b: Mapping[str, Any]) -> bool:
    """Whether one card names no dataset version (its episodes file was given explicitly,
    ``--episodes``) and the other does: then nothing says the versions differ."""
    return (card_a.get("data_version") is None) != (card_b.get("data_version") is None)


def card_notes(card_a: Mapping[str, Any], card_b: Mapping[str, Any]) -> list[str]:
    """Other protocol fields that differ (worth reading, not a reason to refuse), and the
    privileged calls when only their count differs.

    Example:
        >>> card_notes({"map": "given graph"}, {"map": "built online"})
        ['map: given graph (A) vs built online (B)']
    """
    same_access = _access(card_a) == _access(card_b)
    fields = [*_NOTE_FIELDS, "privileged"] if same_access else list(_NOTE_FIELDS)
    if _one_version_unknown(card_a, card_b):
        fields.append("data_version")
    return _differing(card_a, card_b, fields)


def _differing(a: Mapping[str, Any], b: Mapping[str, Any], keys: Iterable[str]) -> list[str]:
    return [f"{k}: {a.get(k)} (A) vs {b.get(k)} (B)" for k in keys if a.get(k) != b.get(k)]


def check_comparable(
    card_a: Mapping[str, Any], card_b: Mapping[str, Any], *, force: bool = False
) -> list[str]:
    """The card differences; raises unless there are none or ``force`` is set.

    Raises:
        VLNEvalError: the cards differ (:func:`card_differences`) and ``force`` is False;
            the message names every difference.

    Example:
        >>> a = {"task": "r2r", "split": "val_unseen", "privileged": "none",
        ...      "scoring": {"profile": "r2r", "profile_version": "1"}}
        >>> check_comparable(a, dict(a))
        []
    """
    diffs = card_differences(card_a, card_b)
    if diffs and not force:
        raise VLNEvalError(
            "refusing to compare results whose protocol cards differ ("
            + "; ".join(diffs)
            + "): their numbers are not comparable. Pass --force to compare anyway; the "
            "output will say so."
        )
    return diffs


@dataclass
class RunComparison:
    """The paired comparison of run B against run A.

    Attributes:
        label_a, label_b: the runs' names (A the baseline, B the candidate).
        metrics: label -> :class:`~vlneval.stats.Comparison` with ``mean_a`` = B's mean,
            ``mean_b`` = A's mean and ``difference`` = B − A (the stats convention a − b).
        n_paired: episodes scored by both; n_only_a / n_only_b: scored by one run only.
        success: SR outcome pairs: ``both``, ``only_a``, ``only_b``, ``neither``.
        differences: card differences that were forced past (empty when comparable).
        notes: other card differences.
        settings: seed, resamples, confidence, correction, resampling unit.
        cards: the two protocol cards, ``{"A": ..., "B": ...}``.
        warnings: each run's scoring warnings (failed checks among them),
            ``{"A": [...], "B": [...]}``: what the comparison's numbers rest on.
        unavailable: label -> why it is n/a (no paired episode where both runs' values are
            finite, e.g. NE infinite in every episode of one run); the other metrics are
            compared without it.
    """

    label_a: str
    label_b: str
    metrics: dict[str, Comparison]
    n_paired: int
    n_only_a: int
    n_only_b: int
    success: dict[str, int] | None
    differences: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    settings: dict[str, Any] = field(default_factory=dict)
    cards: dict[str, Any] = field(default_factory=dict)
    warnings: dict[str, list[str]] = field(default_factory=dict)
    unavailable: dict[str, str] = field(default_factory=dict)

    @property
    def forced(self) -> bool:
        """True when the cards differ and the comparison was forced."""
        return bool(self.differences)

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON values, with ``A``/``B`` named explicitly in every row."""
        rows = []
        for label, c in self.metrics.items():
            rows.append(
                {
                    "metric": label,
                    "mean_A": c.mean_b,
                    "mean_B": c.mean_a,
                    "difference_B_minus_A": c.difference,
                    "ci_low": c.ci_low,
                    "ci_high": c.ci_high,
                    "confidence": c.confidence,
                    "p_value": c.p_value,
                    "p_holm": c.p_adjusted,
                    "test": c.test,
                    "n": c.n,
                    "direction": direction_text(label),
                    "B_is_better": b_is_better(label, c),  # the direction of Δ, whatever p
                    "verdict": verdict(label, c),
                }
            )
        return {
            "A": self.label_a,
            "B": self.label_b,
            "n_paired": self.n_paired,
            "n_only_A": self.n_only_a,
            "n_only_B": self.n_only_b,
            "forced": self.forced,
            "card_differences": self.differences,
            "card_notes": self.notes,
            "success_pairs": self.success,
            "metrics": rows,
            "unavailable": dict(self.unavailable),
            "settings": self.settings,
            "protocol": self.cards,
            "warnings": self.warnings,
        }


def direction_text(label: str) -> str:
    """``"higher is better"``, ``"lower is better"`` or ``"neutral"``, from the metric table
    (``"unknown"`` for a label it does not know).

    Example:
        >>> direction_text("SPD"), direction_text("SED"), direction_text("TL")
        ('lower is better', 'higher is better', 'neutral')
    """
    info = LABELS.get(label)
    return info.direction_text if info is not None else "unknown"


def b_is_better(label: str, comparison: Comparison) -> bool | None:
    """Whether run B's mean is better than run A's by the metric's direction (whatever the
    p-value): ``difference`` = B − A, so B is better when it rose for a higher-is-better metric
    and fell for a lower-is-better one. None for a neutral or unknown metric or no difference.

    Example:
        >>> from vlneval.stats import Comparison
        >>> c = Comparison("SPD", 1.0, 2.0, -1.0, -1.5, -0.5, 0.01, "permutation", 50, 0.95)
        >>> b_is_better("SPD", c), b_is_better("SED", c), b_is_better("TL", c)
        (True, False, None)
    """
    info = LABELS.get(label)
    return info.improves(comparison.difference) if info is not None else None


def p_value_tests(runs: Sequence[RunComparison]) -> str:
    """The tests behind a comparison's p-values, as its rows used them: per-scan or per-path
    sign flips when clustered, McNemar's test and episode sign flips otherwise.

    Example:
        >>> p_value_tests([])
        'McNemar exact (0/1 metrics) or paired permutation'
    """
    if any(c.test.startswith("cluster-") for r in runs for c in r.metrics.values()):
        unit = "scan" if runs[0].settings.get("n_scans") is not None else "path"
        return f"cluster permutation (signs flipped per {unit})"
    return "McNemar exact (0/1 metrics) or paired permutation"


def p_floor(comparison: Comparison, n_permutations: int) -> float | None:
    """``1 / (N + 1)`` when the p-value is a Monte Carlo one at that floor (N sign flips): the
    test cannot resolve a smaller p, so it is shown as "≤" the floor, not "<" a round number.
    None otherwise.

    Example:
        >>> from vlneval.stats import Comparison
        >>> c = Comparison("TL", 1.0, 2.0, -1.0, -1.5, -0.5, 1 / 10001,
        ...                "permutation-monte-carlo", 50, 0.95)
        >>> f"{p_floor(c, 10000):.2g}", p_floor(dataclasses.replace(c, p_value=0.5), 10000)
        ('0.0001', None)
    """
    floor = 1.0 / (n_permutations + 1)
    p = comparison.p_value
    monte_carlo = comparison.test.endswith("monte-carlo")
    return floor if monte_carlo and p is not None and p <= floor * (1 + 1e-9) else None


def significance_level(confidence: float) -> float:
    """``α = 1 − confidence`` without the rounding of the subtraction (``1 − 0.95`` is
    0.050000000000000044 in floating point, which would count p = 0.05 as below α).

    Example:
        >>> significance_level(0.95), significance_level(0.975)
        (0.05, 0.025)
    """
    return round(1.0 - confidence, 12)


def significant(comparison: Comparison) -> bool:
    """Whether the Holm-adjusted p-value is strictly below ``α = 1 − confidence``
    (:func:`significance_level`): p = α is not significant.

    Example:
        >>> from vlneval.stats import Comparison
        >>> c = Comparison("SR", 0.6, 0.5, 0.1, 0.05, 0.15, 0.001, "mcnemar-exact", 100, 0.95)
        >>> significant(c), significant(dataclasses.replace(c, p_adjusted=0.01))
        (False, True)
        >>> significant(dataclasses.replace(c, p_adjusted=0.05))
        False
    """
    p = comparison.p_adjusted
    return p is not None and p < significance_level(comparison.confidence)


def verdict(label: str, comparison: Comparison) -> str:
    """What a comparison's row says, from its Holm-adjusted p (:func:`significant`) and the
    metric's direction (:func:`b_is_better`): ``"B better"``, ``"B worse"``, ``"B higher"`` or
    ``"B lower"`` (a significant difference in a metric without a direction), or ``"no
    detectable difference"``. ``B_is_better`` in the JSON is only the direction of Δ.

    Example:
        >>> from vlneval.stats import Comparison
        >>> c = Comparison("SR", 0.6, 0.5, 0.1, 0.05, 0.15, 0.001, "mcnemar-exact", 100, 0.95)
        >>> verdict("SR", c), verdict("SR", dataclasses.replace(c, p_adjusted=0.01))
        ('no detectable difference', 'B better')
        >>> verdict("TL", dataclasses.replace(c, p_adjusted=0.01))
        'B higher'
    """
    if not significant(comparison):
        return "no detectable difference"
    better = b_is_better(label, comparison)
    if better is None:
        return "B higher" if comparison.difference > 0 else "B lower"
    return "B better" if better else "B worse"


def scan_interval_note(cmp: RunComparison) -> str:
    """Why, with ``--by-scan``, an interval can exclude 0 while the p column finds no
    difference ("" without it): the two resample differently.

    Example:
        >>> cmp = RunComparison("a", "b", {}, 36, 0, 0, None, settings={"n_scans": 11})
        >>> print(scan_interval_note(cmp))
        intervals: a two-stage bootstrap (11 scans resampled, then episodes in them), per metric and not Holm-adjusted; with few scans it is approximate and often too narrow, while p flips the signs of whole scans exactly: read significance from p (Holm), not from an interval excluding 0
    """
    k = cmp.settings.get("n_scans")
    if k is None:
        return ""
    return (
        f"intervals: a two-stage bootstrap ({k} scans resampled, then episodes in them), per "
        "metric and not Holm-adjusted; with few scans it is approximate and often too narrow, "
        "while p flips the signs of whole scans exactly: read significance from p (Holm), not "
        "from an interval excluding 0"
    )


def _pairing(a: ScoredRun, b: ScoredRun) -> tuple[np.ndarray, np.ndarray]:
    """Positions in A and in B of the episodes both scored, in A's order."""
    where_b = b.positions
    pos_a, pos_b = [], []
    for k, eid in enumerate(a.episode_ids):
        j = where_b.get(eid)
        if j is not None:
            pos_a.append(k)
            pos_b.append(j)
    return np.array(pos_a, dtype=np.int64), np.array(pos_b, dtype=np.int64)


def paired_runs(a: ScoredRun, b: ScoredRun) -> tuple[ScoredRun, ScoredRun]:
    """The two runs on the episodes both scored, for tables that show them side by side (a
    run that scored no other episode comes back as it is).

    Example:
        >>> from vlneval.evaluation import Scorer
        >>> from vlneval.tasks.common.root import demo_root
        >>> from vlneval.diagnostics import score_run
        >>> run = score_run(Scorer("demo"), demo_root() / "demo" / "predictions_val.json")
        >>> part = _on_episodes(run, np.arange(3))
        >>> a, b = paired_runs(run, part)
        >>> a.episode_ids == part.episode_ids, b is part, len(a.trajectory(2)) > 0
        (True, True, True)
    """
    pos_a, pos_b = _pairing(a, b)
    return _on_episodes(a, np.sort(pos_a)), _on_episodes(b, np.sort(pos_b))


def _on_episodes(run: ScoredRun, keep: np.ndarray) -> ScoredRun:
    """``run`` on its scored episodes at positions ``keep`` (ascending), with their
    per-episode columns and trajectories; its summary metrics stay the whole run's."""
    ev = run.evaluation
    if keep.size == ev.scored.size:
        return run
    columns = {name: np.asarray(values)[keep] for name, values in ev.per_episode.items()}
    evaluation = dataclasses.replace(ev, scored=ev.scored[keep], per_episode=columns)
    if run.nodes is None or run.offsets is None:
        return ScoredRun(evaluation, run.label, run.graphs)
    starts, ends = run.offsets[keep], run.offsets[keep + 1]
    pieces = [run.nodes[s:e] for s, e in zip(starts.tolist(), ends.tolist(), strict=True)]
    nodes = np.concatenate(pieces) if pieces else run.nodes[:0]
    offsets = np.concatenate([[0], np.cumsum(ends - starts)]).astype(run.offsets.dtype)
    return ScoredRun(evaluation, run.label, run.graphs, nodes, offsets)


def compare_scored(
    a: ScoredRun,
    b: ScoredRun,
    *,
    rng: np.random.Generator | int = 0,
    n_resamples: int = 2000,
    n_permutations: int = 10000,
    confidence: float = 0.95,
    cluster_by_scan: bool = False,
    by_episode: bool = False,
    force: bool = False,
    metrics: Sequence[str] | None = None,
) -> RunComparison:
    """Compares run B (candidate) with run A (baseline) on the episodes both scored.

    Args:
        a, b: the runs (:func:`vlneval.diagnostics.score_run`).
        rng: generator or seed (bootstrap, then Monte Carlo permutations).
        n_resamples, n_permutations, confidence: of :func:`vlneval.stats.compare_runs`.
        cluster_by_scan: resample scans then episodes, and flip signs per scan.
        by_episode: resample episodes, and McNemar's test for 0/1 metrics, even when
            episodes share a path (by default whole paths are resampled and their sums of
            differences sign-flipped: R2R's three instructions of a path are not independent).
        force: compare even when the protocol cards differ (the result lists how).
        metrics: labels to compare (default: every metric both runs report).

    Raises:
        VLNEvalError: incomparable cards without ``force``, no shared episode, or an unknown
            metric.
    """
    summary_a, summary_b = a.evaluation.to_dict(), b.evaluation.to_dict()
    card_a, card_b = summary_a["protocol"], summary_b["protocol"]
    diffs = check_comparable(card_a, card_b, force=force)
    pos_a, pos_b = _pairing(a, b)
    if pos_a.size == 0:
        raise VLNEvalError(f"{a.label} and {b.label} share no scored episode; nothing to pair")
    cols_a, cols_b = metric_columns(a), metric_columns(b)
    names = [m for m in cols_a if m in cols_b] if metrics is None else list(metrics)
    unknown = [m for m in names if m not in cols_a or m not in cols_b]
    if unknown:
        raise _unknown_metrics(unknown, [m for m in cols_a if m in cols_b])
    gen = np.random.default_rng(rng)  # a Generator is used as it is
    scans = np.array([a.evaluation.episodes.scans[i] for i in a.evaluation.scored[pos_a]])
    paths = path_groups(a.evaluation)
    if paths is not None:
        paths = paths[pos_a]
        paths = None if np.unique(paths).size == paths.size else paths
    groups, two_stage, unit = resampling_unit(
        scans, paths, by_scan=cluster_by_scan, by_episode=by_episode
    )
    unavailable = {
        m: _no_finite_pair(cols_a[m][pos_a], cols_b[m][pos_b], a.label, b.label)
        for m in names
        if not (np.isfinite(cols_a[m][pos_a]) & np.isfinite(cols_b[m][pos_b])).any()
    }
    names = [m for m in names if m not in unavailable]
    pairs_b = {m: cols_b[m][pos_b] for m in names}
    pairs_a = {m: cols_a[m][pos_a] for m in names}
    table = _paired(
        pairs_b, pairs_a, gen, n_resamples, n_permutations, confidence, (groups, two_stage)
    )
    success = None
    if "SR" in pairs_a:
        sa, sb = pairs_a["SR"] != 0, pairs_b["SR"] != 0
        success = {
            "both": int((sa & sb).sum()),
            "only_a": int((sa & ~sb).sum()),
            "only_b": int((~sa & sb).sum()),
            "neither": int((~sa & ~sb).sum()),
        }
    return RunComparison(
        label_a=a.label,
        label_b=b.label,
        metrics=table,
        n_paired=int(pos_a.size),
        n_only_a=len(a.episode_ids) - int(pos_a.size),
        n_only_b=len(b.episode_ids) - int(pos_b.size),
        success=success,
        differences=diffs,
        notes=card_notes(card_a, card_b),
        settings={
            "n_resamples": n_resamples,
            "n_permutations": n_permutations,
            "confidence": confidence,
            "correction": "holm",
            "seed": rng if isinstance(rng, int) else None,
            **unit,
        },
        cards={"A": card_a, "B": card_b},
        warnings={"A": list(summary_a["warnings"]), "B": list(summary_b["warnings"])},
        unavailable=unavailable,
    )


def _no_finite_pair(values_a: np.ndarray, values_b: np.ndarray, name_a: str, name_b: str) -> str:
    """Why a metric has no paired episode to compare: the run(s) with no finite value.

    Example:
        >>> inf = np.array([np.inf, np.inf])
        >>> _no_finite_pair(inf, np.array([1.0, 2.0]), "a", "b")
        'not finite (inf or NaN) in any of the 2 paired episodes of A (a): no episode left to compare'
    """
    runs = [
        f"{run} ({name})"
        for run, name, values in (("A", name_a, values_a), ("B", name_b, values_b))
        if not np.isfinite(values).any()
    ]
    where = " and ".join(runs) if runs else "A and B together (never both finite)"
    return (
        f"not finite (inf or NaN) in any of the {values_a.size} paired episodes of {where}: "
        "no episode left to compare"
    )


def _unknown_metrics(unknown: list[str], reported: list[str]) -> VLNEvalError:
    """The error for labels to compare that both runs do not report: the closest reported
    label for a typo (labels are case-sensitive, ``SPL`` not ``spl``), else the reason.

    Example:
        >>> print(_unknown_metrics(["spl", "SRR", "GP"], ["SR", "SPL"]))
        --metrics: 'spl' is not a label; did you mean 'SPL'?; 'SRR': did you mean 'SR'?; 'GP' is not reported by both runs (they report: SR, SPL)
    """
    why = []
    for m in unknown:
        close = [r for r in reported if r.casefold() == m.casefold()]
        close = close or difflib.get_close_matches(m, reported, n=1)
        if m in LABELS or not close:
            why.append(f"{m!r} is not reported by both runs")
        elif close[0].casefold() == m.casefold():
            why.append(f"{m!r} is not a label; did you mean {close[0]!r}?")
        else:
            why.append(f"{m!r}: did you mean {close[0]!r}?")
    return VLNEvalError(f"--metrics: {'; '.join(why)} (they report: {', '.join(reported)})")


def _paired(
    cand: dict[str, np.ndarray],
    base: dict[str, np.ndarray],
    gen: np.random.Generator,
    n_resamples: int,
    n_permutations: int,
    confidence: float,
    unit: tuple[np.ndarray | None, bool],
) -> dict[str, Comparison]:
    """``compare_runs`` on the metrics that are finite everywhere, one by one (omitting
    non-finite episodes) on the others, then Holm across all of them."""
    finite = [m for m in cand if np.isfinite(cand[m]).all() and np.isfinite(base[m]).all()]

    def run(names: list[str], nan_policy: str) -> dict[str, Comparison]:
        return compare_runs(
            {m: cand[m] for m in names},
            {m: base[m] for m in names},
            rng=gen,
            n_resamples=n_resamples,
            n_permutations=n_permutations,
            confidence=confidence,
            groups=unit[0],
            two_stage=unit[1],
            nan_policy=nan_policy,
        )

    out: dict[str, Comparison] = run(finite, "raise") if finite else {}
    for m in cand:
        if m not in out:
            out.update(run([m], "omit"))
    ordered = {m: out[m] for m in cand}
    adjusted = holm_adjust([c.p_value for c in ordered.values()])
    return {
        m: dataclasses.replace(c, p_adjusted=float(p), correction="holm")
        for (m, c), p in zip(ordered.items(), adjusted, strict=True)
    }


@dataclass
class MultiComparison:
    """Several candidates (B, C, ...) each compared with one baseline A, Holm-adjusted over
    every candidate × metric together (the family of a table with several rows).

    Attributes:
        label_a: the baseline's name.
        runs: one :class:`RunComparison` per candidate, in the given order; each one's
            ``p_adjusted`` is the joint Holm adjustment.
        means_a: label -> A's mean over every episode it scored (finite values), the
            baseline row of a paper table whatever the candidates' pairings.
    """

    label_a: str
    runs: list[RunComparison]
    means_a: dict[str, float] = field(default_factory=dict)

    @property
    def n_tests(self) -> int:
        """The size of the Holm family: candidates × metrics."""
        return sum(len(r.metrics) for r in self.runs)

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON values: the baseline, each candidate's comparison, the family size."""
        return {
            "A": self.label_a,
            "candidates": [r.label_b for r in self.runs],
            "correction": "holm",
            "n_tests": self.n_tests,
            "comparisons": [r.to_dict() for r in self.runs],
        }


def compare_many(
    a: ScoredRun,
    others: Sequence[ScoredRun],
    progress: Callable[[int], None] | None = None,
    **options: Any,
) -> RunComparison | MultiComparison:
    """Compares each of ``others`` with the baseline ``a`` (:func:`compare_scored`, each with
    the same ``options``, a seed giving every candidate the same resampling stream), then
    Holm-adjusts every candidate × metric p-value together. One candidate: its
    :class:`RunComparison` as :func:`compare_scored` returns it. ``progress`` is called with
    each candidate's index once it is compared (resampling takes long).

    Raises:
        VLNEvalError: as :func:`compare_scored`, naming the candidate.
    """
    if not others:
        raise VLNEvalError("compare needs a baseline and at least one candidate")
    runs = []
    for k, b in enumerate(others):
        runs.append(compare_scored(a, b, **options))
        if progress is not None:
            progress(k)
    if len(runs) == 1:
        return runs[0]
    flat = [(r, m) for r in runs for m in r.metrics]
    adjusted = holm_adjust([r.metrics[m].p_value for r, m in flat]).tolist() if flat else []
    for (r, m), p in zip(flat, adjusted, strict=True):
        r.metrics[m] = dataclasses.replace(r.metrics[m], p_adjusted=float(p), correction="holm")
    for r in runs:
        r.settings["correction"] = f"holm over {len(flat)} tests ({len(runs)} runs × metrics)"
    compared = {m for r in runs for m in r.metrics}
    cols = metric_columns(a)
    means = {
        m: float(np.nanmean(v)) for m, v in cols.items() if m in compared and np.isfinite(v).any()
    }
    return MultiComparison(a.label, runs, means)


@dataclass
class AggregateResult:
    """Metrics of several runs (seeds) of one setting, summarised over runs.

    Attributes:
        labels: the runs' names.
        metrics: label -> :class:`~vlneval.stats.RunSummary` (mean, std, min, max, t interval).
        differences: card differences forced past (each names the run).
        card: the runs' merged protocol card (:func:`merged_card`).
        left_out: label -> why it is not aggregated (null in some run, and that run's
            reason).
        warnings: what the reader must know, e.g. a run whose results equal another's.
    """

    labels: list[str]
    metrics: dict[str, RunSummary]
    differences: list[str]
    card: dict[str, Any]
    left_out: dict[str, str] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON values."""
        return {
            "runs": self.labels,
            "n_runs": len(self.labels),
            "forced": bool(self.differences),
            "card_differences": self.differences,
            "metrics": {k: v.to_dict() for k, v in self.metrics.items()},
            "unavailable": dict(self.left_out),
            "warnings": list(self.warnings),
            "protocol": self.card,
        }


#: Why a run whose results equal another's misleads an aggregate.
SEEDS_TWICE = (
    "one run counted twice is no seed variation, yet the std and interval count it as another seed"
)


def aggregate_summaries(
    summaries: Sequence[Mapping[str, Any]],
    labels: Sequence[str],
    *,
    confidence: float = 0.95,
    force: bool = False,
) -> AggregateResult:
    """Aggregates the summary metrics of several runs of one setting (e.g. seeds).

    Every run's card must match the first one's (:func:`card_differences`, the episodes
    scored included: a mean over runs on different episodes is no seed variation), and so must
    the number of episodes each metric averages (:func:`_count_differences`), unless
    ``force``. Metrics that are null in some run are left out. Each interval is clipped
    to its metric's range (:attr:`~vlneval.metrics.MetricInfo.bounds`; see
    :func:`~vlneval.stats.aggregate_scores` for why). A run whose results equal an earlier
    run's to the last digit is warned about (:func:`~vlneval.reports.terminal.same_results`).

    Example:
        >>> card = {"task": "r2r", "split": "val_unseen", "privileged": "none",
        ...         "scoring": {"profile": "r2r", "profile_version": "1"}}
        >>> runs = [{"metrics": {"SR": 0.5}, "protocol": card},
        ...         {"metrics": {"SR": 0.6}, "protocol": card}]
        >>> round(aggregate_summaries(runs, ["s0", "s1"]).metrics["SR"].mean, 3)
        0.55
    """
    if not summaries:
        raise VLNEvalError("aggregate needs at least one run")
    first = summaries[0]
    diffs = []
    for label, s in zip(labels[1:], summaries[1:], strict=True):
        found = [
            d.replace("(A)", f"({labels[0]})").replace("(B)", f"({label})")
            for d in [
                *card_differences(first["protocol"], s["protocol"], episodes=True),
                *_count_differences(first, s),
            ]
        ]
        if found and not force:
            raise VLNEvalError(
                f"refusing to aggregate {label} with {labels[0]}: their protocol cards differ ("
                + "; ".join(found)
                + "). Pass --force to aggregate anyway; the output will say so."
            )
        diffs += found
    left_out = _left_out(summaries, labels)
    names = [m for m in first["metrics"] if m not in left_out]
    if not names:
        raise VLNEvalError(
            "the runs share no metric with a value ("
            + "; ".join(f"{m}: {why}" for m, why in left_out.items())
            + ")"
        )
    runs = [{m: float(s["metrics"][m]) for m in names} for s in summaries]
    bounds = {m: LABELS[m].bounds for m in names if m in LABELS}  # a rate's interval in [0, 1]
    for label, run in zip(labels, runs, strict=True):
        for m, (low, high) in bounds.items():
            if not low <= run[m] <= high:
                raise VLNEvalError(
                    f"{label}: {m} is {run[m]:g}, outside its range [{low:g}, {high:g}]"
                )
    return AggregateResult(
        list(labels),
        aggregate_runs(runs, confidence=confidence, bounds=bounds),
        diffs,
        merged_card([s["protocol"] for s in summaries], labels),
        left_out,
        same_results(summaries, labels, SEEDS_TWICE),
    )


def _count_differences(a: Mapping[str, Any], b: Mapping[str, Any]) -> list[str]:
    """The metrics two summaries average over different numbers of episodes (``averaged_over``,
    e.g. VLN-CE's NE over the reachable episodes only), as card differences.

    Example:
        >>> a = {"n_episodes": 4, "averaged_over": {"NE": 3}}
        >>> _count_differences(a, {"n_episodes": 4})
        ['NE averaged over: 3 of 4 episodes (A) vs 4 of 4 episodes (B)']
    """
    keys = dict.fromkeys([*(a.get("averaged_over") or {}), *(b.get("averaged_over") or {})])

    def counts(s: Mapping[str, Any]) -> dict[str, str]:
        n, over = s.get("n_episodes"), s.get("averaged_over") or {}
        return {f"{m} averaged over": f"{over.get(m, n)} of {n} episodes" for m in keys}

    return _differing(counts(a), counts(b), [f"{m} averaged over" for m in keys])


def merged_card(cards: Sequence[Mapping[str, Any]], labels: Sequence[str]) -> dict[str, Any]:
    """The protocol card of an aggregate of runs: ``n_runs`` their number, ``seeds`` every
    run's seeds in run order (when each run declares them), a field the runs agree on as they
    give it, and a field they give differently as ``{run: its value}``, named in
    ``differs_between_runs``.

    Example:
        >>> cards = [{"task": "r2r", "seeds": [0], "n_runs": 1, "model": "m"},
        ...          {"task": "r2r", "seeds": [1, 2], "n_runs": 1, "model": "n"}]
        >>> merged_card(cards, ["a", "b"])
        {'task': 'r2r', 'seeds': [0, 1, 2], 'n_runs': 2, 'model': {'a': 'm', 'b': 'n'}, \
'differs_between_runs': ['model']}
    """
    out: dict[str, Any] = {}
    differs = []
    for key in dict.fromkeys(k for card in cards for k in card):
        values = [card.get(key) for card in cards]
        if key == "n_runs":
            out[key] = len(cards)
        elif key == "seeds" and all(isinstance(v, (list, int)) for v in values):
            out[key] = [x for v in values for x in (v if isinstance(v, list) else [v])]
        elif all(v == values[0] for v in values):
            out[key] = values[0]
        else:
            out[key] = dict(zip(labels, values, strict=True))
            differs.append(key)
    return out | {"differs_between_runs": differs}


def _left_out(summaries: Sequence[Mapping[str, Any]], labels: Sequence[str]) -> dict[str, str]:
    """The metrics of the first run that some run lacks or has as null (or not finite), each
    with the first such run and its reason."""
    out: dict[str, str] = {}
    for m in summaries[0]["metrics"]:
        for label, s in zip(labels, summaries, strict=True):
            v = s["metrics"].get(m)
            if v is None or not isinstance(v, (int, float)) or not math.isfinite(v):
                why = (s.get("unavailable") or {}).get(m) or (
                    "not reported" if m not in s["metrics"] else f"its value is {v!r}"
                )
                out[m] = f"n/a in {label}: {why}"
                break
    return out
