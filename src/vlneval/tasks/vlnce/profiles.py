"""VLN-CE profiles: a :class:`~vlneval.tasks.profiles.Profile` plus how DTW is computed, whether
success needs STOP, and what an unreachable goal counts as; the official default (fastdtw) and
the exact DTW."""

from __future__ import annotations

from dataclasses import dataclass

from vlneval.tasks.profiles import Profile

__all__ = ["ContinuousProfile", "CE_METRICS", "UNREACHABLE_POLICIES", "VLNCE", "VLNCE_EXACT"]

CE_METRICS = ("TL", "NE", "OSR", "SR", "SPL", "nDTW", "sDTW")
UNREACHABLE_POLICIES = ("failure", "exclude")


@dataclass(frozen=True)
class ContinuousProfile(Profile):
    """A continuous scorer's rules.

    Attributes:
        dtw: ``exact`` or ``fastdtw`` (VLN-CE's default approximation).
        fastdtw_radius: the fastdtw window radius (1 in VLN-CE).
        fastdtw_variant: ``compiled`` (the package's C++ extension) or ``python``.
        require_stop: success needs an explicit STOP (Habitat's ``Success`` measure).
        unreachable: what an episode whose final position cannot reach the goal counts
            as: ``failure`` (SR, SPL, sDTW 0; left out of the NE mean) or ``exclude``
            (left out of every goal metric). Either way they are counted and listed.
    """

    dtw: str = "exact"
    fastdtw_radius: int = 1
    fastdtw_variant: str = "compiled"
    require_stop: bool = True
    unreachable: str = "failure"


_VLNCE = "jacobkrantz/VLN-CE habitat_extensions/measures.py with Habitat's Success and SPL"
_CE_NOTES = (
    "success needs an explicit STOP and geodesic NE < 3.0; OSR needs no STOP",
    "TL is the sum of straight-line steps; SPL's ℓ is the geodesic start-goal distance",
    "nDTW: Euclidean point costs against the dense _gt locations, consecutive repeated "
    "positions dropped, normalised by the number of gt points",
    "distances come from a named source (carried in the file, the twin grid, or none); "
    "unreachable goals are counted and listed, never averaged",
)
VLNCE = ContinuousProfile(
    "vlnce",
    "1",
    f"{_VLNCE} (Krantz et al. 2020), default config FDTW: True",
    metrics=CE_METRICS,
    check_adjacency=False,
    dtw="fastdtw",
    distance="geodesic to the goal (metres) from the summary's distance source",
    notes=(*_CE_NOTES, "nDTW/sDTW use fastdtw radius 1 as VLN-CE does: APPROXIMATE"),
)
VLNCE_EXACT = ContinuousProfile(
    "vlnce-exact",
    "1",
    f"{_VLNCE}, with the exact DTW instead of fastdtw (deviates from the official default)",
    metrics=CE_METRICS,
    check_adjacency=False,
    dtw="exact",
    distance="geodesic to the goal (metres) from the summary's distance source",
    notes=(*_CE_NOTES, "nDTW/sDTW use the exact DTW: recommended, but not VLN-CE's default"),
)
