"""Every problem of a JSON-lines file is named by its line (1-based, blank lines counted), not
by its place among the records ("record 1" was the second record, on line 2 or later)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.fixtures import preds, square_root
from vlneval.errors import InvalidInputError
from vlneval.evaluation import evaluate


def test_json_lines_problems_name_the_line(tmp_path: Path) -> None:
    records = preds({"1_0": ["S", "A", "B", "G"], "1_1": ["S", "G"], "1_2": ["S"]})
    records[1]["instr_id"] = None
    records[2]["trajectory"][0][1] = float("nan")
    del records[0]["instr_id"]
    path = tmp_path / "p.jsonl"
    path.write_text("\n" + "\n\n".join(json.dumps(r) for r in records) + "\n")
    with pytest.raises(InvalidInputError) as exc:
        evaluate("r2r", "val", path, root=square_root(tmp_path / "root"), subset=True)
    assert [str(p) for p in exc.value.problems] == [
        f"{path}: line 2: missing field 'instr_id'",
        f"{path}: line 4: instr_id must be a string, got null",
        f'{path}: line 6: instr_id "1_2": trajectory[0]: heading is nan (must be finite)',
    ]
