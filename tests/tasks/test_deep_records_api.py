"""Records in memory nested too deeply to write whole are named by record and field, in the
words a shallow wrong value gets (its start shown), not a bare RecursionError from its repr."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.fixtures import preds, square_root
from vlneval.errors import InvalidInputError
from vlneval.evaluation import evaluate


def _deep(depth: int = 100_000) -> list[Any]:
    out: list[Any] = []
    for _ in range(depth):
        out = [out]
    return out


def test_deep_values_are_named_by_record_and_field(tmp_path: Path) -> None:
    records = preds({"1_0": ["S", "A", "B", "G"], "1_1": ["S", "G"], "1_2": ["S"], "9_9": ["S"]})
    records[0]["trajectory"][1] = _deep()
    records[1]["trajectory"][1][1] = _deep()
    records[3]["instr_id"] = _deep()
    with pytest.raises(InvalidInputError) as exc:
        evaluate("r2r", "val", records, root=square_root(tmp_path / "root"), subset=True)
    assert [str(p) for p in exc.value.problems] == [
        '<records>: instr_id "1_0": trajectory[1]: expected [viewpoint, heading, elevation], '
        "got " + "[" * 60,
        '<records>: instr_id "1_1": trajectory[1]: heading must be a number, got ' + "[" * 40,
        "<records>: record 3: instr_id must be a string, got list " + "[" * 80 + "… (1 item)",
    ]


def test_a_long_string_step_is_shown_with_its_length(tmp_path: Path) -> None:
    records = preds({"1_0": ["S", "A", "B", "G"], "1_1": ["S", "G"], "1_2": ["S"]})
    records[0]["trajectory"][1] = "a" * 10**6
    with pytest.raises(InvalidInputError) as exc:
        evaluate("r2r", "val", records, root=square_root(tmp_path / "root"))
    assert [str(p) for p in exc.value.problems] == [
        '<records>: instr_id "1_0": trajectory[1]: expected [viewpoint, heading, elevation], '
        "got '" + "a" * 59 + "… (1,000,000 characters)"
    ]
