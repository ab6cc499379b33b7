"""Scoring profiles: the rules of each official evaluator, named and versioned.

This module holds the base :class:`Profile` and the :data:`PROFILES` registry; each task folder's
``profiles.py`` defines its profiles (``vlneval.tasks.r2r.profiles``...) and
:mod:`vlneval.tasks` registers each with one line.

A profile fixes everything that makes two scorers disagree: the success threshold and its
comparison, what SPL's reference length is, whether jumps and incomplete files are rejected,
whether repeated viewpoints are collapsed before DTW/CLS. The numbers of a profile never change
without a new version.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, ClassVar

from vlneval.registry import Registry

__all__ = [
    "Profile",
    "ObjectGoalProfile",
    "PROFILES",
    "get_profile",
    "GRAPH_METRICS",
    "SPL_ZERO_FLOOR",
    "SPL_ZERO_DEFAULT",
]

GRAPH_METRICS = ("TL", "NE", "OSR", "SR", "SPL", "nDTW", "sDTW", "CLS")
# What SPL is when ℓ = 0 (spec/metrics.md: every profile must say): the note of a profile
# with the 0.01 floor, and of one with none (the default rule of metrics.path.spl).
SPL_ZERO_FLOOR = "SPL with ℓ = 0: 0, even for a success (ℓ / max(ℓ, TL, 0.01)), as the script"
SPL_ZERO_DEFAULT = (
    "SPL with ℓ = 0: 1 if successful and TL = 0, else 0 (vlneval's default, the CVDN rule: "
    "the formula divides by zero)"
)


@dataclass(frozen=True)
class Profile:
    """The rules of one official scorer.

    Attributes:
        name, version: the profile id, e.g. ``r2r`` version ``1``.
        reproduces: the script (repository and file) whose numbers this profile gives.
        threshold: success radius δ, in ``threshold_unit``.
        success_metric: the metric whose value the success rule compares with ``threshold``
            (its label, ``NE``), or None when success is no threshold on a metric (REVERIE's
            visibility); reports read it, never the rule's text.
        success_inclusive: success is ``NE <= δ`` (True) or ``NE < δ`` (False).
        sdtw_inclusive: the comparison sDTW's own success test uses.
        spl_reference: ``shortest`` (ℓ = shortest start-goal distance) or ``reference``
            (ℓ = length of the reference path).
        spl_floor: SPL's denominator is ``max(ℓ, TL, spl_floor)``.
        collapse_repeats: drop consecutive repeated viewpoints before DTW and CLS.
        check_adjacency: reject a move between non-adjacent viewpoints.
        require_complete: every episode of the split needs a prediction.
        caller_requires_complete: ``require_complete`` is set by a caller of a profile that
            scores partial files as its script does (a server phase), not by the script: the
            completeness problem then names no profile. Not a rule of the scorer, so it is
            left out of :meth:`to_dict`.
        max_instructions: score only instructions k < this of each path (the R2R quirk).
        strict_cls_edges: reject repeated viewpoints and jumps (a scorer whose CLS looks each
            step up as a graph edge and would crash on them).
        metrics: the labels reported, in order.
        may_break: consistency checks this scorer is known to break (its quirk, not a bug).
        distance: what ``d(u, v)`` is.
        notes: how this profile differs from its neighbours.
        threshold_unit: the unit of ``threshold`` and of the profile's lengths (``m``; a
            street profile's ``hops``), which names the card's ``threshold_<unit>``.
    """

    threshold_unit: ClassVar[str] = "m"

    name: str
    version: str
    reproduces: str
    threshold: float = 3.0
    success_metric: str | None = "NE"
    success_inclusive: bool = False
    sdtw_inclusive: bool = False
    spl_reference: str = "shortest"
    spl_floor: float = 0.0
    collapse_repeats: bool = True
    check_adjacency: bool = True
    require_complete: bool = True
    caller_requires_complete: bool = field(default=False, compare=False)
    max_instructions: int | None = None
    strict_cls_edges: bool = False
    metrics: tuple[str, ...] = GRAPH_METRICS
    may_break: tuple[str, ...] = ()
    distance: str = "graph geodesic (metres)"
    notes: tuple[str, ...] = field(default_factory=tuple)

    @property
    def comparison(self) -> str:
        """The success comparison as text, e.g. ``NE < 3.0``."""
        return f"{self.success_metric} {'<=' if self.success_inclusive else '<'} {self.threshold}"

    def card(self) -> dict[str, Any]:
        """The profile as the summary's ``profile`` object."""
        return {"name": self.name, "version": self.version, "reproduces": self.reproduces}

    def to_dict(self) -> dict[str, Any]:
        """Every rule of the profile."""
        d = asdict(self)
        del d["success_metric"]  # ``comparison`` states it; the summary keeps its shape
        del d["caller_requires_complete"]
        d["comparison"] = self.comparison
        return d


@dataclass(frozen=True)
class ObjectGoalProfile(Profile):
    """A profile whose success rule is not ``NE < δ`` alone (REVERIE: visibility; SOON: adds
    localisation).

    Attributes:
        success_rule: the navigation success rule, shown as the profile's comparison.
        object_field: the prediction field that carries the predicted object (REVERIE).
        heading_wrap: SOON localisation handles heading wrap-around (the official code does not).
    """

    success_rule: str = ""
    object_field: str = ""
    heading_wrap: bool = False

    @property
    def comparison(self) -> str:
        """The success rule as text."""
        return self.success_rule or super().comparison


#: Every scoring profile, by name (registered in :mod:`vlneval.tasks`, loaded on first use).
PROFILES: Registry[Profile] = Registry("profile")


def get_profile(name: str) -> Profile:
    """The profile called ``name`` (any case); an unknown name suggests the closest one.

    Example:
        >>> get_profile("r2r").comparison
        'NE < 3.0'
    """
    return PROFILES.get(name)
