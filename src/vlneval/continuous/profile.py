"""The scoring rules of continuous (VLN-CE) profiles: a :class:`~vlneval.profiles.Profile` plus
how DTW is computed, whether success needs STOP, and what an unreachable goal counts as.

``vlneval.profiles`` builds the class with :func:`continuous_profile_class` while it registers
the VLN-CE profiles (this module never imports it at import time, so either may load first);
``ContinuousProfile`` is then available here.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

__all__ = ["ContinuousProfile", "CE_METRICS", "UNREACHABLE_POLICIES", "continuous_profile_class"]

CE_METRICS = ("TL", "NE", "OSR", "SR", "SPL", "nDTW", "sDTW")
UNREACHABLE_POLICIES = ("failure", "exclude")

_CLASS: Any = None


def continuous_profile_class(base: type) -> Any:
    """The ContinuousProfile dataclass, derived from ``base`` (the Profile class) once."""
    global _CLASS
    if _CLASS is None:

        @dataclass(frozen=True)
        class ContinuousProfile(base):  # type: ignore[valid-type,misc]
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

        ContinuousProfile.__module__ = __name__
        ContinuousProfile.__qualname__ = "ContinuousProfile"
        _CLASS = ContinuousProfile
    return _CLASS


if TYPE_CHECKING:
    from vlneval.profiles import Profile

    @dataclass(frozen=True)
    class ContinuousProfile(Profile):
        dtw: str = "exact"
        fastdtw_radius: int = 1
        fastdtw_variant: str = "compiled"
        require_stop: bool = True
        unreachable: str = "failure"


def __getattr__(name: str) -> Any:
    if name == "ContinuousProfile":
        import vlneval.profiles  # noqa: F401  (registers the profiles, building the class)

        return continuous_profile_class(vlneval.profiles.Profile)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
