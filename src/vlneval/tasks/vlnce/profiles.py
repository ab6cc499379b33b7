"""VLN-CE profiles: a :class:`~vlneval.tasks.profiles.Profile` plus how DTW is computed, whether
success needs STOP, and what an unreachable goal counts as; the official default (fastdtw, as
its compiled extension or its pure-Python fallback computes it) and the exact DTW."""

from __future__ import annotations

from dataclasses import dataclass, replace

from vlneval.tasks.profiles import SPL_ZERO_DEFAULT, Profile

__all__ = [
    "ContinuousProfile",
    "CE_METRICS",
    "UNREACHABLE_POLICIES",
    "MOVE_POLICIES",
    "R2R_CE_MAX_STEP",
    "VLNCE",
    "VLNCE_EXACT",
    "VLNCE_STRICT",
    "VLNCE_FASTDTW_PYTHON",
]

CE_METRICS = ("TL", "NE", "OSR", "SR", "SPL", "nDTW", "sDTW")
UNREACHABLE_POLICIES = ("failure", "exclude")
MOVE_POLICIES = ("warn", "refuse")
#: The longest straight-line move (metres) between two logged positions that one action of the
#: R2R-CE action space (spec/protocol.md: forward 0.25 m, 15° turns, sliding) can make: the
#: 0.25 m step plus the height the floor changes under it on stairs. Measured: the official
#: val_unseen ``_gt`` paths (Habitat's navmesh) step at most 0.44 m in 3-D (0.29 m across,
#: 0.36 m up); the continuous twin's R2R-CE runs at most 0.65 m (0.25 m across, 0.60 m up);
#: the twin's velocity and waypoint runs log finer ticks. 1 m leaves a margin over both.
R2R_CE_MAX_STEP = 1.0


@dataclass(frozen=True)
class ContinuousProfile(Profile):
    """A continuous scorer's rules.

    Attributes:
        dtw: ``exact`` or ``fastdtw`` (VLN-CE's default approximation).
        fastdtw_radius: the fastdtw window radius (1 in VLN-CE).
        fastdtw_variant: ``compiled`` (the package's C++ extension) or ``python``.
        require_stop: success needs an explicit STOP (Habitat's ``Success`` measure).
        unreachable: what an episode whose final position cannot reach the goal counts
            as: ``failure`` (SR, SPL, sDTW 0, OSR from the path as VLN-CE's OracleSuccess;
            NE averages the reachable episodes and says over how many) or ``exclude`` (left out of every goal metric). Either way
            they are counted and listed.
        max_step: the longest move (metres, straight line) between two logged positions that
            one action of the scored action space can make (:data:`R2R_CE_MAX_STEP`); None
            checks nothing.
        long_steps: what a longer move (a teleport) gets: ``warn`` (scored, counted in the
            ``jumps`` column, each named in a warning) or ``refuse`` (the file is bad input).
    """

    dtw: str = "exact"
    fastdtw_radius: int = 1
    fastdtw_variant: str = "compiled"
    require_stop: bool = True
    unreachable: str = "failure"
    max_step: float | None = R2R_CE_MAX_STEP
    long_steps: str = "warn"


_VLNCE = "jacobkrantz/VLN-CE habitat_extensions/measures.py with Habitat's Success and SPL"
_CE_NOTES = (
    "success needs an explicit STOP and geodesic NE < 3.0; OSR needs no STOP",
    "TL is the sum of straight-line steps; SPL's ℓ is the geodesic start-goal distance",
    "nDTW: Euclidean point costs against the dense _gt locations, consecutive repeated "
    "positions dropped, normalised by the number of gt points",
    "distances come from a named source (carried in the file, the twin grid, or none); "
    "unreachable goals are counted and listed, never averaged: SR, SPL and sDTW count them as "
    "failures (OSR keeps a closer approach on the way, as VLN-CE's OracleSuccess), NE "
    "averages the reachable episodes and says over how many",
    SPL_ZERO_DEFAULT,
)
#: Which of the fastdtw package's two implementations a VLN-CE install ran depends on how the
#: package was built: ``python -c "import fastdtw._fastdtw"`` fails where only the pure-Python
#: fallback is installed (a source install whose build skipped the extension).
_COMPILED = (
    "nDTW/sDTW use fastdtw radius 1 as VLN-CE does: APPROXIMATE; as the package's compiled "
    "extension fastdtw._fastdtw computes it (vlnce-fastdtw-python: its pure-Python fallback, "
    "which differs on some paths)"
)
_MOVES = (
    f"a logged move longer than {R2R_CE_MAX_STEP:g} m (one R2R-CE action: 0.25 m forward, with "
    "the floor's height change on stairs) is"
)
VLNCE = ContinuousProfile(
    "vlnce",
    "2",
    f"{_VLNCE} (Krantz et al. 2020), default config FDTW: True, fastdtw's compiled extension",
    metrics=CE_METRICS,
    check_adjacency=False,
    dtw="fastdtw",
    distance="geodesic to the goal (metres) from the summary's distance source",
    notes=(
        *_CE_NOTES,
        _COMPILED,
        f"{_MOVES} scored with a warning (vlnce-strict refuses it)",
    ),
)
VLNCE_EXACT = ContinuousProfile(
    "vlnce-exact",
    "2",
    f"{_VLNCE}, with the exact DTW instead of fastdtw (deviates from the official default)",
    metrics=CE_METRICS,
    check_adjacency=False,
    dtw="exact",
    distance="geodesic to the goal (metres) from the summary's distance source",
    notes=(
        *_CE_NOTES,
        "nDTW/sDTW use the exact DTW: recommended, but not VLN-CE's default",
        f"{_MOVES} scored with a warning (vlnce-strict refuses it)",
    ),
)
VLNCE_STRICT = ContinuousProfile(
    "vlnce-strict",
    "1",
    f"{_VLNCE} (Krantz et al. 2020), default config FDTW: True, fastdtw's compiled extension; "
    "refuses moves no action makes",
    metrics=CE_METRICS,
    check_adjacency=False,
    dtw="fastdtw",
    long_steps="refuse",
    distance="geodesic to the goal (metres) from the summary's distance source",
    notes=(
        *_CE_NOTES,
        _COMPILED,
        f"{_MOVES} refused: the file is bad input (exit 2), for leaderboards",
    ),
)
VLNCE_FASTDTW_PYTHON = replace(
    VLNCE,
    name="vlnce-fastdtw-python",
    version="1",
    reproduces=f"{_VLNCE} (Krantz et al. 2020), default config FDTW: True, fastdtw's pure-Python "
    "fallback",
    fastdtw_variant="python",
    notes=(
        *_CE_NOTES,
        "nDTW/sDTW use fastdtw radius 1 as VLN-CE does: APPROXIMATE; as the package's pure-Python "
        "fallback fastdtw/fastdtw.py computes it (what an install without the compiled extension "
        "runs; vlnce: the extension)",
        VLNCE.notes[-1],
    ),
)
