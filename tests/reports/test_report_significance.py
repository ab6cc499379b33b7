"""The significance level and the coverage label: p = α is not significant, Holm's family
limits what the tests can reach, and a coverage is printed with every digit it has."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from tests.cli.test_cli_paper_tables import DEMO_PREDS
from vlneval.cli.main import main
from vlneval.reports.compare import significant, verdict
from vlneval.stats import Comparison

Capture = pytest.CaptureFixture[str]


def test_p_equal_to_alpha_is_not_significant() -> None:
    c = Comparison("SR", 0.6, 0.5, 0.1, 0.05, 0.15, 0.05, "mcnemar-exact", 100, 0.95, 0.05)
    assert not significant(c) and verdict("SR", c) == "no detectable difference"
    assert significant(dataclasses.replace(c, p_adjusted=0.0499999))
    c = dataclasses.replace(c, confidence=0.975, p_adjusted=0.025)
    assert not significant(c) and significant(dataclasses.replace(c, p_adjusted=0.0249999))


def test_monte_carlo_floor_times_holm_is_warned_and_the_level_keeps_its_digits(
    tmp_path: Path, capsys: Capture
) -> None:
    records = json.loads(DEMO_PREDS.read_text())
    stop = tmp_path / "stop.json"  # every episode differs: Monte Carlo sign flips
    stop.write_text(json.dumps([{**r, "trajectory": r["trajectory"][:1]} for r in records]))
    a, d = str(DEMO_PREDS), str(stop)
    out = tmp_path / "c.json"
    args = ["compare", "--task", "demo", a, d, "--by-episode", "--json", str(out)]
    assert (
        main([*args, "--permutations", "100", "--resamples", "100", "--confidence", "0.975"]) == 0
    )
    captured = capsys.readouterr()
    assert "97.5% CI of Δ" in captured.out and "98%" not in captured.out
    assert (
        "warning: --resamples 100: a percentile interval from fewer than 1000 resamples is not "
        "a reliable 97.5% interval"
    ) in captured.err
    tests = {r["test"] for r in json.loads(out.read_text())["metrics"]}
    assert "permutation-monte-carlo" in tests
    assert (
        "warning: --permutations 100: a Monte Carlo p is at least 1/101 = 0.0099, 0.0594 after "
        "Holm over 6 Monte Carlo tests, so no Monte Carlo test can reach p < 0.025; use "
        "--permutations 240 or more"
    ) in captured.err
    assert (
        main([*args, "--permutations", "320", "--resamples", "100", "--confidence", "0.975"]) == 0
    )
    assert "Monte Carlo p is at least" not in capsys.readouterr().err


def test_the_monte_carlo_floor_counts_only_the_monte_carlo_tests_of_the_family() -> None:
    """The README's seq2seq comparison with --by-episode --permutations 130: SR and OSR are
    exact, so TL's best Holm multiplier is the 6 Monte Carlo tests (6/131 = 0.0458 < 0.05, as
    its table shows): no warning; with 120 sign flips 6/121 < 0.05 still, with 119 not."""
    from vlneval.reports.compare import RunComparison
    from vlneval.reports.compare_terminal import p_floor_notice

    def test(metric: str, kind: str) -> Comparison:
        return Comparison(metric, 1.0, 2.0, 1.0, 0.5, 1.5, 0.001, kind, 2349, 0.95)

    exact = {m: test(m, "mcnemar-exact") for m in ("SR", "OSR")}
    mc = {m: test(m, "permutation-monte-carlo") for m in ("TL", "NE", "SPL", "nDTW", "sDTW", "CLS")}
    cmp = RunComparison("a", "b", exact | mc, 2349, 0, 0, None, settings={"n_permutations": 130})
    assert p_floor_notice([cmp]) == []
    cmp.settings["n_permutations"] = 120
    assert p_floor_notice([cmp]) == []
    cmp.settings["n_permutations"] = 119
    assert p_floor_notice([cmp]) == [(
        "warning: --permutations 119: a Monte Carlo p is at least 1/120 = 0.00833, 0.05 after "
        "Holm over 6 Monte Carlo tests, so no Monte Carlo test can reach p < 0.05; use "
        "--permutations 120 or more", "yellow",
    )]  # fmt: skip
    # Three runs against one baseline are one Holm family: 18 Monte Carlo tests.
    cmp.settings["n_permutations"] = 130
    assert p_floor_notice([cmp, cmp, cmp])[0][0] == (
        "warning: --permutations 130: a Monte Carlo p is at least 1/131 = 0.00763, 0.137 after "
        "Holm over 18 Monte Carlo tests, so no Monte Carlo test can reach p < 0.05; use "
        "--permutations 360 or more"
    )


def test_paper_table_prints_na_for_a_baseline_with_infinite_tl() -> None:
    from vlneval.reports.compare import MultiComparison, RunComparison
    from vlneval.reports.compare_terminal import render_multi

    tl = Comparison("TL", 9.0, 8.0, 1.0, 0.5, 1.5, 0.5, "permutation-exact", 4, 0.95, 0.5)
    sr = Comparison("SR", 0.5, 0.25, 0.25, 0.0, 0.5, 0.5, "mcnemar-exact", 5, 0.95, 0.5)
    run = RunComparison("a", "b", {"TL": tl, "SR": sr}, 5, 0, 0, None)
    multi = MultiComparison("a", [run], {"TL": float("inf"), "SR": 0.25})
    text = render_multi(multi, fmt="markdown")
    assert "| a (A) | n/a | 25.00 |" in text
    assert "| b [5 of 5 episodes] |" not in text and "| b | 9.00 (+1.00 vs A 8.00) |" in text
    assert (
        "; n/a: A's TL is infinite in some of its episodes (no mean); each run's cell compares "
        "the episodes where both are finite"
    ) in text
    assert "inf" not in text.replace("infinite", "")
