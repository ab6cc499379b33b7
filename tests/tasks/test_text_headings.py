"""Headings written as text (``[vp, "0", "0"]``) in one record are named as such; the file's
form stays the triple, so its valid records are not blamed for not being lists of viewpoints."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.fixtures import preds, square_root
from vlneval.errors import InvalidInputError
from vlneval.evaluation import evaluate


@pytest.mark.parametrize("at", [0, 1])
def test_text_headings_are_named_and_the_other_records_are_not_blamed(
    tmp_path: Path, at: int
) -> None:
    records = preds({"1_0": ["S", "A", "B", "G"], "1_1": ["S", "G"], "1_2": ["S"]})
    records[at]["trajectory"] = [[s[0], "0", "0"] for s in records[at]["trajectory"]]
    with pytest.raises(InvalidInputError) as exc:
        evaluate("r2r", "val", records, root=square_root(tmp_path / "root"))
    steps = len(records[at]["trajectory"])
    assert [str(p) for p in exc.value.problems] == [
        f"<records>: instr_id \"1_{at}\": trajectory[{j}]: heading must be a number, got '0'"
        for j in range(steps)
    ]


def test_three_viewpoint_steps_are_still_nested(tmp_path: Path) -> None:
    records = [{"instr_id": "1_0", "trajectory": [["S", "A", "B"], ["G"]]}]
    result = evaluate("r2r", "val", records, root=square_root(tmp_path / "root"), subset=True)
    assert result.to_dict()["trajectory_form"] == "nested"
