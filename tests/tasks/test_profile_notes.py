"""Every profile that reports SPL says what SPL is when ℓ = 0 (spec/metrics.md)."""

from __future__ import annotations

import pytest

import vlneval.tasks  # noqa: F401  (registers every profile)
from vlneval.tasks.profiles import PROFILES, SPL_ZERO_DEFAULT, SPL_ZERO_FLOOR, get_profile

ZERO = ("ℓ = 0", "ℓ = TL = 0", "shortest length 0")


@pytest.mark.parametrize("name", sorted(PROFILES))
def test_a_profile_with_spl_says_what_happens_at_zero_length(name: str) -> None:
    prof = get_profile(name)
    if "SPL" not in prof.metrics:
        return
    assert any(z in note for note in prof.notes for z in ZERO), name
    if prof.spl_floor > 0:  # the floor makes SPL 0 there, even for a success
        assert any(SPL_ZERO_FLOOR in note for note in prof.notes), name


def test_the_notes_state_the_rule_the_kernel_applies() -> None:
    from vlneval.metrics.path import spl

    assert spl(1, 0.0, 0.0, floor=0.01) == 0.0  # SPL_ZERO_FLOOR
    assert (spl(1, 0.0, 0.0), spl(1, 0.0, 2.0), spl(0, 0.0, 0.0)) == (1.0, 0.0, 0.0)
    assert "1 if successful and TL = 0, else 0" in SPL_ZERO_DEFAULT
    assert SPL_ZERO_DEFAULT in get_profile("rxr").notes
    assert SPL_ZERO_DEFAULT in get_profile("vlnce").notes
