"""Runs write ids the way each benchmark's own predictions do (NDH inst_idx is an integer)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from vlneval.cli.main import main


def test_ndh_run_writes_integer_ids_and_scores(
    data_root: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "ndh.json"
    args = ["run", "--task", "ndh", "--split", "val_seen", "--data-root", str(data_root)]
    args += ["--agent", "shortest", "--out", str(out), "--score"]
    assert main(args) == 0
    records = json.loads(out.read_text())
    assert all(type(r["inst_idx"]) is int for r in records)
    assert "ndh val_seen" in capsys.readouterr().out
