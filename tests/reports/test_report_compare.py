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
from vlneval.reports.compare_terminal import aggregate_notices, render_aggregate, render_comparison
from vlneval.tasks.common.protocol import episodes_card

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
    cmp = compare_scored(a, b, rng=0, n_resamples=500, by_episode=True)
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


def test_aggregate_card_is_the_merged_card_of_its_runs() -> None:
    cards = [
        {**CARD, "seeds": [s], "n_runs": 1, "checkpoint": f"ckpt{s}.pt", "software": {"numpy": "2"}}
        for s in range(3)
    ]
    runs = [{"metrics": {"SR": 0.5 + 0.05 * s}, "protocol": c} for s, c in enumerate(cards)]
    result = aggregate_summaries(runs, ["rw0", "rw1", "rw2"])
    assert result.to_dict()["protocol"] == {
        **CARD,
        "seeds": [0, 1, 2],
        "n_runs": 3,
        "checkpoint": {"rw0": "ckpt0.pt", "rw1": "ckpt1.pt", "rw2": "ckpt2.pt"},
        "software": {"numpy": "2"},
        "differs_between_runs": ["checkpoint"],
    }
    assert aggregate_notices(result) == [
        (
            "note: the runs' protocol cards differ in checkpoint: the aggregate's card gives "
            "each run's value",
            "yellow",
        )
    ]
    undeclared = {**CARD, "seeds": "not declared (offline predictions file)"}
    mixed = aggregate_summaries([runs[0], {**runs[1], "protocol": undeclared}], ["rw0", "x"])
    assert mixed.card["seeds"] == {"rw0": [0], "x": "not declared (offline predictions file)"}


def test_an_unknown_dataset_version_is_a_note_not_a_refusal() -> None:
    """A file scored by --episodes names no version; the same file by --data-root names v2:
    nothing says they differ, so it is a note; two named versions that differ refuse."""
    named, given = {**CARD, "data_version": "v2"}, {**CARD, "data_version": None}
    assert card_differences(named, given) == []
    assert card_notes(named, given) == ["data_version: v2 (A) vs None (B)"]
    assert card_differences(named, {**CARD, "data_version": "v1"}) == [
        "data_version: v2 (A) vs v1 (B)"
    ]
    assert card_notes(named, {**CARD, "data_version": "v1"}) == []


def test_cards_scored_against_other_ground_truth_differ() -> None:
    """The dataset version and every scoring field but the profile's provenance text must
    agree, for compare and aggregate alike."""
    rules = {"threshold_m": 3.0, "comparison": "NE < 3.0", "reproduces": "x"}
    ndh = {**CARD, "data_version": "v1", "scoring": {**CARD["scoring"], **rules,
           "path_type": "trusted_path"}}  # fmt: skip
    other = {**CARD, "data_version": "v2", "scoring": {**CARD["scoring"], **rules,
             "path_type": "planner_path", "threshold_m": 2.0, "reproduces": "y"}}  # fmt: skip
    assert card_differences(ndh, other) == [
        "data_version: v1 (A) vs v2 (B)",
        "threshold_m: 3.0 (A) vs 2.0 (B)",
        "path_type: trusted_path (A) vs planner_path (B)",
    ]
    twin = {**CARD, "scoring": {**CARD["scoring"], "distance_source": "twin"}}
    carried = {**CARD, "scoring": {**CARD["scoring"], "distance_source": "carried"}}
    with pytest.raises(VLNEvalError) as exc:
        check_comparable(twin, carried)
    assert str(exc.value) == (
        "refusing to compare results whose protocol cards differ (distance_source: twin (A) vs "
        "carried (B)): their numbers are not comparable. Pass --force to compare anyway; the "
        "output will say so."
    )
    planner = {**ndh, "scoring": {**CARD["scoring"], **rules, "path_type": "planner_path"}}
    runs = [
        {"metrics": {"SR": 0.1422}, "protocol": ndh},
        {"metrics": {"SR": 0.1676}, "protocol": planner},
    ]
    with pytest.raises(VLNEvalError) as exc:
        aggregate_summaries(runs, ["ndh_s", "ndh_planner"])
    assert str(exc.value) == (
        "refusing to aggregate ndh_planner with ndh_s: their protocol cards differ (path_type: "
        "trusted_path (ndh_s) vs planner_path (ndh_planner)). Pass --force to aggregate anyway; "
        "the output will say so."
    )
    forced = aggregate_summaries(runs, ["ndh_s", "ndh_planner"], force=True)
    assert forced.differences == ["path_type: trusted_path (ndh_s) vs planner_path (ndh_planner)"]
    assert forced.card["differs_between_runs"] == ["scoring"]


def test_aggregate_refuses_a_partial_run_among_complete_ones() -> None:
    """A mean over runs on different episode sets is no seed variation; a comparison pairs
    the episodes both runs scored, so it does not refuse them."""
    full, part = {**CARD, **episodes_card(2349, 2349)}, {**CARD, **episodes_card(300, 2349)}
    runs = [{"metrics": {"SR": 0.21}, "protocol": full},
            {"metrics": {"SR": 0.19}, "protocol": full},
            {"metrics": {"SR": 0.04}, "protocol": part}]  # fmt: skip
    labels = ["s5000", "s20000", "spart"]
    with pytest.raises(VLNEvalError) as exc:
        aggregate_summaries(runs, labels)
    assert str(exc.value) == (
        "refusing to aggregate spart with s5000: their protocol cards differ (episodes: 2349 "
        "(s5000) vs partial: 300 of 2349 (spart)). Pass --force to aggregate anyway; the output "
        "will say so."
    )
    forced = aggregate_summaries(runs, labels, force=True).to_dict()
    assert forced["card_differences"] == ["episodes: 2349 (s5000) vs partial: 300 of 2349 (spart)"]
    assert forced["protocol"]["episodes"] == {"s5000": 2349, "s20000": 2349, "spart": 300}
    assert forced["protocol"]["differs_between_runs"] == ["episodes", "partial"]
    assert check_comparable(full, part) == []
    legacy = [{**r, "protocol": {**CARD, "episodes": t}} for r, t in zip(runs, ("2349", "2349", "partial: 300 of 2349"), strict=True)]  # fmt: skip
    with pytest.raises(VLNEvalError) as old:  # a card written when the counts were text
        aggregate_summaries(legacy, labels)
    assert str(old.value) == str(exc.value)


def test_seeds_of_one_privileged_agent_are_comparable() -> None:
    """The refusal compares what the privileged channel gives, not how often a run used it:
    the call count varies from seed to seed and is kept as a note."""
    given = "goals, reference path, distances and teacher actions through env.privileged(), "
    given += "requested at construction"
    seed0 = {**CARD, "privileged": f"{given} (104 calls)"}
    seed1 = {**CARD, "privileged": f"{given} (105 calls)"}
    assert card_differences(seed0, seed1) == []
    assert check_comparable(seed0, seed1) == []
    assert card_notes(seed0, seed1) == [
        f"privileged: {given} (104 calls) (A) vs {given} (105 calls) (B)"
    ]
    runs = [
        {"metrics": {"SR": 0.5}, "protocol": seed0},
        {"metrics": {"SR": 0.6}, "protocol": seed1},
    ]
    result = aggregate_summaries(runs, ["snt0", "snt1"])
    assert result.differences == []
    assert result.card["privileged"] == {
        "snt0": f"{given} (104 calls)",
        "snt1": f"{given} (105 calls)",
    }
    assert card_differences(CARD, seed0) == [f"privileged: none (A) vs {given} (B)"]


def test_aggregate_refuses_ne_averaged_over_different_counts() -> None:
    """r2r-ce NE averages the reachable episodes: a mean of NE over 1839 episodes and NE over
    1539 is no seed variation, refused like a card difference (and listed when forced)."""
    runs = [{"metrics": {"SR": 0.02, "NE": 9.33}, "n_episodes": 1839, "averaged_over": {},
             "protocol": CARD},
            {"metrics": {"SR": 0.02, "NE": 9.38}, "n_episodes": 1839,
             "averaged_over": {"NE": 1539}, "protocol": CARD}]  # fmt: skip
    with pytest.raises(VLNEvalError) as exc:
        aggregate_summaries(runs, ["sce_rand", "sce_offp"])
    assert str(exc.value) == (
        "refusing to aggregate sce_offp with sce_rand: their protocol cards differ (NE averaged "
        "over: 1839 of 1839 episodes (sce_rand) vs 1539 of 1839 episodes (sce_offp)). Pass "
        "--force to aggregate anyway; the output will say so."
    )
    forced = aggregate_summaries(runs, ["sce_rand", "sce_offp"], force=True)
    assert forced.differences == [
        "NE averaged over: 1839 of 1839 episodes (sce_rand) vs 1539 of 1839 episodes (sce_offp)"
    ]
    same = [runs[1], {**runs[1], "metrics": {"SR": 0.03, "NE": 9.4}}]
    assert aggregate_summaries(same, ["a", "b"]).differences == []


def test_cards_with_other_unreachable_policies_differ() -> None:
    """VLN-CE's --unreachable policy is a scoring field, so it is compared."""
    failure = {**CARD, "scoring": {**CARD["scoring"], "unreachable": "failure"}}
    exclude = {**CARD, "scoring": {**CARD["scoring"], "unreachable": "exclude"}}
    assert card_differences(failure, exclude) == ["unreachable: failure (A) vs exclude (B)"]


def test_a_metric_infinite_in_every_episode_of_one_run_is_na(
    runs: tuple[ScoredRun, ScoredRun],
) -> None:
    import dataclasses

    import numpy as np

    from vlneval.metrics import LABELS
    from vlneval.reports.compare_terminal import not_compared_notices

    a, b = runs
    column = LABELS["NE"].column
    per = {**a.evaluation.per_episode, column: np.full(6, np.inf)}
    a_inf = ScoredRun(dataclasses.replace(a.evaluation, per_episode=per), a.label, a.graphs)
    cmp = compare_scored(a_inf, b, rng=0, n_resamples=200)
    why = "not finite (inf or NaN) in any of the 6 paired episodes of A (run_a): no episode left "
    assert cmp.unavailable == {"NE": why + "to compare"}
    assert "NE" not in cmp.metrics and list(cmp.metrics)[:2] == ["TL", "OSR"]
    assert cmp.metrics["SR"].difference == pytest.approx(2 / 6)  # the others are compared
    assert cmp.to_dict()["unavailable"] == {"NE": why + "to compare"}
    text = render_comparison(cmp, color=False)
    assert "│ NE (m)   │   n/a │   n/a │       n/a │" in text and "no finite pair" in text
    assert not_compared_notices([("A", a_inf), ("B", b)], cmp) == [
        ("note: NE is left out of the comparison: n/a, " + why + "to compare", "yellow")
    ]


def test_a_street_card_written_before_threshold_hops_is_comparable() -> None:
    """A touchdown card from before the key was named for its unit (``threshold_m``) compares
    with a new one (``threshold_hops``), and with aggregate too; another threshold still differs."""
    scoring = {"profile": "touchdown", "profile_version": "1", "comparison": "SPD <= 1 hop"}
    old = {**CARD, "task": "touchdown", "scoring": {**scoring, "threshold_m": 3.0}}
    new = {**CARD, "task": "touchdown", "scoring": {**scoring, "threshold_hops": 3.0}}
    assert card_differences(old, new) == []
    assert card_differences(old, {**new, "scoring": {**scoring, "threshold_hops": 1.0}}) == [
        "threshold_hops: 3.0 (A) vs 1.0 (B)"
    ]
    runs = [{"metrics": {"TC": 0.1}, "protocol": old}, {"metrics": {"TC": 0.2}, "protocol": new}]
    assert aggregate_summaries(runs, ["old", "new"]).differences == []
    assert old["scoring"]["threshold_m"] == 3.0  # the card itself is left as written
    r2r = {**CARD, "scoring": {"profile": "r2r", "profile_version": "1", "threshold_m": 3.0}}
    assert card_differences(r2r, {**r2r, "scoring": {**r2r["scoring"], "threshold_hops": 3.0}}) == [
        "threshold_hops: None (A) vs 3.0 (B)"
    ]
