"""The rxr profile says what it reproduces and the README example it does not reproduce."""

from __future__ import annotations

from vlneval.tasks.profiles import get_profile


def test_rxr_profile_names_the_readme_definitions_and_the_example_gap() -> None:
    prof = get_profile("rxr")
    assert prof.reproduces == (
        "the metric definitions of the google-research-datasets/RxR README (Ku et al. 2020; the "
        "repository publishes no scorer code): ne, sr (ne < 3 m), spl, ndtw, sdtw"
    )
    assert prof.notes[1] == (
        "the README's sample follower entry (demonstration_id 26) is not reproduced bit-exactly "
        "from the public connectivity: DTW 1.576 against its 1.546, SPL 0.948222 (TL 8.461512, "
        "shortest 8.023394) against its 0.947936; known and documented, not adjusted"
    )
