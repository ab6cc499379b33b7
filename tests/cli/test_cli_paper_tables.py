"""Paper-ready tables (--format markdown|latex) of score, compare and aggregate, and compare of
several runs against one baseline in one table, Holm-adjusted over every run × metric."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from vlneval.cli.main import main
from vlneval.stats import holm_adjust
from vlneval.tasks.common.root import demo_root

DEMO_PREDS = demo_root() / "demo" / "predictions_val.json"
Capture = pytest.CaptureFixture[str]


def _variants(tmp_path: Path) -> list[str]:
    """A (the demo predictions) and three weaker copies: the first 6, 12, 18 episodes stop at
    their start."""
    records = json.loads(DEMO_PREDS.read_text())
    paths = []
    for k, n in enumerate([0, 6, 12, 18]):
        runs = [
            {**r, "trajectory": r["trajectory"][:1]} if i < n else r for i, r in enumerate(records)
        ]
        p = tmp_path / f"run_{'ABCD'[k]}.json"
        p.write_text(json.dumps(runs))
        paths.append(str(p))
    return paths


def test_score_markdown_and_latex(capsys: Capture) -> None:
    assert main(["score", "--task", "demo", "--format", "markdown"]) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert lines[0] == "demo val · profile demo v1 · 36 episodes" and lines[1] == ""
    assert lines[2].startswith("| TL (m) | NE (m) | OSR (%) | SR (%) |")
    assert set(lines[3].replace("|", "").split()) == {"---:"} and "| 52.78 |" in lines[4]
    assert main(["score", "--task", "demo", "--format", "latex"]) == 0
    tex = capsys.readouterr().out
    assert tex.startswith("% demo val") and "\\begin{tabular}{rrrrrrrr}" in tex
    assert "SR (\\%)" in tex and "52.78" in tex and tex.rstrip().endswith("\\end{tabular}")


def test_score_sweep_markdown_has_one_row_per_file(tmp_path: Path, capsys: Capture) -> None:
    paths = _variants(tmp_path)[:2]
    assert main(["score", "--task", "demo", "--predictions", *paths, "--format", "markdown"]) == 0
    rows = [line for line in capsys.readouterr().out.splitlines() if line.startswith("| run_")]
    assert [r.split(" | ")[0] for r in rows] == ["| run_A.json", "| run_B.json"]


def test_compare_several_runs_against_one_baseline(tmp_path: Path, capsys: Capture) -> None:
    a, b, c, d = _variants(tmp_path)
    out = tmp_path / "cmp.json"
    args = ["compare", "--task", "demo", a, b, c, d, "--json", str(out), "--permutations", "500"]
    assert main([*args, "--resamples", "200", "--metrics", "SR,SPL,NE", "--by-episode"]) == 0
    text = capsys.readouterr().out
    assert "A (baseline): run_A" in text and "Holm-adjusted over all 9 rows" in text
    assert "runs: run_B, run_C, run_D\nresampled by episode, seed 0\n" in text
    record = json.loads(out.read_text())
    assert record["A"] == "run_A" and record["candidates"] == ["run_B", "run_C", "run_D"]
    assert record["n_tests"] == 9
    rows = [m for c in record["comparisons"] for m in c["metrics"]]
    joint = holm_adjust(np.array([m["p_value"] for m in rows]))
    assert [m["p_holm"] for m in rows] == pytest.approx(joint.tolist())
    sr = [next(m for m in c["metrics"] if m["metric"] == "SR") for c in record["comparisons"]]
    assert [round(m["mean_B"] - m["mean_A"], 6) for m in sr] == [
        round(m["difference_B_minus_A"], 6) for m in sr
    ]
    assert sr[0]["mean_B"] > sr[1]["mean_B"] > sr[2]["mean_B"]  # weaker and weaker


def test_compare_markdown_is_one_row_per_run(tmp_path: Path, capsys: Capture) -> None:
    a, b, c, _ = _variants(tmp_path)
    args = ["compare", "--task", "demo", a, b, c, "--format", "markdown", "--metrics", "SR"]
    assert main([*args, "--permutations", "200", "--resamples", "100"]) == 0
    out = capsys.readouterr().out
    rows = [line for line in out.splitlines() if line.startswith("| run_")]
    assert rows[0] == "| run_A (A) | 52.78 |"
    assert rows[1].startswith("| run_B | ") and "(-" in rows[1]
    assert "Holm-adjusted p < 0.05 over 2 tests" in out
    assert main([*args[:-4], "--format", "latex", "--metrics", "SR"]) == 0
    assert "run\\_A (A) & 52.78" in capsys.readouterr().out


def test_two_run_compare_keeps_its_table_and_json(tmp_path: Path, capsys: Capture) -> None:
    a, b, _, _ = _variants(tmp_path)
    out = tmp_path / "c.json"
    assert main(["compare", "--task", "demo", a, b, "--json", str(out), "--resamples", "100"]) == 0
    assert "Δ = B − A" in capsys.readouterr().out
    record = json.loads(out.read_text())
    assert record["A"] == "run_A" and record["B"] == "run_B" and "comparisons" not in record


def test_aggregate_markdown_and_latex(tmp_path: Path, capsys: Capture) -> None:
    summaries = []
    for k, path in enumerate(_variants(tmp_path)[:3]):
        s = tmp_path / f"seed{k}.json"
        assert (
            main(["score", "--task", "demo", "--predictions", path, "--quiet", "--json", str(s)])
            == 0
        )
        summaries.append(str(s))
    capsys.readouterr()
    assert main(["aggregate", *summaries, "--format", "markdown"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("mean ± std over 3 runs (seed0, seed1, seed2)")
    header, _, row = [line for line in out.splitlines() if line.startswith("|")]
    assert header.startswith("| runs | TL (m) |") and row.startswith("| 3 | ")
    assert " ± " in row
    assert main(["aggregate", *summaries, "--format", "latex"]) == 0
    assert "\\toprule" in capsys.readouterr().out


def test_compare_json_to_stdout_prints_no_table(tmp_path: Path, capsys: Capture) -> None:
    a, b, _, _ = _variants(tmp_path)
    assert main(["compare", "--task", "demo", a, b, "--json", "-", "--resamples", "100"]) == 0
    assert json.loads(capsys.readouterr().out)["B"] == "run_B"


def test_compare_markdown_baseline_row_is_order_free(tmp_path: Path, capsys: Capture) -> None:
    """A's row is its mean over all its episodes whatever the order of the candidates; a
    candidate paired on fewer episodes says so, and names A's mean on those pairs, so every Δ
    is the difference of the means printed beside it."""
    a, b, _, _ = _variants(tmp_path)
    part = tmp_path / "part.json"
    part.write_text(json.dumps(json.loads(Path(b).read_text())[:12]))
    args = ["compare", "--task", "demo", "--subset", "--format", "markdown", "--metrics", "SR"]
    tables = []
    for order in ([b, str(part)], [str(part), b]):
        assert main([*args, a, *order, "--permutations", "200", "--resamples", "100"]) == 0
        tables.append(capsys.readouterr().out.splitlines())
    for lines in tables:
        rows = sorted(line for line in lines if line.startswith("| run_") or "part" in line)
        assert rows[0] == "| part [12 of 36 episodes] | 25.00 (-25.00 vs A 50.00) |"
        assert rows[1] == "| run_A (A) | 52.78 |" and rows[2] == "| run_B | 44.44 (-8.33) |"
        assert "A = baseline, its mean over all its episodes;" in lines[0]


def test_compare_text_table_tells_runs_apart_and_fits_columns(
    tmp_path: Path, capsys: Capture, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The run column keeps the end that tells candidates apart (``…`` for their shared
    start), the table fits COLUMNS, and files of one name in two folders keep their folder."""
    a, b, c, _ = _variants(tmp_path)
    long = []
    for p, tail in ((b, "iter_20000"), (c, "iter_100")):
        q = tmp_path / f"seq2seq_sample_imagenet_val_unseen_{tail}.json"
        q.write_text(Path(p).read_text())
        long.append(str(q))
    monkeypatch.setenv("COLUMNS", "120")
    args = ["compare", "--task", "demo", a, *long, "--metrics", "SR", "--permutations", "200"]
    assert main([*args, "--resamples", "100", "--by-episode"]) == 0
    lines = capsys.readouterr().out.splitlines()
    rows = [line.split("│")[1].strip() for line in lines if line.startswith("│")]
    assert rows == ["…l_unseen_iter_20000", "…l_unseen_iter_100"]
    assert max(len(line) for line in lines) <= 120
    (tmp_path / "x").mkdir()
    (tmp_path / "y").mkdir()
    for d in "xy":
        (tmp_path / d / "p.json").write_text(Path(b).read_text())
    two = [str(tmp_path / d / "p.json") for d in "xy"]
    assert main(["compare", "--task", "demo", *two, "--resamples", "100"]) == 0
    out = capsys.readouterr().out
    assert "A (baseline): x/p\n" in out and "B (candidate): y/p\n" in out


def test_aggregate_reads_the_multi_file_summary_of_score(tmp_path: Path, capsys: Capture) -> None:
    """The list `score --json` writes for several predictions files is one run per entry; an
    entry that could not be scored is refused by its number and file."""
    paths = _variants(tmp_path)[:3]
    together = tmp_path / "all.json"
    args = ["score", "--task", "demo", "--predictions", *paths, "--json", str(together)]
    assert main([*args, "--quiet"]) == 0
    capsys.readouterr()
    assert main(["aggregate", str(together)]) == 0
    assert "3 runs: run_A, run_B, run_C" in capsys.readouterr().out
    missing = str(tmp_path / "gone.json")
    assert main([*args[:-2], missing, "--json", str(together), "--quiet"]) == 2
    capsys.readouterr()
    assert main(["aggregate", str(together)]) == 2
    assert f"error: {together}: entry 4 ({missing}) of this multi-file summary could not be " in (
        capsys.readouterr().err
    )


def test_oracle_and_identical_runs_are_named(tmp_path: Path, capsys: Capture) -> None:
    """A file whose NE is 0 on every episode, with no privileged access declared, is noted as
    a likely shortest-path oracle; two files with the same results are warned about, in
    score over several files and in compare."""
    episodes = json.loads((demo_root() / "demo" / "DEMO_val.json").read_text())
    oracle = tmp_path / "oracle.json"
    oracle.write_text(json.dumps([
        {"instr_id": f"{e['path_id']}_{k}", "trajectory": e["path"]}
        for e in episodes for k in range(len(e["instructions"]))
    ]))  # fmt: skip
    copy = tmp_path / "copy.json"
    copy.write_text(oracle.read_text())
    a = _variants(tmp_path)[0]
    note = (
        "note: NE is 0 on all 36 episodes (every stop on the goal): a shortest-path oracle? "
        "declare its privileged access with --protocol"
    )
    same = (
        "has exactly the results of {} (every metric, to the last digit): most likely one run "
        "given twice (a copied file, or the same predictions under another name)"
    )
    assert main(["score", "--task", "demo", "--predictions", str(oracle), str(copy)]) == 0
    err = capsys.readouterr().err
    assert f"2 files: {note}" in err
    assert f"warning: {copy} {same.format(oracle)}" in err
    args = ["compare", "--task", "demo", a, str(oracle), str(copy), "--metrics", "SR"]
    assert main([*args, "--resamples", "100", "--permutations", "100"]) == 0
    err = capsys.readouterr().err
    assert f"B (oracle): {note}" in err and f"run 3 (copy): {note}" in err
    assert f"warning: run 3 (copy) {same.format('B (oracle)')}" in err


def test_by_scan_says_why_intervals_and_p_can_disagree(tmp_path: Path, capsys: Capture) -> None:
    """With --by-scan the table says how its intervals were made and which column to read
    significance from; the report's comparison says so too, and its plot names the scans."""
    from vlneval.diagnostics import score_run
    from vlneval.evaluation import Scorer
    from vlneval.reports.compare import compare_scored
    from vlneval.reports.html_parts import comparison_table
    from vlneval.reports.plots_compare import plot_comparison

    a, b, _, _ = _variants(tmp_path)
    args = ["compare", "--task", "demo", a, b, "--by-scan", "--metrics", "SR"]
    assert main([*args, "--resamples", "100", "--format", "markdown"]) == 0
    note = (
        "intervals: a two-stage bootstrap (3 scans resampled, then episodes in them), per metric "
        "and not Holm-adjusted; with few scans it is approximate and often too narrow, while p "
        "flips the signs of whole scans exactly: read significance from p (Holm), not from an "
        "interval excluding 0"
    )
    assert note in capsys.readouterr().out
    scorer = Scorer("demo")
    cmp = compare_scored(score_run(scorer, a), score_run(scorer, b), cluster_by_scan=True,
                         n_resamples=100, metrics=["SR"])  # fmt: skip
    assert "Intervals: a two-stage bootstrap (3 scans resampled" in comparison_table(cmp)
    title = plot_comparison(cmp).texts[0].get_text()
    assert title.startswith("Paired differences B − A with 95% bootstrap intervals (36 "
                            "episodes, 3 scans resampled)\nfilled: Holm-adjusted p < 0.05")  # fmt: skip


def test_small_compare_and_aggregate_wording(tmp_path: Path, capsys: Capture) -> None:
    """A summary or a per-episode table given to compare is named for what it is; a subset is
    said in the header; --profile-b's help says when it is refused; an aggregate of runs that
    declare no seeds says the interval is seed variation only for seeds."""
    a, b, c, _ = _variants(tmp_path)
    summary, table = tmp_path / "s.json", tmp_path / "s.csv"
    assert main(["score", "--task", "demo", "--predictions", a, "--json", str(summary),
                 "--per-episode", str(table), "--quiet"]) == 0  # fmt: skip
    capsys.readouterr()
    assert main(["compare", "--task", "demo", str(summary), b]) == 2
    assert capsys.readouterr().err == (
        f"error: {summary}: a summary (from `vlneval score --json`), not a predictions file: a "
        "comparison pairs the runs episode by episode, so it needs the predictions files\n"
    )
    assert main(["compare", "--task", "demo", a, str(table)]) == 2
    assert capsys.readouterr().err == (
        f"error: {table}: a table (.csv, e.g. from `vlneval score --per-episode`), not a "
        "predictions file: give the predictions file it was scored from\n"
    )
    part = tmp_path / "part.json"
    part.write_text(json.dumps(json.loads(Path(b).read_text())[:12]))
    assert main(["compare", "--task", "demo", "--subset", a, str(part), "--resamples", "100"]) == 0
    assert "B (candidate): part (partial: 12 of 36)\n" in capsys.readouterr().out
    with pytest.raises(SystemExit):
        main(["compare", "--help"])
    assert "another profile (refused unless --force)" in " ".join(capsys.readouterr().out.split())
    assert main(["aggregate", "--task", "demo", a, b, c]) == 0
    assert (
        "note: the runs declare no seeds: the interval is seed variation only if they are seeds "
        "of one model, not checkpoints or different models" in capsys.readouterr().err
    )


def test_aggregate_leaves_out_the_skipped_entries_of_a_multi_file_summary(
    tmp_path: Path, capsys: Capture
) -> None:
    """A pattern matching an earlier summary writes a skipped entry for it; aggregate takes
    the entries with metrics and names each one it left out."""
    paths = _variants(tmp_path)[:2]
    old, together = tmp_path / "old.json", tmp_path / "all.json"
    base = ["score", "--task", "demo", "--quiet", "--predictions"]
    assert main([*base, paths[0], "--json", str(old)]) == 0
    assert main([*base, *paths, str(old), "--json", str(together)]) == 0
    capsys.readouterr()
    assert main(["aggregate", str(together)]) == 0
    out, err = capsys.readouterr()
    assert "2 runs: run_A, run_B" in out
    assert err.splitlines()[0] == (
        f"note: {together}: left out entry 3 ({old}): a summary written by `vlneval score "
        "--json`, not predictions"
    )
    lone = tmp_path / "lone.json"
    lone.write_text(json.dumps([{"predictions": str(old), "skipped": "a summary"}]))
    assert main(["aggregate", str(lone)]) == 2
    assert capsys.readouterr().err.splitlines()[-1] == (
        f"error: {lone}: no entry of this multi-file summary holds a summary"
    )


def test_score_compare_and_report_name_a_summary_and_a_sweep_list_alike(
    tmp_path: Path, capsys: Capture
) -> None:
    """One rule says what a summary is: the single file's summary and the sweep's list of
    them (with a skipped entry) get the same hint from score, compare and report."""
    a, b = _variants(tmp_path)[:2]
    one, sweep = tmp_path / "one.json", tmp_path / "sweep.json"
    base = ["score", "--task", "demo", "--quiet", "--predictions"]
    assert main([*base, a, "--json", str(one)]) == 0
    assert main([*base, a, b, str(one), "--json", str(sweep)]) == 0
    capsys.readouterr()
    for path in (one, sweep):
        assert main([*base, str(path)]) == 2
        hint = "hint: a summary written by `vlneval score --json`, not predictions"
        assert capsys.readouterr().err.splitlines()[-1] == hint
        said = (
            f"error: {path}: a summary (from `vlneval score --json`), not a predictions file: a "
            "comparison pairs the runs episode by episode, so it needs the predictions files\n"
        )
        assert main(["compare", "--task", "demo", str(path), b]) == 2
        assert capsys.readouterr().err == said
        html = str(tmp_path / "r.html")
        assert main(["report", "--task", "demo", "--predictions", str(path), "--out", html]) == 2
        assert capsys.readouterr().err == said
