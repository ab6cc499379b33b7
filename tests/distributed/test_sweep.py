"""Sweeps on the demo task: plan (the sbatch line), run units (finished ones skipped), report."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from tests.distributed.conftest import vlneval
from tests.distributed.tfevents import read_scalars
from vlneval.distributed.sweep import read_units
from vlneval.distributed.sweep_report import VLNCE_TAGS


def test_sweep_plan_skip_report(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    ckpts = []
    for k, moves in ((10, 1), (20, 5)):
        p = tmp_path / f"ckpt.{k}.pth"
        p.write_text(str(moves))
        ckpts.append(p)
    units = tmp_path / "units.jsonl"
    agent = "tests.distributed.agents:CheckpointRandom"
    assert vlneval("sweep", "plan", "--units", units, "--runs-dir", tmp_path / "runs",
                   "--checkpoints", *ckpts, "--seeds", "0", "1", "--shards", "2", "--max-parallel",
                   "4", "--", "run", "--task", "demo", "--agent", agent) == 0  # fmt: skip
    out = capsys.readouterr()
    assert out.out.startswith("sbatch --array=0-7%4 ") and f"sweep run-unit {units}" in out.out
    assert "8 units" in out.err and "2 checkpoints x 2 seeds x 2 shards" in out.err
    plan = read_units(units)
    assert plan[5].argv[-6:-2] == [
        "--out",
        f"{tmp_path}/runs/ckpt.20.pth/seed-0/preds.json",
        "--shard",
        "1/2",
    ]
    monkeypatch.setenv("SLURM_ARRAY_TASK_ID", "5")  # a SLURM array task runs its unit
    assert vlneval("sweep", "run-unit", units) == 0
    assert vlneval("sweep", "status", units) == 0
    assert capsys.readouterr().out.splitlines() == [
        "1 complete, 0 running, 7 pending of 8 units",
        f"sbatch --array=0-4,6-7 --job-name=vlneval-sweep --output=vlneval-sweep-%A_%a.log "
        f"--wrap='vlneval sweep run-unit {units}'",
    ]
    assert vlneval("sweep", "run-unit", units, "--all") == 0
    assert "unit 5: complete, skipped" in capsys.readouterr().err
    table = tmp_path / "t.csv"
    md = tmp_path / "t.md"
    tb = tmp_path / "tb"
    plot = tmp_path / "sweep.png"
    assert vlneval("sweep", "report", units, "--csv", table, "--markdown", md, "--resamples",
                   "200", "--tensorboard", tb, "--plot", plot) == 0  # fmt: skip
    rows = list(csv.DictReader(table.open()))
    spl = {r["checkpoint"]: float(r["value"]) for r in rows
           if r["metric"] == "SPL" and r["seed"] == "mean"}  # fmt: skip
    best = max(spl, key=lambda c: spl[c])  # the demo task ranks by SPL
    assert plot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    # TensorBoard: each checkpoint's mean over seeds at its step, under VLN-CE's tags
    means = {(f"eval_val_{VLNCE_TAGS.get(r['metric'], r['metric'])}", int(r["step"])):
             float(r["value"]) for r in rows if r["seed"] == "mean"}  # fmt: skip
    scalars = read_scalars(tb)
    assert len(scalars) == len(means) and {(t, s) for t, s, _ in scalars} == set(means)
    for tag, step, value in scalars:
        assert value == pytest.approx(means[(tag, step)], rel=1e-6)  # stored as float32
    assert {"eval_val_success", "eval_val_spl"} <= {t for t, _, _ in scalars}
    err = capsys.readouterr().err
    assert "wrote 16 scalars to" in err
    assert f"wrote {plot}: SPL by checkpoint\n" in err
    note = (
        f"{best} selected on val (best mean SPL over seeds): val is now a model-selection "
        "split, so its numbers are no longer held out; only an untouched split tests "
        "generalisation."
    )
    assert f"\nnote: {note}\n" in err
    assert md.read_text().endswith(
        f"\nIntervals: 95% percentile bootstrap, by path.\n\nCheckpoint selection: {note}\n"
    )
    assert {(r["checkpoint"], r["split"], r["selected_by"]) for r in rows} == {
        (c, "val", "SPL" if c == best else "") for c in spl
    }
    sr = {(r["checkpoint"], r["seed"]): r for r in rows if r["metric"] == "SR"}
    assert set(sr) == {(c, s) for c in ("ckpt.10.pth", "ckpt.20.pth") for s in ("0", "1", "mean")}
    for c in ("ckpt.10.pth", "ckpt.20.pth"):
        per_seed = [float(sr[(c, s)]["value"]) for s in ("0", "1")]
        assert float(sr[(c, "mean")]["value"]) == pytest.approx(sum(per_seed) / 2)
        assert float(sr[(c, "0")]["ci_low"]) <= per_seed[0] <= float(sr[(c, "0")]["ci_high"])
        assert sr[(c, "0")]["step"] == c.split(".")[1] and sr[(c, "0")]["n"] == "36"
        assert sr[(c, "0")]["n_units"] == "12" and sr[(c, "mean")]["n_units"] == ""  # paths
    assert md.read_text().startswith("| checkpoint | seeds | TL (m) | NE (m) |")
    # the demo's three instructions per path: whole paths resampled, as `vlneval report` does
    # (the markdown's end is asserted with the selection note, above)
    assert {r["resampling"] for r in rows if r["seed"] != "mean"} == {"paths"}
    assert {r["unit"] for r in rows if r["metric"] in ("SR", "SPL")} == {"fraction"}
    # the merged run and its card carry the checkpoint's hash
    card = json.loads(
        (tmp_path / "runs" / "ckpt.20.pth" / "seed-1" / "preds.protocol.json").read_text()
    )
    assert card["checkpoint"]["bytes"] == 1 and card["seeds"] == [1]
    # the two checkpoints behave differently (1 vs 5 forward moves)
    tl = {r["checkpoint"]: r["value"] for r in rows if r["metric"] == "TL" and r["seed"] == "0"}
    assert tl["ckpt.10.pth"] != tl["ckpt.20.pth"]


def test_a_quoted_checkpoint_pattern_is_expanded_in_natural_order(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``--checkpoints 'ckpt/ckpt.*.pth'`` (quoted, as for ``score``) is expanded as ``score
    --predictions 'PATTERN'`` expands it: ``ckpt.3`` before ``ckpt.20`` before ``ckpt.100``."""
    (tmp_path / "ckpt").mkdir()
    for k in (100, 20, 3):
        (tmp_path / "ckpt" / f"ckpt.{k}.pth").write_text("1")
    units = tmp_path / "units.jsonl"
    assert vlneval("sweep", "plan", "--units", units, "--runs-dir", tmp_path / "runs",
                   "--checkpoints", f"{tmp_path}/ckpt/ckpt.*.pth", "--", "run", "--task", "demo",
                   "--agent", "tests.distributed.agents:CheckpointRandom") == 0  # fmt: skip
    assert [u.checkpoint for u in read_units(units)] == [
        f"{tmp_path}/ckpt/ckpt.{k}.pth" for k in (3, 20, 100)
    ]
    assert "3 checkpoints x 1 seeds x 1 shards" in capsys.readouterr().err


def test_sweep_refuses_options_it_sets(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert vlneval("sweep", "plan", "--units", tmp_path / "u.jsonl", "--runs-dir", tmp_path, "--",
                   "run", "--task", "demo", "--agent", "random", "--seed", "3") == 2  # fmt: skip
    assert "the sweep sets --seed itself" in capsys.readouterr().err


def test_checkpoint_needs_an_agent_that_takes_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ckpt = tmp_path / "c.pth"
    ckpt.write_text("3")
    assert (
        vlneval(
            "run",
            "--task",
            "demo",
            "--agent",
            "random",
            "--checkpoint",
            ckpt,
            "--out",
            tmp_path / "p.json",
        )
        == 2
    )
    assert "agent random-v1 takes no checkpoint= argument" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("agent", "ckpt", "message"),
    [
        ("random", True, "--checkpoints: agent random-v1 takes no checkpoint= argument (its "
         "constructor takes: none); see vlneval.distributed.checkpoint"),
        ("tests.distributed.agents:CheckpointRandom", False, "agent tests.distributed.agents:"
         "CheckpointRandom needs a checkpoint (its constructor requires checkpoint=): pass "
         "--checkpoints FILE [FILE ...]"),
    ],
)  # fmt: skip
def test_sweep_plan_refuses_an_agent_that_cannot_take_its_checkpoints(
    agent: str, ckpt: bool, message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Every unit would fail: refused at once, naming the agent, and no units file written."""
    c = tmp_path / "ckpt.10.pth"
    c.write_text("1")
    units = tmp_path / "units.jsonl"
    given = ["--checkpoints", c] if ckpt else []
    assert vlneval("sweep", "plan", "--units", units, "--runs-dir", tmp_path / "runs", *given,
                   "--", "run", "--task", "demo", "--agent", agent) == 2  # fmt: skip
    assert capsys.readouterr().err == f"error: {message}\n"
    assert not units.exists()


def test_tensorboard_scalars_are_the_tables_means(tmp_path: Path) -> None:
    from vlneval.distributed.sweep_report import SweepTable, write_tensorboard

    summary = [{"label": f"ckpt.{step}", "step": step, "seeds": [0, 1],
                "metrics": {"SR": {"mean": sr, "std": 0.1}, "NE": {"mean": ne, "std": None},
                            "CLS": {"mean": 0.25, "std": None}}}
               for step, sr, ne in ((3, 0.5, 4.25), (7, 0.75, 2.5))]  # fmt: skip
    n = write_tensorboard(SweepTable("val_unseen", summary=summary), tmp_path / "tb")
    assert n == 6
    assert read_scalars(tmp_path / "tb") == [
        ("eval_val_unseen_success", 3, 0.5),
        ("eval_val_unseen_distance_to_goal", 3, 4.25),
        ("eval_val_unseen_CLS", 3, 0.25),  # no VLN-CE name: the label as it is
        ("eval_val_unseen_success", 7, 0.75),
        ("eval_val_unseen_distance_to_goal", 7, 2.5),
        ("eval_val_unseen_CLS", 7, 0.25),
    ]


def test_a_checkpoint_without_a_number_has_no_step(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``ckpt.latest.pth`` is not given step 1 (its place) beside ``ckpt.3.pth``: its CSV step
    is empty and TensorBoard gets only ``ckpt.3.pth``'s points, with a note naming it."""
    ckpts = []
    for name in ("ckpt.3.pth", "ckpt.latest.pth"):
        (tmp_path / name).write_text("1")
        ckpts.append(tmp_path / name)
    units = tmp_path / "units.jsonl"
    assert vlneval("sweep", "plan", "--units", units, "--runs-dir", tmp_path / "runs",
                   "--checkpoints", *ckpts, "--", "run", "--task", "demo", "--agent",
                   "tests.distributed.agents:CheckpointRandom") == 0  # fmt: skip
    assert vlneval("sweep", "run-unit", units, "--all") == 0
    table, tb = tmp_path / "t.csv", tmp_path / "tb"
    capsys.readouterr()
    assert vlneval("sweep", "report", units, "--csv", table, "--tensorboard", tb,
                   "--resamples", "50") == 0  # fmt: skip
    steps = {(r["checkpoint"], r["step"]) for r in csv.DictReader(table.open())}
    assert steps == {("ckpt.3.pth", "3"), ("ckpt.latest.pth", "")}
    scalars = read_scalars(tb)
    assert {s for _, s, _ in scalars} == {3} and len(scalars) == 8
    err = capsys.readouterr().err
    assert "wrote 8 scalars to" in err
    assert (
        "\nnote: ckpt.latest.pth: no number in the name, so no step: left out of TensorBoard\n"
        in err
    )


def test_tensorboard_without_a_writer_says_what_to_install(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import sys

    from vlneval.distributed.sweep_report import SweepTable, write_tensorboard
    from vlneval.errors import VLNEvalError

    for name in ("torch.utils.tensorboard", "tensorboardX"):
        monkeypatch.setitem(sys.modules, name, None)  # as if not installed
    with pytest.raises(VLNEvalError, match="pip install tensorboard .* or tensorboardX"):
        write_tensorboard(SweepTable("val_seen"), tmp_path / "tb")
    assert not (tmp_path / "tb").exists()


@pytest.mark.parametrize("run_one", [False, True])
def test_sweep_report_with_no_finished_run_fails_and_writes_nothing(
    run_one: bool, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Nothing run (or one of a run's two shards): one error, exit 2, no table, no file."""
    units = tmp_path / "units.jsonl"
    assert vlneval("sweep", "plan", "--units", units, "--runs-dir", tmp_path / "runs",
                   "--shards", "2", "--", "run", "--task", "demo", "--agent", "random") == 0  # fmt: skip
    if run_one:
        assert vlneval("sweep", "run-unit", units, "--unit", "0") == 0
    capsys.readouterr()
    table, md = tmp_path / "t.csv", tmp_path / "t.md"
    assert vlneval("sweep", "report", units, "--csv", table, "--markdown", md) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and not table.exists() and not md.exists()
    assert captured.err == (
        f"error: {units}: nothing to report: no run (checkpoint x seed) has all its units "
        f"complete ({int(run_one)} of 2 units complete); run them first: vlneval sweep run-unit "
        f"{units} --all (or the sbatch line of: vlneval sweep status {units})\n"
    )
    assert vlneval("sweep", "report", units) == 2  # without outputs: nothing on stdout either
    assert capsys.readouterr().out == ""


def test_sweep_report_refuses_a_plot_metric_it_lacks_before_writing_anything(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    units = tmp_path / "units.jsonl"
    assert vlneval("sweep", "plan", "--units", units, "--runs-dir", tmp_path / "runs", "--",
                   "run", "--task", "demo", "--agent", "random") == 0  # fmt: skip
    assert vlneval("sweep", "run-unit", units, "--all") == 0
    capsys.readouterr()
    table, plot = tmp_path / "t.csv", tmp_path / "p.png"
    assert vlneval("sweep", "report", units, "--csv", table, "--plot", plot, "--plot-metrics",
                   "SR", "RGS", "--resamples", "50") == 2  # fmt: skip
    assert capsys.readouterr().err == (
        "error: RGS: not a metric of this sweep (it has: TL, NE, OSR, SR, SPL, nDTW, sDTW, CLS)\n"
    )
    assert not table.exists() and not plot.exists()


def test_sweep_report_prints_the_markdown_only_without_another_output(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """stdout gets the markdown when none of --markdown, --csv, --tensorboard is given; with
    --by-episode the intervals resample episodes and say so."""
    units = tmp_path / "units.jsonl"
    assert vlneval("sweep", "plan", "--units", units, "--runs-dir", tmp_path / "runs", "--",
                   "run", "--task", "demo", "--agent", "random") == 0  # fmt: skip
    assert vlneval("sweep", "run-unit", units, "--all") == 0
    md, table = tmp_path / "t.md", tmp_path / "t.csv"
    report = ["sweep", "report", units, "--resamples", "50", "--by-episode"]
    capsys.readouterr()
    assert vlneval(*report, "--markdown", md) == 0
    assert capsys.readouterr().out == ""
    assert md.read_text().endswith("\nIntervals: 95% percentile bootstrap, by episode.\n")
    assert vlneval(*report) == 0
    assert capsys.readouterr().out == md.read_text()
    assert vlneval(*report, "--csv", table) == 0
    assert capsys.readouterr().out == ""
    rows = list(csv.DictReader(table.open()))
    assert {r["resampling"] for r in rows} == {"episodes", ""}
    assert vlneval(*report, "--tensorboard", tmp_path / "tb") == 0
    assert capsys.readouterr().out == ""


def test_sweep_report_intervals_are_the_reports(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Each run's intervals are exactly those ``vlneval report`` gives its merged predictions
    (:func:`vlneval.diagnostics.diagnose`, the same seed and resamples): one interval path. The
    shortest-path agent succeeds everywhere: SR, OSR get the Clopper-Pearson interval."""
    from vlneval.diagnostics import diagnose
    from vlneval.diagnostics.scored import score_run
    from vlneval.evaluation import Scorer

    units = tmp_path / "units.jsonl"
    assert vlneval("sweep", "plan", "--units", units, "--runs-dir", tmp_path / "runs", "--",
                   "run", "--task", "demo", "--agent", "shortest") == 0  # fmt: skip
    assert vlneval("sweep", "run-unit", units, "--all") == 0
    table = tmp_path / "t.csv"
    assert vlneval("sweep", "report", units, "--csv", table, "--resamples", "200") == 0
    rows = [r for r in csv.DictReader(table.open()) if r["seed"] == "0"]
    run = score_run(Scorer("demo"), read_units(units)[0].out)
    report = diagnose(run, n_resamples=200).intervals
    assert [r["metric"] for r in rows] == list(report)
    for r in rows:
        ci = report[r["metric"]]
        assert (float(r["ci_low"]), float(r["ci_high"])) == (ci.low, ci.high), r["metric"]
    assert [k for k, ci in report.items() if ci.method == "clopper-pearson"] == ["OSR", "SR"]


def test_sweep_report_ranks_with_the_scorer_before_closing_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The plot's default metric (the task's ranking metric) is read while the scorer is open."""
    from vlneval.cli import sweep
    from vlneval.evaluation.scorer import Scorer

    units = tmp_path / "units.jsonl"
    assert vlneval("sweep", "plan", "--units", units, "--runs-dir", tmp_path / "runs", "--",
                   "run", "--task", "demo", "--agent", "random") == 0  # fmt: skip
    assert vlneval("sweep", "run-unit", units, "--all") == 0
    events: list[str] = []
    close, ranked_by = Scorer.close, sweep._ranked_by

    def closing(self: Scorer) -> None:
        events.append("closed")
        close(self)

    def ranking(scorer: Scorer, table: object) -> str:
        events.append(f"ranked, open: {'closed' not in events}")
        return ranked_by(scorer, table)

    monkeypatch.setattr(Scorer, "close", closing)
    monkeypatch.setattr(sweep, "_ranked_by", ranking)
    assert vlneval("sweep", "report", units, "--plot", tmp_path / "p.png", "--resamples", "50") == 0
    assert events == ["ranked, open: True", "closed"]


def test_sweep_report_refuses_plot_metrics_without_a_plot(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Refused before the units are read: no scoring, nothing written."""
    table = tmp_path / "t.csv"
    missing = tmp_path / "no-such-units.jsonl"  # not even read
    assert vlneval("sweep", "report", missing, "--csv", table, "--plot-metrics", "SR") == 2
    assert capsys.readouterr().err == (
        "error: --plot-metrics chooses the metrics of --plot PNG: give --plot too\n"
    )
    assert not table.exists()


@pytest.mark.parametrize("check", [True, False])
def test_sweep_plan_imports_the_agent_only_to_check_it(
    check: bool,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The checkpoint= check imports the agent's module at plan time (torch and model code, on
    a login node); --no-agent-check plans without importing it, and the units are written."""
    import sys

    (tmp_path / "sweep_plan_agent.py").write_text(
        "from vlneval.agents.baselines import RandomAgent as Agent\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "sweep_plan_agent", raising=False)
    c = tmp_path / "ckpt.10.pth"
    c.write_text("1")
    units = tmp_path / "units.jsonl"
    skip = [] if check else ["--no-agent-check"]
    code = vlneval("sweep", "plan", "--units", units, "--runs-dir", tmp_path / "runs", *skip,
                   "--checkpoints", c, "--", "run", "--task", "demo", "--agent",
                   "sweep_plan_agent:Agent")  # fmt: skip
    assert ("sweep_plan_agent" in sys.modules) is check
    err = capsys.readouterr().err
    if check:  # the agent takes no checkpoint=: refused
        assert code == 2 and not units.exists()
        assert err == (
            "error: --checkpoints: agent sweep_plan_agent:Agent takes no checkpoint= argument "
            "(its constructor takes: none); see vlneval.distributed.checkpoint\n"
        )
    else:
        assert code == 0 and len(read_units(units)) == 1
        assert err.startswith(f"wrote 1 units to {units} (1 checkpoints x 1 seeds x 1 shards;")
