"""The typed result of scoring one predictions file, and the one writer of its JSON shape.

Every scorer ends with a :class:`Result`: the metrics, the per-episode table (one numpy column
per quantity, aligned to the scored episodes), the metrics that could not be computed and why,
the consistency checks, the warnings and the protocol card. A scorer collects those parts in a
:class:`ResultBuilder` (:func:`~vlneval.tasks.common.checks.start_result` makes one with the
card and the checks every task shares) and builds the frozen ``Result`` once; nothing changes it
afterwards.
:meth:`Result.to_dict` is the only place that writes the summary record of ``spec/outputs.md``.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

import numpy as np

from vlneval._version import __version__
from vlneval.io import clip
from vlneval.tasks.common.episodes import EpisodeTable

if TYPE_CHECKING:
    from vlneval.tasks.profiles import Profile

__all__ = ["Check", "Result", "ResultBuilder", "finite_mean", "INT_COLUMNS"]

# Per-episode columns written as integers (0/1 flags and counts), as spec/outputs.md asks.
INT_COLUMNS = frozenset({
    "success", "oracle_success", "steps", "jumps", "repeated_viewpoints", "unreachable",
    "oracle_plan_success", "grounding_success", "det_success", "joint_success",
    "task_completion", "spd", "edit_distance", "moves", "help_requests", "goal_switched",
})  # fmt: skip


@dataclass(frozen=True)
class Check:
    """One consistency check of ``spec/metrics.md`` (e.g. ``SPL <= SR``).

    Attributes:
        name: the inequality checked.
        holds: whether it holds on this result.
        detail: the values compared.
        quirk: set when it fails by a documented quirk of the reproduced scorer.

    Example:
        >>> Check("SPL <= SR", True, "SPL 0.4, SR 0.5").to_dict()
        {'name': 'SPL <= SR', 'holds': True, 'detail': 'SPL 0.4, SR 0.5'}
    """

    name: str
    holds: bool
    detail: str
    quirk: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """The check as the summary's ``checks`` entry."""
        out: dict[str, Any] = {"name": self.name, "holds": self.holds, "detail": self.detail}
        if self.quirk is not None:
            out["quirk"] = self.quirk
        return out


def _frozen(mapping: Mapping[str, Any]) -> Mapping[str, Any]:
    return MappingProxyType(dict(mapping))


@dataclass(frozen=True, eq=False)
class Result:
    """One scored predictions file.

    Attributes:
        task, split, profile: what was scored and how.
        episodes: the split's episodes (all of them).
        scored: indices into ``episodes`` of the scored episodes, ascending.
        per_episode: one array per column, aligned to ``scored``.
        metrics: label -> value (None when it cannot be computed, see ``unavailable``).
        unavailable: label -> why it is None.
        checks: the consistency checks.
        warnings: what a reader of the numbers should know (ids ignored, checks failed...).
        protocol: the protocol card (``spec/protocol.md``).
        source: the predictions read (a file name, or ``<bytes>`` / ``<records>``).
        form: the trajectory form read.
        n_expected: the number of episodes of the split.
        partial: a subset was scored on request.
        data_version: the dataset release, where a benchmark has several.
        details: task-specific fields of the record, written after ``unavailable``.
        notes: task-specific fields of the record, written after ``protocol``.
        units: label -> unit, for labels whose unit is not the usual one (hops, px, count:
            rates are fractions and lengths metres, as spec/outputs.md says).
        version: the vlneval version that scored.
        non_finite: labels whose value came out NaN or infinite; each is None in
            ``metrics``, with its reason in ``unavailable`` and a warning (``validate``
            refuses such a file).
    """

    task: str
    split: str
    profile: Profile
    episodes: EpisodeTable
    scored: np.ndarray
    per_episode: Mapping[str, np.ndarray]
    metrics: Mapping[str, float | None]
    unavailable: Mapping[str, str]
    checks: tuple[Check, ...]
    warnings: tuple[str, ...]
    protocol: Mapping[str, Any]
    source: str = ""
    form: str = "triple"
    n_expected: int = 0
    partial: bool = False
    data_version: str | None = None
    details: Mapping[str, Any] = field(default_factory=dict)
    notes: Mapping[str, Any] = field(default_factory=dict)
    units: Mapping[str, str] = field(default_factory=dict)
    version: str = ""
    non_finite: tuple[str, ...] = field(default=(), init=False)

    def __post_init__(self) -> None:
        _finite_metrics(self)
        for name in ("per_episode", "metrics", "unavailable", "details", "notes", "units"):
            object.__setattr__(self, name, _frozen(getattr(self, name)))
        object.__setattr__(self, "protocol", _frozen(copy.deepcopy(dict(self.protocol))))

    @property
    def n_episodes(self) -> int:
        """The number of scored episodes."""
        return len(self.scored)

    @property
    def ids(self) -> list[str]:
        """The ids of the scored episodes, in the order of the per-episode columns."""
        ids = self.episodes.ids
        return [ids[i] for i in self.scored.tolist()]

    def rows(self) -> list[dict[str, Any]]:
        """The per-episode table as a list of rows (episode id and scan first), each id with
        the benchmark's JSON type: a number where its ids are JSON integers (NDH ``inst_idx``,
        Touchdown ``route_id``), so that a row joins the predictions file by id."""
        eps, cols, scored = self.episodes, self.per_episode, self.scored.tolist()
        # the episode's own id (SOON's record_id is its instruction's); a continuous split's
        # episodes are no EpisodeTable, and their ids are strings
        table = isinstance(eps, EpisodeTable)
        ids = [EpisodeTable.record_id(eps, i) if table else eps.ids[i] for i in scored]
        out = []
        for k, i in enumerate(scored):
            row: dict[str, Any] = {eps.id_field: ids[k], "scan": eps.scans[i]}
            for name, values in cols.items():
                v = values[k]
                v = v.item() if hasattr(v, "item") else v
                # a NaN or infinite count (an unreachable goal's SPD) stays as it is
                row[name] = int(v) if name in INT_COLUMNS and math.isfinite(v) else v
            out.append(row)
        return out

    def to_dict(self) -> dict[str, Any]:
        """The summary record of ``spec/outputs.md`` (a fresh dict: changing it changes nothing
        here)."""
        out: dict[str, Any] = {
            "vlneval_version": self.version,
            "task": self.task,
            "split": self.split,
            "data_version": self.data_version,
            "profile": self.profile.card(),
            "profile_rules": self.profile.to_dict(),
            "predictions": self.source,
            "trajectory_form": self.form,
            "n_episodes": self.n_episodes,
            "n_expected": self.n_expected,
            "partial": self.partial,
            "metrics": dict(self.metrics),
            "unavailable": dict(self.unavailable),
            **copy.deepcopy(dict(self.details)),
            "checks": [c.to_dict() for c in self.checks],
            "warnings": list(self.warnings),
            "protocol": copy.deepcopy(dict(self.protocol)),
            **copy.deepcopy(dict(self.notes)),
        }
        if self.units:
            out["units"] = dict(self.units)
        return out


def _finite_metrics(result: Result) -> None:
    """A NaN or infinite metric becomes None with its reason (never written as a string);
    a None without a reason gets one, so that every ``n/a`` says why."""
    metrics, unavailable = dict(result.metrics), dict(result.unavailable)
    warnings, bad = list(result.warnings), []
    for label, value in metrics.items():
        if value is not None and not math.isfinite(value):
            bad.append(label)
            metrics[label] = None
            cols = _non_finite_columns(result)
            unavailable[label] = (
                f"the mean is {value}, not a finite number: a per-episode value overflows "
                f"({cols or 'see the per-episode table'}); check the predictions' positions "
                "and lengths"
            )
            warnings.append(f"{label}: {unavailable[label]}; written as null")
        elif value is None and not unavailable.get(label):
            unavailable[label] = "not computed (the scorer gave no reason)"
    object.__setattr__(result, "metrics", metrics)
    object.__setattr__(result, "unavailable", unavailable)
    object.__setattr__(result, "warnings", tuple(warnings))
    object.__setattr__(result, "non_finite", tuple(bad))


def _non_finite_columns(result: Result) -> str:
    """``path_length infinite in 1 episode (first: "7")``, for every per-episode column with
    a NaN or infinite value except distances that are infinite by rule (unreachable goals)."""
    ids = result.episodes.ids
    parts = []
    for name, col in result.per_episode.items():
        values = np.asarray(col)
        if values.dtype.kind != "f" or name in _INFINITE_BY_RULE:
            continue
        bad = np.flatnonzero(~np.isfinite(values))
        if bad.size:
            first = ids[int(result.scored[bad[0]])] if bad[0] < len(result.scored) else "?"
            parts.append(
                f'{name} not finite in {bad.size} episode(s) (first: "{clip(str(first))}")'
            )
    return "; ".join(parts)


# Per-episode distances that are infinite when the goal is unreachable (spec/metrics.md).
_INFINITE_BY_RULE = frozenset({"nav_error", "oracle_error", "dtw", "shortest_length"})


@dataclass
class ResultBuilder:
    """The parts of a :class:`Result` while a scorer collects them (see
    :func:`~vlneval.tasks.common.checks.start_result`).

    A scorer adds its task's parts (units, card fields, checks of its own, warnings) and calls
    :meth:`build` once with the per-episode table.
    """

    task: str
    split: str
    profile: Profile
    source: str
    form: str
    n_expected: int
    partial: bool
    metrics: dict[str, float | None]
    unavailable: dict[str, str]
    checks: list[Check]
    warnings: list[str]
    protocol: dict[str, Any]
    data_version: str | None = None
    details: dict[str, Any] = field(default_factory=dict)
    notes: dict[str, Any] = field(default_factory=dict)
    units: dict[str, str] = field(default_factory=dict)

    def add_check(self, name: str, holds: bool, detail: str) -> None:
        """Adds a consistency check; a failed one also adds a warning."""
        self.checks.append(Check(name, bool(holds), detail))
        if not holds:
            self.warnings.append(f"consistency check failed: {name} ({detail})")

    def build(
        self, episodes: EpisodeTable, scored: np.ndarray, per_episode: Mapping[str, np.ndarray]
    ) -> Result:
        """The frozen result: these parts and the per-episode table of ``scored``."""
        parts = {f.name: getattr(self, f.name) for f in fields(self)}
        parts.update(checks=tuple(self.checks), warnings=tuple(self.warnings))
        return Result(
            episodes=episodes, scored=scored, per_episode=per_episode, version=__version__, **parts
        )


def finite_mean(
    values: np.ndarray,
    label: str,
    warnings: list[str],
    cause: str,
    consequence: str = "",
    *,
    over: dict[str, int] | None = None,
    reasons: dict[str, str] | None = None,
) -> float | None:
    """The mean of the finite ``values`` (None if none); a warning says how many were left out.

    A mean over fewer than all the values puts its count in ``over`` (the summary's
    ``averaged_over``, shown beside the metric); when every value is infinite ``reasons``
    (the summary's ``unavailable``) says so instead of a warning.

    Example:
        >>> w, over, why = [], {}, {}
        >>> finite_mean(np.array([1.0, np.inf, 3.0]), "NE", w, "unreachable", over=over)
        2.0
        >>> w, over
        (['NE: 1 episode(s) have an infinite value (unreachable); NE averages the other 2'], {'NE': 2})
        >>> finite_mean(np.array([np.inf, np.inf]), "NE", w, "goal unreachable", reasons=why), why
        (None, {'NE': 'all 2 episodes have an infinite NE (goal unreachable)'})
    """
    if len(values) == 0:
        return None
    finite = np.isfinite(values)
    if finite.all():
        return float(values.mean())
    bad, kept = int((~finite).sum()), int(finite.sum())
    if not kept and reasons is not None:
        every = f"all {bad} episodes have" if bad > 1 else "the 1 episode has"
        reasons[label] = f"{every} an infinite {label} ({cause})"
        return None
    warnings.append(
        f"{label}: {bad} episode(s) have an infinite value ({cause}); {label} averages "
        f"the other {kept}{consequence}"
    )
    if not kept:
        return None
    if over is not None:
        over[label] = kept
    return float(values[finite].mean())
