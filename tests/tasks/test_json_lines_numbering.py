"""Every problem of a JSON-lines file is named by its line (1-based, blank lines counted), not
by its place among the records ("record 1" was the second record, on line 2 or later)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.fixtures import preds, square_root
from vlneval.errors import InvalidInputError
from vlneval.evaluation import evaluate
from vlneval.tasks.common import predictions


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


def _no_explaining(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*_: object) -> None:
        raise AssertionError("the explaining pass read a record")

    monkeypatch.setattr(predictions._Parser, "record", refuse)


@pytest.mark.parametrize("navillm", [False, True])
def test_valid_json_lines_take_the_typed_pass(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, navillm: bool
) -> None:
    """Each line is decoded as one typed record (the list decoder refused every line: every
    JSON-lines file was read a step at a time in Python), NaviLLM's two fields too."""
    records = preds({"1_1": ["S", "G"], "1_0": ["S", "A", "B", "G"]})
    for rec in records if navillm else []:
        rec["pred_path"] = [step[0] for step in rec["trajectory"]]
    path = tmp_path / "p.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in records) + "\n")
    root = square_root(tmp_path / "root")
    _no_explaining(monkeypatch)
    result = evaluate("r2r", "val", path, root=root, subset=True)
    assert result.ids == ["1_0", "1_1"]
    assert result.per_episode["success"].tolist() == [1.0, 1.0]
    assert result.per_episode["steps"].tolist() == [3.0, 1.0]


def test_a_refused_json_lines_file_still_names_the_lines(tmp_path: Path) -> None:
    """Problems the typed pass finds (a viewpoint not in the graph, a repeated id) are named
    by the explaining pass, with their lines."""
    records = preds({"1_0": ["S", "A"], "1_1": ["S", "Q"]}) + preds({"1_0": ["S"]})
    path = tmp_path / "p.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in records) + "\n")
    with pytest.raises(InvalidInputError) as exc:
        evaluate("r2r", "val", path, root=square_root(tmp_path / "root"), subset=True)
    assert [str(p) for p in exc.value.problems] == [
        f'{path}: line 2: instr_id "1_1": trajectory[1]: viewpoint Q is not in scan sq',
        f'{path}: line 3: instr_id "1_0": duplicate id: the file has two predictions for it '
        "(first on line 1)",
    ]


@pytest.mark.parametrize("typed", [True, False])
def test_a_repeated_id_names_both_lines_on_either_pass(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, typed: bool
) -> None:
    """A repeated id names the line of its first repeat and its first line, whether the typed
    pass refused the file for it (then the explaining pass names the lines) or a NaN sent the
    file straight to the explaining pass."""
    records = preds({"1_0": ["S", "A"], "1_1": ["S", "G"]}) + preds({"1_0": ["S"], "1_2": ["S"]})
    records += preds({"1_0": ["S", "A", "B"]})
    if not typed:
        records[1]["trajectory"][0][1] = float("nan")
    path = tmp_path / "p.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in records) + "\n")
    took: list[bool] = []  # whether the typed pass took the file (then refused it)
    typed_pass = predictions._typed_pass

    def recorded(*args: Any) -> Any:
        parser = typed_pass(*args)
        took.append(parser is not None)
        return parser

    monkeypatch.setattr(predictions, "_typed_pass", recorded)
    with pytest.raises(InvalidInputError) as exc:
        evaluate("r2r", "val", path, root=square_root(tmp_path / "root"), subset=True)
    nan = [f'{path}: line 2: instr_id "1_1": trajectory[0]: heading is nan (must be finite)']
    assert [str(p) for p in exc.value.problems] == [*([] if typed else nan), (
        f'{path}: line 3: instr_id "1_0": duplicate id: the file has 3 predictions for it '
        "(first on line 1)"
    )]  # fmt: skip
    assert took == [typed]


@pytest.mark.parametrize("typed", [True, False])
def test_a_repeated_key_names_its_line_on_either_pass(tmp_path: Path, typed: bool) -> None:
    """A record that gives a field twice is named by its line in JSON lines (in a JSON list by
    its id alone, as before), the typed pass's refusal (a viewpoint not in the graph) and the
    explaining pass's (a NaN) alike."""
    records = preds({"1_0": ["S", "A"], "1_1": ["S", "G"]})
    if not typed:
        records[0]["trajectory"][0][1] = float("nan")
    lines = [json.dumps(r) for r in records]
    lines[1] = lines[1].replace('"trajectory":', '"trajectory": [["S", 0, 0]], "trajectory":')
    lines[1] = lines[1].replace('["G"', '["Q"')
    path = tmp_path / "p.jsonl"
    path.write_text("\n\n".join(lines) + "\n")
    with pytest.raises(InvalidInputError) as exc:
        evaluate("r2r", "val", path, root=square_root(tmp_path / "root"), subset=True)
    nan = [f'{path}: line 1: instr_id "1_0": trajectory[0]: heading is nan (must be finite)']
    assert [str(p) for p in exc.value.problems] == [
        f"{path}: line 3: instr_id \"1_1\": gives 'trajectory' twice (JSON keeps only the last "
        "copy)",
        *([] if typed else nan),
        f'{path}: line 3: instr_id "1_1": trajectory[1]: viewpoint Q is not in scan sq',
    ]
    listed = tmp_path / "p.json"
    listed.write_text("[" + ", ".join(lines) + "]")
    with pytest.raises(InvalidInputError) as exc:
        evaluate("r2r", "val", listed, root=square_root(tmp_path / "root"), subset=True)
    assert str(exc.value.problems[0]) == (
        f"{listed}: instr_id \"1_1\": gives 'trajectory' twice (JSON keeps only the last copy)"
    )
