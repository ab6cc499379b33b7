"""``vlneval run`` in a continuous environment and ``vlneval score`` of VLN-CE predictions,
end to end on the real data (a few episodes)."""

from __future__ import annotations

import gc
import json
from pathlib import Path

import pytest

from vlneval.cli.main import main


def test_run_ce_writes_predictions_card_and_score(
    data_root: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "preds.json"
    summary = tmp_path / "summary.json"
    code = main(
        [
            "run",
            "--task",
            "r2r-twin",
            "--split",
            "val_unseen",
            "--data-root",
            str(data_root),
            "--env",
            "continuous-waypoint",
            "--agent",
            "shortest",
            "--limit",
            "3",
            "--out",
            str(out),
            "--score",
            "--json",
            str(summary),
            "--per-episode",
            str(tmp_path / "rows.csv"),
        ]
    )
    assert code == 0
    preds = json.loads(out.read_text())
    assert len(preds) == 3 and all(steps[-1]["stop"] for steps in preds.values())
    card = json.loads((tmp_path / "preds.protocol.json").read_text())
    assert card["environment"] == "continuous-waypoint-v1"
    assert card["action_space"]["name"] == "waypoint" and "executor" in card["action_space"]
    assert card["privileged"].startswith("goal, geodesic distance field")
    assert (card["episodes"], card["n_expected"], card["partial"]) == (3, 2349, True) and card[
        "seeds"
    ] == [0]
    s = json.loads(summary.read_text())
    assert s["metrics"]["SR"] == 1.0 and s["partial"] is True
    assert s["protocol"]["action_space"]["name"] == "waypoint"
    header = (tmp_path / "rows.csv").read_text().splitlines()[0].split(",")
    assert {"instr_id", "success", "path_length", "path_length_integrated", "time_s"} <= set(header)
    assert s["measured"]["mean_time_s"] > 0 and s["measured"]["mean_path_length_integrated_m"] > 0
    assert "SR (%)" in capsys.readouterr().out
    assert gc.get_freeze_count() == 0  # the command thaws what it froze


def test_run_ce_refuses_a_graph_environment(
    data_root: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(
        [
            "run",
            "--task",
            "r2r-twin",
            "--data-root",
            str(data_root),
            "--env",
            "graph-panoramic",
            "--agent",
            "stop",
            "--out",
            str(tmp_path / "p.json"),
        ]
    )
    assert code == 2
    assert "not a continuous environment" in capsys.readouterr().err


def test_score_ce_with_twin_distances(data_root: Path, tmp_path: Path) -> None:
    from vlneval.tasks.vlnce.format import load_vlnce, reference_as_predictions

    base = data_root / "vlnce/R2R_VLNCE_v1-3_preprocessed/val_seen"
    eps = load_vlnce(base / "val_seen.json.gz", gt_path=base / "val_seen_gt.json.gz")
    preds = tmp_path / "gt.json"
    preds.write_text(json.dumps(reference_as_predictions(eps, indices=range(0, len(eps), 8))))
    summary = tmp_path / "s.json"
    code = main(
        [
            "score",
            "--task",
            "r2r-ce",
            "--split",
            "val_seen",
            "--data-root",
            str(data_root),
            "--predictions",
            str(preds),
            "--distance",
            "twin",
            "--subset",
            "--json",
            str(summary),
            "--quiet",
        ]
    )
    assert code == 0
    s = json.loads(summary.read_text())
    assert s["distance"]["source"] == "twin" and "APPROXIMATION" in s["distance"]["detail"]
    assert s["metrics"]["nDTW"] == 1.0 and s["metrics"]["SR"] > 0.99
    assert s["profile"]["name"] == "vlnce" and s["partial"] is True


def test_continuous_shards_merge_to_the_bytes_of_a_single_run(
    data_root: Path, tmp_path: Path
) -> None:
    import gzip

    episodes = tmp_path / "eps.json"
    split = json.loads(gzip.decompress((data_root / "r2r/R2R_val_unseen.json.gz").read_bytes()))
    episodes.write_text(json.dumps(split[:3]))  # 9 instructions
    run = ["run", "--task", "r2r-twin", "--data-root", str(data_root), "--episodes",
           str(episodes), "--agent", "shortest", "--quiet"]  # fmt: skip
    assert main([*run, "--out", str(tmp_path / "single.json")]) == 0
    shards = tmp_path / "shards"
    shards.mkdir()
    for i in range(2):
        assert main([*run, "--out", str(shards / "preds.json"), "--shard", f"{i}/2"]) == 0
    merged = shards / "merged.json"
    assert main(["merge", *map(str, sorted(shards.glob("*.jsonl"))), "--out", str(merged)]) == 0
    assert merged.read_bytes() == (tmp_path / "single.json").read_bytes()
    assert len(json.loads(merged.read_text())) == 9
    card = json.loads((shards / "merged.protocol.json").read_text())
    assert card.pop("shards")["count"] == 2
    assert card == json.loads((tmp_path / "single.protocol.json").read_text())


def test_continuous_run_refuses_graph_only_options(
    data_root: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["run", "--task", "r2r-twin", "--data-root", str(data_root), "--agent", "stop",
                 "--features", "f.tsv", "--out", str(tmp_path / "p.json")])  # fmt: skip
    assert code == 2
    assert "drop --features" in capsys.readouterr().err


def test_score_takes_the_unreachable_policy_as_a_task_option(tmp_path: Path) -> None:
    from tests.tasks.vlnce.helpers import steps, write_split

    episodes, _ = write_split(tmp_path)
    line = [[0.0, 0.0, -float(k)] for k in range(5)]
    preds = tmp_path / "p.json"
    preds.write_text(json.dumps({"1": steps(line, [4, 3, 2, 1, float("inf")]),
                                 "2": steps(line, [4, 3, 2, 1, 0.5])}))  # fmt: skip
    args = ["score", "--task", "r2r-ce", "--split", "val", "--episodes", str(episodes),
            "--predictions", str(preds), "--quiet"]  # fmt: skip
    for policy, sr in (("failure", 0.5), ("exclude", 1.0)):
        summary = tmp_path / f"{policy}.json"
        assert main([*args, "--unreachable", policy, "--json", str(summary)]) == 0
        assert json.loads(summary.read_text())["metrics"]["SR"] == sr


def test_run_score_takes_the_unreachable_policy_as_score_does(
    data_root: Path, tmp_path: Path
) -> None:
    """``run --score --unreachable exclude`` scores with that policy, as ``vlneval score``."""
    summary = tmp_path / "s.json"
    assert main(["run", "--task", "r2r-twin", "--split", "val_unseen", "--data-root",
                 str(data_root), "--agent", "stop", "--limit", "2", "--quiet", "--out",
                 str(tmp_path / "p.json"), "--score", "--unreachable", "EXCLUDE", "--json",
                 str(summary)]) == 0  # fmt: skip
    scored = json.loads(summary.read_text())
    assert scored["profile_rules"]["unreachable"] == "exclude"
    assert scored["protocol"]["scoring"]["unreachable"] == "exclude"
    assert scored["distance"]["unreachable"]["policy"] == "exclude"
    assert scored["distance"]["unreachable"]["rule"] == (
        "left out of NE, OSR, SR, SPL and sDTW (all over the 2 reachable)"
    )


def test_run_ce_json_gz_is_gzip_with_the_card_named_as_for_graph_runs(
    data_root: Path, tmp_path: Path
) -> None:
    """``--out preds.json.gz``: gzip bytes, and the card is ``preds.protocol.json``, as beside a
    graph run's ``.json.gz``."""
    import gzip

    out = tmp_path / "preds.json.gz"
    args = ["run", "--task", "r2r-twin", "--split", "val_unseen", "--data-root", str(data_root),
            "--agent", "shortest", "--limit", "2", "--quiet", "--out", str(out)]  # fmt: skip
    assert main(args) == 0
    assert len(json.loads(gzip.decompress(out.read_bytes()))) == 2
    assert sorted(p.name for p in tmp_path.iterdir()) == ["preds.json.gz", "preds.protocol.json"]
    card = json.loads((tmp_path / "preds.protocol.json").read_text())
    assert (card["episodes"], card["n_expected"], card["partial"]) == (2, 2349, True)


def test_merging_an_r2r_ce_run_says_how_to_score_its_goal_metrics(
    data_root: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A run writes no distance_to_goal: scored as it is, its goal metrics are n/a; the merge
    says that --distance twin measures them."""
    out = tmp_path / "p.json"
    run = ["run", "--task", "r2r-ce", "--split", "val_seen", "--data-root", str(data_root),
           "--agent", "stop", "--quiet", "--out", str(out), "--shard", "0/1"]  # fmt: skip
    assert main(run) == 0
    merged = tmp_path / "merged.json"
    capsys.readouterr()
    assert main(["merge", str(tmp_path / "p.shard-0-of-1.jsonl"), "--out", str(merged)]) == 0
    assert capsys.readouterr().err.splitlines()[-1] == (
        f"note: to score it: vlneval score --task r2r-ce --split val_seen --data-root {data_root} "
        f"--predictions {merged} --distance twin (the run measured no distance_to_goal: without --distance twin, NE, OSR, "
        "SR, SPL and sDTW are n/a)"
    )


@pytest.mark.parametrize("distance", ["none", "carried", "auto"])
def test_run_score_refuses_a_distance_source_other_than_twin(
    data_root: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], distance: str
) -> None:
    out = tmp_path / "p.json"
    code = main(["run", "--task", "r2r-ce", "--data-root", str(data_root), "--agent", "stop",
                 "--score", "--distance", distance, "--out", str(out)])  # fmt: skip
    assert code == 2
    assert capsys.readouterr().err == (
        f"error: --distance {distance}: run --score scores on the twin worlds the agent ran in "
        "(--distance twin; a run records no distance_to_goal): drop --distance, or score the "
        f"written file with vlneval score --distance {distance}\n"
    )
    assert not out.exists()


@pytest.mark.parametrize(("task", "profile"), [("r2r-ce", "vlnce"), ("r2r-twin", "vlnce-exact")])
def test_run_score_uses_the_profile_score_uses(
    data_root: Path, tmp_path: Path, task: str, profile: str
) -> None:
    """`run --score` prints the table `vlneval score` prints: under the task's default profile
    (r2r-ce was scored under vlnce-exact, while `score --task r2r-ce` uses vlnce)."""
    summary = tmp_path / "s.json"
    code = main(["run", "--task", task, "--split", "val_seen", "--data-root", str(data_root),
                 "--agent", "stop", "--limit", "2", "--out", str(tmp_path / "p.json"), "--score",
                 "--json", str(summary), "--quiet"])  # fmt: skip
    assert code == 0
    assert json.loads(summary.read_text())["profile"]["name"] == profile


def test_the_note_of_a_partial_merge_gives_a_command_that_scores_it(
    data_root: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Merged with --allow-partial (shard 0 of 2 only), the note's command has --data-root, as
    the run had it but absolute (the run gave it relative to its folder), and --subset, without
    which score refuses the missing episodes; a path with a space is quoted; it scores from
    another folder."""
    import shlex

    out = tmp_path / "p.json"
    monkeypatch.chdir(data_root.parent)
    run = ["run", "--task", "r2r-ce", "--split", "val_seen", "--data-root", data_root.name,
           "--agent", "stop", "--quiet", "--out", str(out), "--shard", "0/2"]  # fmt: skip
    assert main(run) == 0
    merged = tmp_path / "my runs" / "merged.json"
    merged.parent.mkdir()
    shard = tmp_path / "p.shard-0-of-2.jsonl"
    capsys.readouterr()
    assert main(["merge", str(shard), "--out", str(merged), "--allow-partial"]) == 0
    note = capsys.readouterr().err.splitlines()[-1]
    command = (
        f"vlneval score --task r2r-ce --split val_seen --data-root {data_root.resolve()} "
        f"--predictions '{merged}' --distance twin --subset"
    )
    assert note == (
        f"note: to score it: {command} (the run measured no distance_to_goal: without "
        "--distance twin, NE, OSR, SR, SPL and sDTW are n/a)"
    )
    monkeypatch.chdir(tmp_path)
    assert main([*shlex.split(command)[1:], "--quiet"]) == 0
