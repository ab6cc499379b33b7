"""Whole-cluster resampling (R2R: the three instructions of one path): hand-worked values and
the property that one episode per cluster gives exactly the episode version."""

from __future__ import annotations

import numpy as np
import pytest

from vlneval.errors import InvalidInputError
from vlneval.stats import bootstrap_table, compare_runs, paired_difference
from vlneval.stats._checks import prepare_columns
from vlneval.stats._resample import bootstrap_distribution


def test_cluster_resamples_are_means_over_the_drawn_episodes() -> None:
    # Path p has two episodes (1, 1), path q one (0): drawing two paths gives pp -> 1,
    # pq or qp -> 2/3, qq -> 0, never the 1/2 an episode resample can give.
    prepared = prepare_columns(
        "t", ["x"], [[1.0, 1.0, 0.0]], nan_policy="raise", groups=["p", "p", "q"],
        first_seen=True,
    )  # fmt: skip
    out = bootstrap_distribution(
        prepared.data, rng=np.random.default_rng(0), n_resamples=4000, statistic=np.mean,
        codes=prepared.codes, n_groups=prepared.n_groups, where="t", two_stage=False,
    )  # fmt: skip
    assert sorted(set(out[0].tolist())) == [0.0, 2 / 3, 1.0]
    table = bootstrap_table({"x": [1.0, 1.0, 0.0]}, rng=0, groups=["p", "p", "q"], two_stage=False)
    assert (table["x"].estimate, table["x"].low, table["x"].high) == (2 / 3, 0.0, 1.0)
    assert table["x"].method == "bootstrap-percentile-cluster"


def test_cluster_sign_flip_is_exact_over_path_sums() -> None:
    # d = (1, 1, -0.5, 2) on paths (p, p, q, r): path sums (2, -0.5, 2), observed |3.5|; of the
    # 8 sign patterns, +-+ (3.5), ++ + (4.5) and their negatives reach it: p = 4/8. By episode
    # the 16 patterns of (1, 1, -0.5, 2) reach |3.5| only with ++-+ (4.5), ++++ (3.5) and
    # their negatives: p = 4/16.
    a, b = [1.0, 1.0, 0.0, 2.0], [0.0, 0.0, 0.5, 0.0]
    c = paired_difference(a, b, rng=0, groups=["p", "p", "q", "r"], two_stage=False)
    assert (c.test, c.p_value, c.difference) == ("cluster-permutation-exact", 0.5, 0.875)
    assert paired_difference(a, b, rng=0).p_value == 0.25


def test_whole_groups_need_the_mean() -> None:
    with pytest.raises(InvalidInputError, match="supports only statistic=np.mean"):
        bootstrap_table({"x": [1.0, 0.0]}, rng=0, groups=[0, 1], two_stage=False,
                        statistic=np.median)  # fmt: skip


@pytest.mark.parametrize("n", [7, 40])  # exact and Monte Carlo sign flips
def test_one_episode_per_path_equals_the_episode_version(n: int) -> None:
    gen = np.random.default_rng(n)
    a = {"SPL": gen.random(n), "SR": (gen.random(n) < 0.5).astype(float)}
    b = {"SPL": gen.random(n), "SR": (gen.random(n) < 0.5).astype(float)}
    paths = gen.permutation([f"path{k}" for k in range(n)])  # unique, not in sorted order
    alone = bootstrap_table(a, rng=3, n_resamples=500)
    clustered = bootstrap_table(a, rng=3, n_resamples=500, groups=paths, two_stage=False)
    for m in a:
        assert (alone[m].estimate, alone[m].low, alone[m].high) == (
            clustered[m].estimate, clustered[m].low, clustered[m].high,
        )  # fmt: skip
    kw = {"rng": 5, "n_resamples": 500, "n_permutations": 999, "test": "permutation"}
    by_episode = compare_runs(a, b, **kw)
    by_path = compare_runs(a, b, groups=paths, two_stage=False, **kw)
    for m in a:
        e, p = by_episode[m], by_path[m]
        assert (e.difference, e.ci_low, e.ci_high, e.p_value) == (
            p.difference, p.ci_low, p.ci_high, p.p_value,
        )  # fmt: skip
        assert p.test == "cluster-" + e.test
