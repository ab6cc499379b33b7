"""Protocol cards: what a result was allowed to see and how it was scored (spec/protocol.md)."""

from __future__ import annotations

import functools
import platform
from collections.abc import Mapping
from importlib import metadata
from typing import Any

from vlneval.tasks.profiles import Profile

__all__ = ["protocol_card", "software_fingerprint", "DECLARABLE"]

# Fields a submitter declares about a run that vlneval cannot see in a predictions file.
DECLARABLE = (
    "observations",
    "map",
    "action_space",
    "privileged",
    "inference_budget",
    "executed_path",
    "seeds",
    "n_runs",
    "checkpoint_selection",
    "model",
)

UNDECLARED = "not declared (offline predictions file)"


def software_fingerprint() -> dict[str, str]:
    """vlneval, Python and key library versions (read once per process: a scorer in a training
    loop would otherwise spend milliseconds on package metadata for every result)."""
    return dict(_fingerprint())


@functools.cache
def _fingerprint() -> dict[str, str]:
    out = {"python": platform.python_version()}
    for pkg in ("vlneval", "numpy", "scipy", "numba", "msgspec"):
        try:
            out[pkg] = metadata.version(pkg)
        except metadata.PackageNotFoundError:
            out[pkg] = "not installed"
    return out


def protocol_card(
    *,
    task: str,
    split: str,
    profile: Profile,
    n_episodes: int,
    n_expected: int,
    partial: bool,
    data_version: str | None = None,
    declared: Mapping[str, Any] | None = None,
    run: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The protocol card of one result.

    Args:
        task, split, profile: what was scored and how.
        n_episodes, n_expected, partial: how much of the split was scored.
        data_version: the dataset release, where a benchmark has several.
        declared: fields the submitter declares (``--protocol FILE``), see ``DECLARABLE``.
        run: fields an online run records itself (action space, privileged access, seeds...);
            they override declared values since vlneval observed them.

    Example:
        >>> from vlneval.tasks.profiles import get_profile
        >>> card = protocol_card(task="r2r", split="val_unseen", profile=get_profile("r2r"),
        ...                      n_episodes=10, n_expected=10, partial=False)
        >>> card["scoring"]["comparison"], card["privileged"]
        ('NE < 3.0', 'not declared (offline predictions file)')
    """
    card: dict[str, Any] = {
        "task": task,
        "split": split,
        "data_version": data_version,
        "episodes": f"partial: {n_episodes} of {n_expected}" if partial else str(n_episodes),
        "scoring": {
            "profile": profile.name,
            "profile_version": profile.version,
            "reproduces": profile.reproduces,
            "threshold_m": profile.threshold,
            "comparison": profile.comparison,
            "distance": profile.distance,
        },
    }
    for key in DECLARABLE:
        card[key] = UNDECLARED
    for source in (declared or {}, run or {}):
        for key, value in source.items():
            card[key] = value
    card["software"] = software_fingerprint()
    return card
