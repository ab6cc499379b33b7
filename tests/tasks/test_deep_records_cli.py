"""A record nested too deeply for msgspec is one clear error on the command line (exit 2), not
a crash of the split hint's second read of the file, and the other files of a run are scored."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.fixtures import preds, square_root
from vlneval.cli.main import main
from vlneval.tasks.common.blind import file_ids

DEEP = "[" * 100_000 + "]" * 100_000  # far past any recursion limit
EPISODE = {"path_id": 1, "scan": "sq", "path": ["S", "A", "B", "G"], "heading": 0.0,
           "instructions": ["go"], "distance": 12.0}  # fmt: skip


def _deep_file(tmp: Path) -> Path:
    good = json.dumps(preds({"1_0": ["S", "A", "B", "G"]}))
    path = tmp / "deep.json"
    path.write_text(good[:-1] + ', {"instr_id": "1_0", "trajectory": ' + DEEP + "}]")
    return path


@pytest.mark.parametrize("command", ["score", "validate"])
def test_a_deep_record_is_one_error_and_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], command: str
) -> None:
    root = square_root(tmp_path / "root", [EPISODE])
    path = _deep_file(tmp_path)
    args = [command, "--task", "r2r", "--split", "val", "--data-root", str(root)]
    args += ["--quiet"] if command == "score" else []
    assert main([*args, "--predictions", str(path)]) == 2
    assert capsys.readouterr().err.splitlines() == [f"error: {path}: JSON nested too deeply"]


def test_a_deep_record_leaves_the_other_files_of_a_run_scored(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = square_root(tmp_path / "root", [EPISODE])
    good = tmp_path / "good.json"
    good.write_text(json.dumps(preds({"1_0": ["S", "A", "B", "G"]})))
    deep, out = _deep_file(tmp_path), tmp_path / "all.json"
    args = ["score", "--task", "r2r", "--split", "val", "--data-root", str(root), "--quiet"]
    assert main([*args, "--predictions", str(good), str(deep), "--json", str(out)]) == 2
    runs: list[dict[str, Any]] = json.loads(out.read_text())
    assert [r["predictions"] for r in runs] == [str(good), str(deep)]
    assert runs[0]["metrics"]["SR"] == 1.0
    assert runs[1]["errors"] == [f"{deep}: JSON nested too deeply"]


@pytest.mark.parametrize(
    "text",
    [f'[{{"instr_id": "1_0", "trajectory": {DEEP}}}]', f'{{"instr_id": "1_0", "t": {DEEP}}}\n',
     f'{{"6": {DEEP}}}', f'[{{"instr_id": {DEEP}}}]'],
)  # fmt: skip
def test_file_ids_skips_what_is_too_deep(text: str) -> None:
    assert file_ids(text.encode(), "instr_id") == set()
