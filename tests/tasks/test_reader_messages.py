"""What the R2R family's reader says, in the words of the file it read: the trajectory field
the file uses (``path``, ``pred_path``), a wrong-type id clipped as every other long value."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.fixtures import square_root
from vlneval.cli.main import main
from vlneval.errors import InvalidInputError, ProblemCollector
from vlneval.evaluation import Scorer, evaluate
from vlneval.tasks.common.root import demo_root


def _demo(key: str = "trajectory") -> list[dict[str, Any]]:
    records: list[dict[str, Any]] = json.loads(
        (demo_root() / "demo" / "predictions_val.json").read_text()
    )
    for rec in records:
        rec[key] = rec.pop("trajectory")
    return records


def _errors(records: list[dict[str, Any]], tmp: Path, capsys: pytest.CaptureFixture[str]) -> str:
    path = tmp / "preds.json"
    path.write_text(json.dumps(records))
    assert main(["score", "--task", "demo", "--predictions", str(path)]) == 2
    return capsys.readouterr().err.replace(f"{path}: ", "")


@pytest.mark.parametrize("key", ["path", "pred_path"])
def test_a_step_problem_names_the_field_the_file_uses(
    key: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The explaining pass (a malformed step) and the typed pass (a viewpoint of no graph)."""
    records = _demo(key)
    records[0][key][1] = 5
    assert _errors(records, tmp_path, capsys) == (
        f'error: instr_id "100_0": {key}[1]: expected [viewpoint, heading, elevation], got 5\n'
    )
    records = _demo(key)
    records[0][key][1][0] = "NOTANODE"
    assert _errors(records, tmp_path, capsys) == (
        f'error: instr_id "100_0": {key}[1]: viewpoint NOTANODE is not in scan demoHouse0A\n'
    )


def test_a_jump_names_the_field_the_file_uses(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    records = _demo("pred_path")
    steps = records[1]["pred_path"]
    records[1]["pred_path"] = [steps[0], steps[-1]]
    assert _errors(records, tmp_path, capsys) == (
        'error: instr_id "100_1": pred_path[1]: viewpoint abf7df031edd15fbd3f55c2684f85ee3 is not '
        "a neighbour of 7df9b1c6024ffb4582dca3e12a82a258 in scan demoHouse0A (the official "
        "scorer rejects jumps; use --profile r2r-duet to score them with their shortest distance)\n"
    )


@pytest.mark.parametrize(
    ("bad", "shown"),
    [
        (list(range(200_000)), "list [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, "
         "17, 18, 19, 20, 21, 2… (200,000 items)"),
        ([10**350], f"list [1{'0' * 78}… (1 item)"),
        (None, "null"),
    ],
)  # fmt: skip
def test_an_id_of_the_wrong_type_is_clipped(
    bad: Any, shown: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    records = _demo()
    records[0]["instr_id"] = bad
    assert _errors(records, tmp_path, capsys).splitlines()[1:] == [
        f"error: record 0: instr_id must be a string, got {shown}"
    ]


def test_add_first_puts_a_problem_of_the_file_before_the_records_ones() -> None:
    pc = ProblemCollector("p.json")
    pc.add("expected a viewpoint id string, got 7", episode='instr_id "1_0"', field="path[1]")
    pc.add_first("1 of 2 episodes have no prediction")
    with pytest.raises(InvalidInputError) as exc:
        pc.raise_if_any()
    assert str(exc.value) == (
        "error: p.json: 1 of 2 episodes have no prediction\n"
        'error: p.json: instr_id "1_0": path[1]: expected a viewpoint id string, got 7'
    )


def test_a_huge_number_as_an_id_is_described_by_its_size(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    records = _demo()
    records[0]["instr_id"] = 10**399  # valid JSON, within the reader's 400-character number limit
    assert _errors(records, tmp_path, capsys) == (
        "error: 1 of 36 episodes have no prediction (first: 100_0); profile demo requires all of "
        "them: score only the predicted ones with --subset (subset=True in Python), reported as "
        "partial; 1 "
        "record has an id not in the split: an integer of 400 digits, beyond a double's range "
        '(an id of another type, or with spaces? ids match exactly, e.g. "100_0")\n'
    )
    argv = ["score", "--task", "demo", "--subset", "--predictions", str(tmp_path / "preds.json")]
    assert main(argv) == 0
    assert (
        "warning: 1 prediction(s) with ids not in the split were ignored (first: an integer of "
        "400 digits, beyond a double's range)\n"
    ) in capsys.readouterr().err


@pytest.mark.parametrize("bad_step", [False, True])  # the typed pass, the explaining pass
def test_an_id_too_long_for_str_in_memory_is_described_by_its_size(bad_step: bool) -> None:
    """A Python int of more than the 4,300 digits ``str`` writes gets the words a huge id in
    a file gets, not the ValueError of its conversion to text."""
    records = _demo()
    records[0]["instr_id"] = 10**5000
    with Scorer("demo", "val") as scorer:
        result = scorer.score(records, subset=True)
        assert result.warnings[0] == (
            "1 prediction(s) with ids not in the split were ignored (first: an integer of 5,001 "
            "digits, beyond a double's range)"
        )
        if bad_step:
            records[1]["trajectory"][0][1] = "up"
        with pytest.raises(InvalidInputError) as exc:
            scorer.score(records)
    assert str(exc.value).splitlines() == [
        "error: <records>: 1 of 36 episodes have no prediction (first: 100_0); profile demo "
        "requires all of them: score only the predicted ones with --subset (subset=True in "
        "Python), reported as partial; 1 record has an id not in the split: an integer of 5,001 "
        "digits, beyond a "
        "double's range (an id of another type, or with spaces? ids match exactly, e.g. "
        '"100_0")',
        *(["error: <records>: instr_id \"100_1\": trajectory[0]: heading must be a number, got 'up'"]
          if bad_step else []),
    ]  # fmt: skip


def test_a_repeat_names_the_field_the_file_uses(tmp_path: Path) -> None:
    root = square_root(tmp_path / "root")
    records = [{"instr_id": "1_0", "path": [["S", 0, 0], ["S", 0, 0], ["G", 0, 0]]}]
    with pytest.raises(InvalidInputError) as exc:
        evaluate(
            "r4r", "val", records, profile="r4r-google", episodes_file=root / "r2r" / "R2R_val.json",
            graphs=root / "matterport3d" / "connectivity",
        )  # fmt: skip
    assert [str(p) for p in exc.value.problems] == [
        '<records>: instr_id "1_0": path: repeats a viewpoint (1 time(s)); profile r4r-google '
        "reproduces a CLS that looks every step up as a graph edge and cannot score it (use "
        "--profile r4r, which scores repeats)"
    ]


@pytest.mark.parametrize("explaining", [False, True])
def test_an_id_given_many_times_is_one_problem_with_its_count(
    explaining: bool, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """One id copied 2,000 times is one problem (not one per copy, which would fill the shown
    problems), so the file's other problems still show: a jump (the typed pass) or a
    malformed step (the explaining pass)."""
    records = _demo("pred_path")
    steps = records[1]["pred_path"]
    records[1]["pred_path"] = [steps[0], steps[-1]]
    if explaining:
        records[2]["pred_path"][1] = 5
    records += [records[0]] * 2000 + [records[3]]
    step = 'error: instr_id "100_2": pred_path[1]: expected [viewpoint, heading, elevation], got 5'
    assert _errors(records, tmp_path, capsys).splitlines() == [
        *([step] if explaining else []),
        'error: instr_id "100_0": duplicate id: the file has 2,001 predictions for it',
        'error: instr_id "101_0": duplicate id: the file has two predictions for it',
        'error: instr_id "100_1": pred_path[1]: viewpoint abf7df031edd15fbd3f55c2684f85ee3 is not '
        "a neighbour of 7df9b1c6024ffb4582dca3e12a82a258 in scan demoHouse0A (the official "
        "scorer rejects jumps; use --profile r2r-duet to score them with their shortest distance)",
    ]


def test_an_id_past_python_s_digit_limit_in_a_file_is_described_by_its_size(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """With the number limit raised past the 4,300 digits Python's ``int`` converts, a
    5,000-digit id gets the words of a huge id within it, not an internal error."""
    monkeypatch.setenv("VLNEVAL_MAX_NUMBER_CHARS", "10000")
    records = _demo()
    records[0]["instr_id"] = 0  # written as 5,000 digits below
    text = json.dumps(records).replace('"instr_id": 0,', f'"instr_id": {"7" * 5000},', 1)
    (tmp_path / "preds.json").write_text(text)
    argv = ["score", "--task", "demo", "--predictions", str(tmp_path / "preds.json")]
    assert main(argv) == 2
    assert capsys.readouterr().err.replace(f"{tmp_path / 'preds.json'}: ", "") == (
        "error: 1 of 36 episodes have no prediction (first: 100_0); profile demo requires all of "
        "them: score only the predicted ones with --subset (subset=True in Python), reported as "
        "partial; 1 "
        "record has an id not in the split: an integer of 5,000 digits, beyond a double's range "
        '(an id of another type, or with spaces? ids match exactly, e.g. "100_0")\n'
    )
