"""A record of a refused file that gives a field twice is told so first (JSON keeps the last
copy, which the other problems then name); a valid file is not searched for repeats."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.fixtures import preds, square_root
from vlneval.errors import InvalidInputError
from vlneval.evaluation import evaluate


def _file(tmp_path: Path, first: str) -> Path:
    """The records of every episode, the first written as ``first``."""
    rest = json.dumps(preds({"1_1": ["S", "G"], "1_2": ["S"]}))[1:]
    path = tmp_path / "p.json"
    path.write_text(f"[{first}, {rest}")
    return path


GOOD = '"instr_id": "1_0", "trajectory": [["S", 0, 0], ["A", 0, 0], ["B", 0, 0], ["G", 0, 0]]'


def test_a_repeated_trajectory_is_named_before_the_empty_one_kept(tmp_path: Path) -> None:
    path = _file(tmp_path, "{" + GOOD + ', "trajectory": []}')
    with pytest.raises(InvalidInputError) as exc:
        evaluate("r2r", "val", path, root=square_root(tmp_path / "root"))
    assert [str(p) for p in exc.value.problems] == [
        f"{path}: instr_id \"1_0\": gives 'trajectory' twice (JSON keeps only the last copy)",
        f'{path}: instr_id "1_0": trajectory: empty trajectory (it must include the start '
        "viewpoint)",
    ]


def test_a_valid_file_with_a_repeated_field_is_scored(tmp_path: Path) -> None:
    path = _file(tmp_path, "{" + GOOD + ', "note": 1, "note": 2}')
    assert evaluate("r2r", "val", path, root=square_root(tmp_path / "root")).metrics["SR"] > 0
