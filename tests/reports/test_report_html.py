"""The HTML report's content: sections, escaping, embedded images and table, determinism."""

from __future__ import annotations

import base64
import csv
import dataclasses
import io
import re
from html import escape

import pytest

from tests.reports.conftest import House
from tests.reports.house import OUTCOMES
from vlneval.diagnostics import ScoredRun, score_run
from vlneval.errors import VLNEvalError
from vlneval.evaluation import Scorer
from vlneval.reports.html import ReportOptions, build_report
from vlneval.tasks import get_profile
from vlneval.tasks.profiles import ObjectGoalProfile

OPTIONS = ReportOptions(n_worst=2, n_sample=2, n_resamples=200)


@pytest.fixture(scope="module")
def compared(runs: tuple[ScoredRun, ScoredRun]):  # type: ignore[no-untyped-def]
    a, b = runs
    return build_report(b, baseline=a, options=OPTIONS)


def test_sections_and_self_containment(compared) -> None:  # type: ignore[no-untyped-def]
    html = compared.html
    ids = re.findall(r'<section id="([a-z]+)">', html)
    assert ids == [
        "summary", "checks", "protocol", "comparison", "outcomes", "budget", "distributions",
        "breakdowns", "episodes",
    ]  # fmt: skip
    assert "<script" not in html
    assert not re.search(r'(src|href)="(?!data:|#)', html)  # every resource is embedded
    # 2 worst + 2 sampled + 2 only-B episodes, comparison, outcomes, budget, 2 distributions
    assert len(re.findall(r'<img src="data:image/png;base64,', html)) == 6 + 1 + 1 + 1 + 2


def test_disagreements_are_drawn_with_both_paths(compared) -> None:  # type: ignore[no-untyped-def]
    html = compared.html
    # B alone solves 2_0 and 3_0; A solves nothing B does not: that group is left out
    assert "<h3>Episodes only B solves</h3><p class='muted'>2 of 2, drawn at random</p>" in html
    assert "Episodes only A (the baseline) solves" not in html
    assert "baseline A: failure, NE 12.00 m, TL 4.00 m (dashed blue path)" in html


def test_values_in_the_page(compared) -> None:  # type: ignore[no-untyped-def]
    html = compared.html
    assert "<b>A</b> = run_a (baseline), <b>B</b> = run_b" in html
    assert "Success pairs: both succeed <b>2</b>, only A <b>0</b>, only B <b>2</b>" in html
    assert "66.67%" in html and "+33.33 pp" in html  # B's SR and the SR difference
    assert "Walk down the hall &lt;b&gt;&amp;&lt;/b&gt; stop" in html  # instructions are escaped
    assert "<b>&</b>" not in html


def test_per_episode_download(runs: tuple[ScoredRun, ScoredRun]) -> None:
    report = build_report(runs[0], options=OPTIONS)
    uri = re.search(r'href="data:text/csv;base64,([^"]+)"', report.html)
    assert uri is not None
    rows = list(csv.DictReader(io.StringIO(base64.b64decode(uri.group(1)).decode())))
    assert {r["instr_id"]: r["outcome"] for r in rows} == OUTCOMES
    assert float(rows[0]["shortest_length"]) == 8.0 and "shortest_distance" not in rows[0]
    failures = report.data["diagnostics"]["failures"]["classes"]
    assert [c["count"] for c in failures] == [2, 1, None, 2, 1]
    assert report.data["comparison"] is None


def test_same_inputs_same_bytes(runs: tuple[ScoredRun, ScoredRun]) -> None:
    one = build_report(runs[0], options=OPTIONS)
    two = build_report(runs[0], options=OPTIONS)
    assert one.html == two.html


def test_incomparable_baseline_is_refused_then_forced(house: House) -> None:
    a = score_run(Scorer("r2r", "val", root=house.root, profile="r2r-envdrop"), house.a)
    b = score_run(Scorer("r2r", "val", root=house.root), house.b)
    with pytest.raises(VLNEvalError, match="profile: r2r-envdrop v1 \\(A\\) vs r2r v1 \\(B\\)"):
        build_report(b, baseline=a, options=OPTIONS)
    forced = build_report(b, baseline=a, options=ReportOptions(n_worst=0, n_sample=0, force=True))
    assert "Forced comparison: the protocol cards differ" in forced.html
    assert forced.data["comparison"]["forced"] is True


def test_no_episode_plots_when_asked(runs: tuple[ScoredRun, ScoredRun]) -> None:
    report = build_report(runs[0], options=ReportOptions(n_worst=0, n_sample=0, n_resamples=50))
    assert "class='episode'" not in report.html


def test_the_style_sheet_colours_the_outcome_classes_as_the_plots_do() -> None:
    from vlneval.reports.html import report_css
    from vlneval.reports.plots_base import COLORS
    from vlneval.reports.plots_distributions import OUTCOME_COLORS

    css = report_css()
    shown = dict(OUTCOME_COLORS, step_limit="#495057", stopped_early="#7a7000")  # darker: legible
    assert set(shown) == {"success", "passed_goal", "step_limit", "stopped_early", "wandered"}
    for name, color in shown.items():
        assert f".class-{name} {{ color: {color}; font-weight: 600; }}" in css
    assert OUTCOME_COLORS["success"] == COLORS["success"] == "#009e73"
    assert OUTCOME_COLORS["wandered"] == COLORS["fail"] == "#b2182b"
    assert OUTCOME_COLORS["passed_goal"] == "#56b4e9"
    assert ":root { --good: #009e73; --bad: #b2182b; }" in css
    assert css.count(".class-") == 5 and css.count("--good:") == 1


@pytest.mark.parametrize(
    ("metric", "rule", "marked"),
    [
        ("NE", "within 3.0 m of the goal (NE < 3.0)", True),  # worded otherwise, NE's δ still
        (None, "NE < 3.0 and the object named", False),  # success is no threshold on NE
    ],
)
def test_the_ecdf_marks_delta_from_the_profiles_success_metric(
    runs: tuple[ScoredRun, ScoredRun], metric: str | None, rule: str, marked: bool
) -> None:
    """The report reads the profile's declared success metric, not the words of its rule."""
    profile = ObjectGoalProfile("p", "1", "doc", success_metric=metric, success_rule=rule)
    run = dataclasses.replace(
        runs[0], evaluation=dataclasses.replace(runs[0].evaluation, profile=profile)
    )
    html = build_report(run, options=OPTIONS).html
    assert f"success is {escape(rule)}." in html
    delta = "ECDF of NE: the share of episodes with NE ≤ x m; its height at δ is about the success"
    assert (delta in html) is marked


def test_each_profile_declares_its_success_metric() -> None:
    got = {n: get_profile(n).success_metric for n in ("r2r", "soon", "touchdown", "reverie")}
    assert got == {"r2r": "NE", "soon": "NE", "touchdown": "SPD", "reverie": None}
    assert get_profile("touchdown-vlnt").success_metric == "SPD"
    assert "success_metric" not in get_profile("r2r").to_dict()  # the summary keeps its shape
