"""The demo task's profile: the r2r rules on every instruction."""

from __future__ import annotations

from vlneval.tasks.profiles import SPL_ZERO_DEFAULT, Profile

__all__ = ["DEMO"]

DEMO = Profile(
    "demo",
    "1",
    "none: the synthetic demo task, scored with the r2r rules on every instruction",
    notes=("synthetic houses and episodes shipped inside vlneval", SPL_ZERO_DEFAULT),
)
