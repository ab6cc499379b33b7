"""Intervals of a rate at 0 or 100 %: Clopper-Pearson over the resampled units."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import binomtest

from vlneval.diagnostics import column_intervals


@pytest.mark.parametrize(
    ("groups", "units"), [(None, 6), (["p", "p", "p", "q", "q", "r"], 3)]
)  # fmt: skip
def test_a_constant_rate_gets_the_clopper_pearson_interval(
    groups: list[str] | None, units: int
) -> None:
    columns = {"SR": np.zeros(6), "SPL": np.zeros(6), "OSR": np.array([1.0, 0, 1, 1, 1, 1])}
    out = column_intervals(
        columns, rng=0, n_resamples=200, groups=groups, two_stage=groups is None,
        rates=["SR", "OSR"],
    )  # fmt: skip
    sr, spl, osr = out["SR"], out["SPL"], out["OSR"]
    assert sr is not None and spl is not None and osr is not None
    expected = binomtest(0, units).proportion_ci(confidence_level=0.95)
    assert (sr.method, sr.low, sr.n, sr.n_units, sr.n_resamples) == (
        "clopper-pearson", 0.0, 6, units, 0,
    )  # fmt: skip
    assert (spl.n, spl.n_units, osr.n_units) == (6, units, units)  # the bootstrap's units too
    assert sr.high == pytest.approx(expected.high, rel=1e-12)
    assert (spl.low, spl.high) == (0.0, 0.0) and spl.method.startswith("bootstrap")  # not a rate
    assert osr.method.startswith("bootstrap")  # varies: the bootstrap's own interval


def test_the_two_stage_bootstrap_counts_scans_as_its_units() -> None:
    """With --by-scan the units are the scans (resampled first), a Clopper-Pearson interval too."""
    scans = ["a", "a", "b", "b", "c"]
    out = column_intervals(
        {"SR": np.ones(5), "NE": np.arange(5.0)}, rng=0, n_resamples=200, groups=scans,
        rates=["SR"],
    )  # fmt: skip
    sr, ne = out["SR"], out["NE"]
    assert sr is not None and ne is not None
    assert (sr.method, sr.n, sr.n_units, ne.n, ne.n_units) == ("clopper-pearson", 5, 3, 5, 3)
    assert ne.method == "bootstrap-percentile-two-stage"
    assert sr.low == pytest.approx(binomtest(3, 3).proportion_ci().low, rel=1e-12)
