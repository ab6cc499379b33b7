"""Review fixes of ``compare``, ``report`` and their tables: each asserts the exact new text."""

from __future__ import annotations

import base64
import json
import re
from html import escape
from pathlib import Path

import pytest

from tests.reports.conftest import EXECUTED_B, House
from tests.reports.house import predictions
from vlneval.cli.main import main

Capture = pytest.CaptureFixture[str]

SKIPPED = (
    "warning: 1 record(s) without 'instr_id' that look like a summary were skipped "
    "(--skip-summary-records; record 0)"
)


def _data(house: House) -> list[str]:
    return ["--task", "r2r", "--split", "val", "--data-root", str(house.root)]


def _with_summary(tmp_path: Path) -> Path:
    path = tmp_path / "with_summary.json"
    path.write_text(json.dumps([{"success_rate": 0.5, "spl": 0.4}, *predictions()]))
    return path


def test_compare_shows_each_runs_warnings(house: House, tmp_path: Path, capsys: Capture) -> None:
    out, b = tmp_path / "c.json", _with_summary(tmp_path)
    args = ["compare", *_data(house), str(house.a), str(b), "--skip-summary-records"]
    assert main([*args, "--json", str(out)]) == 0
    assert f"B (with_summary): {SKIPPED}" in capsys.readouterr().err
    warnings = json.loads(out.read_text())["warnings"]
    assert warnings == {"A": [], "B": [SKIPPED.removeprefix("warning: ")]}


def test_report_compare_shows_the_baselines_warnings(
    house: House, tmp_path: Path, capsys: Capture
) -> None:
    out, a = tmp_path / "r.html", _with_summary(tmp_path)
    code = main([
        "report", *_data(house), "--predictions", str(house.b), "--compare", str(a),
        "--skip-summary-records", "--out", str(out), "--worst", "0", "--sample", "0",
    ])  # fmt: skip
    assert code == 0
    assert f"A (with_summary): {SKIPPED}" in capsys.readouterr().err
    html = out.read_text(encoding="utf-8")
    checks = html[html.index("Consistency checks and warnings") :]
    assert "<h3>A: with_summary</h3>" in checks and "<h3>B: run_b</h3>" in checks
    assert SKIPPED.removeprefix("warning: ").replace("'", "&#x27;") in checks


def test_report_compare_puts_the_runs_side_by_side_on_shared_episodes(
    house: House, tmp_path: Path
) -> None:
    # B scored 3 of the 6 episodes: A (all 6 scored) is shown on those 3, not on its own 6.
    part = tmp_path / "part.json"
    part.write_text(json.dumps(predictions({k: EXECUTED_B[k] for k in ("2_0", "3_0", "4_0")})))
    out = tmp_path / "r.html"
    code = main([
        "report", *_data(house), "--predictions", str(part), "--subset", "--compare",
        str(house.a), "--out", str(out), "--quiet", "--worst", "0", "--sample", "0",
    ])  # fmt: skip
    assert code == 0
    html = out.read_text(encoding="utf-8")
    note = (
        "A and B side by side on the 3 episodes both scored (A scored 6, B 3); the Summary "
        "is B's on all its episodes."
    )
    assert html.count(escape(note)) == 4  # outcomes, budgets, distributions, breakdowns
    outcomes = html[html.index("Why episodes fail") : html.index("Success within a path")]
    start = outcomes.index("reached and stopped")
    reached = outcomes[start : outcomes.index("</tr>", start)]
    assert re.findall(r"\d+ \([\d.]+%\)", reached) == ["0 (0.0%)", "2 (66.7%)"]


@pytest.mark.parametrize("command", ["report", "compare"])
def test_a_negative_seed_is_refused_naming_the_option(
    house: House, command: str, capsys: Capture
) -> None:
    files = ["--predictions", str(house.a)] if command == "report" else [str(house.a)] * 2
    assert main([command, *_data(house), *files, "--seed", "-1"]) == 2
    assert capsys.readouterr().err == "error: --seed must be a non-negative integer, got -1\n"


def test_compare_by_scan_names_the_cluster_test_and_warns_of_few_scans(
    house: House, capsys: Capture
) -> None:
    args = ["compare", *_data(house), str(house.a), str(house.b), "--by-scan"]
    assert main([*args, "--resamples", "200"]) == 0
    captured = capsys.readouterr()
    caption = " ".join(captured.out.split())
    assert (
        "p: cluster permutation (signs flipped per scan), Holm-adjusted over 8 metrics" in caption
    )
    assert "McNemar" not in captured.out
    assert (
        "warning: --by-scan over 1 scan: the cluster test's smallest possible p is 2/2^1 = 1, "
        "so no difference can reach p < 0.05; the interval from resampling 1 scan is "
        "unreliable too"
    ) in captured.err
    assert main([*args, "--resamples", "200", "--format", "markdown"]) == 0
    assert "over 8 tests (cluster permutation (signs flipped per scan));" in capsys.readouterr().out


def test_report_by_scan_names_the_cluster_test(house: House, tmp_path: Path) -> None:
    out = tmp_path / "r.html"
    code = main([
        "report", *_data(house), "--predictions", str(house.b), "--compare", str(house.a),
        "--by-scan", "--out", str(out), "--quiet", "--worst", "0", "--sample", "0",
        "--resamples", "200",
    ])  # fmt: skip
    assert code == 0
    html = out.read_text(encoding="utf-8")
    assert (
        "p: a permutation test flipping the signs of whole scans&#x27; differences, for every "
        "metric; Holm-adjusted across the metrics."
    ) in html
    assert "McNemar" not in html


def test_touchdown_report_names_its_units_and_breakdowns(tmp_path: Path) -> None:
    from tests.tasks.touchdown.fixture import make_root, nav

    root, p, out = make_root(tmp_path / "root"), nav(tmp_path), tmp_path / "td.html"
    code = main([
        "report", "--task", "touchdown", "--split", "dev", "--data-root", str(root),
        "--predictions", str(p), "--out", str(out), "--quiet", "--worst", "0", "--sample", "0",
    ])  # fmt: skip
    assert code == 0
    html = out.read_text(encoding="utf-8")
    assert "Rates in %; SPD in hops." in html and "lengths in metres" not in html
    assert ">Breakdowns by scan and instruction length<" in html


def test_reverie_report_words_success_by_visibility(tmp_path: Path) -> None:
    from tests.reports.test_report_every_task import _reverie

    out = tmp_path / "rv.html"
    code = main(["report", *_reverie(tmp_path), "--out", str(out), "--quiet", "--worst", "0"])
    assert code == 0
    html = out.read_text(encoding="utf-8")
    rule = (
        "target object visible from the final viewpoint (non-empty visible_pos in the BBox files)"
    )
    assert escape(f"1 when the stop meets the task's success rule ({rule})") in html
    assert escape(f"success: the stop meets the success rule ({rule})") in html
    assert "some position met the success rule (oracle success)" in html
    assert "met the rule in passing but did not stop" in html
    assert "within δ" not in html and "NE within the threshold" not in html


def test_report_csv_is_the_score_tables_rows(house: House, tmp_path: Path) -> None:
    out, rows = tmp_path / "r.html", tmp_path / "rows.csv"
    base = [*_data(house), "--quiet"]
    assert main(["score", *base, "--predictions", str(house.a), "--per-episode", str(rows)]) == 0
    code = main(["report", *base, "--predictions", str(house.a), "--out", str(out), "--worst", "0"])
    assert code == 0
    html = out.read_text(encoding="utf-8")
    uri = re.search(r'href="data:text/csv;base64,([^"]+)"', html)
    assert uri is not None
    embedded = base64.b64decode(uri.group(1)).decode().splitlines()
    scored = rows.read_text().splitlines()
    assert embedded[0] == scored[0] + ",outcome"  # no shortest_distance: it is shortest_length
    assert [line.rsplit(",", 1)[0] for line in embedded[1:]] == scored[1:]  # success 0/1, steps
    assert "(6 rows: every metric and the outcome class)" in html


def test_csv_writes_an_unreachable_value_as_an_empty_cell(tmp_path: Path) -> None:
    from vlneval.reports.tables import write_rows

    path = tmp_path / "t.csv"
    write_rows(path, [{"id": "a", "nav_error": float("inf")}, {"id": "b", "nav_error": 2.5}])
    assert path.read_text().splitlines() == ["id,nav_error", "a,", "b,2.5"]


def test_compare_metrics_typo_suggests_the_label(house: House, capsys: Capture) -> None:
    args = ["compare", *_data(house), str(house.a), str(house.b), "--metrics", "spl,SRR"]
    assert main(args) == 2
    assert capsys.readouterr().err.splitlines()[-1] == (
        "error: --metrics: 'spl' is not a label; did you mean 'SPL'?; 'SRR': did you mean "
        "'SR'? (they report: TL, NE, OSR, SR, SPL, nDTW, sDTW, CLS)"
    )


def test_a_monte_carlo_p_at_its_floor_is_shown_as_at_most_the_floor() -> None:
    from vlneval.reports.compare import RunComparison
    from vlneval.reports.compare_terminal import render_comparison
    from vlneval.stats import Comparison

    floor = Comparison(
        "TL", 8.0, 7.0, 1.0, 0.5, 1.5, 1 / 10001, "permutation-monte-carlo", 36, 0.95
    )
    exact = Comparison("SR", 0.9, 0.5, 0.4, 0.2, 0.6, 1e-6, "mcnemar-exact", 36, 0.95)
    cmp = RunComparison(
        "a", "b", {"TL": floor, "SR": exact}, 36, 0, 0, None,
        settings={"n_permutations": 10000, "confidence": 0.95},
    )  # fmt: skip
    rows = [
        line for line in render_comparison(cmp).splitlines() if "TL (m)" in line or "SR (%)" in line
    ]
    assert [line.split("│")[6].strip() for line in rows] == ["≤0.0001", "<0.0001"]


def test_compare_warns_of_a_file_compared_with_itself(house: House, capsys: Capture) -> None:
    assert main(["compare", *_data(house), str(house.a), str(house.a)]) == 0
    assert capsys.readouterr().err.splitlines()[-1] == (
        f"warning: B is the same file as A ({house.a}), scored alike: every Δ is 0 and p is 1; "
        "a run compared with itself says nothing about either"
    )


def test_few_resamples_are_warned_about_and_too_many_refused(house: House, capsys: Capture) -> None:
    args = ["compare", *_data(house), str(house.a), str(house.b)]
    assert main([*args, "--resamples", "10"]) == 0
    assert capsys.readouterr().err.splitlines()[0] == (
        "warning: --resamples 10: a percentile interval from fewer than 1000 resamples is not a "
        "reliable 95% interval (its ends move with the seed, and may miss the estimate); the "
        "default is 2000"
    )
    with pytest.raises(SystemExit) as stop:
        main([*args, "--resamples", "100000000"])
    assert stop.value.code == 2
    assert capsys.readouterr().err.splitlines()[-1] == (
        "vlneval compare: error: argument --resamples: must be an integer from 1 to 1,000,000; "
        "got '100000000'"
    )


def test_budgets_are_bounded_and_given_once(house: House, tmp_path: Path, capsys: Capture) -> None:
    out = tmp_path / "r.html"
    base = ["report", *_data(house), "--predictions", str(house.a), "--out", str(out), "--quiet"]
    assert main([*base, "--budgets", "1e308"]) == 2
    assert capsys.readouterr().err.splitlines()[-1] == (
        "error: --budgets must be positive numbers, at most 1000 (times d*), separated by "
        "commas; got '1e308'"
    )
    assert main([*base, "--budgets", "1,1,2", "--worst", "0", "--sample", "0"]) == 0
    assert out.read_text(encoding="utf-8").count("<b>SR@1×</b>") == 1


def test_aggregate_names_a_comparison_json(house: House, tmp_path: Path, capsys: Capture) -> None:
    cmp = tmp_path / "c.json"
    assert main(["compare", *_data(house), str(house.a), str(house.b), "--json", str(cmp)]) == 0
    capsys.readouterr()
    cmp.with_name("d.json").write_text(cmp.read_text())
    assert main(["aggregate", str(cmp), str(cmp.with_name("d.json"))]) == 2
    assert capsys.readouterr().err.splitlines()[-1] == (
        f"error: {cmp}: not a summary JSON (from `vlneval score --json`) but the JSON of a "
        "comparison or an aggregate; give each run's summary"
    )


def test_ecdf_caption_says_what_lies_beyond_its_axis(house: House, tmp_path: Path) -> None:
    far = tmp_path / "far.json"  # 6_0 ends on the upper floor, far from its goal
    far.write_text(
        json.dumps(
            predictions(
                {
                    **EXECUTED_B,
                    "6_0": ["F0", "F1", "F2", "F3", "F4", "F5", "S", "U0", "U1", "U2", "U3"],
                }
            )
        )
    )
    out = tmp_path / "r.html"
    code = main([
        "report", *_data(house), "--predictions", str(far), "--out", str(out), "--quiet",
        "--worst", "0", "--sample", "0",
    ])  # fmt: skip
    assert code == 0
    assert (
        "; the x axis ends at 20 m: beyond it (or without a value) lie 16.7% of the episodes of far."
        in out.read_text(encoding="utf-8")
    )


def test_a_metric_paired_on_fewer_episodes_says_how_many() -> None:
    from vlneval.reports.compare import RunComparison
    from vlneval.reports.compare_terminal import render_comparison
    from vlneval.stats import Comparison

    ne = Comparison("NE", 9.38, 9.43, -0.05, -0.2, 0.1, 0.5, "permutation-monte-carlo", 1539, 0.95)
    sr = Comparison("SR", 0.1, 0.1, 0.0, -0.01, 0.01, 1.0, "mcnemar-exact", 1839, 0.95)
    cmp = RunComparison(
        "a", "b", {"NE": ne, "SR": sr}, 1839, 0, 0, None,
        settings={"n_permutations": 10000, "confidence": 0.95},
    )  # fmt: skip
    names = [
        line.split("│")[1].strip() for line in render_comparison(cmp).splitlines() if "│" in line
    ]
    assert names == ["NE (m) [1539 of 1839 pairs]", "SR (%)"]
    note = render_comparison(cmp, fmt="markdown").splitlines()[0]
    assert note.endswith("rates in %, differences in percentage points; NE over 1539 of 1839 pairs")


def test_report_notes_a_zero_width_interval(tmp_path: Path) -> None:
    from tests.reports.test_report_every_task import _demo

    out = tmp_path / "d.html"
    assert main(["report", *_demo(tmp_path), "--out", str(out), "--quiet", "--worst", "0"]) == 0
    html = out.read_text(encoding="utf-8")
    assert "the interval has zero width" not in html  # the demo run varies in every metric
    shortest = tmp_path / "short.json"
    assert (
        main(["run", "--task", "demo", "--agent", "shortest", "--out", str(shortest), "--quiet"])
        == 0
    )
    args = ["report", "--task", "demo", "--predictions", str(shortest), "--out", str(out)]
    data = tmp_path / "d.json"
    assert main([*args, "--quiet", "--worst", "0", "--sample", "0", "--json", str(data)]) == 0
    html = out.read_text(encoding="utf-8")
    assert (
        escape(
            "NE, SPL, nDTW, sDTW, CLS: the interval has zero width because the value is the "
            "same in every episode; a bootstrap cannot vary it, so it is no certainty about other "
            "episodes."
        )
        in html
    )
    assert (
        escape(
            "OSR, SR: the same outcome in every episode (a rate of 0 or 100 %), where a bootstrap "
            "interval has zero width; the interval shown is the Clopper-Pearson (exact binomial) "
            "interval over the paths."
        )
        in html
    )
    # 12 paths of 3 instructions, all successes: [0.025^(1/12), 1] = [0.7354, 1]
    sr = json.loads(data.read_text())["diagnostics"]["intervals"]["SR"]
    assert (sr["method"], round(sr["low"], 4), sr["high"], sr["n"], sr["n_units"]) == (
        "clopper-pearson", 0.7354, 1.0, 36, 12,
    )  # fmt: skip
    assert json.loads(data.read_text())["diagnostics"]["intervals"]["TL"]["n_units"] == 12
    from scipy.stats import binomtest

    assert sr["low"] == pytest.approx(binomtest(12, 12).proportion_ci().low, rel=1e-12)
    assert "73.54" in html


def test_report_comparison_row_names_its_pairs() -> None:
    from vlneval.reports.compare import RunComparison
    from vlneval.reports.html_parts import comparison_table
    from vlneval.stats import Comparison

    ne = Comparison("NE", 9.38, 9.43, -0.05, -0.2, 0.1, 0.5, "permutation-monte-carlo", 1539, 0.95)
    cmp = RunComparison("a", "b", {"NE": ne}, 1839, 0, 0, None, settings={"confidence": 0.95})
    assert "<b>NE</b> <span class='muted'>(1539 of 1839 pairs)</span>" in comparison_table(cmp)


def test_report_compare_re_diagnoses_the_shared_episodes_on_spawned_streams(
    house: House, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The runs side by side on the episodes both scored are diagnosed on children 3 (A) and
    4 (B) of the seed's SeedSequence, as the run and the baseline are on children 1 and 2 (the
    comparison draws from the integer seed, as `compare` does)."""
    import numpy as np

    from vlneval.diagnostics import score_run
    from vlneval.evaluation import Scorer
    from vlneval.reports import html

    part = tmp_path / "part.json"
    part.write_text(json.dumps(predictions({k: EXECUTED_B[k] for k in ("2_0", "3_0", "4_0")})))
    scorer = Scorer("r2r", "val", root=house.root)
    run, baseline = score_run(scorer, part, subset=True), score_run(scorer, house.a)
    states = []
    diagnose = html.diagnose

    def recorded(scored, *, rng, **kwargs):  # type: ignore[no-untyped-def]
        states.append(rng.bit_generator.state)
        return diagnose(scored, rng=rng, **kwargs)

    monkeypatch.setattr(html, "diagnose", recorded)
    options = html.ReportOptions(n_worst=0, n_sample=0, n_disagree=0, seed=7, n_resamples=50)
    html.build_report(run, baseline=baseline, options=options)
    children = np.random.SeedSequence(7).spawn(5)
    assert states == [np.random.default_rng(children[k]).bit_generator.state for k in (1, 2, 3)]


def test_the_side_by_side_runs_take_their_streams_explicitly() -> None:
    """``_shown`` has no default streams: an empty default failed to unpack (ValueError)
    whenever a baseline was given without them."""
    from vlneval.reports import html

    with pytest.raises(
        TypeError, match="missing 2 required positional arguments: 'base_limit' and 'rngs'"
    ):
        html._shown(None, None, None, None, {})  # type: ignore[arg-type]


def test_report_compare_warns_of_the_monte_carlo_floor_on_the_page_and_stderr(
    tmp_path: Path, capsys: Capture
) -> None:
    """The warning `compare` prints (floor 1/(N + 1) times the 6 Monte Carlo tests of Holm's
    family at least α; SR and OSR are exact), from the same function, on stderr and in the
    page's comparison warnings."""
    from tests.cli.test_cli_paper_tables import DEMO_PREDS

    records = json.loads(DEMO_PREDS.read_text())
    stop = tmp_path / "stop.json"  # every episode differs: Monte Carlo sign flips
    stop.write_text(json.dumps([{**r, "trajectory": r["trajectory"][:1]} for r in records]))
    out = tmp_path / "r.html"
    args = ["report", "--task", "demo", "--predictions", str(stop), "--compare", str(DEMO_PREDS),
            "--by-episode", "--out", str(out), "--quiet", "--worst", "0", "--sample", "0",
            "--resamples", "1000"]  # fmt: skip
    warning = (
        "warning: --permutations 100: a Monte Carlo p is at least 1/101 = 0.0099, 0.0594 after "
        "Holm over 6 Monte Carlo tests, so no Monte Carlo test can reach p < 0.05; use "
        "--permutations 120 or more"
    )
    assert main([*args, "--permutations", "100"]) == 0
    assert warning in capsys.readouterr().err
    page = out.read_text(encoding="utf-8")
    comparison = page[page.index("Comparison with the baseline") : page.index("Why episodes fail")]
    assert escape(warning) in comparison
    assert main([*args, "--permutations", "120"]) == 0
    assert "Monte Carlo p is at least" not in capsys.readouterr().err
    assert "Monte Carlo p is at least" not in out.read_text(encoding="utf-8")
