"""VLN-CE on the real R2R-CE v1-3 files: the reference paths score 1, fastdtw vs exact."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from vlneval.continuous.oracle import GridOracle
from vlneval.continuous.twin import TwinWorlds
from vlneval.graph.store import GraphStore
from vlneval.tasks.profiles import get_profile
from vlneval.tasks.vlnce.format import (
    habitat_to_world,
    load_vlnce,
    parse_ce_predictions,
    reference_as_predictions,
)
from vlneval.tasks.vlnce.score import DistanceSource, score_continuous

FOLDER = "vlnce/R2R_VLNCE_v1-3_preprocessed"


def _split(root: Path, split: str):  # type: ignore[no-untyped-def]
    base = root / FOLDER / split
    return load_vlnce(base / f"{split}.json.gz", gt_path=base / f"{split}_gt.json.gz", split=split)


def test_splits_load(data_root: Path) -> None:
    assert len(_split(data_root, "val_seen")) == 778
    assert len(_split(data_root, "val_unseen")) == 1839
    test = load_vlnce(data_root / FOLDER / "test" / "test.json.gz", split="test")
    assert len(test) == 3408 and not test.scorable


def test_reference_paths_score_one_with_carried_distances(data_root: Path, tmp_path: Path) -> None:
    """The _gt paths written as predictions, distances carried per step (measured on the twin
    grid of each building, as a Habitat run would carry navmesh distances): nDTW = SR = 1."""
    eps = _split(data_root, "val_unseen")
    worlds = TwinWorlds(GraphStore(data_root / "matterport3d" / "connectivity"))

    def carried(i: int, pts: np.ndarray) -> np.ndarray:
        oracle = GridOracle(worlds(eps.scans[i]), transform=habitat_to_world, snap=0.5)
        return oracle.distances(pts, eps.goals[i])

    path = tmp_path / "gt_preds.json"
    path.write_text(json.dumps(reference_as_predictions(eps, carried)))
    preds = parse_ce_predictions(path, eps)
    assert preds.form == "r2r-ce" and preds.distances is not None
    source = DistanceSource("carried", "twin distances carried in the file")
    for name in ("vlnce", "vlnce-exact", "vlnce-strict"):  # strict: no official move is refused
        result = score_continuous(eps, preds, get_profile(name), source, show_progress=False)
        assert result.per_episode["jumps"].sum() == 0
        s = result.to_dict()
        assert s["n_episodes"] == 1839
        assert s["metrics"]["nDTW"] == 1.0 and s["metrics"]["sDTW"] == 1.0
        assert s["metrics"]["SR"] == 1.0 and s["metrics"]["OSR"] == 1.0
        assert s["distance"]["unreachable"]["count"] == 0
        assert 0.9 < s["metrics"]["SPL"] <= 1.0
        assert all(c["holds"] for c in s["checks"])


def test_fastdtw_never_beats_exact_and_stays_close(data_root: Path, tmp_path: Path) -> None:
    """Synthetic agents (noisy, truncated reference paths): VLN-CE's fastdtw nDTW is at most
    the exact one, and within a few 1e-3 of it (the spec quotes ~5e-4 on val_unseen)."""
    eps = _split(data_root, "val_seen")
    rng = np.random.default_rng(11)
    preds = {}
    for i in range(len(eps)):
        gt = eps.dense_points(i)
        assert gt is not None
        n = max(1, int(len(gt) * rng.uniform(0.4, 1.3)))
        pts = np.concatenate(
            [gt, gt[-1:] + rng.normal(0, 0.25, (max(0, n - len(gt)), 3)) * [1, 0, 1]]
        )[:n]
        pts[1:] += rng.normal(0, 0.2, pts[1:].shape) * [1, 0, 1]
        preds[eps.ids[i]] = [
            {"position": p, "heading": 0.0, "stop": k == n - 1} for k, p in enumerate(pts.tolist())
        ]
    path = tmp_path / "agent.json"
    path.write_text(json.dumps(preds))
    parsed = parse_ce_predictions(path, eps)
    none = DistanceSource("none", "none")
    fast = score_continuous(eps, parsed, get_profile("vlnce"), none, show_progress=False)
    exact = score_continuous(eps, parsed, get_profile("vlnce-exact"), none, show_progress=False)
    diff = exact.per_episode["ndtw"] - fast.per_episode["ndtw"]
    assert diff.min() >= -1e-12
    assert diff.max() < 5e-3
    assert fast.metrics["SR"] is None  # no distances: unavailable, never 0


@pytest.mark.parametrize("profile", ["vlnce", "vlnce-exact"])
def test_cli_scores_r2r_ce(
    data_root: Path, tmp_path: Path, profile: str, capsys: pytest.CaptureFixture[str]
) -> None:
    from vlneval.cli.main import main

    eps = _split(data_root, "val_seen")
    path = tmp_path / "gt.json"
    path.write_text(json.dumps(reference_as_predictions(eps)))
    out = tmp_path / "summary.json"
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
            str(path),
            "--profile",
            profile,
            "--json",
            str(out),
        ]
    )
    assert code == 0
    s = json.loads(out.read_text())
    assert s["metrics"]["nDTW"] == 1.0 and s["metrics"]["SR"] is None
    assert "SR" in s["unavailable"]
    assert "nDTW" in capsys.readouterr().out


def test_r2r_twin_output_given_to_r2r_ce_suggests_r2r_twin(
    data_root: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """An r2r-twin file (keyed by R2R instruction ids) scored as r2r-ce: the refusal says so."""
    from vlneval.cli.main import main

    step = [{"position": [0.0, 0.0, 0.0], "stop": True}]
    path = tmp_path / "ce.json"
    path.write_text(json.dumps({f"{p}_{k}": step for p in (4332, 2390) for k in range(3)}))
    argv = ["score", "--task", "r2r-ce", "--split", "val_unseen", "--data-root", str(data_root)]
    assert main([*argv, "--predictions", str(path)]) == 2
    assert capsys.readouterr().err == (
        f"error: {path}: no prediction matches an episode of r2r-ce val_unseen\n"
        "hint: 6 of the file's 6 keys are R2R instruction ids of val_unseen (e.g. '2390_0'), not "
        "VLN-CE episode ids: the output of an r2r-twin run? (use --task r2r-twin)\n"
    )
    path.write_text(json.dumps({"1_0": step, "nope": step, "x": step}))  # most keys not R2R's
    assert main([*argv, "--predictions", str(path)]) == 2
    assert "hint:" not in capsys.readouterr().err


def test_the_release_of_the_folder_is_the_summary_s_and_the_card_s(
    data_root: Path, tmp_path: Path
) -> None:
    from vlneval.evaluation import evaluate
    from vlneval.tasks.vlnce.format import load_vlnce_split

    eps = _split(data_root, "val_seen")
    first = dict(list(reference_as_predictions(eps).items())[:1])
    r = evaluate("r2r-ce", "val_seen", first, root=data_root, subset=True)
    assert (r.data_version, r.protocol["data_version"]) == ("v1-3", "v1-3")
    copy = tmp_path / "val_seen.json.gz"
    copy.write_bytes((data_root / FOLDER / "val_seen" / "val_seen.json.gz").read_bytes())
    assert load_vlnce_split(copy, task="r2r-ce", split="val_seen").data_version is None


def test_a_run_card_names_the_vlnce_release(data_root: Path, tmp_path: Path) -> None:
    from vlneval.cli.main import main

    out = tmp_path / "preds.json"
    assert main(["run", "--task", "r2r-ce", "--split", "val_seen", "--data-root", str(data_root),
                 "--agent", "stop", "--limit", "1", "--quiet", "--out", str(out)]) == 0  # fmt: skip
    card = json.loads((tmp_path / "preds.protocol.json").read_text())
    assert (card["task"], card["split"], card["data_version"]) == ("r2r-ce", "val_seen", "v1-3")
