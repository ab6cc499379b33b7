"""Whether a leaderboard would take a file: the rules ``vlneval validate`` applies.

A file the scorer (or, for a goal-less split, the blind check) accepts can still be one that
no leaderboard ranks: its ranking metric comes out n/a (a REVERIE file without object ids
has no RGSPL), a metric is not finite, or an episode's TL is infinite (a jump between
unconnected viewpoints, on which the official scripts fail). The rules live here, beside the
checks they follow, so that every caller (the CLI, a Python user) words the refusal the
same way; the server words its phase's refusal its own way, from the same note
(:func:`~vlneval.tasks.common.blind.na_lead`).
"""

from __future__ import annotations

import numpy as np

from vlneval.tasks.common.blind import BlindCheck, na_lead
from vlneval.tasks.common.result import Result

__all__ = ["blind_refusal", "blind_warnings", "scored_refusal"]

_NOT_VALID = "not a valid submission"


def scored_refusal(result: Result, primary: str) -> str | None:
    """Why a leaderboard ranking by ``primary`` refuses the scored ``result``; None if it
    takes it.

    Example:
        >>> from vlneval import evaluate
        >>> from vlneval.tasks.common.root import demo_root
        >>> result = evaluate("demo", "val", demo_root() / "demo" / "predictions_val.json")
        >>> scored_refusal(result, "SPL") is None
        True
    """
    if primary in result.unavailable:  # the server's refusal: such a file is never ranked
        return (
            f"{result.source}: {_NOT_VALID}: a leaderboard ranks {result.task} by "
            f"{primary}: {result.unavailable[primary]}"
        )
    if result.non_finite:
        labels = ", ".join(result.non_finite)
        return (
            f"{result.source}: {_NOT_VALID}: {labels} "
            f"{'is' if len(result.non_finite) == 1 else 'are'} not finite "
            f"({result.unavailable[result.non_finite[0]]})"
        )
    tl = result.per_episode.get("path_length")
    if tl is not None and not np.isfinite(tl).all():  # the official scripts fail on it
        first = result.ids[int(np.flatnonzero(~np.isfinite(tl))[0])]
        return (
            f"{result.source}: {_NOT_VALID}: episode {first}'s TL is infinite (a jump "
            "between viewpoints with no path between them); the official script fails on it"
        )
    return None


def blind_warnings(check: BlindCheck, primary: str) -> list[str]:
    """The warnings of a blind check to show, without the one :func:`blind_refusal` turns
    into the refusal."""
    return [w for w in check.warnings if not w.startswith(na_lead(primary))]


def blind_refusal(check: BlindCheck, primary: str) -> str | None:
    """Why a leaderboard ranking by ``primary`` refuses a file that passed the blind check
    ``check`` (its ranking metric will be n/a: such a file is never ranked); None if none.

    Example:
        >>> check = BlindCheck("p.json", "reverie", "test", 3, [],
        ...                    ["RGSPL will be n/a: no predObjId"])
        >>> blind_refusal(check, "RGSPL")
        'p.json: not a valid submission: a leaderboard ranks reverie by RGSPL: no predObjId'
        >>> blind_warnings(check, "RGSPL"), blind_refusal(check, "SPL") is None
        ([], True)
    """
    lead = na_lead(primary)
    for w in check.warnings:
        if w.startswith(lead):
            return (
                f"{check.source}: {_NOT_VALID}: a leaderboard ranks {check.task} by "
                f"{primary}: {w[len(lead) :]}"
            )
    return None
