"""``vlneval report``, ``compare`` and ``aggregate``: exit codes, outputs, refusals."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.reports.conftest import House
from tests.reports.house import REFERENCES, predictions, write_predictions
from vlneval.cli.main import main

Capture = pytest.CaptureFixture[str]


def _data(house: House) -> list[str]:
    return ["--task", "r2r", "--split", "val", "--data-root", str(house.root)]


def test_report_writes_html_and_json(house: House, tmp_path: Path, capsys: Capture) -> None:
    out, data = tmp_path / "r.html", tmp_path / "r.json"
    args = ["report", *_data(house), "--predictions", str(house.b), "--compare", str(house.a)]
    code = main([*args, "--out", str(out), "--json", str(data), "--worst", "1", "--sample", "1"])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    assert out.read_text(encoding="utf-8").startswith("<!DOCTYPE html>")
    assert "SR (%)" in captured.out and "66.67" in captured.out
    assert f"wrote {out}" in captured.err
    record = json.loads(data.read_text())
    assert record["comparison"]["success_pairs"] == {
        "both": 2, "only_a": 0, "only_b": 2, "neither": 2,
    }  # fmt: skip
    assert record["diagnostics"]["settings"]["budgets"] == [1.0, 1.25, 1.5, 2.0, 3.0]


def test_report_options(house: House, tmp_path: Path, capsys: Capture) -> None:
    out = tmp_path / "r.html"
    code = main([
        "report", *_data(house), "--predictions", str(house.a), "--out", str(out), "--quiet",
        "--step-limit", "5", "--budgets", "1.5,4", "--worst", "0", "--sample", "0", "--by-scan",
    ])  # fmt: skip
    captured = capsys.readouterr()
    assert code == 0 and captured.out == ""
    html = out.read_text(encoding="utf-8")
    assert "Step limit T = 5" in html and "SR@4×" in html and "scans, then episodes" in html
    assert main(["report", *_data(house), "--predictions", str(house.a), "--budgets", "x"]) == 2
    assert "--budgets must be positive numbers" in capsys.readouterr().err


def test_report_skip_summary_records(house: House, tmp_path: Path, capsys: Capture) -> None:
    path = tmp_path / "with_summary.json"
    path.write_text(json.dumps([{"success_rate": 0.5, "spl": 0.4}, *predictions()]))
    out = tmp_path / "r.html"
    base = ["report", *_data(house), "--predictions", str(path), "--out", str(out), "--quiet"]
    assert main(base) == 2
    assert "pass --skip-summary-records to skip it" in capsys.readouterr().err
    assert main([*base, "--skip-summary-records", "--worst", "0", "--sample", "0"]) == 0
    assert "look like a summary were skipped" in out.read_text(encoding="utf-8")


def test_compare_table_and_json(house: House, tmp_path: Path, capsys: Capture) -> None:
    out = tmp_path / "c.json"
    args = ["compare", *_data(house), str(house.a), str(house.b), "--json", str(out)]
    code = main([*args, "--by-episode"])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    assert "Δ = B − A" in captured.out and "+33.33" in captured.out
    assert "· resampled by episode, seed 0" in captured.out
    record = json.loads(out.read_text())
    assert record["A"] == "run_a" and record["B"] == "run_b" and record["forced"] is False
    sr = next(r for r in record["metrics"] if r["metric"] == "SR")
    assert sr["difference_B_minus_A"] == pytest.approx(1 / 3) and sr["test"] == "mcnemar-exact"
    # By default the unit is the path: episodes 1_0 and 6_0 share one (F0 -> F2 in house).
    assert main([*args, "--seed", "4"]) == 0
    assert "· resampled by path, 5 paths, seed 4" in capsys.readouterr().out
    record = json.loads(out.read_text())
    assert (record["settings"]["resampling"], record["settings"]["n_paths"]) == ("paths", 5)
    sr = next(r for r in record["metrics"] if r["metric"] == "SR")
    assert sr["test"] == "cluster-permutation-exact"


def test_compare_chooses_the_test_by_the_metric_not_its_values(
    house: House, tmp_path: Path, capsys: Capture
) -> None:
    # An agent that stops at once: TL, SPL and sDTW are 0 in every episode, yet only the 0/1
    # outcomes SR and OSR get McNemar's test; the lengths and scores get the permutation test.
    stop = write_predictions(
        tmp_path / "stop.json", {f"{k}_0": p[:1] for k, p in REFERENCES.items()}
    )
    out = tmp_path / "c.json"
    args = ["compare", *_data(house), str(stop), str(stop), "--json", str(out), "--by-episode"]
    assert main(args) == 0, capsys.readouterr().err
    tests = {r["metric"]: r["test"] for r in json.loads(out.read_text())["metrics"]}
    assert tests == {
        "TL": "permutation-exact",
        "NE": "permutation-exact",
        "OSR": "mcnemar-exact",
        "SR": "mcnemar-exact",
        "SPL": "permutation-exact",
        "nDTW": "permutation-exact",
        "sDTW": "permutation-exact",
        "CLS": "permutation-exact",
    }


def test_compare_refuses_different_cards(house: House, tmp_path: Path, capsys: Capture) -> None:
    args = ["compare", *_data(house), str(house.a), str(house.b)]
    assert main([*args, "--profile-b", "r2r-envdrop"]) == 2
    err = capsys.readouterr().err
    assert "refusing to compare" in err and "profile: r2r v1 (A) vs r2r-envdrop v1 (B)" in err
    assert main([*args, "--profile-b", "r2r-envdrop", "--force"]) == 0
    assert "FORCED: protocol cards differ: profile: r2r v1 (A) vs r2r-envdrop v1 (B)" in (
        capsys.readouterr().out
    )
    declared = tmp_path / "privileged.json"
    declared.write_text(json.dumps({"privileged": "shortest-path teacher at test time"}))
    assert main([*args, "--protocol-b", str(declared)]) == 2
    assert "privileged: not declared (offline predictions file) (A) vs shortest-path" in (
        capsys.readouterr().err
    )


def test_aggregate_summaries_and_predictions(house: House, tmp_path: Path, capsys: Capture) -> None:
    summaries = []
    for name, preds in (("s0", house.a), ("s1", house.b)):
        summaries.append(tmp_path / f"{name}.json")
        args = ["score", *_data(house), "--predictions", str(preds), "--quiet"]
        assert main([*args, "--json", str(summaries[-1])]) == 0
    out = tmp_path / "agg.json"
    assert main(["aggregate", *map(str, summaries), "--json", str(out)]) == 0
    text = capsys.readouterr().out
    assert "2 runs: s0, s1" in text and "50.00" in text  # mean SR of 1/3 and 2/3
    assert json.loads(out.read_text())["metrics"]["SR"]["mean"] == pytest.approx(0.5)
    assert main(["aggregate", *_data(house), str(house.a), str(house.b)]) == 0
    assert "50.00" in capsys.readouterr().out
    assert main(["aggregate", str(house.a)]) == 2
    assert "not a summary JSON" in capsys.readouterr().err


def test_a_report_json_is_the_summary_record_aggregate_reads(
    house: House, tmp_path: Path, capsys: Capture
) -> None:
    """``report --json`` writes the run's summary record (as ``score --json``) with the
    report's parts, so ``aggregate`` takes it as a run."""
    summaries = []
    for name, preds in (("r0", house.a), ("r1", house.b)):
        summaries.append(tmp_path / f"{name}.json")
        base = [*_data(house), "--predictions", str(preds), "--quiet"]
        scored = tmp_path / f"{name}.score.json"
        assert main(["score", *base, "--json", str(scored)]) == 0
        assert main([
            "report", *base, "--out", str(tmp_path / f"{name}.html"), "--json",
            str(summaries[-1]), "--worst", "0", "--sample", "0",
        ]) == 0  # fmt: skip
        record = json.loads(summaries[-1].read_text())
        assert {k: record[k] for k in json.loads(scored.read_text())} == json.loads(
            scored.read_text()
        )
        assert set(record) - set(json.loads(scored.read_text())) == {
            "diagnostics", "baseline", "comparison",
        }  # fmt: skip
    capsys.readouterr()
    out = tmp_path / "agg.json"
    assert main(["aggregate", *map(str, summaries), "--json", str(out)]) == 0
    assert "2 runs: r0, r1" in capsys.readouterr().out
    assert json.loads(out.read_text())["metrics"]["SR"]["mean"] == pytest.approx(0.5)
    assert main(["compare", *_data(house), str(summaries[0]), str(house.b)]) == 2
    assert f"{summaries[0]}: a summary (from `vlneval score --json`), not a predictions file" in (
        capsys.readouterr().err
    )


def test_aggregate_refuses_a_file_given_twice(
    house: House, tmp_path: Path, capsys: Capture
) -> None:
    """The same path twice (or the same file by another path) is one run, not two seeds."""
    summary = tmp_path / "s.json"
    assert (
        main(["score", *_data(house), "--predictions", str(house.a), "--json", str(summary)]) == 0
    )
    capsys.readouterr()
    other = tmp_path / "sub" / ".." / "s.json"
    (tmp_path / "sub").mkdir()
    assert main(["aggregate", str(summary), str(house.b), str(other)]) == 2
    assert capsys.readouterr().err == (
        f"error: {other}: given twice (runs 1 and 3); a run aggregated with itself is no seed "
        "variation: give each run's file once\n"
    )


def test_aggregate_warns_of_runs_with_identical_results(
    house: House, tmp_path: Path, capsys: Capture
) -> None:
    """A copy of a run (or predictions scoring the same per episode) is warned about, on stderr
    and in the JSON; the aggregate is still written."""
    copy = tmp_path / "seed1.json"
    copy.write_bytes(house.a.read_bytes())
    out = tmp_path / "agg.json"
    argv = ["aggregate", *_data(house), str(house.a), str(copy), str(house.b), "--json", str(out)]
    assert main(argv) == 0
    warning = (
        f"seed1 has exactly the results of {house.a.stem} (every metric, to the last digit): one "
        "run counted twice is no seed variation, yet the std and interval count it as another seed"
    )
    assert f"warning: {warning}\n" in capsys.readouterr().err
    assert json.loads(out.read_text())["warnings"] == [warning]
    assert main(["aggregate", *_data(house), str(house.a), str(house.b)]) == 0
    assert "warning" not in capsys.readouterr().err


def test_one_split_load_for_every_predictions_file(
    house: House, tmp_path: Path, capsys: Capture, monkeypatch: pytest.MonkeyPatch
) -> None:
    """aggregate and compare load the split (and graphs) once for all their files, and
    aggregate not at all when every run is a summary JSON."""
    from vlneval.tasks.base import Task

    loads: list[str] = []
    load = Task.load

    def counted(self: Task, path: Path, split: str, profile: object) -> object:
        loads.append(split)
        return load(self, path, split, profile)  # type: ignore[arg-type]

    monkeypatch.setattr(Task, "load", counted)
    again = tmp_path / "a_again.json"  # aggregate refuses one path twice: a copy of A
    again.write_bytes(house.a.read_bytes())
    three = [str(house.a), str(house.b), str(again)]
    summary = tmp_path / "s.json"
    assert main(["aggregate", *_data(house), *three, "--json", str(summary)]) == 0
    assert loads == ["val"]
    assert json.loads(summary.read_text())["metrics"]["SR"]["mean"] == pytest.approx(4 / 9)
    score = ["score", *_data(house), "--predictions", str(house.a), "--quiet"]
    assert main([*score, "--json", str(summary)]) == 0
    loads.clear()
    copy = tmp_path / "s_again.json"
    copy.write_bytes(summary.read_bytes())
    assert main(["aggregate", *_data(house), str(summary), str(copy)]) == 0
    assert loads == []
    assert main(["compare", *_data(house), *three]) == 0
    assert loads == ["val"]
    assert main(["compare", *_data(house), *three, "--profile-b", "r2r-envdrop", "--force"]) == 0
    assert loads == ["val"] * 3
    capsys.readouterr()


@pytest.mark.parametrize("command", ["aggregate", "compare"])
def test_a_task_that_cannot_skip_summaries_refuses_before_loading(
    command: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: Capture
) -> None:
    """The refusal comes from opening the scorer, before any data is looked for."""
    monkeypatch.delenv("VLNEVAL_DATA", raising=False)
    path = tmp_path / "sdr.json"
    path.write_text('[{"route_id": 1, "pano": "a", "x": 1.0, "y": 2.0}]')
    other = tmp_path / "sdr_b.json"
    other.write_bytes(path.read_bytes())
    argv = [command, "--task", "touchdown-sdr", "--split", "dev", "--skip-summary-records"]
    assert main([*argv, str(path), str(other)]) == 2
    assert capsys.readouterr().err == (
        "error: skip_summaries (--skip-summary-records) does not apply to task touchdown-sdr: its "
        "reader cannot skip summary records; remove the summary record from the file\n"
    )


@pytest.mark.parametrize("profile_b", [[], ["--profile-b", "r2r"], ["--profile-b", "R2R"]])
def test_compare_with_the_profile_of_a_opens_one_scorer(
    house: House,
    tmp_path: Path,
    capsys: Capture,
    monkeypatch: pytest.MonkeyPatch,
    profile_b: list[str],
) -> None:
    """``--profile-b`` naming A's profile (the task's default here, any case) scores B with A's
    scorer: one opened, and the same outputs as without ``--profile-b``."""
    import vlneval.cli.report as report

    argv = ["compare", *_data(house), str(house.a), str(house.b)]
    assert main([*argv, "--json", str(tmp_path / "plain.json")]) == 0
    plain = capsys.readouterr()
    opened: list[object] = []
    open_scorer = report.open_scorer

    def counted(*args: object, **kwargs: object) -> object:
        opened.append(kwargs.get("profile"))
        return open_scorer(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(report, "open_scorer", counted)
    assert main([*argv, *profile_b, "--json", str(tmp_path / "b.json")]) == 0
    assert opened == [None]
    assert capsys.readouterr() == plain
    assert (tmp_path / "b.json").read_bytes() == (tmp_path / "plain.json").read_bytes()


def test_aggregate_keeps_a_rate_interval_in_its_range(
    house: House, tmp_path: Path, capsys: Capture
) -> None:
    """SR 1/3 and 2/3 over two runs: the t interval 0.5 ± 2.12 is clipped to [0, 100] %."""
    out = tmp_path / "agg.json"
    assert main(["aggregate", *_data(house), str(house.a), str(house.b), "--json", str(out)]) == 0
    captured = capsys.readouterr()
    sr = json.loads(out.read_text())["metrics"]["SR"]
    assert (sr["ci_low"], sr["ci_high"], sr["clipped_to"]) == (0.0, 1.0, "[0, 1]")
    assert "[0.00, 100.00] *" in captured.out and "* clipped to the metric's range" in captured.out
    assert "note: the interval of NE, OSR, SR, SPL, nDTW, sDTW, CLS is clipped to the " in (
        captured.err
    )


def test_aggregate_reads_the_card_beside_each_predictions_file(
    house: House, tmp_path: Path, capsys: Capture
) -> None:
    """``vlneval run`` writes NAME.protocol.json beside NAME.json: aggregating the predictions
    files declares each run's card from it (as ``score --protocol`` would), merged."""
    paths = []
    for seed, preds in enumerate((house.a, house.b)):
        paths.append(tmp_path / f"rw{seed}.json")
        paths[-1].write_bytes(preds.read_bytes())
        card = {"privileged": "none", "seeds": [seed], "n_runs": 1, "map": "given graph"}
        (tmp_path / f"rw{seed}.protocol.json").write_text(json.dumps(card))
    out = tmp_path / "agg.json"
    assert main(["aggregate", *_data(house), *map(str, paths), "--json", str(out)]) == 0
    card = json.loads(out.read_text())["protocol"]
    picked = {k: card[k] for k in ("privileged", "seeds", "n_runs", "map", "differs_between_runs")}
    assert picked == {
        "privileged": "none",
        "seeds": [0, 1],
        "n_runs": 2,
        "map": "given graph",
        "differs_between_runs": [],
    }
    declared = tmp_path / "declared.json"
    declared.write_text(json.dumps({"seeds": [7]}))
    argv = ["aggregate", *_data(house), *map(str, paths), "--protocol", str(declared)]
    assert main([*argv, "--json", str(out)]) == 0
    card = json.loads(out.read_text())["protocol"]
    assert (card["seeds"], card["privileged"]) == (
        [7, 7],
        "not declared (offline predictions file)",
    )
    capsys.readouterr()


def test_aggregate_names_runs_of_one_file_name_by_their_folders(
    house: House, tmp_path: Path, capsys: Capture
) -> None:
    """seed0/preds.json and seed1/preds.json: each run keeps its own value on the merged
    card, named by the folder that tells it apart."""
    paths = []
    for seed, preds in enumerate((house.a, house.b)):
        (tmp_path / f"seed{seed}").mkdir()
        paths.append(tmp_path / f"seed{seed}" / "preds.json")
        paths[-1].write_bytes(preds.read_bytes())
        card = {"seeds": [seed], "checkpoint": f"ckpt{seed}.pt"}
        (tmp_path / f"seed{seed}" / "preds.protocol.json").write_text(json.dumps(card))
    out = tmp_path / "agg.json"
    assert main(["aggregate", *_data(house), *map(str, paths), "--json", str(out)]) == 0
    card = json.loads(out.read_text())["protocol"]
    assert card["checkpoint"] == {"seed0/preds": "ckpt0.pt", "seed1/preds": "ckpt1.pt"}
    assert card["seeds"] == [0, 1]


def test_report_step_limits_checked_and_per_run(
    house: House, tmp_path: Path, capsys: Capture
) -> None:
    """--step-limit below 1 is refused; a limit shorter than a recorded trajectory is warned
    with the episode; the baseline has its own limit (--compare-step-limit)."""
    out = tmp_path / "r.html"
    base = ["report", *_data(house), "--predictions", str(house.b), "--out", str(out), "--quiet"]
    for bad in ("0", "-3"):
        with pytest.raises(SystemExit) as stop:
            main([*base, "--step-limit", bad])
        assert stop.value.code == 2
        assert f"--step-limit: must be an integer >= 1; got '{bad}'" in capsys.readouterr().err
    few = ["--worst", "0", "--sample", "0"]
    assert main([*base, *few, "--step-limit", "3", "--compare", str(house.a),
                 "--compare-step-limit", "5"]) == 0  # fmt: skip
    err = capsys.readouterr().err
    assert (
        "B (run_b): warning: 3 episode(s) have more steps than the step limit T = 3 (first: " in err
    )
    assert "A (run_a)" not in err
    html = out.read_text(encoding="utf-8")
    assert "A: run_a: Step limit T = 5" in html and "B: run_b: Step limit T = 3" in html


@pytest.mark.parametrize(
    ("option", "value", "message"),
    [
        ("--permutations", "0", "must be an integer from 1 to 1,000,000; got '0'"),
        (
            "--permutations",
            "1000000000",
            "must be an integer from 1 to 1,000,000; got '1000000000'",
        ),
        ("--confidence", "1.5", "must be a number strictly between 0 and 1, e.g. 0.95; got '1.5'"),
    ],
)
def test_compare_bounds_its_resampling_options(
    house: House, capsys: Capture, option: str, value: str, message: str
) -> None:
    """--permutations is bounded as --resamples is, and a bad value is the option's error, not
    a library function's."""
    with pytest.raises(SystemExit) as stop:
        main(["compare", *_data(house), str(house.a), str(house.b), option, value])
    assert stop.value.code == 2
    assert f"argument {option}: {message}" in capsys.readouterr().err


def test_report_compare_names_the_run_of_each_warning(
    house: House, tmp_path: Path, capsys: Capture
) -> None:
    """With --compare, B's scoring warnings are printed after its name, as A's are."""
    path = tmp_path / "with_summary.json"
    path.write_text(json.dumps([{"success_rate": 0.5, "spl": 0.4}, *predictions()]))
    out = tmp_path / "r.html"
    args = ["report", *_data(house), "--predictions", str(path), "--compare", str(house.a)]
    assert main([*args, "--skip-summary-records", "--out", str(out), "--quiet",
                 "--worst", "0", "--sample", "0"]) == 0  # fmt: skip
    assert (
        "B (with_summary): warning: 1 record(s) without 'instr_id' that look like a summary "
        "were skipped" in capsys.readouterr().err
    )


def test_report_names_its_resampling_unit_and_seed(
    house: House, tmp_path: Path, capsys: Capture
) -> None:
    out, data = tmp_path / "r.html", tmp_path / "r.json"
    code = main([
        "report", *_data(house), "--predictions", str(house.b), "--compare", str(house.a),
        "--out", str(out), "--json", str(data), "--quiet", "--worst", "0", "--sample", "0",
        "--resamples", "200", "--seed", "3",
    ])  # fmt: skip
    assert code == 0, capsys.readouterr().err
    record = json.loads(data.read_text())
    for settings in (record["diagnostics"]["settings"], record["comparison"]["settings"]):
        assert (settings["resampling"], settings["n_paths"], settings["seed"]) == ("paths", 5, 3)
    html = out.read_text(encoding="utf-8")
    assert "over episodes, resampled by path, 5 paths (200 resamples, seed 3)" in html
    assert "compared episode by episode; resampled by path, 5 paths, seed 3." in html
    assert "flipping the signs of whole paths&#x27; differences" in html


@pytest.mark.parametrize("unit", [[], ["--by-episode"]])
def test_report_compare_gives_the_comparison_compare_gives(
    house: House, tmp_path: Path, capsys: Capture, unit: list[str]
) -> None:
    """The same pair, seed and resampling give the same intervals and p-values in `report
    --compare` as in `compare`: both draw the comparison from the integer seed (the report
    drew it from a SeedSequence child, and gave other numbers)."""
    stats = ["--seed", "3", "--resamples", "200", "--permutations", "99", *unit]
    compared, reported = tmp_path / "c.json", tmp_path / "r.json"
    argv = ["compare", *_data(house), str(house.a), str(house.b), "--json", str(compared)]
    assert main([*argv, *stats]) == 0, capsys.readouterr().err
    argv = ["report", *_data(house), "--predictions", str(house.b), "--compare", str(house.a)]
    argv += ["--out", str(tmp_path / "r.html"), "--json", str(reported), "--quiet"]
    assert main([*argv, "--worst", "0", "--sample", "0", *stats]) == 0, capsys.readouterr().err
    expected = json.loads(compared.read_text())
    assert json.loads(reported.read_text())["comparison"] == expected
    resampling = "episodes" if unit else "paths"
    assert (expected["settings"]["resampling"], expected["settings"]["seed"]) == (resampling, 3)
