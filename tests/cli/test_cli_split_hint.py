"""``vlneval score`` tells a file made for another split of the task which one (as the server's
and the blind checks do), only when it is so, and reads the other splits only then."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from tests.fixtures import preds, square_root, write_json
from tests.tasks.touchdown.fixture import make_root, route

from vlneval.cli.main import main
from vlneval.tasks.base import Task


def _episode(path_id: int) -> dict[str, Any]:
    return {"path_id": path_id, "scan": "sq", "path": ["S", "A", "B", "G"], "heading": 0.0,
            "instructions": ["go", "walk", "run"], "distance": 12.0}  # fmt: skip


@pytest.fixture
def root(tmp_path: Path) -> Path:
    """R2R val_seen (path 1) and val_unseen (path 2) on the square graph."""
    out = square_root(tmp_path / "root", [_episode(1)])
    (out / "r2r" / "R2R_val.json").rename(out / "r2r" / "R2R_val_seen.json")
    write_json(out / "r2r" / "R2R_val_unseen.json", [_episode(2)])
    return out


def _loads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    loads: list[str] = []
    load = Task.load

    def counted(self: Task, path: Path, split: str, profile: Any) -> Any:
        loads.append(split)
        return load(self, path, split, profile)

    monkeypatch.setattr(Task, "load", counted)
    return loads


def _score(root: Path, body: Any, tmp: Path, *extra: str, task: str = "r2r") -> int:
    path = tmp / "preds.json"
    path.write_text(json.dumps(body))
    return main(["score", "--task", task, "--data-root", str(root), "--predictions", str(path),
                 "--quiet", *extra])  # fmt: skip


def test_val_seen_predictions_scored_as_val_unseen_are_told_their_split(
    root: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    body = preds({f"1_{k}": ["S", "A", "B", "G"] for k in range(3)})
    assert _score(root, body, tmp_path, "--split", "val_unseen") == 2
    assert capsys.readouterr().err.splitlines() == [
        f"error: {tmp_path / 'preds.json'}: no prediction matches an episode of r2r val_unseen",
        "hint: 3 of the file's 3 ids are episodes of r2r val_seen, none of val_unseen: was the "
        "file made for val_seen? (score it with --split val_seen)",
    ]
    assert main(["validate", "--task", "r2r", "--split", "val_unseen", "--data-root", str(root),
                 "--predictions", str(tmp_path / "preds.json")]) == 2  # fmt: skip
    assert capsys.readouterr().err.splitlines()[1].startswith("hint: 3 of the file's 3 ids")


def test_no_hint_when_it_is_not_so(
    root: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Ids of no split, and a file with ids of the split (one bad viewpoint): no hint."""
    assert _score(root, preds({"9_0": ["S"]}), tmp_path, "--split", "val_unseen") == 2
    assert "hint:" not in capsys.readouterr().err
    body = preds({"2_0": ["S", "nowhere"], "2_1": ["S"], "2_2": ["S"]})
    assert _score(root, body, tmp_path, "--split", "val_unseen") == 2
    assert "hint:" not in capsys.readouterr().err


def test_the_other_splits_are_read_only_for_a_file_with_none_of_the_splits_ids(
    root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    loads = _loads(monkeypatch)
    good = preds({f"2_{k}": ["S", "A", "B", "G"] for k in range(3)})
    assert _score(root, good, tmp_path, "--split", "val_unseen") == 0
    assert _score(root, {**good[0], "trajectory": [["S", 0, 0], ["X", 0, 0]]}, tmp_path,
                  "--split", "val_unseen") == 2  # fmt: skip
    assert loads == ["val_unseen", "val_unseen"]
    assert _score(root, preds({"1_0": ["S"]}), tmp_path, "--split", "val_unseen") == 2
    assert loads == ["val_unseen", "val_unseen", "val_unseen", "val_seen"]


def test_sdr_predictions_of_another_split_are_compared_by_route_id(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The dev routes 1-3 of the Touchdown fixture and a train route 10: SDR predictions for
    route 10 scored on dev are told they are train's."""
    root = make_root(tmp_path / "root")
    train = route(10, ["p0", "p1"], main='{"x": 0.5, "y": 0.5}')
    (root / "touchdown" / "touchdown_unseen_split" / "train.json").write_text(json.dumps(train))
    body = [{"route_id": 10, "pano": "main", "x": 10.0, "y": 10.0}]
    assert _score(root, body, tmp_path, "--split", "dev", task="touchdown-sdr") == 2
    assert capsys.readouterr().err.splitlines()[-1] == (
        "hint: 1 of the file's 1 ids are episodes of touchdown-sdr train, none of dev: was the "
        "file made for train? (score it with --split train)"
    )
