"""``vlneval validate`` reads a scorable split once (the blind check only for a goal-less one)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from vlneval.cli.main import main
from vlneval.tasks.base import Task
from vlneval.tasks.common.root import demo_root


def _count_loads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    loads: list[str] = []
    load = Task.load

    def counted(self: Task, path: Path, split: str, profile: Any) -> Any:
        loads.append(f"{self.name} {split}")
        return load(self, path, split, profile)

    monkeypatch.setattr(Task, "load", counted)
    return loads


def test_validate_loads_a_scorable_split_once(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    loads = _count_loads(monkeypatch)
    predictions = demo_root() / "demo" / "predictions_val.json"
    assert main(["validate", "--task", "demo", "--predictions", str(predictions)]) == 0
    assert "is a valid demo val submission" in capsys.readouterr().out
    assert loads == ["demo val"]


def test_validate_still_checks_a_test_split_blind(
    data_root: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    if not (data_root / "r2r" / "R2R_test.json.gz").is_file():
        pytest.skip("the R2R test split is not in the data folder")
    out = tmp_path / "random_test.json"
    argv = ["--task", "r2r", "--split", "test", "--data-root", str(data_root)]
    assert main(["run", *argv, "--agent", "random", "--out", str(out)]) == 0
    capsys.readouterr()
    assert main(["validate", *argv, "--predictions", str(out)]) == 0
    assert "passes the blind check of r2r test" in capsys.readouterr().out
