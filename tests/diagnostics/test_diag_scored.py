"""score_run gives evaluate's numbers and keeps trajectories; real-data diagnostics."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import numpy as np
import pytest

from tests.reports.house import EXECUTED, house_root, write_predictions
from vlneval.diagnostics import ScoredRun, diagnose, run_label, score_run
from vlneval.errors import InvalidInputError, VLNEvalError
from vlneval.evaluation import Scorer, evaluate
from vlneval.tasks.common.root import demo_root

P = "predictions/r2r"
SEQ = P + "/seq2seq_r2r_baseline_sadanand1120/seq2seq_sample_imagenet_val_unseen_iter_{}.json.gz"
NAVILLM = P + "/navillm_sadanand1120/navillm_val_unseen_compact.json.gz"


def test_same_numbers_as_evaluate_and_keeps_paths(house_run: ScoredRun, house_paths: Path) -> None:
    root = Path(house_run.evaluation.episodes.source).parent.parent
    plain = evaluate("r2r", "val", house_paths, root=root)
    assert house_run.evaluation.metrics == plain.metrics
    for name, column in plain.per_episode.items():
        np.testing.assert_array_equal(house_run.evaluation.per_episode[name], column)
    assert house_run.has_trajectories and house_run.graphs is not None
    g = house_run.graphs.graph("house")
    for k, eid in enumerate(house_run.episode_ids):
        assert [g.ids[n] for n in house_run.trajectory(k)] == EXECUTED[eid]
    assert house_run.label == "preds"


def test_demo_task() -> None:
    path = demo_root() / "demo" / "predictions_val.json"
    run = score_run(Scorer("demo", "val"), path)
    assert run.evaluation.metrics == evaluate("demo", "val", path).metrics


def test_run_label() -> None:
    assert run_label("a/b/model.jsonl.gz") == "model"
    assert run_label("x.json") == "x"


def test_errors_name_the_problem(tmp_path: Path) -> None:
    root = house_root(tmp_path / "root")
    preds = write_predictions(tmp_path / "p.json", {"1_0": ["F0", "F9"]})
    with pytest.raises(InvalidInputError, match='instr_id "1_0": trajectory\\[1\\]'):
        score_run(Scorer("r2r", "val", root=root, profile="r2r-envdrop"), preds, subset=True)
    with pytest.raises(VLNEvalError, match="does not score task r2r"):
        score_run(Scorer("r2r", "val", root=root, profile="r4r-google"), preds)


def test_real_navillm_compact_with_summary_record(data_root: Path) -> None:
    f = data_root / NAVILLM
    own = json.loads(gzip.decompress(f.read_bytes()))[0]
    with pytest.raises(InvalidInputError, match="looks like a summary.*--skip-summary-records"):
        score_run(Scorer("r2r", "val_unseen", root=data_root), f)
    run = score_run(Scorer("r2r", "val_unseen", root=data_root), f, skip_summaries=True)
    m = run.evaluation.metrics
    assert m["SR"] == pytest.approx(own["success_rate"], abs=1e-12)
    assert m["OSR"] == pytest.approx(own["oracle success_rate"], abs=1e-12)
    assert m["SPL"] == pytest.approx(own["spl"], abs=1e-12)
    assert m["NE"] == pytest.approx(own["nav_error"], abs=1e-12)
    assert any("look like a summary were skipped" in w for w in run.evaluation.warnings)
    d = diagnose(run, n_resamples=200)
    assert d.failures is not None
    assert d.failures.counts == {
        "success": 1576,
        "passed_goal": 248,
        "step_limit": None,
        "stopped_early": 242,
        "wandered": 283,
    }
    assert d.failures.shares["passed_goal"] == pytest.approx(m["OSR"] - m["SR"], abs=1e-12)


@pytest.mark.parametrize(
    ("iteration", "counts", "budgets"),
    [
        (5000, (405, 173, 1769, 0, 2), (165, 294, 369, 398, 405)),
        (20000, (494, 169, 1493, 117, 76), (182, 357, 435, 487, 494)),
    ],
)
def test_real_seq2seq_outcomes_with_step_limit(
    data_root: Path, iteration: int, counts: tuple[int, ...], budgets: tuple[int, ...]
) -> None:
    """The R2R seq2seq baseline runs at most 20 actions (max_episode_len = 20)."""
    run = score_run(Scorer("r2r", "val_unseen", root=data_root), data_root / SEQ.format(iteration))
    per = run.evaluation.per_episode
    assert int(per["steps"].max()) == 20
    d = diagnose(run, n_resamples=200, step_limit=20)
    assert d.failures is not None
    assert tuple(d.failures.counts.values()) == counts
    # the step-limit class, recomputed from the per-episode table
    never = (per["success"] == 0) & (per["oracle_success"] == 0)
    assert int((never & (per["steps"] >= 20)).sum()) == counts[2]
    n = len(run.evaluation.scored)
    assert tuple(round(ci.estimate * n) for ci in d.budgets.values()) == budgets
    assert budgets[-1] <= round(run.evaluation.metrics["SR"] * n)


def test_skip_summaries_refused_for_a_task_whose_reader_cannot_skip(tmp_path: Path) -> None:
    """The refusal names the task as registered (``touchdown-sdr``), whatever case it was typed
    in (Touchdown navigation, with its own scorer too, skips summary records)."""
    from tests.tasks.touchdown.fixture import SDR, make_root, nav, write

    scorer = Scorer("TouchDown-SDR", "dev", root=make_root(tmp_path / "root"))
    with pytest.raises(VLNEvalError) as exc:
        score_run(scorer, write(tmp_path, SDR), skip_summaries=True)
    assert str(exc.value) == (
        "skip_summaries (--skip-summary-records) does not apply to task touchdown-sdr: its "
        "reader cannot skip summary records; remove the summary record from the file"
    )
    nav_scorer = Scorer("TouchDown", "dev", root=make_root(tmp_path / "nav"))
    run = score_run(nav_scorer, nav(tmp_path), skip_summaries=True)
    assert run.evaluation.metrics == nav_scorer.score(nav(tmp_path)).metrics
