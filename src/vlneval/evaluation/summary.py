"""The summary record (``spec/outputs.md``) every scorer ends with, and its ``Evaluation``."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from vlneval.data.episodes import EpisodeTable
    from vlneval.data.predictions import Predictions
    from vlneval.evaluation.runner import Evaluation
    from vlneval.profiles import Profile

__all__ = ["summary_record", "finish", "finite_mean"]


def finite_mean(
    values: np.ndarray, label: str, warnings: list[str], cause: str, consequence: str = ""
) -> float | None:
    """The mean of the finite ``values`` (None if none); a warning says how many were left out.

    Example:
        >>> w = []
        >>> finite_mean(np.array([1.0, np.inf, 3.0]), "NE", w, "unreachable")
        2.0
        >>> w
        ['NE: 1 episode(s) have an infinite value (unreachable); NE averages the other 2']
    """
    if len(values) == 0:
        return None
    finite = np.isfinite(values)
    if not finite.all():
        bad = int((~finite).sum())
        warnings.append(
            f"{label}: {bad} episode(s) have an infinite value ({cause}); {label} averages "
            f"the other {int(finite.sum())}{consequence}"
        )
        return float(values[finite].mean()) if finite.any() else None
    return float(values.mean())


def summary_record(
    *,
    task: str,
    split: str,
    prof: Profile,
    source: str,
    form: str,
    n_scored: int,
    n_expected: int,
    partial: bool,
    metrics: dict[str, float | None],
    unavailable: Mapping[str, str],
    per: Mapping[str, np.ndarray],
    warnings: list[str],
    data_version: str | None = None,
    declared: Mapping[str, Any] | None = None,
    run: Mapping[str, Any] | None = None,
    card_extra: Mapping[str, Any] | None = None,
    extra: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The summary record of one scored file: protocol card, consistency checks, metrics.

    ``warnings`` gains one line per failed consistency check (a documented quirk excepted);
    ``card_extra`` joins the protocol card, ``extra`` the record (after ``unavailable``).

    Example:
        >>> from vlneval.profiles import get_profile
        >>> s = summary_record(task="demo", split="val", prof=get_profile("demo"), source="p.json",
        ...     form="plain", n_scored=1, n_expected=2, partial=True, metrics={"SR": 1.0},
        ...     unavailable={}, per={}, warnings=[])
        >>> s["n_episodes"], s["partial"], s["protocol"]["split"]
        (1, True, 'val')
    """
    from vlneval import __version__
    from vlneval.evaluation.checks import consistency_checks
    from vlneval.evaluation.protocol import protocol_card

    card = protocol_card(
        task=task, split=split, profile=prof, n_episodes=n_scored, n_expected=n_expected,
        partial=partial, data_version=data_version, declared=declared, run=run,
    )  # fmt: skip
    card.update(card_extra or {})
    checks = consistency_checks(metrics, per, prof)
    for c in checks:
        if not c["holds"] and "quirk" not in c:
            warnings.append(f"consistency check failed: {c['name']} ({c['detail']})")
    return {
        "vlneval_version": __version__,
        "task": task,
        "split": split,
        "data_version": data_version,
        "profile": prof.card(),
        "profile_rules": prof.to_dict(),
        "predictions": source,
        "trajectory_form": form,
        "n_episodes": n_scored,
        "n_expected": n_expected,
        "partial": partial,
        "metrics": metrics,
        "unavailable": dict(unavailable),
        **(extra or {}),
        "checks": checks,
        "warnings": warnings,
        "protocol": card,
    }


def finish(
    episodes: EpisodeTable,
    preds: Predictions,
    prof: Profile,
    per: dict[str, np.ndarray],
    summary: dict[str, Any],
    **extra: Any,
) -> Evaluation:
    """The :class:`Evaluation` of ``preds`` scored on ``episodes`` (``extra``: its notes)."""
    from vlneval.evaluation.runner import Evaluation

    return Evaluation(
        episodes.task, episodes.split, prof, episodes, preds.episodes, per, summary,
        predictions_source=preds.source, form=preds.form, extra=extra,
    )  # fmt: skip
