"""Comparability of protocol cards, the paired comparison by hand, seed aggregation."""

from __future__ import annotations

import math

import pytest

from tests.reports.house import STAIRS
from vlneval.diagnostics import ScoredRun
from vlneval.errors import VLNEvalError
from vlneval.reports.compare import (
    aggregate_summaries,
    card_differences,
    card_notes,
    check_comparable,
    compare_scored,
)
from vlneval.reports.compare_terminal import render_aggregate, render_comparison

CARD = {
    "task": "r2r",
    "split": "val_unseen",
    "privileged": "none",
    "map": "given graph",
    "scoring": {"profile": "r2r", "profile_version": "1"},
}


def test_card_differences_name_each_field() -> None:
    other = {
        **CARD,
        "task": "r4r",
        "privileged": "shortest-path oracle",
        "scoring": {"profile": "r2r-duet", "profile_version": "1"},
        "map": "built online",
    }
    assert card_differences(CARD, other) == [
        "task: r2r (A) vs r4r (B)",
        "profile: r2r v1 (A) vs r2r-duet v1 (B)",
        "privileged: none (A) vs shortest-path oracle (B)",
    ]
    assert card_notes(CARD, other) == ["map: given graph (A) vs built online (B)"]
    assert card_differences(CARD, {**CARD, "map": "x"}) == []
    with pytest.raises(VLNEvalError, match="refusing to compare.*Pass --force"):
        check_comparable(CARD, other)
    assert len(check_comparable(CARD, other, force=True)) == 3
    version = {**CARD, "scoring": {"profile": "r2r", "profile_version": "2"}}
    assert card_differences(CARD, version) == ["profile: r2r v1 (A) vs r2r v2 (B)"]


def test_paired_comparison_by_hand(runs: tuple[ScoredRun, ScoredRun]) -> None:
    a, b = runs
    cmp = compare_scored(a, b, rng=0, n_resamples=500)
    assert cmp.n_paired == 6 and cmp.n_only_a == cmp.n_only_b == 0 and not cmp.forced
    sr = cmp.metrics["SR"]
    assert (sr.mean_b, sr.mean_a, sr.difference) == pytest.approx((2 / 6, 4 / 6, 2 / 6))
    assert sr.test == "mcnemar-exact" and sr.p_value == pytest.approx(0.5)  # 2 discordant, both B
    assert cmp.success == {"both": 2, "only_a": 0, "only_b": 2, "neither": 2}
    tl = cmp.metrics["TL"]
    assert tl.mean_b == pytest.approx((8 + 16 + 4 + 12 + STAIRS + 0) / 6)
    assert tl.difference == pytest.approx((0 - 4 + 12 + 0 + 0 + 0) / 6)
    # two non-zero differences (-4, +12): every sign pattern is as extreme, p = 1
    assert tl.test == "permutation-exact" and tl.p_value == 1.0
    assert all(c.correction == "holm" and c.p_adjusted >= c.p_value for c in cmp.metrics.values())
    d = cmp.to_dict()
    row = d["metrics"][[r["metric"] for r in d["metrics"]].index("SR")]
    assert (row["mean_A"], row["mean_B"]) == pytest.approx((2 / 6, 4 / 6))
    assert row["difference_B_minus_A"] == pytest.approx(2 / 6)
    assert d["forced"] is False and d["protocol"]["A"]["task"] == "r2r"


def test_comparison_is_antisymmetric(runs: tuple[ScoredRun, ScoredRun]) -> None:
    a, b = runs
    ab, ba = compare_scored(a, b, rng=3), compare_scored(b, a, rng=3)
    for m in ab.metrics:
        assert ab.metrics[m].difference == pytest.approx(-ba.metrics[m].difference)
        assert ab.metrics[m].p_value == pytest.approx(ba.metrics[m].p_value)


def test_metric_subset_and_unknown(runs: tuple[ScoredRun, ScoredRun]) -> None:
    a, b = runs
    assert list(compare_scored(a, b, metrics=["SR", "SPL"]).metrics) == ["SR", "SPL"]
    with pytest.raises(VLNEvalError) as refused:
        compare_scored(a, b, metrics=["XX"])
    assert str(refused.value) == (
        "--metrics: 'XX' is not reported by both runs (they report: TL, NE, OSR, SR, SPL, nDTW, "
        "sDTW, CLS)"
    )


def test_render_comparison(runs: tuple[ScoredRun, ScoredRun]) -> None:
    a, b = runs
    text = render_comparison(compare_scored(a, b, metrics=["SR", "NE"]))
    assert "A (baseline): run_a" in text and "B (candidate): run_b" in text
    assert "SR (%)" in text and "+33.33" in text
    assert "success pairs: both 2, only A 0, only B 2, neither 2" in text
    assert "FORCED" not in text


def test_aggregate_summaries() -> None:
    runs = [{"metrics": {"SR": 0.5, "NE": 3.0, "X": None}, "protocol": CARD},
            {"metrics": {"SR": 0.7, "NE": 2.0, "X": 1.0}, "protocol": CARD}]  # fmt: skip
    result = aggregate_summaries(runs, ["seed0", "seed1"])
    assert list(result.metrics) == ["SR", "NE"]  # X is null in one run
    sr = result.metrics["SR"]
    assert sr.mean == pytest.approx(0.6) and sr.std == pytest.approx(math.sqrt(0.02))
    assert result.to_dict()["n_runs"] == 2
    assert "60.00" in render_aggregate(result)
    other = {"metrics": {"SR": 0.1}, "protocol": {**CARD, "split": "val_seen"}}
    with pytest.raises(VLNEvalError, match="refusing to aggregate seed1 with seed0.*split"):
        aggregate_summaries([runs[0], other], ["seed0", "seed1"])
    forced = aggregate_summaries([runs[0], other], ["seed0", "seed1"], force=True)
    assert forced.differences == ["split: val_unseen (seed0) vs val_seen (seed1)"]
    assert "FORCED" in render_aggregate(forced)


def test_aggregate_names_the_run_whose_score_is_outside_its_range() -> None:
    runs = [{"metrics": {"SR": 0.5, "NE": 3.0}, "protocol": CARD},
            {"metrics": {"SR": 50.0, "NE": 2.0}, "protocol": CARD}]  # fmt: skip
    with pytest.raises(VLNEvalError) as exc:
        aggregate_summaries(runs, ["seed0.json", "seed1.json"])
    assert str(exc.value) == "seed1.json: SR is 50, outside its range [0, 1]"
