"""Tests of vlneval.stats.paired: hand cases, invariants, bad arguments."""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from vlneval.errors import InvalidInputError
from vlneval.stats import Comparison, compare_runs, holm_adjust, paired_difference

finite = st.floats(min_value=-1e3, max_value=1e3, allow_nan=False, allow_infinity=False)


@st.composite
def paired_arrays(draw: st.DrawFn, *, binary: bool = False) -> tuple[np.ndarray, np.ndarray]:
    n = draw(st.integers(1, 30))
    elements = st.sampled_from([0.0, 1.0]) if binary else finite
    return draw(arrays(np.float64, n, elements=elements)), draw(
        arrays(np.float64, n, elements=elements)
    )


def brute_force_sign_flip_p(diffs: list[float]) -> float:
    observed = abs(sum(diffs))
    patterns = list(itertools.product((1, -1), repeat=len(diffs)))
    hits = sum(
        abs(sum(s * d for s, d in zip(signs, diffs, strict=True))) >= observed - 1e-9
        for signs in patterns
    )
    return hits / len(patterns)


# ---------------------------------------------------------------- hand-checked cases


def test_mcnemar_eight_discordant_pairs_all_one_way() -> None:
    a = np.array([1, 1, 1, 1, 1, 1, 1, 1, 0, 1, 0], dtype=float)
    b = np.array([0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0], dtype=float)
    c = paired_difference(a, b, rng=0, metric="SR")
    assert c.test == "mcnemar-exact"
    assert c.p_value == pytest.approx(2 * 0.5**8) == 0.0078125
    assert (c.metric, c.n) == ("SR", 11)
    assert c.difference == pytest.approx(8 / 11)
    assert 0.0 < c.ci_low <= c.difference <= c.ci_high <= 1.0


def test_mcnemar_counts_only_discordant_pairs() -> None:
    # n10 = 3, n01 = 1: two-sided binomial p = 2 * (1 + 4) / 16 = 0.625.
    a = [1.0, 1.0, 1.0, 0.0, 1.0, 1.0, 0.0, 0.0]
    b = [0.0, 0.0, 0.0, 1.0, 1.0, 1.0, 0.0, 0.0]
    c = paired_difference(a, b, rng=0, metric="SR")
    assert (c.test, c.p_value) == ("mcnemar-exact", pytest.approx(0.625))


def test_sign_test_on_binary_data_is_mcnemar() -> None:
    a = [1.0, 1.0, 1.0, 0.0, 1.0, 1.0, 0.0]
    b = [0.0, 0.0, 0.0, 1.0, 1.0, 1.0, 0.0]
    mcnemar = paired_difference(a, b, rng=0, test="mcnemar")
    sign = paired_difference(a, b, rng=0, test="sign")
    assert sign.test == "sign-exact"
    assert sign.p_value == mcnemar.p_value


def test_sign_test_on_continuous_data() -> None:
    # differences 2, 1, 3, -1, 0: 3 positive, 1 negative -> p = 2 * (1 + 4) / 16.
    c = paired_difference([3.0, 2.0, 4.0, 0.0, 5.0], [1.0, 1.0, 1.0, 1.0, 5.0], rng=0, test="sign")
    assert (c.test, c.p_value) == ("sign-exact", 0.625)


def test_exact_sign_flip_hand_example() -> None:
    # differences 2, 1, 3, -1; |sum| = 5. Of the 16 sign patterns, |sum| >= 5 for
    # (+,+,+,-), (+,+,+,+), (+,-,+,-) and their 3 negations: p = 6/16.
    c = paired_difference([3.0, 2.0, 4.0, 0.0], [1.0, 1.0, 1.0, 1.0], rng=0)
    assert (c.test, c.p_value, c.difference) == ("permutation-exact", 0.375, 1.25)


def test_exact_sign_flip_ignores_zero_differences() -> None:
    with_zeros = paired_difference([3.0, 2.0, 7.0, 4.0, 0.0, 9.0], [1, 1, 7, 1, 1, 9], rng=0)
    assert with_zeros.p_value == 0.375


def test_exact_sign_flip_all_positive() -> None:
    c = paired_difference([0.9, 0.8, 0.7, 0.6, 0.5], [0.1, 0.2, 0.3, 0.4, 0.45], rng=0)
    assert c.p_value == 2 / 32


@settings(max_examples=40, deadline=None)
@given(diffs=st.lists(st.integers(-5, 5), min_size=1, max_size=8))
def test_exact_sign_flip_matches_brute_force(diffs: list[int]) -> None:
    a = np.asarray(diffs, dtype=float) + 0.5  # +0.5 keeps a and b off {0, 1}: permutation test
    b = np.full(len(diffs), 0.5)
    c = paired_difference(a, b, rng=0, test="permutation")
    nonzero = [float(d) for d in diffs if d != 0]
    assert c.p_value == pytest.approx(brute_force_sign_flip_p(nonzero))


def test_cluster_sign_flip_hand_example() -> None:
    # differences 1, 1, -1, 2 in groups g1, g1, g2, g3: group sums 2, -1, 2, |sum| = 3.
    # Sign patterns of (2, -1, 2) give 3, -1, 5, 1, -1, -5, 1, -3: four of eight >= 3.
    c = paired_difference([1.0, 1.0, 0.0, 2.0], [0.0, 0.0, 1.0, 0.0], rng=0, groups=[1, 1, 2, 3])
    assert (c.test, c.p_value) == ("cluster-permutation-exact", 0.5)


def test_monte_carlo_p_value_approaches_the_exact_one() -> None:
    rng = np.random.default_rng(0)
    a, b = rng.normal(0.3, 1.0, 14), rng.normal(0.0, 1.0, 14)
    exact = paired_difference(a, b, rng=0)
    sampled = paired_difference(a, b, rng=0, exact_max=0, n_permutations=20000)
    assert exact.test == "permutation-exact"
    assert sampled.test == "permutation-monte-carlo"
    assert sampled.p_value == pytest.approx(exact.p_value, abs=0.015)


def test_monte_carlo_p_value_is_never_zero() -> None:
    a = np.arange(1.0, 41.0)
    c = paired_difference(a, np.zeros(40), rng=0, n_permutations=99)
    assert (c.test, c.p_value) == ("permutation-monte-carlo", 1 / 100)


def test_holm_hand_example() -> None:
    # sorted 0.01, 0.02, 0.04, 0.5 -> 4*0.01, 3*0.02, max(0.06, 2*0.04), max(0.08, 0.5)
    adjusted = holm_adjust([0.04, 0.01, 0.5, 0.02])
    assert adjusted == pytest.approx([0.08, 0.04, 0.5, 0.06])
    assert holm_adjust([0.6, 0.7]).tolist() == [1.0, 1.0]
    assert holm_adjust([]).tolist() == []


def test_compare_runs_with_holm() -> None:
    a = {"SR": [1.0] * 8 + [0.0, 1.0], "nDTW": [0.9, 0.8, 0.7, 0.6, 0.5, 0.4, 0.3, 0.2, 0.1, 0.9]}
    b = {"SR": [0.0] * 8 + [0.0, 1.0], "nDTW": [0.8, 0.9, 0.6, 0.7, 0.4, 0.5, 0.2, 0.3, 0.1, 0.9]}
    table = compare_runs(a, b, rng=0, correction="holm")
    p = [c.p_value for c in table.values()]
    assert [c.p_adjusted for c in table.values()] == pytest.approx(holm_adjust(p).tolist())
    assert all(c.correction == "holm" for c in table.values())
    assert all(c.p_adjusted is not None and c.p_adjusted >= c.p_value for c in table.values())
    assert table["nDTW"].p_value == 1.0
    unadjusted = compare_runs(a, b, rng=0)
    assert all(c.p_adjusted is None and c.correction is None for c in unadjusted.values())


# ---------------------------------------------------------------- invariants


@settings(max_examples=40, deadline=None)
@given(pair=paired_arrays(), seed=st.integers(0, 2**32 - 1))
def test_identical_inputs_give_zero_difference_and_p_one(
    pair: tuple[np.ndarray, np.ndarray], seed: int
) -> None:
    a = pair[0]
    for kwargs in ({}, {"exact_max": 0}, {"groups": np.arange(a.size) % 3}, {"test": "sign"}):
        c = paired_difference(a, a.copy(), rng=seed, n_permutations=50, n_resamples=50, **kwargs)
        assert (c.difference, c.ci_low, c.ci_high, c.p_value) == (0.0, 0.0, 0.0, 1.0)


@settings(max_examples=30, deadline=None)
@given(pair=paired_arrays(binary=True), seed=st.integers(0, 2**32 - 1))
def test_identical_binary_inputs_give_p_one(pair: tuple[np.ndarray, np.ndarray], seed: int) -> None:
    c = paired_difference(pair[0], pair[0], rng=seed, n_resamples=50, metric="SR")
    assert (c.test, c.difference, c.p_value) == ("mcnemar-exact", 0.0, 1.0)


def _assert_swapped(ab: Comparison, ba: Comparison) -> None:
    assert ba.difference == -ab.difference
    assert (ba.mean_a, ba.mean_b) == (ab.mean_b, ab.mean_a)
    assert ba.ci_low == pytest.approx(-ab.ci_high, rel=1e-9, abs=1e-12)
    assert ba.ci_high == pytest.approx(-ab.ci_low, rel=1e-9, abs=1e-12)
    assert ba.p_value == ab.p_value
    assert ba.test == ab.test


@settings(max_examples=40, deadline=None)
@given(pair=paired_arrays(), seed=st.integers(0, 2**32 - 1))
def test_swapping_runs_negates_the_difference_and_keeps_p(
    pair: tuple[np.ndarray, np.ndarray], seed: int
) -> None:
    a, b = pair
    options: list[dict[str, Any]] = [
        {},
        {"exact_max": 0},
        {"test": "sign"},
        {"groups": np.arange(a.size) % 4},
    ]
    for kwargs in options:
        ab = paired_difference(a, b, rng=seed, n_resamples=100, n_permutations=100, **kwargs)
        ba = paired_difference(b, a, rng=seed, n_resamples=100, n_permutations=100, **kwargs)
        _assert_swapped(ab, ba)


@settings(max_examples=30, deadline=None)
@given(pair=paired_arrays(binary=True), seed=st.integers(0, 2**32 - 1))
def test_swapping_binary_runs_keeps_mcnemar_p(
    pair: tuple[np.ndarray, np.ndarray], seed: int
) -> None:
    a, b = pair
    ab = paired_difference(a, b, rng=seed, n_resamples=100, metric="OSR")
    _assert_swapped(ab, paired_difference(b, a, rng=seed, n_resamples=100, metric="OSR"))
    assert ab.test == "mcnemar-exact"


@settings(max_examples=40, deadline=None)
@given(pair=paired_arrays(), seed=st.integers(0, 2**32 - 1))
def test_p_value_is_a_probability_and_ci_contains_the_difference(
    pair: tuple[np.ndarray, np.ndarray], seed: int
) -> None:
    c = paired_difference(*pair, rng=seed, n_resamples=100, exact_max=4, n_permutations=100)
    assert 0.0 < c.p_value <= 1.0
    assert c.ci_low <= c.difference <= c.ci_high


def test_fixed_seed_gives_identical_output() -> None:
    rng = np.random.default_rng(1)
    a, b = rng.random(60), rng.random(60)
    first = paired_difference(a, b, rng=3)
    assert first.test == "permutation-monte-carlo"
    assert first == paired_difference(a, b, rng=3)
    assert first == paired_difference(a, b, rng=np.random.default_rng(3))


def test_compare_runs_matches_paired_difference_per_metric() -> None:
    rng = np.random.default_rng(2)
    n = 50
    a = {"SR": (rng.random(n) < 0.6).astype(float), "nDTW": rng.random(n), "TL": rng.random(n)}
    b = {"SR": (rng.random(n) < 0.5).astype(float), "nDTW": rng.random(n), "TL": rng.random(n)}
    groups = np.arange(n) % 20
    for kwargs in ({}, {"groups": groups}):
        table = compare_runs(a, b, rng=4, **kwargs)  # type: ignore[arg-type]
        assert list(table) == ["SR", "nDTW", "TL"]
        for name in a:
            alone = paired_difference(a[name], b[name], rng=4, metric=name, **kwargs)  # type: ignore[arg-type]
            assert table[name] == alone


def test_auto_uses_cluster_permutation_with_groups_on_binary_data() -> None:
    a, b, groups = [1.0, 0.0, 1.0, 1.0], [0.0, 0.0, 1.0, 0.0], [0, 0, 1, 2]
    c = paired_difference(a, b, rng=0, groups=groups, metric="SR")
    assert c.test == "cluster-permutation-exact"


# Four discordant pairs, all in favour of a: McNemar p = 2 * 0.5**4; the exact sign-flip test
# gives the same value (2 of the 16 sign patterns reach |sum| = 4), under its own name.
_TINY_A, _TINY_B = [1.0, 1.0, 1.0, 1.0, 0.0, 1.0], [0.0, 0.0, 0.0, 0.0, 0.0, 1.0]


@pytest.mark.parametrize(
    "metric",
    ["SR", "OSR", "OPSR", "RGS", "det_SR", "TC", "SDR@40", "success", "oracle_success"],
)
def test_auto_uses_mcnemar_for_the_metric_tables_0_1_outcomes(metric: str) -> None:
    c = paired_difference(_TINY_A, _TINY_B, rng=0, metric=metric)
    assert (c.test, c.p_value) == ("mcnemar-exact", 0.125)


@pytest.mark.parametrize(
    "metric", ["TL", "SPL", "sDTW", "nDTW", "NE", "CLS", "RGSPL", "spl", "path_length", "values"]
)
def test_auto_never_uses_mcnemar_because_values_happen_to_be_0_or_1(metric: str) -> None:
    c = paired_difference(_TINY_A, _TINY_B, rng=0, metric=metric)
    assert (c.test, c.p_value) == ("permutation-exact", 0.125)


def test_auto_refuses_a_0_1_outcome_with_other_values() -> None:
    with pytest.raises(InvalidInputError) as caught:
        paired_difference([1.0, 0.5], [0.0, 1.0], rng=0, metric="SR")
    assert str(caught.value) == (
        "error: paired_difference: test='auto' chose McNemar's test (the metric table marks it a 0/1 "
        "outcome per episode), which needs 0/1 values, but metric 'SR' of run a has 0.5 at "
        "episode index 1 (after omissions); use test='sign' or 'permutation' for a continuous "
        "metric"
    )


def test_compare_runs_chooses_each_metrics_test_by_its_kind() -> None:
    a = {"SR": _TINY_A, "TL": _TINY_A, "SPL": _TINY_A, "sDTW": _TINY_A}
    b = {"SR": _TINY_B, "TL": _TINY_B, "SPL": _TINY_B, "sDTW": _TINY_B}
    table = compare_runs(a, b, rng=0)
    assert {m: c.test for m, c in table.items()} == {
        "SR": "mcnemar-exact",
        "TL": "permutation-exact",
        "SPL": "permutation-exact",
        "sDTW": "permutation-exact",
    }


def test_per_metric_test_choice() -> None:
    a = {"SR": [1.0, 0.0, 1.0], "nDTW": [0.9, 0.1, 0.5]}
    b = {"SR": [0.0, 0.0, 1.0], "nDTW": [0.8, 0.2, 0.5]}
    table = compare_runs(a, b, rng=0, test={"SR": "permutation"})
    assert (table["SR"].test, table["nDTW"].test) == ("permutation-exact", "permutation-exact")


def test_omit_drops_the_episode_from_both_runs() -> None:
    c = paired_difference([1.0, np.nan, 3.0], [0.0, 1.0, np.inf], rng=0, nan_policy="omit")
    assert (c.n, c.mean_a, c.mean_b) == (1, 1.0, 0.0)


def test_to_dict_round_trip() -> None:
    c = paired_difference([1.0, 0.0, 1.0], [0.0, 0.0, 1.0], rng=0)
    assert Comparison(**c.to_dict()) == c  # type: ignore[arg-type]


# ---------------------------------------------------------------- bad arguments


@pytest.mark.parametrize(
    ("a", "b", "kwargs", "message"),
    [
        (
            [1.0, 0.0, 1.0],
            [1.0, 0.0],
            {},
            r"length mismatch: metric 'values' of run a has 3 "
            r"episodes but metric 'values' of run b has 2",
        ),
        ([], [], {}, r"metric 'values' of run a is empty; need at least one episode"),
        (
            [1.0, np.nan],
            [1.0, 0.0],
            {"metric": "spl"},
            r"metric 'spl' of run a has 1 non-finite value\(s\) \(NaN or inf\) at episode index 1",
        ),
        (
            [0.5, 1.0],
            [0.0, 1.0],
            {"test": "mcnemar", "metric": "spl"},
            r"test='mcnemar' needs 0/1 values, but metric 'spl' of run a has 0.5 at episode "
            r"index 0",
        ),
        (
            [1.0, 0.0],
            [0.0, 0.0],
            {"test": "mcnemar", "groups": [0, 1]},
            r"test='mcnemar' \(metric 'values'\) assumes independent episodes",
        ),
        (
            [1.0, 0.0],
            [0.0, 0.0],
            {"test": "sign", "groups": [0, 1]},
            r"test='sign' .* assumes independent episodes",
        ),
        (
            [1.0],
            [0.0],
            {"test": "wilcoxon"},
            r"test for metric 'values' must be one of 'auto', 'mcnemar', 'sign', 'permutation'",
        ),
        ([1.0], [0.0], {"rng": None}, r"rng must be a numpy.random.Generator"),
        ([1.0], [0.0], {"exact_max": 21}, r"exact_max must be in \[0, 20\]; got 21"),
        ([1.0], [0.0], {"n_permutations": 0}, r"n_permutations must be >= 1; got 0"),
        ([1.0], [0.0], {"n_resamples": -3}, r"n_resamples must be >= 1; got -3"),
        ([1.0], [0.0], {"confidence": 0.0}, r"confidence must be in \(0, 1\)"),
        ([1.0], [0.0], {"nan_policy": "drop"}, r"nan_policy must be one of 'raise', 'omit'"),
        ([1.0, 2.0], [0.0, 1.0], {"groups": [0]}, r"groups has 1 entries but there are 2"),
        ([1e308, 1.0], [-1e308, 0.0], {}, r"a - b overflows to inf"),
    ],
)
def test_paired_difference_bad_arguments(
    a: list[float], b: list[float], kwargs: dict[str, object], message: str
) -> None:
    arguments: dict[str, object] = {"rng": 0, **kwargs}
    with pytest.raises(InvalidInputError, match=message):
        paired_difference(a, b, **arguments)  # type: ignore[arg-type]


def test_compare_runs_needs_the_same_metrics() -> None:
    with pytest.raises(
        InvalidInputError,
        match=r"same metrics; only in run a: \['spl'\], only in run b: \['ndtw'\]",
    ):
        compare_runs({"sr": [1.0], "spl": [1.0]}, {"sr": [1.0], "ndtw": [1.0]}, rng=0)


def test_compare_runs_refuses_empty_runs() -> None:
    with pytest.raises(InvalidInputError, match="run a must be a non-empty mapping"):
        compare_runs({}, {}, rng=0)


def test_compare_runs_unknown_test_name_suggests_the_closest() -> None:
    with pytest.raises(
        InvalidInputError, match=r"unknown metric\(s\) \['nDTV'\]; did you mean 'nDTW'"
    ):
        compare_runs({"nDTW": [1.0]}, {"nDTW": [0.0]}, rng=0, test={"nDTV": "sign"})


def test_compare_runs_bad_correction() -> None:
    with pytest.raises(
        InvalidInputError, match=r"correction must be one of 'holm'; got 'bonferroni'"
    ):
        compare_runs({"x": [1.0]}, {"x": [0.0]}, rng=0, correction="bonferroni")


@pytest.mark.parametrize(
    ("p", "message"),
    [([0.5, 1.5], r"p_values must lie in \[0, 1\]"), ([[0.1]], r"1-D"), ([np.nan], r"\[0, 1\]")],
)
def test_holm_bad_arguments(p: object, message: str) -> None:
    with pytest.raises(InvalidInputError, match=message):
        holm_adjust(p)  # type: ignore[arg-type]
